"""Deployment files read together: a server is one server however many files name it, and a
file that starts none is one more file read, not a failure, beside files that do."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.sizing import Machine

MACHINE = Machine(cores=64, somaxconn=4096)

DOCKERFILE = """\
FROM python:3.12-slim
WORKDIR /app
COPY . .
RUN pip install gunicorn
CMD ["gunicorn", "--workers", "9", "--timeout", "120", "--graceful-timeout", "120", "proj.wsgi"]
"""
COMPOSE = """\
services:
  web:
    build: .
    cpus: "0.5"
    stop_grace_period: 2m10s
"""
WORKER_DOCKERFILE = """\
FROM python:3.12-slim
CMD ["celery", "-A", "proj", "worker"]
"""


@pytest.fixture
def stack(tmp_path: Path) -> Path:
    (tmp_path / "Dockerfile").write_text(DOCKERFILE)
    (tmp_path / "compose.yaml").write_text(COMPOSE)
    (tmp_path / "worker.Dockerfile").write_text(WORKER_DOCKERFILE)
    return tmp_path


@pytest.mark.parametrize("order", [("Dockerfile", "compose.yaml"), ("compose.yaml", "Dockerfile")])
def test_a_dockerfile_beside_the_compose_file_that_builds_it_is_one_server(
    stack: Path, order: tuple[str, str]
) -> None:
    """The compose reading knows the container (its CPU limit), so it is the one kept: one
    workers-over-cpu-limit, no workers-over-cores for the same command read bare."""
    result = check_files([stack / name for name in order], machine=MACHINE)
    assert len(result.apps) == 1
    assert result.apps[0].container is not None
    assert sorted(f.rule for f in result.findings) == ["workers-over-cpu-limit"]


def test_a_file_that_starts_no_server_is_read_beside_one_that_does(stack: Path) -> None:
    result = check_files([stack / "worker.Dockerfile", stack / "compose.yaml"], machine=MACHINE)
    assert stack / "worker.Dockerfile" in result.files
    assert [f.rule for f in result.findings] == ["workers-over-cpu-limit"]


def test_alone_it_is_nothing_to_check_in_its_own_words(stack: Path) -> None:
    # A coverage note, exit 0: a worker's Dockerfile committed alone passes the hook (issue 29).
    result = check_files([stack / "worker.Dockerfile"], machine=MACHINE)
    assert (result.findings, result.errors, result.apps) == ((), (), ())
    (nothing,) = result.notes
    assert nothing.message.startswith(f"{stack / 'worker.Dockerfile'}: the image runs ")


def _compose_stack(tmp_path: Path, command: str, extra: str = "") -> list[str]:
    (tmp_path / "compose.yaml").write_text(
        f"services:\n  web:\n    image: web\n    cpus: '4'\n    command: {command}\n{extra}"
    )
    result = check_files([tmp_path / "compose.yaml"], machine=MACHINE)
    return sorted(f.rule for f in result.findings)


def test_docker_stop_grace_is_the_bound_on_a_graceful_timeout_the_user_chose(
    tmp_path: Path,
) -> None:
    """graceful_timeout 120 under compose's default 10 s stop_grace_period: docker kills
    at 10 s; a stop_grace_period above it (125s) passes; both at their defaults say nothing."""
    command = "gunicorn -w 4 --timeout 120 --graceful-timeout 120 app:app"
    assert _compose_stack(tmp_path, command) == ["grace-period-below-shutdown"]
    assert _compose_stack(tmp_path, command, "    stop_grace_period: 2m5s\n") == []
    assert _compose_stack(tmp_path, "gunicorn -w 4 app:app") == []


def test_graceful_below_timeout_only_where_timeout_caps_a_request(tmp_path: Path) -> None:
    """gunicorn's `timeout` ends a request only for a sync worker; for gthread and gevent it
    is a heartbeat, so a graceful_timeout below it loses nothing (issue 36.4)."""
    stop = "    stop_grace_period: 5m\n"
    sync = "gunicorn -w 4 --timeout 120 app:app"
    assert _compose_stack(tmp_path, sync, stop) == ["graceful-below-timeout"]
    for other in ("--threads 4", "-k gthread --threads 4", "-k gevent"):
        assert _compose_stack(tmp_path, f"{sync} {other}", stop) == [], other


def test_under_compose_default_stop_the_platform_is_what_to_raise(tmp_path: Path) -> None:
    """Under compose's default 10 s a longer graceful_timeout changes nothing (docker kills
    first): no graceful-below-timeout; a graceful timeout someone set past the 10 s is
    grace-period-below-shutdown's, at the service, its fix the stop_grace_period."""
    (tmp_path / "compose.yaml").write_text(
        "services:\n  web:\n    image: web\n    cpus: '4'\n"
        "    command: gunicorn -w 4 --timeout 120 app:app\n"
    )
    result = check_files([tmp_path / "compose.yaml"], machine=MACHINE)
    assert not [f for f in result.findings if f.rule == "graceful-below-timeout"]
    (tmp_path / "compose.yaml").write_text(
        "services:\n  web:\n    image: web\n    cpus: '4'\n"
        "    command: gunicorn -w 4 --timeout 120 --graceful-timeout 120 app:app\n"
    )
    result = check_files([tmp_path / "compose.yaml"], machine=MACHINE)
    (finding,) = [f for f in result.findings if f.rule == "grace-period-below-shutdown"]
    assert finding.fix == "stop_grace_period: 125s"
    assert "stop_grace_period 10 s (default)" in finding.message


def test_a_stop_grace_period_that_is_not_a_duration_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(
        "services:\n  web:\n    image: web\n    stop_grace_period: soon\n"
        "    command: gunicorn app:app\n"
    )
    result = check_files([tmp_path / "compose.yaml"], machine=MACHINE)
    (error,) = result.errors
    assert error.line == 4
    assert "stop_grace_period 'soon' is not a duration" in error.message


def test_one_worker_under_a_tenth_of_a_cpu_is_no_worker_fault(tmp_path: Path) -> None:
    """One uvicorn process under `cpus: "0.1"` is ten per CPU, past the documented four, but no
    fewer workers is a fix: the count servertune would plan is what runs, so no
    workers-over-cpu-limit (seen in bcgov/vc-authn-oidc, `--workers 1` under a Helm limit of
    100m). Two workers under the same limit keep the finding, with one worker as its fix."""
    for workers, expected in ((1, []), (2, ["workers-over-cpu-limit"])):
        (tmp_path / "Dockerfile").write_text(
            'FROM python:3.12-slim\nCMD ["uvicorn", "app:app", "--host", "0.0.0.0", '
            f'"--workers", "{workers}"]\n'
        )
        (tmp_path / "compose.yaml").write_text('services:\n  web:\n    build: .\n    cpus: "0.1"\n')
        result = check_files([tmp_path / "compose.yaml", tmp_path / "Dockerfile"], machine=MACHINE)
        assert [f.rule for f in result.findings if f.rule == "workers-over-cpu-limit"] == expected
