"""The launch chain through process wrappers whose options take a value (`nice -n 5`,
`timeout -s KILL 30`, `sudo -u app`) before another wrapper, a user switch or a script. Each
fixture is a small repository written here for the cause it pins."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

UWSGI_INI = "[uwsgi]\nmodule = app.wsgi\nhttp-socket = 0.0.0.0:8000\nprocesses = 4\n"

NICE_SU_ENTRYPOINT = """#!/bin/bash
trap 'kill -TERM $uwsgi_pid' TERM INT
uwsgi_args="--ini /app/docker/uwsgi.ini"
if [ "$DEBUG" != "true" ]; then
    uwsgi_args+=" --disable-logging"
fi
nice -n "$NICE_LEVEL" su - "$APP_USER" -c "cd /app && exec $VIRTUAL_ENV/bin/uwsgi $uwsgi_args" & uwsgi_pid=$!
wait
"""


def test_nice_with_its_value_then_su_c_reaches_the_server(tmp_path: Path) -> None:
    """`nice -n "$LEVEL" su - "$USER" -c "cd /app && exec $VENV/bin/uwsgi $args" &`: nice's
    `-n` takes the next word, so what it runs is `su`, whose `-c` string is shell that execs
    uWSGI with the script's own `$args` (built with `+=`): the image's ENTRYPOINT starts
    uWSGI with uwsgi.ini, never "starts no server"."""
    root = write(
        tmp_path,
        {
            "docker/Dockerfile": (
                'FROM python:3.12\nCOPY . /app\nENTRYPOINT ["/app/docker/entrypoint.sh"]\n'
            ),
            "docker/entrypoint.sh": NICE_SU_ENTRYPOINT,
            "docker/uwsgi.ini": UWSGI_INI,
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["docker/Dockerfile:3", "docker/entrypoint.sh:7", "docker/uwsgi.ini:3"], "uwsgi", 4)
    ]
    assert not [n for n in result.notes if n.kind == "starts-no-server"]


def test_wrapper_option_values_are_not_the_script_it_runs(tmp_path: Path) -> None:
    """ENTRYPOINT `nice -n 5 /app/start.sh` and `timeout -s KILL 3600 /app/start.sh`: the
    option's value (`5`, `KILL`) is no program; the script after it is followed."""
    for name, entrypoint in (
        ("nice", '["nice", "-n", "5", "/app/start.sh"]'),
        ("timeout", '["timeout", "-s", "KILL", "3600", "/app/start.sh"]'),
    ):
        root = write(
            tmp_path / name,
            {
                "Dockerfile": f"FROM python:3.12\nCOPY . /app\nENTRYPOINT {entrypoint}\n",
                "start.sh": "#!/bin/sh\nexec uwsgi --ini /app/uwsgi.ini\n",
                "uwsgi.ini": UWSGI_INI,
            },
        )
        assert chains(check_folder(root), root) == [
            (["Dockerfile:3", "start.sh:2", "uwsgi.ini:3"], "uwsgi", 4)
        ], name


def test_background_fix_keeps_the_pid_variable_the_line_already_sets(tmp_path: Path) -> None:
    """`nice -n 5 su - app -c "exec uwsgi ..." & pid=$!` with no trap: the fix writes the
    line once with its own `pid=$!` and traps `$pid` (not `... & pid=$! & APP_PID=$!`)."""
    root = write(
        tmp_path,
        {
            "Dockerfile": 'FROM python:3.12\nCOPY . /app\nENTRYPOINT ["/app/start.sh"]\n',
            "start.sh": (
                '#!/bin/sh\nnice -n 5 su - app -c "exec uwsgi --ini /app/uwsgi.ini" & pid=$!\n'
                "wait\n"
            ),
            "uwsgi.ini": UWSGI_INI,
        },
    )
    (finding,) = [
        f for f in check_folder(root).findings if f.rule == "background-server-without-trap"
    ]
    assert finding.fix.startswith(
        'nice -n 5 su - app -c "exec uwsgi --ini /app/uwsgi.ini" & pid=$!   then   '
        "trap 'kill -TERM $pid' TERM INT"
    )
