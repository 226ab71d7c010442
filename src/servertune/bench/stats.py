"""Numbers from samples: percentiles, medians, and the CPU time a process tree has used.

CPU time is read from /proc, summed over every process in a process group (each server the
harness starts leads a group of its own), including the reaped children a process accounts for
in `cutime`/`cstime`, so a uWSGI worker recycled mid-run still counts.
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "DISTRIBUTION_POINTS",
    "group_cpu_seconds",
    "median",
    "median_run",
    "percentile",
    "percentile_curve",
]

#: Percentiles kept for latency plots: fine steps in the tail, where layouts differ.
DISTRIBUTION_POINTS: tuple[float, ...] = (
    *range(0, 90, 5),
    90.0, 92.5, 95.0, 97.5, 99.0, 99.5, 99.9, 100.0,
)  # fmt: skip

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def percentile(samples: Sequence[float], p: float) -> float:
    """The p-th percentile (0-100) with linear interpolation between ranks (numpy's default)."""
    if not samples:
        raise ValueError("percentile of no samples")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile must be within 0..100, got {p}")
    ordered = sorted(samples)
    rank = (len(ordered) - 1) * p / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def percentile_curve(samples: Sequence[float]) -> list[tuple[float, float]]:
    """(percentile, value) at every DISTRIBUTION_POINTS step: a plottable latency distribution."""
    ordered = sorted(samples)
    return [(float(p), percentile(ordered, p)) for p in DISTRIBUTION_POINTS] if ordered else []


def median(values: Iterable[float]) -> float:
    """The median; raises on no values rather than inventing one."""
    data = list(values)
    if not data:
        raise ValueError("median of no values")
    return float(statistics.median(data))


def median_run(samples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One row for repeated runs of a config: the median of each number, the raw runs under
    `repeats`, and the distribution of the median run by p99 (a real curve, not a blend)."""
    if not samples:
        raise ValueError("median of no runs")
    row = dict(samples[0])
    for key, value in samples[0].items():
        if isinstance(value, int | float) and not isinstance(value, bool) and key != "concurrency":
            row[key] = round(median(s[key] for s in samples), 3)
    row["repeats"] = [
        {k: v for k, v in s.items() if k not in ("config", "concurrency", "distribution")}
        for s in samples
    ]
    if "distribution" in samples[0]:
        by_p99 = sorted(samples, key=lambda s: float(s["p99_ms"]))
        row["distribution"] = by_p99[len(by_p99) // 2]["distribution"]
    return row


def _stat_fields(pid_dir: Path) -> list[str] | None:
    try:
        raw = (pid_dir / "stat").read_text()
    except OSError:  # the process exited while we walked /proc
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    return raw[raw.rfind(")") + 2 :].split()


def group_cpu_seconds(pgid: int, proc: Path = Path("/proc")) -> float:
    """User + system CPU seconds of every live process in group `pgid` and its reaped children."""
    ticks = 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(entry)
        # After the command name: state, ppid, pgrp, ..., utime (11), stime, cutime, cstime (14).
        if fields is None or len(fields) < 15 or int(fields[2]) != pgid:
            continue
        ticks += sum(int(value) for value in fields[11:15])
    return ticks / _CLOCK_TICKS
