"""systemd's own variable expansion in `ExecStart=` (systemd.service(5), "Command lines"), and
placeholders another tool fills never handed to a server's own parser."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.machine import Machine

MACHINE = Machine(cores=2, somaxconn=4096)

#: The pattern of StackStorm's st2api unit: the options in one variable of `Environment=`.
OPTIONS_IN_A_VARIABLE = """\
[Service]
Environment="ARGS=-k eventlet -b 127.0.0.1:9101 --workers 3 --timeout 30"
EnvironmentFile=-/etc/default/api
ExecStart=/opt/venv/bin/gunicorn api.wsgi:application $ARGS
"""


def check(tmp_path: Path, name: str, text: str) -> CheckResult:
    path = tmp_path / name
    path.write_text(text)
    return check_files([path], machine=MACHINE, env={})


def unresolved(result: CheckResult) -> list[str]:
    """The messages of the unresolved-variable notes."""
    return [n.message for n in result.notes if n.kind == "unresolved-variable"]


def test_a_lone_dollar_variable_is_split_into_the_servers_arguments(tmp_path: Path) -> None:
    """`$ARGS` as a word of its own is `Environment=`'s value split at whitespace (seen in
    StackStorm/st2's st2api unit): gunicorn gets the bind, worker class and workers in it,
    though an `EnvironmentFile=-` not here could have set ARGS too."""
    (app,) = check(tmp_path, "api.service", OPTIONS_IN_A_VARIABLE).apps
    assert [s.value for s in app.sockets] == ["127.0.0.1:9101"]
    assert (app.workers.value, app.worker_class.value) == (3, "eventlet")


def test_a_braced_variable_is_one_argument_and_the_last_assignment_wins(tmp_path: Path) -> None:
    """`${BIND}` is the value as one argument, inside a word too (`--bind=${BIND}`); of two
    `Environment=` lines setting it, the later one counts."""
    unit = (
        "[Service]\nEnvironment=BIND=127.0.0.1:7000\nEnvironment=BIND=127.0.0.1:7001 W=2\n"
        "ExecStart=/venv/bin/gunicorn --bind=${BIND} -w ${W} app:app\n"
    )
    (app,) = check(tmp_path, "web.service", unit).apps
    assert [s.value for s in app.sockets] == ["127.0.0.1:7001"]
    assert app.workers.value == 2


def test_a_variable_set_nowhere_here_is_an_unresolved_note_not_a_default(tmp_path: Path) -> None:
    """`$ARGS` and `--bind ${ADDR}` that no `Environment=` here sets (the host's own
    EnvironmentFile= may): each one unresolved-variable note; the bind is not gunicorn's
    default 127.0.0.1:8000, which would join a front that never reaches it."""
    unit = OPTIONS_IN_A_VARIABLE.replace('Environment="ARGS=', 'Environment="OTHER=').replace(
        "$ARGS", "$ARGS --bind ${ADDR}"
    )
    result = check(tmp_path, "api.service", unit)
    (app,) = result.apps
    assert app.sockets == ()
    notes = unresolved(result)
    assert len(notes) == 2
    assert any("ARGS" in n for n in notes)
    assert any("--bind ${ADDR}" in n for n in notes)


def test_an_installers_placeholder_in_the_environment_is_never_given_to_granian(
    tmp_path: Path,
) -> None:
    """`Environment=GRANIAN_PORT=__PORT__`, which YunoHost's installer fills (seen in
    YunoHost-Apps/paperless-ngx_ynh): granian is read without it and one note names it, never
    an error for "'__PORT__' is not a valid integer", and no default port is claimed."""
    unit = (
        "[Service]\nEnvironment=GRANIAN_HOST=::\nEnvironment=GRANIAN_PORT=__PORT__\n"
        "ExecStart=/bin/sh -c 'exec /venv/bin/granian --interface asginl app.asgi:application'\n"
    )
    result = check(tmp_path, "app.service", unit)
    (app,) = result.apps
    assert app.kind == "granian"
    assert app.sockets == ()
    (message,) = unresolved(result)
    assert "GRANIAN_PORT=__PORT__" in message
    assert "placeholder" in message


def test_a_placeholder_argument_is_left_out_with_its_flag(tmp_path: Path) -> None:
    """`uvicorn app:app --port __PORT__` and `--log-level @LEVEL@`: placeholders an installer
    or autoconf fills are unknown values, left out with their flags and noted, never handed to
    uvicorn's parser to refuse."""
    script = "#!/bin/sh\nexec uvicorn app:app --host 0.0.0.0 --port __PORT__ --log-level @LEVEL@\n"
    result = check(tmp_path, "start.sh", script)
    (app,) = result.apps
    assert app.kind == "uvicorn"
    assert app.sockets == ()
    port, level = unresolved(result)
    assert "'--port __PORT__'" in port
    assert "placeholder" in port
    assert "'--log-level @LEVEL@'" in level


def test_a_command_substitution_in_a_variable_the_server_reads_is_never_parsed(
    tmp_path: Path,
) -> None:
    """`UVICORN_LOG_LEVEL="$(echo ... | tr ...)"`, only the running shell's output (seen in
    srbhr/Resume-Matcher's start script): uvicorn's parser never gets it from the environment
    either, so no "is not one of 'critical', ..." error."""
    script = (
        "#!/bin/sh\nUVICORN_LOG_LEVEL=\"$(echo \"${LEVEL:-INFO}\" | tr '[:upper:]' '[:lower:]')\"\n"
        "export UVICORN_LOG_LEVEL\nexec uvicorn app:app --port 8000\n"
    )
    result = check(tmp_path, "start.sh", script)
    assert not result.errors
    (app,) = result.apps
    assert [s.value for s in app.sockets] == ["127.0.0.1:8000"]


def test_a_placeholder_count_is_left_out_but_a_placeholder_folders_config_is_found(
    tmp_path: Path,
) -> None:
    """`--workers __WORKERS__` is unknown and left out (gunicorn's parser would refuse it),
    while `--config __DATA_DIR__/gunicorn.conf.py` (seen in YunoHost-Apps/pyinventory_ynh) names
    a known file below an installer's folder: the config beside the unit is read."""
    (tmp_path / "gunicorn.conf.py").write_text("workers = 5\n")
    unit = (
        "[Service]\nWorkingDirectory=__DATA_DIR__/\nExecStart=__DATA_DIR__/venv/bin/gunicorn "
        "--config __DATA_DIR__/gunicorn.conf.py --timeout __TIMEOUT__ wsgi\n"
    )
    result = check(tmp_path, "app.service", unit)
    assert not result.errors
    (app,) = result.apps
    assert app.workers.value == 5
    (message,) = unresolved(result)
    assert "--timeout __TIMEOUT__" in message


def test_a_flag_is_pointed_at_on_the_line_it_is_written(tmp_path: Path) -> None:
    """A flag that reaches ExecStart= through `$ARGS` is written on the `Environment=` line
    that sets ARGS (seen in StackStorm/st2's st2stream unit: `--threads 10` with eventlet),
    and a flag on a continuation line of an ExecStart= continued with `\\` is written on that
    line: the finding on it points there, not at ExecStart='s first line."""
    variable = OPTIONS_IN_A_VARIABLE.replace("--workers 3", "--workers 3 --threads 10")
    (finding,) = [
        f
        for f in check(tmp_path, "api.service", variable).findings
        if f.rule == "threads-ignored-by-worker-class"
    ]
    assert finding.at.line == 2
    continued = (
        "[Service]\nExecStart=/opt/venv/bin/gunicorn api.wsgi:application \\\n"
        "    -k eventlet -b 127.0.0.1:9101 \\\n    --workers 3 --threads 10\n"
    )
    (finding,) = [
        f
        for f in check(tmp_path, "web.service", continued).findings
        if f.rule == "threads-ignored-by-worker-class"
    ]
    assert finding.at.line == 4
