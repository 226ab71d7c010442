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


def _sidecar(root: Path, compose_target: str) -> Path:
    """A backend image whose final stage runs gunicorn on 5000, a proxy image copying a site
    that passes to 127.0.0.1:5000, and a compose file running the proxy and the backend's
    `dev` stage (uvicorn `--reload`) on the same port."""
    return write(
        root,
        {
            "backend/Dockerfile": "FROM python:3.12-slim AS dev\nWORKDIR /app\nCOPY . /app\n"
            'CMD ["uvicorn", "booking.asgi:app", "--host", "0.0.0.0", "--port", "5000", '
            '"--reload"]\n\n'
            "FROM dev AS prod\n"
            'CMD ["gunicorn", "-w", "3", "-b", "0.0.0.0:5000", "booking.wsgi:app"]\n',
            "docker-compose.yml": "services:\n  backend:\n    build:\n      context: ./backend\n"
            f"      target: {compose_target}\n  proxy:\n    build: ./frontend\n",
            "frontend/Dockerfile": "FROM nginx:stable\n"
            "COPY site.conf /etc/nginx/conf.d/default.conf\n",
            "frontend/site.conf": "server {\n  listen 80;\n"
            "  location /api/ { proxy_pass http://127.0.0.1:5000; }\n}\n",
        },
    )


def test_a_proxy_images_loopback_joins_the_one_server_no_container_runs(tmp_path: Path) -> None:
    """The compose stack runs the proxy image beside the backend's dev stage, whose loopback it
    cannot reach; the final stage's gunicorn, an image no container here runs as built, is
    the one server on 5000 left: a pod or task runs it beside the proxy (seen in mozilla/glam
    and thunderbird/appointment), so it is joined with a `joined-by-name` note, and the dev
    server is not. When compose runs the final stage too, no server is left for a sidecar:
    nothing is joined and the `not-followed` note stays."""
    result = check(_sidecar(tmp_path / "split", "dev"))
    fronted = {
        launch.chain[-1].line: [f"{at.file.name}:{at.line}" for at in launch.fronts]
        for launch in launches(result.apps, result.links)
    }
    assert fronted == {4: [], 7: ["site.conf:3"]}
    joined = [n.message for n in result.notes if n.kind == "joined-by-name"]
    assert len(joined) == 1
    assert "'127.0.0.1:5000'" in joined[0]
    same = check(_sidecar(tmp_path / "same", "prod"))
    assert not same.links
    assert [n for n in same.notes if n.kind == "not-followed" and "loopback" in n.message]
