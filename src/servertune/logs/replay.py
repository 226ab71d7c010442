"""A log's route mix as `bench app` paths: `bench app APP --replay access.log`.

Each of the busiest routes (up to `REPLAY_ROUTES`, the most requests first) becomes one path,
a real path the log holds for it, weighted by the route's share of the requests; `bench app`
then measures, plans and loads the app with that mix, so its verdict is about the traffic the
log recorded rather than a path someone picked.
"""

from __future__ import annotations

import re

from servertune.logs.errors import LogError
from servertune.logs.traffic import Traffic

__all__ = ["REPLAY_ROUTES", "route_mix"]

#: Routes replayed: `bench app` measures each path in turn before it loads them, so every route
#: costs a measurement; past the busiest few, the rest of a log's routes are a small share.
REPLAY_ROUTES = 8
#: A path `bench app` can send: visible ASCII, no query (the log's paths are cut before `?`).
_SENDABLE = re.compile(r"\A/[!-~]{0,2047}\Z")


def route_mix(
    traffic: Traffic, limit: int = REPLAY_ROUTES
) -> tuple[tuple[tuple[str, float], ...], float]:
    """(path, weight) for the busiest routes, and the share of the requests they cover."""
    routes = sorted(traffic.routes.values(), key=lambda r: (-r.count, r.route))
    mix: list[tuple[str, float]] = []
    covered = 0
    for stats in routes:
        path = traffic.examples.get(stats.route)
        if path is None or not _SENDABLE.match(path) or "=" in path:
            continue
        mix.append((path, float(stats.count)))
        covered += stats.count
        if len(mix) == limit:
            break
    if not mix:
        raise LogError(f"{traffic.source}: no route with a path that can be sent again")
    return tuple(mix), covered / traffic.timed if traffic.timed else 0.0
