"""Numbers from samples: percentiles, medians, and the CPU time a process tree has used.

CPU time is read from /proc, summed over every process in a process group (each server the
harness starts leads a group of its own), including the reaped children a process accounts for
in `cutime`/`cstime`, so a uWSGI worker recycled mid-run still counts.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DISTRIBUTION_POINTS",
    "CpuWatch",
    "group_cpu_seconds",
    "group_members",
    "machine_busy_seconds",
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
            # A run that measured nothing for this key (None) does not vote.
            row[key] = round(median(s[key] for s in samples if s.get(key) is not None), 3)
    row["repeats"] = [
        {k: v for k, v in s.items() if k not in ("config", "concurrency", "distribution")}
        for s in samples
    ]
    if "distribution" in samples[0]:
        # A run with no answer has no p99 (None): it sorts last, never as a number.
        by_p99 = sorted(
            samples, key=lambda s: math.inf if s.get("p99_ms") is None else float(s["p99_ms"])
        )
        row["distribution"] = by_p99[len(by_p99) // 2]["distribution"]
    return row


def _stat_fields(pid_dir: Path) -> list[str] | None:
    try:
        raw = (pid_dir / "stat").read_text()
    except OSError:  # the process exited while we walked /proc
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    return raw[raw.rfind(")") + 2 :].split()


def group_members(pgid: int, proc: Path = Path("/proc")) -> list[int]:
    """Pids of the live (not zombie) processes in group `pgid`: what a stopped server must not leave."""
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(entry)
        if fields is not None and len(fields) > 2 and int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


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


def machine_busy_seconds(stat: Path = Path("/proc/stat")) -> float:
    """CPU seconds every core of the machine has spent busy (not idle or iowait) since boot."""
    try:
        first = stat.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return 0.0
    # cpu user nice system idle iowait irq softirq steal (guest time is inside user already)
    ticks = [int(v) for v in first[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) / _CLOCK_TICKS


#: Linux's autogroup scheduling (CONFIG_SCHED_AUTOGROUP, sched(7) "The autogroup feature"): on,
#: each session (a terminal, a `setsid`) is a task group of its own, and the groups share the
#: CPU equally, so a process another session runs under `nice 19` or SCHED_IDLE still takes its
#: group's share from the servers measured: nice values count only within a group.
AUTOGROUP_SYSCTL = Path("/proc/sys/kernel/sched_autogroup_enabled")


def other_work_advice(sysctl: Path = AUTOGROUP_SYSCTL) -> str:
    """What to add where a run says other work took its cores: how to keep it off them when
    the kernel's autogroup scheduling makes `nice` useless (an empty string when it is off or
    not there)."""
    try:
        enabled = sysctl.read_text().strip() == "1"
    except OSError:
        return ""
    if not enabled:
        return ""
    return (
        "; the kernel's autogroup scheduling is on (kernel.sched_autogroup_enabled = 1): work "
        "started from another terminal or session gets an equal share of the CPU whatever its "
        "nice value, so `nice` and `chrt --idle` do not keep it off these cores; "
        "`sysctl kernel.sched_autogroup_enabled=0` for the run does (a 4 ms CPU-bound gunicorn "
        "worker beside another session's niced tests: 77 req/s with it on, 193 with it off)"
    )


def _own_cpu_seconds() -> float:
    """This process and its reaped children (wrk runs as one)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


@dataclass
class CpuWatch:
    """CPU used during a measurement: by the servers under test, and by everything else.

    `other_cores` is the machine's busy time minus the servers', the harness's and its
    children's (wrk), per second of wall time: how much of the machine other work took while we
    measured. On a shared box a run with a large value is contaminated and says so.

    `parts` names CPU counters to split the servers' time by (`{"app": ..., "proxy": ...}`);
    `part_seconds` holds each one's CPU seconds over the measurement. `load_seconds` is this
    process's CPU with its reaped children's: the load generator, whether the built-in client
    (running here) or wrk (a child, reaped before the watch ends).
    """

    servers: Callable[[], float]
    parts: Mapping[str, Callable[[], float]] = field(default_factory=dict)
    _start: tuple[float, float, float, float] = field(default=(0.0, 0.0, 0.0, 0.0), init=False)
    _parts_start: dict[str, float] = field(default_factory=dict, init=False)
    server_seconds: float = field(default=0.0, init=False)
    part_seconds: dict[str, float] = field(default_factory=dict, init=False)
    load_seconds: float = field(default=0.0, init=False)
    other_cores: float = field(default=0.0, init=False)

    def __enter__(self) -> CpuWatch:
        self._parts_start = {name: read() for name, read in self.parts.items()}
        self._start = (time.monotonic(), machine_busy_seconds(), self.servers(), _own_cpu_seconds())
        return self

    def __exit__(self, *exc: object) -> None:
        wall, busy, servers, own = self._start
        self.server_seconds = self.servers() - servers
        self.load_seconds = _own_cpu_seconds() - own
        self.part_seconds = {
            name: read() - self._parts_start[name] for name, read in self.parts.items()
        }
        other = (machine_busy_seconds() - busy) - self.server_seconds - self.load_seconds
        self.other_cores = max(0.0, other) / max(time.monotonic() - wall, 1e-6)
