"""Compose `extends`: a service that extends another (of its own file, or of `extends: {file:}`)
runs with the other's attributes under its own, as Compose reads it; a cycle or a missing
service is a not-followed note and the service is read as written. Each repository here is
written by the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine
from tests.folder_support import write

MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)

#: The common file: the image, its entrypoint script and the variables every service shares.
COMMON = """services:
  app:
    build: .
    environment:
      GUNICORN_CMD_ARGS: "--workers 3 --timeout 45"
      MODE: prod
"""
IMAGE = """FROM python:3.12-slim
WORKDIR /app
COPY start.sh /start.sh
ENTRYPOINT ["/start.sh"]
"""
START = '#!/bin/sh\nif [ "$1" = web ]; then\n  exec gunicorn -b :8000 app:app\nfi\nexec "$@"\n'
NGINX = (
    "events {}\nhttp {\n  server {\n    listen 80;\n"
    "    location / { proxy_pass http://web:8000; proxy_read_timeout 60s; }\n  }\n}\n"
)


def check(root: Path) -> CheckResult:
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})


def served(result: CheckResult, name: str) -> list[tuple[str, str, list[str]]]:
    """(service, workers, fronts) of each app started by a service of the compose file `name`."""
    return [
        (
            launch.app.container.name,
            str(launch.app.workers.value),
            [at.file.name for at in launch.fronts],
        )
        for launch in launches(result.apps, result.links, result.balancer_links)
        if launch.app.container is not None and launch.app.container.at.file.name == name
    ]


def test_a_service_extending_another_file_runs_its_image_with_its_own_command(
    tmp_path: Path,
) -> None:
    """docker-compose.yml's web `extends: {file: docker-compose.common.yml, service: app}` and
    sets `command: web`: it runs app's image (its entrypoint script, which execs gunicorn for
    `web`) with app's GUNICORN_CMD_ARGS (3 workers), behind the nginx that passes to web:8000."""
    root = write(
        tmp_path,
        {
            "docker-compose.common.yml": COMMON,
            "docker-compose.yml": "services:\n  web:\n    extends:\n"
            "      file: docker-compose.common.yml\n      service: app\n    command: web\n"
            "  nginx:\n    image: nginx:1.27\n    volumes:\n"
            "      - ./nginx.conf:/etc/nginx/nginx.conf:ro\n",
            "Dockerfile": IMAGE,
            "start.sh": START,
            "nginx.conf": NGINX,
        },
    )
    result = check(root)
    assert served(result, "docker-compose.yml") == [("web", "3", ["nginx.conf"])]
    (web,) = [
        a
        for a in result.apps
        if a.container is not None and a.container.at.file.name == "docker-compose.yml"
    ]
    assert web.request_timeout is not None
    assert web.request_timeout.value == 45


def test_a_service_extending_one_of_its_own_file_overrides_its_environment(
    tmp_path: Path,
) -> None:
    """`extends: app` (the short form, the same file) with its own GUNICORN_CMD_ARGS: the
    environment merges by name and the extending service's value wins (5 workers), the
    command comes from the service extended."""
    root = write(
        tmp_path,
        {
            "compose.yaml": "services:\n  app:\n    build: .\n    command: web\n"
            "    environment:\n      GUNICORN_CMD_ARGS: --workers 3\n"
            "  web:\n    extends: app\n    environment:\n      GUNICORN_CMD_ARGS: --workers 5\n",
            "Dockerfile": IMAGE,
            "start.sh": START,
        },
    )
    result = check(root)
    assert sorted(served(result, "compose.yaml")) == [("app", "3", []), ("web", "5", [])]


def test_an_extends_cycle_or_a_missing_service_is_not_followed(tmp_path: Path) -> None:
    """a extends b, b extends a; c extends a service that is not there: each is read as
    written, and a not-followed note at its `extends` says why (never a loop, never a guess)."""
    root = write(
        tmp_path,
        {
            "compose.yaml": "services:\n  a:\n    extends: b\n    build: .\n    command: web\n"
            "  b:\n    extends: a\n  c:\n    extends:\n      service: nowhere\n"
            "    build: .\n    command: web\n",
            "Dockerfile": IMAGE,
            "start.sh": START,
        },
    )
    result = check(root)
    assert sorted(name for name, _, _ in served(result, "compose.yaml")) == ["a", "c"]
    why = sorted(
        n.message.split(": ", 2)[2].split(" (")[0]
        for n in result.notes
        if n.kind == "not-followed" and "extends" in n.message
    )
    assert why == [
        "service 'a' of compose.yaml is extended in a cycle",
        "service 'b' of compose.yaml is extended in a cycle",
        "service 'nowhere' of compose.yaml is not in it",
    ], why


def test_a_service_another_file_extends_is_that_launch_not_a_second_one(tmp_path: Path) -> None:
    """docker-compose.apps.yml's web is extended by docker-compose.yml's web (`extends: {file:
    docker-compose.apps.yml, service: web}`, seen in mitodl/mit-learn) and runs the same
    command: one launch, docker-compose.yml's, not the apps file's read on its own too."""
    root = write(
        tmp_path,
        {
            "docker-compose.apps.yml": "services:\n  web:\n    build: .\n    command: web\n",
            "docker-compose.yml": "services:\n  web:\n    extends:\n"
            "      file: docker-compose.apps.yml\n      service: web\n"
            "    environment:\n      MODE: prod\n",
            "Dockerfile": IMAGE,
            "start.sh": START,
        },
    )
    result = check(root)
    assert served(result, "docker-compose.yml") == [("web", "1", [])]
    assert served(result, "docker-compose.apps.yml") == []


def test_an_overlay_merges_over_the_base_services_extends_resolved(tmp_path: Path) -> None:
    """Compose applies each file's `extends` before it merges the files given together: the
    base's `web: {extends: base}` is whole (base's build and gunicorn command) under an
    overlay in another folder that only mounts a file into `web`, so the merged web starts
    gunicorn, and its `extends` is not looked for among the overlay's services (no
    not-followed note). Seen in translate/pootle (docker/example/docker-compose.override.yml
    over docker-compose.yml, whose production extends base-production)."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n",
            "app.py": "app = None\n",
            "docker-compose.yml": "services:\n  base:\n    build: .\n"
            "    command: gunicorn -w 3 -b :8000 app:app\n"
            "  web:\n    extends: base\n    image: example/web\n",
            "docker/example/docker-compose.override.yml": "services:\n  web:\n"
            "    volumes:\n      - /srv/web.conf:/app/web.conf\n",
        },
    )
    result = check(root)
    assert ("web", "3", []) in served(result, "docker-compose.override.yml")
    assert not [n for n in result.notes if n.kind == "not-followed" and "extends" in n.message]
