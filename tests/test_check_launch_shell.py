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


def test_a_prefix_assignment_is_expanded_before_the_command_reads_it(tmp_path: Path) -> None:
    """`KEEP_WORKERS=${KEEP_WORKERS:-2}` then `KEEP_WORKERS=$KEEP_WORKERS gunicorn --workers
    $KEEP_WORKERS ...`: the prefix's value is the shell's expansion (2), so gunicorn has 2
    workers; the file is read, never refused for `'$KEEP_WORKERS'` as a number. A prefix
    whose value no file sets leaves the name unknown, said as a note."""
    write(
        tmp_path,
        {
            "start.sh": "#!/bin/bash\nKEEP_WORKERS=${KEEP_WORKERS:-2}\n"
            "PYTHONPATH=$APP_PATH \\\nKEEP_WORKERS=$KEEP_WORKERS \\\n"
            "exec gunicorn --bind 0.0.0.0:8000 --workers $KEEP_WORKERS app:app\n",
            "other.sh": "#!/bin/bash\nWORKERS=$UNSET_HERE exec gunicorn --workers $WORKERS app:app\n",
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    workers = {a.file.name: a.workers for a in result.apps}
    assert workers["start.sh"].value == 2
    assert workers["other.sh"].default


def test_a_command_substitution_is_one_word_known_only_when_it_runs(tmp_path: Path) -> None:
    """`--workers $(nproc --all || echo 4)`: the shell runs the `||` inside the substitution,
    so the line is one command and the option one value, known only when it runs (an
    unresolved note at its line); the file is read, never refused for `--all`."""
    write(
        tmp_path,
        {
            "start.sh": "#!/bin/bash\nset -e\n"
            "exec uvicorn app:app --host 0.0.0.0 --workers $(nproc --all || echo 4) "
            "--log-level=info\n",
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    (app,) = result.apps
    assert app.kind == "uvicorn"
    assert app.workers.default
    unresolved = [n for n in result.notes if n.kind == "unresolved-variable"]
    assert any("$(nproc --all || echo 4)" in n.message and n.at.line == 3 for n in unresolved)


def test_su_command_long_form_and_a_folder_variable_before_the_server(tmp_path: Path) -> None:
    """`su app --command "${BIN_DIR}gunicorn --bind ... --workers 3 app.wsgi"` (also
    `--command=...`): su's long option runs the string as `-c` does, and `${BIN_DIR}gunicorn`
    is gunicorn whatever folder BIN_DIR names; `pyenv exec python3 -m gunicorn` is gunicorn
    under pyenv's Python."""
    write(
        tmp_path,
        {
            "run_frontend.sh": '#!/bin/sh\nsu app --command "${BIN_DIR}gunicorn --bind '
            '0.0.0.0:8000 --workers 3 app.wsgi"\n',
            "run_equals.sh": "#!/bin/sh\nexec su app '--command=${BIN_DIR}gunicorn --workers 2 "
            "app.wsgi'\n",
            "run_pyenv.sh": "#!/bin/sh\nexec pyenv exec python3 -m gunicorn --workers 4 app.wsgi\n",
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    workers = {a.file.name: (a.kind, a.workers.value) for a in result.apps}
    assert workers == {
        "run_frontend.sh": ("gunicorn", 3),
        "run_equals.sh": ("gunicorn", 2),
        "run_pyenv.sh": ("gunicorn", 4),
    }


def test_a_hash_inside_a_word_is_no_comment(tmp_path: Path) -> None:
    """`gunicorn -k egg:meinheld#gunicorn_worker -c "$CONF" ${MODULE#pkg.}`: a `#` inside a
    word is the word's, as sh reads it, so `-c "$CONF"` after it is read (the config's 5
    workers); a `#` that begins a word still starts a comment."""
    write(
        tmp_path,
        {
            "start.sh": "#!/bin/sh\nCONF=/app/gunicorn.conf.py\nMODULE=pkg.app:app\n"
            'exec gunicorn -k egg:meinheld#gunicorn_worker -c "$CONF" ${MODULE#pkg.} '
            "# the worker class\n",
            "gunicorn.conf.py": "workers = 5\nbind = '0.0.0.0:8000'\n",
            "Dockerfile": "FROM python:3.12-slim\nCOPY gunicorn.conf.py /app/gunicorn.conf.py\n"
            'COPY start.sh /start.sh\nCMD ["/start.sh"]\n',
        },
    )
    result = check_folder(tmp_path)
    assert not result.errors
    assert [c for c, _, _ in chains(result, tmp_path)] == [
        ["Dockerfile:4", "start.sh:4", "gunicorn.conf.py:1"]
    ]
    assert {a.workers.value for a in result.apps} == {5}


def test_a_wait_for_wrapper_not_here_runs_the_command_after_its_double_dash(
    tmp_path: Path,
) -> None:
    """`command: ["./bin/docker-wait.sh", "--timeout=0", "db:5432", "--", "./bin/run.sh"]`
    with the waiter not among the files: it runs what follows `--` once the host answers
    (wait-for-it's usage), so the chain goes on to run.sh and its gunicorn; a script not here
    without `--`, or not named for waiting, is still not followed."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nCOPY . /app\nWORKDIR /app\n",
            "bin/run.sh": "#!/bin/sh\nexec gunicorn -w 3 -b 0.0.0.0:8000 app:app\n",
            "compose.yaml": "services:\n  web:\n    build: .\n    command: "
            '["./bin/docker-wait.sh", "--timeout=0", "db:5432", "--", "./bin/run.sh"]\n'
            "  other:\n    build: .\n    command: "
            '["./bin/prepare.sh", "db:5432", "--", "./bin/run.sh"]\n',
        },
    )
    result = check_folder(tmp_path)
    assert [c for c, _, _ in chains(result, tmp_path)] == [["compose.yaml:2", "bin/run.sh:2"]]


_MAKEFILE = """\
NUM_THREADS ?= 2
collectstatic:
\tpython manage.py collectstatic --noinput

prodserver: NUM_PROCS:=3
prodserver: collectstatic
\tcd app/ && gunicorn app.wsgi:application --workers=${NUM_PROCS} --threads=$(NUM_THREADS) \\
\t\t--bind=0.0.0.0:8081 || sleep infinity

devserver:
\tpython manage.py runserver 0.0.0.0:8081
"""


def test_make_target_runs_its_recipe_with_the_makefiles_variables(tmp_path: Path) -> None:
    """`ENTRYPOINT ["make", "prodserver"]`: make runs the target's recipe line (its own
    `sh -c`) after the prerequisite, with the target's `NUM_PROCS:=3` and the Makefile's
    `NUM_THREADS ?= 2`: gunicorn 3 x 2 on :8081, the recipe's line in the chain; `make
    devserver` starts no server check reads."""
    write(
        tmp_path,
        {
            "Makefile": _MAKEFILE,
            "Dockerfile": "FROM python:3.12-slim\nCOPY . /srv/\nWORKDIR /srv\n"
            'ENTRYPOINT ["make", "prodserver"]\n',
            "Dockerfile.dev": "FROM python:3.12-slim\nCOPY . /srv/\nWORKDIR /srv\n"
            'ENTRYPOINT ["make", "devserver"]\n',
        },
    )
    result = check_folder(tmp_path)
    assert chains(result, tmp_path) == [(["Dockerfile:4", "Makefile:7"], "gunicorn", 3)]
    assert [a.threads.value for a in result.apps] == [2]


def test_a_variable_on_makes_command_line_overrides_the_makefiles(tmp_path: Path) -> None:
    """compose `command: make serve PORT=9000` over a Makefile's `PORT ?= 8000` and a
    target's `serve: WORKERS := 2` given `WORKERS=5` too: make's command-line variables
    override the Makefile's assignments (GNU make's "Overriding Variables"), so gunicorn
    binds :9000 with 5 workers; the image's own `CMD make serve` keeps :8000 and 2."""
    write(
        tmp_path,
        {
            "Makefile": "PORT ?= 8000\nserve: WORKERS := 2\nserve:\n"
            "\tgunicorn app:app -w $(WORKERS) -b 0.0.0.0:$(PORT)\n",
            "Dockerfile": "FROM python:3.12-slim\nCOPY . /srv/\nWORKDIR /srv\nCMD make serve\n",
            "compose.yaml": "services:\n  web:\n    build: .\n"
            "    command: make serve PORT=9000 WORKERS=5\n",
        },
    )
    result = check_folder(tmp_path)
    assert sorted((a.workers.value, [s.value for s in a.sockets]) for a in result.apps) == [
        (2, ["0.0.0.0:8000"]),
        (5, ["0.0.0.0:9000"]),
    ]


def test_a_scripts_positional_parameter_is_the_commands_word(tmp_path: Path) -> None:
    """`ENTRYPOINT ["./entrypoint"]` with `CMD ["0.0.0.0:80"]`, the script running `gunicorn
    --bind $1 ...`: `$1` is the CMD's word, so gunicorn binds 0.0.0.0:80 (no unresolved
    bind)."""
    write(
        tmp_path,
        {
            "entrypoint": "#!/usr/bin/env bash\nset -e\n"
            "exec gunicorn app:app --bind $1 --workers 2\n",
            "Dockerfile": "FROM python:3.12-slim\nWORKDIR /srv\nCOPY . .\n"
            'ENTRYPOINT ["./entrypoint"]\nCMD ["0.0.0.0:80"]\n',
        },
    )
    result = check_folder(tmp_path)
    (app,) = result.apps
    assert [s.value for s in app.sockets] == ["0.0.0.0:80"]


_DISPATCH_ON_FIRST = """\
#!/bin/bash
set -euo pipefail
if [[ "$1" = 'webserver' ]]; then
    uvicorn app:app --reload --host 0.0.0.0
elif [[ "$1" = 'webserver-prod' ]]; then
    uvicorn app:app --host 0.0.0.0 --workers 4
else
    exec "$@"
fi
"""


def test_a_branch_on_the_first_argument_no_file_gives_is_named_as_assumed(
    tmp_path: Path,
) -> None:
    """An image whose ENTRYPOINT dispatches on "$1" and which sets no CMD (the deployment
    passes `webserver-prod`, in no file read): the server read is the `elif` branch's, and
    the launch graph names that branch as assumed, in text and JSON; with a compose
    `command: webserver-prod` the argument is known and nothing is assumed."""
    from servertune.check.graph import describe, launch_json, launches

    files = {
        "Dockerfile": (
            'FROM python:3.12\nCOPY entrypoint.sh /entrypoint.sh\nENTRYPOINT ["/entrypoint.sh"]\n'
        ),
        "entrypoint.sh": _DISPATCH_ON_FIRST,
    }
    root = write(tmp_path / "alone", files)
    result = check_folder(root)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert "entrypoint.sh:6 (branch assumed: line 5 `elif [[ \"$1\" = 'webserver-prod' ]]`)" in (
        describe(launch)
    )
    assert launch_json(launch)["assumed_branch"]["line"] == 5
    root = write(
        tmp_path / "given",
        {**files, "compose.yaml": "services:\n  web:\n    build: .\n    command: webserver-prod\n"},
    )
    result = check_folder(root)
    told = [
        launch
        for launch in launches(result.apps, result.links, result.balancer_links)
        if launch.app.container is not None
    ]
    assert [describe(launch).count("branch assumed") for launch in told] == [0]
    assert [launch.app.workers.value for launch in told] == [4]


_SERVER_OR_TESTS = """\
#!/bin/sh
case "$1" in
    server)
        exec gunicorn --bind 0.0.0.0:5000 app.wsgi
        ;;
    test_functional)
        gunicorn --paste ./tests.ini &
        SERVER_PID=$!
        kill $SERVER_PID
        ;;
esac
"""


def test_the_images_own_cmd_picks_the_arm_among_several_servers(tmp_path: Path) -> None:
    """`ENTRYPOINT ["dumb-init", "/app/entrypoint.sh"]` with `CMD ["server"]`: of the script's
    two gunicorn lines the `server)` arm's is the image's run (not the last, a test arm's
    background gunicorn), and the script read alone is that run too, so no finding is made
    about the test arm's `&`."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nCOPY entrypoint.sh /app/entrypoint.sh\n"
                'ENTRYPOINT ["/usr/bin/dumb-init", "/app/entrypoint.sh"]\nCMD ["server"]\n'
            ),
            "entrypoint.sh": _SERVER_OR_TESTS,
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:3", "entrypoint.sh:4"], "gunicorn", 1)]
    assert not [f for f in result.findings if f.rule == "background-server-without-trap"]


def test_an_assumed_case_arm_written_with_a_space_before_its_paren_is_named(
    tmp_path: Path,
) -> None:
    """`"uwsgi" )` is a `case` arm as `uwsgi)` is: the graph names that arm, not the
    `case` line, as the branch it assumed."""
    from servertune.check.graph import describe, launches

    root = write(
        tmp_path,
        {
            "Dockerfile": (
                'FROM python:3.12\nCOPY entrypoint.sh /entrypoint\nENTRYPOINT ["/entrypoint"]\n'
            ),
            "entrypoint.sh": (
                '#!/bin/bash\ncase "$1" in\n  "uwsgi" )\n    exec uwsgi --http :8000 --module app\n'
                '    ;;\n  * )\n    exec "$@"\n    ;;\nesac\n'
            ),
        },
    )
    result = check_folder(root)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert '(branch assumed: line 3 `"uwsgi" )`)' in describe(launch)


def test_an_entrypoint_runs_the_script_of_its_command_folder_its_first_argument_names(
    tmp_path: Path,
) -> None:
    """`command="$1"; shift; exec "/container/commands/$command" "$@"` with `CMD ["web"]`:
    the entrypoint runs /container/commands/web, the script of its command folder the CMD
    word names (the dispatcher seen in agdsn/pycroft's base image), so the chain goes from the
    ENTRYPOINT through the entrypoint to that script's gunicorn, never to the folder's other
    scripts."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nCOPY . /\n"
            'ENTRYPOINT ["/container/entrypoint"]\nCMD ["web"]\n',
            "container/entrypoint": '#!/bin/bash\nset -e\ncommand="$1"\nshift\n'
            'exec "/container/commands/$command" "$@"\n',
            "container/commands/web": "#!/bin/bash\nexec gunicorn -w 3 -b 0.0.0.0:80 app:app\n",
            "container/commands/api": "#!/bin/bash\nexec gunicorn -w 5 -b 0.0.0.0:81 api:app\n",
        },
    )
    result = check_folder(root)
    assert (
        ["Dockerfile:3", "container/entrypoint:5", "container/commands/web:2"],
        "gunicorn",
        3,
    ) in chains(result, root)
    assert not [c for c in chains(result, root) if "container/entrypoint:5" in c[0] and c[2] == 5]


def test_a_shell_running_the_script_an_env_path_names_follows_it_to_the_copy_there(
    tmp_path: Path,
) -> None:
    """`ENV START_PATH /start-gunicorn.sh`, `COPY server/start-gunicorn.sh $START_PATH` and an
    entrypoint running `/bin/bash "$START_PATH"`: the shell runs the script the variable names,
    the file the COPY put at that path (seen in publichealthengland's dashboard API), so the
    chain goes from the ENTRYPOINT through the entrypoint to its gunicorn. The bash is a child
    of the entrypoint's shell, and the fix shown keeps the variable expanding."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nENV START_PATH /start-gunicorn.sh\n"
            "COPY server/start-gunicorn.sh $START_PATH\n"
            "COPY server/entrypoint.sh /entrypoint.sh\n"
            'ENTRYPOINT ["/bin/sh", "/entrypoint.sh"]\n',
            "server/entrypoint.sh": '#!/bin/sh\nset -e\n/bin/bash "$START_PATH"\n',
            "server/start-gunicorn.sh": "#!/bin/bash\nexec gunicorn -w 3 -b 0.0.0.0:80 app:app\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["Dockerfile:5", "server/entrypoint.sh:3", "server/start-gunicorn.sh:2"], "gunicorn", 3)
    ]
    (finding,) = [f for f in result.findings if f.rule == "entrypoint-without-exec"]
    assert finding.fix == 'exec /bin/bash "$START_PATH"'
