"""Shell launchers whose server is started one step removed: a function of a sourced shell
library, an argument-dispatch wrapper that passes a slice of its arguments to another script,
a console script run by the interpreter, and a SysV init script kept as an example. Each
fixture is a small repository written here; the public project named is where the pattern
was seen."""

from __future__ import annotations

from pathlib import Path

from servertune.check import scripts
from servertune.check.commands import ConfigFile
from servertune.check.graph import launches
from tests.folder_support import chains, check_folder, write

ENTRYPOINT = """#!/bin/bash
set -e
source "${APP_HOME}/functions"
if [[ -z ${1} ]]; then
  run_proxy
  run_backend
else
  exec "$@"
fi
"""

FUNCTIONS = """#!/bin/bash
run_proxy() {
  nginx
}
run_dev() {
  exec uvicorn app.main:app --reload
}
run_backend() {
  cd /opt/app
  exec uvicorn app.main:app --host 0.0.0.0 --port 8000 --workers 3
}
run_single() {
  exec uvicorn app.main:app --host 0.0.0.0 --port 9000
}
"""


def test_function_of_a_library_sourced_by_a_variable_path_is_the_images_launch(
    tmp_path: Path,
) -> None:
    """`source "${APP_HOME}/functions"` with APP_HOME the image's ENV, then `run_backend`
    (cohere-toolkit's gcp-entrypoint.sh): the chain goes Dockerfile -> entrypoint's call ->
    the function's uvicorn; the library is no launch of its own, and no note says it starts
    a server on more than one path (its caller's call picks the function)."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nENV APP_HOME=/opt/app\n"
                "COPY scripts/entrypoint.sh /sbin/entrypoint.sh\n"
                "COPY scripts/ ${APP_HOME}/\n"
                'CMD ["/sbin/entrypoint.sh"]\n'
            ),
            "scripts/entrypoint.sh": ENTRYPOINT,
            "scripts/functions": FUNCTIONS,
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["Dockerfile:5", "scripts/entrypoint.sh:6", "scripts/functions:10"], "uvicorn", 3)
    ]
    assert [n.kind for n in result.notes] == []


def test_library_sourced_from_the_scripts_own_folder_is_followed_when_read_alone(
    tmp_path: Path,
) -> None:
    """`source "$(dirname "$0")/functions"` (a folder known only at run time) names the
    library beside the script: the script read alone starts the called function's server."""
    root = write(
        tmp_path,
        {
            "entrypoint.sh": ENTRYPOINT.replace("${APP_HOME}", '$(dirname "$0")'),
            "functions": FUNCTIONS,
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["entrypoint.sh:6", "functions:10"], "uvicorn", 3)]


RUN_IN_CONTAINER = """#!/bin/bash
SCRIPTS_DIR=$(readlink -f $(eval echo $SCRIPTS_DIR))
case "$1" in
    "bash")
        echo "Running: ${@:2}"
        $SCRIPTS_DIR/run_bash "${@:2}";;
    "web")
        exec gunicorn app.wsgi --workers 2;;
    *)
        exec python manage.py runserver 0.0.0.0:8000;;
esac
"""


def test_dispatch_wrapper_passes_the_rest_of_its_arguments_to_the_selected_script(
    tmp_path: Path,
) -> None:
    """compose `command: run_in_container bash uwsgi --ini /app/uwsgi.ini` and a wrapper
    whose `case "$1" in "bash")` arm runs `$SCRIPTS_DIR/run_bash "${@:2}"` (pootle's
    docker/bin): the folder is known only at run time, so run_bash is the one beside the
    wrapper; it gets `uwsgi --ini ...` and execs it, so the chain reaches the ini."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nCOPY bin /app/bin\nCOPY uwsgi.ini /app/uwsgi.ini\n",
            "compose.yaml": (
                "services:\n  web:\n    build: .\n    command: "
                '["/app/bin/run_in_container", "bash", "uwsgi", "--ini", "/app/uwsgi.ini"]\n'
            ),
            "uwsgi.ini": "[uwsgi]\nmodule = app.wsgi\nprocesses = 4\nhttp-socket = :8000\n",
            "bin/run_in_container": RUN_IN_CONTAINER,
            "bin/run_bash": '#!/bin/bash\ncd /app\nexec "$@"\n',
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (
            ["compose.yaml:2", "bin/run_in_container:6", "bin/run_bash:3", "uwsgi.ini:3"],
            "uwsgi",
            4,
        )
    ]


SYSVINIT = """#! /bin/sh
### BEGIN INIT INFO
# Provides:          shop
# Short-Description: Starts the gunicorn server
### END INIT INFO

SITE_HOME=/var/www/shop

start_daemon() {
  cd $SITE_HOME/shop && ../venv/bin/python ../venv/bin/gunicorn shop.wsgi:application \\
      -D --workers 3 -b 127.0.0.1:8000
}

stop_daemon() {
  pkill -f gunicorn || true
}

case "$1" in
 start)
 start_daemon
 ;;
 stop)
 stop_daemon
 ;;
esac
exit 0
"""


def test_sysv_init_script_example_runs_the_console_script_behind_its_nginx(
    tmp_path: Path,
) -> None:
    """conf/sysvinit.example (mapit's), a SysV init script kept as an example: it is read as
    a shell script, its `../venv/bin/python ../venv/bin/gunicorn` is gunicorn (the console
    script run by the interpreter), joined to the nginx example that proxies to its port;
    its `-D` is no fault there (an init script leaves a daemon behind and returns)."""
    root = write(
        tmp_path,
        {
            "conf/sysvinit.example": SYSVINIT,
            "conf/nginx.conf.example": (
                "server {\n  listen 80;\n  location / {\n"
                "    proxy_pass http://localhost:8000/;\n  }\n}\n"
            ),
        },
    )
    result = check_folder(root)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert chains(result, root) == [(["conf/sysvinit.example:10"], "gunicorn", 3)]
    assert [f.file.relative_to(root).as_posix() for f in launch.fronts] == [
        "conf/nginx.conf.example"
    ]
    assert [s.value for s in launch.app.sockets] == ["127.0.0.1:8000"]
    assert not [f for f in result.findings if f.rule == "background-server-without-trap"]


def test_interpreter_running_a_servers_console_script_by_path_is_that_server(
    tmp_path: Path,
) -> None:
    """`python3 /usr/local/bin/uvicorn ...` and `$VENV/bin/python $VENV/bin/gunicorn ...`
    run the console script as a script: uvicorn and gunicorn, read with their arguments."""
    root = write(
        tmp_path,
        {
            "a/start.sh": "#!/bin/sh\nexec python3 /usr/local/bin/uvicorn app:app --workers 2\n",
            "b/start.sh": (
                '#!/bin/sh\nVENV=/srv/venv\nexec "$VENV/bin/python" "$VENV/bin/gunicorn" '
                "-w 5 app:app\n"
            ),
        },
    )
    result = check_folder(root)
    assert sorted(chains(result, root)) == [
        (["a/start.sh:2"], "uvicorn", 2),
        (["b/start.sh:3"], "gunicorn", 5),
    ]


INIT_D = """#!/bin/sh
DAEMON=/srv/shop/venv/bin/gunicorn
DAEMON_OPTS="--workers 3 --bind 127.0.0.1:8000 shop.wsgi"
case "$1" in
  start)
    start-stop-daemon --start --quiet --background --pidfile /run/shop.pid \\
        --chuid shop --exec $DAEMON -- $DAEMON_OPTS
    ;;
  stop)
    start-stop-daemon --stop --pidfile /run/shop.pid
    ;;
esac
"""


def test_init_script_starting_the_server_with_start_stop_daemon_is_that_server(
    tmp_path: Path,
) -> None:
    """An init.d script's `start-stop-daemon --start ... --exec $DAEMON -- $DAEMON_OPTS`
    runs the program `--exec` names with the words after `--`: gunicorn, 3 workers on
    127.0.0.1:8000 (its `--background` is the init script's way, no fault)."""
    root = write(tmp_path, {"init.d/shop": INIT_D})
    result = check_folder(root)
    assert chains(result, root) == [(["init.d/shop:6"], "gunicorn", 3)]
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert [s.value for s in launch.app.sockets] == ["127.0.0.1:8000"]
    assert not result.findings


def test_a_supervisord_whose_programs_run_the_script_that_starts_it_ends(tmp_path: Path) -> None:
    """aio/entrypoint.sh starts `supervisord -c /etc/supervisord.conf`; each of its programs
    runs `sh -c 'exec .../wrapper.sh NAME PREFIX /usr/share/app/entrypoint.sh'`, a path whose
    bare name beside the config is aio/entrypoint.sh itself (a loop only in the files, as
    bunkerity/bunkerweb's all-in-one image has); the api's own entrypoint starts gunicorn.
    check reads each script and config once along a chain and ends, the api linked, instead
    of following the loop until the stack runs out (or for minutes, with several programs)."""
    looping = "command=sh -c 'exec /usr/share/app/all-in-one/wrapper.sh {0} \"[{0}] \" {1}'\n"
    programs = "".join(
        f"\n[program:{name}]\n" + looping.format(name, "/usr/share/app/entrypoint.sh")
        for name in ("web", "jobs", "cron", "logs")
    )
    root = write(
        tmp_path / "allinone",
        {
            "aio/Dockerfile": "FROM python:3.12-slim\n"
            "COPY aio/entrypoint.sh aio/wrapper.sh /usr/share/app/all-in-one/\n"
            "COPY api/entrypoint.sh /usr/share/app/api/entrypoint.sh\n"
            "COPY aio/supervisord.conf /etc/supervisord.conf\n"
            'ENTRYPOINT ["/usr/share/app/all-in-one/entrypoint.sh"]\n',
            "aio/entrypoint.sh": "#!/bin/bash\nexec supervisord -n -c /etc/supervisord.conf\n",
            "aio/supervisord.conf": "[supervisord]\nnodaemon=true\n\n[program:api]\n"
            + looping.format("api", "/usr/share/app/api/entrypoint.sh")
            + programs,
            "aio/wrapper.sh": '#!/bin/bash\nshift 2\nexec "$@"\n',
            "api/entrypoint.sh": "#!/bin/bash\nexec gunicorn -w 3 -b 0.0.0.0:8000 app:app\n",
        },
    )
    result = check_folder(root)
    assert ("gunicorn", 3) in [(server, workers) for _, server, workers in chains(result, root)]
    # The loop's own guard (the made-up folder above ends on either side of it; bunkerweb's
    # did not): a script already being read further out along the chain is not read again.
    entrypoint = root / "api" / "entrypoint.sh"
    found = ConfigFile(entrypoint.read_text(), entrypoint)
    token = scripts._FOLLOWING.set(frozenset({entrypoint.resolve()}))
    try:
        assert scripts._script_server(found, [], {}, None, lambda *_: None) is None
    finally:
        scripts._FOLLOWING.reset(token)
    assert scripts._script_server(found, [], {}, None, lambda *_: None) is not None
