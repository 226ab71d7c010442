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
