"""uvicorn with several workers on a TCP port: servertune's uvicorn.sh turns Nagle's algorithm
off for every connection its workers accept, and `check` tells users who run the plain form.

uvicorn's supervisor binds the port with the socket's protocol left at 0, and asyncio sets
TCP_NODELAY only on sockets that read IPPROTO_TCP (Kludex/uvicorn#3149), so each answer's body
waited for the client's delayed ACK after its headers: +44 ms per request in a loopback capture.
The test asks a real worker for the TCP_NODELAY of the very connection it answers on.
"""

from __future__ import annotations

import http.client
import os
import sys
from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.render import render_target
from servertune.sizing import Machine, make_plan
from servertune.targets.asgi_servers import UVICORN_NODELAY_LAUNCHER
from servertune.workload import Workload

from .support import free_port, running, wait_for

#: An ASGI app that answers with the TCP_NODELAY of the connection the request came on: the
#: client names its own port, the worker finds the socket whose peer has it among its fds.
APP = """
import os, socket

def _nodelay(peer_port):
    for name in os.listdir("/proc/self/fd"):
        try:
            probe = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue
        with probe:
            try:
                if probe.type == socket.SOCK_STREAM and probe.getpeername()[1] == peer_port:
                    return probe.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            except (OSError, IndexError, TypeError):
                continue
    return -1

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    body = str(_nodelay(int(scope["query_string"] or b"0"))).encode()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})
"""


def _nodelay_seen(port: int) -> set[str]:
    """TCP_NODELAY of each connection as the worker that accepted it reads it (4 connections,
    so both workers are likely asked; each answer is the same either way)."""
    seen = set()
    for _ in range(4):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            connection.connect()
            assert connection.sock is not None
            local = connection.sock.getsockname()[1]
            connection.request("GET", f"/?{local}")
            seen.add(connection.getresponse().read().decode())
        finally:
            connection.close()
    return seen


def _answers(port: int) -> bool:
    try:
        return bool(_nodelay_seen(port))
    except OSError:
        return False


def _workload(tmp_path: Path, port: int) -> Workload:
    (tmp_path / "nodelayapp.py").write_text(APP)
    return Workload(
        cores=2,
        interface="asgi",
        service_time_ms=10,
        cpu_fraction=0.1,
        app="nodelayapp:app",
        app_dir=str(tmp_path),
        base_port=port,
    )


PATH_ENV = {"PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}


def test_generated_uvicorn_sets_nodelay_on_every_accepted_connection(tmp_path: Path) -> None:
    """`sh uvicorn.sh` with 2 workers on a TCP port: every accepted connection has TCP_NODELAY
    on; the same uvicorn command line without the launcher has it off (the bug it fixes)."""
    port = free_port()
    plan = make_plan(_workload(tmp_path, port))
    assert plan.processes == 2
    assert plan.shared_socket.kind == "tcp"
    assert plan.uvicorn_listener_nodelay is True
    script = tmp_path / "uvicorn.sh"
    script.write_text(render_target("uvicorn", plan))
    with running(["sh", str(script)], tmp_path, PATH_ENV):
        wait_for(lambda: _answers(port), what="uvicorn.sh")
        assert _nodelay_seen(port) == {"1"}
    plain = free_port()
    argv = [sys.executable, "-m", "uvicorn", "nodelayapp:app", "--app-dir", str(tmp_path)]
    argv += ["--host", "127.0.0.1", "--port", str(plain), "--workers", "2"]
    with running(argv, tmp_path):
        wait_for(lambda: _answers(plain), what="plain uvicorn --workers 2")
        assert _nodelay_seen(plain) == {"0"}


@pytest.mark.parametrize(
    ("processes", "socket_dir", "launcher"),
    [(2, False, True), (1, False, False), (2, True, False)],
)
def test_launcher_only_where_uvicorn_binds_a_tcp_port_for_several_workers(
    tmp_path: Path, processes: int, socket_dir: bool, launcher: bool
) -> None:
    """One worker (asyncio binds, and sets TCP_NODELAY itself) and a unix socket (no Nagle)
    keep the plain `exec uvicorn` line."""
    workload = _workload(tmp_path, 18000).model_copy(
        update={"cores": processes, "socket_dir": str(tmp_path) if socket_dir else None}
    )
    plan = make_plan(workload)
    assert plan.processes == processes
    assert plan.uvicorn_listener_nodelay is launcher
    text = render_target("uvicorn", plan)
    assert (f"nodelay='{UVICORN_NODELAY_LAUNCHER}'" in text) is launcher
    assert ("exec python -c \"$nodelay\" uvicorn 'nodelayapp:app'" in text) is launcher
    assert ("exec uvicorn 'nodelayapp:app'" in text) is not launcher


def _check(tmp_path: Path, line: str) -> list[str]:
    script = tmp_path / "start.sh"
    script.write_text(f"#!/bin/sh\n{line}\n")
    # The packaging shows uvloop absent: uvicorn without its `standard` extra.
    (tmp_path / "requirements.txt").write_text("uvicorn==0.30.0\n")
    result = check_files([script], machine=Machine(cores=2, somaxconn=4096))
    return [f.rule for f in result.findings]


def test_check_flags_uvicorn_workers_on_a_tcp_port(tmp_path: Path) -> None:
    """`uvicorn --workers 2` on a port is flagged; one worker, a unix socket, `--loop uvloop`
    and servertune's launcher are not."""
    rule = "uvicorn-workers-nagle"
    assert rule in _check(tmp_path, "exec uvicorn main:app --port 8000 --workers 2")
    assert rule not in _check(tmp_path, "exec uvicorn main:app --port 8000 --workers 1")
    assert rule not in _check(tmp_path, "exec uvicorn main:app --uds /run/a.sock --workers 2")
    # uvloop sets TCP_NODELAY on each connection it accepts.
    assert rule not in _check(tmp_path, "exec uvicorn main:app --workers 2 --loop uvloop")
    plan = make_plan(_workload(tmp_path, 18000))
    generated = tmp_path / "uvicorn.sh"
    generated.write_text(render_target("uvicorn", plan))
    result = check_files([generated], machine=plan.machine, plan=plan)
    assert rule not in [f.rule for f in result.findings]
    # The launcher is read as the uvicorn it runs: its flags are the server's.
    assert result.apps[0].kind == "uvicorn"
    assert result.apps[0].workers.value == 2
    assert result.apps[0].listener_nodelay


def test_check_flags_a_launcher_that_does_not_set_nodelay(tmp_path: Path) -> None:
    """A `python -c CODE uvicorn ...` launcher is read as uvicorn; only one whose code sets
    TCP_NODELAY clears the finding."""
    line = "exec python -c 'import sys; from uvicorn.main import main; main(sys.argv[2:])' "
    found = _check(tmp_path, line + "uvicorn main:app --port 8000 --workers 2")
    assert "uvicorn-workers-nagle" in found


def test_bench_app_against_keeps_the_launcher(tmp_path: Path) -> None:
    """`bench app --against uvicorn.sh` (gen uvicorn's) runs uvicorn through the same launcher,
    so the benchmark measures the file as it runs."""
    from servertune.bench.scenarios.app_asgi import read_user_command

    script = tmp_path / "uvicorn.sh"
    script.write_text(render_target("uvicorn", make_plan(_workload(tmp_path, 18000))))
    command = read_user_command(script, 18000)
    assert command.nodelay
    argv = command.argv("127.0.0.1", 18001)
    assert argv[1:4] == ["-c", UVICORN_NODELAY_LAUNCHER, "uvicorn"]
    plain = tmp_path / "plain.sh"
    plain.write_text("#!/bin/sh\nexec uvicorn main:app --port 8000 --workers 2\n")
    assert read_user_command(plain, 18000).argv("127.0.0.1", 18001)[1:3] == ["-m", "uvicorn"]


def test_the_nagle_finding_is_a_fault_graded_info(tmp_path: Path) -> None:
    """An answer's body waiting up to 40 ms is latency, not a lost request or a lost graceful
    stop: the finding is a fault (uvicorn's own bug) graded info, never a warning."""
    from servertune.check.model import Severity

    script = tmp_path / "start.sh"
    script.write_text("#!/bin/sh\nexec uvicorn main:app --port 8000 --workers 2\n")
    (tmp_path / "requirements.txt").write_text("uvicorn\n")
    result = check_files([script], machine=Machine(cores=2, somaxconn=4096))
    (finding,) = [f for f in result.findings if f.rule == "uvicorn-workers-nagle"]
    assert finding.severity == Severity.info


def test_check_leaves_out_uvicorn_workers_behind_an_nginx_that_opens_a_connection_per_request(
    tmp_path: Path,
) -> None:
    """The delayed ACK delays an answer only past the first on a connection (uvicorn#3149):
    behind an nginx whose `upstream` has no `keepalive` (a fresh connection per request), no
    uvicorn-workers-nagle; the same nginx with `keepalive 16` and `proxy_http_version 1.1`
    reuses connections, and the info is said (as seen in dataelement/bisheng's nginx)."""
    script = tmp_path / "entrypoint.sh"
    script.write_text("#!/bin/sh\nexec uvicorn main:app --host 0.0.0.0 --port 7860 --workers 2\n")
    (tmp_path / "requirements.txt").write_text("uvicorn\n")
    site = (
        "upstream backend_server {{ server 127.0.0.1:7860; {pool}}}\n"
        "server {{ listen 80; location / {{ proxy_pass http://backend_server; {version}"
        'proxy_set_header Connection "close"; }} }}\n'
    )
    nginx = tmp_path / "default.conf"
    rule = "uvicorn-workers-nagle"
    for pool, version, said in (
        ("", "", False),
        ("keepalive 16; ", "proxy_http_version 1.1; ", True),
    ):
        nginx.write_text(site.format(pool=pool, version=version))
        result = check_files([script, nginx], machine=Machine(cores=2, somaxconn=4096))
        assert result.links, "the nginx passes to the uvicorn"
        assert (rule in [f.rule for f in result.findings]) is said, pool
