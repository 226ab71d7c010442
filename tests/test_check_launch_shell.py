"""The launch chain through shell forms: nested `bash -c` strings and wait wrappers that run
their arguments from a variable (`cmd="$@"; exec $cmd`), `if`/`elif` on the script's first
argument, a shell-form ENTRYPOINT that reads its CMD as `$0 $@`, a CMD word that is the
entrypoint script's argument behind `tini -- bash`, and two images running one config. Each
fixture is a small repository written here for the cause it pins."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

WAIT_FOR_DB = """#!/bin/bash
set -e
host="$1"
shift
cmd="$@"
until pg_isready -h "$host"; do sleep 1; done
exec $cmd
"""

WAIT_FOR_IT = """#!/usr/bin/env bash
while [[ $# -gt 0 ]]; do
    case "$1" in
        -t)
        TIMEOUT="$2"
        shift 2
        ;;
        --)
        shift
        CLI="$@"
        break
        ;;
        *)
        HOST="$1"
        shift 1
        ;;
    esac
done
wait_for
if [[ $CLI != "" ]]; then
    exec $CLI
else
    exit 1
fi
"""


def test_nested_bash_c_through_wait_wrappers_reaches_the_start_script(tmp_path: Path) -> None:
    """compose `bash -c "... && bash -c \\"wait-for-db.sh db wait-for-it.sh -t 0 broker:6379
    -- start.sh\\""`: each wrapper runs its arguments (`cmd="$@"; exec $cmd`, wait-for-it's
    `CLI="$@"` after `--`), so the chain reaches start.sh's gunicorn; the image's files come
    from a stage built FROM the one that declares `ARG WORKDIR` (inherited, as Docker does)."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12 AS common\n"
                "ARG WORKDIR=/srv/app\n"
                "WORKDIR $WORKDIR\n"
                "FROM common AS build\n"
                "COPY . ./\n"
                "FROM common AS app\n"
                "COPY --from=build $WORKDIR ./\n"
            ),
            "compose.yaml": (
                "services:\n"
                "  web:\n"
                "    build: .\n"
                '    entrypoint: /bin/bash -c "chmod +x /srv/app/*.sh && /bin/bash -c '
                '\\"/srv/app/wait-for-db.sh db /srv/app/wait-for-it.sh -t 0 broker:6379 '
                '-- /srv/app/start.sh\\""\n'
            ),
            "wait-for-db.sh": WAIT_FOR_DB,
            "wait-for-it.sh": WAIT_FOR_IT,
            "start.sh": "#!/bin/bash\nexec gunicorn app.wsgi --workers 5 --bind 0.0.0.0:8000\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["compose.yaml:2", "wait-for-db.sh:7", "start.sh:2"], "gunicorn", 5)
    ]
    # The wrappers' `exec $cmd` / `exec $CLI` are their caller's arguments, not an unknown
    # program: no "not followed" note for them.
    assert not [n for n in result.notes if n.kind == "not-followed"]


def test_wait_wrapper_alone_runs_its_arguments_not_an_unknown_program(tmp_path: Path) -> None:
    """wait-for-db.sh checked alone: `cmd="$@"` then `exec $cmd` starts whatever it is given
    (as `exec "$@"` does), never "a program named by a variable no file read sets"."""
    root = write(tmp_path, {"wait-for-db.sh": WAIT_FOR_DB})
    result = check_folder(root)
    (note,) = result.notes
    assert note.kind == "starts-no-server"
    assert "it starts whatever command it is given" in note.message


RUN_BACKEND = """#!/bin/bash
alembic upgrade head || exit 1
if [ "$1" == "uvicorn" ] || [ "$1" == "" ]; then
    exec uvicorn --host 0.0.0.0 --port 8000 --workers 3 shop.asgi:app
elif [ "$1" == "gunicorn" ]; then
    exec gunicorn -w 7 -k uvicorn.workers.UvicornWorker shop.asgi:app
else
    echo "unknown backend" >&2
    exit 1
fi
"""


def test_if_elif_on_the_first_argument_runs_the_branch_the_command_selects(
    tmp_path: Path,
) -> None:
    """compose `command: run.sh "${BACKEND}"` with BACKEND=gunicorn in its .env: the script's
    `if [ "$1" == "uvicorn" ] ... elif [ "$1" == "gunicorn" ]` runs the gunicorn branch; with
    "uvicorn", the uvicorn one (the first server line is not taken for both)."""
    files = {
        "Dockerfile": "FROM python:3.12\nCOPY run.sh /run.sh\n",
        "compose.yaml": ('services:\n  api:\n    build: .\n    command: /run.sh "${BACKEND}"\n'),
        "run.sh": RUN_BACKEND,
    }
    for backend, server, workers, line in (
        ("gunicorn", "gunicorn", 7, 6),
        ("uvicorn", "uvicorn", 3, 4),
    ):
        root = tmp_path / backend
        root.mkdir()
        write(root, {**files, ".env": f'BACKEND="{backend}"\n'})
        launch = [c for c in chains(check_folder(root), root) if c[0][0] == "compose.yaml:2"]
        assert launch == [(["compose.yaml:2", f"run.sh:{line}"], server, workers)]


def test_if_on_another_test_reads_every_branch_as_before(tmp_path: Path) -> None:
    """A test that is not "$1" against a word (`[ -f /etc/prod ]`) decides nothing: both
    branches are read, as without the selection (the last server line, with a note that which
    runs is decided at run time)."""
    root = write(
        tmp_path,
        {
            "Dockerfile": 'FROM python:3.12\nCOPY run.sh /run.sh\nENTRYPOINT ["/run.sh"]\nCMD ["web"]\n',
            "compose.yaml": "services:\n  api:\n    build: .\n    command: web\n",
            "run.sh": (
                "#!/bin/sh\n"
                "if [ -f /etc/prod ]; then\n"
                "    exec gunicorn -w 2 shop.wsgi\n"
                "else\n"
                "    exec gunicorn -w 9 shop.wsgi\n"
                "fi\n"
            ),
        },
    )
    result = check_folder(root)
    launch = [c for c in chains(result, root) if c[0][0] == "compose.yaml:2"]
    assert launch == [(["compose.yaml:2", "Dockerfile:3", "run.sh:5"], "gunicorn", 9)]
    assert [n.kind for n in result.notes if n.at.file.name == "run.sh"] == ["server-chosen"]


def test_shell_form_entrypoint_gets_the_cmd_as_dollar_0_and_dollar_at(tmp_path: Path) -> None:
    """`ENTRYPOINT /docker-entrypoint.sh $0 $@` + `CMD ["gunicorn", "--config", ...]`: Docker
    runs `/bin/sh -c TEXT gunicorn --config ...`, so the script gets the CMD as its arguments
    and its `exec "${PRE[@]}" "$@"` runs gunicorn with the config, linked in one chain."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\n"
                "COPY . /opt/shop\n"
                "COPY docker/entrypoint.sh /docker-entrypoint.sh\n"
                "ENTRYPOINT /docker-entrypoint.sh $0 $@\n"
                'CMD ["gunicorn", "--config", "/opt/shop/gunicorn.py", "shop.app:api"]\n'
            ),
            "docker/entrypoint.sh": (
                "#!/bin/bash\n"
                "PRE=()\n"
                'if [[ "$1" == "shop-cli" ]]\n'
                "then\n"
                "  PRE=( uv run )\n"
                "fi\n"
                'exec "${PRE[@]}" "$@"\n'
            ),
            "gunicorn.py": "workers = 6\nbind = '0.0.0.0:5500'\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["Dockerfile:4", "docker/entrypoint.sh:7", "gunicorn.py:1"], "gunicorn", 6)
    ]


def test_cmd_word_after_tini_bash_entrypoint_is_the_scripts_argument(tmp_path: Path) -> None:
    """`ENTRYPOINT ["tini", "--", "/bin/bash", "/app/entrypoint.sh"]` + `CMD ["gunicorn"]`:
    `gunicorn` is the argument the script's `case "$1"` dispatches on, whose arm starts
    gunicorn with its options; never a gunicorn started with no options by the Dockerfile."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\n"
                "COPY entrypoint.sh /app/entrypoint.sh\n"
                'ENTRYPOINT ["/usr/bin/tini", "--", "/bin/bash", "/app/entrypoint.sh"]\n'
                'CMD ["gunicorn"]\n'
            ),
            "entrypoint.sh": (
                "#!/bin/bash\n"
                'case "$1" in\n'
                "  gunicorn)\n"
                "    exec gunicorn -w 4 --bind 0.0.0.0:8000 shop.asgi:app\n"
                "    ;;\n"
                "  *)\n"
                '    exec "$@"\n'
                "    ;;\n"
                "esac\n"
            ),
        },
    )
    assert chains(check_folder(root), root) == [
        (["Dockerfile:3", "entrypoint.sh:4"], "gunicorn", 4)
    ]


def test_two_images_running_one_config_are_two_launches(tmp_path: Path) -> None:
    """Two Dockerfiles whose entrypoint runs `uwsgi "$@"` with their own CMD, on the same
    wsgi.ini: two processes, both in the launch graph (not one reading dropped as a repeat)."""
    entrypoint = '#!/bin/sh\nflask db upgrade\nexec uwsgi "$@"\n'
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nWORKDIR /srv\nCOPY backend/ /srv/\n"
                'ENTRYPOINT ["./entrypoint.sh"]\nCMD ["--ini", "wsgi.ini", "--gevent", "200"]\n'
            ),
            "backend/Dockerfile": (
                "FROM python:3.12\nWORKDIR /srv\nCOPY . /srv/\n"
                'CMD ["wsgi.ini", "--gevent", "200"]\nENTRYPOINT ["./entrypoint.sh"]\n'
            ),
            "backend/entrypoint.sh": entrypoint,
            "backend/wsgi.ini": "[uwsgi]\nmodule = wsgi:app\nhttp-socket = :5000\nprocesses = 3\n",
        },
    )
    found = sorted(c for c in chains(check_folder(root), root) if "Dockerfile" in c[0][0])
    assert found == [
        (["Dockerfile:4", "backend/entrypoint.sh:3", "backend/wsgi.ini:3"], "uwsgi", 3),
        (["backend/Dockerfile:4", "backend/entrypoint.sh:3", "backend/wsgi.ini:3"], "uwsgi", 3),
    ]


UTILS = """init_conf() {
\techo "configuring"
}

start_uwsgi() {
\tenvsubst <uwsgi.conf.ini >uwsgi.ini || true
\tuwsgi --ini uwsgi.ini --processes 4
}
"""

INIT_COMMAND = """#!/bin/sh
set -e
source utils.sh

init_conf

if [ "$MODULE_NAME" = 'dashboard' ]; then
\tpython manage.py migrate --noinput
\tstart_uwsgi
elif [ "$MODULE_NAME" = 'freeradius' ]; then
\tsource docker-entrypoint.sh
elif [ "$MODULE_NAME" = 'nginx' ]; then
\texec nginx -g 'daemon off;'
else
\tstart_uwsgi
fi
"""


def module_images(root: Path) -> Path:
    """One script for every image, which picks its part by the image's MODULE_NAME."""
    image = (
        "FROM python:3.12\nWORKDIR /opt/app\n"
        "COPY common/init_command.sh common/utils.sh /opt/app/\n"
        'CMD ["sh", "init_command.sh"]\nENV MODULE_NAME={module}\n'
    )
    return write(
        root,
        {
            "dashboard/Dockerfile": image.format(module="dashboard"),
            "nginx/Dockerfile": image.format(module="nginx"),
            "common/init_command.sh": INIT_COMMAND,
            "common/utils.sh": UTILS,
        },
    )


def test_function_of_a_sourced_file_starts_the_server_where_it_is_called(
    tmp_path: Path,
) -> None:
    """`source utils.sh` then `start_uwsgi`: the function utils.sh defines runs uwsgi (without
    `exec`: a fault said at its line in utils.sh); the calling line is in the chain, and the
    image whose MODULE_NAME picks that branch starts it."""
    root = module_images(tmp_path)
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n  dashboard:\n    build:\n      context: .\n"
        "      dockerfile: dashboard/Dockerfile\n"
    )
    result = check_folder(root)
    found = [c for c in chains(result, root) if c[0][0].startswith("docker-compose")]
    assert found == [
        (
            [
                "docker-compose.yml:2",
                "dashboard/Dockerfile:4",
                "common/init_command.sh:9",
                "common/utils.sh:7",
            ],
            "uwsgi",
            4,
        )
    ]
    (fault,) = [f for f in result.findings if f.rule == "entrypoint-without-exec"]
    assert (fault.at.file.name, fault.at.line) == ("utils.sh", 7)


def test_test_on_the_images_variable_keeps_other_images_out_of_the_branch(
    tmp_path: Path,
) -> None:
    """The nginx image sets MODULE_NAME=nginx, which the script never assigns: its
    `if [ "$MODULE_NAME" = 'dashboard' ]` and final `else` (after a `source` of a file not
    here, but in a branch not taken) do not run, so the nginx image starts no uwsgi (a false
    link would be worse than none)."""
    root = module_images(tmp_path)
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n  nginx:\n    build:\n      context: .\n      dockerfile: nginx/Dockerfile\n"
    )
    result = check_folder(root)
    assert not [c for c in chains(result, root) if c[0][0].startswith("docker-compose")]
    assert not [c for c in chains(result, root) if c[0][0].startswith("nginx/")]


def test_supervisord_config_not_here_is_not_followed_not_serverless(tmp_path: Path) -> None:
    """An entrypoint that ends in `exec supervisord -c /srv/conf/supervisord.conf` (a file
    rendered when the container starts, not in the repository): the image's note says "not
    followed" and names the file, never that it starts no server."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nCOPY entrypoint.sh /entrypoint.sh\n"
                'ENTRYPOINT ["dumb-init", "--", "/entrypoint.sh"]\nCMD ["registry"]\n'
            ),
            "entrypoint.sh": (
                "#!/bin/bash\n"
                'case "$1" in\n'
                "  registry)\n"
                "    exec supervisord -c /srv/conf/supervisord.conf\n"
                "    ;;\n"
                "  *)\n"
                '    exec "$@"\n'
                "    ;;\n"
                "esac\n"
            ),
        },
    )
    result = check_folder(root)
    assert not [
        n for n in result.notes if n.kind == "starts-no-server" and n.at.file.name == "Dockerfile"
    ]
    assert any(
        n.kind == "not-followed" and "supervisord -c /srv/conf/supervisord.conf" in n.message
        for n in result.notes
    )


DISPATCHER = """#!/bin/bash
set -e
run_server(){
  exec gunicorn --bind 0.0.0.0:8000 --workers 3 app:app
}
start_worker(){
  exec celery -A app worker "$@"
}
case "$1" in
  gunicorn)
    run_server "${@:2}"
  ;;
  celery-worker)
    start_worker -Q default "${@:2}"
  ;;
  *)
    exec "$@"
  ;;
esac
"""


def test_a_worker_service_runs_its_own_arm_not_the_servers_function(tmp_path: Path) -> None:
    """An entrypoint dispatching on "$1" to functions written `name(){` (no space): the image's
    `CMD ["gunicorn"]` runs the server's function, a compose service's `command:
    celery-worker` runs the worker's arm only (the shell runs the first arm that matches, not
    the `*)` after it), so the worker is no second gunicorn."""
    root = write(
        tmp_path,
        {
            "entry.sh": DISPATCHER,
            "Dockerfile": "FROM python:3.12\nCOPY entry.sh /entry.sh\n"
            'ENTRYPOINT ["/usr/bin/tini", "--", "bash", "/entry.sh"]\nCMD ["gunicorn"]\n',
            "compose.yaml": "services:\n  web:\n    build: .\n"
            "  worker:\n    build: .\n    command: celery-worker\n",
        },
    )
    assert chains(check_folder(root), root) == [
        (["compose.yaml:2", "Dockerfile:3", "entry.sh:4"], "gunicorn", 3)
    ]
