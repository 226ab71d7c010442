"""Draining one app-server instance before it stops: nginx marks it `down`, a reload sends it
nothing new, and the load generator reconnects when nginx closed an idle connection."""

from __future__ import annotations

import http.client
import ipaddress
import socket
from pathlib import Path

import pytest

from servertune.bench.harness.deployments import reload_nginx
from servertune.bench.harness.loopback import KeepAliveServer
from servertune.bench.harness.ports import LOOPBACK, free_port
from servertune.bench.harness.supervision import Stack, tool_path
from servertune.bench.harness.users import dropped
from servertune.render import render_nginx
from servertune.sizing import Forced, Machine, Socket, make_plan, plan_for
from servertune.workload import Workload

from .support import nginx_check, wait_for


def test_down_marks_only_the_named_socket_and_nginx_accepts_it(tmp_path: Path) -> None:
    """`render_nginx(..., down=[1])` adds `down` to the second server line only; nginx -t passes."""
    plan = make_plan(Workload(cores=3), Machine(cores=1))
    text = render_nginx(plan, "gunicorn", down=[1])
    servers = [line.strip() for line in text.splitlines() if " max_fails=" in line]
    assert [line.endswith(" down;") for line in servers] == [False, True, False]
    conf = tmp_path / "nginx.conf"
    conf.write_text(text)
    checked = nginx_check(conf)
    assert checked.returncode == 0, checked.stderr
    assert render_nginx(plan, "gunicorn") == render_nginx(plan, "gunicorn", down=[])


def test_down_refuses_a_socket_that_does_not_exist() -> None:
    """An index outside the plan's sockets is an error, not a config without the `down`."""
    plan = make_plan(Workload(cores=2), Machine(cores=1))
    with pytest.raises(ValueError, match="down"):
        render_nginx(plan, "gunicorn", down=[2])


def _get(port: int) -> int:
    conn = http.client.HTTPConnection(LOOPBACK, port, timeout=10)
    try:
        conn.request("GET", "/")
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_a_reload_with_an_instance_down_sends_it_nothing() -> None:
    """Real nginx over two backends: after `reload_nginx` with the first marked down (returned
    once the old workers exited), every request reaches the second; a reload without it
    brings it back."""
    with (
        KeepAliveServer(30) as first,
        KeepAliveServer(30) as second,
        Stack(label="drain-test") as stack,
    ):
        host = ipaddress.IPv4Address(LOOPBACK)
        sockets = tuple(Socket(kind="tcp", host=host, port=s.port) for s in (first, second))
        workload = Workload(cores=2, listen_port=free_port(), bind_host=LOOPBACK)
        plan = plan_for(
            workload, Machine(cores=1), forced={"sockets": Forced(sockets, "the test's backends")}
        )
        home = stack.dir / "nginx"
        home.mkdir()
        for temp in ("client_body_temp", "proxy_temp", "uwsgi_temp", "fastcgi_temp", "scgi_temp"):
            (home / temp).mkdir()
        conf = home / "nginx.conf"
        conf.write_text(render_nginx(plan, "gunicorn"))
        argv = [tool_path("nginx"), "-p", f"{home}/", "-c", str(conf), "-e", str(home / "e.log"),
                "-g", "daemon off;"]  # fmt: skip
        nginx = stack.start("nginx", "nginx", argv, ports=[workload.listen_port])
        assert [_get(workload.listen_port) for _ in range(10)] == [200] * 10
        assert len(first.stats.received) > 0
        assert len(second.stats.received) > 0

        reload_nginx(nginx, render_nginx(plan, "gunicorn", down=[0]), timeout_s=20)
        before = len(first.stats.received), len(second.stats.received)
        assert [_get(workload.listen_port) for _ in range(10)] == [200] * 10
        assert len(first.stats.received) == before[0]
        assert len(second.stats.received) == before[1] + 10

        reload_nginx(nginx, render_nginx(plan, "gunicorn"), timeout_s=20)
        assert [_get(workload.listen_port) for _ in range(10)] == [200] * 10
        assert len(first.stats.received) > before[0]


def test_a_connection_the_server_closed_counts_as_dropped() -> None:
    """`dropped()` sees a keep-alive connection the server closed while idle (as urllib3's
    is_connection_dropped does), and not an open one."""
    with socket.create_server((LOOPBACK, 0)) as listener:
        conn = http.client.HTTPConnection(LOOPBACK, listener.getsockname()[1], timeout=5)
        conn.connect()
        accepted, _ = listener.accept()
        assert not dropped(conn)
        accepted.close()
        # The FIN crosses loopback in a softirq, which a loaded machine may defer: poll for it.
        wait_for(lambda: dropped(conn), timeout=10, what="the FIN")
        conn.close()
        assert dropped(conn)  # closed on our side: no socket to reuse
