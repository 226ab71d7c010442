"""gunicorn head-of-line blocking: one 10 s /slow call must not stall /quick requests.

With gunicorn's gthread worker, a worker whose threads are all busy still accepts connections
and queues them, so a quick request can wait behind a slow one for the slow call's full length
(the gunicorn article in docs/references.md hit it with a 30 s call). Forty closed-loop users
request /quick with 0-1 s think time while one user requests /slow (10 s), for 20 s, against
five gunicorn configs behind the same generated nginx:

* `naive`: gthread workers = cores, threads = 1 (what `(2 x cores) + 1`-style advice without
  threads amounts to on the article's setup);
* `naive-sync`: the same count, one thread each, with the worker class servertune's plan gives
  one thread (`sync`: it accepts only when idle, so the shared socket is one queue);
* `2x2`: the article's fix, workers = 2, threads = 2;
* `servertune-shared`: `servertune gen gunicorn` for a workload with slow calls (one socket);
* `servertune`: `servertune gen gunicorn-per-worker` + `gen nginx-gunicorn` (one gunicorn per
  socket behind nginx least_conn), the layout servertune recommends.

Baselines are servertune's plan with workers/threads forced (reasons say "forced by the
benchmark"). The load comes from the built-in client (think times and per-endpoint latencies
are not something wrk reports); a /quick request still running when the run ends is waited for
and counted, so a stall is never cut off.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.targets.layout import Layout

__all__ = ["CONFIGS", "HeadOfLine", "HolSizes"]

#: The workload as a user would describe this app to servertune: a quick request of about
#: 2 ms (half of it Python CPU), peaks near 100 req/s (40 users thinking 0.5 s on average), and
#: about 1 request in 500 waiting on a 10 s external call (the bench sends ~1 in 800).
SERVICE_TIME_MS = 2.0
CPU_FRACTION = 0.5
SLOW_CALL_RATIO = 0.002
PEAK_RPS = 100.0
#: The slow call the workload declares (full runs make /slow exactly this long).
SLOW_CALL_S = 10.0

#: The scenario: 40 users on /quick thinking 0-1 s, 1 on /slow.
QUICK_USERS = 40
SLOW_USERS = 1
THINK_S = (0.0, 1.0)
#: A /quick request slower than this is a head-of-line stall (the scenario counts them).
STALL_MS = 1000.0
#: Target: servertune's /quick max latency.
TARGET_QUICK_MAX_MS = 50.0

CONFIGS = ("naive", "naive-sync", "2x2", "servertune-shared", "servertune")
#: How each baseline differs from servertune's plan: (processes, threads) forced, None = kept.
_FORCED: dict[str, tuple[int | None, int | None, str]] = {
    "naive": (None, 1, "one thread per gthread worker, the naive setup"),
    "naive-sync": (None, 1, "one thread per worker, the worker class the plan gives it"),
    "2x2": (2, 2, "the article's fix, 2 workers x 2 threads"),
}


@dataclass(frozen=True)
class HolSizes:
    """Seconds of load, how long /slow waits, repeats."""

    seconds: float
    slow_s: float
    repeats: int


class HeadOfLine(BaseScenario[HolSizes]):
    """Run the 40 + 1 users against each config; count /quick stalls behind /slow."""

    name = "hol"
    needs = ("gunicorn",)
    # Quick (smoke) runs keep the shape, shortened.
    sizes = QuickFull(
        quick=HolSizes(seconds=1.0, slow_s=0.3, repeats=1),
        full=HolSizes(seconds=20.0, slow_s=SLOW_CALL_S, repeats=1),
    )
    has_plot = True

    def setup(self, run: Run[HolSizes]) -> None:
        """Install the app and describe its workload."""
        from servertune.bench.apps import install
        from servertune.machine import Machine
        from servertune.workload import Workload

        self.cores = Machine.read().cores
        self.env = {"SERVERTUNE_BENCH_SLOW_S": f"{run.size.slow_s:g}"}
        #: The plan each config last served with (workers and threads go into its rows).
        self.plans: dict[str, Any] = {}
        self.workload = Workload(
            cores=self.cores,
            service_time_ms=SERVICE_TIME_MS,
            cpu_fraction=CPU_FRACTION,
            slow_call_ratio=SLOW_CALL_RATIO,
            slow_call_ms=SLOW_CALL_S * 1000,
            peak_rps=PEAK_RPS,
            app=install("hol", run.stack.dir),
        )

    def configs(self, run: Run[HolSizes]) -> tuple[str, ...]:
        """The naive and article configs, then servertune's two layouts."""
        return CONFIGS

    def config_plan(self, workload: Any, config: str) -> tuple[Any, Layout]:
        """servertune's plan, or one with workers/threads forced; and its socket layout."""
        from servertune.sizing import Forced, plan_for

        if config not in CONFIGS:
            raise KeyError(f"hol has no config {config!r}")
        forced: dict[str, Forced] = {}
        if config in _FORCED:
            processes, threads, why = _FORCED[config]
            reason = f"forced by the benchmark: {why}"
            if processes is not None:
                forced["processes"] = Forced(processes, reason)
            if threads is not None:
                forced["threads"] = Forced(threads, reason)
        if config == "naive":
            # The copied setup keeps gthread, which the plan would not give one thread.
            forced["gunicorn_worker_class"] = Forced("gthread", "forced by the benchmark: gthread")
        layout: Layout = "per-worker" if config == "servertune" else "shared"
        return plan_for(workload, forced=forced), layout

    def start(self, run: Run[HolSizes], config: str) -> Any:
        """gunicorn (one, or one per socket) and nginx, from the config's plan."""
        from servertune.bench.harness.deployments import deploy_gunicorn, place

        plan, layout = self.config_plan(place(self.workload, run.stack, max(self.cores, 2)), config)
        self.plans[config] = plan
        return deploy_gunicorn(
            run.stack, f"{config}-{run.repeat}", plan,
            layout=layout, env=self.env, python=run.options.python,
        )  # fmt: skip

    def measure(self, run: Run[HolSizes], config: str, served: Any, level: Level) -> dict[str, Any]:
        """The 40 + 1 users for the run's seconds; /quick's latencies and stalls."""
        from servertune.bench.harness.client import Users, run_builtin
        from servertune.bench.harness.stats import CpuWatch

        groups = [Users("/quick", QUICK_USERS, THINK_S), Users("/slow", SLOW_USERS, THINK_S)]
        # The load starts on an idle app: gunicorn's workers have imported it and sit waiting.
        settled = served.wait_idle()
        with CpuWatch(served.cpu_seconds) as watch:
            results = run_builtin(
                served.url, groups, duration_s=run.size.seconds, grace_s=run.size.slow_s + 10
            )
        quick, slow = results["/quick"], results["/slow"]
        plan = self.plans[config]
        return {
            "config": config,
            "concurrency": QUICK_USERS + SLOW_USERS,
            "endpoint": "/quick",
            **quick.metrics(),
            "over_1s": quick.count_over(STALL_MS),
            "slow_requests": slow.requests,
            "slow_max_ms": round(slow.max_ms, 1),
            "workers": plan.processes,
            "threads": plan.threads,
            "worker_class": plan.gunicorn_worker_class,
            "layout": "per-worker" if config == "servertune" else "shared",
            "cpu_s": round(watch.server_seconds, 3),
            "other_cpu_cores": round(watch.other_cores, 2),
            "settle_s": round(settled, 2),
            "distribution": [list(point) for point in quick.distribution],
        }

    def summarize(self, run: Run[HolSizes], results: Results) -> Report:
        """Medians per config, the stall targets, and naive's max over each other's."""
        from servertune.bench.harness.deployments import settle_note
        from servertune.bench.harness.versions import tool_versions

        runs = [results.median(name) for name in CONFIGS]
        report = Report(scenario=self.name, runs=runs, ceiling_rps=None)
        report.versions = tool_versions(["gunicorn", "nginx"])
        by_name = {row["config"]: row for row in runs}
        for name in ("servertune", "servertune-shared"):
            report.targets.append(
                Target(f"{name}: /quick requests over 1 s", by_name[name]["over_1s"], "==", 0)
            )
            report.targets.append(
                Target(f"{name}: /quick max ms", by_name[name]["max_ms"], "<", TARGET_QUICK_MAX_MS)
            )
        # The plan's worker class for one thread must not stall behind /slow either (its max is
        # the quick requests queued for the one free worker: no target).
        sync = by_name["naive-sync"]["over_1s"]
        report.targets.append(Target("naive-sync: /quick requests over 1 s", sync, "==", 0))
        naive = by_name["naive"]
        for name in ("naive-sync", "2x2", "servertune-shared", "servertune"):
            report.ratios[f"naive/{name} /quick max"] = round(
                naive["max_ms"] / max(by_name[name]["max_ms"], 1e-3), 2
            )
        plan = self.plans["servertune"]
        report.notes = [
            (
                f"{self.cores} cores; servertune's plan: {plan.processes} workers x "
                f"{plan.threads} threads ({plan.cpu_threads} for the GIL + "
                f"{plan.slow_call_threads} for slow calls)"
            ),
            (
                f"{QUICK_USERS} users on /quick and {SLOW_USERS} on /slow ({run.size.slow_s:g} s), "
                f"think {THINK_S[0]:g}-{THINK_S[1]:g} s, {run.size.seconds:g} s; built-in client; "
                f"medians of {run.repeats} interleaved run(s)"
            ),
            "every config runs behind the nginx `servertune gen` renders for its layout",
            settle_note(results.all_rows()),
        ]
        return report

    def plot(self, report: Report, path: Path) -> None:
        """/quick latency distribution (percentile vs ms) per config."""
        from servertune.bench.harness.plotting import plot_distributions

        plot_distributions(
            report, path, panel_key="endpoint", panel_title=lambda value: f"{value} latency"
        )
