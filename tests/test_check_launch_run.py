"""Launchers that the image's process supervisor or a wrapper starts: a command held in a
variable behind a privilege-drop wrapper, an `ExecStart=` interpreter running a script beside
its unit, runit service directories, consul-template `exec` blocks, unset variables in a
config path, and deployed absolute paths whose tail is in the repository. Each fixture is a
small repository written here for the cause it pins."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launches
from tests.folder_support import chains, check_folder, write


def test_privilege_drop_wrapper_before_a_command_variable_runs_its_value(
    tmp_path: Path,
) -> None:
    """`CMD="uvicorn main:app ..."` then `exec gosu "$UID:$GID" $CMD`: gosu runs the words the
    unquoted variable splits into, as `exec $CMD` alone does, so the script starts uvicorn
    (seen in joaovitoriasilva+endurain's docker/start.sh)."""
    root = write(
        tmp_path,
        {
            "Dockerfile": ('FROM python:3.12\nCOPY start.sh /start.sh\nCMD ["/start.sh"]\n'),
            "start.sh": (
                "#!/bin/sh\nset -e\n"
                'CMD="uvicorn main:app --host 0.0.0.0 --port 8080"\n'
                'if [ "$BEHIND_PROXY" = "true" ]; then\n'
                '    CMD="$CMD --proxy-headers"\nfi\n'
                'exec gosu "$UID:$GID" $CMD\n'
            ),
        },
    )
    result = check_folder(root)
    assert [(c[1], c[2]) for c in chains(result, root)] == [("uvicorn", 1)]


def test_exec_start_shell_runs_the_script_beside_the_unit(tmp_path: Path) -> None:
    """`ExecStart=/bin/sh {working_dir}/start.sh` (a folder filled in when the unit is
    installed): the script of that name beside the unit is what the shell runs, so the unit
    starts its uvicorn; run without `exec`, it still gets the stop signal, which systemd sends
    to every process of the unit (seen in dstackai+dstack's gateway unit)."""
    root = write(
        tmp_path,
        {
            "deploy/app.service": (
                "[Service]\nExecStart=/bin/sh {working_dir}/start.sh\n"
                "WorkingDirectory={working_dir}\n"
            ),
            "deploy/start.sh": "#!/bin/sh\ncd /srv\nuvicorn app.main:app --port 8001\n",
            "start.sh": "#!/bin/sh\necho unrelated\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["deploy/app.service:2", "deploy/start.sh:3"], "uvicorn", 1)]
    # systemd's default KillMode=control-group signals the script's child server too: the
    # missing `exec` stops nothing.
    assert not [f for f in result.findings if f.rule == "entrypoint-without-exec"]


def test_deployed_absolute_path_maps_to_its_longest_tail_in_the_repository(
    tmp_path: Path,
) -> None:
    """`ExecStart=/webapps/site/bin/gunicorn_start`: the deployed checkout's path is not in the
    repository as written, but its tail `bin/gunicorn_start` is, at the checkout's root above
    the unit's folder: the unit runs that script (seen in ebmdatalab+openprescribing's
    contrib/systemd unit)."""
    root = write(
        tmp_path,
        {
            "contrib/systemd/app.web.service": (
                "[Service]\nExecStart=/webapps/site/bin/gunicorn_start\n"
            ),
            "bin/gunicorn_start": (
                "#!/bin/bash\nexec gunicorn site.wsgi --workers 3 --bind 127.0.0.1:8000\n"
            ),
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [
        (["contrib/systemd/app.web.service:2", "bin/gunicorn_start:2"], "gunicorn", 3)
    ]


def test_config_path_through_a_variable_no_file_sets_is_read_as_the_shell_empties_it(
    tmp_path: Path,
) -> None:
    """`uwsgi --ini "${SCRIPTPATH}/uwsgi.ini"` with SCRIPTPATH set by no file read: the shell
    runs `/uwsgi.ini`, which the image's `COPY bin/uwsgi.ini /` provides, so that config is
    read (no config-not-found) and an unresolved-variable note says how it was read (seen in
    open-zaak+open-zaak's bin/docker_start.sh)."""
    root = write(
        tmp_path,
        {
            "Dockerfile": (
                "FROM python:3.12\nCOPY bin/start.sh /start.sh\nCOPY bin/uwsgi.ini /\n"
                'CMD ["/start.sh"]\n'
            ),
            "bin/start.sh": (
                '#!/bin/sh\nexec uwsgi --ini "${SCRIPTPATH}/uwsgi.ini" --http :8000 '
                "--module app.wsgi --master --processes 4 --die-on-term\n"
            ),
            "bin/uwsgi.ini": "[uwsgi]\nthreads = 3\n",
        },
    )
    result = check_folder(root)
    (launch,) = [
        launch.app for launch in launches(result.apps, result.links, result.balancer_links)
    ]
    assert launch.config_file is not None
    assert launch.config_file.file == root / "bin/uwsgi.ini"
    assert launch.threads.value == 3
    assert not [f for f in result.findings if f.rule == "config-not-found"]
    (note,) = [n for n in result.notes if n.kind == "unresolved-variable"]
    assert "SCRIPTPATH set by no file read, so read as '/uwsgi.ini'" in note.message


def test_command_substitution_in_a_command_variable_is_one_unresolved_word(
    tmp_path: Path,
) -> None:
    """`ENV=$(echo $SETTINGS | cut -d \\. -f 3)`, `NAME="site_$ENV"`, then `exec $cmd` with
    `--name $NAME` in cmd: the substitution's output is one field the shell splits nothing in,
    so `--name site_$(...)` is the one unresolved word, never options `-d -f` of gunicorn nor
    fragments such as `3)` (seen in ebmdatalab+openprescribing's bin/gunicorn_start)."""
    root = write(
        tmp_path,
        {
            "start.sh": (
                "#!/bin/bash\n"
                "ENV=$(echo $SETTINGS | cut -d \\. -f 3)\n"
                'NAME="site_$ENV"\n'
                'cmd="gunicorn site.wsgi:application --name $NAME --workers 3 --bind :8000"\n'
                "exec $cmd\n"
            ),
        },
    )
    result = check_folder(root)
    assert [(c[1], c[2]) for c in chains(result, root)] == [("gunicorn", 3)]
    assert not [n for n in result.notes if n.kind == "server-version"]
    unresolved = [
        n.message.split("': ")[0] for n in result.notes if n.kind == "unresolved-variable"
    ]
    assert unresolved == ["'--name site_$(echo $SETTINGS | cut -d \\\\. -f 3)"]


RUNIT_IMAGE = {
    "Dockerfile": (
        "FROM example/runit-python:3.12\n"
        "COPY services/web/uwsgi.ini /etc/uwsgi/web.ini\n"
        "COPY services/web/consul-template-web.conf /etc/consul-template-web.conf\n"
        "COPY services/web/web.service /etc/service/web/run\n"
        "COPY services/api/uwsgi.ini /etc/uwsgi/api.ini\n"
        "COPY services/api/consul-template-api.conf /etc/consul-template-api.conf\n"
        "COPY services/api/api.service /etc/service/api/run\n"
    ),
    "services/web/web.service": (
        "#!/bin/bash\nsleep 1\nexec run-consul-template -config /etc/consul-template-web.conf\n"
    ),
    "services/web/consul-template-web.conf": (
        'template {\n    source = "/etc/app.ctmpl"\n    destination = "/etc/app.py"\n}\n\n'
        'exec {\n    command = ["uwsgi", "--ini", "/etc/uwsgi/web.ini"]\n'
        '    kill_signal = "SIGTERM"\n}\n'
    ),
    "services/web/uwsgi.ini": (
        "[uwsgi]\nsocket = 0.0.0.0:3031\nmodule = app.wsgi\nmaster = true\nprocesses = 4\n"
    ),
    "services/api/api.service": (
        "#!/bin/bash\nexec consul-template -config=/etc/consul-template-api.conf\n"
    ),
    "services/api/consul-template-api.conf": (
        'exec {\n  command = "uwsgi --ini /etc/uwsgi/api.ini"\n}\n'
    ),
    "services/api/uwsgi.ini": (
        "[uwsgi]\nsocket = 0.0.0.0:3032\nmodule = api.wsgi\nmaster = true\nprocesses = 2\n"
    ),
}


def test_runit_service_run_scripts_and_consul_template_exec_blocks_are_launchers(
    tmp_path: Path,
) -> None:
    """An image that sets no command and copies `web.service` to `/etc/service/web/run` runs it
    under its base image's runit, whatever the file's name here, and every service folder's
    `run` that starts a server runs beside the others; a run script's `consul-template -config
    FILE` (or a wrapper of it) starts the command of that config's `exec { command = ... }`
    block, a list or a string (seen in metabrainz+listenbrainz-server's docker/services)."""
    root = write(tmp_path, RUNIT_IMAGE)
    result = check_folder(root)
    assert sorted(chains(result, root)) == [
        (
            [
                "Dockerfile:1",
                "services/api/api.service:2",
                "services/api/consul-template-api.conf:2",
                "services/api/uwsgi.ini:2",
            ],
            "uwsgi",
            2,
        ),
        (
            [
                "Dockerfile:1",
                "services/web/web.service:3",
                "services/web/consul-template-web.conf:7",
                "services/web/uwsgi.ini:2",
            ],
            "uwsgi",
            4,
        ),
    ]


def test_development_server_in_the_foreground_before_exec_arguments_is_a_development_launch(
    tmp_path: Path,
) -> None:
    """An entrypoint that runs `python3 manage.py runserver 0.0.0.0:8000` and then `exec "$@"`:
    the development server serves until stopped, so the launch graph names it as a
    development launch (not sized) instead of only "ends in exec "$@"" (seen in
    yogeshojha+rengine's web/entrypoint.sh); one run in the background is not named."""
    root = write(
        tmp_path,
        {
            "entrypoint.sh": (
                "#!/bin/bash\npython3 manage.py migrate\n"
                'python3 manage.py runserver 0.0.0.0:8000\nexec "$@"\n'
            ),
            "worker.sh": ('#!/bin/bash\npython3 manage.py runserver 0.0.0.0:8001 &\nexec "$@"\n'),
        },
    )
    result = check_folder(root)
    development = [n for n in result.notes if n.kind == "development-launch"]
    assert [(n.at.file.name, n.at.line) for n in development] == [("entrypoint.sh", 3)]
    assert "Django's development server, run in the foreground" in development[0].message


def test_socket_activated_uwsgi_keeps_its_http_router_beside_the_inherited_socket(
    tmp_path: Path,
) -> None:
    """`uwsgi --http :8000 ... --socket /run/app.sock` under a socket unit listening on
    /run/app.sock: uWSGI takes the inherited socket for its uwsgi-protocol `socket`, and its
    HTTP router still binds :8000, so both are the server's addresses (seen in
    open-zaak+open-zaak's docs/installation/code/openzaak.service)."""
    root = write(
        tmp_path,
        {
            "app.socket": "[Socket]\nListenStream=/run/app/app.sock\n",
            "app.service": (
                "[Service]\nExecStart=/srv/env/bin/uwsgi --http :8000 --module site.wsgi "
                "--processes 2 --socket /run/app/app.sock\n"
            ),
        },
    )
    (app,) = check_folder(root).apps
    assert [s.value for s in app.sockets] == ["unix:/run/app/app.sock", "0.0.0.0:8000"]
