"""A closed loop by wrk or, without it, the built-in client; both return a `LoadResult`.

`wrk.py` adapts wrk and `client.py` is the built-in asyncio client; both return a `LoadResult`
(declared in `load_result.py`, beneath all three) with the same fields, so a scenario never
cares which one ran. `LoadError`, `LoadResult` and `Tool` stay importable from here.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from servertune.bench.harness.client import Users, run_builtin
from servertune.bench.harness.load_result import LoadError, LoadResult, Tool
from servertune.bench.harness.wrk import find_wrk, run_wrk

__all__ = ["LoadError", "LoadResult", "Tool", "run_closed_loop"]


def run_closed_loop(
    url: str,
    *,
    connections: int,
    duration_s: float,
    tool: Tool = "auto",
) -> LoadResult:
    """`connections` users with no think time on `url`: wrk when available (or asked), else built-in."""
    if tool == "wrk" or (tool == "auto" and find_wrk() is not None):
        return run_wrk(url, connections=connections, duration_s=duration_s)
    path = urlsplit(url).path or "/"
    result = run_builtin(url, [Users(path, connections)], duration_s=duration_s)[path]
    if result.requests == 0:
        raise LoadError(f"no request to {url} succeeded ({result.errors} errors)")
    return result
