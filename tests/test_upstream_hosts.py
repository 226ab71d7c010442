"""`--upstream`: one nginx over several app hosts. nginx -t accepts it, and with the real nginx and
a real gunicorn, a host that is down or dies mid-request costs no GET and never replays a POST."""

from __future__ import annotations

import http.client
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from servertune.bench.apps import install
from servertune.bench.apps.restart import arrivals
from servertune.bench.harness.ports import free_port
from servertune.bench.harness.supervision import Stack, tool_path
from servertune.render import render_gunicorn, render_nginx
from servertune.sizing import Machine, make_plan
from servertune.workload import Workload

from .support import nginx_check

MACHINE = Machine(cores=1)


def test_nginx_accepts_a_multi_host_upstream(tmp_path: Path) -> None:
    """nginx -t passes on both backends' configs over IPv4, IPv6 and named hosts."""
    workload = Workload(
        cores=2, upstream=("10.0.0.2:8001=4", "[fd00::2]:8001", "app-3.internal:8001=2")
    )
    plan = make_plan(workload, MACHINE)
    assert plan.upstream_weights == (4, 2, 2)
    for backend in ("uwsgi", "gunicorn"):
        conf = tmp_path / f"nginx-{backend}.conf"
        text = render_nginx(plan, backend)  # type: ignore[arg-type]
        retry = [line for line in text.splitlines() if "_next_upstream " in line]
        assert [line.split()[1:] for line in retry] == [["error", "timeout;"]]  # no non_idempotent
        conf.write_text(text.replace("app-3.internal", "localhost"))  # no DNS in the test box
        checked = nginx_check(conf)
        assert checked.returncode == 0, checked.stderr


def test_the_keepalive_pool_counts_every_upstream_hosts_slots() -> None:
    """With `upstream`, nginx's idle pool and its zone count every host's processes (their weights)
    x threads and every host, not this machine's sockets: 3 hosts of 4, 2 and 8 cores at 2
    threads keep 28 connections."""
    one = make_plan(Workload(cores=2, service_time_ms=100, cpu_fraction=0.5), MACHINE)
    many = make_plan(
        Workload(
            cores=2, service_time_ms=100, cpu_fraction=0.5,
            upstream=("10.0.0.2:8001=4", "10.0.0.3:8001", "[fd00::3]:8001=8"),
        ),
        MACHINE,
    )  # fmt: skip
    assert (one.threads, many.threads) == (2, 2)
    assert one.upstream_keepalive_connections == 2 * 2
    assert many.upstream_weights == (4, 2, 8)
    assert many.upstream_keepalive_connections == (4 + 2 + 8) * 2
    assert "3 upstream hosts' 14 processes" in many.reasons["upstream_keepalive_connections"]
    assert many.upstream_zone_kb == one.upstream_zone_kb + 1  # 3 servers instead of 2 sockets
    assert f"keepalive {many.upstream_keepalive_connections};" in render_nginx(many, "gunicorn")


def test_an_asgi_pool_counts_every_hosts_admitted_requests() -> None:
    """An ASGI app behind several hosts: each host's processes admit admitted_per_process each."""
    plan = make_plan(
        Workload(cores=2, interface="asgi", upstream=("10.0.0.2:8001=3", "10.0.0.3:8001=1")),
        MACHINE,
    )
    assert plan.admitted_per_process is not None
    assert plan.upstream_keepalive_connections == 4 * plan.admitted_per_process


def test_retries_are_bounded_by_hosts_and_timeouts() -> None:
    """A GET tries each host at most once, within the nginx read timeout."""
    plan = make_plan(Workload(cores=2, upstream=("10.0.0.2:8001", "10.0.0.3:8001")), MACHINE)
    assert plan.next_upstream_tries == 2
    assert plan.next_upstream_timeout_s == plan.nginx_read_timeout_s
    assert plan.host_fail_timeout_s >= plan.host_max_fails * plan.upstream_connect_timeout_s


@contextmanager
def _dies_mid_request() -> Iterator[tuple[int, list[str]]]:
    """A host that accepts, reads the request and closes without answering (a crash mid-request)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", free_port()))
    listener.listen(64)
    listener.settimeout(0.2)
    seen: list[str] = []  # the method of every request it swallowed
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    data = conn.recv(65536)
                    if data:
                        seen.append(data.split(b" ", 1)[0].decode("ascii", "replace"))
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], seen
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def _request(port: int, method: str, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=b"x" if method == "POST" else None)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


@pytest.mark.parametrize("failure", ["down", "dies-mid-request"])
def test_a_failed_host_costs_no_get_and_never_replays_a_post(failure: str) -> None:
    """Two hosts behind nginx, one down (refuses) or dying mid-request: every GET answers 200 from
    the live host; no POST id ever arrives twice; a POST the dying host received is not replayed."""
    with Stack(label="hosts") as stack, _dies_mid_request() as (dead_port, dead_seen):
        app = install("restart", stack.dir)
        ledger = stack.dir / "ledger"
        ledger.mkdir()
        live = Workload(cores=1, app=app, app_dir=str(stack.dir), base_port=free_port())
        live_plan = make_plan(live, MACHINE)
        (stack.dir / "gunicorn.conf.py").write_text(render_gunicorn(live_plan))
        stack.start(
            "live", "gunicorn",
            [sys.executable, "-m", "gunicorn",
             "-c", str(stack.dir / "gunicorn.conf.py")],
            ports=[live.base_port], env={"SERVERTUNE_BENCH_LEDGER": str(ledger)},
        )  # fmt: skip
        other = dead_port if failure == "dies-mid-request" else free_port()
        front = Workload(
            cores=1,
            listen_port=free_port(),
            upstream=(f"127.0.0.1:{live.base_port}=1", f"127.0.0.1:{other}=1"),
        )
        plan = make_plan(front, MACHINE)
        home = stack.dir / "nginx"
        home.mkdir()
        for temp in ("client_body_temp", "proxy_temp", "uwsgi_temp", "fastcgi_temp", "scgi_temp"):
            (home / temp).mkdir()
        (home / "nginx.conf").write_text(render_nginx(plan, "gunicorn"))
        stack.start(
            "nginx", "nginx",
            [tool_path("nginx"), "-p", f"{home}/", "-c", str(home / "nginx.conf"),
             "-e", str(home / "error.log"), "-g", "daemon off;"],
            ports=[front.listen_port],
        )  # fmt: skip
        # Interleaved: the dying host is tried by both methods before max_fails takes it out.
        gets, posts = [], {}
        for i in range(12):
            gets.append(_request(front.listen_port, "GET", "/quick"))
            gets.append(_request(front.listen_port, "GET", "/quick"))
            posts[f"o{i}"] = _request(front.listen_port, "POST", f"/order?id=o{i}")
        arrived = arrivals(str(ledger))
    assert gets == [200] * 24
    assert all(count == 1 for count in arrived.values()), arrived
    if failure == "down":
        # Nothing was sent to the refusing host, so every POST went to the live one, once.
        assert set(posts.values()) == {200}
        assert set(arrived) == set(posts)
    else:
        # The dying host received some requests (GETs retried, POSTs answered 502, not replayed).
        assert {"GET", "POST"} <= set(dead_seen), f"the dying host saw only {dead_seen}"
        failed = {order for order, status in posts.items() if status != 200}
        assert failed, "no POST reached the dying host"
        assert {posts[o] for o in failed} == {502}
        assert failed.isdisjoint(arrived), "a POST the dying host received was replayed"
        assert set(arrived) == set(posts) - failed


def test_upstream_hosts_come_from_the_workload_file_too(tmp_path: Path) -> None:
    """`upstream = [...]` in the workload TOML lists the hosts; a bad one is one error line."""
    from typer.testing import CliRunner

    from servertune.cli import app

    good = tmp_path / "good.toml"
    good.write_text('cores = 2\nupstream = ["10.0.0.2:8001=4", "10.0.0.3:8001"]\n')
    result = CliRunner().invoke(app, ["gen", "nginx-gunicorn-snippet", "--workload", str(good)])
    assert result.exit_code == 0, result.output
    assert "server 10.0.0.2:8001 weight=4 max_fails=3" in result.stdout
    assert "server 10.0.0.3:8001 weight=2 max_fails=3" in result.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text('cores = 2\nupstream = ["10.0.0.2:8001; include /etc/passwd"]\n')
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["gen", "all", "--workload", str(bad), "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: upstream (--workload {bad}): ")
    assert result.stderr.count("\n") == 1
    assert not out.exists()
