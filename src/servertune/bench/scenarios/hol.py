"""gunicorn head-of-line blocking: one 10 s /slow call must not stall /quick requests.

As a published tuning write-up found (docs/references.md): with gunicorn's gthread worker, a worker whose threads are all
busy still accepts connections and queues them, so a quick request can wait behind a slow one
for the slow call's full length. Forty closed-loop users request /quick with 0-1 s think time
while one user requests /slow (10 s), for 20 s, against four gunicorn configs behind the same
generated nginx:

* `naive`: gthread workers = cores, threads = 1 (what `(2 x cores) + 1`-style advice without
  threads amounts to on that write-up's setup);
* `2x2`: that write-up's fix, workers = 2, threads = 2;
* `servertune-shared`: `servertune gen gunicorn` for a workload with slow calls (one socket);
* `servertune`: `servertune gen gunicorn-per-worker` + `gen nginx-gunicorn` (one gunicorn per
  socket behind nginx least_conn), the layout servertune recommends.

The load comes from the built-in client (think times and per-endpoint latencies are not
something wrk reports); a /quick request still running when the run ends is waited for and
counted, so a stall is never cut off.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from servertune.bench.report import BenchOptions, Report, Target

__all__ = ["CONFIGS", "plot", "run"]

#: The workload as a user would describe this app to servertune: a quick request of about
#: 2 ms (half of it Python CPU), peaks near 100 req/s (40 users thinking 0.5 s on average), and
#: about 1 request in 500 waiting on a 10 s external call (the bench sends ~1 in 800).
SERVICE_TIME_MS = 2.0
CPU_FRACTION = 0.5
SLOW_CALL_RATIO = 0.002
PEAK_RPS = 100.0

#: The write-up's scenario (issue #3): 40 users on /quick thinking 0-1 s, 1 on /slow, 20 s.
QUICK_USERS = 40
SLOW_USERS = 1
THINK_S = (0.0, 1.0)
FULL_SECONDS = 20.0
FULL_SLOW_S = 10.0
#: Quick (smoke) runs keep the shape, shortened.
QUICK_SECONDS = 1.0
QUICK_SLOW_S = 0.3
#: A /quick request slower than this is a head-of-line stall (issue #3 counts them).
STALL_MS = 1000.0
#: Issue #3 target: servertune's /quick max latency.
TARGET_QUICK_MAX_MS = 50.0

CONFIGS = ("naive", "2x2", "servertune-shared", "servertune")


@dataclass(frozen=True)
class _Config:
    name: str
    plan: Any  # servertune.sizing.Plan, imported lazily
    layout: Literal["per-worker", "shared"]


def _configs(plan: Any) -> list[_Config]:
    """The naive and 2x2 configs change only processes/threads of servertune's plan."""
    naive = plan.model_copy(update={"threads": 1})
    two_by_two = plan.model_copy(update={"processes": 2, "threads": 2})
    return [
        _Config("naive", naive, "shared"),
        _Config("2x2", two_by_two, "shared"),
        _Config("servertune-shared", plan, "shared"),
        _Config("servertune", plan, "per-worker"),
    ]


def run(options: BenchOptions) -> Report:
    """Run the 40 + 1 users against each config; count /quick stalls behind /slow."""
    from servertune.bench.apps import install
    from servertune.bench.load import Users, run_builtin
    from servertune.bench.progress import Progress
    from servertune.bench.servers import Stack, deploy_gunicorn, place, plan_for
    from servertune.bench.stats import CpuWatch, median_run
    from servertune.bench.versions import tool_versions
    from servertune.workload import Workload

    cores = Workload().resolved_cores
    seconds = QUICK_SECONDS if options.quick else FULL_SECONDS
    slow_s = QUICK_SLOW_S if options.quick else FULL_SLOW_S
    repeats = 1 if options.quick else options.repeat
    env = {"SERVERTUNE_BENCH_SLOW_S": f"{slow_s:g}"}
    groups = [Users("/quick", QUICK_USERS, THINK_S), Users("/slow", SLOW_USERS, THINK_S)]
    progress = Progress(repeats * len(CONFIGS), enabled=options.progress)

    raw: dict[str, list[dict[str, Any]]] = {}
    stack = Stack("hol")
    try:
        with stack:
            app = install("hol", stack.dir)
            base = Workload(
                cores=cores,
                service_time_ms=SERVICE_TIME_MS,
                cpu_fraction=CPU_FRACTION,
                slow_call_ratio=SLOW_CALL_RATIO,
                slow_call_ms=FULL_SLOW_S * 1000,
                peak_rps=PEAK_RPS,
                app=app,
            )
            for repeat in range(repeats):
                configs = _configs(plan_for(place(base, stack, max(cores, 2))))
                for config in configs:
                    progress.show(f"{config.name}, run {repeat + 1}: {seconds:g} s of load")
                    deployment = deploy_gunicorn(
                        stack, f"{config.name}-{repeat}", config.plan,
                        layout=config.layout, env=env, python=options.python,
                    )  # fmt: skip
                    try:
                        with CpuWatch(deployment.cpu_seconds) as watch:
                            results = run_builtin(
                                deployment.url, groups, duration_s=seconds, grace_s=slow_s + 10
                            )
                    finally:
                        deployment.stop(stack)
                    quick, slow = results["/quick"], results["/slow"]
                    row = {
                        "config": config.name,
                        "concurrency": QUICK_USERS + SLOW_USERS,
                        "endpoint": "/quick",
                        **quick.metrics(),
                        "over_1s": quick.count_over(STALL_MS),
                        "slow_requests": slow.requests,
                        "slow_max_ms": round(slow.max_ms, 1),
                        "workers": config.plan.processes,
                        "threads": config.plan.threads,
                        "layout": config.layout,
                        "cpu_s": round(watch.server_seconds, 3),
                        "other_cpu_cores": round(watch.other_cores, 2),
                        "distribution": [list(point) for point in quick.distribution],
                    }
                    raw.setdefault(config.name, []).append(row)
                    progress.advance(
                        f"{config.name}: /quick max {quick.max_ms:.0f} ms, "
                        f"{row['over_1s']} over 1 s"
                    )
                plan = configs[-1].plan
    finally:
        progress.close()

    runs = [median_run(raw[name]) for name in CONFIGS]
    report = Report(scenario="hol", runs=runs, ceiling_rps=None)
    report.versions = tool_versions(["gunicorn", "nginx"])
    by_name = {row["config"]: row for row in runs}
    for name in ("servertune", "servertune-shared"):
        report.targets.append(
            Target(f"{name}: /quick requests over 1 s", by_name[name]["over_1s"], "==", 0)
        )
        report.targets.append(
            Target(f"{name}: /quick max ms", by_name[name]["max_ms"], "<", TARGET_QUICK_MAX_MS)
        )
    naive = by_name["naive"]
    for name in ("2x2", "servertune-shared", "servertune"):
        report.ratios[f"naive/{name} /quick max"] = round(
            naive["max_ms"] / max(by_name[name]["max_ms"], 1e-3), 2
        )
    report.notes = [
        (
            f"{cores} cores; servertune's plan: {plan.processes} workers x {plan.threads} threads "
            f"({plan.cpu_threads} for the GIL + {plan.slow_call_threads} for slow calls)"
        ),
        (
            f"{QUICK_USERS} users on /quick and {SLOW_USERS} on /slow ({slow_s:g} s), think "
            f"{THINK_S[0]:g}-{THINK_S[1]:g} s, {seconds:g} s; built-in client; medians of "
            f"{repeats} run(s)"
        ),
        "every config runs behind the nginx `servertune gen` renders for its layout",
    ]
    report.servers = stack.record()
    return report


def plot(report: Report, path: Path) -> None:
    """/quick latency distribution (percentile vs ms) per config."""
    from servertune.bench.plotting import plot_distributions

    plot_distributions(
        report, path, panel_key="endpoint", panel_title=lambda value: f"{value} latency"
    )
