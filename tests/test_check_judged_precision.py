"""Issue 44: findings as a maintainer would send them. A stop wait written short on purpose
against a graceful timeout nobody set is a note, not a warning; an nginx that only serves files
behind a balancer that replays idempotent requests (Go's transport: Traefik, Caddy) is a note
too; the same fault in copies of one file is one finding; a uvicorn whose project installs
uvloop (`uvicorn[standard]`) does not leave Nagle's algorithm on."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.balancers import LOAD_BALANCERS
from servertune.check.model import Finding, Severity
from servertune.machine import Machine
from tests.folder_support import check_folder, write

MACHINE = Machine(cores=2, somaxconn=4096)

_SUPERVISORD = """[supervisord]
nodaemon=true

[program:web]
command=gunicorn --workers 2 --bind 127.0.0.1:8000%s app:app
stopwaitsecs = 5
"""

_UNIT = """[Unit]
Description=web

[Service]
ExecStart=/srv/venv/bin/gunicorn --workers 2 --bind 127.0.0.1:8000%s app:app
TimeoutStopSec=5
KillMode=mixed

[Install]
WantedBy=multi-user.target
"""


def _findings(directory: Path, files: dict[str, str]) -> list[Finding]:
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)
    paths = [directory / name for name in files]
    return list(check_files(paths, machine=MACHINE, env={}, root=directory).findings)


def _one(findings: list[Finding], rule: str) -> Finding:
    (found,) = [f for f in findings if f.rule == rule]
    return found


def test_a_short_stop_wait_against_the_default_graceful_timeout_is_a_note(
    tmp_path: Path,
) -> None:
    """`stopwaitsecs = 5` written in supervisord's config, gunicorn's graceful_timeout and
    timeout left at their defaults: nothing says a request runs past 5 s, so the finding is a
    note (seen on QingdaoU/OnlineJudge deploy/supervisord.conf); the same with
    `--graceful-timeout 60` or `--timeout 60` written stays a warning (DOAJ's 40 s)."""
    note = _one(
        _findings(tmp_path / "a", {"supervisord.conf": _SUPERVISORD % ""}),
        "stop-wait-below-graceful",
    )
    assert note.severity is Severity.info
    assert "a note, not a warning" in note.message
    for flag in (" --graceful-timeout 60", " --timeout 60"):
        files = {"supervisord.conf": _SUPERVISORD % flag}
        found = _one(_findings(tmp_path / flag.split()[0][2:], files), "stop-wait-below-graceful")
        assert found.severity is Severity.warning, flag


def test_a_short_timeoutstopsec_against_the_default_graceful_timeout_is_a_note(
    tmp_path: Path,
) -> None:
    """systemd's `TimeoutStopSec=5` written in the unit against gunicorn's default graceful
    timeout is a note (seen on tournesol-app/tournesol's gunicorn.service.j2)."""
    found = _findings(tmp_path, {"gunicorn.service": _UNIT % ""})
    assert _one(found, "stop-wait-below-graceful").severity is Severity.info


_NGINX = """events {}
http {
    keepalive_timeout 65;
    server {
        listen 127.0.0.1:8080;
        location / { %s }
    }
}
"""

_CADDY = "app.example.com {\n\treverse_proxy 127.0.0.1:8080\n}\n"


def test_a_files_only_nginx_behind_caddy_is_a_note(tmp_path: Path) -> None:
    """Caddy (Go's transport, which sends a GET again on a new connection when a reused one is
    closed before any answer) in front of an nginx server that only serves files (`root`,
    `try_files`, no proxy_pass): lb-idle-over-nginx-keepalive is a note (seen on
    MaibornWolff/SecObserve's SPA nginx behind Traefik); the same nginx passing `/` on with
    proxy_pass stays a warning, as POSTs are not replayed, and so does the files-only nginx
    behind an AWS ALB, which replays nothing."""
    static = {"Caddyfile": _CADDY, "nginx.conf": _NGINX % "root /srv; try_files $uri /index.html;"}
    note = _one(_findings(tmp_path / "static", static), "lb-idle-over-nginx-keepalive")
    assert note.severity is Severity.info
    assert "passes nothing on" in note.message
    proxied = {"Caddyfile": _CADDY, "nginx.conf": _NGINX % "proxy_pass http://127.0.0.1:8000;"}
    warning = _one(_findings(tmp_path / "proxied", proxied), "lb-idle-over-nginx-keepalive")
    assert warning.severity is Severity.warning

    # An AWS ALB does not replay a request on a closed connection: no note behind it.
    path = tmp_path / "alb" / "nginx.conf"
    path.parent.mkdir()
    path.write_text(_NGINX.replace("65", "50") % "root /srv;")
    report = check_files([path], machine=MACHINE, env={}, lb=LOAD_BALANCERS["aws-alb"])
    alb = _one(list(report.findings), "lb-idle-over-nginx-keepalive")
    assert alb.severity is not Severity.info


def test_a_short_nginx_keepalive_behind_a_go_balancer_is_a_warning(tmp_path: Path) -> None:
    """nginx passing `/` on with `keepalive_timeout 5` behind Caddy (Go's transport, which
    sends a GET again on a new connection when a reused one is closed first): the race loses
    only POSTs, so lb-idle-over-nginx-keepalive is a warning saying why, not an error (seen on
    SelfhostedPro/Yacht's nginx under Traefik); behind an AWS ALB, which replays nothing, the
    same nginx stays an error."""
    nginx = _NGINX.replace("65", "5") % "proxy_pass http://127.0.0.1:8000;"
    found = _one(
        _findings(tmp_path / "caddy", {"Caddyfile": _CADDY, "nginx.conf": nginx}),
        "lb-idle-over-nginx-keepalive",
    )
    assert found.severity is Severity.warning
    assert "not an error" in found.message
    path = tmp_path / "alb" / "nginx.conf"
    path.parent.mkdir()
    path.write_text(nginx)
    report = check_files([path], machine=MACHINE, env={}, lb=LOAD_BALANCERS["aws-alb"])
    assert _one(list(report.findings), "lb-idle-over-nginx-keepalive").severity is Severity.error


_ROUTES = """events {}
http {
    server {
        listen 80;
        proxy_read_timeout 600s;
        location / { proxy_pass http://127.0.0.1:8000; }
        location /api {
            # API endpoints should answer quickly
            proxy_read_timeout %s;
            proxy_pass http://127.0.0.1:8000;
        }
    }
}
"""


def test_a_route_s_own_shorter_read_timeout_is_a_note(tmp_path: Path) -> None:
    """`location /api` writes proxy_read_timeout 30s under a server block that waits 600 s on
    the same gunicorn (timeout 40): the shorter wait is that route's choice, so
    app-timeout-over-read-timeout is a note whose fix keeps the value (seen on DOAJ/doaj's
    production nginx); the same 30 s in every route (the server block's own) stays a
    warning."""
    app = {"gunicorn.conf.py": "bind = '127.0.0.1:8000'\ntimeout = 40\n"}
    found = _one(
        _findings(tmp_path / "route", {**app, "nginx.conf": _ROUTES % "30s"}),
        "app-timeout-over-read-timeout",
    )
    assert (found.at.line, found.severity) == (9, Severity.info)
    assert found.fix.startswith("nothing, if the shorter wait is this route's choice")
    every = _ROUTES.replace("600s", "30s") % "30s"
    kept = [
        f
        for f in _findings(tmp_path / "every", {**app, "nginx.conf": every})
        if f.rule == "app-timeout-over-read-timeout"
    ]
    assert kept
    assert all(f.severity is Severity.warning for f in kept)


_LOCATIONS = """events {}
http {
    server {
        listen 80;
        location /admin { proxy_read_timeout 45; proxy_pass http://127.0.0.1:8000; }
        location /api/feeds { proxy_read_timeout 600; proxy_pass http://127.0.0.1:8000; }
        location / { proxy_read_timeout 45; proxy_pass http://127.0.0.1:8000; }
    }
}
"""


def test_the_catch_all_s_own_shorter_read_timeout_is_a_note_like_any_route_s(
    tmp_path: Path,
) -> None:
    """`location /admin` and `location /` each write proxy_read_timeout 45 beside a route
    that waits 600 s on the same gunicorn (timeout 120): both are the maintainer's choice per
    location, so both are the same note, not one note and one warning (seen on
    intelowlproject/GreedyBear's configuration/nginx/http.conf)."""
    app = {"gunicorn.conf.py": "bind = '127.0.0.1:8000'\ntimeout = 120\n"}
    found = [
        f
        for f in _findings(tmp_path, {**app, "nginx.conf": _LOCATIONS})
        if f.rule == "app-timeout-over-read-timeout"
    ]
    assert sorted((f.at.line, f.severity) for f in found) == [
        (5, Severity.info),
        (7, Severity.info),
    ]


def test_the_same_fault_in_copies_of_one_file_is_one_finding(tmp_path: Path) -> None:
    """`deploy/supervisor/production/web.conf` and `.../test/web.conf`, copies that differ only
    in their environment, both leave stopwaitsecs at 10 s under `--graceful-timeout 40`: the
    report (after the ignores, as the CLI makes it) has one finding, at the first, naming the
    other ("also at"), as one issue covers both (seen on DOAJ/doaj)."""
    from servertune.check.settings import CheckSettings
    from servertune.check.suppress import suppress

    conf = (
        "[program:web]\ncommand=gunicorn --workers 2 --bind 127.0.0.1:8000 "
        "--graceful-timeout 40 app:app\nenvironment=APP_ENV=%s\n"
    )
    paths = []
    for env in ("production", "test"):
        path = tmp_path / "deploy" / "supervisor" / env / "web.conf"
        path.parent.mkdir(parents=True)
        path.write_text(conf % env)
        paths.append(path)
    result = check_files(paths, machine=MACHINE, env={}, root=tmp_path)
    reported = suppress(result, CheckSettings())
    found = [f for f in reported.findings if f.rule == "stop-wait-below-graceful"]
    assert len(found) == 1
    assert found[0].at.file.parent.name == "production"
    assert "also at" in found[0].message
    assert "test/web.conf:2" in found[0].message


def test_uvicorn_standard_in_the_projects_packaging_is_uvloop(tmp_path: Path) -> None:
    """`uvicorn --workers 4` on a TCP port with no front is uvicorn-workers-nagle, unless the
    project's packaging installs uvloop (`uvicorn[standard]` in requirements.txt, poetry's
    `uvicorn = { extras = ["standard"] }` in pyproject.toml), which `--loop auto` picks and
    which sets TCP_NODELAY (seen on cohere-ai/cohere-toolkit, dataelement/bisheng)."""
    from tests.folder_support import check_folder, write

    launch = {
        "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n"
        'CMD ["uvicorn", "app:app", "--workers", "4", "--host", "0.0.0.0", "--port", "8000"]\n',
        "app.py": "app = None\n",
    }
    rule = "uvicorn-workers-nagle"
    bare = check_folder(write(tmp_path / "bare", {**launch, "requirements.txt": "uvicorn\n"}))
    assert [f.rule for f in bare.findings if f.rule == rule] == [rule]
    for name, text in (
        ("requirements.txt", "fastapi\nuvicorn[standard]==0.30.0\n"),
        (
            "pyproject.toml",
            '[tool.poetry.dependencies]\nuvicorn = { extras = ["standard"], version = "*" }\n',
        ),
    ):
        root = write(tmp_path / name.replace(".", "_"), {**launch, name: text})
        assert not [f for f in check_folder(root).findings if f.rule == rule], name


def test_uvicorn_nagle_needs_packaging_that_shows_uvloop_absent(tmp_path: Path) -> None:
    """uvicorn-workers-nagle is said only where uvloop is shown absent: packaging here names
    uvicorn and none installs uvloop. With no packaging here (the image copies a requirements
    file generated elsewhere) uvloop may be installed, and nothing is said; a lock file that
    holds uvloop's own entry (Pipfile.lock, uv.lock) installs it; poetry.lock naming uvloop only
    in uvicorn's unchosen `standard` extra does not (seen on Opentrons/opentrons's ai server
    and pingcap/autoflow's backend, whose locks install uvloop)."""
    from tests.folder_support import check_folder, write

    launch = {
        "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n"
        'CMD ["uvicorn", "app:app", "--workers", "4", "--host", "0.0.0.0", "--port", "8000"]\n',
        "app.py": "app = None\n",
    }
    rule = "uvicorn-workers-nagle"
    poetry_lock = (
        '[[package]]\nname = "uvicorn"\nversion = "0.30.0"\n\n[package.extras]\n'
        'standard = ["httptools (>=0.5.0)", "uvloop (>=0.14.0)"]\n'
    )
    for name, files, said in (
        ("unknown", {}, False),
        (
            "pipfile",
            {
                "Pipfile": '[packages]\nfastapi = "*"\nuvicorn = "*"\n',
                "Pipfile.lock": '{"default": {"uvicorn": {"version": "==0.30.0"},'
                ' "uvloop": {"version": "==0.19.0"}}}\n',
            },
            False,
        ),
        (
            "uv",
            {
                "pyproject.toml": '[project]\nname = "x"\ndependencies = ["fastapi"]\n',
                "uv.lock": '[[package]]\nname = "uvloop"\nversion = "0.21.0"\n',
            },
            False,
        ),
        ("poetry", {"poetry.lock": poetry_lock}, True),
    ):
        root = write(tmp_path / name, {**launch, **files})
        found = [f for f in check_folder(root).findings if f.rule == rule]
        assert bool(found) is said, name


def test_a_fault_in_an_example_config_no_launch_starts_is_info_at_most(tmp_path: Path) -> None:
    """In a walked repository, `gthread` with one thread in gunicorn.example.conf.py and in
    deploy/gunicorn.conf.py, both read on their own, is a warning only where the file is not
    named as an example: the example copy (no launch here starts it) is said as info, with
    why; an example file the image's CMD starts keeps its warning (seen in Kinto/kinto-dist's
    config/example.ini)."""
    config = "bind = '0.0.0.0:8000'\nworker_class = 'gthread'\nthreads = 1\n"
    root = write(
        tmp_path / "alone",
        {"gunicorn.example.conf.py": config, "deploy/gunicorn.conf.py": config},
    )
    found = {
        (f.at.file.name, f.severity, "named as an example" in f.message)
        for f in check_folder(root).findings
        if f.rule == "gthread-one-thread"
    }
    assert found == {
        ("gunicorn.example.conf.py", Severity.info, True),
        ("gunicorn.conf.py", Severity.warning, False),
    }
    started = write(
        tmp_path / "started",
        {
            "example.conf.py": config,
            "Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n"
            'CMD ["gunicorn", "-c", "example.conf.py", "app:app"]\n',
        },
    )
    (finding,) = [f for f in check_folder(started).findings if f.rule == "gthread-one-thread"]
    assert finding.severity == Severity.warning


def test_threads_with_a_worker_class_that_ignores_them_is_info(tmp_path: Path) -> None:
    """`gunicorn -k uvicorn.workers.UvicornWorker --threads 8`: gunicorn's `threads` "only
    affects the Gthread worker type", so the 8 threads are not there and
    threads-ignored-by-worker-class says so at the flag, fixed by removing it (seen on
    homanp/superagent's Dockerfile), as info: a flag that starts nothing loses no request
    (a blind reviewer would not fail a build on it); gthread with threads, and a worker class of the
    project's own (perhaps a ThreadWorker), draw nothing."""
    cmd = (
        'FROM python:3.12\nCMD ["gunicorn", "-b", ":8000", "-k", "%s", "--threads", "8", "a:app"]\n'
    )
    found = _one(
        _findings(tmp_path / "uvicorn", {"Dockerfile": cmd % "uvicorn.workers.UvicornWorker"}),
        "threads-ignored-by-worker-class",
    )
    assert (found.at.line, found.severity) == (2, Severity.info)
    assert found.fix.startswith("remove --threads 8")
    for worker in ("gthread", "app.workers.Custom"):
        folder = tmp_path / worker.replace(".", "_")
        found_rules = {f.rule for f in _findings(folder, {"Dockerfile": cmd % worker})}
        assert "threads-ignored-by-worker-class" not in found_rules


def test_the_exec_fix_names_every_script_of_the_chain_that_lacks_it(tmp_path: Path) -> None:
    """The image's entrypoint.sh runs `./conf/start.sh` without `exec`, and start.sh runs
    uwsgi without it: `exec` on uwsgi's line alone leaves entrypoint.sh's shell PID 1, so
    entrypoint-without-exec says entrypoint.sh needs it too, in its message and its fix, with
    the line under `see` (seen on eHealthAfrica/aether's entrypoint.sh and
    conf/uwsgi/start.sh); an entrypoint.sh that runs something after it (a `sleep` keeping
    the container up, broadinstitute/seqr) is not told to exec it."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12\nCOPY . /app\nWORKDIR /app\n"
            'ENTRYPOINT ["/app/entrypoint.sh"]\n',
            "entrypoint.sh": "#!/bin/bash\nset -e\necho starting\n./conf/start.sh\n",
            "conf/start.sh": "#!/bin/bash\nuwsgi --http :8000 --module app --die-on-term\n",
        },
    )
    (found,) = [f for f in check_folder(root).findings if f.rule == "entrypoint-without-exec"]
    assert (found.at.file.name, found.at.line) == ("start.sh", 2)
    assert "entrypoint.sh runs './conf/start.sh' without `exec` too" in found.message
    assert found.fix.endswith("and in entrypoint.sh: exec ./conf/start.sh")
    assert any(at.file.name == "entrypoint.sh" and at.line == 4 for at in found.related)
    (script := root / "entrypoint.sh").write_text(script.read_text() + "sleep infinity\n")
    (kept,) = [f for f in check_folder(root).findings if f.rule == "entrypoint-without-exec"]
    assert "entrypoint.sh" not in kept.message + kept.fix
