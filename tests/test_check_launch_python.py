"""The launch chain through Python launchers, read from their syntax tree (never imported or
run): a shell script's `exec python /app/main.py`, a table of known commands picked by
`sys.argv[1]` and handed to `os.execvpe`, and the honest "not followed" when the value that
decides the launch is known only where it runs. Each fixture is written here for its cause."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

KNOWN_COMMANDS_LAUNCHER = """#!/usr/bin/env python
import os
import subprocess
import sys


def migrate():
    subprocess.run(["python", "manage.py", "migrate", "--noinput"], check=True)


KNOWN_COMMANDS = {
    "runserver": ["python", "manage.py", "runserver", "0.0.0.0:8000"],
    "gunicorn": ["gunicorn", "--config", "/srv/server/gunicorn_conf.py", "server.wsgi"],
    "celery": ["celery", "-A", "server", "worker"],
}

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(2)
    cmd = sys.argv[1]
    env = os.environ.copy()
    args = KNOWN_COMMANDS.get(cmd, None)
    if args:
        filename = args[0]
        args.extend(sys.argv[2:])
        migrate()
    else:
        filename = cmd
        args = sys.argv[1:]
    os.execvpe(filename, args, env)
"""


def known_commands_repo(root: Path, command: str) -> Path:
    return write(
        root,
        {
            "Dockerfile": (
                "FROM python:3.12\nCOPY . /srv/\n"
                'ENTRYPOINT ["/tini", "--", "/srv/docker-entrypoint.py"]\n'
            ),
            "compose.yaml": f"services:\n  web:\n    build: .\n    command: {command}\n",
            "docker-entrypoint.py": KNOWN_COMMANDS_LAUNCHER,
            "server/gunicorn_conf.py": 'workers = 5\nbind = "0.0.0.0:8000"\n',
        },
    )


def test_known_commands_table_picked_by_the_command_is_followed(tmp_path: Path) -> None:
    """compose `command: gunicorn` after `ENTRYPOINT ["/tini", "--", "/srv/docker-entrypoint.py"]`:
    the launcher's `KNOWN_COMMANDS.get(sys.argv[1])` is the gunicorn line, extended by
    `sys.argv[2:]` and run by `os.execvpe(filename, args, env)`; its `--config` is linked."""
    root = known_commands_repo(tmp_path, "gunicorn")
    result = check_folder(root)
    found = [c for c in chains(result, root) if c[0][0] == "compose.yaml:2"]
    assert found == [
        (
            [
                "compose.yaml:2",
                "Dockerfile:3",
                "docker-entrypoint.py:30",
                "server/gunicorn_conf.py:1",
            ],
            "gunicorn",
            5,
        )
    ]


def test_known_commands_table_with_no_command_is_read_as_run_with_its_server_entry(
    tmp_path: Path,
) -> None:
    """The image alone gives the launcher no arguments (no CMD; the launcher exits without
    one): it is read as run with the key of its table's server entry, `gunicorn`, with that
    entry's config linked, and a server-chosen note at the entry says the launch needs that
    argument, which the files do not give (never "starts no server", never a guess unsaid)."""
    root = known_commands_repo(tmp_path, "celery")
    (tmp_path / "compose.yaml").unlink()
    result = check_folder(root)
    assert chains(result, root) == [
        (["Dockerfile:3", "docker-entrypoint.py:30", "server/gunicorn_conf.py:1"], "gunicorn", 5)
    ]
    (note,) = [n for n in result.notes if n.kind == "server-chosen"]
    assert (note.at.file.name, note.at.line) == ("docker-entrypoint.py", 13)
    assert "the 'gunicorn' entry of KNOWN_COMMANDS starts gunicorn when the image is run " in (
        note.message
    )
    assert not [n for n in result.notes if n.kind in ("not-followed", "starts-no-server")]
    # Run as a program, its `if __name__ == "__main__":` block runs: `args.extend(sys.argv[2:])`
    # there is known (nothing more), not a word only the running script knows.
    assert not [n for n in result.notes if n.kind == "unresolved-variable"]


def test_compose_entrypoint_without_command_runs_the_launcher_with_no_arguments(
    tmp_path: Path,
) -> None:
    """A compose service that sets `entrypoint:` to the launcher and gives no `command:`
    clears the image's CMD (the Compose Specification), so the launcher runs with no
    arguments: its table picks nothing, and the service is not linked to the table's gunicorn
    entry (a base service that others `extends` with `command: runserver`); the image alone is
    still read as run with that entry, with its server-chosen note."""
    root = known_commands_repo(tmp_path, "celery")
    (root / "compose.yaml").write_text(
        "services:\n  app:\n    build: .\n    entrypoint: /srv/docker-entrypoint.py\n"
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["Dockerfile:3", "docker-entrypoint.py:30", "server/gunicorn_conf.py:1"], "gunicorn", 5)
    ]


def test_known_commands_table_with_two_servers_names_the_other(tmp_path: Path) -> None:
    """A table with a `gunicorn` and an `asgi` (uvicorn) entry, run with neither: the first
    server entry is read and the note names the key that starts the other server."""
    root = known_commands_repo(tmp_path, "celery")
    (tmp_path / "compose.yaml").unlink()
    launcher = tmp_path / "docker-entrypoint.py"
    launcher.write_text(
        launcher.read_text().replace(
            '    "celery": [',
            '    "asgi": ["uvicorn", "server.asgi:app", "--port", "8001"],\n    "celery": [',
        )
    )
    result = check_folder(root)
    assert [c[1] for c in chains(result, root)] == ["gunicorn"]
    (note,) = [n for n in result.notes if n.kind == "server-chosen"]
    assert note.message.endswith("; run with 'asgi' it starts uvicorn: read as run with 'gunicorn'")


def test_known_command_of_a_development_server_is_not_followed(tmp_path: Path) -> None:
    """`command: runserver` picks `python manage.py runserver 0.0.0.0:8000`: Django's own
    server, which check does not read: "not followed", with why, not "no server"."""
    root = known_commands_repo(tmp_path, "runserver")
    result = check_folder(root)
    assert not [c for c in chains(result, root) if c[0][0] == "compose.yaml:2"]
    assert not [n for n in result.notes if n.kind == "starts-no-server"]
    assert any(
        n.kind == "not-followed" and "its subcommand 'runserver' starts a server" in n.message
        for n in result.notes
    )


def test_shell_script_exec_python_launcher_is_followed(tmp_path: Path) -> None:
    """entry.sh `exec python /app/main.py`, whose `uvicorn.run("app:app", host="0.0.0.0",
    port=9000, workers=2)` is the uvicorn command line of the same settings."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nCOPY main.py /app/main.py\nCOPY entry.sh /app/run.sh\n"
                'ENTRYPOINT ["/app/run.sh"]\n'
            ),
            "entry.sh": "#!/bin/bash\ncd /app\nexec python /app/main.py\n",
            "main.py": (
                "import uvicorn\n\n\ndef main():\n"
                '    uvicorn.run("app:app", host="0.0.0.0", port=9000, workers=2)\n\n\n'
                'if __name__ == "__main__":\n    main()\n'
            ),
        },
    )
    found = [c for c in chains(check_folder(root), root) if c[0][0] == "Dockerfile:4"]
    assert found == [(["Dockerfile:4", "entry.sh:3", "main.py:5"], "uvicorn", 2)]


def test_python_launcher_from_settings_is_read_with_its_unknown_values_named(
    tmp_path: Path,
) -> None:
    """The same launcher with `host=settings.API_HOST, port=settings.API_PORT,
    workers=settings.WORKERS`: still uvicorn, reached through the image and its script; each
    value only the running code knows is an unresolved-variable note at its line, and no
    address is made up for it (the rest of the call, `timeout_keep_alive=5`, is read)."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nCOPY main.py /app/main.py\nCOPY entry.sh /app/run.sh\n"
                'ENTRYPOINT ["/app/run.sh"]\n'
            ),
            "entry.sh": "#!/bin/bash\nexec python /app/main.py\n",
            "main.py": (
                "import uvicorn\nfrom shop.app import settings\n\n\ndef main():\n"
                '    uvicorn.run(\n        "app:app",\n        host=settings.API_HOST,\n'
                "        port=settings.API_PORT,\n        workers=settings.WORKERS,\n"
                "        timeout_keep_alive=5,\n    )\n"
            ),
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:4", "entry.sh:2", "main.py:6"], "uvicorn", 1)]
    (app,) = result.apps
    assert app.sockets == ()
    assert app.keepalive is not None
    assert app.keepalive.value == 5
    unresolved = [
        (n.at.line, n.message.split("'")[1])
        for n in result.notes
        if n.kind == "unresolved-variable"
    ]
    assert unresolved == [
        (8, "--host settings.API_HOST"),
        (9, "--port settings.API_PORT"),
        (10, "--workers settings.WORKERS"),
    ]
    # A value the program computes is not the container's environment.
    assert all(
        "a value the program computes" in n.message and "container's" not in n.message
        for n in result.notes
        if n.kind == "unresolved-variable"
    )
    assert not [n for n in result.notes if n.kind in ("not-followed", "starts-no-server")]


def test_argv_list_with_unknown_elements_is_read_for_its_known_words(tmp_path: Path) -> None:
    """`os.execvp(cmd[0], cmd)` over `[sys.executable, "-m", "gunicorn", "-w",
    str(settings.WORKERS), "--threads", "4", "-b", f"{HOST}:8000", ...]` grown by
    `cmd.append(settings.LOG_LEVEL)`: gunicorn with 4 threads and its config linked; `-w`,
    `-b` and `--log-level` are named as unknown, never guessed."""
    root = write(
        tmp_path,
        {
            "Dockerfile": ('FROM python:3.12\nCOPY . /app/\nCMD ["python", "/app/start.py"]\n'),
            "start.py": (
                "import os\nimport sys\nfrom shop import settings\n\n"
                "HOST = settings.HOST\n"
                "cmd = [\n"
                '    sys.executable, "-m", "gunicorn",\n'
                '    "-w", str(settings.WORKERS),\n'
                '    "--threads", "4",\n'
                '    "-b", f"{HOST}:8000",\n'
                '    "-c", "/app/gunicorn_conf.py",\n'
                '    "shop.wsgi:application",\n'
                "]\n"
                'cmd.append("--log-level")\n'
                "cmd.append(settings.LOG_LEVEL)\n"
                "os.execvp(cmd[0], cmd)\n"
            ),
            "gunicorn_conf.py": "timeout = 60\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["Dockerfile:3", "start.py:7", "gunicorn_conf.py:1"], "gunicorn", 1)
    ]
    (app,) = result.apps
    assert (app.threads.value, app.threads.at.line) == (4, 9)
    assert app.request_timeout is not None
    assert app.request_timeout.value == 60
    assert [(w.value, w.at.line) for w in app.unresolved] == [
        ("-w str(settings.WORKERS)", 8),
        ("-b f'{HOST}:8000'", 10),
        ("--log-level settings.LOG_LEVEL", 15),
    ]
    assert app.sockets == ()


def test_argv_list_whose_program_is_not_known_stays_not_followed(tmp_path: Path) -> None:
    """`subprocess.run([settings.SERVER, "--workers", "4", "app:app"])`: which program runs
    is only known where it runs: not followed, naming the line, never a server made up."""
    root = write(
        tmp_path,
        {
            "Dockerfile": 'FROM python:3.12\nCOPY . /app/\nCMD ["python", "/app/run.py"]\n',
            "run.py": (
                "import subprocess\nfrom shop import settings\n\n"
                'subprocess.run([settings.SERVER, "gunicorn", "--workers", "4", "app:app"])\n'
            ),
        },
    )
    result = check_folder(root)
    assert not result.apps
    (note,) = [n for n in result.notes if n.at.file.name == "Dockerfile"]
    assert note.kind == "not-followed"
    assert "line 4: the program it runs is not known here" in note.message


def test_image_running_a_python_program_not_here_is_not_followed(tmp_path: Path) -> None:
    """`CMD ["python3", "-u", "app.py"]` whose app.py is not among the files read: what it
    serves is not known, so "not followed" names it, never "starts no server"."""
    root = write(
        tmp_path,
        {"Dockerfile": 'FROM python:3.12\nWORKDIR /app\nCMD ["python3", "-u", "app.py"]\n'},
    )
    (note,) = check_folder(root).notes
    assert (note.kind, note.at.line) == ("not-followed", 3)
    assert "the image runs app.py, a Python program not in the build context" in note.message


def test_image_running_a_program_not_here_with_a_server_subcommand_says_so(
    tmp_path: Path,
) -> None:
    """`CMD ["python3", "manage.py", "runserver", "0.0.0.0:8000"]`, manage.py not here: the
    note says why it looks like a server (its `runserver` subcommand), not only that the
    program is not here."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                'FROM python:3.12\nCMD ["python3", "manage.py", "runserver", "0.0.0.0:8000"]\n'
            )
        },
    )
    (note,) = check_folder(root).notes
    assert note.kind == "not-followed"
    assert "its subcommand 'runserver' starts a server" in note.message


def test_script_execing_a_python_program_not_here_keeps_the_launchers_reason(
    tmp_path: Path,
) -> None:
    """A script's `exec python manage.py runserver 0.0.0.0:8000`, manage.py not here: the
    note gives the launcher's reason (its `runserver` subcommand), as before Python programs
    were followed from scripts."""
    root = write(
        tmp_path,
        {"run.sh": "#!/bin/bash\nexec python manage.py runserver 0.0.0.0:8000\n"},
    )
    (note,) = check_folder(root).notes
    assert note.kind == "not-followed"
    assert "its subcommand 'runserver' starts a server" in note.message


GUNICORN_APPLICATION = """#!/usr/bin/env python
import sys

from gunicorn.app.base import Application


class ShopServer(Application):
    def __init__(self, config_file):
        self.config_file = config_file
        super().__init__()

    def init(self, parser, opts, args):
        pass

    def load(self):
        from shop import make_app

        return make_app(self.config_file)


def main():
    configfile = sys.argv.pop(1)
    server = ShopServer(configfile)
    server.run()


if __name__ == "__main__":
    main()
"""


def test_gunicorn_application_subclass_reads_the_arguments_it_is_run_with(
    tmp_path: Path,
) -> None:
    """A launcher whose `gunicorn.app.base.Application` subclass is `.run()` after
    `sys.argv.pop(1)`: gunicorn parses what is left of the command line, so `scripts/serve
    "$SHOP_CONFIG" $GUNICORN_OPTS --bind :8080` (a path with a slash, run by that path) with
    compose's `GUNICORN_OPTS= --workers 5 --timeout 300` is gunicorn 5 x 1 on :8080, each
    value at the caller's line."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nWORKDIR /srv\nCOPY . /srv\n",
            "compose.yaml": (
                "services:\n  web:\n    build: .\n    environment:\n"
                "      - SHOP_CONFIG=/srv/conf/shop.yml\n"
                "      - GUNICORN_OPTS= --workers 5 --timeout 300\n"
                "    command: ./start.sh\n"
            ),
            "start.sh": '#!/bin/bash\nexec scripts/serve "$SHOP_CONFIG" $GUNICORN_OPTS --bind :8080\n',
            "scripts/serve": GUNICORN_APPLICATION,
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["compose.yaml:2", "start.sh:2", "scripts/serve:24"], "gunicorn", 5)
    ]
    (app,) = result.apps
    assert [(s.value, s.at.file.name) for s in app.sockets] == [(":8080", "start.sh")]
    assert app.request_timeout is not None
    assert app.request_timeout.value == 300


def test_gunicorn_application_subclass_with_unknown_arguments_is_not_followed(
    tmp_path: Path,
) -> None:
    """The same launcher run by an image with no arguments given: every setting (its address
    too) comes from the command line, which is not here: not followed, saying so, never a
    gunicorn on its default address made up."""
    root = write(
        tmp_path,
        {
            "Dockerfile": 'FROM python:3.12\nCOPY serve.py /srv/serve.py\nCMD ["python", "/srv/serve.py"]\n',
            "serve.py": GUNICORN_APPLICATION,
        },
    )
    result = check_folder(root)
    assert not result.apps
    (note,) = [n for n in result.notes if n.at.file.name == "Dockerfile"]
    assert note.kind == "not-followed"
    assert "ShopServer, a gunicorn Application, takes its settings from the arguments" in (
        note.message
    )


def test_gunicorn_base_application_reads_the_options_dict_it_is_made_with(
    tmp_path: Path,
) -> None:
    """gunicorn's "Custom Application" pattern: a `BaseApplication` subclass made with an
    options dict (`{"bind": ..., "workers": 3, "timeout": settings.TIMEOUT}`): gunicorn 3 x 1
    on that bind, each at its key's line; the value only the running code knows is named."""
    root = write(
        tmp_path,
        {
            "Dockerfile": 'FROM python:3.12\nCOPY run.py /srv/run.py\nCMD ["python", "/srv/run.py"]\n',
            "run.py": (
                "import gunicorn.app.base\n"
                "from shop import app, settings\n\n\n"
                "class Standalone(gunicorn.app.base.BaseApplication):\n"
                "    def __init__(self, application, options=None):\n"
                "        self.options = options or {}\n"
                "        self.application = application\n"
                "        super().__init__()\n\n"
                "    def load_config(self):\n"
                "        for key, value in self.options.items():\n"
                "            self.cfg.set(key.lower(), value)\n\n"
                "    def load(self):\n"
                "        return self.application\n\n\n"
                "options = {\n"
                '    "bind": "0.0.0.0:8000",\n'
                '    "workers": 3,\n'
                '    "timeout": settings.TIMEOUT,\n'
                "}\n"
                "Standalone(app, options).run()\n"
            ),
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:3", "run.py:20"], "gunicorn", 3)]
    (app,) = result.apps
    assert [s.value for s in app.sockets] == ["0.0.0.0:8000"]
    assert [(w.value, w.at.line) for w in app.unresolved] == [("--timeout settings.TIMEOUT", 22)]


def test_module_whose_method_returns_a_server_command_line_is_read(tmp_path: Path) -> None:
    """A service module named for gunicorn whose `cmd` property returns `["gunicorn", app,
    "-b", bind, "-w", str(self.worker), ...]` (the program that runs it is not here): found in
    a folder and read as that gunicorn command line; the values only the running code knows
    are named, and `cmd.append("--reload")` under `if DEBUG:` is one of them (never a
    `--reload` server made up)."""
    root = write(
        tmp_path,
        {
            "apps/services/gunicorn.py": (
                "from .base import BaseService\nfrom ..hands import *\n\n\n"
                "class GunicornService(BaseService):\n"
                "    def __init__(self, **kwargs):\n"
                "        self.worker = kwargs.get('worker', 2)\n"
                "        super().__init__(**kwargs)\n\n"
                "    @property\n"
                "    def cmd(self):\n"
                "        bind = f'{HTTP_HOST}:{HTTP_PORT}'\n"
                "        cmd = [\n"
                "            'gunicorn', 'shop.asgi:application',\n"
                "            '-b', bind,\n"
                "            '-k', 'uvicorn.workers.UvicornWorker',\n"
                "            '-w', str(self.worker),\n"
                "            '--graceful-timeout', '30',\n"
                "        ]\n"
                "        if DEBUG:\n"
                "            cmd.append('--reload')\n"
                "        return cmd\n"
            ),
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["apps/services/gunicorn.py:14"], "gunicorn", 1)]
    (app,) = result.apps
    assert app.interface == "asgi"
    assert app.graceful_timeout is not None
    assert app.graceful_timeout.value == 30
    assert app.reloads is None
    assert [(w.value, w.at.line) for w in app.unresolved] == [
        ("-b bind", 15),
        ("-w str(self.worker)", 17),
        ("'--reload' (when `DEBUG`)", 21),
    ]
