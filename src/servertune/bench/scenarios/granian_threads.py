"""granian's WSGI thread pool under the GIL: the plan's blocking threads vs more, and granian's default.

granian runs a WSGI app on `--blocking-threads` per worker; left unset it starts backpressure / 2
of them (backpressure defaults to 1024 / workers: 256 threads per worker with 2 workers). Under
the GIL, threads past what keeps the GIL busy only queue for it, so servertune sets the plan's
threads (seed 000's half-GIL request: 2). Measured, not assumed: the same half-GIL app (the
`balance` scenario's: 5 x (sleep 10 ms + ~10 ms of Python CPU)) on granian behind the same
nginx, with the plan's threads, 4 x as many, and granian's default pool, at 2 and 8 connections
per core, reporting req/s, p99 and the peak thread count of the granian process group.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.report import BenchOptions, Report, Target

__all__ = ["CONFIGS", "plot", "run"]

#: Seed 000's request: 100 ms, half of it holding the GIL.
SERVICE_TIME_MS = 100.0
CPU_FRACTION = 0.5
#: Connections per core (full, quick).
FULL_LEVELS = (2, 8)
QUICK_LEVELS = (8,)
FULL_SECONDS = 6.0
QUICK_SECONDS = 1.0
WARMUP_SECONDS = 1.0
MIN_REPEATS = 3
#: More threads than needed must not buy throughput: servertune's req/s within this of the best.
THROUGHPUT_NOISE = 0.10
#: How often the group's thread count is sampled.
SAMPLE_S = 0.05

CONFIGS = ("servertune", "threads-x4", "granian-default")


@dataclass(frozen=True)
class _Config:
    name: str
    plan: Any
    argv: list[str] | None = None


class _ThreadPeak:
    """Samples the summed `Threads:` of a process group's members; `peak` is the largest sum."""

    def __init__(self, pgid: int) -> None:
        self.pgid = pgid
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        from servertune.bench.stats import group_members

        while not self._stop.is_set():
            total = 0
            for pid in group_members(self.pgid):
                try:
                    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                        if line.startswith("Threads:"):
                            total += int(line.split()[1])
                except OSError:
                    continue
            self.peak = max(self.peak, total)
            self._stop.wait(SAMPLE_S)

    def __enter__(self) -> _ThreadPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def _configs(base: Any, stack: Any) -> list[_Config]:
    import sys

    from servertune.bench.servers import place, plan_for
    from servertune.sizing import Forced

    placed = place(base, stack, 1)
    ours = plan_for(placed)
    more = plan_for(
        placed,
        forced={
            "granian_blocking_threads": Forced(
                4 * ours.threads, "forced by the benchmark: 4 x the plan's threads"
            )
        },
    )
    granian = str(Path(sys.executable).parent / "granian")
    default = [
        granian, "--interface", "wsgi", placed.app, "--working-dir", str(placed.app_dir),
        "--host", "127.0.0.1", "--port", str(ours.shared_socket.port), "--http", "1",
        "--workers", str(ours.processes), "--no-access-log",
    ]  # fmt: skip
    return [
        _Config("servertune", ours),
        _Config("threads-x4", more),
        _Config("granian-default", ours, argv=default),
    ]


def run(options: BenchOptions) -> Report:
    """Each pool size, interleaved over repeats, at each connection level."""
    from servertune.bench.apps import install
    from servertune.bench.load import find_wrk, run_closed_loop
    from servertune.bench.progress import Progress
    from servertune.bench.scenarios.balance import calibrate_loops
    from servertune.bench.servers import Stack, deploy_asgi
    from servertune.bench.stats import median_run
    from servertune.bench.versions import dist_version
    from servertune.machine import Machine
    from servertune.workload import Workload

    cores = Machine.read().cores
    levels = [n * cores for n in (QUICK_LEVELS if options.quick else FULL_LEVELS)]
    seconds = QUICK_SECONDS if options.quick else FULL_SECONDS
    repeats = 1 if options.quick else max(MIN_REPEATS, options.repeat)
    env = {"SERVERTUNE_BENCH_CPU_LOOPS": str(calibrate_loops())}
    progress = Progress(repeats * len(CONFIGS), enabled=options.progress)
    raw: dict[tuple[str, int], list[dict[str, Any]]] = {}
    stack = Stack("granian-threads")
    threads: dict[str, int] = {}
    started = time.perf_counter()
    try:
        with stack:
            app = install("balance", stack.dir)
            base = Workload(
                cores=cores, service_time_ms=SERVICE_TIME_MS, cpu_fraction=CPU_FRACTION, app=app
            )
            for repeat in range(repeats):
                for config in _configs(base, stack):
                    threads[config.name] = config.plan.granian_blocking_threads
                    progress.show(f"{config.name}, run {repeat + 1}/{repeats}")
                    deployment = deploy_asgi(
                        stack, f"{config.name}-{repeat}", config.plan, "granian",
                        argv=config.argv, env=env,
                    )  # fmt: skip
                    try:
                        if not options.quick:
                            run_closed_loop(
                                deployment.url, connections=max(levels), duration_s=WARMUP_SECONDS
                            )
                        for level in levels:
                            with _ThreadPeak(deployment.app_servers[0].pgid) as peak:
                                result = run_closed_loop(
                                    deployment.url, connections=level, duration_s=seconds
                                )
                            raw.setdefault((config.name, level), []).append(
                                {"config": config.name, "concurrency": level,
                                 **result.metrics(), "peak_threads": peak.peak,
                                 "distribution": [list(p) for p in result.distribution]}
                            )  # fmt: skip
                    finally:
                        deployment.stop(stack)
                    progress.advance(f"{config.name}: done")
    finally:
        progress.close()

    runs = [median_run(raw[(name, level)]) for name in CONFIGS for level in levels]
    report = Report(scenario="granian-threads", runs=runs)
    report.versions = {d: dist_version(d) for d in ("servertune", "granian")}
    report.versions["load"] = "wrk" if find_wrk() else "builtin"
    top = max(levels)

    def at(name: str) -> dict[str, Any]:
        return next(r for r in runs if r["config"] == name and r["concurrency"] == top)

    best = max(at(name)["rps"] for name in CONFIGS)
    for name in CONFIGS[1:]:
        report.ratios[f"{name}/servertune req/s at c={top}"] = round(
            at(name)["rps"] / at("servertune")["rps"], 3
        )
        report.ratios[f"{name}/servertune p99 at c={top}"] = round(
            at(name)["p99_ms"] / at("servertune")["p99_ms"], 3
        )
    report.targets.append(
        Target(
            f"servertune req/s / the best pool's at c={top}",
            at("servertune")["rps"] / best,
            ">=",
            1 - THROUGHPUT_NOISE,
        )
    )
    report.notes = [
        (
            f"{cores} cores; half-GIL app (5 x (10 ms sleep + ~10 ms CPU)); blocking threads per "
            f"worker: servertune {threads['servertune']}, threads-x4 {threads['threads-x4']}, "
            "granian-default unset (backpressure / 2)"
        ),
        (
            f"wrk closed loop at {', '.join(map(str, levels))} connections, {seconds:g} s each; "
            f"medians of {repeats} interleaved run(s); took {time.perf_counter() - started:.0f} s"
        ),
        "peak_threads: all threads of the granian process group (workers, runtime, pool)",
    ]
    report.servers = stack.record()
    return report


def plot(report: Report, path: Path) -> None:
    """Latency by percentile per connection level."""
    from servertune.bench.plotting import plot_distributions

    plot_distributions(
        report, path, panel_key="concurrency", panel_title=lambda c: f"{c} connections"
    )
