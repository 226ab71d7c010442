"""The half-GIL app: 5 x (sleep 10 ms + about 10 ms of Python CPU), so half the time holds the GIL.

The original experiment used fib(25) for the CPU part; a counted loop does the same (pure Python, GIL held) and
can be calibrated to 10 ms on any machine: the harness measures `burn` and passes the loop count
in SERVERTUNE_BENCH_CPU_LOOPS.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import Any

#: Rounds of (sleep, CPU) per request, and the sleep of each round: the original experiment's shape.
ROUNDS = 5
SLEEP_S = 0.010
#: Loop iterations of one CPU round; the default is a rough 10 ms on a 2020s x86 core.
CPU_LOOPS = int(os.environ.get("SERVERTUNE_BENCH_CPU_LOOPS", "250000"))

BODY = b"Hello, world"


def burn(loops: int) -> int:
    """Spend CPU in the interpreter (holding the GIL) for `loops` iterations."""
    total = 0
    for i in range(loops):
        total += i
    return total


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """One request: five rounds of a 10 ms wait and about 10 ms of CPU."""
    for _ in range(ROUNDS):
        time.sleep(SLEEP_S)
        burn(CPU_LOOPS)
    start_response(
        "200 OK",
        [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(BODY)))],
    )
    return [BODY]
