"""`gen haproxy-asgi-per-worker` keeps its connections to the app servers pooled under load.

HAProxy stops putting answered connections into its idle pool once `tune.pool-low-fd-ratio`
(default 20) percent of its file descriptors are in use: then every request opens and closes a
connection to the Python server, which doubled uvicorn's CPU per request behind it (`/io5`, 256
connections: 3,652 req/s against 7,302 pooled; docs/benchmarks.md, "HAProxy's idle pool and its
file descriptors"). The plan raises the ratios to what its own bounds use. Behaviour on a real
HAProxy: a back that holds each round of requests until all of them are in, so the clients and
the connections behind them are all open at once, and counts the connections that carry one.
"""

from __future__ import annotations

import contextlib
import http.client
import math
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from servertune.render import render_haproxy
from servertune.sizing import Plan, plan_for
from servertune.workload import Workload
from tests.support import LoopbackBack, accepts, free_base_port, free_port, running, tool, wait_for

#: Clients at once: above HAProxy's default 20 % of its sockets once each holds a connection to
#: the back too, below what one server takes at once (no queue).
CLIENTS = 120
#: Requests each client sends over its one kept-alive connection, in rounds.
ROUNDS = 5


class _RoundBack(LoopbackBack):
    """A keep-alive HTTP/1.1 back on 127.0.0.1 that answers a round of CLIENTS requests only
    once all of them are in (a barrier), and counts the connections that carried a request."""

    def __init__(self, port: int) -> None:
        super().__init__(port)
        self.barrier = threading.Barrier(CLIENTS, timeout=20)
        self.lock = threading.Lock()
        self.carried = 0

    def _stopping(self) -> None:
        self.barrier.abort()

    def _serve(self, sock: socket.socket) -> None:
        counted = False
        with sock:
            sock.settimeout(0.2)
            buffer = b""
            while not self.stop.is_set():
                try:
                    chunk = sock.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not chunk:
                    return  # HAProxy's health check, or a connection it closed
                buffer += chunk
                if b"\r\n\r\n" not in buffer:
                    continue
                buffer = buffer.split(b"\r\n\r\n", 1)[1]  # GETs only: no body
                if not counted:
                    counted = True
                    with self.lock:
                        self.carried += 1
                try:
                    self.barrier.wait()
                except threading.BrokenBarrierError:
                    return
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")


def _plan(base_port: int, listen_port: int) -> Plan:
    w = Workload(cores=1, interface="asgi", app="m:app", service_time_ms=5, cpu_ms=0.05,
                 listen_host="127.0.0.1", listen_port=listen_port, base_port=base_port)  # fmt: skip
    return plan_for(w)


@contextlib.contextmanager
def _haproxy(plan: Plan, port: int, tmp_path: Path) -> Iterator[None]:
    conf = tmp_path / "haproxy.cfg"
    conf.write_text(render_haproxy(plan, front="app"))
    with running([tool("haproxy"), "-db", "-f", str(conf)], tmp_path):
        wait_for(lambda: accepts(f"127.0.0.1:{port}"), 10, "haproxy")
        yield


def _client(port: int) -> list[int]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    statuses = []
    for _ in range(ROUNDS):
        conn.request("GET", "/")
        response = conn.getresponse()
        response.read()
        statuses.append(response.status)
    conn.close()
    return statuses


def test_the_ratios_cover_the_plan_s_own_connections() -> None:
    """Low ratio: clients + each server's requests at once and idle pool, over HAProxy's about
    2 x maxconn sockets, in percent; the high one 5 points above; none for a WSGI app."""
    plan = plan_for(
        Workload(cores=2, interface="asgi", app="m:app", service_time_ms=5, cpu_ms=0.05)
    )
    assert plan.in_service_per_process is not None
    used = plan.lb_maxconn + plan.processes * 2 * plan.in_service_per_process
    assert plan.lb_pool_low_fd_ratio == math.ceil(100 * used / (2 * plan.lb_maxconn))
    assert plan.lb_pool_high_fd_ratio == plan.lb_pool_low_fd_ratio + 5
    text = render_haproxy(plan, front="app")
    assert f"\n    tune.pool-low-fd-ratio {plan.lb_pool_low_fd_ratio}\n" in text
    assert f"\n    tune.pool-high-fd-ratio {plan.lb_pool_high_fd_ratio}\n" in text
    wsgi = plan_for(Workload(cores=2))
    assert (wsgi.lb_pool_low_fd_ratio, wsgi.lb_pool_high_fd_ratio) == (None, None)
    assert "tune.pool" not in render_haproxy(wsgi)


def test_answered_connections_stay_pooled_past_haproxy_s_default_share(tmp_path: Path) -> None:
    """CLIENTS kept-alive clients, ROUNDS requests each, all of a round in at once: the back sees
    about one connection per client, reused every round. Under HAProxy's default ratios the
    answered connections were closed (CLIENTS x ROUNDS connections)."""
    base, port = free_base_port(1), free_port()
    plan = _plan(base, port)
    assert plan.processes == 1
    assert plan.in_service_per_process is not None
    assert plan.in_service_per_process >= CLIENTS  # no request waits in HAProxy's queue
    assert 0.2 * 2 * plan.lb_maxconn < 2 * CLIENTS  # past HAProxy's default share
    with _RoundBack(base) as back, _haproxy(plan, port, tmp_path):
        with ThreadPoolExecutor(CLIENTS) as pool:
            results = list(pool.map(lambda _: _client(port), range(CLIENTS)))
        assert results == [[200] * ROUNDS] * CLIENTS
        assert back.carried <= CLIENTS + CLIENTS // 4, back.carried
