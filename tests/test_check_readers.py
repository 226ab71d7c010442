"""The readers: each file as its own server would read it (uWSGI ini rules, nginx via crossplane, gunicorn's loader)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from servertune.check import CheckInputError, check_files, read_config
from servertune.check.chain import normalise
from servertune.check.model import AppServer, NginxConfig
from servertune.check.nginx import parse_duration
from servertune.check.output import format_text
from servertune.check.readers import reader_for
from servertune.check.uwsgi import uwsgi_options
from servertune.sizing import Machine

from .support import nginx_check


def _uwsgi(
    tmp_path: Path, text: str, env: dict[str, str] | None = None
) -> list[tuple[str, str, int]]:
    path = tmp_path / "app.ini"
    path.write_text(text)
    return uwsgi_options(path, text, env or {})


def test_uwsgi_repeated_keys_stay_in_order(tmp_path: Path) -> None:
    """socket and map-socket repeat: every line is kept, in file order."""
    options = _uwsgi(
        tmp_path,
        "[uwsgi]\nsocket = :8001\nsocket = :8002\nmap-socket = 0:1\nmap-socket = 1:2\n",
    )
    assert [(k, v) for k, v, _ in options] == [
        ("socket", ":8001"),
        ("socket", ":8002"),
        ("map-socket", "0:1"),
        ("map-socket", "1:2"),
    ]


def test_uwsgi_placeholders_resolve_as_uwsgi_does(tmp_path: Path) -> None:
    """%(option), set-placeholder, $(ENV) (empty when unset), %d and %n, %% are resolved."""
    text = (
        "[uwsgi]\nbase = /srv/app\nset-ph = port=8001\nsocket = %(base)/%n.sock\n"
        "http-socket = 127.0.0.1:%(port)\nchdir = $(APP_HOME)\nlogto = $(NOPE)x\n"
        "pidfile = %dpid\nsafe = 100%%\n"
    )
    options = {k: v for k, v, _ in _uwsgi(tmp_path, text, {"APP_HOME": "/home/app"})}
    assert options["socket"] == "/srv/app/app.sock"
    assert options["http-socket"] == "127.0.0.1:8001"
    assert options["chdir"] == "/home/app"
    assert options["logto"] == "x"
    assert options["pidfile"] == f"{tmp_path}/pid"
    assert options["safe"] == "100%"


def test_uwsgi_comments_other_sections_and_flags(tmp_path: Path) -> None:
    """; and # comments and other sections are skipped; a bare key is a true flag."""
    options = _uwsgi(tmp_path, "[other]\nprocesses = 9\n[uwsgi]\n; c\n# c\nmaster\nprocesses = 2\n")
    assert [(k, v) for k, v, _ in options] == [("master", "true"), ("processes", "2")]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[uwsgi]\nini = base.ini\n", "no such file"),
        ("[uwsgi\nprocesses = 2\n", "unterminated section"),
    ],
)
def test_uwsgi_refuses_what_it_cannot_resolve(tmp_path: Path, text: str, reason: str) -> None:
    """A chained file that is not there and a broken header are refused with a reason, not
    guessed (a file outside the tree is a note: tests/test_check_outside.py)."""
    with pytest.raises(CheckInputError, match=reason):
        _uwsgi(tmp_path, text)


def test_uwsgi_aliases_and_map_socket(tmp_path: Path) -> None:
    """workers is processes; map-socket marks the sockets as per worker; :PORT is every interface."""
    path = tmp_path / "uwsgi.ini"
    path.write_text("[uwsgi]\nworkers = 3\nsocket = :8001\nmap-socket = 0:1\nlisten = 64\n")
    config = read_config(path)
    assert isinstance(config, AppServer)
    assert config.workers.value == 3
    assert config.workers.at.line == 2
    assert [s.value for s in config.sockets] == ["0.0.0.0:8001"]
    assert config.mapped_sockets
    assert config.backlog.value == 64


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("65", 65), ("65s", 65), ("1m30s", 90), ("500ms", 0.5), ("1h", 3600), ("x", None), ("", None)],
)
def test_nginx_durations(text: str, seconds: float | None) -> None:
    """nginx's time syntax in seconds; anything else is not a time."""
    assert parse_duration(text) == seconds


def test_nginx_inheritance_and_includes(tmp_path: Path) -> None:
    """http-level timeouts reach servers and locations; included files are read in glob order."""
    (tmp_path / "sites").mkdir()
    (tmp_path / "sites" / "b.conf").write_text(
        "server {\n    listen 80 backlog=512;\n    location / { proxy_pass http://app; }\n}\n"
    )
    (tmp_path / "sites" / "a.conf").write_text(
        "upstream app {\n    server localhost:8001;\n    keepalive 4;\n    keepalive_timeout 30s;\n}\n"
    )
    main = tmp_path / "nginx.conf"
    main.write_text(
        "events {}\nhttp {\n    keepalive_timeout 70;\n    proxy_read_timeout 90s;\n"
        "    proxy_http_version 1.1;\n    include sites/*.conf;\n}\n"
    )
    config = read_config(main)
    assert isinstance(config, NginxConfig)
    assert [p.name for p in config.files] == ["nginx.conf", "a.conf", "b.conf"]
    assert [k.value for k in config.keepalive_timeouts] == [70]
    [passing] = config.passes
    assert passing.read_timeout.value == 90
    assert passing.read_timeout.at.line == 4
    assert passing.http11
    assert config.upstreams["app"].keepalive_timeout.value == 30
    assert [b.value for b in config.listen_backlogs] == [512]


def test_addresses_meet_as_the_kernel_routes_them() -> None:
    """localhost is 127.0.0.1; unix:///x is unix:/x; a name without a port is port 80."""
    assert normalise("localhost:8001") == ("127.0.0.1", "8001")
    assert normalise("unix:///run/app.sock") == normalise("unix:/run/app.sock")
    assert normalise("http://web") == ("web", "80")
    # https's own port and a URI's path; a bind on every address (`--bind :8080`) keeps its port
    assert normalise("https://ol-opds.prod.archive.org/") == ("ol-opds.prod.archive.org", "443")
    assert normalise("http://app:8000/api/") == ("app", "8000")
    assert normalise(":8080") == ("", "8080")


def test_gunicorn_reads_environment_and_lines(tmp_path: Path) -> None:
    """Values computed from os.environ are gunicorn's; lines point at the last assignment."""
    path = tmp_path / "gunicorn.conf.py"
    path.write_text(
        'import os\nbind = "127.0.0.1:8001"\nworkers = 1\nworkers = int(os.environ["W"])\n'
    )
    config = read_config(path, env={**os.environ, "W": "3"})
    assert isinstance(config, AppServer)
    assert config.workers.value == 3
    assert config.workers.at.line == 4
    assert config.keepalive is not None
    assert config.keepalive.default
    assert not config.workers_follow_cpu_count


@pytest.mark.parametrize(
    ("worker_class", "interface"),
    [
        ('"uvicorn_worker.UvicornWorker"', "asgi"),
        ('"uvicorn_worker.UvicornH11Worker"', "asgi"),
        ('"uvicorn.workers.UvicornWorker"', "asgi"),
        ("Tuned", "asgi"),  # a subclass, as `gen gunicorn-asgi` writes
        ('"gthread"', "wsgi"),
        ('"sync"', "wsgi"),
        ('"gunicorn.workers.gthread.ThreadWorker"', "wsgi"),
    ],
)
def test_gunicorn_with_uvicorns_worker_serves_asgi(
    tmp_path: Path, worker_class: str, interface: str
) -> None:
    """A gunicorn config whose worker class is (or derives from) uvicorn's runs an ASGI app."""
    path = tmp_path / "gunicorn.conf.py"
    path.write_text(
        "from uvicorn_worker import UvicornWorker\n\n\n"
        "class Tuned(UvicornWorker):\n    CONFIG_KWARGS = {'limit_concurrency': 10}\n\n\n"
        f"worker_class = {worker_class}\nworkers = 2\n"
    )
    config = read_config(path)
    assert isinstance(config, AppServer)
    assert config.interface == interface


def test_a_uvicorn_script_is_read_by_uvicorns_own_parser(tmp_path: Path) -> None:
    """Continued lines, quotes, comments, an assignment and `exec` are the shell's; the
    options, their defaults and --app-dir of another host are uvicorn's own."""
    path = tmp_path / "start.sh"
    path.write_text(
        "#!/bin/sh\n# the server\nRUST_LOG=info exec uvicorn 'main:app' --app-dir /srv/not-here \\\n"
        "    --uds '/run/app.sock' \\\n    --workers 3  # three loops\n"
    )
    config = read_config(path, env={**os.environ, "WEB_CONCURRENCY": "9"})
    assert isinstance(config, AppServer)
    assert (config.kind, config.interface) == ("uvicorn", "asgi")
    assert [s.value for s in config.sockets] == ["unix:/run/app.sock"]
    assert (config.workers.value, config.workers.at.line) == (3, 5)
    assert config.keepalive is not None
    assert (config.keepalive.value, config.keepalive.default) == (5, True)
    assert config.request_timeout is None
    assert config.backlog.value == 2048


def test_uvicorn_workers_default_to_web_concurrency(tmp_path: Path) -> None:
    """Without --workers, uvicorn runs $WEB_CONCURRENCY workers (else 1), as its --help says."""
    path = tmp_path / "start.sh"
    path.write_text("uvicorn main:app\n")
    assert read_config(path, env={**os.environ, "WEB_CONCURRENCY": "4"}).workers.value == 4
    env = {k: v for k, v in os.environ.items() if k != "WEB_CONCURRENCY"}
    assert read_config(path, env=env).workers.value == 1


def test_a_per_worker_script_is_one_server_per_case_arm(tmp_path: Path) -> None:
    """`N) set -- --host H --port P ;;` arms feeding "$@": one single-worker server per socket."""
    path = tmp_path / "w.sh"
    path.write_text(
        'case "$W" in\n    0) set -- --host 127.0.0.1 --port 8001 ;;\n'
        "    1) set -- --host 127.0.0.1 --port 8002;;\nesac\n"
        'exec uvicorn app:app "$@" --workers 1\n'
    )
    config = read_config(path)
    assert isinstance(config, AppServer)
    assert [(s.value, s.at.line) for s in config.sockets] == [
        ("127.0.0.1:8001", 2),
        ("127.0.0.1:8002", 3),
    ]
    assert config.workers.value == 2
    assert config.mapped_sockets


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("uvicorn a:app --workers 'two\n", "cannot split as the shell does"),
        ("uvicorn a:app --workers two\n", "uvicorn refuses its command line: Invalid value"),
        ("granian --interface nope a:app\n", "granian refuses its command line"),
    ],
)
def test_a_script_check_cannot_read_is_one_line(tmp_path: Path, text: str, reason: str) -> None:
    """A script without a server, with two, or needing the shell to run is refused, never run."""
    path = tmp_path / "run.sh"
    path.write_text(text)
    with pytest.raises(CheckInputError, match=re.escape(reason)) as caught:
        read_config(path)
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith(str(path))


def test_what_only_the_running_shell_knows_is_left_out_and_named(tmp_path: Path) -> None:
    """`--port $PORT` set nowhere, `"$@"` of an unknown caller: read without them, named."""
    path = tmp_path / "run.sh"
    path.write_text('#!/bin/sh\nexec uvicorn a:app --workers 3 --port $PORT "$@"\n')
    config = read_config(path, env={})
    assert isinstance(config, AppServer)
    assert config.workers.value == 3
    assert [(u.value, u.at.line) for u in config.unresolved] == [("--port $PORT", 2), ("$@", 2)]


def test_a_scripts_own_variables_and_defaults_are_expanded(tmp_path: Path) -> None:
    """`export VAR=...` before the command, `${VAR:-default}`: expanded as sh would."""
    path = tmp_path / "entrypoint.sh"
    path.write_text(
        "#!/bin/sh\nset -e\nexport WORKERS=${WORKERS:-5}\n"
        'python manage.py migrate\nexec gunicorn proj.wsgi -w "$WORKERS" -t ${TIMEOUT:-90}\n'
    )
    config = read_config(path, env={})
    assert isinstance(config, AppServer)
    assert (config.kind, config.workers.value, config.workers.at.line) == ("gunicorn", 5, 5)
    assert config.request_timeout is not None
    assert config.request_timeout.value == 90
    assert not config.unresolved


def test_gunicorn_chdir_and_user_of_another_host(tmp_path: Path) -> None:
    """chdir to a missing directory and an unknown user are the production host's: accepted."""
    path = tmp_path / "gunicorn.conf.py"
    path.write_text('chdir = "/srv/not-here"\nuser = "no-such-user-here"\nworkers = 2\n')
    config = read_config(path)
    assert isinstance(config, AppServer)
    assert config.workers.value == 2


def test_links_need_matching_addresses(tmp_path: Path) -> None:
    """An upstream on another port is not linked, so no cross-layer rule fires for it."""
    (tmp_path / "nginx.conf").write_text(
        "upstream app { server 127.0.0.1:9999; keepalive 4; }\n"
        "server { location / { proxy_pass http://app; proxy_http_version 1.1; } }\n"
    )
    (tmp_path / "gunicorn.conf.py").write_text('bind = "127.0.0.1:8001"\n')
    result = check_files(
        [tmp_path / "nginx.conf", tmp_path / "gunicorn.conf.py"], machine=Machine(cores=4)
    )
    assert result.links == ()
    assert result.findings == ()


def test_absolute_include_outside_the_tree_is_not_read(tmp_path: Path) -> None:
    """`include /etc/...` names the server's file: reported as not checked, never read from here."""
    outside = tmp_path / "etc"
    outside.mkdir()
    (outside / "evil.conf").write_text("keepalive_timeout 1s;\n")
    tree = tmp_path / "repo"
    tree.mkdir()
    (tree / "nginx.conf").write_text(
        f"events {{}}\nhttp {{\n    include {outside}/evil.conf;\n}}\n"
    )
    result = check_files([tree / "nginx.conf"], machine=Machine(cores=4))
    assert result.findings == ()  # coverage is a note, not a finding (issue 36)
    assert [(n.kind, n.at.line) for n in result.notes] == [("include-not-found", 3)]
    assert [p.name for p in result.files] == ["nginx.conf"]


#: Snippets crossplane parses without an error (its table skips a snippet's top-level `server`)
#: that nginx refuses, with the line and words nginx's own lexer gives.
NGINX_REFUSES = [
    ("server {\n    listen 8080\n}\n", 3, '"}"'),
    ("server {\n    listen 8080;\n    ;\n}\n", 3, '";"'),
    ("server {\n    { listen 8080; }\n}\n", 2, '"{"'),
]


@pytest.mark.parametrize(("text", "line", "token"), NGINX_REFUSES)
def test_what_nginx_refuses_check_refuses_with_nginxs_words(
    tmp_path: Path, text: str, line: int, token: str
) -> None:
    """A directive without its `;` before `}` (and a stray `;` or `{`) is an nginx syntax error
    at the line `nginx -t` names, never a clean read of a broken site."""
    site = tmp_path / "site.conf"
    site.write_text(text)
    main = tmp_path / "nginx.conf"
    main.write_text(f"events {{}}\nhttp {{ include {site}; }}\n")
    refused = nginx_check(main)
    assert f"unexpected {token} in {site}:{line}" in refused.stderr
    with pytest.raises(
        CheckInputError, match=rf"site\.conf:{line}: nginx syntax error: unexpected {token}$"
    ):
        read_config(site)


def test_what_nginx_accepts_check_reads(tmp_path: Path) -> None:
    """Braces and semicolons inside quotes and comments are words, as nginx reads them."""
    site = tmp_path / "site.conf"
    site.write_text(
        'server {\n  listen 8080;\n  location / { return 200 "}{;"; }\n  # a } comment\n'
        "  location = /e {}\n}\n"
    )
    main = tmp_path / "nginx.conf"
    main.write_text(f"events {{}}\nhttp {{ include {site}; }}\n")
    accepted = nginx_check(main)
    assert accepted.returncode == 0, accepted.stderr
    assert isinstance(read_config(site), NginxConfig)


@pytest.mark.parametrize(
    ("name", "text", "first"),
    [
        ("redis.conf", "bind 127.0.0.1\nport 6379\n", "line 1 starts with 'bind'"),
        ("sections.conf", "[main]\ncommand=gunicorn app:app\n", "'[main]'"),
        ("nginx-notes", "# tuning\nworkers: 4;\n", "line 2 starts with 'workers:'"),
    ],
)
def test_a_file_named_like_nginx_with_no_nginx_directive_is_not_nginx(
    tmp_path: Path, name: str, text: str, first: str
) -> None:
    """Taken for nginx by its name only: said to be no nginx config, not an nginx syntax error."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(
        CheckInputError, match="read as an nginx config, but it is not one"
    ) as error:
        read_config(path)
    assert "no statement starts with a directive nginx knows" in str(error.value)
    assert first in str(error.value)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            (
                "from flask import Flask\n\napp = Flask(__name__)\n\n\n@app.get('/')\n"
                "def index():\n    return 'hi'\n"
            ),
            "a Flask application module (it defines `app`)",
        ),
        ("from fastapi import FastAPI\n\napp = FastAPI()\n", "a FastAPI application module"),
        (
            (
                "import os\n\nfrom django.core.wsgi import get_wsgi_application\n\n"
                "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'mysite.settings')\n"
                "application = get_wsgi_application()\n"
            ),
            "Django's WSGI module (it defines `application`)",
        ),
        (
            "if True:\n    async def app(scope, receive, send):\n        pass\n",
            "an application module (it defines `app`)",
        ),
    ],
)
def test_an_application_module_is_named_and_never_run(tmp_path: Path, text: str, said: str) -> None:
    """A Flask, FastAPI or Django module given to check is said to be an app, not a gunicorn
    config, without running it (its imports need not be installed; it could have side effects)."""
    path = tmp_path / "wsgi.py"
    marker = tmp_path / "ran"
    path.write_text(f"open({str(marker)!r}, 'w').close()\n{text}")
    with pytest.raises(CheckInputError, match="read as a gunicorn config file") as error:
        read_config(path)
    assert said in str(error.value)
    assert "not a config" in str(error.value)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("text", "workers"),
    [
        ("app = 'x'\nworkers = 3\n", 3),
        (
            "import os\nif os.environ.get('BIG'):\n    workers = 9\nelse:\n    workers = 2\napp = 1\n",
            2,
        ),
    ],
)
def test_a_config_that_also_defines_an_app_is_read_as_a_config(
    tmp_path: Path, text: str, workers: int
) -> None:
    """A setting bound anywhere at the top level makes the file a gunicorn config."""
    path = tmp_path / "gunicorn.conf.py"
    path.write_text(text)
    app = read_config(path, env={})
    assert isinstance(app, AppServer)
    assert app.workers.value == workers


def test_a_star_import_leaves_it_to_gunicorns_loader(tmp_path: Path) -> None:
    """A `*` import could bind settings unseen: gunicorn loads the file, and says it set none."""
    path = tmp_path / "gunicorn.conf.py"
    path.write_text("from os.path import *\napp = 1\n")
    with pytest.raises(CheckInputError, match="defines no gunicorn setting"):
        read_config(path, env={})


def test_files_that_bring_no_server_are_not_a_clean_report(tmp_path: Path) -> None:
    """A manifest with no app server in it (a ConfigMap; a Deployment running an image's own
    command) read alone is a coverage note saying it starts no server (exit 0: an ordinary
    commit of such a file must pass the pre-commit hook, issue 29), and the report says there
    was no server to check, not "no findings"; beside a file that brings one, it is counted
    among the files read."""
    config_map = tmp_path / "cm.yaml"
    config_map.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\n")
    deployment = tmp_path / "deploy.yaml"
    deployment.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: a\n        image: nginx\n"
    )
    alone = check_files([config_map, deployment], machine=Machine(cores=4, cores_source="test"))
    assert (alone.findings, alone.errors, alone.apps) == ((), (), ())
    assert [(n.kind, n.at.file) for n in alone.notes] == [
        ("starts-no-server", config_map),
        ("starts-no-server", deployment),
    ]
    assert "starts no app server" in alone.notes[0].message
    assert "no server to check in 2 files" in format_text(alone)
    gunicorn = tmp_path / "gunicorn.conf.py"
    gunicorn.write_text("workers = 2\n")
    result = check_files([config_map, gunicorn], machine=Machine(cores=4, cores_source="test"))
    assert set(result.files) == {config_map, gunicorn}


def test_a_shell_script_writing_a_supervisord_program_is_read_as_a_script(tmp_path: Path) -> None:
    """An entrypoint (`#!/bin/bash`, `.sh`) whose here-document writes a `[program:x]` file
    for supervisord is a shell script: read as one (its `exec supervisord` line), never
    refused as a supervisord ini that "is not an ini line"."""
    script = tmp_path / "entrypoint.sh"
    script.write_text(
        "#!/bin/bash\nset -e\n"
        "cat > /etc/supervisor/conf.d/certbot.conf <<EOF\n"
        "[program:certbot-setup]\ncommand=/sbin/certbot-setup\nautorestart=false\nEOF\n"
        "exec supervisord -n -c /etc/supervisor/supervisord.conf\n"
    )
    assert reader_for(script, script.read_text()).kind == "script"
