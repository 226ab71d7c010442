"""How a launch script's shell is evaluated where the command is built, not written: `set
--` then `exec "$@"`, a command held in a variable, a construct that cannot be read here, two
servers started in the background, file tests, and `cd DIR` before a relative config path.
Each fixture is a small repository written here; the public project where the pattern was
seen is named in the test's docstring."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launches
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


#: A script that picks its gunicorn config by which file the image has.
CONFIG_BY_FILE_TEST = """#!/bin/sh
set -e
if [ -f /opt/gunicorn_conf.py ]; then
    DEFAULT_CONF=/opt/gunicorn_conf.py
elif [ -f /opt/app/gunicorn_conf.py ]; then
    DEFAULT_CONF=/opt/app/gunicorn_conf.py
else
    DEFAULT_CONF=/gunicorn_conf.py
fi
export CONF=${CONF:-$DEFAULT_CONF}
exec gunicorn -c "$CONF" app.main:app
"""


def test_a_file_test_is_true_where_the_image_has_the_file(tmp_path: Path) -> None:
    """`if [ -f /opt/gunicorn_conf.py ]; then CONF=...; elif ...; else CONF=/gunicorn_conf.py`
    before `gunicorn -c "$CONF"`: the image COPYs the config to /opt/gunicorn_conf.py, so the
    first test is true and that config is linked, not the `else` branch's missing file; a
    path no file here gives is undecided (UKHSA-Internal/coronavirus-dashboard-frontend-server's server/start-gunicorn.sh)."""
    dockerfile = (
        "FROM python:3.12\nCOPY server/gunicorn_conf.py /opt/gunicorn_conf.py\n"
        'COPY server/start.sh /opt/start.sh\nCMD ["/opt/start.sh"]\n'
    )
    root = write(
        tmp_path / "image",
        {
            "Dockerfile": dockerfile,
            "server/start.sh": CONFIG_BY_FILE_TEST,
            "server/gunicorn_conf.py": "workers = 3\nbind = '0.0.0.0:5100'\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["Dockerfile:4", "server/start.sh:11", "server/gunicorn_conf.py:1"], "gunicorn", 3)
    ]
    assert not [n for n in result.notes if n.kind == "config-not-found"]
    # With no config copied in, whether /opt/gunicorn_conf.py exists is not known (a base
    # image or a volume may hold it): the chain is undecided, so which config is not known
    # either, never the `else` branch's /gunicorn_conf.py as if that branch ran.
    dockerfile = 'FROM python:3.12\nCOPY server/start.sh /opt/start.sh\nCMD ["/opt/start.sh"]\n'
    root = write(
        tmp_path / "bare", {"Dockerfile": dockerfile, "server/start.sh": CONFIG_BY_FILE_TEST}
    )
    result = check_folder(root)
    (missing,) = [n for n in result.notes if n.kind == "config-not-found"]
    assert missing.message.startswith("-c ${CONF:-$DEFAULT_CONF}: not in the build context")


def test_a_script_nothing_here_runs_is_a_launch_beside_a_program_running_its_config(
    tmp_path: Path,
) -> None:
    """A supervisord program `gunicorn -c /opt/gunicorn_conf.py` and a start script (run by
    nothing here) whose file test picks the same config: two files that each start gunicorn
    with it, so two launches, not one reading of the config dropped as the other's
    (UKHSA-Internal/coronavirus-dashboard-frontend-server)."""
    dockerfile = (
        "FROM python:3.12\nCOPY server/gunicorn_conf.py /opt/gunicorn_conf.py\n"
        "COPY server/start.sh /opt/start.sh\n"
        "COPY server/supervisord.conf /opt/supervisord.conf\n"
        'CMD ["supervisord", "-c", "/opt/supervisord.conf"]\n'
    )
    supervisord = (
        "[supervisord]\nnodaemon=true\n\n[program:web]\n"
        "command=gunicorn -c /opt/gunicorn_conf.py app.main:app\n"
    )
    root = write(
        tmp_path,
        {
            "Dockerfile": dockerfile,
            "server/start.sh": CONFIG_BY_FILE_TEST,
            "server/supervisord.conf": supervisord,
            "server/gunicorn_conf.py": "workers = 3\nbind = '0.0.0.0:5100'\n",
        },
    )
    result = check_folder(root)
    starts = sorted(chain[0][0] for chain in chains(result, root))
    assert starts == ["Dockerfile:5", "server/start.sh:11"]


def test_cd_to_a_folder_below_the_start_moves_a_relative_config_path(tmp_path: Path) -> None:
    """A Procfile's `web: bin/run.sh` (run from the app's root) whose script does `cd fec`
    and then `gunicorn -c gunicorn.conf.py ...`: the config is fec/gunicorn.conf.py, linked,
    not a config-not-found (fecgov/fec-cms's bin/run.sh)."""
    script = "#!/bin/bash\nset -o errexit\ncd fec\n./manage.py migrate\ngunicorn -c gunicorn.conf.py fec.wsgi:application\n"
    root = write(
        tmp_path,
        {
            "Procfile": "web: bin/run.sh\n",
            "bin/run.sh": script,
            "fec/gunicorn.conf.py": "workers = 3\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["Procfile:1", "bin/run.sh:5", "fec/gunicorn.conf.py:1"], "gunicorn", 3)
    ]
    assert not [n for n in result.notes if n.kind == "config-not-found"]


#: A script that embeds gunicorn: gunicorn's "Custom Application" with an options dict.
EMBEDDED_GUNICORN = """from gunicorn.app.base import BaseApplication

from asgi import application


class Standalone(BaseApplication):
    def __init__(self, app, options=None):
        self.options = options or {}
        self.application = app
        super().__init__()

    def load_config(self):
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        return self.application


if __name__ == "__main__":
    Standalone(application, {"bind": "0.0.0.0:8000", "workers": 3}).run()
"""


def test_a_compose_command_that_cds_then_runs_an_embedded_gunicorn_script_is_its_launch(
    tmp_path: Path,
) -> None:
    """A service of an image whose ENTRYPOINT is `bash -c`, its command `python manage.py
    migrate && cd /app/src && watchmedo auto-restart -p '*.py' -- python3 ./gunicorn_run.py`
    (the tree mounted at /app): the `cd` moves the relative script path and watchmedo runs
    the command after its `--`, so the embedded gunicorn is the service's launch, behind
    the Caddy that proxies to the service (codalab/codabench)."""
    command = (
        "python manage.py migrate && cd /app/src && "
        "watchmedo auto-restart -p '*.py' --recursive -- python3 ./gunicorn_run.py"
    )
    compose = (
        "services:\n  django:\n    build: .\n"
        f'    command: ["{command}"]\n'
        "    volumes:\n      - .:/app\n"
        "  caddy:\n    image: caddy:2\n    volumes:\n      - ./Caddyfile:/etc/caddy/Caddyfile\n"
    )
    root = write(
        tmp_path,
        {
            "Dockerfile": 'FROM python:3.12\nWORKDIR /app\nENTRYPOINT ["/bin/bash", "-c"]\n',
            "compose.yaml": compose,
            "Caddyfile": ":80 {\n  reverse_proxy django:8000\n}\n",
            "src/gunicorn_run.py": EMBEDDED_GUNICORN,
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["compose.yaml:2", "Dockerfile:3", "src/gunicorn_run.py:21"], "gunicorn", 3)
    ]
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert [(at.file.name, at.line) for at in launch.fronts] == [("Caddyfile", 2)]
