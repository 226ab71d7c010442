"""`gen haproxy`: the hosts named in `--upstream` balanced by their cores, a per-try timeout for
idempotent requests, a connection of its own for every other request, `maxconn` from the plan,
and a listen port that would loop back refused in one line. Behaviour on a real HAProxy."""

from __future__ import annotations

import contextlib
import http.client
import http.server
import math
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from servertune.bench.harness.loopback import KeepAliveServer
from servertune.cli import app
from servertune.render import render_haproxy
from servertune.sizing import plan_for
from servertune.sizing.defaults import LB_THREAD_RPS
from servertune.sizing.plan import PlanError, host_port
from servertune.targets.haproxy import Front
from servertune.workload import Workload
from tests.support import free_base_port, free_port, tool


def _lines(text: str, start: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith(start)]


def _check(text: str, tmp_path: Path) -> None:
    conf = tmp_path / "haproxy.cfg"
    conf.write_text(text)
    checked = subprocess.run(
        [tool("haproxy"), "-c", "-f", str(conf)], capture_output=True, text=True, timeout=30
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_upstream_hosts_are_balanced_by_their_cores(tmp_path: Path) -> None:
    """With `upstream` HAProxy balances the hosts named (least connections, weight = cores,
    health-checked), not nginx on 127.0.0.1; haproxy -c accepts it."""
    w = Workload(cores=2, upstream=("10.0.0.2:8001=4", "10.0.0.3:8001", "[fd00::3]:8001=8"))
    text = render_haproxy(plan_for(w))
    assert "127.0.0.1" not in text
    assert _lines(text, "server host") == [
        "server host1 10.0.0.2:8001 weight 4 check pool-purge-delay 60s",
        "server host2 10.0.0.3:8001 weight 2 check pool-purge-delay 60s",
        "server host3 [fd00::3]:8001 weight 8 check pool-purge-delay 60s",
        "server host1 10.0.0.2:8001 weight 4 track servertune_hosts/host1",
        "server host2 10.0.0.3:8001 weight 2 track servertune_hosts/host2",
        "server host3 [fd00::3]:8001 weight 8 track servertune_hosts/host3",
    ]
    assert _lines(text, "balance") == ["balance leastconn", "balance leastconn"]
    _check(text, tmp_path)


def test_weights_above_haproxys_limit_keep_their_ratio(tmp_path: Path) -> None:
    """HAProxy takes weights up to 256: 1024 and 512 cores become 256 and 128."""
    plan = plan_for(Workload(cores=2, upstream=("10.0.0.2:8001=1024", "10.0.0.3:8001=512")))
    assert plan.lb_weights == (256, 128)
    assert plan.upstream_weights == (1024, 512)
    _check(render_haproxy(plan), tmp_path)


def test_without_upstream_it_fronts_nginx(tmp_path: Path) -> None:
    """No `upstream`: one server, nginx at its listen address, in both backends."""
    text = render_haproxy(plan_for(Workload(cores=2)))
    assert _lines(text, "server") == [
        "server nginx 127.0.0.1:8000",
        "server nginx 127.0.0.1:8000",
    ]
    _check(text, tmp_path)


def test_idempotent_requests_get_a_per_try_timeout_and_the_rest_a_connection_each() -> None:
    """GET, HEAD, PUT, DELETE, OPTIONS: per-try timeout, retried on a response timeout; every
    other method: a backend with a new connection per request and no L7 retry."""
    plan = plan_for(Workload(cores=2))
    text = render_haproxy(plan)
    default, once = text.split("\nbackend servertune_nginx_once\n")
    assert f"http-request set-timeout server {plan.lb_per_try_timeout_s}s" in default
    assert "response-timeout" in _lines(default, "retry-on")[0]
    assert "use_backend servertune_nginx_once unless { method GET HEAD PUT DELETE OPTIONS }" in text
    assert "option http-server-close" in once
    assert "retry-on" not in once
    assert "set-timeout" not in once
    assert "http-reuse" not in once


def test_the_per_try_timeout_follows_the_slow_calls() -> None:
    """Derived from the workload's longest legitimate request, never above the server timeout."""
    quick = plan_for(Workload(cores=2, service_time_ms=5))
    slow = plan_for(Workload(cores=2, service_time_ms=5, slow_call_ratio=0.1, slow_call_ms=4000))
    assert quick.lb_per_try_timeout_s == quick.upstream_connect_timeout_s + 1
    assert slow.lb_per_try_timeout_s == slow.upstream_connect_timeout_s + 9  # ceil(2 x 4.005)
    huge = plan_for(Workload(cores=2, slow_call_ratio=0.1, slow_call_ms=600_000))
    assert huge.lb_per_try_timeout_s == huge.upstream_connect_timeout_s + 1201
    assert huge.lb_per_try_timeout_s <= huge.lb_server_timeout_s


def test_maxconn_comes_from_the_plan() -> None:
    """`maxconn` in `global` and `defaults`: what nginx behind it can proxy at once."""
    plan = plan_for(Workload(cores=4))
    assert plan.lb_maxconn == plan.nginx_worker_processes * plan.nginx_worker_connections // 2
    text = render_haproxy(plan)
    assert _lines(text, "maxconn") == [f"maxconn {plan.lb_maxconn}"] * 2


def test_explain_gives_the_per_try_timeout_and_maxconn() -> None:
    """Each new number has its row and reason in `explain`."""
    result = CliRunner().invoke(app, ["explain", "--cores", "2", "--service-time-ms", "5"])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0] for line in result.output.splitlines() if line.strip()}
    assert {"lb_per_try_timeout_s", "lb_maxconn", "lb_weights", "lb_threads"} <= rows


@pytest.mark.parametrize(
    ("flags", "reason"),
    [
        (["--lb-listen-port", "8080", "--listen-port", "8080"], "nginx's listen port too"),
        (["--lb-listen-port", "8001"], "an app server socket's port"),
        (["--lb-listen-port", "8002", "--cores", "2"], "an app server socket's port"),
        (["--upstream", "127.0.0.1:9000,10.0.0.2:9000", "--lb-listen-port", "9000"], "upstream"),
        (["--upstream", "localhost:9000", "--lb-listen-port", "9000"], "upstream"),
    ],
)
def test_a_listen_port_haproxy_would_forward_to_is_refused(flags: list[str], reason: str) -> None:
    """One `error:` line naming --lb-listen-port, exit 2, nothing written."""
    result = CliRunner().invoke(app, ["gen", "haproxy", *flags])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: lb_listen_port (--lb-listen-port)")
    assert reason in lines[0]
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "flags",
    [
        ["--lb-listen-port", "8080", "--listen-port", "8080", "--listen-host", "10.0.0.3"],
        ["--lb-listen-port", "8001", "--lb-listen-host", "10.0.0.1"],
        ["--upstream", "10.0.0.2:80,10.0.0.3:80"],
    ],
)
def test_the_same_port_on_another_address_is_accepted(flags: list[str]) -> None:
    """nginx or the hosts on another machine, or HAProxy on another address: nothing loops."""
    result = CliRunner().invoke(app, ["gen", "haproxy", *flags])
    assert result.exit_code == 0, result.output


def test_the_collision_is_a_plan_error_for_library_callers() -> None:
    with pytest.raises(PlanError, match=r"^lb_listen_port: "):
        render_haproxy(plan_for(Workload(cores=1, lb_listen_port=8000)))


# --- a real HAProxy ------------------------------------------------------------------------------


@contextlib.contextmanager
def _silent_host() -> Iterator[int]:
    """A host whose link is cut under a request: it accepts and reads, and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.05)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for sock in held:
            sock.close()
        listener.close()


@contextlib.contextmanager
def _haproxy(tmp_path: Path, upstream: tuple[str, ...]) -> Iterator[tuple[int, Workload]]:
    port = free_port()
    w = Workload(cores=1, service_time_ms=5, upstream=upstream, lb_listen_host="127.0.0.1",
                 lb_listen_port=port)  # fmt: skip
    conf = tmp_path / "haproxy.cfg"
    conf.write_text(render_haproxy(plan_for(w)))
    with _running_haproxy(conf, port):
        yield port, w


def _send(port: int, method: str, timeout_s: float = 30.0) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    try:
        conn.request(method, "/", body=b"{}" if method == "POST" else None)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_a_get_dropped_by_one_host_is_answered_by_the_other_and_a_post_never_twice(
    tmp_path: Path,
) -> None:
    """A host closing without an answer: every GET is answered 200 (sent again to the other
    host); a POST it dropped is answered 502 and reached that host once, never the other."""
    with (
        KeepAliveServer(30, drop_methods=("GET",)) as dropping,
        KeepAliveServer(30) as good,
        _haproxy(tmp_path, (f"127.0.0.1:{dropping.port}", f"127.0.0.1:{good.port}")) as (port, _),
    ):
        statuses = [_send(port, "GET") for _ in range(8)]
        assert statuses == [200] * 8
        assert dropping.stats.count("GET") > 0  # some GETs went there first and were resent
    with (
        KeepAliveServer(30, drop_methods=("POST",)) as dropping,
        _haproxy(tmp_path, (f"127.0.0.1:{dropping.port}",)) as (port, _),
    ):
        assert _send(port, "POST") == 502
        assert dropping.stats.count("POST") == 1


def test_a_get_on_a_silent_host_is_answered_within_two_tries(tmp_path: Path) -> None:
    """A host that never answers holds a GET for one per-try timeout; the retry on the other
    host answers it: 200, in less than twice the per-try timeout."""
    with (
        _silent_host() as silent,
        KeepAliveServer(30) as good,
        _haproxy(tmp_path, (f"127.0.0.1:{silent}", f"127.0.0.1:{good.port}")) as (port, w),
    ):
        per_try = plan_for(w).lb_per_try_timeout_s
        slowest = 0.0
        # `balance leastconn` takes turns between hosts of the same load (HAProxy's manual), and
        # both are idle at each GET: of two GETs in a row, one goes to the silent host first.
        for _ in range(2):
            began = time.monotonic()
            assert _send(port, "GET") == 200
            slowest = max(slowest, time.monotonic() - began)
        assert per_try * 0.9 <= slowest < 2 * per_try, (slowest, per_try)


class _HeldHost:
    """An app host that holds every request until released: it counts the requests it got."""

    def __init__(self, port: int = 0) -> None:
        self.arrived = 0
        self.changed = threading.Condition()
        self.release = threading.Semaphore(0)
        host = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with host.changed:
                    host.arrived += 1
                    host.changed.notify_all()
                host.release.acquire(timeout=30)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: object) -> None:
                pass

            def handle(self) -> None:
                # A client gone at teardown (HAProxy stopped first) is no failure of the host.
                with contextlib.suppress(ConnectionError):
                    super().handle()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def wait_arrived(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.arrived >= count, timeout=30), self.arrived

    def __enter__(self) -> _HeldHost:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for _ in range(64):
            self.release.release()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


def _queued(stats: Path, backend: str = "servertune_hosts") -> int:
    """Requests waiting in HAProxy's queues for the backend's servers (`show stat`'s qcur)."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(5)
        sock.connect(str(stats))
        sock.sendall(b"show stat\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    header, *rows = data.decode().splitlines()
    names = header.lstrip("# ").split(",")
    queued = 0  # a request no server could take waits in the backend's queue, else the server's
    for row in rows:
        values = dict(zip(names, row.split(","), strict=False))
        if values.get("pxname") == backend and values.get("svname") != "FRONTEND":
            queued += int(values.get("qcur") or 0)
    return queued


def test_an_asgi_host_gets_its_maxconn_and_the_excess_waits_at_most_the_queue_timeout(
    tmp_path: Path,
) -> None:
    """Admission by time on a real HAProxy: an ASGI host gets the plan's maxconn at once; one
    more request waits in HAProxy's queue and is served when a slot frees within the plan's
    admission wait, and answered 503 once it has waited that long without one."""
    port, stats = free_port(), tmp_path / "stats.sock"
    with _HeldHost() as host:
        w = Workload(cores=1, interface="asgi", service_time_ms=1000, cpu_fraction=0.5,
                     upstream=(f"127.0.0.1:{host.port}",), lb_listen_host="127.0.0.1",
                     lb_listen_port=port)  # fmt: skip
        plan = plan_for(w)
        assert plan.lb_server_maxconn is not None
        assert plan.lb_queue_timeout_ms is not None
        (maxconn,) = plan.lb_server_maxconn
        assert maxconn == plan.admitted_per_process
        assert plan.lb_queue_timeout_ms == math.ceil(plan.admission_wait_ms or 0) == 1001
        text = render_haproxy(plan)
        assert f"timeout queue {plan.lb_queue_timeout_ms}ms" in text
        assert f" maxconn {maxconn} " in text
        conf = tmp_path / "haproxy.cfg"
        # The stats socket is the test's window into the queue; the rest is the file as generated.
        conf.write_text(text.replace("global\n", f"global\n    stats socket {stats}\n", 1))
        with _running_haproxy(conf, port, stats), ThreadPoolExecutor(maxconn + 2) as pool:
            held = [pool.submit(_send, port, "GET") for _ in range(maxconn)]
            host.wait_arrived(maxconn)
            # One more: no slot, so it waits in the queue; a slot freed in time serves it.
            held.append(pool.submit(_send, port, "GET"))
            _wait_queued(stats, 1)
            host.release.release()
            host.wait_arrived(maxconn + 1)
            # Another, while every slot stays taken: after the queue timeout, a 503.
            began = time.monotonic()
            assert _send(port, "GET") == 503
            waited = time.monotonic() - began
            # Without `timeout queue` HAProxy waits `timeout connect` (2 s) instead.
            assert plan.lb_queue_timeout_ms / 1000 <= waited < plan.lb_connect_timeout_s
            assert host.arrived == maxconn + 1  # the host never saw the shed request
            for _ in held:
                host.release.release()
            assert [f.result(30) for f in held] == [200] * (maxconn + 1)


@contextlib.contextmanager
def _running_haproxy(conf: Path, port: int, stats: Path | None = None) -> Iterator[None]:
    """HAProxy run in the foreground from `conf` until it listens on `port` (and has made its
    stats socket, when the test reads one); stopped on the way out."""
    process = subprocess.Popen([tool("haproxy"), "-db", "-f", str(conf)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while (stats is not None and not stats.exists()) or not _listening(port):
            assert process.poll() is None, "haproxy exited"
            assert time.monotonic() < deadline, "haproxy did not listen"
            time.sleep(0.05)
        yield
    finally:
        process.terminate()
        process.wait(10)


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError):
        socket.create_connection(("127.0.0.1", port), 0.2).close()
        return True
    return False


def _wait_queued(stats: Path, count: int, backend: str = "servertune_hosts") -> None:
    deadline = time.monotonic() + 10
    while _queued(stats, backend) < count:
        assert time.monotonic() < deadline, "the request never reached HAProxy's queue"
        time.sleep(0.01)


@pytest.mark.parametrize(
    "workload",
    [
        Workload(cores=2, interface="asgi", service_time_ms=50, cpu_fraction=0.05),
        Workload(
            cores=3,
            interface="asgi",
            socket_dir="/tmp/servertune-check",
            listen_host="::1",
            service_time_ms=5,
            cpu_fraction=0.5,
        ),
    ],
    ids=["tcp", "unix-ipv6"],
)
def test_haproxy_in_nginx_place_fronts_each_asgi_worker(workload: Workload, tmp_path: Path) -> None:
    """`gen haproxy-asgi-per-worker`: HAProxy on nginx's listen address, least connections over
    one server per worker socket, each with the requests one process serves at once as its maxconn, and
    the plan's wait as the queue's bound; haproxy -c accepts it."""
    plan = plan_for(workload)
    text = render_haproxy(plan, "app")
    assert plan.in_service_per_process is not None
    assert plan.lb_queue_timeout_ms == math.ceil(plan.admission_wait_ms or 0)
    assert _lines(text, "bind") == [f"bind {host_port(workload.listen_host, workload.listen_port)}"]
    served = _lines(text, "server worker")
    assert len(served) == 2 * plan.processes  # the idempotent backend and the other one
    for index, sock in enumerate(plan.sockets):
        for line in (served[index], served[plan.processes + index]):
            assert line.startswith(f"server worker{index} {sock.address} ")
            assert f" maxconn {plan.in_service_per_process}" in line
    assert _lines(text, "timeout queue") == [f"timeout queue {plan.lb_queue_timeout_ms}ms"] * 2
    assert _lines(text, "balance") == ["balance leastconn"] * 2
    assert "nginx" not in text.split("global")[1]  # nothing in front of nginx: it is not there
    _check(text, tmp_path)


def test_haproxy_in_nginx_place_over_app_hosts_and_for_a_wsgi_app() -> None:
    """With app hosts (`upstream`) the app servers are the hosts': the file is `gen haproxy
    --upstream`'s (so `gen all` still writes every file). A WSGI app has no admission to queue
    past: a one-line error naming the field, exit 2, no file."""
    hosts = plan_for(Workload(cores=2, interface="asgi", upstream=("10.0.0.2:8001",)))
    assert render_haproxy(hosts, "app") == render_haproxy(hosts)
    assert "server host1 10.0.0.2:8001 " in render_haproxy(hosts, "app")
    result = CliRunner().invoke(
        app, ["gen", "haproxy-asgi-per-worker", "--cores", "2", "--interface", "wsgi"]
    )
    assert result.exit_code == 2
    assert result.output.startswith("error: interface (--interface): haproxy-asgi-per-worker")
    assert len(result.output.strip().splitlines()) == 1


def test_haproxy_in_nginx_place_gives_each_worker_its_maxconn_and_queues_the_rest(
    tmp_path: Path,
) -> None:
    """The generated file on a real HAProxy in front of two held workers on the plan's sockets:
    each worker gets exactly its maxconn (least connections), one more request waits in the
    queue and gets a 503 after the plan's wait without reaching a worker, and every request
    admitted is answered once the workers answer."""
    listen, stats = free_port(), tmp_path / "stats.sock"
    w = Workload(cores=2, interface="asgi", service_time_ms=1000, cpu_fraction=0.5,
                 base_port=free_base_port(2), listen_port=listen)  # fmt: skip
    plan = plan_for(w)
    assert plan.processes == 2
    maxconn, queue_ms = plan.in_service_per_process, plan.lb_queue_timeout_ms
    assert maxconn is not None
    assert queue_ms is not None
    ports = [sock.port for sock in plan.sockets]
    conf = tmp_path / "haproxy.cfg"
    text = render_haproxy(plan, "app")
    conf.write_text(text.replace("global\n", f"global\n    stats socket {stats}\n", 1))
    with (
        _HeldHost(ports[0]) as first,
        _HeldHost(ports[1]) as second,
        _running_haproxy(conf, listen, stats),
        ThreadPoolExecutor(2 * maxconn + 1) as pool,
    ):
        held = [pool.submit(_send, listen, "GET") for _ in range(2 * maxconn)]
        first.wait_arrived(maxconn)
        second.wait_arrived(maxconn)
        began = time.monotonic()
        assert _send(listen, "GET") == 503  # no slot on either worker within the wait
        assert queue_ms / 1000 <= time.monotonic() - began < plan.lb_connect_timeout_s
        assert (first.arrived, second.arrived) == (maxconn, maxconn)
        for _ in held:
            first.release.release()
            second.release.release()
        assert [f.result(30) for f in held] == [200] * (2 * maxconn)


def _fast_path(cores: int, **settings: Any) -> Workload:
    """A FastAPI-like path of 0.12 ms, all of it CPU."""
    return Workload(
        cores=cores, interface="asgi", service_time_ms=0.12, cpu_fraction=1.0, **settings
    )


def test_haproxy_runs_the_threads_the_apps_rate_needs(tmp_path: Path) -> None:
    """`nbthread` = ceil(the app's ceiling / what one thread forwards), at most the cores HAProxy
    shares with the app: 1 for a fast path on 2 cores (in front of nginx or of the workers),
    more on a large host, the cores when the rate would need more; balancing app hosts from a
    machine of its own, HAProxy's default. haproxy -c accepts each, and a real HAProxy runs
    exactly the one thread the file names."""
    small = plan_for(_fast_path(2))
    assert small.lb_threads == 1
    fronts: tuple[Front, ...] = ("nginx", "app")
    for front in fronts:
        text = render_haproxy(small, front)
        assert _lines(text, "nbthread") == ["nbthread 1"]
        _check(text, tmp_path)
    large = plan_for(_fast_path(64))
    assert large.lb_threads == math.ceil(large.ceiling_rps / LB_THREAD_RPS)
    assert large.lb_threads is not None
    assert 1 < large.lb_threads < 64
    assert _lines(render_haproxy(large, "app"), "nbthread") == [f"nbthread {large.lb_threads}"]
    _check(render_haproxy(large, "app"), tmp_path)
    # ASGI: a WSGI server's own share per request keeps its ceiling far below 2 threads' worth.
    capped = plan_for(Workload(cores=2, service_time_ms=0.01, cpu_fraction=1.0, interface="asgi"))
    assert capped.ceiling_rps > 2 * LB_THREAD_RPS
    assert capped.lb_threads == 2
    hosts = plan_for(Workload(cores=2, upstream=("10.0.0.2:8001",)))
    assert hosts.lb_threads is None
    assert _lines(render_haproxy(hosts), "nbthread") == []
    _check(render_haproxy(hosts), tmp_path)

    port = free_port()
    w = _fast_path(2, lb_listen_host="127.0.0.1", lb_listen_port=port)
    conf = tmp_path / "haproxy.cfg"
    conf.write_text(render_haproxy(plan_for(w)))
    process = subprocess.Popen([tool("haproxy"), "-db", "-f", str(conf)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while True:  # listening means its threads are started
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            assert process.poll() is None, "haproxy exited"
            assert time.monotonic() < deadline, "haproxy did not listen"
            time.sleep(0.05)
        assert len(list(Path(f"/proc/{process.pid}/task").iterdir())) == 1
    finally:
        process.terminate()
        process.wait(10)
