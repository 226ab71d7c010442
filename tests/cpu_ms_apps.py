"""Apps whose CPU per request `test_cpu_ms.py` compares between `measure` and a real server.

The CPU parts spin on `time.thread_time()`, so each costs the same CPU on any machine.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any

from fastapi import FastAPI

#: The ASGI app's await on /io, and the CPU both CPU-bound routes burn.
IO_S = 0.02
CPU_S = 0.003

app = FastAPI()


def _burn(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


@app.get("/io")
async def io() -> dict[str, bool]:
    """Awaits IO_S: the loop's own cost per request is all the CPU there is."""
    await asyncio.sleep(IO_S)
    return {"ok": True}


@app.get("/cpu")
async def cpu() -> dict[str, bool]:
    """Computes CPU_S on the loop."""
    _burn(CPU_S)
    return {"ok": True}


def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """Computes CPU_S, then waits 2 ms, in a thread per request."""
    _burn(CPU_S)
    time.sleep(0.002)
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]
