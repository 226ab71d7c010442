"""uWSGI layouts under a half-GIL app: per-worker sockets + least_conn vs shared socket.

The app of a published uWSGI experiment (docs/references.md): a request is 5 x (sleep 10 ms + about 10 ms of Python CPU), so it
holds the GIL half the time and one process saturates its core with 2 threads. Four layouts with
the same number of request slots (processes x threads = servertune's plan) serve it behind the
same generated nginx:

* `threads-only`: one process with every slot as a thread (GIL-bound to one core);
* `processes-only`: one single-threaded process per slot, all on one shared socket;
* `shared-socket`: servertune's processes x threads, but every worker accepts from one socket;
* `servertune`: exactly `servertune gen uwsgi` + `servertune gen nginx` (one socket per worker,
  nginx `least_conn` + `zone`).

Each runs at concurrency = cores and 2 x cores (full runs add 4 x cores) with wrk (or the
built-in client). The CPU ceiling is measured, not assumed: cores / the app's CPU-seconds per
request, read from /proc for the uWSGI process group during the same run, so a throughput's
fraction of it is the share of the cores that went into serving requests (robust to a shared
VM whose per-core speed drifts; docs/benchmarks.md explains why not the one-connection run).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from servertune.bench.report import BenchOptions, Report, Target

__all__ = ["CONFIGS", "plot", "run"]

#: The experiment's request: 100 ms of wall time, half of it holding the GIL.
SERVICE_TIME_MS = 100.0
CPU_FRACTION = 0.5
#: CPU per round the app is calibrated to (the experiment's fib(25) took about 10 ms).
CPU_ROUND_S = 0.010
#: Issue #3 targets for servertune's plan at 2 x cores connections.
TARGET_CEILING_FRACTION = 0.90
TARGET_P99_OVER_SINGLE = 1.5

#: Differences smaller than these count as noise when the report says where the effect shows
#: (run-to-run spread of medians on the shared 2-core machine, docs/benchmarks.md).
RPS_MARGIN = 0.05
P99_MARGIN = 0.10

#: Other work above this many cores during a measurement gets a note in the report.
NOISY_OTHER_CORES = 0.25

#: Seconds of load per measurement, and of warm-up after each start (the app imports lazily).
FULL_SECONDS = 6.0
QUICK_SECONDS = 1.0
WARMUP_SECONDS = 1.0
#: Load levels as multiples of the core count.
FULL_LEVELS = (1, 2, 4)
QUICK_LEVELS = (2,)

CONFIGS = ("threads-only", "processes-only", "shared-socket", "servertune")


@dataclass(frozen=True)
class _Config:
    name: str
    plan: Any  # servertune.sizing.Plan, imported lazily
    uwsgi_ini: str
    layout: Literal["per-worker", "shared"]


def calibrate_loops(target_s: float = CPU_ROUND_S, probe: int = 200_000) -> int:
    """Loop count of `burn` that takes `target_s` of CPU here (best of 7: the unloaded speed)."""
    from servertune.bench.apps.balance import burn

    best = float("inf")
    for _ in range(7):
        start = time.thread_time()
        burn(probe)
        best = min(best, time.thread_time() - start)
    return max(1000, round(probe * target_s / max(best, 1e-6)))


def _drop_map_socket(ini: str) -> str:
    """uwsgi.ini with its one socket shared by every worker: the map-socket line removed."""
    lines = ini.splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith("map-socket")]
    if len(lines) - len(kept) != 1:
        raise ValueError("expected exactly one map-socket line for a one-socket plan")
    return "".join(kept)


def _configs(plan: Any) -> list[_Config]:
    """The four layouts, each with servertune's slot count; servertune's is `gen`'s output."""
    from servertune.render import render_uwsgi

    slots = plan.processes * plan.threads
    one = (plan.shared_socket,)
    threads_only = plan.model_copy(
        update={"processes": 1, "threads": slots, "sockets": plan.sockets[:1]}
    )
    processes_only = plan.model_copy(update={"processes": slots, "threads": 1, "sockets": one})
    shared = plan.model_copy(update={"sockets": one})
    return [
        _Config("threads-only", threads_only, render_uwsgi(threads_only), "per-worker"),
        _Config(
            "processes-only",
            processes_only,
            _drop_map_socket(render_uwsgi(processes_only)),
            "shared",
        ),
        _Config("shared-socket", shared, _drop_map_socket(render_uwsgi(shared)), "shared"),
        _Config("servertune", plan, render_uwsgi(plan), "per-worker"),
    ]


def run(options: BenchOptions) -> Report:
    """Measure the four layouts at cores and 2 x cores connections; check servertune's targets."""
    from servertune.bench.apps import install
    from servertune.bench.load import find_wrk, run_closed_loop
    from servertune.bench.progress import Progress
    from servertune.bench.servers import Stack, deploy_uwsgi, place, plan_for
    from servertune.bench.stats import median, median_run
    from servertune.workload import Workload

    cores = Workload().resolved_cores
    levels = [m * cores for m in (QUICK_LEVELS if options.quick else FULL_LEVELS)]
    seconds = QUICK_SECONDS if options.quick else FULL_SECONDS
    repeats = 1 if options.quick else options.repeat
    tool = "wrk" if find_wrk() else "builtin"
    loops = calibrate_loops()
    env = {"SERVERTUNE_BENCH_CPU_LOOPS": str(loops)}
    progress = Progress(repeats * (1 + len(CONFIGS) * len(levels)), enabled=options.progress)

    raw: dict[tuple[str, int], list[dict[str, Any]]] = {}
    baselines: list[dict[str, Any]] = []
    stack = Stack("balance")
    try:
        with stack:
            app = install("balance", stack.dir)
            base = Workload(
                cores=cores, service_time_ms=SERVICE_TIME_MS, cpu_fraction=CPU_FRACTION, app=app
            )
            # Repeats are interleaved (every config once, then again) so a noisy minute on a
            # shared machine hits all configs alike instead of one.
            for repeat in range(repeats):
                configs = _configs(plan_for(place(base, stack, cores * 4)))
                for config in configs:
                    deployment = deploy_uwsgi(
                        stack, f"{config.name}-{repeat}", config.plan,
                        layout=config.layout, uwsgi_ini=config.uwsgi_ini, env=env,
                    )  # fmt: skip
                    try:
                        if not options.quick:
                            run_closed_loop(
                                deployment.url, connections=max(levels), duration_s=WARMUP_SECONDS
                            )
                        if config.name == "servertune":
                            progress.show("servertune, 1 connection (single-request latency)")
                            baselines.append(_measure(deployment, 1, seconds, config.name, cores))
                            progress.advance()
                        for level in levels:
                            progress.show(f"{config.name}, {level} connections, run {repeat + 1}")
                            row = _measure(deployment, level, seconds, config.name, cores)
                            raw.setdefault((config.name, level), []).append(row)
                            progress.advance(
                                f"{config.name}, {level} connections: {row['rps']:.1f} req/s, "
                                f"p99 {row['p99_ms']:.0f} ms"
                            )
                    finally:
                        deployment.stop(stack)
                plan = configs[-1].plan
    finally:
        progress.close()

    single = median_run(baselines)
    runs = [single | {"role": "single-request"}]
    for name in CONFIGS:
        for level in levels:
            row = median_run(raw[(name, level)])
            row["p99_over_single"] = round(row["p99_ms"] / single["p50_ms"], 3)
            runs.append(row)
    top = max(level for level in levels if level <= 2 * cores)
    ceiling = median(s["ceiling_rps"] for s in raw[("servertune", top)])
    c1_ceiling = cores / (single["app_cpu_ms_per_req"] / 1000)

    report = Report(scenario="balance", runs=runs, ceiling_rps=round(ceiling, 2))
    report.versions = _versions(tool)
    ours = _row(runs, "servertune", top)
    report.targets = [
        Target(f"servertune req/s / CPU ceiling at {top} connections",
               ours["ceiling_fraction"], ">=", TARGET_CEILING_FRACTION),
        Target(f"servertune p99 / single-request latency at {top} connections",
               ours["p99_over_single"], "<=", TARGET_P99_OVER_SINGLE),
    ]  # fmt: skip
    for level in levels:
        shared = _row(runs, "shared-socket", level)
        mine = _row(runs, "servertune", level)
        report.ratios[f"servertune/shared-socket req/s at c={level}"] = round(
            mine["rps"] / shared["rps"], 3
        )
        report.ratios[f"shared-socket/servertune p99 at c={level}"] = round(
            shared["p99_ms"] / mine["p99_ms"], 3
        )
    report.notes = [
        (
            f"{cores} cores. CPU ceiling of a run = {cores} cores / the app's CPU-seconds per "
            f"request measured from /proc in that same run; servertune at {top} connections: "
            f"{ceiling:.1f} req/s (the plan's model: {plan.ceiling_rps:.1f})"
        ),
        _single_ceiling_note(c1_ceiling, ceiling, single["app_cpu_ms_per_req"]),
        f"single-request latency (p50 at 1 connection): {single['p50_ms']:.1f} ms",
        (
            f"load by {tool}; {seconds:g} s per measurement; medians of {repeats} run(s); "
            f"CPU round calibrated to {loops} loops (~{CPU_ROUND_S * 1000:g} ms)"
        ),
        (
            f"every layout has {plan.processes * plan.threads} request slots "
            f"(servertune: {plan.processes} processes x {plan.threads} threads)"
        ),
        *_where_it_shows(runs, levels),
    ]
    busiest = max(float(s["other_cpu_cores"]) for rows in raw.values() for s in rows)
    if busiest > NOISY_OTHER_CORES:
        report.notes.append(
            f"other work on this machine used up to {busiest:.2f} cores during a measurement "
            "(other_cpu_cores in each run): those numbers are noisy"
        )
    report.servers = stack.record()
    return report


def _measure(
    deployment: Any, connections: int, seconds: float, name: str, cores: int
) -> dict[str, Any]:
    """One load run: the issue's metrics, CPU used, and this run's own CPU ceiling."""
    from servertune.bench.load import run_closed_loop
    from servertune.bench.stats import CpuWatch

    app_before = deployment.app_cpu_seconds()
    with CpuWatch(deployment.cpu_seconds) as watch:
        result = run_closed_loop(deployment.url, connections=connections, duration_s=seconds)
    app_cpu = deployment.app_cpu_seconds() - app_before
    per_request = app_cpu / max(1, result.requests)
    ceiling = cores / per_request if per_request > 0 else float("inf")
    return {
        "config": name,
        "concurrency": connections,
        **result.metrics(),
        "cpu_s": round(watch.server_seconds, 3),
        "app_cpu_ms_per_req": round(per_request * 1000, 2),
        "ceiling_rps": round(ceiling, 2),
        "ceiling_fraction": round(result.rps / ceiling, 3),
        "other_cpu_cores": round(watch.other_cores, 2),
        "distribution": [list(point) for point in result.distribution],
    }


def _row(runs: list[dict[str, Any]], config: str, level: int) -> dict[str, Any]:
    for row in runs:
        if row["config"] == config and row["concurrency"] == level and "role" not in row:
            return row
    raise KeyError((config, level))


def _where_it_shows(runs: list[dict[str, Any]], levels: list[int]) -> list[str]:
    """Say, from the numbers, at which load levels the shared socket costs something."""
    notes = []
    for level in levels:
        shared, mine = _row(runs, "shared-socket", level), _row(runs, "servertune", level)
        rps_gain = mine["rps"] / shared["rps"] - 1
        p99_gain = shared["p99_ms"] / mine["p99_ms"] - 1
        # A penalty must show in one measure without the other going the opposite way.
        better = rps_gain > RPS_MARGIN or p99_gain > P99_MARGIN
        worse = rps_gain < -RPS_MARGIN or p99_gain < -P99_MARGIN
        if better and worse:
            verdict = "mixed: one measure favours each layout"
        elif better:
            verdict = "the shared-socket penalty shows"
        elif worse:
            verdict = "the shared socket does better here"
        else:
            verdict = "no clear difference (within noise margins)"
        notes.append(
            f"c={level}: {verdict} (servertune {mine['rps']:.1f} vs {shared['rps']:.1f} req/s, "
            f"p99 {mine['p99_ms']:.0f} vs {shared['p99_ms']:.0f} ms)"
        )
    return notes


def _single_ceiling_note(c1_ceiling: float, ceiling: float, cpu_ms: float) -> str:
    """Why the ceiling comes from the loaded run, worded from what this run measured."""
    if c1_ceiling < ceiling:
        effect = "lower, so every fraction would look better"
    elif c1_ceiling > ceiling:
        effect = "higher this time, so every fraction would look worse"
    else:
        effect = "the same this time"
    return (
        f"the ceiling from the 1-connection run would be {c1_ceiling:.1f} req/s "
        f"({cpu_ms:.1f} ms of app CPU per request, against {ceiling:.1f} req/s under load): "
        f"{effect}; not used, because a run's own ceiling cancels this machine's drift"
    )


def _versions(tool: str) -> dict[str, str]:
    from servertune.bench.versions import tool_versions

    return tool_versions(["uwsgi", "nginx", tool])


def plot(report: Report, path: Path) -> None:
    """Latency distributions (percentile vs ms), one panel per load level."""
    from servertune.bench.plotting import plot_distributions

    plot_distributions(
        report,
        path,
        panel_key="concurrency",
        panel_title=lambda value: f"{value} connections",
        select=lambda run: "role" not in run,
    )
