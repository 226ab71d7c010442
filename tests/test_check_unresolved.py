"""A value check cannot know never refuses a file: an environment-dependent value is an
`unresolved-variable` coverage note and the rest of the file is judged; machine-dependent
validation never decides whether a file is read; valid files once refused are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.balancers import LOAD_BALANCERS
from servertune.machine import Machine

MACHINE = Machine(cores=4, cores_source="--cores", somaxconn=4096)


def check(tmp_path: Path, name: str, text: str) -> CheckResult:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return check_files([path], machine=MACHINE)


def kinds(result: CheckResult) -> list[tuple[str, int]]:
    """(coverage kind, line) of each note."""
    return [(n.kind, n.at.line) for n in result.notes]


#: (file name, text, the line of its unresolved-variable note)
UNRESOLVED = {
    "compose-required": (
        "compose.yaml",
        (
            "services:\n  web:\n    image: x\n"
            "    command: gunicorn -w ${WORKERS:?set WORKERS} --bind 0.0.0.0:8000 app:app\n"
        ),
        4,
    ),
    "nginx-envsubst-template": (
        "templates/default.conf.template",
        (
            "server {\n    listen 80;\n    location / {\n        proxy_pass http://app:8000;\n"
            "        proxy_read_timeout ${PROXY_READ_TIMEOUT};\n    }\n}\n"
        ),
        5,
    ),
    "supervisord-env": (
        "supervisord.conf",
        "[program:web]\ncommand=gunicorn --workers %(ENV_WORKERS)s --bind 0.0.0.0:8000 app:app\n",
        2,
    ),
    "uwsgi-env": (
        "uwsgi.ini",
        "[uwsgi]\nmodule = app:app\nhttp-socket = :8000\nprocesses = $(UWSGI_PROCESSES)\n",
        4,
    ),
}


@pytest.mark.parametrize("case", UNRESOLVED)
def test_environment_value_is_a_note_and_the_server_is_read(tmp_path: Path, case: str) -> None:
    """compose `${VAR:?}`, an envsubst placeholder in nginx, supervisord `%(ENV_X)s` and
    uWSGI `$(X)` unset here: one unresolved-variable note at its line; the file is read."""
    name, text, line = UNRESOLVED[case]
    result = check(tmp_path, name, text)
    assert not result.errors, result.errors
    assert ("unresolved-variable", line) in kinds(result)
    assert result.apps or result.nginx


def test_nginx_placeholder_leaves_the_default_to_be_judged(tmp_path: Path) -> None:
    """`proxy_read_timeout ${X}` is read as absent: the rest of the template still links to
    the app and its other numbers are judged (here the literal keepalive_timeout)."""
    template = (
        "server {\n    listen 80;\n    keepalive_timeout ${KEEPALIVE};\n"
        "    location / {\n        proxy_pass http://127.0.0.1:8000;\n"
        "        proxy_read_timeout ${PROXY_READ_TIMEOUT};\n    }\n}\n"
    )
    (tmp_path / "default.conf.template").write_text(template)
    (tmp_path / "gunicorn.conf.py").write_text("bind = '127.0.0.1:8000'\ntimeout = 90\n")
    result = check_files(
        [tmp_path / "default.conf.template", tmp_path / "gunicorn.conf.py"], machine=MACHINE
    )
    assert len(result.links) == 1
    # nginx's default 60 s read timeout is below gunicorn's 90 s: judged, not lost.
    assert "app-timeout-over-read-timeout" in {f.rule for f in result.findings}
    assert sorted(line for kind, line in kinds(result) if kind == "unresolved-variable") == [3, 6]


#: Valid files once refused: (file name, text)
VALID = {
    "uwsgi-log-format": (
        "uwsgi.ini",
        (
            "[uwsgi]\nmodule = app:app\nhttp-socket = :8000\n"
            'log-format = %(addr) - %(user) [%(ltime)] "%(method) %(uri) %(proto)" %(status) %(size)\n'
        ),
    ),
    "gunicorn-flags-after-app": (
        "start.sh",
        "#!/bin/sh\nexec gunicorn app:app --preload --threads=1 --bind 0.0.0.0:8000\n",
    ),
    "gunicorn-reload-extra-file-absent": (
        "start.sh",
        "#!/bin/sh\nexec gunicorn --bind 0.0.0.0:8000 --reload-extra-file /etc/app/x.yaml app:app\n",
    ),
    "supervisord-dotted-key": (
        "supervisord.conf",
        (
            "[rpcinterface:supervisor]\n"
            "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface\n\n"
            "[program:web]\ncommand=gunicorn --bind 0.0.0.0:8000 app:app\n"
        ),
    ),
    "gunicorn-logging-only": (
        "gunicorn.conf.py",
        "accesslog = '-'\nerrorlog = '-'\nloglevel = 'info'\n",
    ),
}


@pytest.mark.parametrize("case", VALID)
def test_valid_file_is_read(tmp_path: Path, case: str) -> None:
    """Each of these valid files is read (one app server), not refused."""
    name, text = VALID[case]
    result = check(tmp_path, name, text)
    assert not result.errors, result.errors
    assert len(result.apps) == 1


def test_uwsgi_listen_placeholder_is_a_finding_not_a_refusal(tmp_path: Path) -> None:
    """`listen = @(/proc/sys/net/core/somaxconn)`: uWSGI reads `listen` before expanding it (a
    queue of 0): a finding at its line, and the rest of the file judged."""
    result = check(
        tmp_path,
        "uwsgi.ini",
        "[uwsgi]\nmodule = app:app\nhttp-socket = :8000\nprocesses = 9\n"
        "listen = @(/proc/sys/net/core/somaxconn)\n",
    )
    assert not result.errors
    found = {(f.rule, f.at.line) for f in result.findings}
    assert ("listen-queue-zero", 5) in found
    assert ("workers-over-cores", 4) in found


#: Scripts and compose files from the corpus's causes, each read: (file name, text)
CORPUS_CAUSES = {
    "compose-literal-dollar": (
        "compose.yaml",
        (
            "services:\n  web:\n    image: x\n"
            "    command: gunicorn --bind 0.0.0.0:8000 app:app\n"
            "    healthcheck:\n      test: ['CMD-SHELL', 'test $(cat /tmp/ok) = 1']\n"
            "    labels:\n      - traefik.http.routers.web.rule=HostRegexp(`^.+$`)\n"
        ),
    ),
    "unknown-prefix": (
        "run_web.sh",
        "#!/bin/sh\n${CMD_PREFIX} gunicorn --bind 0.0.0.0:8000 app:app\n",
    ),
    "empty-option-variable": (
        "boot.sh",
        '#!/bin/sh\nadditional_args=""\nexec gunicorn ${additional_args} --bind 0.0.0.0:8000 app:app\n',
    ),
    "options-in-a-variable": (
        "run",
        (
            '#!/bin/bash\nexport EXTRA="--preload --threads=4 "\n'
            "exec gunicorn wsgi ${EXTRA} --bind 0.0.0.0:8000\n"
        ),
    ),
    "arithmetic-in-a-variable": (
        "start.sh",
        '#!/bin/bash\nW="${W:-$((2 * $(nproc)))}"\nexec gunicorn app:app --workers "${W}" -b :8000\n',
    ),
    "redirection-and-pipe": (
        "start.sh",
        "#!/bin/sh\nuvicorn app:app --host 0.0.0.0 --port 8080 2>&1 | tee server.log\n",
    ),
    "supervisord-fcgi-program-continued": (
        "server.conf",
        (
            "[fcgi-program:uvicorn]\nsocket=unix:///tmp/uvicorn.sock\n"
            "command=%(ENV_HOME)s/wait_for_deps.sh\n    python3 -m uvicorn\n        --fd 0\n"
            "        cvat.asgi:application\nautorestart=true\n"
        ),
    ),
    "wait-for-it-launcher": (
        "Procfile",
        "web: ./bin/wait-for-it.sh db:5432 -- gunicorn --bind 0.0.0.0:8000 app:app\n",
    ),
    "logging-only-gunicorn-conf": (
        "gunicorn.conf.py",
        "import logging.config\nCONFIG = {'version': 1}\nlogging.config.dictConfig(CONFIG)\n",
    ),
}


@pytest.mark.parametrize("case", CORPUS_CAUSES)
def test_corpus_cause_is_read(tmp_path: Path, case: str) -> None:
    """Each general cause the corpus showed is read, one app server, no error."""
    name, text = CORPUS_CAUSES[case]
    result = check(tmp_path, name, text)
    assert not result.errors, result.errors
    assert len(result.apps) == 1


def test_option_variable_is_split_into_fields(tmp_path: Path) -> None:
    """`gunicorn wsgi ${EXTRA}` with EXTRA="--preload --threads=4": the shell's field
    splitting, so gunicorn gets two flags (threads 4), not one unknown argument."""
    name, text = CORPUS_CAUSES["options-in-a-variable"]
    (app,) = check(tmp_path, name, text).apps
    assert app.threads.value == 4


def test_unknown_values_are_coverage_notes(tmp_path: Path) -> None:
    """An unknown prefix and `$((...))` in a variable are unresolved-variable notes."""
    for case in ("unknown-prefix", "arithmetic-in-a-variable"):
        name, text = CORPUS_CAUSES[case]
        result = check(tmp_path / case, name, text)
        assert "unresolved-variable" in {kind for kind, _ in kinds(result)}, case


def test_nginx_whole_directive_placeholder(tmp_path: Path) -> None:
    """A line that is only `${INCLUDES}` (envsubst renders whole directives there) is a note
    at its line, not a syntax error."""
    result = check(
        tmp_path,
        "site.conf.tmpl",
        "server {\n    listen 80;\n    location / { proxy_pass http://app:8000; }\n"
        "    ${EXTRA_DIRECTIVES}\n}\n",
    )
    assert not result.errors
    assert ("unresolved-variable", 4) in kinds(result)


def test_a_link_not_followed_is_said_so_not_starts_no_server(tmp_path: Path) -> None:
    """A CMD running a script the build context lacks, and a script running `exec "$SERVER"`
    set nowhere: `not-followed` at that line, never `starts-no-server`."""
    image = check(
        tmp_path / "a", "Dockerfile", 'FROM python:3.12\nCOPY . /app\nCMD ["/app/boot.sh"]\n'
    )
    assert kinds(image) == [("not-followed", 3)]
    script = check(tmp_path / "b", "start.sh", '#!/bin/sh\nmigrate\nexec "$APP_SERVER" "$@"\n')
    assert kinds(script) == [("not-followed", 3)]


@pytest.mark.parametrize(
    ("name", "text", "kept"),
    [
        (
            "web.conf",
            "[program:web]\ncommand = granian --interface wsgi --uds %(ENV_GRANIAN_SOCKET)s app:app\n",
            [],
        ),
        ("start.sh", "#!/bin/sh\nexec uvicorn --host 0.0.0.0 --port $APP_PORT app:app\n", []),
        (
            "run.sh",
            "#!/bin/sh\nexec gunicorn -b $BIND -b unix:/run/app.sock app:app\n",
            ["unix:/run/app.sock"],
        ),
    ],
)
def test_address_set_but_unknown_is_never_the_server_default(
    tmp_path: Path, name: str, text: str, kept: list[str]
) -> None:
    """An address option whose value is a variable no file sets (`--uds
    %(ENV_GRANIAN_SOCKET)s`, `--port $APP_PORT`, `-b $BIND`) leaves the address unknown,
    never the parser's default (granian's and uvicorn's 127.0.0.1:8000, gunicorn's); an
    address written beside it is kept."""
    (app,) = check(tmp_path, name, text).apps
    assert [s.value for s in app.sockets] == kept


def test_a_server_name_given_to_a_script_not_here_is_not_a_command_line(tmp_path: Path) -> None:
    """`command: /docker/run-fastapi.sh uvicorn` (a script of an image not built here, told
    which server to start) is not `uvicorn` run with no app: the compose file is read, not
    refused for a command line uvicorn would reject."""
    result = check(
        tmp_path,
        "docker-compose.yml",
        "services:\n  fastapi:\n    image: aurweb:latest\n"
        "    entrypoint: /docker/fastapi-entrypoint.sh\n"
        '    command: /docker/scripts/run-fastapi.sh "${FASTAPI_BACKEND:-uvicorn}"\n',
    )
    assert not result.errors
    assert not result.apps


def test_a_scripts_arguments_are_the_containers_not_a_programs_value(tmp_path: Path) -> None:
    """`exec gunicorn app:app "$@"` in a script read alone: the arguments it is run with are
    the container's words (its CMD or command), said so, not "a value the program computes"
    (what a Python launcher's `settings.PORT` is)."""
    result = check(tmp_path, "entrypoint.sh", '#!/bin/sh\nexec gunicorn -w 2 app:app "$@"\n')
    said = [n.message for n in result.notes if n.kind == "unresolved-variable"]
    assert said, result.notes
    assert all("the container's or platform's variables" in m for m in said), said


def test_a_gunicorn_setting_check_cannot_work_out_feeds_no_finding(tmp_path: Path) -> None:
    """`threads = int(getenv("MAX_THREADS", MAX_WORKERS * 2))` with MAX_WORKERS from a helper
    check cannot evaluate, beside `worker_class = "gthread"`, and a keepalive computed the
    same way under an ALB: each stays an unresolved-variable note, read as gunicorn's default
    for the launch graph, and neither gthread-one-thread nor lb-idle-over-app-keepalive fires
    on that default (as seen in bunkerity/bunkerweb src/ui/utils/gunicorn.conf.py)."""
    path = tmp_path / "gunicorn.conf.py"
    path.write_text(
        "from os import getenv\nfrom helpers import cpus\n"
        'MAX_WORKERS = int(getenv("MAX_WORKERS", max(cpus() - 1, 1)))\n'
        'worker_class = "gthread"\n'
        'threads = int(getenv("MAX_THREADS", MAX_WORKERS * 2))\n'
        'keepalive = int(getenv("KEEPALIVE", cpus() * 30))\n'
    )
    result = check_files([path], machine=MACHINE, lb=LOAD_BALANCERS["aws-alb"])
    assert not result.findings
    noted = {(n.kind, n.at.line) for n in result.notes}
    assert {("unresolved-variable", 5), ("unresolved-variable", 6)} <= noted


def test_a_command_line_option_only_the_container_expands_feeds_no_finding(
    tmp_path: Path,
) -> None:
    """`uvicorn ... --timeout-keep-alive $KEEPALIVE` under an ALB: the keep-alive is known
    only when the container runs, so no lb-idle-over-app-keepalive on uvicorn's default 5 s;
    the same command line without the option keeps the error (the default is what runs)."""
    line = "uvicorn main:app --host 0.0.0.0 --port 8000"
    alb = LOAD_BALANCERS["aws-alb"]
    for name, words, expected in (
        ("unknown", line + " --timeout-keep-alive $KEEPALIVE", []),
        ("default", line, ["lb-idle-over-app-keepalive"]),
    ):
        path = tmp_path / name / "Dockerfile"
        path.parent.mkdir()
        path.write_text(f'FROM python:3.12\nCMD ["sh", "-c", "exec {words}"]\n')
        found = check_files([path], machine=MACHINE, lb=alb).findings
        assert [f.rule for f in found] == expected, name


def test_compose_variable_set_nowhere_keeps_the_option_and_the_launch(tmp_path: Path) -> None:
    """`--timeout ${GUNICORN_TIMEOUT_S}` in a compose command, the variable set by no `.env`
    beside it and given no default (seen in opengisch/qfieldcloud, whose values are only in
    `.env.example`): compose would blank it, leaving `--timeout` without its argument, but the
    deployment's own `.env` sets it. It is an unresolved-variable note naming the example's
    value (an example, not used as the value), never an exit-2 refusal, and the launch stays."""
    (tmp_path / "Dockerfile").write_text('FROM python:3.12\nCMD ["gunicorn", "app:app"]\n')
    (tmp_path / ".env.example").write_text("# copy to .env\nGUNICORN_TIMEOUT_S=300\n")
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(
        "services:\n  app:\n    build: .\n    command: >\n"
        "      gunicorn app:app --bind 0.0.0.0:8000\n"
        "        --timeout ${GUNICORN_TIMEOUT_S}\n        --workers $GUNICORN_WORKERS\n"
    )
    result = check_files([compose], machine=MACHINE)
    assert not result.errors, result.errors
    assert [app.kind for app in result.apps] == ["gunicorn"]
    unset = [n.message for n in result.notes if "is not set here (no default" in n.message]
    assert len(unset) == 2, result.notes
    assert ".env.example:2 documents '300', an example, not used" in unset[0]
    assert any("'--timeout ${GUNICORN_TIMEOUT_S}'" in n.message for n in result.notes)
