"""Shared fixtures: a tiny WSGI app on disk that answers with its worker's pid."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from servertune.bench.harness.ports import PORT_SHARE_VARIABLE


def pytest_configure(config: pytest.Config) -> None:
    """Each parallel worker (pytest-xdist) hands out ports from a slice of its own: a test that
    proves its run left nothing listening on its ports must not find another worker's server,
    started a moment later on a port the run had let go of (seen once in a full run)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, ... in a worker
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if worker.startswith("gw") and worker[2:].isdigit() and count.isdigit():
        os.environ[PORT_SHARE_VARIABLE] = f"{worker[2:]}/{count}"
    _write_bytecode()


def _write_bytecode() -> None:
    """The tests' interpreters write bytecode, as CI's and a default Python's do. Under a
    caller's PYTHONDONTWRITEBYTECODE every child the tests start (each `python -m servertune`,
    measure, the docs pages' commands) compiled servertune's sources again: test_check_cli.py
    and test_check_reading.py took 60.7 s of CPU, 35.1 s writing bytecode from an empty cache;
    and each parallel worker compiled and rewrote every test module at each collection (7.7 s
    of CPU, 3.1 s once written). The 1,487 check tests with `-n 2`: 95 s, now 70 s. The
    parallel workers inherit this environment; `__pycache__` is ignored by git, by the sdist
    and by check's walk."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False


PID_APP = '''\
import os


def application(environ, start_response):
    """Answer with this worker's pid, so tests can tell workers apart."""
    body = str(os.getpid()).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
'''


@pytest.fixture
def pid_app(tmp_path: Path) -> Path:
    """A directory holding `pidapp.py`, a WSGI app that answers with its worker's pid."""
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    (app_dir / "pidapp.py").write_text(PID_APP)
    return app_dir
