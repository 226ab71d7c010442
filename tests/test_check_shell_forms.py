"""The shell forms and wrappers a launch goes through, read as the shell and supervisord run
them: `set -- ...` then `"$@"`, a `case` arm or an `if` on one line with its command, a
function's `local` variable, a command held in a variable (`exec $CMD`), the interpreter's own
options before `python -m uvicorn`, and supervisord's `[include]` globs (an absolute one
through the image that copies the config). Fixture: tests/data/repos/shell-forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.graph import Launch, launches
from servertune.machine import Machine

ROOT = Path(__file__).parent / "data" / "repos" / "shell-forms"
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


@pytest.mark.parametrize(
    ("script", "server", "workers", "threads"),
    [
        ("set-command.sh", "gunicorn", 3, 1),
        ("set-arguments.sh", "gunicorn", 4, 1),
        ("case-one-line.sh", "gunicorn", 3, 1),
        ("if-one-line.sh", "gunicorn", 2, 1),
        ("function-local.sh", "gunicorn", 5, 1),
        ("command-variable.sh", "gunicorn", 3, 2),
        ("python-options.sh", "uvicorn", 2, 1),
        ("function-output.sh", "gunicorn", 3, 2),
    ],
)
def test_shell_form_starts_the_server_with_its_options(
    script: str, server: str, workers: int, threads: int
) -> None:
    """Each script's one server, with the options its form passes, and no `exec` fault: every
    one of them execs the server."""
    result = check_files([ROOT / script], machine=MACHINE, env={})
    (app,) = result.apps
    assert (app.kind, app.workers.value, app.threads.value) == (server, workers, threads)
    assert not [f for f in result.findings if f.rule.startswith("entrypoint-without-exec")]
    assert not [n for n in result.notes if n.kind in ("starts-no-server", "not-followed")]


def test_positional_parameters_set_by_the_script_keep_their_lines() -> None:
    """`set -- --workers "$WORKERS" --timeout 40` then `exec gunicorn "$@" ...`: the
    script's variable expanded, each option at the `set --` line."""
    (app,) = check_files([ROOT / "set-arguments.sh"], machine=MACHINE, env={}).apps
    assert app.request_timeout is not None
    assert (app.request_timeout.value, app.request_timeout.at.line) == (40, 3)
    assert app.workers.at.line == 3


def test_supervisord_include_glob_through_the_image_is_in_the_chain() -> None:
    """`COPY conf/ /etc/app/` and `[include] files = /etc/app/conf.d/*.conf`: the included
    conf/conf.d/web.conf's program is the image's gunicorn, its chain the Dockerfile, the
    include line and the program's line; the worker's file adds no server."""
    root = ROOT / "supervisord-include"
    walk = discover(root)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert [(at.file.relative_to(root).as_posix(), at.line) for at in launch.chain] == [
        ("Dockerfile", 3),
        ("conf/supervisord.conf", 5),
        ("conf/conf.d/web.conf", 2),
    ]
    assert launch.app.workers.value == 3
    assert not [
        n for n in result.notes if n.kind == "starts-no-server" and "Dockerfile" in str(n.at.file)
    ]


def _one(name: str) -> CheckResult:
    return check_files([ROOT / name], machine=MACHINE, env={})


def _folder(name: str) -> CheckResult:
    root = ROOT / name
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})


def test_gunicorn_entry_module_behind_a_wrapper_is_gunicorn_with_its_config() -> None:
    """`web: ddtrace-run python -m gunicorn.app.wsgiapp -c gunicorn-prod.conf.py ...`: the
    interpreter runs gunicorn's own entry module, whose `-c` file sets 5 workers."""
    (launch,) = _launches(_folder("procfile-module"))
    assert (launch.app.kind, launch.app.workers.value) == ("gunicorn", 5)


def _launches(result: CheckResult) -> list[Launch]:
    return launches(result.apps, result.links, result.balancer_links)


def test_options_variable_known_in_part_splits_into_its_known_options() -> None:
    """`sudo -u ckan -EH uwsgi $UWSGI_OPTS`, OPTS holding `-p 2 ... --harakiri
    $UWSGI_HARAKIRI`: sudo runs uwsgi, with 2 processes; only `--harakiri` is not known."""
    result = _one("sudo-options-variable.sh")
    (app,) = result.apps
    assert (app.kind, app.workers.value) == ("uwsgi", 2)
    (unknown,) = [n for n in result.notes if n.kind == "unresolved-variable"]
    assert "--harakiri $UWSGI_HARAKIRI" in unknown.message


def test_test_operands_are_neither_programs_nor_prefixes() -> None:
    """`[[ -z $service || ... ]]` and `if [[ -n ${X:-} && $X != 0 ]]`: a test's words, so no
    "runs $service" and no "$X before the server's command"."""
    result = _one("conditions.sh")
    assert [a.workers.value for a in result.apps] == [2]
    assert not result.notes


def test_argument_slice_is_the_arguments_it_names() -> None:
    """`set -- web --workers 4` then `"${@:2}"`: `--workers 4`; with the caller's arguments
    not known, `"${@:2}"` is said unresolved, never a refused command line."""
    (app,) = _one("argument-slice.sh").apps
    assert app.workers.value == 4
    result = _one("argument-slice-unknown.sh")
    assert [a.workers.value for a in result.apps] == [2]
    assert [n.kind for n in result.notes] == ["unresolved-variable"]


def test_script_waiting_on_itself_is_no_launcher() -> None:
    """wait-for-it's `timeout "$TIMEOUT" "$0" --child --host="$HOST" &`: the script runs
    itself to wait on a host, which launches no server (not "not followed")."""
    assert [n.kind for n in _one("wait-self.sh").notes] == ["starts-no-server"]


def test_image_commands_that_are_no_script_of_the_context() -> None:
    """`tail -f /dev/null` runs no script (starts no server, not "not followed");
    `/tini` copied from a stage is the wrapper before the entrypoint the image copies;
    `flask run` is Flask's development server: not followed, never "starts no server"."""
    assert [n.kind for n in _folder("dev-null").notes] == ["starts-no-server"]
    (launch,) = _launches(_folder("tini-stage"))
    assert [at.file.name for at in launch.chain] == ["Dockerfile", "start.sh"]
    (flask,) = _folder("flask-run").notes
    assert flask.kind == "not-followed"
    assert "development server" in flask.message


def test_waiting_script_runs_the_command_after_its_separator() -> None:
    """compose `entrypoint: ['/wait-for-it.sh', 'db:5432', '-t', '30', '--',
    '/entrypoint-uwsgi.sh']`: the service runs the script after `--` once the database
    answers, so its uWSGI is the compose service's."""
    root = ROOT / "wait-and-wrap"
    result = _folder("wait-and-wrap")
    chains = [[at.file.relative_to(root).as_posix() for at in x.chain] for x in _launches(result)]
    assert ["docker-compose.yml", "entrypoint-uwsgi.sh"] in chains


def test_shift_drops_the_arguments_a_wrapper_took() -> None:
    """`CMD ["/wrapper.sh", "BLUE", "WEB", "/entrypoint-uwsgi.sh"]` whose wrapper reads
    `$1`, `$2`, then `shift 2` and `exec "$@"`: it runs the entrypoint, uWSGI's 4 processes;
    no file of that chain is said to start no server."""
    root = ROOT / "wait-and-wrap"
    files = [root / "Dockerfile", root / "wrapper.sh", root / "entrypoint-uwsgi.sh"]
    result = check_files(files, machine=MACHINE, env={})
    (launch,) = _launches(result)
    assert [(at.file.name, at.line) for at in launch.chain] == [
        ("Dockerfile", 5),
        ("wrapper.sh", 5),
        ("entrypoint-uwsgi.sh", 2),
    ]
    assert launch.app.workers.value == 4
    # The wrapper's own reading (`exec "$@"` with no caller) is no "starts no server": the
    # launch goes through it.
    assert not [n for n in result.notes if n.kind == "starts-no-server"]


def test_function_body_runs_where_it_is_called() -> None:
    """`start_web() { local workers=4; gunicorn ...; }` called on the last line: its body,
    with its `local`, runs there; without `exec` the shell stays its parent (at line 5)."""
    result = _one("function-call.sh")
    (app,) = result.apps
    assert app.workers.value == 4
    (child,) = [f for f in result.findings if f.rule.startswith("entrypoint-without-exec")]
    assert child.at.line == 5


def test_case_on_the_first_argument_runs_the_arm_the_command_selects() -> None:
    """An entrypoint `case "$1" in server) server ;; dev_server) ... runserver ;; worker) rq
    worker ;;` under three compose services (`command: dev_server`, `worker`, `server`): only
    the one whose command selects the gunicorn arm starts gunicorn."""
    root = ROOT / "case-dispatch"
    chains = [
        [at.file.relative_to(root).as_posix() for at in x.chain]
        for x in _launches(_folder("case-dispatch"))
    ]
    assert chains == [["compose.yaml", "Dockerfile", "docker-entrypoint"]]
    (launch,) = _launches(_folder("case-dispatch"))
    assert launch.app.workers.value == 4
    assert launch.chain[0].line == 8  # the `web` service, whose command is `server`


def test_variable_holding_the_arguments_is_not_their_text() -> None:
    """`readonly cmd="$*"` then `exec $cmd`: the script's arguments, known only to its
    caller, so it runs whatever it is given, as `exec "$@"` does (never a program named `$*`,
    never "a program named by a variable no file read sets"); `cmd="exec gunicorn ... $@"`
    then `eval "$cmd"` is gunicorn with them."""
    (note,) = _one("arguments-in-variable.sh").notes
    assert note.kind == "starts-no-server"
    assert "it starts whatever command it is given" in note.message
    assert "named by a variable" not in note.message
    # Inside a longer command string, `$@` stays the caller's arguments it passes on.
    (app,) = _one("eval-with-arguments.sh").apps
    assert app.workers.value == 3


@pytest.mark.parametrize("name", ["app-unknown.sh", "app-unknown-supervisord.conf"])
def test_app_known_only_when_it_runs_never_refuses_the_file(name: str) -> None:
    """`uvicorn $APP --workers 2`, and supervisord's `granian ... %(ENV_GRANIAN_APPLICATION)s`
    (every option from the environment too): uvicorn's and granian's parsers require an app,
    and the placeholder is it; the file is read, the unknown values said, no error."""
    result = _one(name)
    assert not result.errors
    (app,) = result.apps
    assert app.kind in ("uvicorn", "granian")
    assert {n.kind for n in result.notes} == {"unresolved-variable"}


def test_compose_sh_list_ending_in_the_server_without_exec_keeps_sh_as_pid_1() -> None:
    """`command: /bin/sh -c "alembic upgrade head && ... && uvicorn ..."`: sh (dash) runs the
    list's last command as its child, so the service's stop never reaches uvicorn: a warning
    at the command, fixed by `exec uvicorn ...`; the service whose list execs it has none."""
    path = ROOT.parent / "compose-sh-list" / "compose.yaml"
    result = check_files([path], machine=MACHINE, env={})
    (child,) = [f for f in result.findings if f.rule.startswith("entrypoint-without-exec")]
    assert (child.rule, child.at.line) == ("entrypoint-without-exec", 4)
    assert child.fix == "exec uvicorn onyx.main:app --host 0.0.0.0 --port 8080"


def test_second_server_program_of_an_images_supervisord_is_kept() -> None:
    """An image running `supervisord -c conf/supervisord.conf` with two gunicorn programs:
    the image's chain reaches both (supervisord starts every program), each through its own
    program line: two processes, neither dropped nor merged."""
    root = ROOT / "supervisord-two-servers"
    chains = {
        x.app.workers.value: [(at.file.relative_to(root).as_posix(), at.line) for at in x.chain]
        for x in _launches(_folder("supervisord-two-servers"))
    }
    assert chains == {
        3: [("Dockerfile", 4), ("conf/supervisord.conf", 5)],
        1: [("Dockerfile", 4), ("conf/supervisord.conf", 8)],
    }


def test_image_default_command_selects_no_arm() -> None:
    """The image's own `CMD ["dev_server"]` is what a deployment's command replaces (the
    production one passes `server`): every arm is read, so the image's gunicorn stays linked
    to its Dockerfile (and its STOPSIGNAL)."""
    root = ROOT / "case-image-default"
    (launch,) = _launches(_folder("case-image-default"))
    assert [at.file.relative_to(root).as_posix() for at in launch.chain] == [
        "Dockerfile",
        "docker-entrypoint",
    ]
    assert launch.app.workers.value == 4


def test_functions_calling_each_other_many_times_are_inlined_within_a_budget(
    tmp_path: Path,
) -> None:
    """Six functions each calling the next 50 times (50**5 bodies if inlined whole): read
    within the inlining budget, and the server after them still found."""
    lines = ["#!/bin/sh"]
    for level in range(6):
        calls = [f"  f{level + 1}"] * 50 if level < 5 else ["  true"]
        lines += [f"f{level}() {{", *calls, "}"]
    lines += ["f0", "exec gunicorn --workers 2 shop.wsgi"]
    script = tmp_path / "bomb.sh"
    script.write_text("\n".join(lines) + "\n")
    (app,) = check_files([script], machine=MACHINE, env={}).apps
    assert app.workers.value == 2


_DEBUG_SWITCH = """\
#!/usr/bin/env bash
set -e
EXTRA_ARGS=""
if [ "${FLASK_DEBUG}" = true ] || [ "${FLASK_DEBUG}" = 1 ]; then
    EXTRA_ARGS="--reload --log-level debug"
fi
gunicorn app:app --bind 0.0.0.0:80 --workers 2 ${EXTRA_ARGS}
"""


@pytest.mark.parametrize(("env_line", "faults"), [("", 1), ("ENV FLASK_DEBUG=1\n", 0)])
def test_a_reload_switch_under_a_variable_no_file_sets_is_off_in_production(
    tmp_path: Path, env_line: str, faults: int
) -> None:
    """`if [ "${FLASK_DEBUG}" = true ]; then EXTRA_ARGS="--reload ..."; fi` with FLASK_DEBUG
    set by no file: the production path runs gunicorn without `--reload`, as the shell's
    child under a bash PID 1, so entrypoint-without-exec holds (a note names the switch);
    with the image setting FLASK_DEBUG=1 the server reloads, a developer's, and is not judged."""
    (tmp_path / "entrypoint").write_text(_DEBUG_SWITCH)
    (tmp_path / "Dockerfile").write_text(
        f'FROM python:3.12-slim\n{env_line}COPY entrypoint /entrypoint\nENTRYPOINT ["/entrypoint"]\n'
    )
    walk = discover(tmp_path)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    (app,) = result.apps
    assert (app.reloads is None) == (faults == 1)
    assert len([f for f in result.findings if f.rule == "entrypoint-without-exec"]) == faults
    chosen = [(n.kind, n.at.line) for n in result.notes if n.kind == "server-chosen"]
    assert chosen == ([("server-chosen", 4)] if faults else [])


def test_a_subshell_group_around_the_server_line_is_read_without_its_parentheses() -> None:
    """`(set -x; exec $prefix gunicorn ... --keep-alive ${GUNICORN_KEEP_ALIVE_TIMEOUT})`: the
    group's `)` is not part of the last word (it was read as `--keep-alive '5)'` and the
    file refused); the command inside is gunicorn with 3 workers and a keep-alive of 5 s."""
    result = check_files([ROOT / "subshell.sh"], machine=MACHINE, env={})
    assert not result.errors
    (app,) = result.apps
    assert app.keepalive is not None
    assert (app.kind, app.workers.value, app.keepalive.value) == ("gunicorn", 3, 5)


@pytest.mark.parametrize(
    "cmd",
    [
        (
            '["python", "-Xfrozen_modules=off", "-m", "debugpy", "--listen", "0.0.0.0:5678", '
            '"--wait-for-client", "-m", "uvicorn", "app.main:api", "--port", "8000", '
            '"--workers", "3"]'
        ),
        '["python", "-Werror", "-m", "uvicorn", "app.main:api", "--port", "8000", "--workers", "3"]',
    ],
)
def test_python_options_with_attached_values_and_debugpy_run_the_server(
    tmp_path: Path, cmd: str
) -> None:
    """`python -Xfrozen_modules=off -m debugpy --listen ADDR --wait-for-client -m uvicorn ...`
    (a debug stage's CMD) and `python -Werror -m uvicorn ...`: the interpreter's options with
    their values attached, and debugpy running the module in the same process, start uvicorn
    with its 3 workers; they were "no app server found"."""
    (tmp_path / "Dockerfile").write_text(f"FROM python:3.12-slim\nCMD {cmd}\n")
    (app,) = check_files([tmp_path / "Dockerfile"], machine=MACHINE, env={}).apps
    assert (app.kind, app.workers.value) == ("uvicorn", 3)


@pytest.mark.parametrize(
    "debugger", ["/tmp/debugpy", "vendor/debugpy/", "/opt/debugpy/__main__.py"]
)
def test_debugpy_run_from_a_path_runs_the_server_module(tmp_path: Path, debugger: str) -> None:
    """`python /tmp/debugpy --listen ADDR -m uvicorn ...`: debugpy installed at a path
    (`pip install debugpy -t /tmp`, as serge-chat/serge's scripts/dev.sh does) and run as a
    script is the same launcher as `python -m debugpy`: it starts uvicorn with its 3 workers."""
    cmd = (
        f'["python", "{debugger}", "--listen", "0.0.0.0:5678", "-m", "uvicorn", "app.main:api", '
        '"--port", "8000", "--workers", "3"]'
    )
    (tmp_path / "Dockerfile").write_text(f"FROM python:3.12-slim\nCMD {cmd}\n")
    (app,) = check_files([tmp_path / "Dockerfile"], machine=MACHINE, env={}).apps
    assert (app.kind, app.workers.value) == ("uvicorn", 3)


_OPTIONAL_CONFIG = """\
#!/usr/bin/env bash
set -e
RUN_COMMAND="gunicorn app:app --bind 0.0.0.0:80 --workers 2"
# an optional exporter, only where a deployment names its service
if {test}; then
    RUN_COMMAND="${{RUN_COMMAND}} --config extra/extra.gunicorn.conf.py"
fi
exec ${{RUN_COMMAND}}
"""


@pytest.mark.parametrize(
    ("test", "env_line", "configured"),
    [
        ('[ -n "${TRACE_NAME}" ]', "", False),
        ('[ "$TRACE_NAME" ]', "", False),
        ('test -n "$TRACE_NAME"', "", False),
        ('[[ -n $TRACE_NAME ]] && [ "$TRACE_NAME" != off ]', "", False),
        ('[ -z "${TRACE_NAME}" ]', "", True),
        ('[ -n "${TRACE_NAME}" ]', "ENV TRACE_NAME=web\n", True),
    ],
)
def test_an_option_added_under_a_variable_no_file_sets_is_read_with_the_variable_unset(
    tmp_path: Path, test: str, env_line: str, configured: bool
) -> None:
    """An `if` that only adds to the command (`--config ...`) when a variable no file sets is
    non-empty (`-n`, `[ "$X" ]`, `test -n`) is read as not taken, as the FLASK_DEBUG switch
    is (seen in canonical/charmhub.io's entrypoint, OTEL_SERVICE_NAME): the server runs
    without that config; `-z` on it is taken, and an image that sets it decides it by its
    value."""
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "extra.gunicorn.conf.py").write_text("threads = 3\n")
    (tmp_path / "entrypoint").write_text(_OPTIONAL_CONFIG.format(test=test))
    (tmp_path / "Dockerfile").write_text(
        f'FROM python:3.12-slim\n{env_line}COPY . /app\nWORKDIR /app\nENTRYPOINT ["./entrypoint"]\n'
    )
    walk = discover(tmp_path)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    (launch,) = [
        x
        for x in launches(result.apps, result.links, result.balancer_links)
        if x.chain[0].file.name == "Dockerfile"
    ]
    files = [at.file.relative_to(tmp_path).as_posix() for at in launch.chain]
    assert ("extra/extra.gunicorn.conf.py" in files) == configured
    assert launch.app.threads.value == (3 if configured else 1)


def test_exec_form_of_one_string_is_an_error_and_read_split(tmp_path: Path) -> None:
    """`CMD ["uwsgi --ini uwsgi.ini"]` (seen in reanahub/reana-server): Docker runs a program
    named by the whole string and the container exits at start, an `exec-form-one-string`
    error at the CMD's line; the launch is read with the string split into words (a guess at
    what was meant), so the uWSGI it meant, with its ini, is checked."""
    (tmp_path / "uwsgi.ini").write_text("[uwsgi]\nmodule = app:app\nhttp-socket = :8000\n")
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        'FROM python:3.12\nWORKDIR /app\nCOPY . /app\nCMD ["uwsgi --ini uwsgi.ini"]\n'
    )
    result = check_files([dockerfile, tmp_path / "uwsgi.ini"], machine=MACHINE)
    found = [(f.rule, f.at.line) for f in result.findings if f.rule == "exec-form-one-string"]
    assert found == [("exec-form-one-string", 4)]
    assert [(app.kind, [s.value for s in app.sockets]) for app in result.apps] == [
        ("uwsgi", ["0.0.0.0:8000"])
    ]


def test_a_compose_or_kubernetes_command_of_one_string_is_the_same_error(tmp_path: Path) -> None:
    """A compose `command: ["gunicorn app:app -b 0.0.0.0:8000"]` and a Kubernetes `command:
    ["gunicorn app:app -w 2"]` are lists of one item holding a whole command line: no shell
    runs them, so the runtime looks for a program named by the whole string, the
    `exec-form-one-string` error at that line (the Dockerfile's case, seen in
    reanahub/reana-server), the server read split. A list of words, a compose command after
    its `entrypoint: ["sh", "-c"]` (the shell's script) and a Kubernetes `args` item with a
    space (one argument gunicorn parses) are not that error."""
    (tmp_path / "compose.yaml").write_text(
        "services:\n"
        "  web:\n    image: app\n"
        '    command: ["gunicorn app:app -b 0.0.0.0:8000"]\n'
        "  listed:\n    image: app\n"
        '    command: ["gunicorn", "app:app", "-b", "0.0.0.0:8001"]\n'
        "  shell:\n    image: app\n"
        '    entrypoint: ["sh", "-c"]\n'
        '    command: ["exec gunicorn app:app -b 0.0.0.0:8002"]\n'
    )
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n"
        '    - name: web\n      image: app\n      command: ["gunicorn app:app -w 2"]\n'
        '    - name: args\n      image: app\n      command: ["gunicorn"]\n'
        '      args: ["app:app", "-w 3"]\n'
    )
    result = check_files([tmp_path / "compose.yaml", tmp_path / "pod.yaml"], machine=MACHINE)
    found = sorted(
        (f.at.file.name, f.at.line) for f in result.findings if f.rule == "exec-form-one-string"
    )
    assert found == [("compose.yaml", 4), ("pod.yaml", 9)]
    assert sorted((a.workers.value, [s.value for s in a.sockets]) for a in result.apps) == [
        (1, ["0.0.0.0:8000"]),
        (1, ["0.0.0.0:8001"]),
        (1, ["0.0.0.0:8002"]),
        (2, ["127.0.0.1:8000"]),
        (3, ["127.0.0.1:8000"]),  # `-w 3`: argparse reads `-w` and ` 3`, which int() takes
    ]


def test_a_long_option_and_its_value_in_one_argument_is_an_error(tmp_path: Path) -> None:
    """An exec-form item `"--bind 0.0.0.0:8000"` (a compose `command` list, a Kubernetes
    `args` item) is one argument: gunicorn's argparse takes it for a positional argument, so
    the option is never set and gunicorn listens on its default, an
    `option-and-value-in-one-argument` error at its line naming the split fix. A short option
    (`"-w 3"`, which every parser reads as `-w` with ` 3`), `--opt=a b` (split at its `=`) and
    an option and value in items of their own are not that error (a session-25 gap: items
    written as one string in compose and Kubernetes)."""
    (tmp_path / "compose.yaml").write_text(
        "services:\n  web:\n    image: app\n"
        '    command: ["gunicorn", "app:app", "--bind 0.0.0.0:8000", "-w 3",\n'
        '      "--access-logformat=%(h)s %(r)s", "--timeout", "30"]\n'
    )
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: api\nspec:\n  containers:\n"
        '    - name: api\n      image: app\n      command: ["gunicorn"]\n'
        '      args: ["app:api", "--workers 4"]\n'
    )
    result = check_files([tmp_path / "compose.yaml", tmp_path / "pod.yaml"], machine=MACHINE)
    found = sorted(
        (f.at.file.name, f.at.line, f.fix)
        for f in result.findings
        if f.rule == "option-and-value-in-one-argument"
    )
    assert [(name, line) for name, line, _ in found] == [("compose.yaml", 4), ("pod.yaml", 10)]
    assert '"--bind", "0.0.0.0:8000"' in found[0][2]
    assert '"--workers", "4"' in found[1][2]
    assert sorted((a.workers.value, [s.value for s in a.sockets]) for a in result.apps) == [
        (1, ["127.0.0.1:8000"]),
        (3, ["127.0.0.1:8000"]),
    ]


def test_gunicorn_p_with_a_number_is_its_pidfile_not_a_port(tmp_path: Path) -> None:
    """gunicorn's `-p`/`--pid` is its pidfile: `gunicorn -b 0.0.0.0 -p 8000` writes its pid
    to a file named 8000 and listens on 0.0.0.0:8000 (a bind without a port is gunicorn's
    default port), a `pidfile-looks-like-port` warning at the number naming the likely intent
    `--bind 0.0.0.0:8000`; a pidfile path is no finding (seen in Uninett/Argus's
    docker-entrypoint-argus.sh)."""
    (tmp_path / "start.sh").write_text(
        "#!/bin/sh\nexec gunicorn -b 0.0.0.0 -p 8000 app.wsgi:application\n"
    )
    (tmp_path / "other.sh").write_text(
        "#!/bin/sh\nexec gunicorn -b 0.0.0.0:9000 --pid /run/g.pid app.wsgi:application\n"
    )
    result = check_files([tmp_path / "start.sh", tmp_path / "other.sh"], machine=MACHINE)
    found = [
        (f.at.file.name, f.at.line, f.severity.name, f.fix)
        for f in result.findings
        if f.rule == "pidfile-looks-like-port"
    ]
    assert [(n, line, s) for n, line, s, _ in found] == [("start.sh", 2, "warning")]
    assert found[0][3].startswith("--bind 0.0.0.0:8000")
    assert sorted(s.value for a in result.apps for s in a.sockets) == [
        "0.0.0.0:8000",
        "0.0.0.0:9000",
    ]


def test_a_shell_form_cmd_of_an_image_heroku_builds_is_a_note(tmp_path: Path) -> None:
    """Heroku's dyno manager sends SIGTERM to every process of the dyno (Heroku's "Dyno
    shutdown behavior"), so a shell-form CMD of an image heroku.yml builds (its long form
    naming the target stage) keeps no signal from the server: the launch is heroku.yml's and
    no `shell-form-command` is raised, as for a Procfile's; the same Dockerfile with no
    heroku.yml stays a warning (seen in torchbox/wagtail-torchbox)."""
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12 AS production\nCOPY . /app\nWORKDIR /app\n"
        "CMD gunicorn app.wsgi:application --bind 0.0.0.0:8000\n"
    )

    def severities() -> list[str]:
        walk = discover(tmp_path)
        result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
        return [f.severity.name for f in result.findings if f.rule == "shell-form-command"]

    assert severities() == ["warning"]
    (tmp_path / "heroku.yml").write_text(
        "build:\n  docker:\n    web:\n      dockerfile: Dockerfile\n      target: production\n"
    )
    assert severities() == []


def test_a_compose_sh_c_with_the_server_alone_keeps_the_shell_as_pid_1(tmp_path: Path) -> None:
    """compose `command: ["/bin/sh", "-c", "hypercorn ..."]` on a Debian-based image: dash
    keeps the one command as its child, as under a shell-form CMD, so the shell stays PID 1:
    an `entrypoint-without-exec` warning at the command; on a base whose /bin/sh is bash
    (which execs one simple command) and with `exec` first, none (seen in nachet-backend's
    docker-compose.yml, whose image's shell-form CMD was already found)."""
    command = '["/bin/sh", "-c", "hypercorn -b :8080 app:app"]'
    for base, line, expected in (
        ("python:3.11-bullseye", command, ["docker-compose.yml"]),
        ("fedora:40", command, []),
        ("python:3.11-bullseye", '["/bin/sh", "-c", "exec hypercorn -b :8080 app:app"]', []),
    ):
        (tmp_path / "Dockerfile").write_text(
            f'FROM {base}\nCOPY . /app\nCMD ["hypercorn", "app:app"]\n'
        )
        (tmp_path / "docker-compose.yml").write_text(
            f"services:\n  backend:\n    build: .\n    command: {line}\n"
        )
        walk = discover(tmp_path)
        result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
        found = [f.at.file.name for f in result.findings if f.rule == "entrypoint-without-exec"]
        assert found == expected, (base, line)
