"""The head-of-line app: `/quick` answers at once, `/slow` waits on a slow call (10 s) first."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import Any

#: How long /slow holds its thread: the original write-up used 30 s, the scenario uses 10 s.
SLOW_S = float(os.environ.get("SERVERTUNE_BENCH_SLOW_S", "10"))

BODY = b"ok"


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """/slow sleeps SLOW_S seconds (a thread parked on an external call); anything else is quick."""
    if environ.get("PATH_INFO") == "/slow":
        time.sleep(SLOW_S)
    start_response(
        "200 OK",
        [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(BODY)))],
    )
    return [BODY]
