"""A front's pass to a loopback address reaches a server in its own container only: when the
servers on that port run in other containers, the pass is not joined, and a `not-followed`
note at it says why instead of leaving the front silent. Each repository here is written by
the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine
from tests.folder_support import write

MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def check(root: Path) -> CheckResult:
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})


def test_a_proxy_images_loopback_pass_to_another_containers_server_says_why_it_is_not_joined(
    tmp_path: Path,
) -> None:
    """The compose file runs the backend's gunicorn on 0.0.0.0:5000; the front's own image
    (`frontend/deploy.dockerfile`, `FROM nginx` copying site.conf, which no compose service
    runs) passes to `http://127.0.0.1:5000` (as seen in thunderbird/appointment, whose nginx
    and API run side by side in a task no file here describes): the backend is not joined to
    it, and the pass's line carries a note naming the loopback and the server apart from it."""
    root = write(
        tmp_path / "booking",
        {
            "backend/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
            'CMD ["gunicorn", "-w", "3", "-b", "0.0.0.0:5000", "booking.wsgi:app"]\n',
            "docker-compose.yml": "services:\n  backend:\n    build: ./backend\n"
            "    ports:\n      - 5000:5000\n",
            "frontend/deploy.dockerfile": "FROM nginx:stable\n"
            "COPY site.conf /etc/nginx/conf.d/default.conf\n",
            "frontend/site.conf": "server {\n  listen 80;\n"
            "  location /api/ { proxy_pass http://127.0.0.1:5000; }\n}\n",
        },
    )
    result = check(root)
    fronts = [list(launch.fronts) for launch in launches(result.apps, result.links)]
    assert fronts == [[]]
    notes = [n for n in result.notes if n.kind == "not-followed" and "loopback" in n.message]
    assert [(n.at.file.name, n.at.line) for n in notes] == [("site.conf", 3)]
    assert "compose service backend" in notes[0].message
