"""The server harness: every process it starts is stopped, with its whole group, and its port freed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from servertune.bench.harness.ports import (
    PORT_FLOOR,
    PORT_SHARE_VARIABLE,
    free_port,
    free_port_block,
    listening_ports,
)
from servertune.bench.harness.stats import group_members
from servertune.bench.harness.supervision import ServerError, Stack

# A server that forks a child into its own group, like a master and its worker.
FORKING_SERVER = textwrap.dedent(
    """
    import os, socket, sys, time
    sock = socket.socket()
    sock.bind(("127.0.0.1", int(sys.argv[1])))
    sock.listen()
    if os.fork() == 0:
        time.sleep(600)
    time.sleep(600)
    """
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0): it is dead for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_free_port_block_is_consecutive_and_free() -> None:
    """A block of per-worker ports is N consecutive ports nothing listens on."""
    first = free_port_block(4)
    assert not {first, first + 1, first + 2, first + 3} & listening_ports()


@pytest.mark.parametrize("index", [0, 1, 2])
def test_each_share_of_the_ports_keeps_to_its_slice(
    index: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With SERVERTUNE_PORT_SHARE=I/3, every block lies inside the I-th third of its span, so
    three runs side by side never hand out the same port."""
    ranges = tmp_path / "ip_local_port_range"
    ranges.write_text("32768\t60999\n")
    monkeypatch.setattr("servertune.bench.harness.ports.EPHEMERAL_RANGE_FILE", str(ranges))
    monkeypatch.setenv(PORT_SHARE_VARIABLE, f"{index}/3")
    low_third = (32767 - PORT_FLOOR + 1) // 3
    high_third = (65000 - 61000 + 1) // 3
    for _ in range(40):
        first = free_port_block(8)
        if first < 32768:
            start = PORT_FLOOR + index * low_third
            assert start <= first
            assert first + 7 < start + low_third
        else:
            start = 61000 + index * high_third
            assert start <= first
            assert first + 7 < start + high_third


def test_listening_ports_sees_a_listening_socket() -> None:
    """/proc/net/tcp parsing finds a socket we listen on, and forgets it once closed."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert port in listening_ports()
    assert port not in listening_ports()


def test_stack_stops_the_whole_group_and_frees_the_port() -> None:
    """Leaving the stack stops the server and the child it forked, and the port stops listening."""
    port = free_port()
    with Stack("test") as stack:
        server = stack.start(
            "forker", "python", [sys.executable, "-c", FORKING_SERVER, str(port)], ports=[port]
        )
        assert port in listening_ports()
        deadline = time.monotonic() + 10
        while len(group_members(server.pgid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        members = group_members(server.pgid)
        assert len(members) == 2
        directory = stack.dir
    assert not any(_alive(pid) for pid in members)
    assert port not in listening_ports()
    assert not directory.exists()
    assert stack.record() == [
        {"name": "forker", "kind": "python", "pgid": server.pgid, "ports": [port], "stopped": True}
    ]


def test_a_server_that_dies_at_start_raises_with_its_log() -> None:
    """A server that exits before listening is reported with the end of its output."""
    port = free_port()
    with Stack("test") as stack, pytest.raises(ServerError, match="boom"):
        stack.start(
            "broken", "python", [sys.executable, "-c", "print('boom'); raise SystemExit(3)"],
            ports=[port],
        )  # fmt: skip
    assert stack.record()[0]["stopped"] is True


# Ctrl-C as a terminal sends it: Python leaves SIGINT ignored when its parent ignored it (an
# xdist worker after some test in it did: the harness then slept its 60 s through the signal
# in two full runs), so the harness takes the default handler a shell would have given it.
HARNESS = textwrap.dedent(
    """
    import signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from servertune.bench.harness.supervision import Stack
    port = int(sys.argv[1])
    with Stack("test") as stack:
        server = stack.start("sleeper", "python",
            [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)], ports=[port])
        print(server.pgid, flush=True)
        time.sleep(60)
    """
)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupting_the_harness_stops_its_servers(sig: signal.Signals) -> None:
    """Ctrl-C (SIGINT) or SIGTERM to the benchmark process stops every server it started."""
    port = free_port()
    harness = subprocess.Popen(
        [sys.executable, "-c", HARNESS, str(port)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert harness.stdout is not None
        pgid = int(harness.stdout.readline())
        assert port in listening_ports()
        harness.send_signal(sig)
        harness.wait(timeout=30)
    finally:
        if harness.poll() is None:
            harness.kill()
            harness.wait()
    assert harness.returncode != 0
    assert group_members(pgid) == []
    assert port not in listening_ports()


# A master that ignores SIGTERM (as a server draining a long queue does) and forks a worker.
STUBBORN_SERVER = textwrap.dedent(
    """
    import os, signal, socket, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sock = socket.socket()
    sock.bind(("127.0.0.1", int(sys.argv[1])))
    sock.listen()
    if os.fork() == 0:
        time.sleep(600)
    print("forked", flush=True)
    time.sleep(600)
    """
)


def test_a_grace_cap_kills_a_server_that_ignores_its_stop_signal() -> None:
    """`grace_s` cuts a kind's grace (10 s for a python server): the stop SIGKILLs the group,
    returns long before that grace, and leaves no live process nor listening port."""
    from servertune.bench.harness.supervision import STOP_TIMEOUT_S

    port = free_port()
    with Stack("test") as stack:
        server = stack.start(
            "stubborn", "python", [sys.executable, "-c", STUBBORN_SERVER, str(port)], ports=[port]
        )
        deadline = time.monotonic() + 10
        while len(group_members(server.pgid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        members = group_members(server.pgid)
        assert len(members) == 2
        began = time.monotonic()
        stack.stop_together([server], grace_s=0.0)
        took = time.monotonic() - began
        assert server.stopped
    assert took < STOP_TIMEOUT_S / 2
    assert not any(_alive(pid) for pid in members)
    assert port not in listening_ports()
