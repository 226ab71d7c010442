"""How a launch script's shell is evaluated where the command is built, not written: `set
--` then `exec "$@"`, a command held in a variable, a construct that cannot be read here, two
servers started in the background, file tests, and `cd DIR` before a relative config path.
Each fixture is a small repository written here; the public project where the pattern was
seen is named in the test's docstring."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

#: An image whose ENTRYPOINT script is given the app as its first argument.
RUN_WITH_APP = (
    'FROM python:3.12\nCOPY run.sh /usr/local/bin/run.sh\nENTRYPOINT ["/usr/local/bin/run.sh", '
    '"main:app"]\n'
)

#: `set --` in both branches of an undecided `if`, an unquoted optional-arguments variable
#: known only in part, and the script's own arguments after `shift`.
SET_ARGUMENTS = """#!/bin/sh
set -e
APP="$1"
shift
HOST="${HOST:-0.0.0.0}"
PORT="${PORT:-9001}"
EXTRA=""
if [ -n "$TLS" ]; then
    EXTRA="--ssl-certfile /etc/c.pem"
    EXTRA="$EXTRA --ssl-keyfile-password $KEY_PASSWORD"
fi
if command -v uvicorn >/dev/null 2>&1; then
    set -- uvicorn "$APP" --workers 3 --host "$HOST" --port "$PORT" $EXTRA "$@"
else
    set -- python3 -m uvicorn "$APP" --workers 3 --host "$HOST" --port "$PORT" $EXTRA "$@"
fi
exec "$@"
"""


def test_set_rebinds_the_arguments_that_exec_runs(tmp_path: Path) -> None:
    """`set -- uvicorn "$APP" ... $EXTRA "$@"; exec "$@"` runs uvicorn with those words: "$1"
    read before `shift` is the image's argument, the unquoted `$EXTRA` split into fields
    (its unknown part kept unresolved), and each branch's `set --` starts from the
    arguments before the `if`, never from the other branch's (roboflow/inference's
    docker/entrypoint/run_uvicorn.sh)."""
    root = write(tmp_path, {"Dockerfile": RUN_WITH_APP, "run.sh": SET_ARGUMENTS})
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:3", "run.sh:15"], "uvicorn", 3)]
    (app,) = result.apps
    assert [s.value for s in app.sockets] == ["0.0.0.0:9001"]


def test_a_shell_form_cmd_runs_the_command_an_env_variable_holds(tmp_path: Path) -> None:
    """`ENV GUNICORN gunicorn --bind :8080 --workers 5 ...` then `CMD exec $GUNICORN`: the
    shell splits the unquoted variable into the command it holds, so the image starts that
    gunicorn (arXiv/arxiv-browse's Dockerfile)."""
    dockerfile = (
        "FROM python:3.12\nENV GUNICORN gunicorn --bind :8080 \\\n"
        '    --workers 5 --threads 10 "app.factory:create_app()"\nCMD exec $GUNICORN\n'
    )
    root = write(tmp_path, {"Dockerfile": dockerfile})
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:4"], "gunicorn", 5)]
    (app,) = result.apps
    assert [s.value for s in app.sockets] == [":8080"]


def test_a_run_the_builder_words_cannot_read_is_a_note_and_the_rest_is_read(
    tmp_path: Path,
) -> None:
    """A build-only `RUN [ ${#TORCH} -gt 0 ] && ...` (the shell's string length, no word the
    builder expands) is a not-followed note at its line, not a refused file: the image's
    gunicorn after it is still read (fauxpilot/fauxpilot's converter/Dockerfile)."""
    dockerfile = (
        "FROM python:3.12\nARG TORCH\n"
        "RUN [ ${#TORCH} -gt 0 ] && V=torch==$TORCH || V=torch; pip install $V\n"
        'CMD ["gunicorn", "--workers", "2", "app:app"]\n'
    )
    root = write(tmp_path, {"Dockerfile": dockerfile})
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:4"], "gunicorn", 2)]
    (unread,) = [n for n in result.notes if n.kind == "not-followed"]
    assert unread.at.line == 3
    assert "${#TORCH}" in unread.message


def test_two_servers_started_in_the_background_both_run(tmp_path: Path) -> None:
    """`gunicorn -c tmp.conf.py ... &` then, after more commands, `gunicorn -c main.conf.py
    ... &` and `wait`: a line ending in `&` followed by more commands is no alternative, so
    both servers are launches of the script, each with its own config, and no server-chosen
    note drops one (bunkerity/bunkerweb's src/ui/entrypoint.sh)."""
    script = """#!/bin/bash
gunicorn --config tmp.conf.py app:tmp &
pid="$!"
sleep 2
gunicorn --config main.conf.py app:app &
wait "$pid"
"""
    root = write(
        tmp_path,
        {
            "Dockerfile": 'FROM python:3.12\nCOPY . /app\nWORKDIR /app\nCMD ["./run.sh"]\n',
            "run.sh": script,
            "tmp.conf.py": "workers = 1\n",
            "main.conf.py": "workers = 3\n",
        },
    )
    result = check_folder(root)
    assert sorted(chains(result, root)) == [
        (["Dockerfile:4", "run.sh:2", "tmp.conf.py:1"], "gunicorn", 1),
        (["Dockerfile:4", "run.sh:5", "main.conf.py:1"], "gunicorn", 3),
    ]
    assert not [n for n in result.notes if n.kind == "server-chosen"]
