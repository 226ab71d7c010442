"""The loop's blocking time leaves out the moments another process had the core.

`measure` splits an ASGI request's time into the time it blocks the loop and the time it
awaits. A loop callback's wall time also holds the moments its thread was runnable while
another process ran on the core: counted, a busy machine made an I/O-bound app look
loop-bound, and the plan admitted a third of what the same server served.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from servertune.measure.asgi import LoopTimer
from servertune.measure.clocks import schedstat_wait_s

#: CPU seconds the callback computes: long next to the scheduler's slices (a few ms), so the
#: competitor gets its share of the core while the callback runs.
CALLBACK_CPU_S = 0.3


def _compute(cpu_s: float) -> None:
    """Run Python on the core until this thread has used `cpu_s` of CPU."""
    until = time.thread_time() + cpu_s
    while time.thread_time() < until:
        pass


@contextmanager
def _sharing_one_core() -> Iterator[None]:
    """This process pinned to one core that a busy process, pinned there too, keeps wanting."""
    core = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    spin = f"import os\nos.sched_setaffinity(0, {{{core}}})\nprint('pinned', flush=True)\nwhile True: pass"
    busy = subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE, text=True)
    try:
        assert busy.stdout is not None
        assert busy.stdout.readline() == "pinned\n"
        assert schedstat_wait_s(None) is not None  # Linux gives the run-queue time
        os.sched_setaffinity(0, {core})
        yield
    finally:
        os.sched_setaffinity(0, before)
        busy.kill()
        busy.wait()


def _one_callback(callback: Callable[[], None]) -> tuple[float, float]:
    """(the callback's wall seconds, the loop's blocking seconds) for one callback on a loop."""
    timer = LoopTimer()
    with timer.installed():
        loop = asyncio.new_event_loop()
        try:
            wall0, mark = timer.seconds, timer.mark()
            loop.call_soon(callback)
            loop.call_soon(loop.stop)
            loop.run_forever()
            return timer.seconds - wall0, timer.blocked_since(mark)
        finally:
            loop.close()


def test_a_callback_sharing_its_core_blocks_the_loop_for_its_cpu_not_its_wall_time() -> None:
    """One callback computes 0.3 s of CPU while a busy process shares its one core: its wall
    time is about twice that, and the loop's blocking time is the CPU, not the wall time."""
    with _sharing_one_core():
        wall, blocking = _one_callback(lambda: _compute(CALLBACK_CPU_S))
    # The competitor took its share of the core while the callback ran (else nothing is shown).
    assert wall >= 1.5 * CALLBACK_CPU_S
    assert CALLBACK_CPU_S * 0.9 <= blocking <= CALLBACK_CPU_S * 1.25


#: Threads the callback starts and joins one after another, as Django's ASGI handler does twice
#: a request, each computing long enough (next to the scheduler's slices) to share the core.
THREADS = 20
THREAD_CPU_S = 0.01


def _start_and_join_threads() -> None:
    for _ in range(THREADS):
        thread = threading.Thread(target=_compute, args=(THREAD_CPU_S,))
        thread.start()
        thread.join()


def test_a_callback_waiting_for_its_threads_to_get_a_core_blocks_the_loop_for_their_cpu() -> None:
    """A callback starts and joins 20 threads of 10 ms of CPU while a busy process shares its one
    core: each thread waits on the run queue for its share, and the loop waits with it. That
    wait is the machine's, not the app's: the loop's blocking time is the process's CPU, not
    the callback's wall time (counted, it had a Django view planned at a third of what the
    server served)."""
    with _sharing_one_core():
        cpu0 = time.process_time()
        wall, blocking = _one_callback(_start_and_join_threads)
        cpu = time.process_time() - cpu0
    # The threads waited for the core (else nothing is shown).
    assert wall >= 1.5 * cpu
    assert blocking <= cpu * 1.25 + 0.005


def test_a_sync_sleep_in_a_callback_still_blocks_the_loop() -> None:
    """A callback that sleeps without awaiting (a sync call on the loop) blocks the loop for
    the sleep, though it uses no CPU and waits on no run queue; so does one that also starts
    a thread."""
    with _sharing_one_core():
        _, sleeping = _one_callback(lambda: time.sleep(0.1))

        def start_one_then_sleep() -> None:
            thread = threading.Thread(target=_compute, args=(0.0005,))
            thread.start()
            thread.join()
            time.sleep(0.1)

        _, both = _one_callback(start_one_then_sleep)
    assert sleeping >= 0.095
    assert both >= 0.09
