"""A server program run with an option after which it prints or builds something and exits
(`uwsgi --build-plugin`, `--version`, `--help`, gunicorn's `--check-config` and
`--print-config`) starts no server: it is no launch, and no finding is raised on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check.commands import Word, server_command
from servertune.check.model import Location
from tests.folder_support import chains, check_folder, write


def _words(line: str) -> list[Word]:
    return [Word(text, Location(Path("start.sh"), 1)) for text in line.split()]


def test_uwsgi_build_plugin_script_is_not_a_launch(tmp_path: Path) -> None:
    """A `build_plugin.sh` running `uwsgi --build-plugin escape_json.c` builds a plugin and
    exits: no uWSGI launch and no finding on it, while the script's neighbour that serves is
    still a launch (seen in MIT-LCP/physionet-build, where it got three false findings)."""
    write(
        tmp_path,
        {
            "build_plugin.sh": "#!/bin/bash\n\nuwsgi --build-plugin escape_json.c\n",
            "start.sh": "#!/bin/sh\nexec uwsgi --http-socket :8000 --processes 4 -w app\n",
        },
    )
    result = check_folder(tmp_path)
    assert chains(result, tmp_path) == [(["start.sh:2"], "uwsgi", 4)]
    assert not [f for f in result.findings if f.at.file.name == "build_plugin.sh"]


@pytest.mark.parametrize(
    "line",
    [
        "uwsgi --build-plugin escape_json.c",
        "uwsgi --version",
        "uwsgi --cflags",
        "gunicorn --check-config -c gunicorn.conf.py app:app",
        "gunicorn --print-config app:app",
        "gunicorn -v",
        "python -m gunicorn --help",
        "uvicorn --version",
    ],
)
def test_options_that_exit_start_no_server(line: str) -> None:
    """Each of these command lines exits before serving: `server_command` finds no server."""
    assert server_command(_words(line)) is None


def test_serving_command_lines_are_still_servers() -> None:
    """An option naming a plugin to load (`--plugin python3`) or a config is still a server."""
    found = server_command(_words("uwsgi --plugin python3 --ini uwsgi.ini"))
    assert found is not None
    assert found.server == "uwsgi"


@pytest.mark.parametrize(
    "line",
    [
        "uwsgi --stop /srv/app/tmp/app.pid",
        "uwsgi --reload /srv/app/tmp/app.pid",
        "uwsgi --pause /srv/app/tmp/app.pid",
        "uwsgi --connect-and-read 127.0.0.1:1717",
        "uwsgi --signal 127.0.0.1:1717 17",
    ],
)
def test_uwsgi_controls_of_a_running_instance_start_no_server(line: str) -> None:
    """uWSGI's controls of an instance already running (`--stop PIDFILE` signals it and
    exits, as `--reload`, `--pause` do; `--connect-and-read` and `--signal` talk to its
    socket) start no server: a stop script is no launch (seen in Slicer/slicer_download's
    bin/stop, shown as a uWSGI launch with findings on it)."""
    assert server_command(_words(line)) is None


def test_uwsgi_stop_script_is_no_launch_beside_its_start_script(tmp_path: Path) -> None:
    """bin/stop's `uwsgi --stop ${PIDFILE}` is no launch and gets no finding; bin/start's
    uWSGI still is one."""
    write(
        tmp_path,
        {
            "bin/stop": '#!/bin/bash\nPIDFILE=/srv/app/tmp/app.pid\nuwsgi --stop "${PIDFILE}"\n',
            "bin/start": "#!/bin/sh\nexec uwsgi --http-socket :8000 --processes 4 -w app\n",
        },
    )
    result = check_folder(tmp_path)
    assert chains(result, tmp_path) == [(["bin/start:2"], "uwsgi", 4)]
    assert not [f for f in result.findings if f.at.file.name == "stop"]
