"""`check` reads HAProxy configs as HAProxy's manual describes them, and links HAProxy as the load
balancer in front of nginx (or an app server): its idle time is compared with nginx's keep-alive."""

from __future__ import annotations

import math
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.check import CheckInputError, check_files
from servertune.check.haproxy import parse_time, read_haproxy, words
from servertune.check.model import Location
from servertune.check.readers import reader_for
from servertune.cli import app
from servertune.render import render_haproxy, render_nginx
from servertune.sizing import Machine, make_plan
from servertune.workload import Workload
from tests.support import accepts, free_ports, running, tool, wait_for

MACHINE = Machine(cores=2)
NGINX = """events {}
http {
    keepalive_timeout %s;
    upstream app { server 127.0.0.1:8001; }
    server {
        listen 127.0.0.1:8000;
        location / { proxy_pass http://app; }
    }
}
"""


def _balancers(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[object]:
    path = tmp_path / "haproxy.cfg"
    path.write_text(text)
    return list(read_haproxy(path, text, env or {}))


def _idle(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> float | None:
    (balancer,) = _balancers(tmp_path, text, env)
    idle = balancer.idle  # type: ignore[attr-defined]
    return None if idle is None else float(idle.value)


def test_times_are_milliseconds_unless_a_unit_follows() -> None:
    """configuration.txt 2.5: `us`, `ms`, `s`, `m`, `h`, `d`; a bare number is milliseconds."""
    assert parse_time("60s") == 60
    assert parse_time("90000") == 90
    assert parse_time("1m") == 60
    assert parse_time("250ms") == 0.25
    assert parse_time("2h") == 7200
    assert parse_time("1d") == 86400
    assert parse_time("10us") == pytest.approx(1e-5)
    for bad in ("", "60 s", "1m30s", "-5s", "5x", "s"):
        assert parse_time(bad) is None, bad


def test_words_follow_haproxys_quoting_escaping_and_comments() -> None:
    """Double quotes expand variables, single quotes nothing; backslash escapes; `#` comments."""
    at = Location(Path("h.cfg"), 3)
    env = {"IDLE": "70s"}
    assert words('  timeout client "${IDLE}" # a comment', at, env) == ["timeout", "client", "70s"]
    assert words("timeout client '${IDLE}'", at, env) == ["timeout", "client", "${IDLE}"]
    assert words(r"name a\ b\#c \x41", at, env) == ["name", "a b#c", "A"]
    assert words('x "${MISSING-5s}"', at, env) == ["x", "5s"]
    assert words("x $IDLE", at, env) == ["x", "$IDLE"]  # not expanded outside quotes
    with pytest.raises(CheckInputError, match=r"^h\.cfg:3: \$MISSING is not set"):
        words('x "$MISSING"', at, env)
    with pytest.raises(CheckInputError, match=r"^h\.cfg:3: unterminated \" quote"):
        words('x "open', at, env)


def test_generated_config_reads_as_a_cloud_load_balancer(tmp_path: Path) -> None:
    """`gen haproxy`: two backends to nginx's address; the idempotent requests' keeps idle
    connections for the workload's LB idle timeout, the other methods' (a connection each) none."""
    plan = make_plan(Workload(cores=2, lb_idle_timeout_s=60), MACHINE)
    balancer, once = _balancers(tmp_path, render_haproxy(plan))
    assert [s.value for s in balancer.servers] == ["127.0.0.1:8000"]  # type: ignore[attr-defined]
    assert balancer.idle.value == 60  # type: ignore[attr-defined]
    assert [s.value for s in once.servers] == ["127.0.0.1:8000"]  # type: ignore[attr-defined]
    assert once.idle is None  # type: ignore[attr-defined]


def test_client_keepalive_falls_back_to_http_request_then_client(tmp_path: Path) -> None:
    """http-keep-alive, else http-request, else client (the manual's order); with reuse on, the
    longer of that and pool-purge-delay (5 s by default)."""
    base = "defaults\n    mode http\n    timeout client 30s\n{extra}backend b\n    server n 127.0.0.1:8000{purge}\n"
    assert _idle(tmp_path, base.format(extra="", purge="")) == 30
    extra = "    timeout http-request 10s\n"
    assert _idle(tmp_path, base.format(extra=extra, purge="")) == 10
    extra += "    timeout http-keep-alive 2s\n"
    assert _idle(tmp_path, base.format(extra=extra, purge="")) == 5  # the default purge delay
    assert _idle(tmp_path, base.format(extra=extra, purge=" pool-purge-delay 1m")) == 60


def test_defaults_reset_and_named_defaults_are_inherited(tmp_path: Path) -> None:
    """A new `defaults` replaces the previous one; `from NAME` picks a named one."""
    text = (
        "defaults long\n    mode http\n    timeout client 300s\n    http-reuse never\n"
        "defaults\n    mode http\n    timeout client 20s\n    http-reuse never\n"
        "backend plain\n    server n 127.0.0.1:8000\n"
        "backend picked from long\n    server n 127.0.0.1:8001\n"
    )
    plain, picked = _balancers(tmp_path, text)
    assert plain.idle.value == 20  # type: ignore[attr-defined]
    assert picked.idle.value == 300  # type: ignore[attr-defined]


def test_tcp_mode_closes_at_the_shorter_of_client_and_server(tmp_path: Path) -> None:
    """HAProxy's default mode is tcp: the client's connection is the server's."""
    text = "defaults\n    timeout client 50s\n    timeout server 40s\nlisten l\n    bind :80\n    server n 127.0.0.1:8000\n"
    assert _idle(tmp_path, text) == 40
    assert _idle(tmp_path, text.replace("listen l", "listen l\n    timeout tunnel 1h")) == 3600


def test_server_close_keeps_no_idle_connection_and_unset_never_closes(tmp_path: Path) -> None:
    """`option http-server-close`: nothing idle towards nginx; no timeout at all: never closes."""
    closing = "defaults\n    mode http\n    option http-server-close\nbackend b\n    server n 127.0.0.1:8000\n"
    assert _idle(tmp_path, closing) is None
    unset = "defaults\n    mode http\nbackend b\n    server n 127.0.0.1:8000\n"
    assert _idle(tmp_path, unset) == math.inf


def test_server_addresses_are_written_as_nginx_writes_them(tmp_path: Path) -> None:
    """ipv4@, bare IPv6 with a port, brackets and unix@ become nginx's spelling."""
    text = (
        "backend b\n    server a ipv4@10.0.0.2:80\n    server b ::1:8080\n"
        "    server c [fd00::2]:81\n    server d unix@/run/nginx.sock\n"
    )
    (balancer,) = _balancers(tmp_path, text)
    assert [s.value for s in balancer.servers] == [  # type: ignore[attr-defined]
        "10.0.0.2:80",
        "[::1]:8080",
        "[fd00::2]:81",
        "unix:/run/nginx.sock",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "defaults\n    mode http\n    timeout client 5 s\n",
            r":3: 'timeout client 5 s': a timeout takes an event and one time",
        ),
        ("backend b from nope\n", r":1: backend b: no defaults section 'nope'"),
        ("global\n.if defined(X)\n.endif\n", r":2: \.if: conditional blocks depend"),
        ("frontend f\n    bind :80 # \"\n    timeout client 'x\n", r":3: unterminated ' quote"),
        ("# only a comment\nmaxconn 10\n", r": no HAProxy section"),
    ],
)
def test_unreadable_configs_are_one_line_naming_file_and_line(
    tmp_path: Path, text: str, message: str
) -> None:
    """Bad times, an unknown `from`, conditional blocks, open quotes: one line, never a guess."""
    with pytest.raises(CheckInputError, match=r"haproxy\.cfg" + message):
        _balancers(tmp_path, text)


def test_claimed_by_name_or_by_its_first_section(tmp_path: Path) -> None:
    """haproxy*.cfg and files opening an HAProxy section are HAProxy's; nginx files are not."""
    assert reader_for(tmp_path / "haproxy.cfg", "global\n").kind == "haproxy"
    assert reader_for(tmp_path / "lb.cfg", "# lb\nfrontend web\n    bind :80\n").kind == "haproxy"
    assert reader_for(tmp_path / "site", "listen 80;\n").kind == "nginx"
    assert reader_for(tmp_path / "nginx.conf", "events {}\n").kind == "nginx"


def _chain(tmp_path: Path, haproxy: str, nginx_keepalive: str) -> list[object]:
    (tmp_path / "haproxy.cfg").write_text(haproxy)
    (tmp_path / "nginx.conf").write_text(NGINX % nginx_keepalive)
    result = check_files([tmp_path / "haproxy.cfg", tmp_path / "nginx.conf"], machine=MACHINE)
    assert [link.nginx.file.name for link in result.balancer_links] == ["nginx.conf"]  # type: ignore[union-attr]
    return [f for f in result.findings if f.rule == "lb-idle-over-nginx-keepalive"]


def test_haproxy_idle_longer_than_nginx_keepalive_is_found(tmp_path: Path) -> None:
    """HAProxy keeps idle client sessions 70 s, nginx closes at 65 s: error at nginx's line, fix
    75 s, and the HAProxy line that sets the idle time as the other side."""
    haproxy = (
        "defaults\n    mode http\n    timeout client 60s\n    timeout http-keep-alive 70s\n"
        "frontend f\n    bind :80\n    default_backend b\nbackend b\n    server n 127.0.0.1:8000\n"
    )
    (finding,) = _chain(tmp_path, haproxy, "65s")
    assert finding.at.line == 3  # type: ignore[attr-defined]
    assert "HAProxy backend `b` idle timeout of 70 s" in finding.message  # type: ignore[attr-defined]
    assert finding.fix == "keepalive_timeout 75s;"  # type: ignore[attr-defined]
    assert [(r.file.name, r.line) for r in finding.related] == [("haproxy.cfg", 4)]  # type: ignore[attr-defined]
    assert _chain(tmp_path, haproxy, "75s") == []


def test_haproxy_that_never_closes_is_found(tmp_path: Path) -> None:
    """No timeout at all in HAProxy (it warns, and runs): nginx always closes first."""
    haproxy = "defaults\n    mode http\nbackend b\n    server n 127.0.0.1:8000\n"
    (finding,) = _chain(tmp_path, haproxy, "600s")
    assert "never closes an idle connection to nginx" in finding.message  # type: ignore[attr-defined]


def test_generated_haproxy_and_nginx_check_clean_together(tmp_path: Path) -> None:
    """`gen haproxy` + `gen nginx-gunicorn` of one plan: linked, and no keep-alive finding;
    the same HAProxy in front of nginx's 75 s default with a 90 s idle is found."""
    plan = make_plan(Workload(cores=2), MACHINE)
    (tmp_path / "haproxy.cfg").write_text(render_haproxy(plan))
    (tmp_path / "nginx.conf").write_text(render_nginx(plan, "gunicorn"))
    result = check_files([tmp_path / "haproxy.cfg", tmp_path / "nginx.conf"], machine=MACHINE)
    assert len(result.balancer_links) == 2  # both backends reach nginx
    assert not [f for f in result.findings if f.rule.startswith("lb-idle")]
    slow = make_plan(Workload(cores=2, lb_idle_timeout_s=90), MACHINE)
    (tmp_path / "haproxy.cfg").write_text(render_haproxy(slow))
    result = check_files([tmp_path / "haproxy.cfg", tmp_path / "nginx.conf"], machine=MACHINE)
    assert [f.fix for f in result.findings if f.rule == "lb-idle-over-nginx-keepalive"] == [
        "keepalive_timeout 95s;"
    ]


def _straight_to_gunicorn(tmp_path: Path, gunicorn: str) -> list[str]:
    """The fixes of lb-idle-over-app-keepalive for HAProxy (60 s) in front of `gunicorn`."""
    (tmp_path / "haproxy.cfg").write_text(
        "defaults\n    mode http\n    timeout client 60s\nbackend b\n    server g 127.0.0.1:8001\n"
    )
    (tmp_path / "gunicorn.conf.py").write_text('bind = "127.0.0.1:8001"\n' + gunicorn)
    result = check_files(
        [tmp_path / "haproxy.cfg", tmp_path / "gunicorn.conf.py"], machine=MACHINE, env={}
    )
    assert len(result.balancer_links) == 1  # linked: a silence below is the rule's
    return [f.fix for f in result.findings if f.rule == "lb-idle-over-app-keepalive"]


@pytest.mark.parametrize(
    "gunicorn",
    ['worker_class = "gthread"\nthreads = 4\n', "threads = 4\n", 'worker_class = "gevent"\n'],
    ids=["gthread", "sync-with-threads-is-gthread", "gevent"],
)
def test_haproxy_straight_to_gunicorn_checks_its_keepalive(gunicorn: str, tmp_path: Path) -> None:
    """With no nginx, HAProxy's servers link to the app server: gunicorn's 2 s default on a
    worker that keeps idle connections open is found."""
    assert _straight_to_gunicorn(tmp_path, gunicorn) == ["keepalive = 65"]


@pytest.mark.parametrize(
    "gunicorn",
    ["", 'worker_class = "sync"\n', "keepalive = 2\n", 'worker_class = "egg:gunicorn#sync"\n'],
    ids=["default", "named", "keepalive-written", "egg"],
)
def test_a_sync_gunicorn_has_no_keepalive_to_race(gunicorn: str, tmp_path: Path) -> None:
    """gunicorn's sync worker closes the connection after each response (`Connection: close`;
    its settings docs: it "does not support persistent connections and will ignore" keepalive):
    HAProxy holds no idle connection to it, so no race is claimed."""
    assert _straight_to_gunicorn(tmp_path, gunicorn) == []


def test_check_cli_reads_haproxy(tmp_path: Path) -> None:
    """`servertune check haproxy.cfg nginx.conf`: exit 1 and the finding, file:line first
    (a warning: nginx keeps idle connections 75 s, tens of seconds)."""
    (tmp_path / "haproxy.cfg").write_text(
        "defaults\n    mode http\n    timeout http-keep-alive 120s\n    timeout client 120s\n"
        "backend b\n    server n 127.0.0.1:8000\n"
    )
    (tmp_path / "nginx.conf").write_text(NGINX % "75s")
    result = CliRunner().invoke(
        app, ["check", str(tmp_path / "haproxy.cfg"), str(tmp_path / "nginx.conf")]
    )
    assert result.exit_code == 1, result.output
    assert f"{tmp_path / 'nginx.conf'}:3: warning [lb-idle-over-nginx-keepalive]" in result.stdout


_OK_APP = """\
def application(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]
"""


def _answer(connection: socket.socket) -> bytes:
    """One response read off `connection`: headers and the two-byte body."""
    data = b""
    while not data.endswith(b"\r\n\r\nok"):
        chunk = connection.recv(4096)
        assert chunk, f"closed mid-response: {data!r}"
        data += chunk
    return data


@pytest.mark.parametrize(
    ("worker", "reused"), [(["-k", "sync"], False), (["-k", "gthread", "--threads", "2"], True)],
    ids=["sync", "gthread"],
)  # fmt: skip
def test_the_premise_on_a_real_gunicorn_sync_closes_gthread_keeps(
    worker: list[str], reused: bool, tmp_path: Path
) -> None:
    """The premise of the sync exemption, on a real gunicorn with its default keepalive: the
    sync worker answers an HTTP/1.1 request with `Connection: close` and closes the connection
    (nothing idle for a balancer to reuse); gthread answers a second request on it."""
    (tmp_path / "okapp.py").write_text(_OK_APP)
    (port,) = free_ports(1)
    argv = [tool("gunicorn"), "-b", f"127.0.0.1:{port}", "-w", "1", *worker, "okapp:application"]
    with running(argv, tmp_path, env={"PYTHONPATH": str(tmp_path)}):
        wait_for(lambda: accepts(f"127.0.0.1:{port}"), what="gunicorn")
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            request = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"
            connection.sendall(request)
            first = _answer(connection).lower()
            assert (b"connection: close" in first) == (not reused), first
            if reused:
                connection.sendall(request)
                assert _answer(connection).startswith(b"HTTP/1.1 200")
            else:
                assert connection.recv(1) == b""  # gunicorn closed it
