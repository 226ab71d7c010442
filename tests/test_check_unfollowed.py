"""Launches check does not follow, told apart from launches of nothing: a project's own
launcher of a server (it names an address or a listening option, runs a `runserver`-like
subcommand, or is a console script the project's packaging declares) is "not followed", at
its line; a worker or a job is still "starts no server". Fixtures under tests/data/repos/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.model import Location
from servertune.check.output import format_json, format_sarif
from servertune.machine import Machine

REPOS = Path(__file__).parent / "data" / "repos"
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)
OWN = REPOS / "chain-own-launcher"


def _folder(root: Path) -> CheckResult:
    """The library's run on a walked folder, for a 4-core machine."""
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root)


def _notes(root: Path) -> dict[str, tuple[str, int | None, str]]:
    """Each note by its file (relative to `root`): kind, line, message."""
    return {
        n.at.file.relative_to(root).as_posix(): (n.kind, n.at.line, n.message)
        for n in _folder(root).notes
    }


def test_own_launcher_with_a_listening_option_is_not_followed_at_its_line() -> None:
    """`sh -c "shop migrate && shop start --ini ... --port $PORT"`: `--port` says the
    command listens, so the image's CMD is "not followed" (the server `shop` builds in its
    code is not a command line check reads), at the CMD's line, never "starts no server"."""
    kind, line, message = _notes(OWN)["Dockerfile"]
    assert (kind, line) == ("not-followed", 6)
    assert "'shop start --ini /app/shop.ini --port $PORT'" in message
    assert "it takes --port" in message
    assert (
        "check reads the command lines of gunicorn, uvicorn, granian, Hypercorn, Daphne, waitress, uWSGI"
        in message
    )


def test_console_script_the_packaging_declares_is_not_followed() -> None:
    """`web: shopctl`, with `shopctl = shop.cli:main` under setup.cfg's console_scripts: the
    project's own command, named with the line that declares it."""
    kind, line, message = _notes(OWN)["Procfile"]
    assert (kind, line) == ("not-followed", 1)
    assert f"declared at {OWN / 'setup.cfg'}:6" in message


def test_script_ending_in_runserver_on_an_address_is_not_followed() -> None:
    """`shop runserver 0.0.0.0:8000` as a script's last line: the subcommand and the
    address say it serves; the note is at that line."""
    kind, line, message = _notes(OWN)["bin/run.sh"]
    assert (kind, line) == ("not-followed", 4)
    assert "'runserver'" in message


def test_files_reaching_a_launcher_through_others_do_not_say_starts_no_server() -> None:
    """The compose service built from the Dockerfile and the supervisord program running
    bin/run.sh (held at /app/bin/run.sh through `COPY . /app`) stop where their chain does:
    no "starts no server" for them. The worker image, whose command names no address, no
    listening option and no console script, still starts no server, as does the minio
    service of deploy/storage.yaml (below)."""
    result = _folder(OWN)
    read = {p.relative_to(OWN).as_posix() for p in result.files}
    assert {"compose.yaml", "deploy/supervisord.conf"} <= read
    serverless = {
        n.at.file.relative_to(OWN).as_posix() for n in result.notes if n.kind == "starts-no-server"
    }
    assert serverless == {"worker/Dockerfile", "deploy/storage.yaml"}
    assert not result.errors
    (alone,) = check_files([OWN / "compose.yaml"], machine=MACHINE).notes
    assert (alone.kind, alone.at) == ("not-followed", Location(OWN / "Dockerfile", 6))
    with_image = check_files(
        [OWN / "deploy" / "supervisord.conf", OWN / "Dockerfile"], machine=MACHINE
    )
    # The program's chain stops at the script's last line, which the supervisord file says.
    assert {(n.kind, n.at) for n in with_image.notes} == {
        ("not-followed", Location(OWN / "Dockerfile", 6)),
        ("not-followed", Location(OWN / "bin" / "run.sh", 4)),
    }


def test_not_followed_launchers_are_in_json_and_sarif_coverage() -> None:
    """`--format json` and SARIF carry the same notes: kind `not-followed`, at the line."""
    result = _folder(OWN)
    coverage = json.loads(format_json(result))["coverage"]
    at = {(Path(c["file"]).name, c["line"]) for c in coverage if c["kind"] == "not-followed"}
    assert {("Dockerfile", 6), ("Procfile", 1), ("run.sh", 4)} <= at
    (run,) = json.loads(format_sarif(result))["runs"]
    (invocation,) = run["invocations"]
    ids = [n["descriptor"]["id"] for n in invocation["toolExecutionNotifications"]]
    assert ids.count("not-followed") == 3
    assert ids.count("starts-no-server") == 2


def test_service_of_an_image_not_built_here_runs_that_images_program() -> None:
    """`image: minio/minio` with `command: server /data --console-address ":9001"`: the
    command is the arguments of the image's own program, a third party's server, so the
    compose file still starts no server check reads (no launcher of the project's)."""
    (note,) = check_files([OWN / "deploy" / "storage.yaml"], machine=MACHINE).notes
    assert note.kind == "starts-no-server"


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        (
            "setup.py",
            (
                "from setuptools import setup\n\nsetup(\n    name='shop',\n"
                "    entry_points={'console_scripts': [\n        'shopd = shop.main:run',\n"
                "    ]},\n)\n"
            ),
            6,
        ),
        (
            "pyproject.toml",
            '[project]\nname = "shop"\n\n[project.scripts]\nshopd = "shop.main:run"\n',
            5,
        ),
    ],
)
def test_console_script_is_found_in_each_packaging_file(
    tmp_path: Path, name: str, text: str, line: int
) -> None:
    """`web: shopd`, declared in setup.py's `entry_points` or pyproject.toml's
    `[project.scripts]` (its module not here): not followed, naming the declaring line."""
    (tmp_path / name).write_text(text)
    (tmp_path / "Procfile").write_text("web: shopd\n")
    (note,) = _folder(tmp_path).notes
    assert note.kind == "not-followed"
    assert f"declared at {tmp_path / name}:{line}" in note.message


def test_undeclared_program_with_no_listening_sign_starts_no_server(tmp_path: Path) -> None:
    """The same `web: shopd` with no packaging file declaring it: nothing says it serves."""
    (tmp_path / "Procfile").write_text("web: shopd\n")
    (note,) = _folder(tmp_path).notes
    assert note.kind == "starts-no-server"


def test_program_running_a_script_not_here_is_not_followed(tmp_path: Path) -> None:
    """A supervisord program `sh -c "./bin/docker-entrypoint-api.sh"` whose script is copied
    from another image (not among the files) is "not followed" at its line, naming the
    script: what it starts is not known; a program running `celery` still starts no server."""
    conf = tmp_path / "supervisor.conf"
    conf.write_text(
        "[supervisord]\nnodaemon=true\n\n[program:api]\ndirectory=/app/backend\n"
        'command=sh -c "./bin/docker-entrypoint-api.sh"\n\n'
        "[program:worker]\ncommand=celery -A app worker\n"
    )
    kind, line, message = _notes(tmp_path)["supervisor.conf"]
    assert (kind, line) == ("not-followed", 6)
    assert "runs ./bin/docker-entrypoint-api.sh, a script not among the files read" in message
    (tmp_path / "supervisor.conf").write_text("[program:worker]\ncommand=celery -A app worker\n")
    assert _notes(tmp_path)["supervisor.conf"][0] == "starts-no-server"


def test_script_handing_over_to_supervisord_whose_programs_are_not_here(tmp_path: Path) -> None:
    """An image whose start script's function runs `supervisord -c FILE` (FILE copied in by
    the Dockerfile) whose program runs a script not among the files: the Dockerfile and the
    script start what that program's script starts, which is not known: one "not followed"
    note at the program's line, never "starts no server" for either."""
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12\nCOPY start.sh /app/start.sh\n"
        "COPY supervisor.conf /etc/supervisor/conf.d/supervisor.conf\n"
        'CMD ["/app/start.sh"]\n'
    )
    (tmp_path / "start.sh").write_text(
        "#!/bin/bash\nmain(){\n    echo starting\n"
        "    /usr/local/bin/supervisord -c /etc/supervisor/conf.d/supervisor.conf\n}\n"
        'main "$@"\n'
    )
    (tmp_path / "supervisor.conf").write_text(
        '[supervisord]\nnodaemon=true\n\n[program:api]\ncommand=sh -c "./bin/api.sh"\n'
    )
    (note,) = _folder(tmp_path).notes
    assert (note.kind, note.at.file.name, note.at.line) == ("not-followed", "supervisor.conf", 5)
    assert "runs ./bin/api.sh, a script not among the files read" in note.message


def test_entrypoint_with_an_unfollowed_branch_is_not_said_to_start_nothing(
    tmp_path: Path,
) -> None:
    """An entrypoint whose `case` runs `supervisord -c` of a file rendered at boot in one arm
    and `exec "$@"` in the default arm starts what is not known, not "no server command
    line": one not-followed note at the supervisord line, once (read alone and with the
    Dockerfile's ENV that names the folder), and no starts-no-server note."""
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12\nENV CONF=/app/conf\nCOPY entrypoint.sh /entrypoint.sh\n"
        'ENTRYPOINT ["/entrypoint.sh"]\nCMD ["registry"]\n'
    )
    (tmp_path / "entrypoint.sh").write_text(
        '#!/bin/bash\ncase "$ENTRY" in\n  "registry")\n'
        '    exec supervisord -c "${CONF}/supervisord.conf"\n    ;;\n'
        '  *)\n    exec "$@"\n    ;;\nesac\n'
    )
    notes = _folder(tmp_path).notes
    assert [n.kind for n in notes if n.kind == "starts-no-server"] == []
    (note,) = [n for n in notes if n.at.file.name == "entrypoint.sh"]
    assert (note.kind, note.at.line) == ("not-followed", 4)
    assert "supervisord -c /app/conf/supervisord.conf" in note.message


def test_script_running_a_python_program_not_here_is_not_followed(tmp_path: Path) -> None:
    """An entrypoint whose last line is `python jms "${action}" "${service}"` (the project's
    own launcher, not among the files) starts what is not known: one not-followed note at
    that line, naming the program, and neither the image nor the script "starts no server";
    `python -m` names no program file, and a `.py` script given no server's subcommand is a
    job's (`manage.py migrate`)."""
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12\nCOPY entrypoint.sh /app/entrypoint.sh\nWORKDIR /app\n"
        'ENTRYPOINT ["./entrypoint.sh"]\nCMD ["start", "all"]\n'
    )
    (tmp_path / "entrypoint.sh").write_text(
        '#!/bin/bash\naction="${1-start}"\nservice="${2-all}"\n'
        'python jms "${action}" "${service}"\n'
    )
    (note,) = _folder(tmp_path).notes
    assert (note.kind, note.at.file.name, note.at.line) == ("not-followed", "entrypoint.sh", 4)
    assert "runs python jms, a Python program not among the files read" in note.message
    for job in ("python -m http.server 8000", "python manage.py migrate", "python pre_start.py"):
        # a module, and a `.py` script run for a job: nothing says they serve
        (tmp_path / "entrypoint.sh").write_text(f"#!/bin/bash\n{job}\n")
        assert {n.kind for n in _folder(tmp_path).notes} == {"starts-no-server"}, job


def test_program_through_a_wrapper_with_its_own_words_is_not_followed(tmp_path: Path) -> None:
    """A supervisord program `wrapper.sh BLUE BACKEND ./docker/docker-entrypoint.sh ...` (a
    log-prefixing wrapper whose own words come first) runs the project's script after them; that
    script not among the files makes the program "not followed", naming it, not "start no
    server"."""
    (tmp_path / "supervisor.conf").write_text(
        "[program:backend]\ndirectory=/baserow/backend\n"
        "command=/baserow/supervisor/wrapper.sh BLUE BACKEND ./docker/docker-entrypoint.sh "
        "%(ENV_STARTUP)s\n\n[program:worker]\ncommand=celery -A app worker\n"
    )
    kind, line, message = _notes(tmp_path)["supervisor.conf"]
    assert (kind, line) == ("not-followed", 3)
    assert "runs ./docker/docker-entrypoint.sh, a script not among the files read" in message


@pytest.mark.parametrize(
    ("base", "kind"),
    [
        ("acme/shop-base:2.11", "not-followed"),  # an owner's image: its own command
        ("ghcr.io/acme/shop-base:2.11", "not-followed"),
        ("python:3.12-slim", "starts-no-server"),  # a library image: python's REPL
        ("docker.io/library/python:3.12", "starts-no-server"),
    ],
)
def test_an_image_with_no_command_runs_its_base_images_which_an_owner_may_make_a_server(
    tmp_path: Path, base: str, kind: str
) -> None:
    """A Dockerfile that sets no CMD or ENTRYPOINT, built by a compose service that sets no
    command: the container runs its base image's command. An owner's base image (not built
    here) starts what only that image knows: "not followed", naming the base, at the FROM and
    at the service; a library image's command is a shell or a REPL: "starts no server"."""
    (tmp_path / "Dockerfile").write_text(f"# the app\nFROM {base}\nCOPY . /srv/app\n")
    (tmp_path / "compose.yaml").write_text("services:\n  web:\n    build: .\n")
    notes = _notes(tmp_path)
    assert notes["Dockerfile"][0] == kind
    assert notes["compose.yaml"][0] == kind
    if kind == "not-followed":
        assert notes["Dockerfile"][1] == 2
        assert notes["compose.yaml"][1] == 2
        assert base in notes["Dockerfile"][2]
        assert "service web runs the command of its image's base image" in notes["compose.yaml"][2]


@pytest.mark.parametrize(
    ("script", "shown", "why"),
    [
        (
            'if [ "$APP_CONTEXT" = "prod" ]; then exec python -m shop_backend; fi\n',
            "'python -m shop_backend'",
            "it runs the Python module shop_backend",
        ),
        ("exec reflex run --env prod\n", "'reflex run --env prod'", "`reflex run` serves the app"),
        ("exec streamlit run app.py\n", "'streamlit run app.py'", "`streamlit run` serves"),
        (
            "exec /venv/bin/monkey run_api_server\n",
            "'/venv/bin/monkey run_api_server'",
            "its subcommand 'run_api_server' starts a server",
        ),
        ("exec fief run-server\n", "'fief run-server'", "its subcommand 'run-server'"),
        (
            "exec shop start -b 0.0.0.0:${SHOP_PORT:-5000}\n",
            "'shop start -b 0.0.0.0:${SHOP_PORT:-5000}'",
            "it names the address 0.0.0.0:${SHOP_PORT:-5000}",
        ),
    ],
)
def test_a_module_or_framework_that_serves_from_its_own_code_is_not_followed(
    tmp_path: Path, script: str, shown: str, why: str
) -> None:
    """`python -m PACKAGE` (the project's package run as the program, after an `if`'s
    `then`), a web framework's own serving command (`reflex run`, `streamlit run`), a
    subcommand named for a server (`run_api_server`, `run-server`, its program given by path
    too) and an address whose port has a default (`0.0.0.0:${PORT:-5000}`) start a server in
    code check does not read: "not followed", at the line, never "starts no server"."""
    (tmp_path / "start.sh").write_text(f"#!/bin/sh\nAPP_CONTEXT=prod\n{script}")
    ((kind, line, message),) = _notes(tmp_path).values()
    assert (kind, line) == ("not-followed", 3)
    assert shown in message
    assert why in message


def test_a_tool_module_still_starts_no_server(tmp_path: Path) -> None:
    """`python -m pip install ...` or `python -m celery worker` is a job: "starts no server"."""
    (tmp_path / "start.sh").write_text(
        "#!/bin/sh\npython -m pip install -r req.txt\nexec python -m celery -A app worker\n"
    )
    ((kind, _, _),) = _notes(tmp_path).values()
    assert kind == "starts-no-server"


def test_a_shells_own_words_are_never_looked_up_as_console_scripts() -> None:
    """`if`, `fi`, `local`, `export`: the shell reads these itself, never runs a program by
    that name, so no console script of the project is looked for under them (the packaging
    files are not asked); a program name still is (bunkerity/bunkerweb's scripts asked for
    `if`, `fi` and `local` about 1,700 times along their chains)."""
    from servertune.check.commands import ConfigFile, Word
    from servertune.check.unfollowed import not_followed_launcher

    asked: list[str] = []

    def find(wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        asked.append(wanted)
        return None

    at = Location(Path("run.sh"), 3)
    for line in (["if", "true"], ["fi"], ["local", "x=1"], ["export", "A=1"], ["}"]):
        assert not_followed_launcher([Word(w, at) for w in line], find) is None
    assert asked == []
    assert not_followed_launcher([Word("shop", at), Word("start", at)], find) is None
    assert "pyproject.toml" in asked


@pytest.mark.parametrize(
    "cmd",
    [
        '["powershell", "-Command", "poetry run waitress-serve --port=$env:PORT app:create_app"]',
        '["pwsh.exe", "-c", "python serve.py"]',
        'cmd /c "python serve.py --port %PORT%"',
    ],
)
def test_a_command_given_to_a_windows_shell_is_not_followed(tmp_path: Path, cmd: str) -> None:
    """An image's CMD run by PowerShell or cmd.exe (seen in microsoft/presidio's
    Dockerfile.windows): check reads POSIX sh, not their languages (`$env:PORT`, `%PORT%`),
    so the command is "not followed", naming the shell, at the CMD's line, never "starts no
    server"."""
    (tmp_path / "Dockerfile").write_text(
        f"FROM python:3.12-windowsservercore\nENV PORT=3000\nCOPY . .\nCMD {cmd}\n"
    )
    ((kind, line, message),) = _notes(tmp_path).values()
    assert (kind, line) == ("not-followed", 4)
    assert "whose language check does not read" in message
    assert ("PowerShell" in message) == ("cmd /c" not in cmd)


def test_a_server_command_line_handed_to_a_script_not_followed_is_not_followed(
    tmp_path: Path,
) -> None:
    """The service runs `run_in_container bash uwsgi --ini /app/wsgi/app.ini`, a script of the
    image that hands its arguments on through a program a variable names (seen in
    translate/pootle): the compose file is "not followed" at the command's line, naming the
    uwsgi line it was given, never "no service starts a server"."""
    from tests.folder_support import write

    root = write(
        tmp_path / "app",
        {
            "compose.yaml": "services:\n  web:\n    build: .\n"
            '    command: ["/app/bin/run_in_container", "bash", "uwsgi", "--ini",'
            ' "/app/wsgi/app.ini"]\n',
            "Dockerfile": "FROM python:3.12\nCOPY bin /app/bin\n",
            "bin/run_in_container": '#!/bin/bash\ncase "$1" in\n  bash)\n'
            '    $APP_SCRIPTS_DIR/run_bash "${@:2}";;\n  *)\n    echo no;;\nesac\n',
        },
    )
    kind, line, message = _notes(root)["compose.yaml"]
    assert (kind, line) == ("not-followed", 4)
    assert "uwsgi --ini /app/wsgi/app.ini" in message


def test_a_worker_given_a_servers_name_as_a_word_still_starts_no_server(tmp_path: Path) -> None:
    """A service whose command's arguments hold no server's command line (`celery -A app
    worker`) still starts no server."""
    from tests.folder_support import write

    root = write(
        tmp_path / "app",
        {
            "compose.yaml": "services:\n  worker:\n    image: python:3.12\n"
            '    command: ["celery", "-A", "app", "worker"]\n',
        },
    )
    assert _notes(root)["compose.yaml"][0] == "starts-no-server"
