"""gunicorn: a `when_ready` server hook that keeps the worker count on the plan's number for the
CPU limit the arbiter runs under.

In gunicorn.conf.py (the generated one, or any)::

    from servertune.live.gunicorn import follow_cpu_limit
    when_ready = follow_cpu_limit("workload.toml")

The hook starts one daemon thread in the arbiter. It reads the cgroup every
`DEFAULT_INTERVAL_S`; when a new limit has held for the window it sends the arbiter's main
thread SIGTTIN (one more worker) or SIGTTOU (one fewer) once per worker, waiting for each to
take effect: gunicorn's documented signals, in every version, whether or not its control socket
is enabled (servertune's per-worker configs disable it). SIGTTOU retires the newest worker
gracefully (SIGTERM, in-flight requests finish within `graceful_timeout`).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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

__all__ = ["follow_cpu_limit"]

#: How long one SIGTTIN/SIGTTOU may take to change the arbiter's worker target. The arbiter
#: handles signals between its 1-second naps; this is that with room for a busy host.
SIGNAL_TIMEOUT_S = 5.0


def follow_cpu_limit(
    workload: Workload | str | Path | None = None,
    *,
    window_s: float = DEFAULT_WINDOW_S,
    interval_s: float = DEFAULT_INTERVAL_S,
    cgroup: CgroupReader | None = None,
) -> Callable[[Any], None]:
    """A `when_ready(server)` hook following the CPU limit.

    `workload`: a Workload, a workload file (what `servertune gen --workload` reads), or None
    for the default workload. `cgroup`: the reader to watch (default: this process's cgroup).
    """
    from servertune.workload_file import load_workload

    if isinstance(workload, (str, Path)):
        resolved = load_workload(Path(workload))
    else:
        resolved = workload if workload is not None else Workload()

    def when_ready(server: Any) -> None:
        reader = cgroup or CgroupReader.of_this_process()
        machine = Machine.read()

        def size(limit: Any) -> int:
            return workers_for(resolved, machine, limit)

        limit = reader.read()
        follower = Follower(size, limit, server.num_workers, window_s)
        stop = threading.Event()
        log = logging.getLogger("servertune.live")
        _attach(log, server)

        def resize(old: int, new: int) -> None:
            _resize(server, new)

        def run() -> None:
            wanted = size(limit)
            if wanted != follower.workers:
                log.info(
                    "servertune.live: CPU limit %g cores (%s) at start: workers %d -> %d",
                    limit.limit,
                    limit,
                    follower.workers,
                    wanted,
                )
                _resize(server, wanted)
                follower.workers = wanted
            watch(reader, follower, resize, stop, interval_s, log)

        threading.Thread(target=run, name="servertune-live", daemon=True).start()

    return when_ready


def _attach(log: logging.Logger, server: Any) -> None:
    """Log through gunicorn's error log, so the line lands where the arbiter's own lines do."""
    error_log = getattr(getattr(server, "log", None), "error_log", None)
    if isinstance(error_log, logging.Logger) and not log.handlers:
        for handler in error_log.handlers:
            log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False


def _resize(server: Any, target: int) -> None:
    """Signal the arbiter's main thread once per worker, waiting for each to be handled."""
    main = threading.main_thread().ident
    assert main is not None
    while server.num_workers != target:
        before = server.num_workers
        sig = signal.SIGTTIN if target > before else signal.SIGTTOU
        if before <= 1 and sig == signal.SIGTTOU:
            return
        signal.pthread_kill(main, sig)
        deadline = time.monotonic() + SIGNAL_TIMEOUT_S
        while server.num_workers == before:
            if time.monotonic() > deadline:
                raise OSError(f"gunicorn arbiter {os.getpid()} did not handle {sig.name}")
            time.sleep(0.05)
