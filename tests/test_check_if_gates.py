"""An `if` on a variable the script itself sets with a default (`DEV=${DEV:-false}`) gates the
assignments and array appends inside it as it gates commands: a branch the default decides
false adds nothing (no guessed `--reload`), one it decides true adds its words. Seen in
IBM/mcp-context-forge's run-gunicorn.sh (`cmd+=( --reload ... )` under `GUNICORN_DEV_MODE`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.discover import discover
from servertune.machine import Machine

MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)

_PLAIN = """#!/bin/bash
DEV=${{DEV:-{default}}}
OPTS="-w 3"
if [[ "${{DEV}}" == "true" ]]; then
    OPTS="-w 3 --reload"
fi
exec gunicorn $OPTS app:app
"""

_ARRAY = """#!/bin/bash
# Usage:
#   GUNICORN_DEV_MODE=true ./run.sh    # hot reload
SCRIPT_DIR="$(cd "$(dirname "$0")" && pwd)"
if [[ -z "${VIRTUAL_ENV:-}" ]]; then
    source "${SCRIPT_DIR}/.venv/bin/activate"
fi
GUNICORN_DEV_MODE=${GUNICORN_DEV_MODE:-false}
cmd=(gunicorn -w 3)
if [[ "${GUNICORN_DEV_MODE}" == "true" ]]; then
    cmd+=( --reload )
fi
cmd+=( app:app )
exec "${cmd[@]}"
"""


@pytest.mark.parametrize(("default", "reloads"), [("false", False), ("true", True)])
def test_an_assignment_under_an_if_on_the_scripts_own_default_follows_the_default(
    tmp_path: Path, default: str, reloads: bool
) -> None:
    """`DEV=${DEV:-false}` then `if [[ "$DEV" == "true" ]]; then OPTS="... --reload"; fi`,
    the script read alone: a deployment that sets no DEV runs it without `--reload` (a
    `server-chosen` note at the `if` says so); with the default `true` the branch runs and
    the server reloads."""
    script = tmp_path / "run.sh"
    script.write_text(_PLAIN.format(default=default))
    result = check_files([script], machine=MACHINE)
    (app,) = result.apps
    assert app.workers.value == 3
    assert (app.reloads is not None) == reloads
    chosen = [n.at.line for n in result.notes if n.kind == "server-chosen"]
    assert chosen == ([] if reloads else [4])


@pytest.mark.parametrize(
    ("env_line", "reloads"), [("", False), ("ENV GUNICORN_DEV_MODE=true\n", True)]
)
def test_an_array_append_under_an_if_on_the_scripts_own_default_follows_the_image(
    tmp_path: Path, env_line: str, reloads: bool
) -> None:
    """`cmd+=( --reload )` under `if [[ "${GUNICORN_DEV_MODE}" == "true" ]]` after
    `GUNICORN_DEV_MODE=${GUNICORN_DEV_MODE:-false}`, run by an image: the usage comment
    (`#   GUNICORN_DEV_MODE=true ./run.sh`) sets nothing and a virtualenv's `bin/activate`
    sets only its own names, so the default decides the test and the image that sets no
    GUNICORN_DEV_MODE runs gunicorn without `--reload`; the image that sets it true reloads."""
    (tmp_path / "run.sh").write_text(_ARRAY)
    (tmp_path / "Dockerfile").write_text(
        f'FROM python:3.12-slim\n{env_line}COPY run.sh /run.sh\nENTRYPOINT ["/run.sh"]\n'
    )
    walk = discover(tmp_path)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    assert result.apps
    for app in result.apps:
        assert app.workers.value == 3
        assert (app.reloads is not None) == reloads
