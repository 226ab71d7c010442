"""The bounds of a sync_to_async thread pool, declared once for the pool and the plan.

A leaf with no imports: `servertune.asgi` (run inside users' apps, so it loads no pydantic) and
`servertune.sizing` (which derives the plan's `executor_threads`) both read it, so neither
imports the other for it.
"""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_THREADS", "MAX_THREADS"]

#: Threads of the shared pool when neither a workload nor `max_threads` is given. asyncio's
#: default (min(32, cpus + 4)) serves ~3% of native async throughput under 200 connections of
#: 0-200 ms blocking calls (bench `sync-to-async`); 200 covers that benchmark's
#: concurrency. Threads start only when a call finds none idle, so an idle pool costs nothing.
DEFAULT_MAX_THREADS = 200
#: Upper bound on any pool's size. Threads parked in blocking I/O cost no CPU, but each has a
#: stack (8 MiB of address space) and a share of GIL hand-offs; a load needing more than this per
#: process should move the blocking call to async code (or more processes).
MAX_THREADS = 512
