"""`check` reads an Apache httpd config as a front of the app servers: where each `ProxyPass`
sends requests, how long mod_proxy keeps an idle connection to that backend (`ttl`, none by
default) and how long it waits for its answer (`timeout=`, `ProxyTimeout`, `Timeout`, 60 s by
default), from httpd's documented defaults; the keep-alive and timeout rules then judge the pair
as they judge nginx, HAProxy, Caddy and Traefik. (No httpd on this machine: the fixtures follow
httpd 2.4's documented grammar.)"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.check import CheckInputError, check_files
from servertune.check.apache import APACHE_DOCS, DEFAULT_TIMEOUT_S, read_apache
from servertune.check.model import Balancer, Location, Setting, Severity, collect_notes
from servertune.check.readers import reader_for
from servertune.cli import app
from servertune.sizing import Machine
from tests.folder_support import check_folder, write

MACHINE = Machine(cores=2)

#: A site as projects write one: a redirecting vhost, a TLS vhost with an exclusion in a
#: <Location>, a path-form ProxyPass with worker parameters, a balancer with two members, and
#: a continued line.
SITE = """\
Define BACKEND 127.0.0.1:8001
Timeout 90

<VirtualHost *:80>
    ServerName app.example.com
    RewriteEngine On
    RewriteRule ^/?(.*) https://%{SERVER_NAME}/$1 [R,L]
</VirtualHost>

<VirtualHost *:443>
    ServerName app.example.com
    ProxyTimeout 45
    <Location /static>
        ProxyPass !
    </Location>
    <Location /ws>
        ProxyPass ws://127.0.0.1:8002/ws timeout=600
    </Location>
    <Proxy "balancer://api">
        BalancerMember http://api1:8000 ttl=30
        BalancerMember http://api2:8000 \\
            disablereuse=On
    </Proxy>
    ProxyPass /api/ balancer://api/
    ProxyPass / http://${BACKEND}/ ttl=60 keepalive=On
    ProxyPassReverse / http://${BACKEND}/
</VirtualHost>

ProxyPass /legacy unix:/run/legacy.sock|http://localhost/
"""


def _read(tmp_path: Path, text: str, name: str = "apache.conf") -> dict[str, Balancer]:
    path = tmp_path / name
    path.write_text(text)
    return {b.servers[0].value: b for b in read_apache(path, text)}


def _idle(balancer: Balancer) -> Setting[float]:
    assert balancer.idle is not None
    return balancer.idle


def _wait(balancer: Balancer) -> Setting[float]:
    assert balancer.server_timeout is not None
    return balancer.server_timeout


def test_each_proxypass_backend_with_its_idle_time_and_wait(tmp_path: Path) -> None:
    """Each backend once, with the `ttl` it is kept idle for (none by default: never closed
    for idleness; disablereuse: no pool) and the wait for its answer (the worker's `timeout`,
    else the vhost's ProxyTimeout, else the server's Timeout); `keepalive=On` (TCP probes)
    changes neither; `ProxyPass !` and a redirect send nowhere."""
    found = _read(tmp_path, SITE)
    assert sorted(found) == [
        "127.0.0.1:8001",
        "127.0.0.1:8002",
        "api1:8000",
        "api2:8000",
        "unix:/run/legacy.sock",
    ]
    main = found["127.0.0.1:8001"]
    assert main.kind == "apache"
    assert main.at.line == 25
    assert _idle(main) == Setting(60.0, Location(tmp_path / "apache.conf", 25))
    assert _wait(main) == Setting(45.0, Location(tmp_path / "apache.conf", 12))
    socket = _idle(found["127.0.0.1:8002"])
    assert math.isinf(socket.value)
    assert socket.default
    assert _wait(found["127.0.0.1:8002"]).value == 600
    assert _idle(found["api1:8000"]).value == 30
    assert found["api2:8000"].idle is None
    assert _wait(found["unix:/run/legacy.sock"]) == Setting(
        90.0, Location(tmp_path / "apache.conf", 2)
    )


def test_no_timeout_written_is_httpds_default_of_60_seconds(tmp_path: Path) -> None:
    """With no Timeout, ProxyTimeout nor `timeout=`, httpd waits its default 60 s, marked a
    default at the ProxyPass line; a RewriteRule [P] proxies without a pool."""
    text = "ProxyPass / http://web:8000/\nRewriteEngine On\nRewriteRule ^/old/(.*) http://old:8000/$1 [P,L]\n"
    found = _read(tmp_path, text)
    assert _wait(found["web:8000"]) == Setting(
        DEFAULT_TIMEOUT_S, Location(tmp_path / "apache.conf", 1), default=True
    )
    assert found["old:8000"].idle is None


def test_a_define_not_here_is_a_coverage_note(tmp_path: Path) -> None:
    """`${BACKEND}` defined nowhere here: one unresolved-variable note at its line, the rest of
    the file read; given by the environment, it is the backend."""
    text = "ProxyPass / http://${BACKEND}/\nProxyPass /b http://b:9000/\n"
    path = tmp_path / "site.conf"
    path.write_text(text)
    with collect_notes() as notes:
        (known,) = read_apache(path, text)
    assert known.servers[0].value == "b:9000"
    assert [(n.kind, n.at.line) for n in notes] == [("unresolved-variable", 1)]
    assert {b.servers[0].value for b in read_apache(path, text, {"BACKEND": "web:8000"})} == {
        "b:9000",
        "web:8000",
    }


def test_claimed_by_content_before_nginx(tmp_path: Path) -> None:
    """An httpd `.conf` is Apache's (nginx claims every `.conf` by its name); an nginx site
    stays nginx's."""
    (tmp_path / "apache.conf").write_text(SITE)
    assert reader_for(tmp_path / "apache.conf", SITE).kind == "apache"
    nginx = "server {\n    listen 80;\n    location / { proxy_pass http://127.0.0.1:8000; }\n}\n"
    assert reader_for(tmp_path / "site.conf", nginx).kind == "nginx"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("<VirtualHost *:80>\nProxyPass / http://a:1/\n", "<virtualhost> is never closed"),
        ("<VirtualHost *:80>\n</Location>\n", "</Location> closes no open section"),
        ("ProxyTimeout 0\nProxyPass / http://a:1/\n", "ProxyTimeout '0'"),
        ('ProxyPass / "http://a:1/\n', 'unterminated " quote'),
    ],
)
def test_malformed_configs_are_one_line_naming_file_and_line(
    tmp_path: Path, text: str, said: str
) -> None:
    """Sections left open or closed twice, a timeout httpd refuses, an open quote: one error."""
    path = tmp_path / "apache.conf"
    path.write_text(text)
    with pytest.raises(CheckInputError, match=said):
        read_apache(path, text)


def test_check_cli_refuses_a_broken_apache_config_in_one_line(tmp_path: Path) -> None:
    """Exit 2, one `error:` line naming the file, no traceback."""
    (tmp_path / "apache.conf").write_text("<VirtualHost *:80>\nProxyPass / http://a:1/\n")
    result = CliRunner().invoke(app, ["check", str(tmp_path / "apache.conf")])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert "apache.conf" in errors[0]
    assert "Traceback" not in result.output


GUNICORN_SYNC = 'bind = "127.0.0.1:8001"\nworkers = 2\ntimeout = 120\n'
GUNICORN_GTHREAD = 'bind = "127.0.0.1:8001"\nworkers = 2\nthreads = 4\nkeepalive = %d\n'


def _rules(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, str, int, str]]:
    write(tmp_path, files)
    result = check_files([tmp_path / n for n in files], machine=MACHINE, env={}, root=tmp_path)
    assert not result.errors, result.errors
    assert result.balancer_links, "the front is linked to the app server"
    return [(f.rule, f.at.file.name, f.at.line, f.fix) for f in result.findings]


def test_apache_giving_up_before_a_sync_workers_timeout_is_found(tmp_path: Path) -> None:
    """httpd's default 60 s before a sync gunicorn's 120 s: found at the ProxyPass line, the fix
    in httpd's spelling (whole seconds); a ProxyTimeout above it is silent."""
    files = {
        "gunicorn.conf.py": GUNICORN_SYNC,
        "apache.conf": "ProxyPass / http://127.0.0.1:8001/\n",
    }
    found = [f for f in _rules(tmp_path, files) if f[0] == "app-timeout-over-read-timeout"]
    assert found == [("app-timeout-over-read-timeout", "apache.conf", 1, "ProxyTimeout 125")]
    files["apache.conf"] = "ProxyTimeout 130\n" + files["apache.conf"]
    assert not [f for f in _rules(tmp_path, files) if f[0] == "app-timeout-over-read-timeout"]


def test_apache_pooling_past_the_app_servers_keepalive_is_found(tmp_path: Path) -> None:
    """No `ttl`: httpd reuses a pooled connection until gthread's keep-alive closes it, the 502
    race, found at gunicorn's keepalive and citing httpd's docs; `ttl=60` under a 75 s
    keep-alive, or `disablereuse=On`, is silent."""
    files = {
        "gunicorn.conf.py": GUNICORN_GTHREAD % 5,
        "apache.conf": "ProxyPass / http://127.0.0.1:8001/\n",
    }
    write(tmp_path, files)
    result = check_files([tmp_path / n for n in files], machine=MACHINE, env={}, root=tmp_path)
    (finding,) = [f for f in result.findings if f.rule == "lb-idle-over-app-keepalive"]
    assert finding.at.file.name == "gunicorn.conf.py"
    assert finding.at.line == 4
    assert "never closes an idle connection" in finding.message
    assert "`ttl=N` on the ProxyPass line" in finding.fix
    assert APACHE_DOCS in finding.backing
    for apache, keepalive in (("ttl=60", 75), ("disablereuse=On", 5)):
        files = {
            "gunicorn.conf.py": GUNICORN_GTHREAD % keepalive,
            "apache.conf": f"ProxyPass / http://127.0.0.1:8001/ {apache}\n",
        }
        assert not [f for f in _rules(tmp_path, files) if f[0] == "lb-idle-over-app-keepalive"]


def test_a_folder_reads_the_apache_site_and_shows_it_in_front(tmp_path: Path) -> None:
    """`servertune check FOLDER`: the httpd site is read (not skipped as an unknown `.conf`) and
    the launch graph shows it in front of the server it passes to."""
    root = write(
        tmp_path,
        {
            "contrib/apache.conf": SITE.replace("${BACKEND}", "127.0.0.1:8001"),
            "contrib/gunicorn.conf.py": GUNICORN_SYNC,
        },
    )
    result = check_folder(root)
    assert root / "contrib/apache.conf" in result.discovered[0].files
    (link,) = [b for b in result.balancer_links if b.app is not None]
    assert link.balancer.file.name == "apache.conf"
    assert link.server.at.line == 25
    output = CliRunner().invoke(app, ["check", "--cores", "2", str(root)]).output
    assert "behind " + str(root / "contrib/apache.conf") + ":25" in output


def test_mod_wsgi_alone_is_a_coverage_note_not_a_refusal(tmp_path: Path) -> None:
    """httpd running the app with mod_wsgi (no proxy): read, one not-supported note naming the
    daemon's processes and threads; check does not size mod_wsgi."""
    root = write(
        tmp_path,
        {
            "apache/site.conf": (
                "<VirtualHost *:80>\n    WSGIDaemonProcess app processes=2 threads=15\n"
                "    WSGIScriptAlias / /srv/app/wsgi.py process-group=app\n</VirtualHost>\n"
            )
        },
    )
    result = check_folder(root)
    assert root / "apache/site.conf" in result.files
    assert not result.errors
    (unsupported,) = [n for n in result.notes if n.kind == "not-supported"]
    assert "processes=2 threads=15" in unsupported.message
    assert "mod_wsgi" in unsupported.message


def test_apache_pooling_past_the_keepalive_is_a_warning_not_an_error(tmp_path: Path) -> None:
    """httpd's mod_proxy checks a pooled connection is still open before it reuses it, so the
    idle race is left to a close landing between that check and the request: the finding is a
    warning, as under nginx or Traefik, not an error, and says why (seen on allura's and
    intelmq-api's Apache in front of gunicorn gthread / uvicorn)."""
    files = {
        "gunicorn.conf.py": GUNICORN_GTHREAD % 2,
        "apache.conf": "ProxyPass / http://127.0.0.1:8001/\n",
    }
    write(tmp_path, files)
    result = check_files([tmp_path / n for n in files], machine=MACHINE, env={}, root=tmp_path)
    (finding,) = [f for f in result.findings if f.rule == "lb-idle-over-app-keepalive"]
    assert finding.severity is Severity.warning
    assert "checks a pooled connection is still open" in finding.message


def test_a_reloading_development_launch_behind_apache_is_not_judged(tmp_path: Path) -> None:
    """A development launch (gunicorn `reload = True`) is not judged for the keep-alive race
    behind its front, as it is not sized (seen on OS2mo: a `--reload` branch behind a
    dev-environment Caddy)."""
    files = {
        "gunicorn.conf.py": GUNICORN_GTHREAD % 2 + "reload = True\n",
        "apache.conf": "ProxyPass / http://127.0.0.1:8001/\n",
    }
    assert not [f for f in _rules(tmp_path, files) if f[0] == "lb-idle-over-app-keepalive"]
