"""A script's server line that daemonizes (gunicorn `daemon = True` in its config, `-D`,
uWSGI `--daemonize LOG`) returns at once, so the script goes on to its next server line: both
servers run, each its own launch, as with a trailing `&`. Only real alternatives (the arms of
an `if` or a `case`) are chosen between. Each fixture is a small repository written here; the
public project where the pattern was seen is named in the test's docstring."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_support import chains, check_folder, write

#: A compose service that runs the script from the build context mounted at the WORKDIR.
COMPOSE = "services:\n  web:\n    build: .\n    volumes:\n      - ./:/src\n    command: ./run.sh\n"
IMAGE = "FROM python:3.12\nWORKDIR /src\n"


def test_a_first_server_whose_config_daemonizes_does_not_end_the_script(tmp_path: Path) -> None:
    """`gunicorn -c api.conf.py` then `gunicorn -c admin.conf.py`, the first config setting
    `daemon = True`: its gunicorn forks to the background and the script starts the second, so
    both are launches of the service, each with its own config and bind, and no note claims
    the script's tests choose one (kathmandu777/koyofes-navi-backend's runserver.sh)."""
    root = write(
        tmp_path,
        {
            "compose.yaml": COMPOSE,
            "Dockerfile": IMAGE,
            "run.sh": "#!/bin/bash\ngunicorn -c api.conf.py\ngunicorn -c admin.conf.py\n",
            "api.conf.py": 'wsgi_app = "api:app"\nbind = "0.0.0.0:8000"\ndaemon = True\n',
            "admin.conf.py": 'wsgi_app = "admin:app"\nbind = "0.0.0.0:8001"\nworkers = 2\n',
        },
    )
    result = check_folder(root)
    assert sorted(chains(result, root)) == [
        (["compose.yaml:2", "run.sh:2", "api.conf.py:2"], "gunicorn", 1),
        (["compose.yaml:2", "run.sh:3", "admin.conf.py:2"], "gunicorn", 2),
    ]
    assert sorted(s.value for app in result.apps for s in app.sockets) == [
        "0.0.0.0:8000",
        "0.0.0.0:8001",
    ]
    assert not [n for n in result.notes if n.kind == "server-chosen"]


@pytest.mark.parametrize(
    ("first", "server"),
    [
        ("gunicorn -D -b 0.0.0.0:8000 api:app", "gunicorn"),
        ("gunicorn --daemon -b 0.0.0.0:8000 api:app", "gunicorn"),
        ("uwsgi --http-socket 0.0.0.0:8000 --module api --daemonize /tmp/api.log", "uwsgi"),
    ],
)
def test_a_first_server_daemonized_by_its_flags_does_not_end_the_script(
    tmp_path: Path, first: str, server: str
) -> None:
    """`gunicorn -D ...` (or `--daemon`, uWSGI's `--daemonize LOG`) on one line, then `exec
    gunicorn ...`: the first server detaches and the script goes on, so both run, each its
    own launch (kathmandu777/koyofes-navi-backend, there with the config's `daemon = True`)."""
    script = f"#!/bin/sh\n{first}\nexec gunicorn -w 2 -b 0.0.0.0:8001 admin:app\n"
    root = write(tmp_path, {"compose.yaml": COMPOSE, "Dockerfile": IMAGE, "run.sh": script})
    result = check_folder(root)
    assert sorted(a.kind for a in result.apps) == sorted([server, "gunicorn"])
    assert sorted(s.value for app in result.apps for s in app.sockets) == [
        "0.0.0.0:8000",
        "0.0.0.0:8001",
    ]
    assert not [n for n in result.notes if n.kind == "server-chosen"]


def test_a_daemonizing_server_on_another_arm_is_still_an_alternative(tmp_path: Path) -> None:
    """`if [ "$MODE" = bg ]; then gunicorn -D ...; else exec gunicorn ...; fi`: the two
    servers are the arms of one `if`, never both run, so one is read and a `server-chosen`
    note says the other was not: a daemonizing line is one more launch only when nothing
    chooses between it and the next. (The service takes MODE from the shell that runs
    compose, so the files do not decide the `if`.)"""
    script = (
        "#!/bin/sh\n"
        'if [ "$MODE" = bg ]; then\n'
        "  gunicorn -D -b 0.0.0.0:8000 api:app\n"
        "else\n"
        "  exec gunicorn -w 2 -b 0.0.0.0:8001 admin:app\n"
        "fi\n"
    )
    compose = COMPOSE + "    environment:\n      - MODE\n"
    root = write(tmp_path, {"compose.yaml": compose, "Dockerfile": IMAGE, "run.sh": script})
    result = check_folder(root)
    assert len(result.apps) == 1
    assert [n for n in result.notes if n.kind == "server-chosen"]


def test_a_host_start_script_whose_uwsgi_config_daemonizes_has_no_signal_findings(
    tmp_path: Path,
) -> None:
    """`bin/start` runs `uwsgi --ini etc/uwsgi.ini --pidfile ...`, the ini setting `daemonize =
    LOG`, and no file here starts the script (a host's start script, `bin/stop` running `uwsgi
    --stop PIDFILE`): uWSGI detaches and is stopped by its pidfile, never by a signal to the
    script, so neither background-server-without-trap nor uwsgi-sigterm-reloads is said
    (Slicer/slicer_download). The same server backgrounded with `&` by a compose service's
    script keeps background-server-without-trap."""
    ini = "[uwsgi]\nmaster = true\nhttp = 127.0.0.1:8080\nmodule = app:app\n"
    root = write(
        tmp_path / "host",
        {
            "bin/start": "#!/bin/bash\nuwsgi --ini etc/uwsgi.ini --pidfile /tmp/app.pid\n",
            "bin/stop": "#!/bin/bash\nuwsgi --stop /tmp/app.pid\n",
            "etc/uwsgi.ini": ini + "daemonize = /var/log/app/uwsgi.log\n",
        },
    )
    rules = {f.rule for f in check_folder(root).findings}
    assert not rules & {"background-server-without-trap", "uwsgi-sigterm-reloads"}
    root = write(
        tmp_path / "container",
        {
            "compose.yaml": COMPOSE,
            "Dockerfile": IMAGE,
            "run.sh": "#!/bin/bash\nuwsgi --ini uwsgi.ini &\nexec nginx -g 'daemon off;'\n",
            "uwsgi.ini": ini + "die-on-term = true\n",
        },
    )
    assert "background-server-without-trap" in {f.rule for f in check_folder(root).findings}
