"""A supervisor for servers that resize on signals but have no hook: uvicorn.

`python -m servertune.live -- uvicorn app:app --workers 2 ...` starts the command as its child
(same cgroup), watches the cgroup's CPU limit and sends the child SIGTTIN / SIGTTOU, which
uvicorn's multiprocess supervisor handles by starting or stopping one worker
(`uvicorn/supervisors/multiprocess.py`: handle_ttin / handle_ttou). SIGTERM, SIGINT and SIGHUP
are passed on, and the supervisor exits with the child's status.

uvicorn with one worker runs without that supervisor and cannot grow, so the command must
start at least 2; the first reading moves it to the plan's count at once. granian handles only
SIGINT/SIGTERM and SIGHUP (a reload of the same number of workers, `granian/_signals.py`) and
cannot change its worker count at runtime: it is refused, as is gunicorn, which has its hook
(`servertune.live.gunicorn`).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from servertune.live.cgroup import CgroupReader
from servertune.live.follower import (
    DEFAULT_INTERVAL_S,
    DEFAULT_WINDOW_S,
    Follower,
    watch,
    workers_for,
)
from servertune.machine import Machine
from servertune.workload import Workload

__all__ = ["SuperviseError", "server_of", "supervise", "workers_of"]

#: How long uvicorn may take to install its signal handlers: SIGTTIN/SIGTTOU before then would
#: stop the process (their default action), so none is sent until /proc shows them caught.
HANDLERS_TIMEOUT_S = 30.0
_PASSED_ON = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

logger = logging.getLogger("servertune.live")


class SuperviseError(ValueError):
    """A command servertune.live cannot resize: one line, naming what and why."""


def server_of(command: Sequence[str]) -> str:
    """Which server the command starts: 'uvicorn' (by name or `python -m uvicorn`)."""
    if not command:
        raise SuperviseError("command: give the server's command after --")
    words = [Path(command[0]).name, *command[1:3]]
    name = words[2] if words[1:2] == ["-m"] and len(words) > 2 else words[0]
    if name == "uvicorn":
        return name
    if name == "granian":
        raise SuperviseError(
            "granian: cannot change its worker count at runtime (it handles SIGINT/SIGTERM and "
            "SIGHUP, a reload of the same workers, only): restart it with the new --workers"
        )
    if name == "gunicorn":
        raise SuperviseError(
            "gunicorn: use its server hook instead, in gunicorn.conf.py: "
            "from servertune.live.gunicorn import follow_cpu_limit; when_ready = follow_cpu_limit()"
        )
    raise SuperviseError(f"command: {command[0]!r} is not uvicorn, the server this supervises")


def workers_of(command: Sequence[str], environ: dict[str, str] | None = None) -> int:
    """The worker count the command starts uvicorn with (--workers, else WEB_CONCURRENCY)."""
    environ = dict(os.environ) if environ is None else environ
    value: str | None = environ.get("WEB_CONCURRENCY")
    for i, word in enumerate(command):
        if word == "--workers" and i + 1 < len(command):
            value = command[i + 1]
        elif word.startswith("--workers="):
            value = word.partition("=")[2]
    try:
        workers = int(value) if value is not None else 1
    except ValueError:
        raise SuperviseError(f"--workers: {value!r} is not a whole number") from None
    if workers < 2:
        raise SuperviseError(
            f"--workers: {workers} runs uvicorn without its process supervisor, which alone can "
            "add workers at runtime; start with --workers 2 or more (the first reading of the "
            "CPU limit moves it to the plan's count)"
        )
    return workers


def _catches(pid: int, *signals: signal.Signals) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            mask = int(line.split()[1], 16)
            return all(mask & (1 << (s - 1)) for s in signals)
    return False


def supervise(
    command: Sequence[str],
    workload: Workload,
    *,
    window_s: float = DEFAULT_WINDOW_S,
    interval_s: float = DEFAULT_INTERVAL_S,
    cgroup: CgroupReader | None = None,
) -> int:
    """Run `command`, following the CPU limit, until it exits; its exit status."""
    server_of(command)
    started_with = workers_of(command)
    reader = cgroup or CgroupReader.of_this_process()
    machine = Machine.read()
    child = subprocess.Popen(list(command))
    for sig in _PASSED_ON:
        signal.signal(sig, lambda s, _f: child.send_signal(s))
    stop = threading.Event()

    def send(old: int, new: int) -> None:
        sig = signal.SIGTTIN if new > old else signal.SIGTTOU
        for _ in range(abs(new - old)):
            child.send_signal(sig)

    def run() -> None:
        deadline = time.monotonic() + HANDLERS_TIMEOUT_S
        while not _catches(child.pid, signal.SIGTTIN, signal.SIGTTOU):
            if stop.wait(0.05) or time.monotonic() > deadline:
                return
        limit = reader.read()
        follower = Follower(
            lambda lim: workers_for(workload, machine, lim), limit, started_with, window_s
        )
        wanted = follower.size(limit)
        if wanted != started_with:
            logger.info(
                "servertune.live: CPU limit %g cores (%s) at start: workers %d -> %d",
                limit.limit,
                limit,
                started_with,
                wanted,
            )
            send(started_with, wanted)
            follower.workers = wanted
        watch(reader, follower, send, stop, interval_s)

    watcher = threading.Thread(target=run, name="servertune-live", daemon=True)
    watcher.start()
    try:
        return child.wait()
    finally:
        stop.set()
        watcher.join(timeout=interval_s + 1)
