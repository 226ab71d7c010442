"""Compose files the repository's own commands give together (`docker compose -f A -f B` in a
script, a Makefile or a CI workflow, `COMPOSE_FILE=A:B`): B is read merged over A, as Compose
reads them, even when B could run alone (its own `build` and `command`). Each repository here
is written by the test; the pattern was seen in hubmapconsortium/entity-api, whose
docker/docker-deployment.sh runs `docker compose -f docker-compose.yml -f
docker-compose.deployment.yml`, the base holding the service's `init: true`."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.machine import Machine
from tests.folder_support import write

MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)

IMAGE = "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
#: The base: the service's environment and init, no image or build of its own.
BASE = """services:
  web:
    init: true
    environment:
      - WEB_CONCURRENCY=7
"""
#: The deployment file: it builds and commands the service itself, so it could run alone.
DEPLOYMENT = """services:
  web:
    build: .
    command: gunicorn -b :8000 app:app
"""


def check(root: Path) -> CheckResult:
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})


def workers(result: CheckResult, name: str) -> list[int]:
    """The worker counts of the apps whose container is in the compose file `name`."""
    return [
        int(a.workers.value)
        for a in result.apps
        if a.container is not None and a.container.at.file.name == name
    ]


def stack(extra: dict[str, str]) -> dict[str, str]:
    return {
        "docker/Dockerfile": IMAGE,
        "docker/app.py": "app = None\n",
        "docker/docker-compose.yml": BASE,
        "docker/docker-compose.deployment.yml": DEPLOYMENT,
        **extra,
    }


@pytest.mark.parametrize(
    "extra",
    [
        {
            "docker/deploy.sh": "#!/bin/bash\ncd $(dirname $0)\n"
            "docker compose -f docker-compose.yml -f docker-compose.deployment.yml up -d\n"
            "docker compose -f ../../ops/docker-compose.yml -f docker-compose.deployment.yml up\n"
            "docker compose -f base.yml -f docker-compose.deployment.yml up\n"
        },
        {
            "Makefile": "deploy:\n\tdocker-compose -f docker/docker-compose.yml \\\n"
            "\t  -f docker/docker-compose.deployment.yml up -d\n"
        },
        {
            ".github/workflows/deploy.yml": "jobs:\n  up:\n    runs-on: ubuntu-latest\n"
            "    env:\n"
            "      COMPOSE_FILE: docker/docker-compose.yml:docker/docker-compose.deployment.yml\n"
            "    steps:\n      - run: docker compose up -d\n"
        },
    ],
    ids=["script", "makefile", "compose-file-variable"],
)
def test_a_file_a_command_gives_over_a_base_is_read_merged(
    tmp_path: Path, extra: dict[str, str]
) -> None:
    """A command giving docker-compose.deployment.yml after docker-compose.yml (a script in
    their folder, a root Makefile with paths, a workflow's COMPOSE_FILE) makes the deployment
    file read merged over the base although it builds and commands its service itself: the
    base's WEB_CONCURRENCY=7 reaches gunicorn, and a note names the command's line; the
    base, given first, is not read as an overlay of the deployment file. A command naming a
    base outside the tree (`../../ops/docker-compose.yml`) or not here (`base.yml`) is no
    evidence (else two bases would leave the file alone)."""
    write(tmp_path / "ops", {"docker-compose.yml": BASE})
    root = write(tmp_path / "repo", stack(extra))
    result = check(root)
    assert workers(result, "docker-compose.deployment.yml") == [7]
    (said,) = [n for n in result.notes if n.kind == "overlay"]
    assert "docker-compose.yml" in said.message
    assert f"at {next(iter(extra))}:" in said.message


def test_the_base_init_reaches_the_merged_service(tmp_path: Path) -> None:
    """The base's `init: true` is the merged service's: a server its script starts without
    `exec` is said to run under compose's init (tini is PID 1), not under a shell that stays
    PID 1."""
    root = write(
        tmp_path / "repo",
        stack(
            {
                "docker/deploy.sh": "#!/bin/sh\n"
                "docker compose -f docker-compose.yml -f docker-compose.deployment.yml up\n",
                "docker/start.sh": "#!/bin/sh\ngunicorn -b :8000 app:app\n",
                "docker/docker-compose.deployment.yml": "services:\n  web:\n    build: .\n"
                "    command: sh /app/start.sh\n",
            }
        ),
    )
    result = check(root)
    (finding,) = [f for f in result.findings if f.rule == "entrypoint-without-exec"]
    assert "init: true" in finding.message
    assert "stays PID 1" not in finding.message


def test_two_commands_giving_a_file_over_two_bases_leave_it_read_alone(tmp_path: Path) -> None:
    """Two scripts giving docker-compose.deployment.yml over two different bases say no one
    project: the file is read alone, as before (gunicorn's default single worker), and a note
    names both commands."""
    root = write(
        tmp_path / "repo",
        stack(
            {
                "docker/other.yml": BASE.replace("7", "3"),
                "docker/a.sh": "#!/bin/sh\n"
                "docker compose -f docker-compose.yml -f docker-compose.deployment.yml up\n",
                "docker/b.sh": "#!/bin/sh\n"
                "docker compose -f other.yml -f docker-compose.deployment.yml up\n",
            }
        ),
    )
    result = check(root)
    assert workers(result, "docker-compose.deployment.yml") == [1]
    (said,) = [n for n in result.notes if n.kind == "overlay" and "different files" in n.message]
    assert "docker/a.sh:2" in said.message
    assert "docker/b.sh:2" in said.message
