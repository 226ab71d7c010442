"""ASGI servers under an awaiting + loop-blocking mix: servertune's admission vs uvicorn defaults.

The app (`servertune.bench.apps.asgi_mix`) awaits uniform(0, 200) ms, as the sync_to_async
article's requests did, then blocks its event loop for BLOCK_MS of Python CPU. The workload a
user would write for it (service time = mean await + block, cpu_fraction = block / service
time, interface = asgi) gives servertune's plan: one process per core, and nginx admitting 2 x
the requests Little's law puts in flight at the loops' capacity. Configurations, each behind
nginx on 127.0.0.1:

* `servertune-uvicorn`, `servertune-gunicorn-asgi`, `servertune-granian`: exactly
  `servertune gen uvicorn | gunicorn-asgi | granian` + `gen nginx-asgi`, gunicorn with
  uvicorn's worker (`--gunicorn-asgi-worker uvicorn`);
* `servertune-gunicorn-native`: the same `gen gunicorn-asgi` with gunicorn's native asgi
  worker (`--gunicorn-asgi-worker native`), so the two workers meet in one run;
* `servertune-uvicorn-per-worker`, `servertune-gunicorn-asgi-per-worker`,
  `servertune-granian-per-worker`, `servertune-gunicorn-native-per-worker`: the same numbers,
  one one-worker instance per socket (`servertune gen uvicorn-per-worker |
  gunicorn-asgi-per-worker | granian-per-worker` + `gen nginx-asgi-per-worker`) behind nginx
  least_conn (the quick mode leaves out the native per-worker layout, to stay quick);
* `uvicorn-2n+1`: `uvicorn --workers (2 x cores) + 1`, uvicorn's other flags at their defaults;
* `uvicorn-1-worker` and `granian-default`: the servers' own defaults (one worker);
  the defaults sit behind nginx from the same plan without its admission limit.

Each configuration gets three loads: unloaded (open-loop Poisson arrivals at 10% of the plan's
capacity: the latency a request has on its own), normal (wrk, closed loop, as many connections
as Little's law puts in flight at capacity) and overload (open loop at 4 x the plan's capacity:
the excess must go somewhere). Repeats are interleaved. Under overload every admitted answer
names its process, so the report shows how the admitted requests spread over the processes.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.harness.load_result import unanswered
from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.sizing.defaults import (
    ASGI_OVERLOAD_FACTOR,
    ASGI_OVERLOAD_P99_TARGET,
    ASGI_THROUGHPUT_NOISE,
)

__all__ = ["CONFIGS", "AsgiServers", "AsgiSizes"]

#: The app's mix: awaits uniform(0, AWAIT_MS) ms, then blocks its loop BLOCK_MS ms.
AWAIT_MS = 200.0
BLOCK_MS = 10.0
#: Overload: this many times the plan's capacity.
OVERLOAD_FACTOR = ASGI_OVERLOAD_FACTOR
#: Unloaded: this share of the plan's capacity, open loop.
UNLOADED_FACTOR = 0.1
#: A client gives up on a request after this long (counted as a timeout).
CLIENT_TIMEOUT_S = 5.0
#: Seconds of warm-up after each start (full runs).
WARMUP_SECONDS = 1.0
#: Targets: admitted p99 under overload within 2 x the unloaded p99; throughput at normal load
#: within the noise of the best default (the run-to-run spread on a shared machine).
MAX_OVERLOAD_P99_RATIO = ASGI_OVERLOAD_P99_TARGET
THROUGHPUT_NOISE = ASGI_THROUGHPUT_NOISE

OURS = "servertune-uvicorn"
CONFIGS = (
    "servertune-uvicorn",
    "servertune-gunicorn-asgi",
    "servertune-granian",
    "servertune-uvicorn-per-worker",
    "servertune-gunicorn-asgi-per-worker",
    "servertune-granian-per-worker",
    "servertune-gunicorn-native",
    "servertune-gunicorn-native-per-worker",
    "uvicorn-2n+1",
    "uvicorn-1-worker",
    "granian-default",
)
DEFAULTS = ("uvicorn-2n+1", "uvicorn-1-worker", "granian-default")
#: gunicorn's native asgi worker beside uvicorn's: (native config, uvicorn-worker config).
NATIVE_PAIRS = (
    ("servertune-gunicorn-native", "servertune-gunicorn-asgi"),
    ("servertune-gunicorn-native-per-worker", "servertune-gunicorn-asgi-per-worker"),
)
#: Left out of the quick mode (tests): the shared native layout already starts the native worker.
QUICK_SKIPS = ("servertune-gunicorn-native-per-worker",)


@dataclass(frozen=True)
class _Config:
    name: str
    server: str
    plan: Any
    argv: list[str] | None = None
    per_worker: bool = False


@dataclass(frozen=True)
class AsgiSizes:
    """Seconds of each load (unloaded, normal, overload) and interleaved repeats."""

    unloaded_s: float
    normal_s: float
    overload_s: float
    repeats: int


def _configs(base: Any, stack: Any, cores: int) -> list[_Config]:
    """Every configuration on fresh ports; defaults get nginx from a plan with no admission."""
    from servertune.bench.harness.deployments import place
    from servertune.sizing import Forced, plan_for

    naive_workers = 2 * cores + 1
    placed = place(base, stack, naive_workers)
    ours = plan_for(placed.model_copy(update={"gunicorn_asgi_worker": "uvicorn"}))
    native = plan_for(placed.model_copy(update={"gunicorn_asgi_worker": "native"}))
    no_admission = {
        "admission_limit": Forced(None, "forced by the benchmark: the defaults admit everything")
    }
    configs = [
        _Config("servertune-uvicorn", "uvicorn", ours),
        _Config("servertune-gunicorn-asgi", "gunicorn-asgi", ours),
        _Config("servertune-granian", "granian", ours),
    ]
    for server in ("uvicorn", "gunicorn-asgi", "granian"):
        configs.append(_Config(f"servertune-{server}-per-worker", server, ours, per_worker=True))
    configs.append(_Config("servertune-gunicorn-native", "gunicorn-asgi", native))
    configs.append(
        _Config("servertune-gunicorn-native-per-worker", "gunicorn-asgi", native, per_worker=True)
    )
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


def _spread(groups: list[tuple[str, int, float]]) -> dict[str, Any]:
    """How the admitted requests spread over the processes (each answer names its pid): the
    busiest process's share, the p99 of the slowest and fastest process, and each process."""
    total = sum(count for _, count, _ in groups)
    if not total:
        return {}
    return {
        "processes_seen": len(groups),
        "busiest_share": round(groups[0][1] / total, 3),
        "slowest_process_p99_ms": max(p99 for _, _, p99 in groups),
        "fastest_process_p99_ms": min(p99 for _, _, p99 in groups),
        "per_process": [[count, p99] for _, count, p99 in groups],
    }


def normal_connections(plan: Any) -> int:
    """Little's law at the plan's capacity: the requests in flight when the loops are just busy."""
    from servertune.sizing.queueing import held_s

    return max(1, round(float(plan.asgi_capacity_rps) * held_s(plan.workload)))


class _Table:
    """The median rows of one run, looked up by config and load."""

    def __init__(self, runs: list[dict[str, Any]]) -> None:
        self.runs = runs

    def row(self, name: str, load: str) -> dict[str, Any]:
        return next(r for r in self.runs if r["config"] == name and r["load"] == load)

    def mark_overload_ratios(self, names: tuple[str, ...]) -> None:
        """Each config's overload row gets its admitted p99 over its own unloaded p99."""
        for name in names:
            unloaded_p99 = self.row(name, "unloaded")["p99_ms"]
            over = self.row(name, "overload")
            over["p99_over_unloaded"] = (
                round(over["p99_ms"] / unloaded_p99, 3) if over["p99_ms"] and unloaded_p99 else None
            )


def _ours(names: tuple[str, ...]) -> list[str]:
    return [name for name in names if name.startswith("servertune")]


def _ratios(table: _Table, names: tuple[str, ...]) -> dict[str, float]:
    """servertune's layouts against the best default, per-worker against one socket, and
    gunicorn's native worker against uvicorn's."""
    ratios: dict[str, float] = {}
    row = table.row

    def lost(*names: str) -> str | None:
        """Why these configs' normal (closed-loop) loads cannot be divided: one repeat
        answered nothing (each median row keeps its raw repeats)."""
        return unanswered(*(r for n in names for r in row(n, "normal").get("repeats", [])))

    best_default = max(row(name, "normal")["rps"] for name in DEFAULTS)
    for name in _ours(names):
        if lost(name, *DEFAULTS):
            continue  # its target says not measured
        ratios[f"{name} normal req/s / best default"] = round(
            row(name, "normal")["rps"] / best_default, 3
        )
    for name in names:
        ratios[f"{name} overload p99 / unloaded p99"] = row(name, "overload")[
            "p99_over_unloaded"
        ] or float("nan")
    for server in ("uvicorn", "gunicorn-asgi", "granian"):
        shared, per_worker = (
            row(f"servertune-{server}", "normal"),
            row(f"servertune-{server}-per-worker", "normal"),
        )
        ratios[f"per-worker / shared {server} normal req/s"] = (
            float("nan")
            if lost(f"servertune-{server}", f"servertune-{server}-per-worker")
            else round(per_worker["rps"] / shared["rps"], 3)
        )
    for native, uvicorn in NATIVE_PAIRS:
        if native not in names:
            continue
        for load, key in (("normal", "rps"), ("unloaded", "p99_ms"), ("overload", "p99_ms")):
            theirs, mine = row(uvicorn, load)[key], row(native, load)[key]
            what = "req/s" if key == "rps" else "p99"
            ratios[f"{native} / {uvicorn} {load} {what}"] = (
                round(mine / theirs, 3) if theirs else float("nan")
            )
    return ratios


def _targets(table: _Table, ratios: dict[str, float], names: tuple[str, ...]) -> list[Target]:
    """Each servertune layout: admitted p99 under overload, and req/s against the defaults."""
    targets = [
        Target(
            f"{name}: overload p99 of admitted / unloaded p99",
            table.row(name, "overload")["p99_over_unloaded"],
            "<=",
            MAX_OVERLOAD_P99_RATIO,
        )
        for name in _ours(names)
    ]
    targets += [
        Target(
            f"{name}: normal req/s / best default's",
            ratios.get(f"{name} normal req/s / best default"),
            ">=",
            1 - THROUGHPUT_NOISE,
        )
        for name in _ours(names)
    ]
    return targets


class AsgiServers(BaseScenario[AsgiSizes]):
    """servertune's ASGI layouts and the defaults, each at unloaded, normal and overload."""

    name = "asgi"
    needs = ("uvicorn", "uvicorn_worker", "gunicorn", "granian")
    sizes = QuickFull(
        quick=AsgiSizes(unloaded_s=1.0, normal_s=1.0, overload_s=1.0, repeats=1),
        full=AsgiSizes(unloaded_s=5.0, normal_s=8.0, overload_s=8.0, repeats=3),
    )
    has_plot = True

    def setup(self, run: Run[AsgiSizes]) -> None:
        from servertune.bench.apps import install
        from servertune.machine import Machine
        from servertune.workload import Workload

        self.cores = Machine.read().cores
        self.env = {
            "SERVERTUNE_BENCH_AWAIT_MS": f"{AWAIT_MS:g}",
            "SERVERTUNE_BENCH_BLOCK_MS": f"{BLOCK_MS:g}",
        }
        service_ms = AWAIT_MS / 2 + BLOCK_MS
        self.workload = Workload(
            cores=self.cores, interface="asgi", service_time_ms=service_ms,
            cpu_fraction=BLOCK_MS / service_ms, app=install("asgi_mix", run.stack.dir),
        )  # fmt: skip
        self.plan: Any = None

    def configs(self, run: Run[AsgiSizes]) -> tuple[str, ...]:
        if run.options.quick:
            return tuple(name for name in CONFIGS if name not in QUICK_SKIPS)
        return CONFIGS

    def levels(self, run: Run[AsgiSizes], config: str) -> tuple[Level, ...]:
        from servertune.sizing import make_plan

        plan = make_plan(self.workload)
        return (
            Level(role="unloaded"),
            Level(normal_connections(plan), role="normal"),
            Level(role="overload"),
        )

    def start(self, run: Run[AsgiSizes], config: str) -> Any:
        from servertune.bench.harness.deployments import deploy_asgi
        from servertune.bench.harness.load import run_closed_loop

        chosen = next(c for c in _configs(self.workload, run.stack, self.cores) if c.name == config)
        self.plan = self.plan or next(
            c.plan for c in _configs(self.workload, run.stack, self.cores) if c.name == OURS
        )
        deployment = deploy_asgi(
            run.stack, f"{config}-{run.repeat}", chosen.plan, chosen.server,  # type: ignore[arg-type]
            argv=chosen.argv, per_worker=chosen.per_worker, env=self.env,
        )  # fmt: skip
        if not run.options.quick:
            run_closed_loop(deployment.url, connections=4, duration_s=WARMUP_SECONDS)
        return deployment

    def measure(
        self, run: Run[AsgiSizes], config: str, served: Any, level: Level
    ) -> dict[str, Any]:
        from servertune.bench.harness.load import run_closed_loop
        from servertune.bench.harness.open_loop import run_open_loop

        capacity = float(self.plan.asgi_capacity_rps)
        # Every load starts on an idle app: not behind what the warm-up or the last load left
        # (the overload's admitted requests, the normal load's last awaits).
        settled = round(served.wait_idle(), 2)
        if level.role == "normal":
            assert level.concurrency is not None
            normal = run_closed_loop(
                served.url, connections=level.concurrency, duration_s=run.size.normal_s
            )
            return {
                "config": config, "load": "normal", "concurrency": level.concurrency,
                **normal.metrics(), "settle_s": settled,
                "distribution": [list(p) for p in normal.distribution],
            }  # fmt: skip
        factor, seconds = (
            (UNLOADED_FACTOR, run.size.unloaded_s)
            if level.role == "unloaded"
            else (OVERLOAD_FACTOR, run.size.overload_s)
        )
        result = run_open_loop(
            served.url, rate=capacity * factor, duration_s=seconds, timeout_s=CLIENT_TIMEOUT_S
        )
        row = {"config": config, "load": level.role, **result.metrics(), "settle_s": settled}
        if level.role == "overload":
            row.update(_spread(result.by_body()))
        return row

    def summarize(self, run: Run[AsgiSizes], results: Results) -> Report:
        """Medians per config and load; the ratios, the targets and the notes built on them."""
        from servertune.bench.harness.deployments import settle_note
        from servertune.bench.harness.versions import dist_version
        from servertune.bench.harness.wrk import find_wrk

        levels = self.levels(run, OURS)
        names = self.configs(run)
        runs = [results.median(name, level) for name in names for level in levels]
        plan = self.plan
        report = Report(scenario="asgi", runs=runs, ceiling_rps=round(plan.asgi_capacity_rps, 1))
        report.versions = {
            dist: dist_version(dist)
            for dist in ("servertune", "uvicorn", "uvicorn-worker", "gunicorn", "granian")
        }
        report.versions["load"] = "wrk" if find_wrk() else "builtin"
        table = _Table(runs)
        table.mark_overload_ratios(names)
        report.ratios = _ratios(table, names)
        report.targets = _targets(table, report.ratios, names)
        report.notes = [*self._notes(run), settle_note(results.all_rows())]
        return report

    def _notes(self, run: Run[AsgiSizes]) -> list[str]:
        """What was measured and how to read the columns."""
        plan = self.plan
        return [
            (
                f"{self.cores} cores; the app awaits uniform(0, {AWAIT_MS:g}) ms then blocks its "
                f"loop {BLOCK_MS:g} ms; plan: {plan.processes} processes, capacity "
                f"{plan.asgi_capacity_rps:.0f} req/s, nginx admits {plan.admission_limit}"
            ),
            (
                f"unloaded: open loop at {UNLOADED_FACTOR:g} x capacity; normal: wrk with "
                f"{normal_connections(plan)} connections (Little's law at capacity); overload: "
                f"open loop at {OVERLOAD_FACTOR:g} x capacity; clients time out after "
                f"{CLIENT_TIMEOUT_S:g} s; {run.size.overload_s:g} s per load"
            ),
            (
                "overload latencies are of admitted (2xx) requests, timed from their scheduled "
                "send (open loop); refused_503 and timeouts count the rest"
            ),
            (
                "busiest_share: the share of the admitted requests under overload that the "
                "busiest process answered (0.5 is even for 2 processes)"
            ),
            (
                "servertune-gunicorn-native*: gunicorn's native asgi worker, with the numbers of "
                "servertune-gunicorn-asgi* (uvicorn's worker); the native / uvicorn ratios "
                "compare the two in this run (req/s: above 1 favours native; p99: below 1 does)"
            ),
            f"medians of {run.repeats} interleaved run(s)",
        ]

    def plot(self, report: Report, path: Path) -> None:
        """Latency by percentile at normal load and of admitted requests under overload."""
        from servertune.bench.harness.plotting import plot_distributions

        plot_distributions(
            report,
            path,
            panel_key="load",
            panel_title=lambda load: (
                f"{load} load" + (" (admitted only)" if load == "overload" else "")
            ),
            select=lambda run: run["load"] in ("normal", "overload"),
        )
