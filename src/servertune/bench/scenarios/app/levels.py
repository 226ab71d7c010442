"""The load levels of `bench app`: closed-loop connections from the plan, and an ASGI app's
open-loop unloaded and overload arrival rates around them.

Each layout gets an unloaded level (open-loop Poisson arrivals at UNLOADED_FACTOR x the plan's
capacity: a request's latency on its own), the closed-loop levels, and an overload level (open
loop at ASGI_OVERLOAD_FACTOR x capacity). 503s are counted apart from errors: they are the load
nginx shed on purpose; an admitted request's p99 under overload is compared with the layout's
unloaded p99.
"""

from __future__ import annotations

from servertune.bench.harness.scenario import Level
from servertune.bench.scenarios.app.inputs import MAX_CONCURRENCY, Interface
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

#: How the unloaded rate is chosen, for the notes.
UNLOADED_FACTOR_TEXT = "unloaded: a tenth of the plan's capacity; overload: 4 x it"


def default_levels(cores: int, ceiling: int) -> list[int]:
    """Connections doubling from `cores` to the first level past the plan's `ceiling` (its
    request slots, or the requests nginx admits): the curve has no hole up to where the plan
    stops admitting."""
    levels = [max(1, cores)]
    while levels[-1] <= ceiling and levels[-1] * 2 <= MAX_CONCURRENCY:
        levels.append(levels[-1] * 2)
    return levels


def levels_for(interface: Interface, counts: list[int]) -> list[Level]:
    """The closed-loop levels; an ASGI app's also unloaded and overload (open loop) around them."""
    closed = [Level(n) for n in counts]
    if interface == "asgi":
        return [Level(role="unloaded"), *closed, Level(role="overload")]
    return closed


def open_loop_rates(capacity_rps: float) -> dict[str, float]:
    """The unloaded and overload arrival rates (req/s) from the plan's capacity."""
    return {
        "unloaded": max(MIN_UNLOADED_RPS, capacity_rps * UNLOADED_FACTOR),
        "overload": capacity_rps * OVERLOAD_FACTOR,
    }
