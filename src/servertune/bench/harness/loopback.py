"""A small HTTP/1.1 keep-alive server on 127.0.0.1 that closes idle connections on purpose.

It stands in for nginx, gunicorn, Go net/http or a cloud load balancer in the idle-race tests and
benchmarks, and counts what it receives, so a test can tell a replayed POST from a single one.
Two idle behaviours (`mode`):

- "timer": close a keep-alive connection after `idle_timeout` seconds without a request, as
  Go's `http.Server{IdleTimeout: ...}` does. A client that sends at that moment meets
  the race only sometimes.
- "late": keep the socket open, and when the next request arrives after `idle_timeout` close
  the connection without answering it. This is the race made deterministic: the client's
  liveness check passes (the socket is still open) and the request is lost every time.

Requests whose method is in `drop_methods` are read, counted and dropped the same way. Each
response carries `X-Connection-Id` and `X-Connection-Request` (1 for the first request on a
connection), so a client can tell a reused connection from a new one.
"""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Literal

__all__ = ["KeepAliveServer", "ServerStats"]

#: How often blocked server threads look at the stop flag, in seconds.
_POLL = 0.05
#: A client that starts a request must finish sending it within this many seconds.
_READ_TIMEOUT = 5.0
#: "late" mode keeps an idle connection at most this long, so no thread outlives a test by much.
_MAX_IDLE = 30.0
_MAX_HEADER = 64 * 1024


@dataclass
class ServerStats:
    """What the server saw: connections accepted, requests received, answered and dropped."""

    connections: int = 0
    received: list[str] = field(default_factory=list)
    answered: int = 0
    dropped: list[str] = field(default_factory=list)

    def count(self, method: str) -> int:
        """How many requests with this method arrived, answered or not."""
        return sum(1 for m in self.received if m == method)


class _Closed(Exception):
    """The client closed the connection (or sent garbage): stop serving it."""


class KeepAliveServer:
    """A threaded HTTP/1.1 server on 127.0.0.1:<free port>; use as a context manager."""

    def __init__(
        self,
        idle_timeout: float,
        *,
        mode: Literal["timer", "late"] = "timer",
        drop_methods: Iterable[str] = (),
        handler_delay: float = 0.0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.idle_timeout = idle_timeout
        self.mode = mode
        self.drop_methods = frozenset(m.upper() for m in drop_methods)
        self.handler_delay = handler_delay
        self.tls = tls
        self.stats = ServerStats()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        self._listener.settimeout(_POLL)
        self.port: int = self._listener.getsockname()[1]
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.port}/"
        self._acceptor = threading.Thread(target=self._accept_loop, daemon=True)

    def __enter__(self) -> KeepAliveServer:
        self._acceptor.start()
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop accepting, close every connection and wait for the server's threads."""
        self._stop.set()
        if self._acceptor.is_alive():
            self._acceptor.join(timeout=5)
        self._listener.close()
        for thread in list(self._threads):
            thread.join(timeout=5)

    def _accept_loop(self) -> None:
        conn_id = 0
        while not self._stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn_id += 1
            with self._lock:
                self.stats.connections += 1
            thread = threading.Thread(target=self._serve, args=(sock, conn_id), daemon=True)
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
            thread.start()

    def _serve(self, raw: socket.socket, conn_id: int) -> None:
        sock: socket.socket = raw
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.tls is not None:
                sock.settimeout(_READ_TIMEOUT)
                sock = self.tls.wrap_socket(raw, server_side=True)
            buffer = bytearray()
            idle_since = time.monotonic()
            served = 0
            while not self._stop.is_set():
                if not buffer and not self._wait_readable(sock, idle_since):
                    return  # idle timeout ("timer"), stop, or _MAX_IDLE
                method, keep_alive = self._read_request(sock, buffer)
                late = time.monotonic() - idle_since > self.idle_timeout
                with self._lock:
                    self.stats.received.append(method)
                    if (self.mode == "late" and served and late) or method in self.drop_methods:
                        self.stats.dropped.append(method)
                        return  # close without answering
                if self.handler_delay:
                    time.sleep(self.handler_delay)
                served += 1
                body = b"ok"
                head = (
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                    f"Content-Length: {len(body)}\r\nX-Connection-Id: {conn_id}\r\n"
                    f"X-Connection-Request: {served}\r\n"
                    f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n"
                )
                # Count before sending: a client that has its response may read the stats at once.
                with self._lock:
                    self.stats.answered += 1
                sock.sendall(head.encode("ascii") + body)
                idle_since = time.monotonic()
                if not keep_alive:
                    return
        except (_Closed, OSError):
            return
        finally:
            with contextlib.suppress(OSError):
                sock.close()

    def _wait_readable(self, sock: socket.socket, idle_since: float) -> bool:
        limit = self.idle_timeout if self.mode == "timer" else _MAX_IDLE
        while not self._stop.is_set():
            if isinstance(sock, ssl.SSLSocket) and sock.pending():
                return True
            remaining = idle_since + limit - time.monotonic()
            if remaining <= 0:
                return False
            readable, _, _ = select.select([sock], [], [], min(remaining, _POLL))
            if readable:
                return True
        return False

    def _read_request(self, sock: socket.socket, buffer: bytearray) -> tuple[str, bool]:
        sock.settimeout(_READ_TIMEOUT)
        while b"\r\n\r\n" not in buffer:
            self._recv_into(sock, buffer)
            if len(buffer) > _MAX_HEADER:
                raise _Closed
        end = buffer.index(b"\r\n\r\n")
        lines = bytes(buffer[:end]).decode("latin-1").split("\r\n")
        del buffer[: end + 4]
        method, _, rest = lines[0].partition(" ")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            self._skip_chunked(sock, buffer)
        else:
            length = int(headers.get("content-length", "0"))
            while len(buffer) < length:
                self._recv_into(sock, buffer)
            del buffer[:length]
        keep_alive = headers.get("connection", "").lower() != "close" and rest.endswith("1.1")
        return method.upper(), keep_alive

    def _skip_chunked(self, sock: socket.socket, buffer: bytearray) -> None:
        while True:
            while b"\r\n" not in buffer:
                self._recv_into(sock, buffer)
            line_end = buffer.index(b"\r\n")
            size = int(bytes(buffer[:line_end]).split(b";")[0], 16)
            del buffer[: line_end + 2]
            while len(buffer) < size + 2:
                self._recv_into(sock, buffer)
            del buffer[: size + 2]
            if size == 0:
                return

    @staticmethod
    def _recv_into(sock: socket.socket, buffer: bytearray) -> None:
        data = sock.recv(65536)
        if not data:
            raise _Closed
        buffer.extend(data)
