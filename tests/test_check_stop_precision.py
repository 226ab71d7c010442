"""Issue 44: timeout and stop findings a maintainer would send. Each test writes small files
that reproduce a pattern a blind judge (acting as the projects' maintainer) would not send,
and pins the finding that holds there instead, or its absence."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.model import Finding
from servertune.machine import Machine

MACHINE = Machine(cores=2, somaxconn=4096)


def _findings(directory: Path, files: dict[str, str]) -> list[Finding]:
    paths = []
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(path)
    return list(check_files(paths, machine=MACHINE, env={}).findings)


def _rules(findings: list[Finding], rule: str) -> list[Finding]:
    return [f for f in findings if f.rule == rule]


_UWSGI_BEHIND_NGINX = """server {
    listen 80;
    location / {
        include uwsgi_params;
        uwsgi_pass 127.0.0.1:3031;%s
    }
}
"""

_HARAKIRI = "[uwsgi]\nmaster = true\nmodule = app\nsocket = 127.0.0.1:3031\nharakiri = %s\n"


def test_a_read_timeout_equal_to_the_app_timeout_is_no_finding(tmp_path: Path) -> None:
    """nginx's read timeout equal to harakiri (both defaults at 60 s, or 45 = 45 set on
    purpose; seen in alphagov+digitalmarketplace-docker-base, ThePalaceProject+circulation):
    uWSGI's master checks harakiri once a second, so both give up within that tick and
    nothing runs on: no warning. One second under it is still within the tick."""
    for harakiri, read in (("60", ""), ("45", "\n        uwsgi_read_timeout 45s;")):
        files = {"nginx.conf": _UWSGI_BEHIND_NGINX % read, "uwsgi.ini": _HARAKIRI % harakiri}
        assert not _rules(_findings(tmp_path, files), "app-timeout-over-read-timeout")
    files = {"nginx.conf": _UWSGI_BEHIND_NGINX % "", "uwsgi.ini": _HARAKIRI % "61"}
    assert not _rules(_findings(tmp_path, files), "app-timeout-over-read-timeout")


def test_a_read_timeout_clearly_below_the_app_timeout_says_the_gap(tmp_path: Path) -> None:
    """nginx gives up at its default 60 s on a harakiri of 90 s: the worker runs on for up to
    30 s after the 504; the warning says that gap in seconds, and the fix is still 95 s."""
    files = {"nginx.conf": _UWSGI_BEHIND_NGINX % "", "uwsgi.ini": _HARAKIRI % "90"}
    (finding,) = _rules(_findings(tmp_path, files), "app-timeout-over-read-timeout")
    assert finding.message.startswith("uwsgi_read_timeout 60 s (default) gives up 30 s before")
    assert "for up to 30 s more" in finding.message
    assert finding.fix == "uwsgi_read_timeout 95s;"
    assert "check-interval" in finding.backing


_SUPERVISED = """[supervisord]
nodaemon = true

[program:web]
command = %s
stopwaitsecs = 9
%s
"""

_SUPERVISED_IMAGE = """FROM python:3.12-slim
COPY supervisord.conf /etc/supervisord.conf
COPY . /app
CMD ["supervisord", "-n", "-c", "/etc/supervisord.conf"]
"""


def test_a_stopsignal_other_than_term_silences_the_sigterm_rules(tmp_path: Path) -> None:
    """supervisord's `stopsignal = USR1` in front of uWSGI without die-on-term (USR1 prints
    uWSGI's stats; the program waits for the SIGKILL on purpose: seen in
    alphagov+digitalmarketplace-docker-base): uWSGI never gets SIGTERM, so neither
    uwsgi-sigterm-reloads nor a wait below a graceful timeout is said. With the default
    TERM, uwsgi-sigterm-reloads is."""
    ini = "[uwsgi]\nmaster = true\nmodule = app\nhttp-socket = :8000\n"
    command = "uwsgi --ini /app/uwsgi.ini"
    for signal, said in (("stopsignal = USR1", False), ("", True)):
        files = {
            "supervisord.conf": _SUPERVISED % (command, signal),
            "uwsgi.ini": ini,
            "Dockerfile": _SUPERVISED_IMAGE,
        }
        found = {f.rule for f in _findings(tmp_path, files)}
        assert ("uwsgi-sigterm-reloads" in found) is said, (signal, found)
        assert "stop-signal-quick-shutdown" not in found


def test_stopsignal_kill_is_the_finding_not_the_waits_after_it(tmp_path: Path) -> None:
    """`stopsignal=KILL` for gunicorn with a 45 s graceful timeout in a compose service (seen in
    salopensource+sal): gunicorn is SIGKILLed at once, so neither stopwaitsecs nor compose's
    stop_grace_period is below anything that could run: the one finding is the KILL line,
    its fix SIGTERM."""
    files = {
        "supervisord.conf": _SUPERVISED
        % ("gunicorn -c /app/gunicorn.conf.py app:app", "stopsignal=KILL"),
        "gunicorn.conf.py": 'bind = "0.0.0.0:8000"\nworkers = 2\ngraceful_timeout = 45\n',
        "Dockerfile": _SUPERVISED_IMAGE,
        "compose.yaml": "services:\n  web:\n    build: .\n",
    }
    stops = [
        (f.rule, f.at.file.name, f.at.line, f.fix)
        for f in _findings(tmp_path, files)
        if f.rule
        in ("stop-signal-quick-shutdown", "stop-wait-below-graceful", "grace-period-below-shutdown")
    ]
    assert stops == [("stop-signal-quick-shutdown", "supervisord.conf", 7, "stopsignal = TERM")]
    (finding,) = _rules(_findings(tmp_path, files), "stop-signal-quick-shutdown")
    assert "SIGKILL stops gunicorn with no graceful stop at all" in finding.message
    assert "stopwaitsecs 9 s never applies" in finding.message


def test_a_stopsignal_kill_of_any_server_is_one_finding(tmp_path: Path) -> None:
    """`STOPSIGNAL SIGKILL` (or 9) in front of uvicorn: no server drains on a signal it cannot
    catch; one finding at that line, fixed with SIGTERM."""
    for written in ("SIGKILL", "9"):
        image = f'FROM python:3.12-slim\nSTOPSIGNAL {written}\nCMD ["uvicorn", "app:app"]\n'
        (finding,) = _rules(
            _findings(tmp_path, {"Dockerfile": image}), "stop-signal-quick-shutdown"
        )
        assert (finding.at.line, finding.fix) == (2, "STOPSIGNAL SIGTERM")


def test_the_process_managers_own_signal_reaches_the_server_not_the_containers(
    tmp_path: Path,
) -> None:
    """compose's `stop_signal: SIGINT` goes to supervisord, PID 1, which stops gunicorn with
    its own `stopsignal` (TERM by default): gunicorn drains, so no quick-shutdown finding; a
    supervisord `stopsignal = QUIT` is the one that counts."""
    base = {
        "gunicorn.conf.py": 'bind = "0.0.0.0:8000"\nworkers = 2\n',
        "Dockerfile": _SUPERVISED_IMAGE,
        "compose.yaml": "services:\n  web:\n    build: .\n    stop_signal: SIGINT\n",
    }
    command = "gunicorn -c /app/gunicorn.conf.py app:app"
    files = {**base, "supervisord.conf": _SUPERVISED % (command, "")}
    assert not _rules(_findings(tmp_path, files), "stop-signal-quick-shutdown")
    files = {**base, "supervisord.conf": _SUPERVISED % (command, "stopsignal = QUIT")}
    (finding,) = _rules(_findings(tmp_path, files), "stop-signal-quick-shutdown")
    assert (finding.at.file.name, finding.at.line) == ("supervisord.conf", 7)


_DIE_ON_TERM = (
    "[uwsgi]\nmaster = true\nmodule = app\nsocket = /tmp/nginx.socket\ndie-on-term = true\n"
)


def test_no_drain_is_promised_when_the_procfile_line_starts_nginx_too(tmp_path: Path) -> None:
    """`web: bin/start-nginx uwsgi --ini uwsgi.ini` (heroku-buildpack-nginx; seen in
    mitodl+open-discussions): Heroku's dyno manager sends SIGTERM to every process of the
    dyno, and nginx's fast shutdown closes the connections a drain would answer, so the
    hook's "let them finish" does not hold: no uwsgi-sigterm-cuts-requests. The same uWSGI
    alone on the line draws it."""
    for line, said in (
        ("bin/start-nginx uwsgi --ini uwsgi.ini", False),
        ("uwsgi --ini uwsgi.ini", True),
    ):
        files = {"Procfile": f"web: {line}\n", "uwsgi.ini": _DIE_ON_TERM}
        found = _rules(_findings(tmp_path, files), "uwsgi-sigterm-cuts-requests")
        assert bool(found) is said, line


def test_no_drain_is_promised_when_a_runit_service_beside_runs_nginx(tmp_path: Path) -> None:
    """phusion's my_init runs runit's services and stops them all together with SIGTERM (seen
    in ThePalaceProject+circulation): an nginx service beside uWSGI's shuts down at the same
    moment, so no uwsgi-sigterm-cuts-requests; without that service, the finding stays."""
    image = (
        "FROM phusion/baseimage:jammy-1.0.1\nCOPY runit/ /etc/service/\n"
        'COPY uwsgi.ini /app/uwsgi.ini\nCMD ["/sbin/my_init"]\n'
    )
    files = {
        "Dockerfile": image,
        "uwsgi.ini": _DIE_ON_TERM,
        "runit/uwsgi/run": "#!/bin/sh\nexec uwsgi --ini /app/uwsgi.ini\n",
    }
    assert _rules(_findings(tmp_path, files), "uwsgi-sigterm-cuts-requests")
    files["runit/nginx/run"] = (
        "#!/bin/bash\nset -e\nmkdir -p /var/log/nginx\nexec /usr/sbin/nginx\n"
    )
    assert not _rules(_findings(tmp_path, files), "uwsgi-sigterm-cuts-requests")


def test_a_longer_stop_wait_in_an_image_is_fixed_with_the_containers_stop_timeout(
    tmp_path: Path,
) -> None:
    """supervisord's `stopwaitsecs = 5` under gunicorn's 30 s graceful timeout, in an image
    nothing here runs (seen in QingdaoU+OnlineJudge): Docker SIGKILLs the container 10 s after
    its SIGTERM by default, so `stopwaitsecs = 35` alone would still end at 10 s; the fix
    raises the container's stop timeout with it, backed by `docker stop`'s reference."""
    files = {
        "supervisord.conf": (_SUPERVISED % ("gunicorn -w 2 app:app", "")).replace("= 9", "= 5"),
        "Dockerfile": _SUPERVISED_IMAGE,
    }
    (finding,) = _rules(_findings(tmp_path, files), "stop-wait-below-graceful")
    assert finding.fix.startswith("stopwaitsecs = 35   and with it the container's stop timeout")
    assert "`docker stop -t 40`" in finding.fix
    assert "docs.docker.com/reference/cli/docker/container/stop" in finding.backing
    alone = {"supervisord.conf": files["supervisord.conf"]}
    (finding,) = _rules(_findings(tmp_path, alone), "stop-wait-below-graceful")
    assert finding.fix == "stopwaitsecs = 35"  # no container known: the wait alone


def test_a_shell_form_under_compose_init_says_the_shell_dies_and_uwsgi_needs_its_stop(
    tmp_path: Path,
) -> None:
    """compose's `init: true` makes tini PID 1 (seen in Ninjaclasher+dmoj-docker): a shell-form
    `ENTRYPOINT uwsgi --ini uwsgi.ini` leaves /bin/sh its child, which dies of SIGTERM at once
    (not "stays PID 1"), and uWSGI is SIGKILLed as tini exits. With the config not read here,
    the one fix also names die-on-term and the hook: exec'd, uWSGI 2.0 reloads on SIGTERM
    without them. Without `init`, the message stays the PID-1 shell's."""
    image = "FROM python:3.12-slim\nRUN pip install uwsgi\nENTRYPOINT uwsgi --ini uwsgi.ini\n"
    compose = "services:\n  site:\n    build: .\n    init: true\n"
    files = {"Dockerfile": image, "compose.yaml": compose}
    (finding,) = _rules(_findings(tmp_path, files), "shell-form-command")
    assert "under compose's `init: true`" in finding.message
    assert "is not PID 1 and dies of it at once" in finding.message
    assert "stays PID 1" not in finding.message
    assert finding.fix.startswith(
        'ENTRYPOINT ["uwsgi", "--ini", "uwsgi.ini"]   and, unless uwsgi.ini'
    )
    assert "die-on-term = true" in finding.fix
    assert "krallin/tini" in finding.backing
    files["compose.yaml"] = "services:\n  site:\n    build: .\n"
    (finding,) = _rules(_findings(tmp_path, files), "shell-form-command")
    assert "stays PID 1" in finding.message


def test_an_s6_services_down_signal_is_the_signal_the_server_gets(tmp_path: Path) -> None:
    """s6-supervise stops a service with its `down-signal` file's signal instead of SIGTERM:
    `SIGQUIT` there for gunicorn is its quick shutdown, one finding at that file, whatever
    the image's STOPSIGNAL (which s6's /init gets, not gunicorn)."""
    service = "rootfs/etc/s6-overlay/s6-rc.d/web/"
    files = {
        "Dockerfile": 'FROM python:3.12\nCOPY rootfs /\nSTOPSIGNAL SIGINT\nENTRYPOINT ["/init"]\n',
        service + "run": "#!/bin/sh\nexec gunicorn -w 2 -b :8000 app:app\n",
        service + "down-signal": "SIGQUIT\n",
    }
    (finding,) = _rules(_findings(tmp_path, files), "stop-signal-quick-shutdown")
    assert (finding.at.file.name, finding.at.line) == ("down-signal", 1)
    assert finding.message.startswith("SIGQUIT stops gunicorn with its quick shutdown")


_START = "#!/bin/sh\nexport TZ=UTC\ngunicorn app:app --bind 0.0.0.0:8000\n"


def test_a_script_under_an_init_says_the_init_is_pid_1_not_the_shell(tmp_path: Path) -> None:
    """A script run by `tini --` (or `dumb-init`) starts gunicorn without exec: the shell is not
    PID 1, it dies of the SIGTERM the init passes on (to it alone; to its group under dumb-init
    or `tini -g`, where gunicorn gets it too), the init exits with it, and gunicorn is SIGKILLed
    as PID 1 ends; the fix stays `exec` (seen in LinOTP+LinOTP and openreplay+openreplay)."""
    for entrypoint, gets in (
        ('["/sbin/tini", "--"]', "to its child alone"),
        ('["tini", "-g", "--"]', "whole process group"),
        ('["dumb-init"]', "whole process group"),
    ):
        dockerfile = f"FROM python:3.12\nCOPY start.sh /start.sh\nENTRYPOINT {entrypoint}\n"
        dockerfile += 'CMD ["/start.sh"]\n'
        found = _findings(tmp_path, {"Dockerfile": dockerfile, "start.sh": _START})
        (finding,) = _rules(found, "entrypoint-without-exec")
        assert "the shell is not PID 1" in finding.message, entrypoint
        assert "stays PID 1" not in finding.message
        assert gets in finding.message
        assert "SIGKILLs gunicorn" in finding.message
        assert finding.fix == "exec gunicorn app:app --bind 0.0.0.0:8000"
        assert "pid_namespaces" in finding.backing


_SUPERVISORD = "[supervisord]\nnodaemon=true\n\n[program:web]\ncommand=/srv/start.sh\n"


def test_supervisord_run_without_exec_and_its_programs_shell_are_both_found(
    tmp_path: Path,
) -> None:
    """An image's script ends in `supervisord -c ...` without exec: the shell stays PID 1 and
    docker stop never reaches supervisord (its line, fixed with exec); the program's script
    runs gunicorn without exec: supervisord stops the program by signalling that shell alone,
    not PID 1, which dies and leaves gunicorn to the container's SIGKILL (seen in
    photonixapp+photonix)."""
    files = {
        "Dockerfile": 'FROM python:3.12\nCOPY . /srv\nCMD ["/srv/run.sh"]\n',
        "run.sh": "#!/bin/sh\npython manage.py migrate\nsupervisord -c /srv/supervisord.conf\n",
        "supervisord.conf": _SUPERVISORD,
        "start.sh": _START,
    }
    found = _rules(_findings(tmp_path, files), "entrypoint-without-exec")
    by_file = {f.at.file.name: f for f in found}
    assert sorted(by_file) == ["run.sh", "start.sh"]
    assert by_file["run.sh"].at.line == 3
    assert by_file["run.sh"].fix == "exec supervisord -c /srv/supervisord.conf"
    assert "never reaches supervisord" in by_file["run.sh"].message
    assert "[program:web]" in by_file["start.sh"].message
    assert "stays PID 1" not in by_file["start.sh"].message


def test_eval_of_a_command_that_does_not_exec_is_the_shells_child(tmp_path: Path) -> None:
    """`COMMAND="uwsgi --ini uwsgi.ini"` then `eval $COMMAND`: the evaluated text runs as the
    shell's child, the shell stays PID 1 (seen in pinterest+querybook); the fix is `eval exec
    $COMMAND` (exec cannot run the builtin eval); a text that starts with `exec` is silent."""
    script = '#!/bin/bash\nCOMMAND="%suwsgi --ini uwsgi.ini"\neval $COMMAND\n'
    ini = "[uwsgi]\nmaster = true\nmodule = app\nhttp = :8000\ndie-on-term = true\n"
    dockerfile = 'FROM python:3.12\nCOPY . /app\nWORKDIR /app\nCMD ["/app/run.sh"]\n'
    files = {"Dockerfile": dockerfile, "run.sh": script % "", "uwsgi.ini": ini}
    (finding,) = _rules(_findings(tmp_path, files), "entrypoint-without-exec")
    assert (finding.at.file.name, finding.at.line) == ("run.sh", 3)
    assert finding.fix == "eval exec $COMMAND"
    files["run.sh"] = script % "exec "
    assert not _rules(_findings(tmp_path, files), "entrypoint-without-exec")


def _supervised(uwsgi_priority: str, nginx_priority: str, nginx_stop: str) -> dict[str, str]:
    """A supervisord config running uWSGI (die-on-term) and the nginx in front of it."""
    conf = (
        "[supervisord]\nnodaemon=true\n\n"
        f"[program:uwsgi]\n{uwsgi_priority}command=/usr/sbin/uwsgi --ini /app/uwsgi.ini\n\n"
        f"[program:nginx]\n{nginx_priority}command=/usr/sbin/nginx -c /app/nginx.conf\n"
        f"{nginx_stop}"
    )
    return {
        "Dockerfile": "FROM python:3.11\nCOPY . /app\n"
        'CMD ["/usr/bin/supervisord", "-n", "-c", "/app/supervisord.conf"]\n',
        "supervisord.conf": conf,
        "uwsgi.ini": _DIE_ON_TERM,
    }


def test_no_cut_when_supervisord_stops_a_draining_nginx_first(tmp_path: Path) -> None:
    """supervisord stops its programs from the highest `priority` down, each stopped before
    the next (seen in JobtechSwe+sokannonser-api: uwsgi priority 1, nginx priority 10 with
    `stopsignal=QUIT`): nginx answers every request in flight, uWSGI still running, before
    uWSGI gets its SIGTERM, so die-on-term cuts nothing: no uwsgi-sigterm-cuts-requests.
    With nginx stopped by TERM (its fast shutdown), with the same priority (no order
    promised), or stopped after uWSGI (a lower priority), the finding stays."""
    for uwsgi, nginx, stop, said in (
        ("priority=1\n", "priority=10\n", "stopsignal=QUIT\n", False),
        ("priority=1\n", "", "stopsignal = quit\n", False),  # nginx at the default 999
        ("priority=1\n", "priority=10\n", "", True),
        ("", "", "stopsignal=QUIT\n", True),
        ("priority=20\n", "priority=10\n", "stopsignal=QUIT\n", True),
    ):
        found = _rules(
            _findings(tmp_path, _supervised(uwsgi, nginx, stop)), "uwsgi-sigterm-cuts-requests"
        )
        assert bool(found) is said, (uwsgi, nginx, stop)


def test_an_s6_run_script_without_exec_says_s6_overlay_is_pid_1(tmp_path: Path) -> None:
    """An s6-overlay service's `run` script that starts gunicorn without exec: the shell is
    not PID 1, s6-overlay's /init is; s6-supervise's SIGTERM kills the shell alone, and
    gunicorn gets SIGTERM only at the shutdown's end, SIGKILLed S6_KILL_GRACETIME later; the
    fix stays `exec` (seen in code4romania/redirectioneaza's backend service)."""
    service = "rootfs/etc/s6-overlay/s6-rc.d/web/"
    files = {
        "Dockerfile": 'FROM python:3.12\nCOPY rootfs /\nENTRYPOINT ["/init"]\n',
        service + "run": _START,
    }
    (finding,) = _rules(_findings(tmp_path, files), "entrypoint-without-exec")
    assert "the shell is not PID 1: s6-overlay's /init (" in finding.message
    assert "stays PID 1" not in finding.message
    assert "S6_KILL_GRACETIME" in finding.message
    assert finding.fix.startswith("exec gunicorn")
    assert "just-containers/s6-overlay" in finding.backing
