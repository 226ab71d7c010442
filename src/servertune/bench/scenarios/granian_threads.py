"""granian's WSGI thread pool under the GIL: the plan's blocking threads vs more, and granian's default.

granian runs a WSGI app on `--blocking-threads` per worker; left unset it starts backpressure / 2
of them (backpressure defaults to 1024 / workers: 256 threads per worker with 2 workers). Under
the GIL, threads past what keeps the GIL busy only queue for it, so servertune sets the plan's
threads (a request holding the GIL half its time: 2, as bench balance measured). Measured, not assumed: the same half-GIL app (the
`balance` scenario's: 5 x (sleep 10 ms + ~10 ms of Python CPU)) on granian behind the same
nginx, with the plan's threads, 4 x as many, and granian's default pool, at 2 and 8 connections
per core, reporting req/s, p99 and the peak thread count of the granian process group.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run

__all__ = ["CONFIGS", "GranianSizes", "GranianThreads"]

#: The balance scenario's request: 100 ms, half of it holding the GIL.
SERVICE_TIME_MS = 100.0
CPU_FRACTION = 0.5
WARMUP_SECONDS = 1.0
QUICK_WARMUP_SECONDS = 0.5
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


@dataclass(frozen=True)
class GranianSizes:
    """Connections per core, seconds per level, interleaved repeats."""

    per_core: tuple[int, ...]
    seconds: float
    repeats: int


def _configs(base: Any, stack: Any) -> list[_Config]:
    import sys

    from servertune.bench.harness.deployments import place
    from servertune.sizing import Forced, plan_for

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


class GranianThreads(BaseScenario[GranianSizes]):
    """granian WSGI with the plan's blocking threads, 4 x as many, and granian's default pool."""

    name = "granian-threads"
    needs = ("granian",)
    sizes = QuickFull(
        quick=GranianSizes(per_core=(8,), seconds=1.5, repeats=1),
        full=GranianSizes(per_core=(2, 8), seconds=6.0, repeats=3),
    )
    has_plot = True

    def setup(self, run: Run[GranianSizes]) -> None:
        from servertune.bench.apps import install
        from servertune.bench.scenarios.balance import calibrate_loops
        from servertune.machine import Machine
        from servertune.workload import Workload

        self.cores = Machine.read().cores
        self.env = {"SERVERTUNE_BENCH_CPU_LOOPS": str(calibrate_loops())}
        self.workload = Workload(
            cores=self.cores, service_time_ms=SERVICE_TIME_MS, cpu_fraction=CPU_FRACTION,
            app=install("balance", run.stack.dir),
        )  # fmt: skip
        self.threads: dict[str, int] = {}

    def configs(self, run: Run[GranianSizes]) -> tuple[str, ...]:
        return CONFIGS

    def levels(self, run: Run[GranianSizes], config: str) -> tuple[Level, ...]:
        return tuple(Level(n * self.cores) for n in run.size.per_core)

    def start(self, run: Run[GranianSizes], config: str) -> Any:
        from servertune.bench.harness.deployments import deploy_asgi
        from servertune.bench.harness.load import run_closed_loop

        chosen = next(c for c in _configs(self.workload, run.stack) if c.name == config)
        self.threads[config] = chosen.plan.granian_blocking_threads
        deployment = deploy_asgi(
            run.stack, f"{config}-{run.repeat}", chosen.plan, "granian",
            argv=chosen.argv, env=self.env,
        )  # fmt: skip
        if not run.options.quick:
            top = max(run.size.per_core) * self.cores
            run_closed_loop(deployment.url, connections=top, duration_s=WARMUP_SECONDS)
        else:
            # The app's first requests import and warm it: on a busy machine they alone can take
            # the whole quick measurement, leaving a row of no requests.
            run_closed_loop(deployment.url, connections=1, duration_s=QUICK_WARMUP_SECONDS)
        return deployment

    def measure(
        self, run: Run[GranianSizes], config: str, served: Any, level: Level
    ) -> dict[str, Any]:
        from servertune.bench.harness.load import run_closed_loop
        from servertune.bench.harness.stats import group_members
        from servertune.bench.harness.threads import ThreadPeak

        assert level.concurrency is not None
        # Every load starts on an idle app: not behind what the warm-up or the last level left.
        settled = served.wait_idle()
        pgid = served.app_servers[0].pgid
        with ThreadPeak(lambda: group_members(pgid), SAMPLE_S) as peak:
            result = run_closed_loop(
                served.url, connections=level.concurrency, duration_s=run.size.seconds
            )
        return {
            "config": config, "concurrency": level.concurrency, **result.metrics(),
            "peak_threads": peak.peak, "settle_s": round(settled, 2),
            "distribution": [list(p) for p in result.distribution],
        }  # fmt: skip

    def summarize(self, run: Run[GranianSizes], results: Results) -> Report:
        from servertune.bench.harness.deployments import settle_note
        from servertune.bench.harness.load_result import unanswered
        from servertune.bench.harness.versions import dist_version
        from servertune.bench.harness.wrk import find_wrk

        levels = self.levels(run, CONFIGS[0])
        runs = [results.median(name, level) for name in CONFIGS for level in levels]
        report = Report(scenario="granian-threads", runs=runs)
        report.versions = {d: dist_version(d) for d in ("servertune", "granian")}
        report.versions["load"] = "wrk" if find_wrk() else "builtin"
        top = max(level.concurrency or 0 for level in levels)

        def at(name: str) -> dict[str, Any]:
            return next(r for r in runs if r["config"] == name and r["concurrency"] == top)

        target = f"servertune req/s / the best pool's at c={top}"
        top_level = next(level for level in levels if level.concurrency == top)
        why = unanswered(*(r for name in CONFIGS for r in results.rows(name, top_level)))
        if why:  # the comparison at the top level divides by each pool's req/s and p99
            report.targets.append(Target(target, None, ">=", 1 - THROUGHPUT_NOISE))
        else:
            best = max(at(name)["rps"] for name in CONFIGS)
            for name in CONFIGS[1:]:
                report.ratios[f"{name}/servertune req/s at c={top}"] = round(
                    at(name)["rps"] / at("servertune")["rps"], 3
                )
                report.ratios[f"{name}/servertune p99 at c={top}"] = round(
                    at(name)["p99_ms"] / at("servertune")["p99_ms"], 3
                )
            report.targets.append(
                Target(target, at("servertune")["rps"] / best, ">=", 1 - THROUGHPUT_NOISE)
            )
        report.notes = [
            (
                f"{self.cores} cores; half-GIL app (5 x (10 ms sleep + ~10 ms CPU)); blocking "
                f"threads per worker: servertune {self.threads.get('servertune')}, threads-x4 "
                f"{self.threads.get('threads-x4')}, granian-default unset (backpressure / 2)"
            ),
            (
                f"wrk closed loop at {', '.join(str(lv.concurrency) for lv in levels)} "
                f"connections, {run.size.seconds:g} s each; medians of {run.repeats} "
                "interleaved run(s)"
            ),
            "peak_threads: all threads of the granian process group (workers, runtime, pool)",
            settle_note(results.all_rows()),
            *([f"c={top}: not measurable: {why}"] if why else []),
        ]
        return report

    def plot(self, report: Report, path: Path) -> None:
        """Latency by percentile per connection level."""
        from servertune.bench.harness.plotting import plot_distributions

        plot_distributions(
            report, path, panel_key="concurrency", panel_title=lambda c: f"{c} connections"
        )
