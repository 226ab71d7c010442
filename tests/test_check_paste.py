"""PasteDeploy `.ini` files are read, never refused: a `[server:main]` running gunicorn
(`use = egg:gunicorn#main`, as `pserve FILE` runs it) is that gunicorn with the section's
settings; a file with only the application's sections (what `gunicorn --paste FILE` loads) is
the application's config, said in one coverage line. Fixtures are written here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from servertune.check import check_files
from servertune.check.readers import reader_for
from tests.folder_support import MACHINE, chains, check_folder, write

APP_ONLY = """[pipeline:main]
pipeline:
  proxy-prefix
  shop

[app:shop]
use = call:shop.app:create_app

[filter:proxy-prefix]
use: egg:PasteDeploy#prefix

[loggers]
keys = root

[formatter_generic]
format = %(asctime)s %(levelname)-5.5s [%(name)s] %(message)s
"""

GUNICORN_SERVER = """[DEFAULT]
workers_count = 3

[app:main]
use = egg:shop

[server:main]
use = egg:gunicorn#main
host = 0.0.0.0
port = 6543
workers = %(workers_count)s
timeout = 30
keepalive = %(http_keepalive)s
config = gunicorn.conf.py
"""


def test_app_config_alone_is_read_with_one_coverage_line(tmp_path: Path) -> None:
    """`servertune check production.ini` on a file of `[pipeline:main]`, `[app:...]` and
    logging sections: exit 0 and one starts-no-server line naming the PasteDeploy sections
    (was: exit 2, "no [uwsgi] section")."""
    ini = write(tmp_path, {"production.ini": APP_ONLY}) / "production.ini"
    result = subprocess.run(
        [sys.executable, "-m", "servertune", "check", str(ini), "--cores", "4"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert "[starts-no-server] a PasteDeploy application config ([pipeline:main]" in (result.stdout)


def test_app_config_is_found_and_read_in_a_folder(tmp_path: Path) -> None:
    """A folder walk claims the PasteDeploy file by its sections (not as uWSGI, not skipped)."""
    root = write(tmp_path, {"conf/production.ini": APP_ONLY, "setup.cfg": "[metadata]\n"})
    result = check_folder(root)
    assert root / "conf/production.ini" in result.files
    assert any(
        n.kind == "starts-no-server" and n.at.file.name == "production.ini" for n in result.notes
    )


def test_gunicorn_server_section_is_read_as_pserve_runs_it(tmp_path: Path) -> None:
    """`[server:main] use = egg:gunicorn#main`: gunicorn's paste runner joins host and port
    into one bind, loads `config =` first and sets every other key; `%(workers_count)s` comes
    from `[DEFAULT]`, and `%(http_keepalive)s` (a `pserve` variable) is named as unknown."""
    root = write(tmp_path, {"production.ini": GUNICORN_SERVER, "gunicorn.conf.py": "threads = 4\n"})
    result = check_folder(root)
    assert chains(result, root) == [(["production.ini:7", "gunicorn.conf.py:1"], "gunicorn", 3)]
    (app,) = result.apps
    assert [(s.value, s.at.line) for s in app.sockets] == [("0.0.0.0:6543", 9)]
    assert (app.workers.at.line, app.threads.value) == (11, 4)
    assert app.request_timeout is not None
    assert (app.request_timeout.value, app.request_timeout.at.line) == (30, 12)
    assert [(w.value, w.at.line) for w in app.unresolved] == [
        ("--keep-alive %(http_keepalive)s", 13)
    ]


def test_server_section_of_a_server_check_does_not_read_is_said(tmp_path: Path) -> None:
    """`use = egg:Paste#http` (Paste's own httpserver): not a server check reads, said in one
    line naming it."""
    ini = write(
        tmp_path,
        {"development.ini": "[app:main]\nuse = egg:shop\n\n[server:main]\nuse = egg:Paste#http\n"},
    )
    result = check_files([ini / "development.ini"], machine=MACHINE, env={})
    assert not result.apps
    (note,) = result.notes
    assert note.kind == "starts-no-server"
    assert "[server:main] runs egg:Paste#http: not a server check reads" in note.message


WAITRESS_INI = """[DEFAULT]
http_port = 6543

[app:main]
use = egg:shop

[server:main]
use = egg:waitress#main
host = 0.0.0.0
port = %(http_port)s
threads = 8
channel_timeout = 30
expose_tracebacks = false
"""


def test_waitress_server_section_is_the_waitress_pserve_runs(tmp_path: Path) -> None:
    """`[server:main] use = egg:waitress#main` (as seen in Kinto/kinto-dist's ini, and
    Pyramid's scaffolds): `pserve FILE` runs waitress's `serve_paste`, which is
    `waitress.serve(app, **keys)`, so the section's keys are waitress's settings: one process
    of `threads` threads on `host`:`port` (interpolated from `[DEFAULT]`), `channel_timeout` its
    idle keep-alive timeout, each at its line."""
    ini = write(tmp_path, {"production.ini": WAITRESS_INI})
    result = check_files([ini / "production.ini"], machine=MACHINE, env={})
    (app,) = result.apps
    assert app.kind == "waitress"
    assert [(s.value, s.at.line) for s in app.sockets] == [("0.0.0.0:6543", 10)]
    assert (app.threads.value, app.threads.at.line) == (8, 11)
    assert app.keepalive is not None
    assert (app.keepalive.value, app.keepalive.at.line) == (30.0, 12)


def test_paste_file_with_a_uwsgi_section_stays_uwsgi(tmp_path: Path) -> None:
    """`uwsgi --ini-paste production.ini` reads its `[uwsgi]` section: still uWSGI's file."""
    ini = tmp_path / "production.ini"
    text = "[app:main]\nuse = egg:shop\n\n[uwsgi]\nprocesses = 4\n"
    assert reader_for(ini, text).kind == "uwsgi"


def test_pserve_file_is_a_launch_of_the_server_its_section_names(tmp_path: Path) -> None:
    """`pserve FILE` in an image's CMD or a script runs the server of FILE's `[server:main]`:
    the launch is chained through the command to the ini (its config), with pserve's
    `name=value` words filling `%(name)s` (`port = %(http_port)s`) and `--reload` making it a
    reloading launch. Before, the image ran 'pserve', a server check did not know, and the
    ini stood alone (a session-25 gap: PasteDeploy apps started the Pyramid way)."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
            'CMD ["pserve", "production.ini"]\n',
            "production.ini": GUNICORN_SERVER.replace("%(http_keepalive)s", "5").replace(
                "config = gunicorn.conf.py\n", ""
            ),
            "dev/run.sh": "#!/bin/sh\nexec pserve --reload development.ini http_port=7000\n",
            "dev/development.ini": "[app:main]\nuse = egg:shop\n\n[server:main]\n"
            "use = egg:waitress#main\nlisten = 0.0.0.0:%(http_port)s\n",
        },
    )
    result = check_folder(tmp_path)
    started = sorted(chains(result, tmp_path))
    assert started == [
        (["Dockerfile:4", "production.ini:7"], "gunicorn", 3),
        (["dev/run.sh:2", "dev/development.ini:4"], "waitress", 1),
    ]
    waitress = next(app for app in result.apps if app.kind == "waitress")
    assert [s.value for s in waitress.sockets] == ["0.0.0.0:7000"]
    assert waitress.reloads is not None
    assert waitress.reloads.value


def test_pserve_file_named_by_an_image_env_variable_is_found(tmp_path: Path) -> None:
    """`pserve "$CONF/app.ini"` in a shell-form CMD expands the image's `ENV` as `sh` does
    before looking for the file, as `uwsgi --ini $C` and `gunicorn -c $C` already did, so the
    ini a `COPY app.ini $CONF/app.ini` put there is the launch's config, never "$CONF/app.ini
    is not among the files read". Seen in Magpie (`ENV MAGPIE_CONFIG_DIR=...`)."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nENV APP_DIR=/opt/app\n"
            "ENV CONF=$APP_DIR/config\nCOPY config/app.ini $CONF/app.ini\n"
            'CMD crond -c /etc/cron && pserve "$CONF/app.ini"\n',
            "config/app.ini": GUNICORN_SERVER.replace("%(http_keepalive)s", "5").replace(
                "config = gunicorn.conf.py\n", ""
            ),
        },
    )
    result = check_folder(tmp_path)
    assert sorted(chains(result, tmp_path)) == [
        (["Dockerfile:5", "config/app.ini:7"], "gunicorn", 3)
    ]


WAITRESS_SERVER = (
    "[app:main]\nuse = egg:shop\n\n[server:main]\nuse = egg:waitress#main\nport = 6543\n"
)


def test_ini_loaded_by_gunicorn_paste_is_no_waitress_launch(tmp_path: Path) -> None:
    """`gunicorn -c gunicorn.conf.py --paste prod.ini` takes only the application from the ini
    and ignores its `[server:main]` (gunicorn's docs: "using alternate server blocks is not
    supported"): the ini is a step of the gunicorn launch, its waitress section no launch of
    its own, and the nginx in front of 127.0.0.1:6543 fronts the gunicorn. A path with a
    variable (`--paste ini/${INI_NAME}`) may name each ini of that folder: none is a launch,
    said in one starts-no-server note each. Seen in IGVF-DACC/igvfd (the waitress sections
    took the sidecar nginx from the real gunicorn launch)."""
    write(
        tmp_path,
        {
            "Dockerfile": 'FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\nCMD ["/app/run.sh"]\n',
            "run.sh": "#!/bin/sh\nexec gunicorn -c gunicorn.conf.py --paste prod.ini\n",
            "gunicorn.conf.py": "bind = '0.0.0.0:6543'\nworkers = 3\n",
            "prod.ini": WAITRESS_SERVER,
            "dev/run.sh": "#!/bin/sh\nexec gunicorn -w 2 --paste ./ini/${INI_NAME}\n",
            "dev/ini/a.ini": WAITRESS_SERVER,
        },
    )
    result = check_folder(tmp_path)
    assert sorted(chains(result, tmp_path)) == [
        (["Dockerfile:4", "run.sh:2", "gunicorn.conf.py:1", "prod.ini:1"], "gunicorn", 3),
        (["dev/run.sh:2", "gunicorn.conf.py:1"], "gunicorn", 2),
    ]
    said = [n for n in result.notes if n.kind == "starts-no-server"]
    assert [n.at.file.name for n in said] == ["a.ini"]
    assert "may read it for the application only" in said[0].message


def test_ini_template_is_no_launch(tmp_path: Path) -> None:
    """`app.ini.template` (`.ini.in`, `.ini.j2`) is what a template renders an ini from: its
    `[server:main]` is no launch, whatever the rendered file turns out to be (seen in
    dbmi-bgm/cgap-portal's docker_development.ini.template, joined to the production nginx)."""
    names = ("app.ini.template", "app.ini.in", "app.ini.j2", "app.ini")
    write(tmp_path, dict.fromkeys(names, WAITRESS_SERVER))
    result = check_folder(tmp_path)
    assert sorted(chains(result, tmp_path)) == [(["app.ini:4"], "waitress", 1)]


def test_a_paste_ini_is_a_step_not_gunicorns_config(tmp_path: Path) -> None:
    """`gunicorn --paste Allura/docker-dev.ini -b :8088`: the ini gives the application, none
    of gunicorn's settings, so the launch's JSON names no config (its chain still holds the
    ini); with `-c gunicorn.conf.py` beside it, that file is the config (seen in
    apache/allura's Dockerfile)."""
    from servertune.check.graph import launch_json, launches

    for name, flags, config in (
        ("bare", "", None),
        ("conf", "-c gunicorn.conf.py ", "gunicorn.conf.py"),
    ):
        root = write(
            tmp_path / name,
            {
                "Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
                f"CMD gunicorn {flags}--paste app.ini -b :8088\n",
                "app.ini": WAITRESS_SERVER,
                **({"gunicorn.conf.py": "workers = 3\n"} if config else {}),
            },
        )
        result = check_folder(root)
        (launch,) = launches(result.apps, result.links)
        shown = launch_json(launch)["config"]
        assert (shown and shown.removeprefix(str(root) + "/")) == config, name
