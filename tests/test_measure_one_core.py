"""`measure`'s in-flight sweep runs on one core, as each process of a saturated server does.

A request handed to a thread takes the GIL from the loop; on an idle machine that thread runs on
another core and each hand-off crosses cores, which a Django async view paid with 0.97-1.05 ms
of CPU a request against 0.68-0.73 ms on one core (where the servers' own saturation put it).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from typing import Any

from servertune.measure.driver import measure_mix
from servertune.measure.one_core import on_one_core
from servertune.measure.target import WeightedPath


def _cores_seen() -> tuple[Callable[..., Any], list[tuple[frozenset[int], frozenset[int]]]]:
    """An ASGI app recording, per request, the cores its loop's thread and the thread it hands
    work to may run on."""
    seen: list[tuple[frozenset[int], frozenset[int]]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        loop_cores = frozenset(os.sched_getaffinity(0))
        thread_cores = await asyncio.to_thread(lambda: frozenset(os.sched_getaffinity(0)))
        seen.append((loop_cores, thread_cores))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    return app, seen


def test_the_sweep_runs_the_loop_and_its_threads_on_one_core_and_puts_the_cores_back() -> None:
    """Requests of the sweep see one core from the loop and from the thread they hand work to;
    the sweep names it; afterwards the process may use every core it could before."""
    before = os.sched_getaffinity(0)
    assert len(before) >= 2  # this machine's 2 cores: one core must be a choice
    app, seen = _cores_seen()
    mix = measure_mix("cores_seen", [WeightedPath("/")], requests=3, warmup=0, app=app)
    assert mix.sweep is not None
    assert mix.sweep.core in before
    one = frozenset({mix.sweep.core})
    assert seen[:3] == [(frozenset(before), frozenset(before))] * 3  # one at a time: not pinned
    assert seen[3:]
    assert all(pair == (one, one) for pair in seen[3:])
    assert os.sched_getaffinity(0) == before


def test_threads_already_running_move_to_the_core_and_back() -> None:
    """A thread started before the pin (an executor's worker) runs on the one core while pinned,
    and gets its own cores back after."""
    before = os.sched_getaffinity(0)
    go, read, done = threading.Event(), threading.Event(), threading.Event()
    cores: list[set[int]] = []

    def worker() -> None:
        go.wait(10)
        cores.append(os.sched_getaffinity(0))
        read.set()
        done.wait(10)
        cores.append(os.sched_getaffinity(0))

    thread = threading.Thread(target=worker)
    thread.start()
    with on_one_core() as core:
        go.set()
        assert read.wait(10)
    done.set()
    thread.join(10)
    assert core is not None
    assert cores == [{core}, before]
