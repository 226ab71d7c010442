"""Nonsense numbers in a server's config are refused the same way by every reader (issue 47:
uWSGI `processes = -4`, `threads = 99999999999999999999`, `listen = 0` were "no findings").

One rule (servertune.check.values) gates every AppServer a reader builds: exit 2, one `error:`
line with file:line, the option as that server spells it and why, no finding printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check.values import BOUNDS, C_INT_MAX
from tests.test_hostile_sweep import run_cli

#: (file name, text, the option as its server spells it): one per reader that builds a server.
CASES = [
    ("uwsgi.ini", "[uwsgi]\nmodule = app:application\nprocesses = -4\n", "processes = -4"),
    ("uwsgi.ini", "[uwsgi]\nmodule = app:application\nprocesses = 0\n", "processes = 0"),
    (
        "uwsgi.ini",
        "[uwsgi]\nmodule = app:application\nthreads = 99999999999999999999\n",
        f"threads = 99999999999999999999: more than {C_INT_MAX}",
    ),
    ("uwsgi.ini", "[uwsgi]\nmodule = app:application\nlisten = -5\n", "listen = -5"),
    ("uwsgi.ini", "[uwsgi]\nmodule = app:application\nmax-requests = -1\n", "max-requests = -1"),
    ("gunicorn.conf.py", "backlog = -1\n", "backlog = -1"),
    ("Procfile", "web: uvicorn app:app --backlog -1\n", "--backlog = -1"),
    ("gunicorn.conf.py", "workers = 0\n", "workers = 0"),
    ("gunicorn.conf.py", f"threads = {C_INT_MAX + 1}\n", "threads"),
    ("Procfile", "web: gunicorn app:app --workers 0\n", "workers = 0"),
    ("Procfile", "web: uvicorn app:app --workers 0\n", "--workers = 0"),
    ("Procfile", "web: uvicorn app:app --limit-concurrency 0\n", "--limit-concurrency = 0"),
    # granian's own parser refuses these first, and says so in its words.
    ("Procfile", "web: granian --interface asgi app:app --workers 0\n", "'--workers': 0"),
    ("Procfile", "web: granian --interface asgi app:app --backlog 0\n", "'--backlog': 0"),
]


@pytest.mark.parametrize(("name", "text", "words"), CASES, ids=[c[2] for c in CASES])
def test_a_value_no_server_runs_with_is_refused(
    name: str, text: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """exit 2 and one `error:` line naming the file, its line and the server's own option."""
    (tmp_path / name).write_text(text)
    outcome = run_cli(["check", name], capsys, tmp_path)
    assert outcome.code == 2, outcome
    assert outcome.out == ""
    assert outcome.err.startswith(f"error: {name}:"), outcome.err
    assert outcome.err.count("\n") == 1, outcome.err
    assert words in outcome.err, outcome.err


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("uwsgi.ini", "[uwsgi]\nmodule = app:application\nprocesses = 1\nlisten = 1\n"),
        ("uwsgi.ini", "[uwsgi]\nmodule = app:application\nmax-requests = 0\nharakiri = 0\n"),
        ("gunicorn.conf.py", "workers = 1\nthreads = 1\ntimeout = 0\nmax_requests = 0\n"),
        ("Procfile", f"web: uvicorn app:app --workers 1 --backlog {C_INT_MAX}\n"),
    ],
)
def test_the_smallest_and_largest_sensible_values_are_read(
    name: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bounds are not off by one: 1 worker, a backlog of 1, 0 for never are read."""
    (tmp_path / name).write_text(text)
    outcome = run_cli(["check", name], capsys, tmp_path)
    assert outcome.code in (0, 1), outcome
    assert "error:" not in outcome.err


#: A backlog of 0 is one the servers run with (uWSGI starts with `listen = 0`): a fault judged
#: at its line, not a file refused.
ZERO_BACKLOGS = [
    ("uwsgi.ini", "[uwsgi]\nmodule = app:application\nlisten = 0\n", "uwsgi.ini:3"),
    ("gunicorn.conf.py", "backlog = 0\n", "gunicorn.conf.py:1"),
    ("Procfile", "web: uvicorn app:app --backlog 0\n", "Procfile:1"),
]


@pytest.mark.parametrize(
    ("name", "text", "where"), ZERO_BACKLOGS, ids=[c[0] for c in ZERO_BACKLOGS]
)
def test_a_backlog_of_zero_is_the_listen_queue_zero_fault(
    name: str, text: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """exit 1 with a `listen-queue-zero` warning at the line that sets it, never "no findings"."""
    (tmp_path / name).write_text(text)
    outcome = run_cli(["check", "--cores", "2", name], capsys, tmp_path)
    assert outcome.code == 1, outcome
    assert f"{where}: warning [listen-queue-zero]" in outcome.out, outcome.out


def test_every_bounded_field_is_a_field_of_the_app_server() -> None:
    """The rule's table names real AppServer fields (a renamed field would be gated no more)."""
    from dataclasses import fields

    from servertune.check.model import AppServer

    assert set(BOUNDS) <= {f.name for f in fields(AppServer)}


def test_a_backlog_fix_never_exceeds_the_somaxconn_the_deployment_declares(
    tmp_path: Path,
) -> None:
    """`listen = @(...)` fixed for a compose service with `sysctls: net.core.somaxconn: 2048`
    (or a pod's securityContext sysctl): the fix is that 2048, never this machine's larger
    value (uWSGI refuses to start above somaxconn); with none declared, the fix says the
    bound; and a backlog of 3000 is over that 2048, so it is the over-somaxconn fault."""
    from servertune.check import check_files
    from servertune.machine import Machine

    machine = Machine(cores=2, somaxconn=4096)
    ini = "[uwsgi]\nmodule = app:application\nhttp-socket = :8000\nlisten = @(/x)\n"
    image = 'FROM python:3.12-slim\nWORKDIR /app\nCOPY uwsgi.ini .\nCMD ["uwsgi", "--ini", "uwsgi.ini"]\n'
    compose = "services:\n  web:\n    build: .\n    sysctls:\n      net.core.somaxconn: 2048\n"
    (tmp_path / "uwsgi.ini").write_text(ini)
    (tmp_path / "Dockerfile").write_text(image)
    (tmp_path / "docker-compose.yml").write_text(compose)

    def fixes(*names: str) -> dict[str, str]:
        paths = [tmp_path / n for n in names]
        found = check_files(paths, machine=machine, env={}).findings
        return {f.rule: f.fix for f in found if "somaxconn" in f.rule or "listen" in f.rule}

    fix = fixes("uwsgi.ini", "docker-compose.yml", "Dockerfile")["listen-queue-zero"]
    assert fix.startswith("listen = 2048   ")
    assert "docker-compose.yml:5" in fix
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  securityContext:\n"
        "    sysctls:\n      - name: net.core.somaxconn\n        value: '1024'\n"
        "  containers:\n    - name: web\n      image: app\n"
    )
    (tmp_path / "pod.yaml").write_text(pod)
    assert fixes("uwsgi.ini", "pod.yaml", "Dockerfile")["listen-queue-zero"].startswith(
        "listen = 1024   "
    )
    alone = fixes("uwsgi.ini")["listen-queue-zero"]
    assert alone.startswith("listen = 4096   ")
    assert "at most net.core.somaxconn where it runs" in alone
    assert "uWSGI refuses to start above it" in alone
    (tmp_path / "uwsgi.ini").write_text(ini.replace("@(/x)", "3000"))
    over = fixes("uwsgi.ini", "docker-compose.yml", "Dockerfile")
    assert over["backlog-over-somaxconn"].startswith("listen = 2048")
    assert "backlog-over-somaxconn" not in fixes("uwsgi.ini")  # 3000 <= this machine's 4096


def test_a_backlog_over_somaxconn_says_what_its_own_server_does(tmp_path: Path) -> None:
    """A waitress `backlog` in a PasteDeploy `[server:main]` above somaxconn (seen in
    yeastgenome/SGDBackend-Nex2) is capped silently by listen(2): the finding says so in the
    ini's own words (`backlog = 4096`), never "uWSGI refuses to start", and is info, since the
    server runs with the smaller queue. A uWSGI `listen` above it stays a warning that says
    uWSGI refuses to start."""
    from servertune.check import check_files
    from servertune.check.model import Severity
    from servertune.machine import Machine

    machine = Machine(cores=2, somaxconn=4096)
    ini = (
        "[app:main]\nuse = egg:myapp\n\n[server:main]\nuse = egg:waitress#main\n"
        "host = 0.0.0.0\nport = 6543\nbacklog = 8192\nthreads = 8\n"
    )
    (tmp_path / "production.ini").write_text(ini)
    found = check_files([tmp_path / "production.ini"], machine=machine, env={}).findings
    [over] = [f for f in found if f.rule == "backlog-over-somaxconn"]
    assert over.severity == Severity.info
    assert "uWSGI" not in over.message
    assert over.message.startswith("backlog 8192 is above net.core.somaxconn 4096")
    assert "listen(2)" in over.message
    assert over.fix.startswith("backlog = 4096")
    (tmp_path / "uwsgi.ini").write_text("[uwsgi]\nmodule = app:application\nlisten = 8192\n")
    found = check_files([tmp_path / "uwsgi.ini"], machine=machine, env={}).findings
    [over] = [f for f in found if f.rule == "backlog-over-somaxconn"]
    assert over.severity == Severity.warning
    assert "uWSGI refuses to start" in over.message
