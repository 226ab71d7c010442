"""`gen haproxy` in front of a back that closes its kept-alive connections (an nginx reload, an
app host restarting): a GET that crosses a closing connection is sent again over a new one, so
no GET is lost however many connections close at once. Behaviour on a real HAProxy.

The back here closes each connection it had before the "reload" when the next request arrives
on it, without an answer: the request crossed the close. That is the moment an nginx reload
makes by chance (docs/benchmarks.md, "HAProxy and a reload of the back": 3 GETs lost in
1,126,516 through 5 x 150 reloads), made here for every kept connection at once, so one GET
shows it.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from servertune.render import render_haproxy
from servertune.sizing import plan_for
from servertune.workload import Workload
from tests.support import LoopbackBack, accepts, free_port, running, tool, wait_for

#: Connections HAProxy holds to the back before it "reloads": more than HAProxy's tries of one
#: request (`retries` + 1), so tries that went over other clients' idle connections would all
#: cross a closing one.
HELD = 6


class _ClosingBack(LoopbackBack):
    """A keep-alive HTTP/1.1 back on 127.0.0.1. `hold()` keeps requests until HELD are in at
    once (so HAProxy opens HELD connections); after `reload()`, every connection opened before it
    reads its next request and closes without an answer; later ones answer 200."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Condition()
        self.generation = 0
        self.in_flight = 0
        self.dropped = 0
        self.answered = 0
        self.connections = 0
        self.holding = False

    def _stopping(self) -> None:
        with self.lock:
            self.lock.notify_all()

    def hold(self) -> None:
        with self.lock:
            self.holding = True

    def wait_held(self) -> None:
        """Until HELD requests are in at once; then every one is answered."""
        with self.lock:
            assert self.lock.wait_for(lambda: self.in_flight >= HELD, 10), self.in_flight
            self.holding = False
            self.lock.notify_all()

    def reload(self) -> None:
        with self.lock:
            self.generation += 1

    def _accepted(self, sock: socket.socket) -> tuple[int]:
        with self.lock:
            self.connections += 1
            return (self.generation,)

    def _serve(self, sock: socket.socket, born: int) -> None:
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
                    return
                buffer += chunk
                if b"\r\n\r\n" not in buffer:
                    continue
                buffer = buffer.split(b"\r\n\r\n", 1)[1]  # GETs only: no body
                with self.lock:
                    if self.generation != born:
                        self.dropped += 1
                        return  # closed under the request, no answer
                    self.in_flight += 1
                    self.lock.notify_all()
                    self.lock.wait_for(lambda: not self.holding or self.stop.is_set())
                    self.in_flight -= 1
                    self.answered += 1
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")


def _get(conn: http.client.HTTPConnection) -> int:
    """One GET on a kept-alive client connection; 0 when HAProxy closes it without an answer."""
    try:
        conn.request("GET", "/")
        response = conn.getresponse()
        response.read()
        return response.status
    except (OSError, http.client.HTTPException):
        return 0


@contextlib.contextmanager
def _haproxy_in_front_of(back: _ClosingBack, tmp_path: Path) -> Iterator[int]:
    port = free_port()
    w = Workload(cores=1, service_time_ms=5, listen_host="127.0.0.1", listen_port=back.port,
                 lb_listen_host="127.0.0.1", lb_listen_port=port)  # fmt: skip
    conf = tmp_path / "haproxy.cfg"
    conf.write_text(render_haproxy(plan_for(w)))
    with running([tool("haproxy"), "-db", "-f", str(conf)], tmp_path):
        wait_for(lambda: accepts(f"127.0.0.1:{port}"), 10, "haproxy")
        yield port


def test_a_get_crossing_a_closing_connection_is_answered_over_a_new_one(tmp_path: Path) -> None:
    """HELD clients, each with a connection through HAProxy to the back; the back closes all of
    them under the next request: that GET is answered 200, sent again once, over a new
    connection (HAProxy 2.6 resends a GET only `retries` times: over other clients' idle
    connections, closing too, it was lost - the client's connection closed with no answer)."""
    with _ClosingBack() as back, _haproxy_in_front_of(back, tmp_path) as port:
        clients = [http.client.HTTPConnection("127.0.0.1", port, timeout=10) for _ in range(HELD)]
        back.hold()
        with ThreadPoolExecutor(HELD) as pool:
            first = [pool.submit(_get, client) for client in clients]
            back.wait_held()
            assert [f.result(10) for f in first] == [200] * HELD
        opened = back.connections
        assert opened >= HELD
        back.reload()
        assert _get(clients[0]) == 200
        assert back.dropped == 1  # one try crossed a closing connection
        assert back.connections == opened + 1  # the resend: a new connection
        for client in clients:
            client.close()


def _backend(text: str, name: str) -> list[str]:
    """The lines of one backend section, stripped."""
    section = text.split(f"\nbackend {name}\n", 1)[1].split("\n\n", 1)[0]
    return [line.strip() for line in section.splitlines()]


def test_nginx_gets_a_connection_per_client_and_a_get_at_most_three_resends() -> None:
    """In front of nginx: `http-reuse never` (each client's connection kept for it, no idle
    pool, so no `pool-purge-delay`), `retries 3` written (a slow GET runs at most four times, as
    before), the same `retry-on`; the POST backend unchanged."""
    plan = plan_for(Workload(cores=2))
    text = render_haproxy(plan)
    lines = _backend(text, "servertune_nginx")
    assert "http-reuse never" in lines
    assert "retries 3" in lines
    assert "retry-on conn-failure empty-response response-timeout" in lines
    assert not any("pool-" in line for line in lines), lines
    assert (plan.lb_reuse, plan.lb_retries) == ("never", 3)
    once = _backend(text, "servertune_nginx_once")
    assert "option http-server-close" in once
    assert not any(line.startswith(("http-reuse", "retries", "retry-on")) for line in once)


def test_app_servers_share_a_pool_and_resends_go_to_another_host() -> None:
    """Balancing app hosts: `http-reuse always` with `option redispatch 1` (a resend goes to
    another host, whose connections a restart of the first does not close); in front of the
    per-worker ASGI servers: `http-reuse always`, the pool bounded by `pool-max-conn` (a
    connection kept per client would hold a slot of uvicorn's --limit-concurrency). `retries 3`
    in both."""
    hosts = plan_for(Workload(cores=2, upstream=("10.0.0.2:8001", "10.0.0.3:8001")))
    lines = _backend(render_haproxy(hosts), "servertune_hosts")
    assert {"http-reuse always", "option redispatch 1", "retries 3"} <= set(lines)
    plan = plan_for(Workload(cores=2, interface="asgi", app="m:app"))
    lines = _backend(render_haproxy(plan, front="app"), "servertune_workers")
    assert {"http-reuse always", "option redispatch 1", "retries 3"} <= set(lines)
    servers = [line for line in lines if line.startswith("server ")]
    assert servers
    assert all(f"pool-max-conn {plan.lb_server_pool} pool-purge-delay" in s for s in servers)
