"""ASGI servers under an awaiting + loop-blocking mix: servertune's admission vs uvicorn defaults.

The app (`servertune.bench.apps.asgi_mix`) awaits uniform(0, 200) ms, as the sync_to_async
article's requests did, then blocks its event loop for BLOCK_MS of Python CPU. The workload a
user would write for it (service time = mean await + block, cpu_fraction = block / service
time, interface = asgi) gives servertune's plan: one process per core, and nginx admitting 2 x
the requests Little's law puts in flight at the loops' capacity. Configurations, each behind
nginx on 127.0.0.1:

* `servertune-uvicorn`, `servertune-gunicorn-asgi`, `servertune-granian`: exactly
  `servertune gen uvicorn | gunicorn-asgi | granian` + `gen nginx-asgi`;
* `servertune-uvicorn-per-worker`: the same numbers, one one-worker uvicorn per socket behind
  nginx least_conn (does the uWSGI/gunicorn layout win for event loops too?);
* `uvicorn-2n+1`: `uvicorn --workers (2 x cores) + 1`, uvicorn's other flags at their defaults;
* `uvicorn-1-worker` and `granian-default`: the servers' own defaults (one worker);
  the defaults sit behind nginx from the same plan without its admission limit.

Each configuration gets three loads: unloaded (open-loop Poisson arrivals at 10% of the plan's
capacity: the latency a request has on its own), normal (wrk, closed loop, as many connections
as Little's law puts in flight at capacity) and overload (open loop at 4 x the plan's capacity:
the excess must go somewhere). Repeats are interleaved.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.report import BenchOptions, Report, Target

__all__ = ["CONFIGS", "plot", "run"]

#: The app's mix: awaits uniform(0, AWAIT_MS) ms, then blocks its loop BLOCK_MS ms.
AWAIT_MS = 200.0
BLOCK_MS = 10.0
#: Overload: this many times the plan's capacity (issue 14).
OVERLOAD_FACTOR = 4.0
#: Unloaded: this share of the plan's capacity, open loop.
UNLOADED_FACTOR = 0.1
#: A client gives up on a request after this long (counted as a timeout).
CLIENT_TIMEOUT_S = 5.0
#: Seconds per load phase (full, quick) and of warm-up after each start.
FULL_SECONDS = {"unloaded": 5.0, "normal": 8.0, "overload": 8.0}
QUICK_SECONDS = {"unloaded": 1.0, "normal": 1.0, "overload": 1.0}
WARMUP_SECONDS = 1.0
#: House rule: at least 3 interleaved repeats for a full run.
MIN_REPEATS = 3
#: Targets (issue 14): admitted p99 under overload within 2 x the unloaded p99; throughput at
#: normal load within the noise of the best default (the run-to-run spread on a shared machine).
MAX_OVERLOAD_P99_RATIO = 2.0
THROUGHPUT_NOISE = 0.10

OURS = "servertune-uvicorn"
CONFIGS = (
    "servertune-uvicorn",
    "servertune-gunicorn-asgi",
    "servertune-granian",
    "servertune-uvicorn-per-worker",
    "uvicorn-2n+1",
    "uvicorn-1-worker",
    "granian-default",
)
DEFAULTS = ("uvicorn-2n+1", "uvicorn-1-worker", "granian-default")


@dataclass(frozen=True)
class _Config:
    name: str
    server: str
    plan: Any
    argv: list[str] | None = None
    per_worker: bool = False


def _configs(base: Any, stack: Any, cores: int) -> list[_Config]:
    """Every configuration on fresh ports; defaults get nginx from a plan with no admission."""
    from servertune.bench.servers import place, plan_for
    from servertune.sizing import Forced

    naive_workers = 2 * cores + 1
    placed = place(base, stack, naive_workers)
    ours = plan_for(placed)
    no_admission = {
        "admission_limit": Forced(None, "forced by the benchmark: the defaults admit everything")
    }
    configs = [
        _Config("servertune-uvicorn", "uvicorn", ours),
        _Config("servertune-gunicorn-asgi", "gunicorn-asgi", ours),
        _Config("servertune-granian", "granian", ours),
    ]
    configs.append(_Config("servertune-uvicorn-per-worker", "uvicorn", ours, per_worker=True))
    host, port = "127.0.0.1", str(ours.shared_socket.port)
    app, app_dir = placed.app, str(placed.app_dir)
    naive_many = plan_for(
        placed,
        forced={
            **no_admission,
            "processes": Forced(naive_workers, "forced by the benchmark: (2 x cores) + 1"),
        },
    )
    configs.append(
        _Config(
            "uvicorn-2n+1", "uvicorn", naive_many,
            argv=[sys.executable, "-m", "uvicorn", app, "--app-dir", app_dir, "--host", host,
                  "--port", port, "--workers", str(naive_workers), "--no-access-log"],
        )
    )  # fmt: skip
    naive_one = plan_for(
        placed,
        forced={**no_admission, "processes": Forced(1, "forced by the benchmark: one worker")},
    )
    configs.append(
        _Config(
            "uvicorn-1-worker", "uvicorn", naive_one,
            argv=[sys.executable, "-m", "uvicorn", app, "--app-dir", app_dir, "--host", host,
                  "--port", port, "--no-access-log"],
        )
    )  # fmt: skip
    granian = str(Path(sys.executable).parent / "granian")
    configs.append(
        _Config(
            "granian-default", "granian", naive_one,
            argv=[granian, "--interface", "asgi", app, "--working-dir", app_dir, "--host", host,
                  "--port", port, "--no-access-log"],
        )
    )  # fmt: skip
    return configs


def normal_connections(plan: Any) -> int:
    """Little's law at the plan's capacity: the requests in flight when the loops are just busy."""
    from servertune.sizing.queueing import held_s

    return max(1, round(float(plan.asgi_capacity_rps) * held_s(plan.workload)))


def _phase_rows(
    deployment: Any, plan: Any, seconds: dict[str, float], name: str
) -> dict[str, dict[str, Any]]:
    from servertune.bench.load import run_closed_loop
    from servertune.bench.open_loop import run_open_loop

    capacity = plan.asgi_capacity_rps
    rows: dict[str, dict[str, Any]] = {}
    unloaded = run_open_loop(
        deployment.url, rate=capacity * UNLOADED_FACTOR, duration_s=seconds["unloaded"],
        timeout_s=CLIENT_TIMEOUT_S,
    )  # fmt: skip
    rows["unloaded"] = {"config": name, "load": "unloaded", **unloaded.metrics()}
    connections = normal_connections(plan)
    normal = run_closed_loop(deployment.url, connections=connections, duration_s=seconds["normal"])
    rows["normal"] = {
        "config": name, "load": "normal", "concurrency": connections, **normal.metrics(),
        "distribution": [list(p) for p in normal.distribution],
    }  # fmt: skip
    overload = run_open_loop(
        deployment.url, rate=capacity * OVERLOAD_FACTOR, duration_s=seconds["overload"],
        timeout_s=CLIENT_TIMEOUT_S,
    )  # fmt: skip
    rows["overload"] = {"config": name, "load": "overload", **overload.metrics()}
    return rows


def run(options: BenchOptions) -> Report:
    """Every configuration, interleaved over repeats, at unloaded, normal and overload."""
    from servertune.bench.apps import install
    from servertune.bench.load import find_wrk, run_closed_loop
    from servertune.bench.progress import Progress
    from servertune.bench.servers import Stack, deploy_asgi
    from servertune.bench.stats import median_run
    from servertune.bench.versions import dist_version
    from servertune.machine import Machine
    from servertune.workload import Workload

    cores = Machine.read().cores
    seconds = QUICK_SECONDS if options.quick else FULL_SECONDS
    repeats = 1 if options.quick else max(MIN_REPEATS, options.repeat)
    env = {
        "SERVERTUNE_BENCH_AWAIT_MS": f"{AWAIT_MS:g}",
        "SERVERTUNE_BENCH_BLOCK_MS": f"{BLOCK_MS:g}",
    }
    service_ms = AWAIT_MS / 2 + BLOCK_MS
    progress = Progress(repeats * len(CONFIGS), enabled=options.progress)
    raw: dict[tuple[str, str], list[dict[str, Any]]] = {}
    started = time.perf_counter()
    stack = Stack("asgi")
    plan: Any = None
    try:
        with stack:
            app = install("asgi_mix", stack.dir)
            base = Workload(
                cores=cores, interface="asgi", service_time_ms=service_ms,
                cpu_fraction=BLOCK_MS / service_ms, app=app,
            )  # fmt: skip
            for repeat in range(repeats):
                configs = _configs(base, stack, cores)
                plan = configs[0].plan
                for config in configs:
                    progress.show(f"{config.name}, run {repeat + 1}/{repeats}")
                    deployment = deploy_asgi(
                        stack, f"{config.name}-{repeat}", config.plan, config.server,  # type: ignore[arg-type]
                        argv=config.argv, per_worker=config.per_worker, env=env,
                    )  # fmt: skip
                    try:
                        if not options.quick:
                            run_closed_loop(
                                deployment.url, connections=4, duration_s=WARMUP_SECONDS
                            )
                        rows = _phase_rows(deployment, plan, seconds, config.name)
                    finally:
                        deployment.stop(stack)
                    for load, measured in rows.items():
                        raw.setdefault((config.name, load), []).append(measured)
                    over = rows["overload"]
                    progress.advance(
                        f"{config.name}: normal {rows['normal']['rps']:.0f} req/s; overload "
                        f"{over['rps']:.0f} req/s admitted, p99 {over['p99_ms'] or 0:.0f} ms, "
                        f"{over['refused_503']} x 503, {over['timeouts']} timeouts"
                    )
    finally:
        progress.close()

    runs = [
        median_run(raw[(name, load)])
        for name in CONFIGS
        for load in ("unloaded", "normal", "overload")
    ]
    report = Report(scenario="asgi", runs=runs, ceiling_rps=round(plan.asgi_capacity_rps, 1))
    report.versions = {
        dist: dist_version(dist)
        for dist in ("servertune", "uvicorn", "uvicorn-worker", "gunicorn", "granian")
    }
    report.versions["load"] = "wrk" if find_wrk() else "builtin"

    def row(name: str, load: str) -> dict[str, Any]:
        return next(r for r in runs if r["config"] == name and r["load"] == load)

    for name in CONFIGS:
        unloaded_p99 = row(name, "unloaded")["p99_ms"]
        over = row(name, "overload")
        over["p99_over_unloaded"] = (
            round(over["p99_ms"] / unloaded_p99, 3) if over["p99_ms"] and unloaded_p99 else None
        )
    best_default = max(row(name, "normal")["rps"] for name in DEFAULTS)
    for name in CONFIGS:
        if name.startswith("servertune"):
            report.ratios[f"{name} normal req/s / best default"] = round(
                row(name, "normal")["rps"] / best_default, 3
            )
    for name in CONFIGS:
        report.ratios[f"{name} overload p99 / unloaded p99"] = row(name, "overload")[
            "p99_over_unloaded"
        ] or float("nan")
    report.ratios["per-worker / shared uvicorn normal req/s"] = round(
        row("servertune-uvicorn-per-worker", "normal")["rps"] / row(OURS, "normal")["rps"], 3
    )
    for name in CONFIGS:
        if name.startswith("servertune"):
            report.targets.append(
                Target(
                    f"{name}: overload p99 of admitted / unloaded p99",
                    row(name, "overload")["p99_over_unloaded"],
                    "<=",
                    MAX_OVERLOAD_P99_RATIO,
                )
            )
    report.targets.append(
        Target(
            f"{OURS}: normal req/s / best default's",
            report.ratios[f"{OURS} normal req/s / best default"],
            ">=",
            1 - THROUGHPUT_NOISE,
        )
    )
    report.notes = [
        (
            f"{cores} cores; the app awaits uniform(0, {AWAIT_MS:g}) ms then blocks its loop "
            f"{BLOCK_MS:g} ms; plan: {plan.processes} processes, capacity "
            f"{plan.asgi_capacity_rps:.0f} req/s, nginx admits {plan.admission_limit}"
        ),
        (
            f"unloaded: open loop at {UNLOADED_FACTOR:g} x capacity; normal: wrk with "
            f"{normal_connections(plan)} connections (Little's law at capacity); "
            f"overload: open loop at {OVERLOAD_FACTOR:g} x capacity; clients time out after "
            f"{CLIENT_TIMEOUT_S:g} s; {seconds['overload']:g} s per load"
        ),
        (
            "overload latencies are of admitted (2xx) requests, timed from their scheduled send "
            "(open loop); refused_503 and timeouts count the rest"
        ),
        f"medians of {repeats} interleaved run(s); took {time.perf_counter() - started:.0f} s",
    ]
    report.servers = stack.record()
    return report


def plot(report: Report, path: Path) -> None:
    """Latency by percentile at normal load and of admitted requests under overload."""
    from servertune.bench.plotting import plot_distributions

    plot_distributions(
        report,
        path,
        panel_key="load",
        panel_title=lambda load: (
            f"{load} load" + (" (admitted only)" if load == "overload" else "")
        ),
        select=lambda run: run["load"] in ("normal", "overload"),
    )
