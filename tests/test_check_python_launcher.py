"""A Python launcher given on the command line (`servertune check start.py`) is read as what it
is: the server it starts, with the command line it builds, as when an image runs it. A gunicorn
config stays a gunicorn config, and an application module that starts nothing stays refused
with one error line. Fixture: tests/data/repos/launcher-alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from servertune.check import check_files
from servertune.check.readers import reader_for
from servertune.machine import Machine

ROOT = Path(__file__).parent / "data" / "repos" / "launcher-alone"
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def test_launcher_alone_is_read_for_the_server_its_command_line_starts() -> None:
    """start.py builds gunicorn's command line and hands it to `os.system`: read as gunicorn
    with those options, each at the line that writes it; Python stays the server's parent, said
    at the call (as info: no file given shows what runs the launcher)."""
    result = check_files([ROOT / "start.py"], machine=MACHINE, env={})
    (app,) = result.apps
    assert app.kind == "gunicorn"
    assert (app.workers.value, app.workers.at.line) == (3, 10)
    assert (app.threads.value, app.threads.at.line) == (4, 8)
    assert [s.value for s in app.sockets] == ["0.0.0.0:8080"]
    (child,) = [f for f in result.findings if f.rule.startswith("entrypoint-without-exec")]
    assert (child.rule, child.at.line) == ("entrypoint-without-exec-unlaunched", 19)


def test_launcher_running_uvicorn_in_its_own_process_is_read_by_its_keywords() -> None:
    """`uvicorn.run(..., port=int(os.environ.get("PORT", "9000")), workers=2)` under
    `if __name__ == "__main__":` is uvicorn with those settings."""
    (app,) = check_files([ROOT / "serve.py"], machine=MACHINE, env={}).apps
    assert app.kind == "uvicorn"
    assert app.workers.value == 2
    assert [s.value for s in app.sockets] == ["0.0.0.0:9000"]


def test_gunicorn_config_and_app_module_are_not_launchers() -> None:
    """A config assigning gunicorn settings is gunicorn's even where it calls `os.system`; an
    application module (which names gunicorn in its docstring) starts nothing: not a launcher."""
    for name, kind in (("gunicorn.conf.py", "gunicorn"), ("app.py", "gunicorn")):
        path = ROOT / name
        assert reader_for(path, path.read_text()).kind == kind
    (app,) = check_files([ROOT / "gunicorn.conf.py"], machine=MACHINE, env={}).apps
    assert (app.kind, app.workers.value) == ("gunicorn", 2)


def test_app_module_alone_is_still_refused_with_one_error_line() -> None:
    """`servertune check app.py`: exit 2, one `error:` line saying it is not a config."""
    result = subprocess.run(
        [sys.executable, "-m", "servertune", "check", str(ROOT / "app.py"), "--cores", "4"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: {ROOT / 'app.py'}: ")
    assert result.stderr.count("\n") == 1
    assert "not a config" in result.stderr


def test_image_running_a_development_server_in_its_own_code_is_not_followed(
    tmp_path: Path,
) -> None:
    """`CMD ["python3", "app.py"]` whose app.py calls `app.run(host=..., port=8000)` (Flask's
    development server): not followed, at that call, never "starts no server"."""
    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.12\nWORKDIR /app\nCOPY . /app\nCMD ["python3", "app.py"]\n'
    )
    (tmp_path / "app.py").write_text(
        "from flask import Flask\napp = Flask(__name__)\n\n"
        'if __name__ == "__main__":\n    app.run(host="0.0.0.0", port=8000)\n'
    )
    result = check_files([tmp_path / "Dockerfile"], machine=MACHINE, env={}, root=tmp_path)
    assert not result.apps
    (note,) = result.notes
    assert note.kind == "not-followed"
    assert "line 5: `app.run(" in note.message


def test_a_launcher_calling_uvicorn_run_is_a_step_of_the_chain_not_the_servers_config(
    tmp_path: Path,
) -> None:
    """An image runs `python start_server.py`, whose `uvicorn.run("shop.main:app",
    host=..., port=..., workers=2)` starts the server (seen in OpenBMB/XAgent and
    redis/agent-memory-server): the launcher's keywords are the server's settings, but it is
    no file the server reads, so the launch's JSON `config` is null and the launcher is the
    chain's last step, at the call's line."""
    from servertune.check.graph import launch_json, launches
    from tests.folder_support import check_folder

    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\nCMD ["python", "start_server.py"]\n'
    )
    (tmp_path / "start_server.py").write_text(
        "import uvicorn\n\nif __name__ == '__main__':\n"
        "    uvicorn.run('shop.main:app', host='0.0.0.0', port=8090, workers=2)\n"
    )
    result = check_folder(tmp_path)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    shown = launch_json(launch)
    assert shown["config"] is None
    assert shown["chain"][-1] == {"file": str(tmp_path / "start_server.py"), "line": 4}
    assert shown["workers"] == 2


def test_a_gunicorn_base_application_given_an_options_dict_stays_the_servers_config(
    tmp_path: Path,
) -> None:
    """A `BaseApplication` subclass made with an options dict (gunicorn's "Custom
    Application", seen in codalab/codabench's gunicorn_run.py) fills gunicorn's settings in
    its `load_config` with `cfg.set`, as a config file does: the script stays the launch's
    `config`, unlike a launcher holding a command line."""
    from servertune.check.graph import launch_json, launches
    from tests.folder_support import check_folder

    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\nCMD ["python", "run.py"]\n'
    )
    (tmp_path / "run.py").write_text(
        "from gunicorn.app.base import BaseApplication\n\n"
        "class App(BaseApplication):\n"
        "    def __init__(self, app, options=None):\n"
        "        self.options = options or {}\n"
        "        self.application = app\n"
        "        super().__init__()\n\n"
        "    def load_config(self):\n"
        "        for key, value in self.options.items():\n"
        "            self.cfg.set(key, value)\n\n"
        "    def load(self):\n"
        "        return self.application\n\n"
        "if __name__ == '__main__':\n"
        "    App(None, {'bind': '0.0.0.0:8000', 'workers': 3}).run()\n"
    )
    result = check_folder(tmp_path)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    shown = launch_json(launch)
    assert shown["workers"] == 3
    assert shown["config"] == str(tmp_path / "run.py")
