"""`check` follows HAProxy's server lines to the app servers listening there (no nginx between):
`timeout server` against the app's request timeout, HAProxy's idle connections against the
app's keep-alive, and each server's `maxconn` against the app's own concurrency limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.cli import app
from servertune.sizing import Machine

MACHINE = Machine(cores=2, somaxconn=4096)

HAPROXY = """\
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout http-keep-alive 60s
    timeout server {server}

frontend web
    bind 127.0.0.1:8000
    default_backend workers

backend workers
    http-reuse always
    timeout queue 25ms
    server w0 {address} {options}
"""


def _check(tmp_path: Path, haproxy: str, app_file: tuple[str, str]) -> CheckResult:
    (tmp_path / "haproxy.cfg").write_text(haproxy)
    name, text = app_file
    (tmp_path / name).write_text(text)
    return check_files([tmp_path / "haproxy.cfg", tmp_path / name], machine=MACHINE, env={})


def _uvicorn(
    flags: str, bind: str = "--host 127.0.0.1 --port 8001", keepalive: str = "65"
) -> tuple[str, str]:
    """A script starting uvicorn; its keep-alive outlasts HAProxy's 60 s unless told."""
    return (
        "start.sh",
        f"#!/bin/sh\nexec uvicorn app:app {bind} \\\n    --timeout-keep-alive {keepalive} {flags}\n",
    )


def _haproxy(options: str = "", address: str = "127.0.0.1:8001", server: str = "60s") -> str:
    return HAPROXY.format(options=options, address=address, server=server)


def _rule(result: CheckResult, rule: str) -> list[object]:
    return [f for f in result.findings if f.rule == rule]


def test_maxconn_above_uvicorn_limit_concurrency_is_found(tmp_path: Path) -> None:
    """maxconn 10 to a uvicorn under --limit-concurrency 8, which serves 7 at once (its 8th open
    connection, the request's own, gets a 503): a warning at HAProxy's server line, the uvicorn
    flag as the other side, fix maxconn 7; maxconn 7 is clean and the pair is linked."""
    result = _check(tmp_path, _haproxy("maxconn 10"), _uvicorn("--limit-concurrency 8"))
    assert [b.app.kind for b in result.balancer_links if b.app is not None] == ["uvicorn"]
    (finding,) = _rule(result, "balancer-maxconn-over-app-limit")
    assert (finding.at.file.name, finding.at.line) == ("haproxy.cfg", 15)  # type: ignore[attr-defined]
    assert "maxconn 10" in finding.message  # type: ignore[attr-defined]
    assert "--limit-concurrency 8" in finding.message  # type: ignore[attr-defined]
    assert "503" in finding.message  # type: ignore[attr-defined]
    assert "serves 7 at once" in finding.message  # type: ignore[attr-defined]
    assert finding.fix == "maxconn 7 pool-max-conn 0"  # type: ignore[attr-defined]
    assert [r.file.name for r in finding.related] == ["start.sh"]  # type: ignore[attr-defined]
    assert "5.2-maxconn" in finding.backing  # type: ignore[attr-defined]
    fixed = _haproxy("maxconn 7 pool-max-conn 0")
    assert _check(tmp_path, fixed, _uvicorn("--limit-concurrency 8")).findings == ()
    at_the_limit = _check(tmp_path, _haproxy("maxconn 8"), _uvicorn("--limit-concurrency 8"))
    assert len(_rule(at_the_limit, "balancer-maxconn-over-app-limit")) == 1


@pytest.mark.parametrize(
    ("backend", "options", "fix", "why"),
    [
        ("http-reuse always", "maxconn 7", "pool-max-conn 0", "before the connection"),
        ("http-reuse safe", "maxconn 4", "pool-max-conn 3", "first request over a new"),
        ("", "maxconn 4", "pool-max-conn 3", "http-reuse safe"),
        ("http-reuse always", "maxconn 4 pool-max-conn 4", "pool-max-conn 3", "up to 8"),
        ("http-reuse never", "maxconn 4", "option http-server-close", "same client"),
    ],
)
def test_idle_connections_past_uvicorn_limit_are_found(
    tmp_path: Path, backend: str, options: str, fix: str, why: str
) -> None:
    """In HTTP mode maxconn counts requests; the connections HAProxy keeps open after the
    answers count against uvicorn's limit too (8, serving 7): an unbounded idle pool, one
    that with maxconn passes 7, or connections kept per client are found, and the fix bounds
    the pool to what maxconn leaves."""
    haproxy = _haproxy(options).replace("    http-reuse always\n", f"    {backend}\n")
    result = _check(tmp_path, haproxy, _uvicorn("--limit-concurrency 8"))
    (finding,) = _rule(result, "balancer-maxconn-over-app-limit")
    assert "counts requests, not connections" in finding.message  # type: ignore[attr-defined]
    assert why in finding.message  # type: ignore[attr-defined]
    assert fix in finding.fix  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("backend", "options"),
    [
        ("http-reuse safe", "maxconn 4 pool-max-conn 3"),
        ("http-reuse always", "maxconn 3"),
        ("option http-server-close", "maxconn 7"),
        ("http-reuse never\n    option http-server-close", "maxconn 7"),
    ],
)
def test_idle_connections_within_uvicorn_limit_are_clean(
    tmp_path: Path, backend: str, options: str
) -> None:
    """maxconn plus the idle connections HAProxy may keep stay within the 7 uvicorn serves:
    a bounded pool, `always` at half the limit, or connections closed after each answer."""
    haproxy = _haproxy(options).replace("    http-reuse always\n", f"    {backend}\n")
    assert _check(tmp_path, haproxy, _uvicorn("--limit-concurrency 8")).findings == ()


def test_tcp_mode_holds_only_maxconn_connections(tmp_path: Path) -> None:
    """In TCP mode the client's connection is the server's: maxconn 7 is 7 connections."""
    haproxy = (
        _haproxy("maxconn 7")
        .replace("mode http", "mode tcp")
        .replace("    http-reuse always\n", "")
    )
    result = _check(tmp_path, haproxy, _uvicorn("--limit-concurrency 8"))
    assert [b.app.kind for b in result.balancer_links if b.app is not None] == ["uvicorn"]
    assert _rule(result, "balancer-maxconn-over-app-limit") == []
    unbounded = haproxy.replace("maxconn 7", "maxconn 7 pool-max-conn -1")
    assert _check(tmp_path, unbounded, _uvicorn("--limit-concurrency 8")).findings == ()


def test_maxconn_of_every_backend_to_one_server_adds_up(tmp_path: Path) -> None:
    """Two backends to one uvicorn (gen's idempotent / once pair): 4 + 6 is above 8, 4 + 4 is not."""
    two = _haproxy("maxconn {first} pool-max-conn 0") + (
        "\nbackend once\n    option http-server-close\n"
        "    server w0 127.0.0.1:8001 track workers/w0 maxconn {second}\n"
    )
    result = _check(tmp_path, two.format(first=4, second=6), _uvicorn("--limit-concurrency 8"))
    (finding,) = _rule(result, "balancer-maxconn-over-app-limit")
    assert "maxconn 10 (4, 6 on 2 server lines)" in finding.message  # type: ignore[attr-defined]
    assert finding.fix == "maxconn 3 pool-max-conn 0 on each server line to it"  # type: ignore[attr-defined]
    clean = _check(tmp_path, two.format(first=4, second=4), _uvicorn("--limit-concurrency 9"))
    assert _rule(clean, "balancer-maxconn-over-app-limit") == []


def test_server_without_maxconn_in_front_of_a_chosen_limit_is_found(tmp_path: Path) -> None:
    """No maxconn: HAProxy sends everything, uvicorn sheds from 8. `default-server maxconn 7`
    gives the server line its limit; a uvicorn with no limit of its own draws nothing."""
    result = _check(tmp_path, _haproxy(), _uvicorn("--limit-concurrency 8"))
    (finding,) = _rule(result, "balancer-maxconn-over-app-limit")
    assert "no maxconn" in finding.message  # type: ignore[attr-defined]
    assert finding.fix.startswith("maxconn 7")  # type: ignore[attr-defined]
    defaulted = _haproxy().replace(
        "    server w0", "    default-server maxconn 7 pool-max-conn 0\n    server w0"
    )
    assert _check(tmp_path, defaulted, _uvicorn("--limit-concurrency 8")).findings == ()
    assert _check(tmp_path, _haproxy(), _uvicorn("--no-access-log")).findings == ()


def test_maxconn_above_granian_backpressure_is_found(tmp_path: Path) -> None:
    """granian leaves connections past --backpressure unaccepted: maxconn 32 over 16 is found;
    granian's own default (backlog / workers), chosen by nobody, with no maxconn is not."""
    granian = (
        "start.sh",
        (
            "#!/bin/sh\nexec granian --interface asgi --host 127.0.0.1 --port 8001 "
            "--backpressure 16 app:app\n"
        ),
    )
    result = _check(tmp_path, _haproxy("maxconn 32"), granian)
    (finding,) = _rule(result, "balancer-maxconn-over-app-limit")
    assert "--backpressure 16" in finding.message  # type: ignore[attr-defined]
    assert "unaccepted" in finding.message  # type: ignore[attr-defined]
    assert finding.fix == "maxconn 16"  # type: ignore[attr-defined]
    plain = ("start.sh", "#!/bin/sh\nexec granian --interface asgi --port 8001 app:app\n")
    assert _rule(_check(tmp_path, _haproxy(), plain), "balancer-maxconn-over-app-limit") == []


def test_unix_socket_servers_link_to_uvicorn_uds(tmp_path: Path) -> None:
    """`server w0 unix@/run/app.sock` reaches `uvicorn --uds /run/app.sock`: linked, compared."""
    result = _check(
        tmp_path,
        _haproxy("maxconn 16", address="unix@/run/app.sock"),
        _uvicorn("--limit-concurrency 8", bind="--uds /run/app.sock"),
    )
    assert [b.server.value for b in result.balancer_links] == ["unix:/run/app.sock"]
    (finding,) = _rule(result, "balancer-maxconn-over-app-limit")
    assert finding.fix == "maxconn 7 pool-max-conn 0"  # type: ignore[attr-defined]


def test_timeout_server_below_gunicorn_timeout_is_found(tmp_path: Path) -> None:
    """HAProxy gives up after 20 s on a sync gunicorn worker allowed 30 s: the warning is at
    `timeout server`, fix 35 s; 40 s is clean; uvicorn has no request timeout to order."""
    gunicorn = ("gunicorn.conf.py", 'bind = "127.0.0.1:8001"\nkeepalive = 75\ntimeout = 30\n')
    result = _check(tmp_path, _haproxy(server="20s"), gunicorn)
    (finding,) = _rule(result, "app-timeout-over-read-timeout")
    assert (finding.at.file.name, finding.at.line) == ("haproxy.cfg", 6)  # type: ignore[attr-defined]
    assert finding.message.startswith("timeout server 20 s gives up 10 s before")  # type: ignore[attr-defined]
    assert "HAProxy answers 504" in finding.message  # type: ignore[attr-defined]
    assert finding.fix == "timeout server 35s"  # type: ignore[attr-defined]
    assert "4.2-timeout%20server" in finding.backing  # type: ignore[attr-defined]
    assert _check(tmp_path, _haproxy(server="40s"), gunicorn).findings == ()
    uvicorn = _check(tmp_path, _haproxy(server="1s"), _uvicorn(""))
    assert _rule(uvicorn, "app-timeout-over-read-timeout") == []


def test_haproxy_pool_longer_than_uvicorn_keepalive_is_found(tmp_path: Path) -> None:
    """http-reuse keeps idle connections to uvicorn for 60 s: uvicorn's 5 s default closes them
    first and HAProxy reuses a closing one (the 502 race); 65 s is clean."""
    short = _check(tmp_path, _haproxy("pool-purge-delay 60s"), _uvicorn("", keepalive="5"))
    (finding,) = _rule(short, "lb-idle-over-app-keepalive")
    assert finding.fix == "--timeout-keep-alive 65"  # type: ignore[attr-defined]
    assert [b.app.kind for b in short.balancer_links if b.app is not None] == ["uvicorn"]
    assert _check(tmp_path, _haproxy("pool-purge-delay 60s"), _uvicorn("")).findings == ()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        *(("maxconn", v) for v in ["ten", "-1", "1e3", "\u00b2", "9" * 5000]),
        *(("pool-max-conn", v) for v in ["ten", "-2", "--1", "1e3", "\u00b2", "9" * 5000]),
    ],
)
def test_a_server_number_that_is_not_a_number_is_one_error_line(
    tmp_path: Path, key: str, value: str
) -> None:
    """`maxconn ten`, `pool-max-conn -2`: exit 2, one `error:` line naming the file, line and
    the word (-1 is pool-max-conn's "unbounded")."""
    (tmp_path / "haproxy.cfg").write_text(_haproxy(f"{key} {value}"))
    result = CliRunner().invoke(app, ["check", str(tmp_path / "haproxy.cfg")])
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("error:")]
    assert f"haproxy.cfg:15: {key}: not a number of connections" in line
    assert "Traceback" not in result.output


def test_unconditional_set_timeout_server_is_the_timeout_compared(tmp_path: Path) -> None:
    """`http-request set-timeout server 3s` (gen's per-try timeout) replaces `timeout server`
    for every request: it is what HAProxy waits on a 30 s gunicorn; a conditional one is not."""
    gunicorn = ("gunicorn.conf.py", 'bind = "127.0.0.1:8001"\nkeepalive = 75\ntimeout = 30\n')
    haproxy = _haproxy(server="60s").replace(
        "    timeout queue", "    http-request set-timeout server 3s{cond}\n    timeout queue"
    )
    result = _check(tmp_path, haproxy.format(cond=""), gunicorn)
    (finding,) = _rule(result, "app-timeout-over-read-timeout")
    assert finding.at.line == 14  # type: ignore[attr-defined]
    assert finding.fix == "http-request set-timeout server 35s"  # type: ignore[attr-defined]
    conditional = haproxy.format(cond=" if { path_beg /fast }")
    assert _check(tmp_path, conditional, gunicorn).findings == ()


def test_json_lists_the_haproxy_links(tmp_path: Path) -> None:
    """`check --format json` names each HAProxy server line, its maxconn and the app behind it."""
    _check(tmp_path, _haproxy("maxconn 8 pool-max-conn 0"), _uvicorn("--limit-concurrency 9"))
    files = [str(tmp_path / "haproxy.cfg"), str(tmp_path / "start.sh"), "--format", "json"]
    result = CliRunner().invoke(app, ["check", *files])
    assert result.exit_code == 0, result.output
    (link,) = json.loads(result.stdout)["balancer_links"]
    assert link == {
        "balancer": f"{tmp_path / 'haproxy.cfg'}:15",
        "backend": "workers",
        "server": "127.0.0.1:8001",
        "maxconn": 8,
        "pool_max_conn": 0,
        "nginx": None,
        "app": str(tmp_path / "start.sh"),
    }


def test_a_compose_service_name_links_like_an_address(tmp_path: Path) -> None:
    """In compose, `server w0 web:8000` reaches the `web` service's uvicorn on port 8000 (not
    HAProxy's loopback): linked by name and port, and its maxconn compared."""
    compose = (
        "services:\n  web:\n    image: web\n    cpus: '1'\n"
        "    command: uvicorn app:app --host 0.0.0.0 --port 8000 --workers 1"
        " --timeout-keep-alive 65 --limit-concurrency 8\n"
    )
    result = _check(tmp_path, _haproxy("maxconn 20", address="web:8000"), ("compose.yaml", compose))
    assert [b.app.kind for b in result.balancer_links if b.app is not None] == ["uvicorn"]
    (finding,) = _rule(result, "balancer-maxconn-over-app-limit")
    assert finding.fix == "maxconn 7 pool-max-conn 0"  # type: ignore[attr-defined]
    elsewhere = _haproxy("maxconn 20", address="web:9000")
    assert _check(tmp_path, elsewhere, ("compose.yaml", compose)).balancer_links == ()
