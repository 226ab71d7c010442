"""A command string a shell runs (`sh -c '...'` in a supervisord program, a compose command)
holding the shell's compound commands (`if ... then ... else ... fi`) is read as a script is:
its tests decided where the files decide them, its branches followed to the scripts they
run. Each fixture is a small repository written here for the cause it pins."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check.graph import launch_json, launches
from tests.folder_support import chains, check_folder, write

_WRAPPER = """#!/bin/sh
# prefixes a service's log lines, then runs it
prefix="$1"
shift
exec "$@"
"""

_START = "#!/bin/sh\ncd /srv/app\nexec gunicorn app:app --workers 3 --bind 0.0.0.0:7000\n"

_PROGRAM = """[supervisord]
nodaemon=true

[program:ui]
command=sh -c 'if [ "${{SERVICE_UI}}" = "yes" ]; then exec /srv/wrap.sh "[UI] " /srv/app/start.sh; else echo "[UI] disabled" && exit 0; fi'
{environment}
"""


@pytest.mark.parametrize(
    ("environment", "started"),
    [("", True), ('environment=SERVICE_UI="yes"', True), ('environment=SERVICE_UI="no"', False)],
)
def test_a_supervisord_sh_c_with_if_else_follows_the_branch_to_the_server(
    tmp_path: Path, environment: str, started: bool
) -> None:
    """`command=sh -c 'if [ "${SERVICE_UI}" = "yes" ]; then exec /srv/wrap.sh ...
    /srv/app/start.sh; else ... exit 0; fi'` (seen in bunkerity/bunkerweb's all-in-one
    supervisor.d/ui.ini): the `then` branch runs a wrapper the image holds, which execs the
    start script's gunicorn; the program's file is a step of the chain, not the server's
    config. With `environment=SERVICE_UI="no"` the `else` branch runs: no server."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12-slim\nCOPY deploy /srv\n"
                'CMD ["supervisord", "-c", "/srv/supervisord.conf"]\n'
            ),
            "deploy/supervisord.conf": _PROGRAM.format(environment=environment),
            "deploy/wrap.sh": _WRAPPER,
            "deploy/app/start.sh": _START,
        },
    )
    result = check_folder(root)
    found = [c for c in chains(result, root) if c[0][0].startswith("Dockerfile")]
    if not started:
        assert found == []
        return
    assert found == [
        (
            [
                "Dockerfile:3",
                "deploy/supervisord.conf:5",
                "deploy/wrap.sh:5",
                "deploy/app/start.sh:3",
            ],
            "gunicorn",
            3,
        )
    ]
    (launch,) = [
        x
        for x in launches(result.apps, result.links, result.balancer_links)
        if x.chain[0].file.name == "Dockerfile"
    ]
    assert launch_json(launch)["config"] is None


@pytest.mark.parametrize(("mode", "servers"), [("web", [("gunicorn", 5)]), ("worker", [])])
def test_a_compose_sh_c_with_an_if_on_its_environment_starts_the_branch_server(
    tmp_path: Path, mode: str, servers: list[tuple[str, int]]
) -> None:
    """A compose `command: sh -c 'if [ "$$MODE" = web ]; then exec gunicorn ...; else exec
    celery ...; fi'` (another owner's image) with `MODE: web` in its environment starts the
    `then` branch's gunicorn, its options read; with `MODE: worker`, Celery: no server."""
    root = write(
        tmp_path,
        {
            "compose.yaml": (
                "services:\n  web:\n    image: python:3.12-slim\n    environment:\n"
                f"      MODE: {mode}\n"
                '    command: sh -c \'if [ "$$MODE" = web ]; then exec gunicorn app:app -w 5;'
                " else exec celery -A app worker; fi'\n"
            ),
        },
    )
    assert [c[1:] for c in chains(check_folder(root), root)] == servers
