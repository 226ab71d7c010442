"""Shared fixtures: a tiny WSGI app on disk that answers with its worker's pid."""

from __future__ import annotations

from pathlib import Path

import pytest

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
