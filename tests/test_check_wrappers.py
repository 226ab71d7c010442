"""Issue 44: wrappers and supervisors that run the server check reads. A wrapper whose
documented syntax puts the command after its own options and `--` (watchdog's `watchmedo
auto-restart`) runs that command; monofy runs every `|||`-separated command side by side after
its `&&` pre-commands; a supervisord [include] folder copied into an image holds the programs."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import describe, launches
from tests.folder_support import chains, check_folder, write


def test_watchmedo_auto_restart_runs_the_command_after_its_options_as_a_reloading_launch(
    tmp_path: Path,
) -> None:
    """`watchmedo auto-restart --directory=/app -p '*.py' --recursive -- SCRIPT ARGS` runs the
    script after `--` (seen in roboflow/inference's Dockerfile.onnx.cpu.dev), and the same
    wrapper before a server's own command line runs that server: each is a launch, shown as one
    that reloads on code changes (watchmedo restarts it on every change), not "starts no server"."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY start.sh /usr/local/bin/start.sh\n"
            "ENTRYPOINT watchmedo auto-restart --directory=/app -p '*.py' --recursive "
            "-- /usr/local/bin/start.sh main:app\n",
            "start.sh": '#!/bin/sh\nexec uvicorn "$1" --host 0.0.0.0 --port 9001\n',
            "api/Dockerfile": "FROM python:3.12\n"
            'CMD ["watchmedo", "auto-restart", "-d", "/app", "--signal", "SIGTERM", "--",'
            ' "gunicorn", "-w", "3", "-b", "0.0.0.0:8000", "app:app"]\n',
        },
    )
    result = check_folder(tmp_path)
    assert not [n for n in result.notes if n.kind == "starts-no-server"]
    found = sorted((c[0][0], c[1]) for c in chains(result, tmp_path))
    assert found == [("Dockerfile:4", "uvicorn"), ("api/Dockerfile:2", "gunicorn")]
    lines = [describe(one) for one in launches(result.apps, result.links)]
    assert len(lines) == 2
    assert all("(reloads on code changes" in line for line in lines)


def test_monofy_runs_the_server_among_its_side_by_side_commands_after_its_pre_commands(
    tmp_path: Path,
) -> None:
    """`monofy PRE && PRE && gunicorn ... ||| worker` (exec form, as bugsink/bugsink's
    Dockerfile CMD): the `&&` pre-commands run first, then every `|||` command side by side;
    the gunicorn among them is the launch, read with its `--config` file, and its
    `--bind=0.0.0.0:$PORT` is expanded from the image's ENV as monofy itself expands it.
    Behind `tini --`, and with a script as the side-by-side command, the same holds."""
    conf = "workers = 3\n"
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nENV PORT=8123\nWORKDIR /app\nCOPY . /app/\n"
            'CMD ["monofy", "app-check", "--deploy", "&&", "app-migrate", "&&", "gunicorn",'
            ' "--config", "conf/gunicorn.conf.py", "--bind=0.0.0.0:$PORT", "app.wsgi",'
            ' "|||", "app-worker", "-v"]\n',
            "conf/gunicorn.conf.py": conf,
            "web/Dockerfile": "FROM python:3.12\nCOPY start.sh /start.sh\n"
            'ENTRYPOINT ["tini", "--", "monofy", "setup", "&&", "worker", "|||", "/start.sh"]\n',
            "web/start.sh": "#!/bin/sh\nexec uvicorn main:app --host 0.0.0.0 --port 8200\n",
        },
    )
    result = check_folder(tmp_path)
    assert not [n for n in result.notes if n.kind in ("not-followed", "starts-no-server")]
    found = sorted(chains(result, tmp_path))
    assert found == [
        (["Dockerfile:5", "conf/gunicorn.conf.py:1"], "gunicorn", 3),
        (["web/Dockerfile:3", "web/start.sh:2"], "uvicorn", 1),
    ]
    (gunicorn,) = [a for a in result.apps if a.kind == "gunicorn"]
    assert [s.value for s in gunicorn.sockets] == ["0.0.0.0:8123"]


def test_environment_loaders_and_scheduling_wrappers_run_the_server_after_them(
    tmp_path: Path,
) -> None:
    """daemontools' `envdir DIR cmd` (a systemd unit's `ExecStart=/usr/bin/envdir /etc/app.d/env
    gunicorn --config ...`, as azavea/model-my-watershed's systemd-app.service.j2), s6's
    `s6-envdir DIR cmd`, daemontools' `setuidgid USER cmd`, util-linux's `ionice -c 2 -n 7 cmd`
    and `taskset -c 0,1 cmd` run the server after their own words: each line is a launch of
    that server read with its config, not "starts no server"."""
    write(
        tmp_path,
        {
            "deploy/app.service": "[Service]\nWorkingDirectory=/srv/app\n"
            "ExecStart=/usr/bin/envdir /etc/app.d/env gunicorn --config gunicorn.conf.py"
            " app:app\n",
            "gunicorn.conf.py": "bind = '127.0.0.1:8001'\nworkers = 3\n",
            "s6/Dockerfile": "FROM python:3.12\n"
            'CMD ["s6-envdir", "/run/env", "setuidgid", "app", "uvicorn", "app:app"]\n',
            "io/Dockerfile": "FROM python:3.12\n"
            'CMD ["ionice", "-c", "2", "-n", "7", "taskset", "-c", "0,1", "gunicorn",'
            ' "-w", "2", "app:app"]\n',
        },
    )
    result = check_folder(tmp_path)
    assert not [n for n in result.notes if n.kind == "starts-no-server"]
    found = sorted((c[0][0].split(":")[0], c[1]) for c in chains(result, tmp_path))
    assert found == [
        ("deploy/app.service", "gunicorn"),
        ("io/Dockerfile", "gunicorn"),
        ("s6/Dockerfile", "uvicorn"),
    ]
    workers = {a.workers.value for a in result.apps if a.kind == "gunicorn" and a.workers}
    assert workers == {3, 2}


def test_tini_options_are_no_program_and_a_module_with_flags_is_not_followed(
    tmp_path: Path,
) -> None:
    """`ENTRYPOINT ["tini", "-g", "--", "env/bin/python", "-m", "pkg.main", "--single-process"]`
    runs the project's module (its flags change nothing: its own code serves), so it is one
    `not-followed` naming the module, never "starts no server" said of '-g -- ...' (seen in
    SwissDataScienceCenter/renku-data-services); an image starting nothing is named by its
    whole command, tini and its options first."""
    write(
        tmp_path,
        {
            "api/Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n"
            'ENTRYPOINT ["tini", "-g", "--", "env/bin/python", "-m", "pkg.main",'
            ' "--single-process"]\n',
            "idle/Dockerfile": "FROM python:3.12\n"
            'ENTRYPOINT ["tini", "-g", "-s", "--", "sleep", "infinity", "with", "more", "words"]\n',
        },
    )
    result = check_folder(tmp_path)
    (followed,) = [n for n in result.notes if n.kind == "not-followed"]
    assert followed.at.file.parent.name == "api"
    assert "'env/bin/python -m pkg.main --single-process'" in followed.message
    (idle,) = [n for n in result.notes if n.kind == "starts-no-server"]
    assert "'tini -g -s -- sleep infinity with more words'" in idle.message
