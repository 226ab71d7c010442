"""The load levels of `bench app`: closed-loop connections from the plan, and an ASGI app's
open-loop unloaded and overload arrival rates around them.

Each layout gets an unloaded level (open-loop Poisson arrivals at UNLOADED_FACTOR x the plan's
capacity: a request's latency on its own), the closed-loop levels, and an overload level (open
loop at ASGI_OVERLOAD_FACTOR x capacity). 503s are counted apart from errors: they are the load
nginx shed on purpose; an admitted request's p99 under overload is compared with the layout's
unloaded p99. With `--replay`, last open-loop levels play the log's own arrival times at 1 x,
2 x and 4 x its pace (REPLAY_SPEEDS; why: `app.replay`).
"""

from __future__ import annotations

import math
from typing import Any

from servertune.bench.harness.scenario import Level
from servertune.bench.scenarios.app.inputs import MAX_CONCURRENCY, AppSizes, Interface
from servertune.sizing.defaults import ASGI_OVERLOAD_FACTOR

#: Overload: this many times the plan's capacity, open loop (as `bench asgi`).
OVERLOAD_FACTOR = ASGI_OVERLOAD_FACTOR
#: Unloaded: this share of the plan's capacity, open loop.
UNLOADED_FACTOR = 0.1
#: The slowest unloaded rate: enough requests in a short run for a p99.
MIN_UNLOADED_RPS = 20.0
#: An open-loop request not answered within this long counts as a timeout (an error).
CLIENT_TIMEOUT_S = 5.0
#: ... in a --quick smoke run (a timed-out request still counts as one; the run ends sooner).
QUICK_CLIENT_TIMEOUT_S = 1.0

#: `--replay`: the log's own arrival times, played at each of these multiples of its pace
#: (its gaps divided by it), after the other levels (`app.replay`): the traffic as it is, and
#: as it would be at twice and four times the rate, burst for burst.
REPLAY_SPEEDS = (1.0, 2.0, 4.0)
REPLAY_LEVELS = tuple(Level(role=f"replay-{speed:g}x") for speed in REPLAY_SPEEDS)
#: With --quick (the tests): this many log seconds played (the default: REPLAY_LOG_SECONDS).
QUICK_REPLAY_LOG_SECONDS = 2
#: The arrivals' seed (the paths drawn by weight): every layout gets the same requests.
REPLAY_SEED = 31
#: `--replay`'s default run (not --thorough) measures each level this many times (x --repeat),
#: and an ASGI app's without its overload level: the replay's verdicts are read from one sample
#: each anyway (`AdaptiveRounds.once`), and its 2 x and 4 x are the overload question asked of
#: the user's own traffic. Measured on the FastAPI app of docs/benchmarks.md (11 layouts,
#: 2026-11-29): the run with three repeats and overload took 14 min 48 s, of which the first
#: round alone, overload in it, was about 10 minutes; the closed levels' repeats 150 s, overload
#: 153 s. --thorough keeps every level and repeat.
REPLAY_REPEATS = 1


_SPEED_OF = {level.role: speed for level, speed in zip(REPLAY_LEVELS, REPLAY_SPEEDS, strict=True)}


def replay_speed(role: str) -> float | None:
    """The multiple of the log's pace a level's `role` plays it at; None: not a replay level."""
    return _SPEED_OF.get(role)


def replay_base(log_rps: float, capacity_rps: float) -> float:
    """The pace 1 x plays the log at: its own (1.0), unless its mean rate is past the plan's
    capacity on this machine (a fleet's log): then slowed to that capacity, so 1 x is still a
    load this machine is meant to carry and 2 x, 4 x are past it."""
    if log_rps <= capacity_rps or capacity_rps <= 0:
        return 1.0
    return capacity_rps / log_rps


def capacity_rps(plan: Any, interface: Interface) -> float:
    """The req/s the plan says this machine serves: an ASGI plan's capacity; a WSGI plan's
    request slots over the service time, at most its CPU ceiling."""
    if interface == "asgi" and plan.asgi_capacity_rps:
        return float(plan.asgi_capacity_rps)
    slots = plan.processes * plan.threads
    return float(min(float(plan.ceiling_rps), slots * 1000.0 / plan.workload.service_time_ms))


def replay_log_seconds(size: AppSizes) -> int:
    """Log seconds the replay plays: REPLAY_LOG_SECONDS, QUICK_REPLAY_LOG_SECONDS with --quick."""
    from servertune.logs.arrivals import REPLAY_LOG_SECONDS

    return REPLAY_LOG_SECONDS if size.all_levels else QUICK_REPLAY_LOG_SECONDS


#: How the unloaded rate is chosen, for the notes.
UNLOADED_TEXT = "unloaded: a tenth of the plan's capacity"
UNLOADED_FACTOR_TEXT = f"{UNLOADED_TEXT}; overload: 4 x it"


def default_levels(cores: int, ceiling: int) -> list[int]:
    """Connections doubling from `cores` to the first level past the plan's `ceiling` (its
    request slots, or the requests nginx admits): the curve has no hole up to where the plan
    stops admitting."""
    levels = [max(1, cores)]
    while levels[-1] <= ceiling and levels[-1] * 2 <= MAX_CONCURRENCY:
        levels.append(levels[-1] * 2)
    return levels


def levels_for(
    interface: Interface, counts: list[int], replay: bool = False, overload: bool = True
) -> list[Level]:
    """The closed-loop levels; an ASGI app's also unloaded and (with `overload`) overload, open
    loop, around them; with `replay`, the log's arrivals at each of REPLAY_SPEEDS (open loop)
    last."""
    closed = [Level(n) for n in counts]
    if interface == "asgi":
        closed = [Level(role="unloaded"), *closed, *([Level(role="overload")] if overload else [])]
    return [*closed, *REPLAY_LEVELS] if replay else closed


def replay_trimmed(size: AppSizes, replay: bool) -> bool:
    """Whether this is `--replay`'s default run: each level REPLAY_REPEATS times, no overload
    level (the adaptive run; --thorough measures them all)."""
    return replay and size.adaptive


#: The overload level measures overload only when it offers at least this multiple of the
#: plan's capacity: the plan's capacity is meant to be within +-20 % of the saturation `bench
#: app` measures, so 1.5 x is past saturation even where the plan is 20 % low, with room to spare.
MIN_OVERLOAD_FACTOR = 1.5


def open_loop_rates(capacity_rps: float, client_rps: float | None = None) -> dict[str, float]:
    """The unloaded and overload arrival rates (req/s) from the plan's capacity; with
    `client_rps` (what the open-loop client sends without measuring itself:
    `open_loop_ceiling`), neither offered above it."""
    ceiling = math.inf if client_rps is None else client_rps
    return {
        "unloaded": min(ceiling, max(MIN_UNLOADED_RPS, capacity_rps * UNLOADED_FACTOR)),
        "overload": min(ceiling, capacity_rps * OVERLOAD_FACTOR),
    }


def overload_unmeasurable(capacity_rps: float, client_rps: float | None) -> str | None:
    """Why the overload level cannot overload the layouts here (the client sends less than
    MIN_OVERLOAD_FACTOR x the plan's capacity), or None when it can."""
    if client_rps is None or client_rps >= MIN_OVERLOAD_FACTOR * capacity_rps:
        return None
    return (
        f"not measurable here: the open-loop client sends at most {client_rps:.0f} req/s on "
        f"these cores, {client_rps / capacity_rps:.2f} x the plan's capacity "
        f"({capacity_rps:.0f} req/s); overload needs {MIN_OVERLOAD_FACTOR:g} x it at least "
        f"({OVERLOAD_FACTOR:g} x asked: {OVERLOAD_FACTOR * capacity_rps:.0f} req/s)"
    )
