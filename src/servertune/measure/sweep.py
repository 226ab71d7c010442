"""How many requests one ASGI process can hold before each costs its loop more.

An event loop serves whatever it holds one callback at a time, and an app's own cost per request
is not always flat in the number it holds: a client pool that scans its connections on every
request, a cache under contention, a lock. Measured through a real FastAPI app awaiting an
upstream over one shared httpx client, the loop's time per request stayed near 1 ms up to 32 in
flight and rose to 2, 4 and 7 ms at 40, 48 and 56; throughput fell from 570 to 140 req/s, and
stayed low after the load dropped. Admission sized by Little's law from the time at one in
flight admitted 49 a process there and the servers collapsed.

So `measure` drives an ASGI app at 1, 2, 4, ... requests in flight on its one loop and records,
per level, the requests answered per second and the loop's time per request. The climb stops at
the first level whose loop time per request is more than `COST_RISE` x the lowest so far while
it answers fewer requests a second than the best level, and again when the two are measured
once more (a shared machine slows one level now and then: a limit read from one slow level had
an ASGI Django view admit 8 a process where the server held 14): the best level before it is
the in-flight limit the plan's admission keeps within. It also stops, with no limit, once the loop
is busy nearly all the time or the throughput stops growing (saturated: Little's law at the
loop's capacity already admits no more than it serves), or at `MAX_IN_FLIGHT`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "COST_RISE",
    "DRAIN_SECONDS",
    "LEVEL_SECONDS",
    "MAX_IN_FLIGHT",
    "SWEEP_SECONDS",
    "InFlightLevel",
    "LevelFailed",
    "RunLevel",
    "Sweep",
    "sweep",
]

#: A level costs the loop this many times the lowest time per request so far: the app's own
#: cost has climbed (a noisy machine slows the wall clock, not the loop's time per request).
COST_RISE = 1.5
#: Doubling what is in flight gave less than this many times the requests a second: saturated.
SATURATED_GAIN = 1.15
#: The loop ran callbacks this share of a level's time: saturated, more in flight only queue.
BUSY_SHARE = 0.9
#: Each level issues requests for at most this long (the ones in flight then finish).
LEVEL_SECONDS = 0.5
#: Each level asks every slot for this many requests in turn, within LEVEL_SECONDS.
ROUNDS = 8
#: The whole sweep stops issuing after this long.
SWEEP_SECONDS = 12.0
#: After a level stops issuing, its requests in flight get this long to finish.
DRAIN_SECONDS = 10.0
#: The highest level measured, to bound the sweep's time: an app whose cost has not climbed by
#: then gets no limit, and Little's law alone sizes its admission.
MAX_IN_FLIGHT = 256


class LevelFailed(Exception):
    """A level could not be measured: the app raised, or did not answer in time."""


@dataclass(frozen=True)
class InFlightLevel:
    """One level: requests held at once, requests answered, wall seconds, loop seconds, and
    the process's CPU seconds over the level."""

    in_flight: int
    requests: int
    seconds: float
    loop_seconds: float
    cpu_seconds: float = 0.0

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds > 0 else 0.0

    @property
    def loop_ms(self) -> float:
        """The loop's time per request."""
        return self.loop_seconds * 1000 / self.requests if self.requests else 0.0

    @property
    def cpu_ms(self) -> float:
        """The process's CPU time per request at this level."""
        return self.cpu_seconds * 1000 / self.requests if self.requests else 0.0


@dataclass(frozen=True)
class Sweep:
    """The levels measured, the in-flight limit found (None: none), and why the climb stopped."""

    levels: tuple[InFlightLevel, ...]
    limit: int | None
    stopped: str
    #: The one core the sweep ran on (`one_core`), None where it could not be pinned.
    core: int | None = None

    @property
    def busiest(self) -> InFlightLevel | None:
        """The level that answered the most requests a second (within the limit, if one was
        found): where a request's CPU and loop time are what a loaded server pays, the loop's
        fixed cost per wake-up shared by every request it holds."""
        within = [x for x in self.levels if self.limit is None or x.in_flight <= self.limit]
        return max(within, key=lambda x: x.rps, default=None)

    def lines(self) -> list[str]:
        """The table's lines: each level, then the verdict."""
        cells = ", ".join(
            f"{x.in_flight}: {x.rps:.0f} req/s {x.loop_ms:.2f} ms" for x in self.levels
        )
        busiest = self.busiest
        found = (
            f"in_flight_limit = {self.limit}  (the best level before the loop's time per "
            "request climbed)"
            if self.limit is not None
            else "in_flight_limit: none"
        )
        where = "" if self.core is None else f", on core {self.core} alone"
        lines = [
            f"in flight{where} (req/s, loop ms per request): {cells}",
            f"{found}; {self.stopped}",
        ]
        if busiest is not None:
            lines.append(
                f"at {busiest.in_flight} in flight ({busiest.rps:.0f} req/s, the most answered): "
                f"{busiest.cpu_ms:.3f} ms of CPU and {busiest.loop_ms:.3f} ms of loop a request, "
                "written as cpu_ms and loop_blocking_fraction (what a loaded loop pays)"
            )
        return lines


#: Run `requests` at most, `in_flight` at a time, issuing for at most `seconds`:
#: (requests answered, wall seconds, loop seconds, the process's CPU seconds).
RunLevel = Callable[[int, int, float], tuple[int, float, float, float]]


def _collapsed(level: InFlightLevel, best: InFlightLevel, cheapest: float) -> bool:
    """The loop's time per request rose past COST_RISE x the lowest while fewer requests a
    second were answered than at the best level."""
    return cheapest > 0 and level.loop_ms > COST_RISE * cheapest and level.rps < best.rps


def _again(
    run: RunLevel, best: InFlightLevel, level: InFlightLevel, clock: Callable[[], float],
    start: float,
) -> tuple[InFlightLevel, InFlightLevel] | None:  # fmt: skip
    """`best` and `level` measured once more, in that order; None when the budget, an error or
    no answer leaves nothing to compare (the first reading then stands)."""
    measured = []
    for one in (best, level):
        left = SWEEP_SECONDS - (clock() - start)
        if left <= 0:
            return None
        try:
            done, seconds, loop, cpu = run(
                one.in_flight, ROUNDS * one.in_flight, min(LEVEL_SECONDS, left)
            )
        except LevelFailed:
            return None
        if done == 0:
            return None
        measured.append(InFlightLevel(one.in_flight, done, seconds, loop, cpu))
    return measured[0], measured[1]


def sweep(run: RunLevel, clock: Callable[[], float]) -> Sweep:
    """Climb 1, 2, 4, ... in flight until the cost climbs, the throughput stops growing, the
    top level or the time budget; `clock` is a monotonic clock in seconds."""
    start = clock()
    levels: list[InFlightLevel] = []
    flat = 0
    in_flight = 1
    while True:
        left = SWEEP_SECONDS - (clock() - start)
        if left <= 0:
            return Sweep(tuple(levels), None, f"stopped at the {SWEEP_SECONDS:g} s budget")
        try:
            done, seconds, loop, cpu = run(in_flight, ROUNDS * in_flight, min(LEVEL_SECONDS, left))
        except LevelFailed as error:
            return Sweep(tuple(levels), None, f"stopped at {in_flight} in flight: {error}")
        level = InFlightLevel(in_flight, done, seconds, loop, cpu)
        if level.requests == 0:
            return Sweep(tuple(levels), None, f"no answer at {in_flight} in flight")
        best = max(levels, key=lambda x: x.rps, default=None)
        cheapest = min((x.loop_ms for x in levels), default=level.loop_ms)
        levels.append(level)
        if best is not None and _collapsed(level, best, cheapest):
            # One slow level on a shared machine is no limit: the best level and this one are
            # measured again, in that order, and the limit holds only if the climb does.
            again = _again(run, best, level, clock, start)
            if again is None or _collapsed(again[1], again[0], min(cheapest, again[0].loop_ms)):
                return Sweep(
                    tuple(levels),
                    best.in_flight,
                    f"at {in_flight} in flight the loop's time per request was "
                    f"{level.loop_ms / cheapest:.1f} x its lowest and fewer requests were "
                    "answered" + ("" if again is None else ", again when both were measured again"),
                )
            levels[-1] = level = again[1]
        if level.loop_seconds >= BUSY_SHARE * level.seconds:
            return Sweep(
                tuple(levels),
                None,
                f"the loop was busy {level.loop_seconds / level.seconds:.0%} of the time at "
                f"{in_flight} in flight: saturated without its cost climbing",
            )
        if len(levels) > 1:
            flat = flat + 1 if level.rps < SATURATED_GAIN * levels[-2].rps else 0
        if flat >= 2:
            return Sweep(
                tuple(levels), None, "the throughput stopped growing without the cost climbing"
            )
        if in_flight >= MAX_IN_FLIGHT:
            return Sweep(tuple(levels), None, f"no climb up to {MAX_IN_FLIGHT} in flight")
        in_flight *= 2
