"""The loopback keep-alive server behaves as the idle-race tests and benchmarks assume."""

from __future__ import annotations

import socket
import time

from servertune.bench.harness.loopback import KeepAliveServer

REQUEST = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


def _exchange(sock: socket.socket) -> bytes:
    sock.sendall(REQUEST)
    return sock.recv(4096)


def test_timer_mode_closes_an_idle_connection() -> None:
    """In "timer" mode the server closes a keep-alive connection idle past its timeout."""
    with KeepAliveServer(0.2, mode="timer") as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            assert b"X-Connection-Request: 1" in _exchange(sock)
            time.sleep(0.5)
            assert sock.recv(4096) == b""  # the server's FIN
        assert server.stats.connections == 1


def test_late_mode_drops_a_request_sent_after_the_timeout_unanswered() -> None:
    """In "late" mode a request arriving after the idle timeout is read, counted and not answered."""
    with KeepAliveServer(0.2, mode="late") as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            assert b"200 OK" in _exchange(sock)
            assert b"X-Connection-Request: 2" in _exchange(sock)
            time.sleep(0.4)
            assert _exchange(sock) == b""
        assert server.stats.received == ["GET", "GET", "GET"]
        assert server.stats.dropped == ["GET"]


def test_drop_methods_are_counted_and_never_answered() -> None:
    """A method in `drop_methods` is counted as received and dropped, with no response."""
    with KeepAliveServer(5, drop_methods={"POST"}) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
            assert sock.recv(4096) == b""
        assert server.stats.count("POST") == 1
        assert server.stats.answered == 0


def test_server_binds_loopback_on_a_free_port() -> None:
    """Two servers get different ports, both on 127.0.0.1."""
    with KeepAliveServer(1) as one, KeepAliveServer(1) as two:
        assert one.port != two.port
        assert one.url.startswith("http://127.0.0.1:")
