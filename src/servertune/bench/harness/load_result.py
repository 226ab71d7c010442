"""What a load run measured (`LoadResult`): the one shape every load generator returns.

Below `load.py`, `wrk.py` and `client.py`: the adapters build a `LoadResult`, and `load.py`
picks the adapter, so the result type lives under all three.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["UNANSWERED", "LoadError", "LoadResult", "Tool", "unanswered"]

Tool = Literal["auto", "wrk", "builtin"]


class LoadError(RuntimeError):
    """The load generator could not run or produced no result."""


@dataclass(frozen=True)
class LoadResult:
    """One load run: throughput, latency percentiles (ms) and errors."""

    tool: str
    connections: int
    duration_s: float
    requests: int
    errors: int
    rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    #: (percentile, latency ms) pairs for plots, ascending.
    distribution: tuple[tuple[float, float], ...] = ()
    #: Raw latencies (ms) where the tool keeps them (the built-in client does; wrk does not).
    latencies_ms: tuple[float, ...] = field(default=(), repr=False)
    #: `errors` split: answers with a status >= 400 (wrk: non-2xx/3xx) and failed connections,
    #: reads, writes or timeouts.
    non_2xx: int = 0
    socket_errors: int = 0
    #: Of `non_2xx`, the 503s (an admission limit shedding load), where the tool counts them
    #: (wrk with `REFUSED_LUA` in its script); None when it does not.
    refused_503: int | None = None

    def metrics(self) -> dict[str, Any]:
        """The JSON metrics of this run (without `config` and `concurrency`).

        Latencies are None (JSON null) when no request succeeded: NaN is not JSON.
        """
        return {
            "rps": round(self.rps, 2),
            "p50_ms": _ms_or_none(self.p50_ms),
            "p90_ms": _ms_or_none(self.p90_ms),
            "p99_ms": _ms_or_none(self.p99_ms),
            "max_ms": _ms_or_none(self.max_ms),
            "errors": self.errors,
            "requests": self.requests,
        }

    def count_over(self, threshold_ms: float) -> int:
        """How many requests took longer than `threshold_ms` (needs raw latencies)."""
        return sum(1 for value in self.latencies_ms if value > threshold_ms)


#: What a comparison says instead of its ratios when a measured run answered no request: wrk's
#: closed loop returns such a run (0 requests, 0 req/s, latencies of 0) when every request
#: outlived the window, which happens when other work holds the cores.
UNANSWERED = "no request answered in the window (the cores were taken by other work?)"


def unanswered(*rows: Mapping[str, Any]) -> str | None:
    """UNANSWERED when one of these measured runs' rows (`requests`, as `metrics()` gives it)
    answered no request, else None: the one check before dividing by a run's requests, req/s or
    latencies. Measured runs only: a warm-up may answer nothing (its first request outliving
    it) and is never divided by."""
    return UNANSWERED if any(not row["requests"] for row in rows) else None


def _ms_or_none(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 2)
