"""uWSGI layouts for a half-GIL app: per-worker sockets + least_conn vs a shared socket (+ thunder-lock).

A request is 5 x (sleep 10 ms + about 10 ms of Python CPU), so it holds the GIL half the time
and 2 threads would saturate a process's core if their CPU and sleeps interleaved perfectly
(the uWSGI/nginx article in docs/references.md measured this shape; they do not, and the
finite-source queue gives 2 cores 6 slots, not 4). Four baselines with the same number of request slots
(processes x threads = servertune's per-core plan) and servertune's plans serve it behind the
same generated nginx:

* `threads-only`: one process with every slot as a thread (GIL-bound to one core);
* `processes-only`: one single-threaded process per slot, all on one shared socket;
* `shared-socket`: servertune's processes x threads, but every worker accepts from one socket;
* `thunder-lock`: the same shared socket with uWSGI's `thunder-lock = true` (workers take turns
  in accept()), the fix usually tried for a shared socket;
* `per-core`: servertune's plan when it does not know the app's memory: one process per core,
  threads for the rest, one socket per worker behind nginx `least_conn` + `zone`;
* `memory-tight`: servertune's plan under a memory limit that holds one process more than the
  cores: it falls back to threads for what the processes cannot take;
* `no-headroom`: servertune's memory-aware plan with the request slots forced down to the
  count if CPU and waits interleaved perfectly (`cores x ceil(0.95 / cpu_fraction)`, single-
  threaded processes on per-worker sockets): the slot count the finite-source queue replaced;
* `servertune-per-worker`: servertune's plan with one socket per worker behind least_conn (what
  servertune wrote for single-threaded processes before it gave them one socket);
* `servertune-no-lock`: servertune's plan on its one socket without `thunder-lock`;
* `servertune`: exactly `servertune gen uwsgi` + `servertune gen nginx` for this machine's memory
  (its cgroup limit, else its RAM) and the app's memory per worker as `servertune measure`
  reports it: the concurrency as single-threaded processes on one socket (`socket_layout`),
  taking turns in accept() from `THUNDER_LOCK_MIN_PROCESSES` processes (`thunder_lock`).

Baselines are plans derived by the same rules with the changed number forced (its reason says
"forced by the benchmark: ..."), rendered by the same targets (`render_uwsgi(plan, "shared")`).
Each runs at concurrency = cores and 2 x cores (full runs add 4 x cores) with wrk (or the
built-in client). The CPU ceiling is measured, not assumed: cores / the app's CPU-seconds per
request, read from /proc for the uWSGI process group during the same run, so a throughput's
fraction of it is the share of the cores that went into serving requests (robust to a shared
VM whose per-core speed drifts; docs/benchmarks.md explains why not the one-connection run).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.harness.load_result import LoadResult, unanswered
from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.bench.harness.stats import other_work_advice
from servertune.targets.layout import Layout

__all__ = ["CONFIGS", "Balance", "BalanceSizes"]

#: The request's shape: 100 ms of wall time, half of it holding the GIL.
SERVICE_TIME_MS = 100.0
CPU_FRACTION = 0.5
#: CPU per round the app is calibrated to (the article used fib(25), about 10 ms).
CPU_ROUND_S = 0.010
#: Targets for servertune's plan at 2 x cores connections.
TARGET_CEILING_FRACTION = 0.90
TARGET_P99_OVER_SINGLE = 1.5
#: Targets at every level against the other layouts: servertune's req/s at least this share of
#: the highest other layout's, and its p99 at most this multiple of the lowest other p99
#: (memory-aware sizing). At concurrency = cores the memory-aware layout must win outright on both; above
#: it, where every layout spends the same CPU per request, it must not lose by more than the
#: repeats' spread.
TARGET_RPS_AT_CORES = 1.0
TARGET_P99_AT_CORES = 0.95
TARGET_RPS_VS_BEST = 0.97
TARGET_P99_VS_BEST = 1.15

#: Differences smaller than these count as noise when the report says where the effect shows
#: (run-to-run spread of medians on the shared 2-core machine, docs/benchmarks.md).
RPS_MARGIN = 0.05
P99_MARGIN = 0.10

#: Other work above this many cores during a measurement gets a note in the report.
NOISY_OTHER_CORES = 0.25
#: Seconds of warm-up load after each start in full runs (the app imports lazily).
WARMUP_SECONDS = 1.0

#: Table order; servertune's own layout is last.
CONFIGS = (
    "threads-only",
    "processes-only",
    "shared-socket",
    "thunder-lock",
    "per-core",
    "memory-tight",
    "no-headroom",
    "servertune-per-worker",
    "servertune-no-lock",
    "servertune",
)
#: Requests `servertune measure` runs to find the app's memory per worker (full runs; quick runs
#: take 3): its warm size is what the plan needs, read after the warm-up.
MEASURE_REQUESTS = 20
#: The layouts servertune's per-worker sockets are compared with in ratios and verdicts.
SHARED = ("shared-socket", "thunder-lock")
#: servertune's own plan with one of its two socket choices undone: each is reported as a ratio
#: against servertune's row (what that choice bought in this run), not counted among the other
#: layouts the targets compare with (they are the same plan).
ABLATIONS = ("servertune-per-worker", "servertune-no-lock")
#: servertune's 1-connection run: the single-request latency p99s are compared with.
SINGLE = "single-request"


@dataclass(frozen=True)
class BalanceSizes:
    """Seconds of load per measurement, load levels as multiples of the cores, repeats."""

    seconds: float
    levels: tuple[int, ...]
    repeats: int


def calibrate_loops(target_s: float = CPU_ROUND_S, probe: int = 200_000) -> int:
    """Loop count of `burn` that takes `target_s` of CPU here (best of 7: the unloaded speed)."""
    from servertune.bench.apps.balance import burn

    best = float("inf")
    for _ in range(7):
        start = time.thread_time()
        burn(probe)
        best = min(best, time.thread_time() - start)
    return max(1000, round(probe * target_s / max(best, 1e-6)))


class Balance(BaseScenario[BalanceSizes]):
    """The layouts at cores, 2 x cores (and 4 x cores) connections; servertune's targets."""

    name = "balance"
    needs = ("uwsgi",)
    sizes = QuickFull(
        quick=BalanceSizes(seconds=1.0, levels=(2,), repeats=1),
        full=BalanceSizes(seconds=6.0, levels=(1, 2, 4), repeats=1),
    )
    has_plot = True

    def setup(self, run: Run[BalanceSizes]) -> None:
        """Calibrate the CPU rounds, install the app, and derive servertune's plan once."""
        from servertune.bench.apps import install
        from servertune.bench.harness.wrk import find_wrk
        from servertune.machine import Machine
        from servertune.sizing import plan_for
        from servertune.workload import Workload

        self.cores = Machine.read().cores
        self.level_counts = [m * self.cores for m in run.size.levels]
        self.tool = "wrk" if find_wrk() else "builtin"
        self.loops = calibrate_loops()
        self.env = {"SERVERTUNE_BENCH_CPU_LOOPS": str(self.loops)}
        app = install("balance", run.stack.dir)
        base = Workload(
            cores=self.cores, service_time_ms=SERVICE_TIME_MS, cpu_fraction=CPU_FRACTION, app=app
        )
        machine = Machine.read()
        self.budget_mb = machine.memory_limit_mb or machine.memory_total_mb
        self.budget_source = "cgroup limit" if machine.memory_limit_mb else "RAM"
        self.worker_mb = self.measure_memory(run, app)
        # The plan for this machine's memory: given cores drop the machine's own memory facts,
        # so its budget is given as the limit, as a user with these numbers would.
        self.workload = base.model_copy(
            update={"memory_per_worker_mb": self.worker_mb, "memory_limit_mb": self.budget_mb}
        )
        self.plan = plan_for(self.workload)
        self.layouts = {name: self.config_plan(self.workload, name)[0] for name in CONFIGS}
        # Enough consecutive ports for the layout with the most processes.
        self.ports = max(plan.processes for plan in self.layouts.values())

    def measure_memory(self, run: Run[BalanceSizes], app: str) -> int:
        """The app's warm memory per worker, as `servertune measure --out` writes it."""
        import sys
        import tomllib

        out = run.stack.dir / "measured.toml"
        requests = 3 if run.options.quick else MEASURE_REQUESTS
        done = run.stack.run(
            "measure",
            [sys.executable, "-m", "servertune", "measure", app, "--app-dir", str(run.stack.dir),
             "--requests", str(requests), "--warmup", "1", "--out", str(out)],
            timeout_s=120, env=self.env,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"servertune measure failed: {done.stderr.decode(errors='replace')}")
        values = tomllib.loads(out.read_text())["workload"]
        return int(values["memory_per_worker_mb"])

    def configs(self, run: Run[BalanceSizes]) -> tuple[str, ...]:
        """Every layout, servertune's last."""
        return CONFIGS

    def levels(self, run: Run[BalanceSizes], config: str) -> list[Level]:
        """servertune also runs at one connection: the single-request latency."""
        levels = [Level(n) for n in self.level_counts]
        return [Level(1, SINGLE), *levels] if config == "servertune" else levels

    def config_plan(self, workload: Any, config: str) -> tuple[Any, Layout, bool]:
        """The plan a config serves with: servertune's, or one with numbers forced, and how it
        is rendered. The baselines keep the per-core plan's processes x threads request slots
        (servertune's for a workload that gives no memory per worker)."""
        from servertune.sizing import MEMORY_HEADROOM_RATIO, Forced, plan_for

        bare = workload.model_copy(update={"memory_per_worker_mb": None, "memory_limit_mb": None})
        per_core = plan_for(bare)
        if config == "servertune":
            ours = plan_for(workload)
            return ours, ours.socket_layout, ours.thunder_lock
        if config == "servertune-per-worker":
            return plan_for(workload), "per-worker", False
        if config == "servertune-no-lock":
            return plan_for(workload), "shared", False
        if config == "no-headroom":
            return plan_for(workload, forced=_no_headroom(workload)), "per-worker", False
        if config == "per-core":
            return per_core, "per-worker", False
        if config == "memory-tight":
            worker = workload.memory_per_worker_mb or 1
            tight = math.ceil((workload.cores + 1) * worker / MEMORY_HEADROOM_RATIO)
            return (
                plan_for(workload.model_copy(update={"memory_limit_mb": tight})),
                "per-worker",
                False,
            )
        ours = per_core
        slots = ours.processes * ours.threads
        shared = Forced((ours.shared_socket,), "forced by the benchmark: shared socket")
        forced: dict[str, Forced] = {
            "threads-only": {
                "processes": Forced(1, "forced by the benchmark: one process, slots as threads"),
                "threads": Forced(slots, "forced by the benchmark: every slot as a thread"),
            },
            "processes-only": {
                "processes": Forced(slots, "forced by the benchmark: a process per slot"),
                "threads": Forced(1, "forced by the benchmark: single-threaded processes"),
                "sockets": shared,
            },
            "shared-socket": {"sockets": shared},
            "thunder-lock": {"sockets": shared},
        }.get(config, {})
        layout: Layout = "shared" if config in ("processes-only", *SHARED) else "per-worker"
        plan = plan_for(bare, forced=forced)
        return plan, layout, config == "thunder-lock"

    def start(self, run: Run[BalanceSizes], config: str) -> Any:
        """Deploy the layout on fresh ports (and warm it up on full runs)."""
        from servertune.bench.harness.deployments import deploy_uwsgi, place
        from servertune.bench.harness.load import run_closed_loop

        plan, layout, thunder_lock = self.config_plan(
            place(self.workload, run.stack, self.ports), config
        )
        deployment = deploy_uwsgi(
            run.stack, f"{config}-{run.repeat}", plan,
            layout=layout, thunder_lock=thunder_lock, env=self.env,
        )  # fmt: skip
        if not run.options.quick:
            run_closed_loop(
                deployment.url, connections=max(self.level_counts), duration_s=WARMUP_SECONDS
            )
        return deployment

    def measure(
        self, run: Run[BalanceSizes], config: str, served: Any, level: Level
    ) -> dict[str, Any]:
        """One load run: the issue's metrics, CPU used, and this run's own CPU ceiling."""
        from servertune.bench.harness.load import run_closed_loop
        from servertune.bench.harness.stats import CpuWatch

        assert level.concurrency is not None
        # Every load starts on an idle app: not behind what the warm-up or the last level left.
        settled = served.wait_idle()
        app_before = served.app_cpu_seconds()
        with CpuWatch(served.cpu_seconds) as watch:
            result = run_closed_loop(
                served.url, connections=level.concurrency, duration_s=run.size.seconds
            )
        app_cpu = served.app_cpu_seconds() - app_before
        row: dict[str, Any] = {"config": config, "concurrency": level.concurrency}
        if level.role:
            row["role"] = level.role
        return row | {
            **result.metrics(),
            "cpu_s": round(watch.server_seconds, 3),
            **_ceiling(self.cores, app_cpu, result),
            "other_cpu_cores": round(watch.other_cores, 2),
            "settle_s": round(settled, 2),
            "distribution": [list(point) for point in result.distribution],
        }

    def summarize(self, run: Run[BalanceSizes], results: Results) -> Report:
        """Medians, ratios against both shared-socket layouts, targets and verdicts."""
        from servertune.bench.harness.stats import median
        from servertune.bench.harness.versions import tool_versions

        cores, levels, plan = self.cores, self.level_counts, self.plan
        single = results.median("servertune", Level(1, SINGLE))
        no_single = unanswered(*results.rows("servertune", Level(1, SINGLE)))
        # A level where one measured run answered nothing compares nothing: its ratios,
        # targets and verdict say why instead.
        lost = {
            level: unanswered(*(r for name in CONFIGS for r in results.rows(name, Level(level))))
            for level in levels
        }
        runs = [single, *_median_rows(results, levels, single, no_single, lost)]
        top = max(level for level in levels if level <= 2 * cores)
        ceiling = (
            None
            if lost[top]
            else median(s["ceiling_rps"] for s in results.rows("servertune", Level(top)))
        )
        c1_ceiling = None if no_single else cores / (single["app_cpu_ms_per_req"] / 1000)

        rounded = None if ceiling is None else round(ceiling, 2)
        report = Report(scenario=self.name, runs=runs, ceiling_rps=rounded)
        report.versions = tool_versions(["uwsgi", "nginx", self.tool])
        ours = _row(runs, "servertune", top)
        report.targets = [
            Target(f"servertune req/s / CPU ceiling at {top} connections",
                   None if lost[top] else ours["ceiling_fraction"], ">=",
                   TARGET_CEILING_FRACTION),
            Target(f"servertune p99 / single-request latency at {top} connections",
                   ours["p99_over_single"], "<=", TARGET_P99_OVER_SINGLE),
        ]  # fmt: skip
        report.targets += _against_the_best(runs, levels, cores, lost)
        report.ratios = _ratios(runs, [level for level in levels if not lost[level]])
        report.notes = [
            (
                f"{cores} cores. CPU ceiling of a run = {cores} cores / the app's CPU-seconds per "
                f"request measured from /proc in that same run; servertune at {top} connections: "
                + (
                    f"not measurable: {lost[top]}"
                    if ceiling is None
                    else f"{ceiling:.1f} req/s (the plan's model: {plan.ceiling_rps:.1f})"
                )
            ),
            *(
                [_single_ceiling_note(c1_ceiling, ceiling, single["app_cpu_ms_per_req"])]
                if c1_ceiling is not None and ceiling is not None
                else []
            ),
            (
                "single-request latency (p50 at 1 connection): "
                + (f"not measurable: {no_single}" if no_single else f"{single['p50_ms']:.1f} ms")
            ),
            (
                f"load by {self.tool}; {run.size.seconds:g} s per measurement; medians of "
                f"{run.repeats} interleaved run(s); CPU round calibrated to {self.loops} loops "
                f"(~{CPU_ROUND_S * 1000:g} ms)"
            ),
            "layouts (processes x threads): "
            + ", ".join(f"{name} {p.processes} x {p.threads}" for name, p in self.layouts.items()),
            (
                f"servertune's plan: {self.worker_mb} MiB a worker (servertune measure, warm RSS) "
                f"in {self.budget_mb} MiB ({self.budget_source}): {plan.reasons['processes']}"
            ),
            (
                f"memory-tight: memory_limit_mb {self.layouts['memory-tight'].workload.memory_limit_mb}"
                f": {self.layouts['memory-tight'].reasons['processes']}"
            ),
            *(note for other in SHARED for note in _where_it_shows(runs, levels, other, lost)),
        ]
        busiest = max(float(s["other_cpu_cores"]) for s in results.all_rows())
        if busiest > NOISY_OTHER_CORES:
            report.notes.append(
                f"other work on this machine used up to {busiest:.2f} cores during a measurement "
                f"(other_cpu_cores in each run): those numbers are noisy{other_work_advice()}"
            )
        return report

    def plot(self, report: Report, path: Path) -> None:
        """Latency distributions (percentile vs ms), one panel per load level."""
        from servertune.bench.harness.plotting import plot_distributions

        plot_distributions(
            report,
            path,
            panel_key="concurrency",
            panel_title=lambda value: f"{value} connections",
            select=lambda run: "role" not in run,
        )


def _no_headroom(workload: Any) -> dict[str, Any]:
    """The slots if CPU and waits interleaved perfectly, each a single-threaded process."""
    from servertune.sizing import GIL_SATURATION, Forced
    from servertune.sizing.queueing import core_utilisation

    cores, fraction = workload.cores, workload.cpu_fraction
    floor = cores * max(1, math.ceil(GIL_SATURATION / fraction - 1e-9))
    why = (
        f"forced by the benchmark: {floor} slots, cores x ceil({GIL_SATURATION:g} / "
        "cpu_fraction), the count if CPU and waits interleaved perfectly (the finite-source "
        f"queue gives them {core_utilisation(floor, cores, fraction):.1%} of the cores)"
    )
    return {
        "processes": Forced(floor, why),
        "threads": Forced(1, "forced by the benchmark: single-threaded processes"),
    }


def _median_rows(
    results: Results,
    levels: list[int],
    single: dict[str, Any],
    no_single: str | None,
    lost: Mapping[int, str | None],
) -> list[dict[str, Any]]:
    """Every layout's median row at every level: its p99 over the single-request p50 (None
    where either run answered nothing) and the spread of the repeats behind it."""
    rows = []
    for name in CONFIGS:
        for level in levels:
            row = results.median(name, Level(level))
            row["p99_over_single"] = (
                None if no_single or lost[level] else round(row["p99_ms"] / single["p50_ms"], 3)
            )
            # The spread of the interleaved repeats behind each median: lowest-highest.
            repeats = results.rows(name, Level(level))
            for key in ("rps", "p99_ms"):
                values = [float(r[key]) for r in repeats]
                row[f"{key}_spread"] = f"{min(values):g}-{max(values):g}"
            rows.append(row)
    return rows


def _ratios(runs: list[dict[str, Any]], levels: list[int]) -> dict[str, float]:
    """servertune against both shared-socket layouts and its ablations, at `levels` (those
    where every run answered)."""
    ratios = {}
    for other in (*SHARED, *ABLATIONS):
        for level in levels:
            theirs, mine = _row(runs, other, level), _row(runs, "servertune", level)
            ratios[f"servertune/{other} req/s at c={level}"] = round(mine["rps"] / theirs["rps"], 3)
            ratios[f"{other}/servertune p99 at c={level}"] = round(
                theirs["p99_ms"] / mine["p99_ms"], 3
            )
    return ratios


def _row(runs: list[dict[str, Any]], config: str, level: int) -> dict[str, Any]:
    for row in runs:
        if row["config"] == config and row["concurrency"] == level and "role" not in row:
            return row
    raise KeyError((config, level))


def _against_the_best(
    runs: list[dict[str, Any]],
    levels: list[int],
    cores: int | None = None,
    lost: Mapping[int, str | None] | None = None,
) -> list[Target]:
    """At each level: servertune's req/s over the highest other layout's, and its p99 over the
    lowest other p99 (each may come from a different layout); stricter at concurrency = cores.
    A level in `lost` (a run that answered nothing) gets its targets, not measured."""
    targets = []
    for level in levels:
        at_cores = level == cores
        want_rps = TARGET_RPS_AT_CORES if at_cores else TARGET_RPS_VS_BEST
        want_p99 = TARGET_P99_AT_CORES if at_cores else TARGET_P99_VS_BEST
        if lost and lost.get(level):
            targets += [
                Target(f"servertune req/s / the highest other layout's at c={level}", None,
                       ">=", want_rps),
                Target(f"servertune p99 / the lowest other layout's at c={level}", None,
                       "<=", want_p99),
            ]  # fmt: skip
            continue
        mine = _row(runs, "servertune", level)
        others = [
            _row(runs, name, level)
            for name in CONFIGS
            if name != "servertune" and name not in ABLATIONS
        ]
        best_rps = max(others, key=lambda row: row["rps"])
        best_p99 = min(others, key=lambda row: row["p99_ms"])
        targets += [
            Target(f"servertune req/s / {best_rps['config']}'s (the highest other) at c={level}",
                   round(mine["rps"] / best_rps["rps"], 3), ">=", want_rps),
            Target(f"servertune p99 / {best_p99['config']}'s (the lowest other) at c={level}",
                   round(mine["p99_ms"] / best_p99["p99_ms"], 3), "<=", want_p99),
        ]  # fmt: skip
    return targets


def _where_it_shows(
    runs: list[dict[str, Any]],
    levels: list[int],
    other: str = "shared-socket",
    lost: Mapping[int, str | None] | None = None,
) -> list[str]:
    """Say, from the numbers, at which load levels the `other` layout costs something (a level
    in `lost`, where a run answered nothing: not measurable, and why)."""
    notes = []
    for level in levels:
        if lost and (why := lost.get(level)):
            notes.append(f"c={level}: not measurable against {other}: {why}")
            continue
        theirs, mine = _row(runs, other, level), _row(runs, "servertune", level)
        rps_gain = mine["rps"] / theirs["rps"] - 1
        p99_gain = theirs["p99_ms"] / mine["p99_ms"] - 1
        # A penalty must show in one measure without the other going the opposite way.
        better = rps_gain > RPS_MARGIN or p99_gain > P99_MARGIN
        worse = rps_gain < -RPS_MARGIN or p99_gain < -P99_MARGIN
        if better and worse:
            verdict = "mixed: one measure favours each layout"
        elif better:
            verdict = f"the {other} penalty shows"
        elif worse:
            verdict = f"{other} does better here"
        else:
            verdict = "no clear difference (within noise margins)"
        notes.append(
            f"c={level}: {verdict} (servertune {mine['rps']:.1f} vs {other} "
            f"{theirs['rps']:.1f} req/s, p99 {mine['p99_ms']:.0f} vs {theirs['p99_ms']:.0f} ms)"
        )
    return notes


def _ceiling(cores: int, app_cpu_s: float, result: LoadResult) -> dict[str, Any]:
    """A measured run's own CPU ceiling (cores / the app's CPU-seconds per request) and the
    share of it the run reached; None for each when the run answered no request."""
    if unanswered(result.metrics()):
        return dict.fromkeys(("app_cpu_ms_per_req", "ceiling_rps", "ceiling_fraction"))
    per_request = app_cpu_s / result.requests
    ceiling = cores / per_request if per_request > 0 else float("inf")
    return {
        "app_cpu_ms_per_req": round(per_request * 1000, 2),
        "ceiling_rps": round(ceiling, 2),
        "ceiling_fraction": round(result.rps / ceiling, 3),
    }


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
