"""A log's route mix and arrival profile as `bench app` load: `bench app APP --replay access.log`.

Each of the busiest routes (up to `REPLAY_ROUTES`, the most requests first) becomes one path,
a real path the log holds for it, weighted by the route's share of the requests; `bench app`
then measures, plans and loads the app with that mix, so its verdict is about the traffic the
log recorded rather than a path someone picked.

The arrival profile is the log's busiest `PROFILE_WINDOW_S` seconds, request counts per second
(`Traffic.busiest`): where in the log `bench app` reads the arrival times it plays
(`servertune.logs.arrivals`).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from servertune.logs.errors import LogError
from servertune.logs.traffic import Traffic

__all__ = ["REPLAY_ROUTES", "ArrivalProfile", "arrival_profile", "route_mix"]

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


@dataclass(frozen=True)
class ArrivalProfile:
    """Requests per second over the log's busiest window: its shape, to be scaled."""

    source: str
    #: The window's first second (epoch, UTC).
    start: int
    counts: tuple[int, ...]

    @property
    def peak(self) -> int:
        """The busiest second's requests."""
        return max(self.counts)

    def describe(self) -> str:
        """Where the window is and what it holds, in words (the report's notes)."""
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(self.start))
        return (
            f"the busiest {len(self.counts)} s of {self.source} (from {when} UTC): "
            f"{sum(self.counts):,} requests, {min(self.counts)} to {self.peak} per second"
        )


def arrival_profile(traffic: Traffic) -> ArrivalProfile:
    """The log's busiest window of seconds (LogError when its lines have no time stamps)."""
    if not traffic.busiest or traffic.busiest_start is None or not max(traffic.busiest):
        raise LogError(
            f"{traffic.source}: no request has a time stamp, so there is no arrival profile"
        )
    return ArrivalProfile(traffic.source, traffic.busiest_start, traffic.busiest)
