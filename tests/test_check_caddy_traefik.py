"""`check` reads Caddyfiles and Traefik configs (static, dynamic, compose labels) as fronts of
the app servers: which server each sends to, how long it keeps an idle connection to it and how
long it waits for its answer, from each proxy's documented defaults; the keep-alive and timeout
rules then judge the pair as they judge nginx and HAProxy."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.check import CheckInputError, check_files
from servertune.check.caddy import CADDY_PROXY_DOCS, DEFAULT_KEEPALIVE_S, read_caddyfile
from servertune.check.durations import parse_go_duration
from servertune.check.model import Balancer, Severity, collect_notes
from servertune.check.readers import reader_for
from servertune.check.resolve import confined_to
from servertune.check.traefik import DEFAULT_IDLE_CONN_TIMEOUT_S, read_traefik
from servertune.cli import app
from servertune.sizing import Machine
from tests.support import tool

MACHINE = Machine(cores=2)

#: A Caddyfile as projects write one: global server timeouts, a snippet, a site with a
#: matcher, a transport block, and a second upstream on a unix socket.
CADDYFILE = """\
{
\temail ops@example.com
\tservers {
\t\ttimeouts {
\t\t\tread_body 10s
\t\t\tread_header 5s
\t\t\twrite 2m
\t\t\tidle 5m
\t\t}
\t}
}

(common) {
\tencode gzip zstd
\theader -Server
}

example.com, www.example.com {
\timport common
\t@api path /api/*
\thandle @api {
\t\treverse_proxy web:8000 localhost:8001 {
\t\t\tlb_policy least_conn
\t\t\ttransport http {
\t\t\t\tdial_timeout 3s
\t\t\t\tresponse_header_timeout 45s
\t\t\t\tkeepalive 90s
\t\t\t\tkeepalive_idle_conns 64
\t\t\t}
\t\t}
\t}
\treverse_proxy unix//run/gunicorn.sock
}
"""


def _caddy(tmp_path: Path, text: str, name: str = "Caddyfile") -> list[Balancer]:
    path = tmp_path / name
    path.write_text(text)
    return list(read_caddyfile(path, text)[0])


def _caddy_adapts(path: Path) -> subprocess.CompletedProcess[str]:
    """Caddy's own reading of the fixture (`caddy adapt`: the Caddyfile to its JSON config)."""
    return subprocess.run(
        [tool("caddy"), "adapt", "--config", str(path), "--adapter", "caddyfile"],
        capture_output=True, text=True, timeout=30, check=False, cwd=path.parent,
    )  # fmt: skip


def test_go_durations_as_caddy_and_traefik_write_them() -> None:
    """Go's units, Caddy's `d`, Traefik's bare seconds; anything else is not a duration."""
    assert parse_go_duration("1m30s") == 90
    assert parse_go_duration("250ms") == 0.25
    assert parse_go_duration("1d", days=True) == 86400
    assert parse_go_duration("1d") is None
    assert parse_go_duration("90", bare_seconds=True) == 90
    assert parse_go_duration("90") is None
    assert parse_go_duration("0") == 0
    for bad in ("", "s", "1x", "1m 30s", "abc"):
        assert parse_go_duration(bad) is None


def test_caddyfile_reads_each_reverse_proxy_with_its_transport(tmp_path: Path) -> None:
    """Sites, snippet, matcher, upstreams (host, localhost, unix socket), the http transport's
    keepalive and response_header_timeout, the global write timeout; Caddy adapts the same file."""
    api, socket = _caddy(tmp_path, CADDYFILE)
    assert [s.value for s in api.servers] == ["web:8000", "localhost:8001"]
    assert api.idle is not None
    assert (api.idle.value, api.idle.at.line) == (90, 27)
    assert api.server_timeout is not None
    assert api.server_timeout.value == 45
    assert api.server_timeout_directive == "response_header_timeout"
    assert api.title == "Caddy reverse_proxy in `example.com, www.example.com`"
    assert [s.value for s in socket.servers] == ["unix:/run/gunicorn.sock"]
    assert socket.idle is not None
    assert socket.idle.default
    assert socket.idle.value == DEFAULT_KEEPALIVE_S == 120
    # No transport wait of its own: the global `write 2m` ends the response first.
    assert socket.server_timeout is not None
    assert socket.server_timeout.value == 120
    assert socket.server_timeout_directive == "servers timeouts write"
    adapted = _caddy_adapts(tmp_path / "Caddyfile")
    assert adapted.returncode == 0, adapted.stderr
    assert '"keep_alive":{"idle_timeout":90000000000' in adapted.stdout


def test_caddy_upstream_addresses_are_written_as_nginx_writes_them(tmp_path: Path) -> None:
    """`:8000` is this host, a bare name is port 80 (443 for https), schemes drop, `to` adds."""
    text = (
        "localhost:8080\n"
        "reverse_proxy /a/* :8000 app unix//tmp/a.sock {\n"
        "\tto web:8001\n"
        "}\n"
        "reverse_proxy /b/* h2c://grpc:9000\n"
        "reverse_proxy https://api.example.com\n"
    )
    balancers = _caddy(tmp_path, text)
    assert [[s.value for s in b.servers] for b in balancers] == [
        ["localhost:8000", "app:80", "unix:/tmp/a.sock", "web:8001"],
        ["grpc:9000"],
        ["api.example.com:443"],
    ]
    assert _caddy_adapts(tmp_path / "Caddyfile").returncode == 0


def test_caddy_keepalive_off_and_zero(tmp_path: Path) -> None:
    """`keepalive off` keeps no idle connection (nothing to race); `0` never closes one."""
    site = "a.example.com {\n\treverse_proxy 127.0.0.1:8000 {\n\t\ttransport http {\n\t\t\tkeepalive %s\n\t\t}\n\t}\n}\n"
    (off,) = _caddy(tmp_path, site % "off")
    assert off.idle is None
    (never,) = _caddy(tmp_path, site % "0")
    assert never.idle is not None
    assert math.isinf(never.idle.value)


def test_caddy_environment_placeholders_are_coverage_notes(tmp_path: Path) -> None:
    """`{$VAR}` and `{env.VAR}` are Caddy's environment: a note each, the rest still read;
    `{$VAR:default}` takes its default; `--env-file` values replace them."""
    text = (
        "{$DOMAIN:example.com} {\n"
        "\treverse_proxy {$BACKEND} 127.0.0.1:{env.PORT} 127.0.0.1:8000 {\n"
        "\t\ttransport http {\n\t\t\tkeepalive {$KEEPALIVE}\n\t\t\tresponse_header_timeout {$WAIT:30s}\n"
        "\t\t}\n\t}\n}\n"
    )
    path = tmp_path / "Caddyfile"
    path.write_text(text)
    with collect_notes() as notes:
        ((balancer,), _) = read_caddyfile(path, text)
    assert [s.value for s in balancer.servers] == ["127.0.0.1:8000"]
    assert balancer.idle is None  # not known here: no keep-alive finding on a guess
    assert balancer.server_timeout is not None
    assert balancer.server_timeout.value == 30
    assert [(n.kind, n.at.line) for n in notes] == [("unresolved-variable", 4)] + [
        ("unresolved-variable", 2)
    ] * 2
    env = {"BACKEND": "web:8000", "PORT": "9000", "KEEPALIVE": "4s"}
    ((known,), _) = read_caddyfile(path, text, env)
    assert [s.value for s in known.servers] == ["web:8000", "127.0.0.1:9000", "127.0.0.1:8000"]
    assert known.idle is not None
    assert known.idle.value == 4
    result = check_files([path], machine=MACHINE, env={})
    assert not result.errors
    assert {n.kind for n in result.notes} >= {"unresolved-variable"}


def test_caddy_imports_follow_snippets_and_files_inside_the_tree(tmp_path: Path) -> None:
    """`import snippet` pastes it; `import sites/*.caddy` reads those files (through check's
    resolver); a file not here or outside the tree is a note; an import cycle is one error."""
    (tmp_path / "sites").mkdir()
    (tmp_path / "sites" / "app.caddy").write_text("app.example.com {\n\timport proxy\n}\n")
    text = (
        "(proxy) {\n\treverse_proxy web:8000\n}\n"
        "import sites/*.caddy\nimport missing.caddy\nimport ../outside.caddy\n"
    )
    (tmp_path / "outside.caddy").write_text("evil.example.com {\n\treverse_proxy 10.0.0.1:1\n}\n")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "sites").mkdir()
    (root / "sites" / "app.caddy").write_text((tmp_path / "sites" / "app.caddy").read_text())
    (root / "Caddyfile").write_text(text)
    result = check_files([root / "Caddyfile"], machine=MACHINE, env={}, root=root)
    assert not result.errors
    assert set(result.files) == {root / "sites" / "app.caddy", root / "Caddyfile"}
    with confined_to(root):
        ((site,), files) = read_caddyfile(root / "Caddyfile", text)
    assert (site.name, [s.value for s in site.servers]) == ("app.example.com", ["web:8000"])
    assert files == (root / "sites" / "app.caddy",)
    notes = {(n.kind, n.at.line) for n in result.notes}
    assert ("include-not-found", 5) in notes
    assert ("outside-tree", 6) in notes
    (root / "loop.caddy").write_text("import loop.caddy\n")
    with pytest.raises(CheckInputError, match=r"loop\.caddy.*nested more than 10 deep"):
        read_caddyfile(root / "loop.caddy", "import loop.caddy\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('a.example.com {\n\trespond "open\n}\n', r":2: unterminated \" quote"),
        ("a.example.com {\n\treverse_proxy :8000\n}\n}\n", r":4: `\}` closes no block"),
        ("a.example.com {\n\treverse_proxy :8000 {\n}\n", r": a `\{` is never closed"),
        (
            (
                "a.example.com {\n\treverse_proxy :8000 {\n\t\ttransport http {\n\t\t\tkeepalive 2 minutes\n"
                "\t\t}\n\t}\n}\n"
            ),
            r":4: keepalive takes one duration",
        ),
        (
            "a.example.com {\n\treverse_proxy :8000 {\n\t\ttransport http {\n\t\t\tresponse_header_timeout soon\n\t\t}\n\t}\n}\n",
            r":4: response_header_timeout 'soon' is not a duration",
        ),
        (
            "{\n\tservers {\n\t\ttimeouts {\n\t\t\tslow 1s\n\t\t}\n\t}\n}\n",
            r":4: servers timeouts has no 'slow'",
        ),
        ("a.example.com { reverse_proxy :8000 }\n", r":1: `\{` in the middle of a line"),
    ],
)
def test_malformed_caddyfiles_are_one_line_naming_file_and_line(
    tmp_path: Path, text: str, message: str
) -> None:
    """Open quotes, stray or missing braces, bad durations, unknown timeouts: one line, no guess."""
    with pytest.raises(CheckInputError, match=r"Caddyfile" + message):
        _caddy(tmp_path, text)


def test_caddy_heredocs_are_one_token_and_keep_line_numbers(tmp_path: Path) -> None:
    """A `respond <<HTML` body (Caddy 2.7+; Debian's caddy 2.6 predates heredocs, so not
    adapted here) with braces inside is one value, and the lines after it keep their numbers."""
    text = (
        "a.example.com {\n\trespond <<HTML\n\t\t<style>body { color: red }</style>\n"
        "\t\t}\n\t\tHTML 200\n\treverse_proxy /api/* 127.0.0.1:8000\n}\n"
    )
    (balancer,) = _caddy(tmp_path, text)
    assert balancer.at.line == 6
    assert [s.value for s in balancer.servers] == ["127.0.0.1:8000"]


def test_caddyfile_claimed_by_its_names(tmp_path: Path) -> None:
    """`Caddyfile`, `Caddyfile.prod`, `site.caddyfile` are Caddyfiles; a `caddy.json` is not."""
    for name in ("Caddyfile", "Caddyfile.prod", "Caddyfile-dev", "site.caddyfile"):
        assert reader_for(tmp_path / name, "localhost\nrespond ok\n").kind == "caddy"
    assert reader_for(tmp_path / "caddy.json", '{"apps": {}}').kind != "caddy"


def test_check_cli_refuses_a_broken_caddyfile_in_one_line(tmp_path: Path) -> None:
    """A stray brace, and a file that is not UTF-8: exit 2, one `error:` line each, no traceback."""
    (tmp_path / "Caddyfile").write_text("a.example.com {\n\treverse_proxy :8000\n}\n}\n")
    (tmp_path / "Caddyfile.bin").write_bytes(b"a.example.com {\n\trespond \xff\xfe\n}\n")
    result = CliRunner().invoke(
        app, ["check", str(tmp_path / "Caddyfile"), str(tmp_path / "Caddyfile.bin")]
    )
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 2
    assert "Traceback" not in result.output
    assert "Caddyfile:4: `}` closes no block" in errors[0]


UVICORN = "web: uvicorn app:app --host 127.0.0.1 --port 8000%s\n"
GUNICORN_SYNC = 'bind = "127.0.0.1:8000"\nworkers = 2\ntimeout = 30\n'


def _rules(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, str, int]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = check_files([tmp_path / n for n in files], machine=MACHINE, env={}, root=tmp_path)
    assert not result.errors, result.errors
    assert result.balancer_links, "the front is linked to the app server"
    return [(f.rule, f.at.file.name, f.at.line) for f in result.findings]


CADDY_TO_8000 = "app.example.com {\n\treverse_proxy 127.0.0.1:8000%s\n}\n"
TRANSPORT = " {\n\t\ttransport http {\n\t\t\t%s\n\t\t}\n\t}"


def test_caddy_keeping_idle_connections_past_uvicorns_keepalive_is_found(tmp_path: Path) -> None:
    """Caddy's default 2m idle pool in front of uvicorn's 5 s keep-alive: the 502 race, at
    uvicorn's line with Caddy's as the other side; Caddy's keepalive 60s under uvicorn's 75 s
    (by the rule's 5 s margin), `keepalive off`, or uvicorn's above Caddy's 2m: silent."""
    found = _rules(tmp_path, {"Caddyfile": CADDY_TO_8000 % "", "Procfile": UVICORN % ""})
    assert ("lb-idle-over-app-keepalive", "Procfile", 1) in found
    for quiet, uvicorn in (("keepalive 60s", " --timeout-keep-alive 75"), ("keepalive off", "")):
        found = _rules(
            tmp_path,
            {"Caddyfile": CADDY_TO_8000 % (TRANSPORT % quiet), "Procfile": UVICORN % uvicorn},
        )
        assert not [f for f in found if f[0] == "lb-idle-over-app-keepalive"], quiet
    found = _rules(
        tmp_path,
        {"Caddyfile": CADDY_TO_8000 % (TRANSPORT % "keepalive 60s"), "Procfile": UVICORN % ""},
    )
    assert ("lb-idle-over-app-keepalive", "Procfile", 1) in found
    found = _rules(
        tmp_path,
        {"Caddyfile": CADDY_TO_8000 % "", "Procfile": UVICORN % " --timeout-keep-alive 130"},
    )
    assert not [f for f in found if f[0] == "lb-idle-over-app-keepalive"]


def test_findings_about_a_front_cite_that_proxys_documented_defaults(tmp_path: Path) -> None:
    """A Caddy finding's `why` quotes Caddy's reverse_proxy reference, a Traefik one Traefik's
    serversTransport reference; the rule's own backing comes first."""
    for files, cited in (
        ({"Caddyfile": CADDY_TO_8000 % "", "Procfile": UVICORN % ""}, CADDY_PROXY_DOCS),
        ({"dynamic/app.yml": TRAEFIK_DYNAMIC, "Procfile": UVICORN % ""}, "serverstransport_1"),
    ):
        for name, text in files.items():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text)
        result = check_files([tmp_path / n for n in files], machine=MACHINE, env={}, root=tmp_path)
        (finding,) = [f for f in result.findings if f.rule == "lb-idle-over-app-keepalive"]
        assert finding.backing.startswith("servertune bench idle-race")
        assert cited in finding.backing
        for other in files:
            (tmp_path / other).unlink()


def test_caddy_giving_up_before_the_app_servers_timeout_is_found(tmp_path: Path) -> None:
    """response_header_timeout 20s before a sync gunicorn's 30 s timeout: Caddy answers while the
    worker still runs; 40s, or none (Caddy's default), is silent."""
    files = {"gunicorn.conf.py": GUNICORN_SYNC}
    files["Caddyfile"] = CADDY_TO_8000 % (TRANSPORT % "response_header_timeout 20s")
    found = _rules(tmp_path, files)
    assert ("app-timeout-over-read-timeout", "Caddyfile", 4) in found
    for quiet in (CADDY_TO_8000 % (TRANSPORT % "response_header_timeout 40s"), CADDY_TO_8000 % ""):
        files["Caddyfile"] = quiet
        assert not [f for f in _rules(tmp_path, files) if f[0] == "app-timeout-over-read-timeout"]


def test_caddy_in_front_of_nginx_outlasting_its_keepalive_is_found(tmp_path: Path) -> None:
    """Caddy keeps idle connections to nginx 2m, nginx closes them at 75 s: found at nginx's
    keepalive_timeout; Caddy's keepalive 60s is below it and silent."""
    nginx = (
        "events {}\nhttp {\n    keepalive_timeout 75s;\n    server {\n        listen 127.0.0.1:8080;\n"
        "        location / { proxy_pass http://127.0.0.1:8000; }\n    }\n}\n"
    )
    caddy = "app.example.com {\n\treverse_proxy 127.0.0.1:8080%s\n}\n"
    found = _rules(tmp_path, {"Caddyfile": caddy % "", "nginx.conf": nginx})
    assert ("lb-idle-over-nginx-keepalive", "nginx.conf", 3) in found
    found = _rules(
        tmp_path, {"Caddyfile": caddy % (TRANSPORT % "keepalive 60s"), "nginx.conf": nginx}
    )
    assert not [f for f in found if f[0] == "lb-idle-over-nginx-keepalive"]


def test_a_site_file_nginx_conf_includes_is_judged_under_its_http_block(tmp_path: Path) -> None:
    """nginx.conf's http block sets keepalive_timeout 65 and includes conf.d/*.conf, whose
    server listens where Caddy sends: one finding, at the 65 s nginx runs with, not a second
    at the site file read alone with nginx's 75 s default (seen in MaibornWolff+SecObserve,
    whose image copies both files to /etc/nginx)."""
    nginx = "events {}\nhttp {\n    keepalive_timeout 65;\n    include conf.d/*.conf;\n}\n"
    site = "server {\n    listen 127.0.0.1:8080;\n    location / { root /srv; }\n}\n"
    caddy = "app.example.com {\n\treverse_proxy 127.0.0.1:8080\n}\n"
    files = {"Caddyfile": caddy, "nginx/nginx.conf": nginx, "nginx/conf.d/site.conf": site}
    found = _rules(tmp_path, files)
    assert [f for f in found if f[0] == "lb-idle-over-nginx-keepalive"] == [
        ("lb-idle-over-nginx-keepalive", "nginx.conf", 3)
    ]


def test_caddy_is_not_judged_by_haproxys_maxconn(tmp_path: Path) -> None:
    """HAProxy's per-server maxconn rule stays HAProxy's: Caddy in front of a uvicorn with a
    chosen --limit-concurrency is not told to write `maxconn`."""
    found = _rules(
        tmp_path,
        {"Caddyfile": CADDY_TO_8000 % "", "Procfile": UVICORN % " --limit-concurrency 10"},
    )
    assert not [f for f in found if f[0] == "balancer-maxconn-over-app-limit"]


TRAEFIK_STATIC = """\
entryPoints:
  web:
    address: ":80"
    transport:
      respondingTimeouts:
        readTimeout: 60s
        writeTimeout: %s
        idleTimeout: 180s
serversTransport:
  forwardingTimeouts:
    idleConnTimeout: %s
providers:
  file:
    directory: /etc/traefik/dynamic
    watch: true
"""

TRAEFIK_DYNAMIC = """\
http:
  routers:
    app:
      rule: "Host(`example.com`)"
      entryPoints: [web]
      service: app
  services:
    app:
      loadBalancer:
        servers:
          - url: "http://127.0.0.1:8000"
        healthCheck:
          path: /health
          interval: 10s
    slow:
      loadBalancer:
        serversTransport: patient
        servers:
          - url: "http://web:8001/"
  serversTransports:
    patient:
      forwardingTimeouts:
        responseHeaderTimeout: 10s
        idleConnTimeout: 0
"""


def _traefik(
    tmp_path: Path, static: str | None, dynamic: str, name: str = "app.yml"
) -> list[Balancer]:
    (tmp_path / "dynamic").mkdir(exist_ok=True)
    (tmp_path / "dynamic" / name).write_text(dynamic)
    if static is not None:
        (tmp_path / "traefik.yml").write_text(static)
    path = tmp_path / "dynamic" / name
    return list(read_traefik(path, dynamic)[0])


def test_traefik_dynamic_services_take_the_static_config_that_names_them(tmp_path: Path) -> None:
    """Services' server urls, a named serversTransport over the static default, the entry
    point's writeTimeout: read from the dynamic file with the traefik.yml beside it."""
    with confined_to(tmp_path):  # the static config is one folder up: inside the tree
        app_, slow = _traefik(tmp_path, TRAEFIK_STATIC % ("20s", "30s"), TRAEFIK_DYNAMIC)
    assert [s.value for s in app_.servers] == ["127.0.0.1:8000"]
    assert app_.idle is not None
    assert (app_.idle.value, app_.idle.at.file.name) == (
        30,
        "traefik.yml",
    )
    assert app_.server_timeout is not None
    assert app_.server_timeout.value == 20
    assert (
        app_.server_timeout_directive == "entryPoints.web.transport.respondingTimeouts.writeTimeout"
    )
    assert [s.value for s in slow.servers] == ["web:8001"]
    assert slow.idle is not None
    assert math.isinf(slow.idle.value)
    assert slow.server_timeout is not None
    assert slow.server_timeout.value == 10
    # The static config read on its own reads the same services through its file provider.
    static_path = tmp_path / "traefik.yml"
    through, files = read_traefik(static_path, static_path.read_text())
    assert list(through) == [app_, slow]
    assert files == (tmp_path / "dynamic" / "app.yml",)


def test_traefik_write_timeout_is_that_of_the_routers_entry_points(tmp_path: Path) -> None:
    """The `app` router takes only `websecure`, which sets no writeTimeout: `web`'s 20 s does
    not bound the service's answers."""
    dynamic = TRAEFIK_DYNAMIC.replace("entryPoints: [web]", "entryPoints: [websecure]")
    static = TRAEFIK_STATIC % ("20s", "30s")
    static = static.replace(
        "serversTransport:", '  websecure:\n    address: ":443"\nserversTransport:'
    )
    assert "websecure" in static
    with confined_to(tmp_path):
        app_, _ = _traefik(tmp_path, static, dynamic)
    assert app_.server_timeout is None


def test_traefik_dynamic_file_alone_takes_traefiks_defaults(tmp_path: Path) -> None:
    """No static config beside it: idleConnTimeout 90s, no wait (responseHeaderTimeout 0)."""
    app_, _ = _traefik(tmp_path, None, TRAEFIK_DYNAMIC)
    assert app_.idle is not None
    assert app_.idle.default
    assert app_.idle.value == DEFAULT_IDLE_CONN_TIMEOUT_S == 90
    assert app_.server_timeout is None


def test_traefik_toml_static_and_dynamic(tmp_path: Path) -> None:
    """The same in TOML, with lines found for the settings."""
    (tmp_path / "traefik.toml").write_text(
        '[entryPoints.web]\n  address = ":80"\n[serversTransport.forwardingTimeouts]\n'
        '  idleConnTimeout = "45s"\n[providers.file]\n  filename = "dynamic.toml"\n'
    )
    (tmp_path / "dynamic.toml").write_text(
        "[http.services.app.loadBalancer]\n  [[http.services.app.loadBalancer.servers]]\n"
        '    url = "http://127.0.0.1:8000"\n'
    )
    path = tmp_path / "traefik.toml"
    (balancer,), files = read_traefik(path, path.read_text())
    assert balancer.idle is not None
    assert (balancer.idle.value, balancer.idle.at.line) == (45, 4)
    assert [s.value for s in balancer.servers] == ["127.0.0.1:8000"]
    assert files == (tmp_path / "dynamic.toml",)


def test_traefik_idle_past_uvicorns_keepalive_is_found_once(tmp_path: Path) -> None:
    """Traefik's 90 s default against uvicorn's 5 s (the known 502 class), static and dynamic
    both given: one finding; idleConnTimeout 30s under uvicorn's 40 s is silent."""
    files = {
        "traefik.yml": TRAEFIK_STATIC % ("0s", "90s"),
        "dynamic/app.yml": TRAEFIK_DYNAMIC,
        "Procfile": UVICORN % "",
    }
    found = [f for f in _rules(tmp_path, files) if f[0] == "lb-idle-over-app-keepalive"]
    assert found == [("lb-idle-over-app-keepalive", "Procfile", 1)]
    files["traefik.yml"] = TRAEFIK_STATIC % ("0s", "30s")
    files["Procfile"] = UVICORN % " --timeout-keep-alive 40"
    assert not [f for f in _rules(tmp_path, files) if f[0] == "lb-idle-over-app-keepalive"]


def test_traefik_waiting_less_than_the_app_server_is_found(tmp_path: Path) -> None:
    """responseHeaderTimeout 10s before a sync gunicorn's 30 s: found at Traefik's line."""
    dynamic = TRAEFIK_DYNAMIC.replace("web:8001", "127.0.0.1:8000")
    found = _rules(tmp_path, {"dynamic/app.yml": dynamic, "gunicorn.conf.py": GUNICORN_SYNC})
    assert ("app-timeout-over-read-timeout", "app.yml", 23) in found
    quiet = dynamic.replace("responseHeaderTimeout: 10s", "responseHeaderTimeout: 60s")
    found = _rules(tmp_path, {"dynamic/app.yml": quiet, "gunicorn.conf.py": GUNICORN_SYNC})
    assert not [f for f in found if f[0] == "app-timeout-over-read-timeout"]


COMPOSE = """\
services:
  traefik:
    image: traefik:v3.1
    command:
      - --providers.docker=true
      - --entrypoints.web.address=:80%s
    ports: ["80:80"]
  api:
    build: .
    command: uvicorn app:app --host 0.0.0.0 --port 8000
    labels:
      - traefik.enable=true
      - traefik.http.routers.api.rule=Host(`api.example.com`)
      - traefik.http.services.api.loadbalancer.server.port=8000
  worker:
    image: redis:7
"""


def test_traefik_labels_link_the_front_to_their_compose_service(tmp_path: Path) -> None:
    """Labels make a Traefik service sending to `api:8000`: linked to the uvicorn of that compose
    service, judged with the traefik container's flags (90 s default; 30 s under uvicorn's
    40 s: silent)."""
    found = _rules(tmp_path, {"compose.yaml": COMPOSE % ""})
    assert ("lb-idle-over-app-keepalive", "compose.yaml", 10) in found
    flag = "\n      - --serversTransport.forwardingTimeouts.idleConnTimeout=30s"
    quiet = (COMPOSE % flag).replace("--port 8000", "--port 8000 --timeout-keep-alive 40")
    found = _rules(tmp_path, {"compose.yaml": quiet})
    assert not [f for f in found if f[0] == "lb-idle-over-app-keepalive"]


def test_traefik_labels_without_a_port_use_the_one_exposed_port(tmp_path: Path) -> None:
    """A routed service with no port label: Traefik takes its one exposed port (`expose`), so
    it is linked as well; with two exposed ports nothing is guessed."""
    text = (
        (COMPOSE % "")
        .replace(
            "      - traefik.http.services.api.loadbalancer.server.port=8000\n",
            "",
        )
        .replace("    labels:\n", "    expose: ['8000']\n    labels:\n")
    )
    found = _rules(tmp_path, {"compose.yaml": text})
    assert ("lb-idle-over-app-keepalive", "compose.yaml", 10) in found
    two = text.replace("expose: ['8000']", "expose: ['8000', '9000']")
    (tmp_path / "compose.yaml").write_text(two)
    result = check_files([tmp_path / "compose.yaml"], machine=MACHINE, env={}, root=tmp_path)
    assert not result.balancer_links


def test_traefik_labels_without_a_port_use_the_one_port_the_image_exposes(
    tmp_path: Path,
) -> None:
    """A routed service with no port label and no `expose`: Traefik's docker provider takes the
    one port the container exposes, and its image's Dockerfile `EXPOSE 8000` exposes it; the
    front is joined to the service's gunicorn on 8000, its port said at the first router
    label, and judged (gunicorn's 2 s keep-alive under Traefik's 90 s idle pool). With
    `EXPOSE 8000 9000` nothing is guessed (seen in MaibornWolff/SecObserve's
    docker-compose-prod-*.yml)."""
    compose = (
        (COMPOSE % "")
        .replace("      - traefik.http.services.api.loadbalancer.server.port=8000\n", "")
        .replace("    command: uvicorn app:app --host 0.0.0.0 --port 8000\n", "")
    )
    dockerfile = (
        "FROM python:3.12-slim\nWORKDIR /app\nEXPOSE 8000\n"
        'CMD ["gunicorn", "app:app", "-k", "gthread", "--threads", "4", "--bind", "0.0.0.0:8000"]\n'
    )
    files = {"compose.yaml": compose, "Dockerfile": dockerfile}
    assert ("lb-idle-over-app-keepalive", "Dockerfile", 4) in _rules(tmp_path, files)
    paths = [tmp_path / "compose.yaml", tmp_path / "Dockerfile"]
    result = check_files(paths, machine=MACHINE, env={}, root=tmp_path)
    assert [(b.server.value, b.server.at.line) for b in result.balancer_links] == [("api:8000", 12)]
    (tmp_path / "Dockerfile").write_text(dockerfile.replace("8000\n", "8000 9000\n", 1))
    result = check_files(paths, machine=MACHINE, env={}, root=tmp_path)
    assert not result.balancer_links


def test_traefik_swarm_labels_under_deploy_link_the_front(tmp_path: Path) -> None:
    """A swarm stack sets Traefik's labels on the service (`deploy.labels`), where Traefik's
    swarm provider reads them: they make the same Traefik service sending to `api:8000`,
    joined to its uvicorn and judged, its port said at its `deploy.labels` line (seen in
    uclapi's docker/deployment/docker-compose-production.yml and osparc-simcore's
    services/docker-compose.yml)."""
    flag = "\n      - --providers.docker.swarmMode=true"
    swarm = (
        (COMPOSE % flag)
        .replace("    labels:\n", "    deploy:\n      replicas: 2\n      labels:\n")
        .replace("      - traefik.", "        - traefik.")
    )
    found = _rules(tmp_path, {"compose.yaml": swarm})
    assert ("lb-idle-over-app-keepalive", "compose.yaml", 11) in found
    result = check_files([tmp_path / "compose.yaml"], machine=MACHINE, env={}, root=tmp_path)
    assert [(b.server.value, b.server.at.line) for b in result.balancer_links] == [("api:8000", 17)]


def test_traefik_label_port_from_the_environment_is_a_note(tmp_path: Path) -> None:
    """`server.port=${PORT}` is known only when compose runs: a coverage note, no refusal."""
    text = COMPOSE.replace("server.port=8000", "server.port=${API_PORT}") % ""
    (tmp_path / "compose.yaml").write_text(text)
    result = check_files([tmp_path / "compose.yaml"], machine=MACHINE, env={}, root=tmp_path)
    assert not result.errors
    assert any(n.kind == "unresolved-variable" and n.at.line == 14 for n in result.notes)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "entryPoints:\n  web:\n    transport:\n      respondingTimeouts:\n        writeTimeout: soon\n",
            r":5: entryPoints\.web\.transport\.respondingTimeouts\.writetimeout 'soon' is not a duration",
        ),
        (
            "entryPoints:\n  web:\n    transport:\n      respondingTimeouts:\n        slowTimeout: 1s\n",
            r":5: respondingTimeouts has no 'slowtimeout'",
        ),
        ("entryPoints:\n  web: [unclosed\n", r":\d+: not valid YAML"),
        (
            "http:\n  services:\n    a:\n      loadBalancer:\n        servers:\n          - url: 127.0.0.1:8000\n",
            r":6: server url '127\.0\.0\.1:8000' has no scheme",
        ),
    ],
)
def test_malformed_traefik_configs_are_one_line_naming_file_and_line(
    tmp_path: Path, text: str, message: str
) -> None:
    """Bad durations, unknown timeouts, broken YAML, a url with no scheme: one line."""
    path = tmp_path / "traefik.yml"
    path.write_text(text)
    with pytest.raises(CheckInputError, match=r"traefik\.yml" + message):
        read_traefik(path, text)


def test_check_cli_refuses_broken_traefik_configs_in_one_line(tmp_path: Path) -> None:
    """A bad duration and an alias bomb (never expanded): exit 2, one `error:` line each."""
    (tmp_path / "traefik.yml").write_text(
        "serversTransport:\n  forwardingTimeouts:\n    idleConnTimeout: forever\n"
    )
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8)
    )
    (tmp_path / "dynamic").mkdir()
    (tmp_path / "dynamic" / "traefik.yaml").write_text("entryPoints:\n  web: {}\n" + bomb)
    result = CliRunner().invoke(
        app, ["check", str(tmp_path / "traefik.yml"), str(tmp_path / "dynamic" / "traefik.yaml")]
    )
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 2
    assert (
        "traefik.yml:3: forwardingTimeouts.idleconntimeout 'forever' is not a duration" in errors[0]
    )
    assert "too many or too deeply nested values; refused" in errors[1]


def test_traefik_configs_claimed_by_name_and_content(tmp_path: Path) -> None:
    """traefik.yml/.toml by name; a dynamic YAML by its `http:` routers/services; a compose file
    stays a compose file; a plain YAML stays YAML check does not read."""
    assert reader_for(tmp_path / "traefik.toml", "[entryPoints.web]\n").kind == "traefik"
    assert reader_for(tmp_path / "routes.yml", TRAEFIK_DYNAMIC).kind == "traefik"
    assert reader_for(tmp_path / "compose.yaml", COMPOSE % "").kind == "compose"
    assert reader_for(tmp_path / "values.yml", "replicas: 2\n").kind == "data"


def test_traefik_idle_past_the_app_servers_keepalive_is_a_warning(tmp_path: Path) -> None:
    """Traefik (and Caddy) proxy through Go's http.Transport, which sends a GET or another
    idempotent request again on a new connection when a reused one was closed idle
    (net/http transport.go, `shouldRetryRequest` on `errServerClosedIdle`): uvicorn's 5 s
    under Traefik's 90 s costs only the POSTs that meet the race, so lb-idle-over-app-keepalive
    is a warning that says so, not an error (seen on uccser/cs-unplugged's gunicorn)."""
    files = {
        "traefik.yml": TRAEFIK_STATIC % ("0s", "90s"),
        "dynamic/app.yml": TRAEFIK_DYNAMIC,
        "Procfile": UVICORN % "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = check_files([tmp_path / n for n in files], machine=MACHINE, env={}, root=tmp_path)
    (finding,) = [f for f in result.findings if f.rule == "lb-idle-over-app-keepalive"]
    assert finding.severity is Severity.warning
    assert "Go's transport" in finding.message
