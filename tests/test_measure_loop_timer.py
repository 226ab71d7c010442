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
import time

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


def test_a_callback_sharing_its_core_blocks_the_loop_for_its_cpu_not_its_wall_time() -> None:
    """One callback computes 0.3 s of CPU while a busy process shares its one core: its wall
    time is about twice that, and the loop's blocking time is the CPU, not the wall time."""
    core = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    spin = f"import os\nos.sched_setaffinity(0, {{{core}}})\nprint('pinned', flush=True)\nwhile True: pass"
    busy = subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE, text=True)
    try:
        assert busy.stdout is not None
        assert busy.stdout.readline() == "pinned\n"
        assert schedstat_wait_s(None) is not None  # Linux gives the run-queue time
        os.sched_setaffinity(0, {core})
        timer = LoopTimer()
        with timer.installed():
            loop = asyncio.new_event_loop()
            try:
                wall0, mark = timer.seconds, timer.mark()
                loop.call_soon(_compute, CALLBACK_CPU_S)
                loop.call_soon(loop.stop)
                loop.run_forever()
                wall, blocking = timer.seconds - wall0, timer.blocked_since(mark)
            finally:
                loop.close()
    finally:
        os.sched_setaffinity(0, before)
        busy.kill()
        busy.wait()
    # The competitor took its share of the core while the callback ran (else nothing is shown).
    assert wall >= 1.5 * CALLBACK_CPU_S
    assert CALLBACK_CPU_S * 0.9 <= blocking <= CALLBACK_CPU_S * 1.25
