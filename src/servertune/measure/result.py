"""What a measurement found: per-request samples, their spread, and the workload numbers.

`Measurement` is one path; `Mix` is several paths weighted by their share of the traffic. Both
write the same workload file (`servertune.workload_file`): the estimate under `[workload]`, the
spread behind it under `[measured]`.
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from servertune.bench.harness.stats import percentile
from servertune.measure.loading import Interface
from servertune.measure.sweep import Sweep
from servertune.workload import APP_PATTERN, MIN_CPU_MS, MIN_SERVICE_TIME_MS
from servertune.workload_file import SPREADS, Measured, MeasuredPath, Spread, dumps

__all__ = [
    "CPU_FRACTION_DECIMALS",
    "MIN_CPU_FRACTION",
    "RSS_GROWTH_NOISE_KB",
    "Measurement",
    "Mix",
    "Sample",
    "gil_note",
]

#: The least loop_blocking_fraction written above 0: a share, like the GIL's, but of the loop.
MIN_CPU_FRACTION = 0.0001
#: Decimals of loop_blocking_fraction written: a fourth, since an await-bound request blocks
#: its loop for 0.1-0.4 ms of 50 (0.002-0.008), which two decimals round to 0.01 or 0.
CPU_FRACTION_DECIMALS = 4
#: The least off_loop_fraction written: below it the process's and the loop thread's clocks
#: differ by their own reading noise (a pure-asyncio FastAPI route reads 0.00; Django 5.2's
#: async view, which runs its request signals in two new threads a request, 0.29-0.35).
MIN_OFF_LOOP_FRACTION = 0.05
#: Decimals of off_loop_fraction written.
OFF_LOOP_DECIMALS = 2
#: Decimals of cpu_ms written: a microsecond, under the noise of any measured request.
CPU_MS_DECIMALS = 3
#: Said when the measured CPU per request is below the model's floor and the floor is written.
FLOOR_NOTE = f"cpu_ms raised to the model's floor {MIN_CPU_MS}"
#: Growth of the resident memory below this over a whole measurement is not written as a
#: leak: CPython's small-object allocator takes memory from the OS in 1 MiB arenas (256 KiB
#: before 3.10, Objects/obmalloc.c), so a warm app that only fills its caches still steps up
#: by an arena now and then. Measure a few thousand requests (`--requests 2000`) to see a
#: leak of a few KiB a request over it.
RSS_GROWTH_NOISE_KB = 1024
#: Per-request numbers shown in the table, with their labels.
_LABELS = {
    "service_time_ms": "service time (ms)",
    "wall_ms": "wall time (ms)",
    "cpu_ms": "CPU time (ms)",
    "runqueue_ms": "core wait (ms)",
    "cpu_fraction": "cpu fraction",
}


@dataclass(frozen=True)
class Sample:
    """One request: wall time, CPU time, time spent waiting for a core, and the status code."""

    wall_s: float
    cpu_s: float
    runqueue_s: float
    status: int
    #: ASGI: seconds this request kept the event loop busy (None for WSGI).
    loop_s: float | None = None
    #: ASGI: CPU seconds the loop's own thread ran during the request (None where not read).
    loop_cpu_s: float | None = None

    @property
    def busy_s(self) -> float:
        """Wall time minus the time the thread waited for a core (never below its CPU time)."""
        return max(self.wall_s - self.runqueue_s, self.cpu_s, 1e-9)

    @property
    def cpu_fraction(self) -> float:
        """Share of this request's busy time spent on the CPU."""
        return min(1.0, self.cpu_s / self.busy_s)

    def column(self, name: str) -> float:
        """One of SPREADS for this request (times in ms)."""
        values = {
            "service_time_ms": self.busy_s * 1000,
            "wall_ms": self.wall_s * 1000,
            "cpu_ms": self.cpu_s * 1000,
            "runqueue_ms": self.runqueue_s * 1000,
            "cpu_fraction": self.cpu_fraction,
        }
        return values[name]


def workload_values(
    app: str,
    interface: Interface,
    service_time_ms: float,
    cpu_ms: float,
    loop_blocking_fraction: float | None = None,
    gil_enabled: bool = True,
    memory: tuple[int, float] | None = None,
    off_loop_fraction: float | None = None,
) -> dict[str, Any]:
    """The Workload fields a measurement sets, rounded and within the model's ranges: the
    CPU per request in ms (the model derives the GIL share from it)."""
    service = max(MIN_SERVICE_TIME_MS, round(service_time_ms, 2))
    values: dict[str, Any] = {
        "service_time_ms": service,
        # A request served alone holds the GIL no longer than it took: rounding the two to
        # different decimals must not write a CPU time past the service time (1.0001 of it).
        "cpu_ms": min(service, max(MIN_CPU_MS, round(cpu_ms, CPU_MS_DECIMALS))),
        # What the app ran with, written either way: the plan then says which case it sized for.
        "gil": "enabled" if gil_enabled else "disabled",
    }
    if interface == "asgi":
        # `gen` then offers the ASGI targets (uvicorn, gunicorn-asgi, granian) for this app.
        values["interface"] = "asgi"
        if loop_blocking_fraction is not None:
            values["loop_blocking_fraction"] = min(
                1.0, max(0.0, round(loop_blocking_fraction, CPU_FRACTION_DECIMALS))
            )
        # Written only where threads ran a visible share: a pure-asyncio app's is clock noise.
        if off_loop_fraction is not None and off_loop_fraction >= MIN_OFF_LOOP_FRACTION:
            values["off_loop_fraction"] = round(off_loop_fraction, OFF_LOOP_DECIMALS)
    if memory is not None:
        # This process after warm-up is one worker: the app imported, its caches filled.
        values["memory_per_worker_mb"] = max(1, memory[0])
        values["memory_growth_kb_per_request"] = round(memory[1], 3)
    if re.match(APP_PATTERN, app):
        values["app"] = app
    return values


def memory_figures(
    warm_kb: int | None, end_kb: int | None, requests: int
) -> tuple[int, float] | None:
    """(warm MiB rounded up, growth KiB per request): growth under RSS_GROWTH_NOISE_KB over
    the run is the allocator's arenas, not the app's, and is written as 0."""
    if warm_kb is None or end_kb is None or requests < 1:
        return None
    grown = end_kb - warm_kb
    growth = grown / requests if grown >= RSS_GROWTH_NOISE_KB else 0.0
    return -(-warm_kb // 1024), growth


@dataclass(frozen=True)
class Measurement:
    """The requests measured for one app and route, and the workload numbers they imply."""

    app: str
    interface: Interface
    method: str
    path: str
    samples: tuple[Sample, ...]
    warmup: int
    stopped_early: bool = False
    runqueue_known: bool = True
    #: `sys._is_gil_enabled()` after the app ran (True on builds without a free-threaded mode).
    gil_enabled: bool = True
    #: Whether the Python that ran the app is a free-threaded build (python3.13t+).
    free_threaded: bool = False
    #: This process's resident memory after the warm-up and after the measured requests (KiB);
    #: None where /proc/self/statm cannot be read.
    rss_warm_kb: int | None = None
    rss_end_kb: int | None = None
    date: str = field(default_factory=lambda: time.strftime("%Y-%m-%d %H:%M:%S"))

    @property
    def statuses(self) -> dict[int, int]:
        """How many measured requests got each status code."""
        return dict(sorted(Counter(s.status for s in self.samples).items()))

    @property
    def service_time_ms(self) -> float:
        """The mean busy time, in ms: Little's law turns the mean (not the median, which a tail
        of slow requests leaves below it) into the requests the plan holds in flight."""
        return statistics.fmean(s.busy_s for s in self.samples) * 1000

    @property
    def cpu_fraction(self) -> float:
        """Share of all busy time spent on the CPU (time-weighted, as the GIL sees it)."""
        busy = sum(s.busy_s for s in self.samples)
        return min(1.0, sum(s.cpu_s for s in self.samples) / busy)

    @property
    def cpu_ms(self) -> float:
        """Mean CPU time per request, in ms (one at a time)."""
        return statistics.fmean(s.cpu_s for s in self.samples) * 1000

    @property
    def raw_cpu_fraction(self) -> float:
        """CPU time over wall time, without removing the time spent waiting for a core."""
        wall = sum(s.wall_s for s in self.samples)
        return min(1.0, sum(s.cpu_s for s in self.samples) / wall) if wall > 0 else 1.0

    def spread(self) -> dict[str, tuple[float, float, float, float]]:
        """p10, p50, p90 and mean of each per-request number (times in ms)."""
        result = {}
        for name in SPREADS:
            values = [s.column(name) for s in self.samples]
            result[name] = (
                percentile(values, 10),
                percentile(values, 50),
                percentile(values, 90),
                statistics.fmean(values),
            )
        return result

    @property
    def loop_blocking_fraction(self) -> float | None:
        """ASGI: share of all busy time the requests kept the event loop busy (None for WSGI)."""
        loops = [s.loop_s for s in self.samples if s.loop_s is not None]
        if self.interface != "asgi" or len(loops) != len(self.samples):
            return None
        busy = sum(s.busy_s for s in self.samples)
        return min(1.0, sum(loops) / busy) if busy > 0 else None

    @property
    def off_loop_fraction(self) -> float | None:
        """ASGI: share of the requests' CPU run in threads other than the loop's (None for WSGI
        or where Linux does not give a thread's CPU)."""
        loops = [s.loop_cpu_s for s in self.samples if s.loop_cpu_s is not None]
        if self.interface != "asgi" or not loops or len(loops) != len(self.samples):
            return None
        cpu = sum(s.cpu_s for s in self.samples)
        return min(1.0, max(0.0, 1 - sum(loops) / cpu)) if cpu > 0 else None

    def workload_values(self) -> dict[str, Any]:
        """The Workload fields this measurement sets, rounded and within the model's ranges."""
        return workload_values(
            self.app,
            self.interface,
            self.service_time_ms,
            self.cpu_ms,
            self.loop_blocking_fraction,
            self.gil_enabled,
            self.memory,
            self.off_loop_fraction,
        )

    @property
    def memory(self) -> tuple[int, float] | None:
        """(warm MiB, growth KiB per request) of this process, None where not read."""
        return memory_figures(self.rss_warm_kb, self.rss_end_kb, len(self.samples))

    def measured(self) -> Measured:
        """The `[measured]` table: the spread behind the estimate."""
        return Measured(
            interface=self.interface,
            gil_enabled=self.gil_enabled,
            method=self.method,
            path=self.path,
            **self._figures(),
        )

    def _figures(self) -> dict[str, Any]:
        spreads = {
            name: Spread(p10=p10, p50=p50, p90=p90, mean=mean)
            for name, (p10, p50, p90, mean) in self.spread().items()
            if name != "runqueue_ms" or self.runqueue_known
        }
        return {"requests": len(self.samples), "raw_cpu_fraction": self.raw_cpu_fraction, **spreads}

    def table(self) -> str:
        """What a person reads: the spread per number, then the estimate and its caveats."""
        spread = self.spread()
        statuses = ", ".join(f"{code} x {n}" for code, n in self.statuses.items())
        lines = [
            f"servertune measure {self.app} ({self.interface}) {self.method} {self.path}",
            f"requests: {len(self.samples)} measured after {self.warmup} warm-up; status {statuses}",
            "",
            f"{'per request':18}  {'p10':>9}  {'p50':>9}  {'p90':>9}  {'mean':>9}",
            f"{'-' * 18}  {'-' * 9}  {'-' * 9}  {'-' * 9}  {'-' * 9}",
        ]
        for name, label in _LABELS.items():
            if name == "runqueue_ms" and not self.runqueue_known:
                continue
            p10, p50, p90, mean = spread[name]
            fmt = "{:9.3f}" if name == "cpu_fraction" else "{:9.2f}"
            cells = "  ".join(fmt.format(v) for v in (p10, p50, p90, mean))
            lines.append(f"{label:18}  {cells}")
        values = self.workload_values()
        lines += [
            "",
            f"service_time_ms = {values['service_time_ms']:g}  (mean busy time)",
            (
                f"cpu_ms          = {values['cpu_ms']:g}  (mean CPU time per request, one at a time; "
                f"p10-p90 {spread['cpu_ms'][0]:.3f}-{spread['cpu_ms'][2]:.3f})"
            ),
        ]
        lines += memory_lines(values, self.rss_warm_kb, self.rss_end_kb, len(self.samples))
        lines.extend(f"note: {note}" for note in self.notes())
        return "\n".join(lines)

    def notes(self) -> list[str]:
        """Caveats a reader should know before trusting the numbers."""
        notes = []
        if self.stopped_early:
            notes.append(f"stopped after {len(self.samples)} requests: the time limit was reached")
        if not self.runqueue_known:
            notes.append(
                "no /proc/<pid>/task/<tid>/schedstat: time spent waiting for a core on a busy "
                "machine counts as I/O wait, so cpu_fraction may read low"
            )
        elif self.raw_cpu_fraction < self.cpu_fraction - 0.02:
            notes.append(
                f"the machine was busy: CPU time / wall time was {self.raw_cpu_fraction:.3f}; "
                "time spent waiting for a core is not counted as service time"
            )
        errors = sum(n for code, n in self.statuses.items() if code >= 400)
        if errors:
            notes.append(f"{errors} requests answered >= 400: the route may not do its real work")
        if self.cpu_ms < MIN_CPU_MS:
            notes.append(FLOOR_NOTE)
        loop = self.loop_blocking_fraction
        if loop is not None:
            notes.append(
                f"ASGI: requests kept the event loop busy {loop:.3f} of their time (loop-blocking) "
                f"and awaited the rest: written as loop_blocking_fraction"
            )
        off_loop = self.off_loop_fraction
        if off_loop is not None and off_loop >= MIN_OFF_LOOP_FRACTION:
            notes.append(
                f"ASGI: {off_loop:.2f} of the requests' CPU ran in threads other than the event "
                "loop's (sync_to_async, run_in_executor): written as off_loop_fraction; the GIL "
                "changes hands within every request, so the plan gives a core more than one process"
            )
        notes.append(gil_note(self.gil_enabled, self.free_threaded))
        return notes

    def to_toml(self, values: dict[str, Any] | None = None) -> str:
        """A workload file `servertune gen --workload` reads; the spread goes in `[measured]`."""
        return dumps(
            self.workload_values() if values is None else values,
            self.measured(),
            comments=(
                f"servertune measure {self.app} {self.method} {self.path} ({self.date})",
                (
                    f"{len(self.samples)} requests after {self.warmup} warm-up; "
                    f"Python {sys.version.split()[0]}"
                ),
            ),
        )


@dataclass(frozen=True)
class Mix:
    """Several paths of one app measured in turn, each weighted by its share of the traffic.

    The mix's service time is the weighted mean of each path's service time (its mean busy
    time): capacity and Little's law follow the mean time a request takes. Its cpu_fraction is CPU time over busy time across the mix, each path counted
    by its weight, so a heavy path weighs by both its share and its length, as the GIL sees it.
    """

    parts: tuple[tuple[Measurement, float], ...]
    #: An ASGI app's in-flight sweep over the mix (None: not run).
    sweep: Sweep | None = None

    def __post_init__(self) -> None:
        if not self.parts:
            raise ValueError("a mix needs at least one measured path")

    @property
    def first(self) -> Measurement:
        """The first path's measurement (app, interface, method and date are shared)."""
        return self.parts[0][0]

    @property
    def total_weight(self) -> float:
        """The sum of the weights: shares are weight / total_weight."""
        return sum(weight for _, weight in self.parts)

    @property
    def service_time_ms(self) -> float:
        """Weighted mean of each path's service time, in ms."""
        return sum(m.service_time_ms * w for m, w in self.parts) / self.total_weight

    def _weighted_mean(self, name: str) -> float:
        return sum(self._mean(m, name) * w for m, w in self.parts) / self.total_weight

    @staticmethod
    def _mean(m: Measurement, name: str) -> float:
        return statistics.fmean(s.column(name) for s in m.samples)

    @property
    def cpu_fraction(self) -> float:
        """CPU time / busy time of the weighted mix."""
        return min(1.0, self._weighted_mean("cpu_ms") / self._weighted_mean("service_time_ms"))

    @property
    def cpu_ms(self) -> float:
        """Mean CPU time per request of the weighted mix, in ms (one at a time)."""
        return self._weighted_mean("cpu_ms")

    @property
    def raw_cpu_fraction(self) -> float:
        """CPU time / wall time of the weighted mix, core waits included."""
        wall = self._weighted_mean("wall_ms")
        return min(1.0, self._weighted_mean("cpu_ms") / wall) if wall > 0 else 1.0

    @property
    def requests(self) -> int:
        """Requests measured over all paths."""
        return sum(len(m.samples) for m, _ in self.parts)

    def spread(self) -> dict[str, tuple[float, float, float, float]]:
        """p10, p50, p90 and mean of a request drawn from the mix (each sample weighted by its
        path's weight over the path's sample count)."""
        result = {}
        for name in SPREADS:
            weighted = [
                (s.column(name), w / len(m.samples)) for m, w in self.parts for s in m.samples
            ]
            mean = sum(v * w for v, w in weighted) / self.total_weight
            p10, p50, p90 = (weighted_quantile(weighted, q) for q in (0.1, 0.5, 0.9))
            result[name] = (p10, p50, p90, mean)
        return result

    def workload_values(self) -> dict[str, Any]:
        """The Workload fields the mix sets."""
        first = self.first
        loops = [m.loop_blocking_fraction for m, _ in self.parts]
        loop: float | None = None
        if all(value is not None for value in loops):
            # Loop time over busy time of the weighted mix, as for cpu_fraction.
            loop_ms = sum(
                (f or 0.0) * self._mean(m, "service_time_ms") * w
                for (m, w), f in zip(self.parts, loops, strict=True)
            )
            loop = min(1.0, loop_ms / self.total_weight / self._weighted_mean("service_time_ms"))
        off_loops = [m.off_loop_fraction for m, _ in self.parts]
        off_loop: float | None = None
        if all(value is not None for value in off_loops):
            # Off-loop CPU over CPU of the weighted mix.
            cpu = [self._mean(m, "cpu_ms") * w for m, w in self.parts]
            off_loop = sum((f or 0.0) * c for f, c in zip(off_loops, cpu, strict=True)) / max(
                sum(cpu), 1e-12
            )
        values = workload_values(
            first.app,
            first.interface,
            self.service_time_ms,
            self.cpu_ms,
            loop,
            self.gil_enabled,
            self.memory,
            off_loop,
        )
        return self._with_sweep(values)

    def _with_sweep(self, values: dict[str, Any]) -> dict[str, Any]:
        """The values, with the in-flight limit the sweep found (if it found one), and the CPU
        and loop time per request at its busiest level: one request at a time pays the loop's
        whole wake-up alone (0.6 ms of CPU for a FastAPI route awaiting 50 ms, against 0.15 ms
        at 256 in flight), while capacity depends on what a loaded loop pays per request."""
        if self.sweep is None:
            return values
        if self.sweep.limit is not None:
            values = {**values, "in_flight_limit": self.sweep.limit}
        busiest = self.sweep.busiest
        if busiest is not None and busiest.requests > 0 and busiest.cpu_seconds > 0:
            cpu_ms = max(MIN_CPU_MS, round(busiest.cpu_ms, CPU_MS_DECIMALS))
            values = {**values, "cpu_ms": min(values["service_time_ms"], cpu_ms)}
            if "loop_blocking_fraction" in values:
                # The loop's time is wall time: a busy machine stretches it at either level, so
                # the lower of the two is the app's.
                share = min(
                    values["loop_blocking_fraction"], busiest.loop_ms / values["service_time_ms"]
                )
                values["loop_blocking_fraction"] = min(
                    1.0, max(0.0, round(share, CPU_FRACTION_DECIMALS))
                )
        return values

    def _sweep_lines(self) -> list[str]:
        return [] if self.sweep is None else ["", *self.sweep.lines()]

    @property
    def memory(self) -> tuple[int, float] | None:
        """The largest warm size of any path, and the growth from the first path's warm-up to
        the last path's end over every request measured in between."""
        figures = [m.memory for m, _ in self.parts]
        if any(f is None for f in figures):
            return None
        whole = memory_figures(self.first.rss_warm_kb, self.parts[-1][0].rss_end_kb, self.requests)
        assert whole is not None
        return max(f[0] for f in figures if f is not None), whole[1]

    @property
    def gil_enabled(self) -> bool:
        """Whether the GIL was on after any path ran: once an import turns it on, it stays on."""
        return any(m.gil_enabled for m, _ in self.parts)

    def measured(self) -> Measured:
        """The `[measured]` table: the mix's spread, and each path's own under `paths`."""
        spreads = {
            name: Spread(p10=p10, p50=p50, p90=p90, mean=mean)
            for name, (p10, p50, p90, mean) in self.spread().items()
            if name != "runqueue_ms" or self.first.runqueue_known
        }
        paths = tuple(MeasuredPath(path=m.path, weight=w, **m._figures()) for m, w in self.parts)
        return Measured(
            interface=self.first.interface,
            gil_enabled=self.gil_enabled,
            method=self.first.method,
            requests=self.requests,
            raw_cpu_fraction=self.raw_cpu_fraction,
            paths=paths,
            **spreads,
        )

    def table(self) -> str:
        """Per path, then the mix: service time spread, cpu_fraction, share; then the estimate."""
        if len(self.parts) == 1:
            return "\n".join([self.first.table(), *self._sweep_lines()])
        first = self.first
        statuses: Counter[int] = Counter()
        for m, _ in self.parts:
            statuses.update(m.statuses)
        shown = ", ".join(f"{code} x {n}" for code, n in sorted(statuses.items()))
        width = max(12, *(len(m.path) for m, _ in self.parts))
        lines = [
            (
                f"servertune measure {first.app} ({first.interface}) {first.method}, "
                f"{len(self.parts)} paths mixed by weight"
            ),
            f"requests: {self.requests} measured, {first.warmup} warm-up per path; status {shown}",
            "",
            (
                f"{'path':{width}}  {'share':>6}  {'requests':>8}  {'service time p10/p50/p90 (ms)':>30}"
                f"  {'cpu fraction':>12}"
            ),
            f"{'-' * width}  {'-' * 6}  {'-' * 8}  {'-' * 30}  {'-' * 12}",
        ]
        total = self.total_weight
        for m, w in self.parts:
            p10, p50, p90, _ = m.spread()["service_time_ms"]
            cells = f"{p10:.2f} / {p50:.2f} / {p90:.2f}"
            lines.append(
                f"{m.path:{width}}  {w / total:6.1%}  {len(m.samples):8d}  {cells:>30}"
                f"  {m.cpu_fraction:12.3f}"
            )
        p10, p50, p90, _ = self.spread()["service_time_ms"]
        cells = f"{p10:.2f} / {p50:.2f} / {p90:.2f}"
        lines.append(
            f"{'mix':{width}}  {1:6.1%}  {self.requests:8d}  {cells:>30}  {self.cpu_fraction:12.3f}"
        )
        values = self.workload_values()
        lines += [
            "",
            (
                f"service_time_ms = {values['service_time_ms']:g}  "
                "(each path's mean busy time, weighted by its share)"
            ),
            (
                f"cpu_ms          = {values['cpu_ms']:g}  "
                "(mean CPU time per request over the mix, weighted by share)"
            ),
        ]
        lines += memory_lines(
            values, self.first.rss_warm_kb, self.parts[-1][0].rss_end_kb, self.requests
        )
        free_threaded = any(m.free_threaded for m, _ in self.parts)
        mix_notes = {FLOOR_NOTE, *(gil_note(m.gil_enabled, m.free_threaded) for m, _ in self.parts)}
        for m, _ in self.parts:
            # The floor and the GIL apply to the mix's values, the only ones written: said once.
            lines.extend(f"note: {m.path}: {note}" for note in m.notes() if note not in mix_notes)
        if self.cpu_ms < MIN_CPU_MS:
            lines.append(f"note: {FLOOR_NOTE}")
        lines.append(f"note: {gil_note(self.gil_enabled, free_threaded)}")
        return "\n".join([*lines, *self._sweep_lines()])

    def to_toml(self) -> str:
        """A workload file with the mix's estimate, and each path's spread under `[measured]`."""
        if len(self.parts) == 1:
            return self.first.to_toml(self._with_sweep(self.first.workload_values()))
        first = self.first
        mixed = ", ".join(f"{m.path}={w:g}" for m, w in self.parts)
        return dumps(
            self.workload_values(),
            self.measured(),
            comments=(
                f"servertune measure {first.app} {first.method} {mixed} ({first.date})",
                (
                    f"{self.requests} requests after {first.warmup} warm-up per path; "
                    f"Python {sys.version.split()[0]}"
                ),
            ),
        )


def memory_lines(
    values: dict[str, Any], warm_kb: int | None, end_kb: int | None, requests: int
) -> list[str]:
    """The table's memory lines: the warm size and the growth, with what they came from."""
    if "memory_per_worker_mb" not in values or warm_kb is None or end_kb is None:
        return []
    grown = end_kb - warm_kb
    growth = values["memory_growth_kb_per_request"]
    why = (
        f"{grown} KiB over {requests} requests"
        if growth
        else f"{grown} KiB over {requests} requests, under the {RSS_GROWTH_NOISE_KB} KiB an "
        "allocator arena takes: not counted"
    )
    return [
        (
            f"memory_per_worker_mb = {values['memory_per_worker_mb']}  (this process's RSS "
            "after warm-up: the app imported, as in one worker)"
        ),
        f"memory_growth_kb_per_request = {growth:g}  ({why})",
    ]


def gil_note(gil_enabled: bool, free_threaded: bool) -> str:
    """What `measure` says about the GIL it saw, and which case the workload file then plans for."""
    if not gil_enabled:
        return (
            "GIL off while the app ran (free-threaded build, sys._is_gil_enabled() False): "
            'written as gil = "disabled", so the plan bounds threads by cores, not the GIL'
        )
    if free_threaded:
        return (
            "GIL on while the app ran although this is a free-threaded build: PYTHON_GIL=1, or "
            "an extension module without free-threading support turned it back on at import; "
            'written as gil = "enabled"'
        )
    return 'GIL on while the app ran (sys._is_gil_enabled()): written as gil = "enabled"'


def weighted_quantile(pairs: Sequence[tuple[float, float]], q: float) -> float:
    """The smallest value whose cumulative weight reaches q (0..1) of the total."""
    ordered = sorted(pairs)
    total = sum(w for _, w in ordered)
    running = 0.0
    for value, weight in ordered:
        running += weight
        if running >= q * total - 1e-12:
            return value
    return ordered[-1][0]
