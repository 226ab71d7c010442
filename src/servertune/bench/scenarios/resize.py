"""Follow a CPU limit that changes, or not: gunicorn's req/s and p99 after its cgroup's quota moves.

Kubernetes' in-place pod resize changes a running container's CPU quota; the worker count the
server started with stays. Measured, not assumed: gunicorn from servertune's plan (the `balance`
scenario's half-GIL app, behind the same nginx) runs in a real child cgroup (root needed) whose
quota the benchmark moves between 2 cores and 1 core. "fixed" keeps the workers it started
with; "following" has `servertune.live`'s hook, which moves them to the plan's count for the
new quota once the window has passed. Each run measures req/s and p99 before the change and
after it (once "following" has moved), and counts failed requests through the change itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from servertune.bench.harness.report import BenchInputError, Report
from servertune.bench.harness.scenario import BaseScenario, QuickFull, Results, Run

__all__ = ["DIRECTIONS", "MODES", "Resize", "ResizeSizes"]

#: The balance scenario's request: 100 ms, half of it holding the GIL.
SERVICE_TIME_MS = 100.0
CPU_FRACTION = 0.5
#: The two directions of a resize: (cores at start, cores after).
DIRECTIONS = {"shrink": (2, 1), "grow": (1, 2)}
MODES = ("fixed", "following")
#: The follower's window and reading interval here: short, so the benchmark measures the
#: server after the move, not the wait (the window's own cost is the "fixed" row, for its length).
WINDOW_S = 1.0
INTERVAL_S = 0.1
#: How long the workers may take to reach the new count after the window (a fork and an import,
#: or a graceful exit) before the run fails.
SETTLE_TIMEOUT_S = 30.0
#: Connections per core at the larger quota: enough to keep every worker's threads busy.
CONNECTIONS = 4


@dataclass(frozen=True)
class ResizeSizes:
    """Which directions, seconds per measured phase, interleaved repeats."""

    directions: tuple[str, ...]
    seconds: float
    repeats: int


def _hook(workload: Any, directory: str, mount: str) -> str:
    """The lines a user adds to gunicorn.conf.py to follow the limit (with this run's cgroup)."""
    return (
        "\n# servertune.live: follow the cgroup's CPU limit\n"
        "from pathlib import Path\n"
        "from servertune.live.cgroup import CgroupReader\n"
        "from servertune.live.gunicorn import follow_cpu_limit\n"
        "from servertune.workload import Workload\n"
        "when_ready = follow_cpu_limit(\n"
        f"    Workload(service_time_ms={workload.service_time_ms!r}, "
        f"cpu_fraction={workload.cpu_fraction!r}),\n"
        f"    window_s={WINDOW_S!r}, interval_s={INTERVAL_S!r},\n"
        f"    cgroup=CgroupReader(Path({directory!r}), mount_root=Path({mount!r})),\n"
        ")\n"
    )


class Resize(BaseScenario[ResizeSizes]):
    """gunicorn under a quota moved 2 -> 1 and 1 -> 2 cores: fixed workers vs servertune.live."""

    name = "resize"
    needs = ("gunicorn",)
    sizes = QuickFull(
        # 2 s: a 100 ms request slowed several times over on a busy machine still completes some.
        quick=ResizeSizes(directions=("shrink",), seconds=2.0, repeats=1),
        full=ResizeSizes(directions=("shrink", "grow"), seconds=6.0, repeats=3),
    )

    def setup(self, run: Run[ResizeSizes]) -> None:
        import os

        from servertune.bench.apps import install
        from servertune.bench.harness.cgroups import CgroupUnavailable, ChildCgroup
        from servertune.bench.scenarios.balance import calibrate_loops
        from servertune.workload import Workload

        if len(os.sched_getaffinity(0)) < max(max(d) for d in DIRECTIONS.values()):
            raise BenchInputError("resize: needs 2 cores to move a quota between 2 and 1")
        try:
            self.cgroup = run.enter(ChildCgroup.create(prefix="servertune-bench-resize"))
        except CgroupUnavailable as exc:
            raise BenchInputError(f"resize: {exc}") from None
        self.env = {"SERVERTUNE_BENCH_CPU_LOOPS": str(calibrate_loops())}
        self.workload = Workload(
            service_time_ms=SERVICE_TIME_MS, cpu_fraction=CPU_FRACTION,
            app=install("balance", run.stack.dir),
        )  # fmt: skip

    def configs(self, run: Run[ResizeSizes]) -> tuple[str, ...]:
        return tuple(f"{d}, {m}" for d in run.size.directions for m in MODES)

    def start(self, run: Run[ResizeSizes], config: str) -> Any:
        import shlex
        import sys

        from servertune.bench.harness.deployments import deploy_command, place
        from servertune.bench.harness.load import run_closed_loop
        from servertune.render import render_gunicorn
        from servertune.sizing import plan_for

        direction, _, mode = config.partition(", ")
        start_cores = DIRECTIONS[direction][0]
        self.cgroup.set_cores(start_cores)
        placed = place(self.workload.model_copy(update={"cores": start_cores}), run.stack, 1)
        plan = plan_for(placed)
        conf_text = render_gunicorn(plan, "shared")
        if mode == "following":
            conf_text += _hook(placed, str(self.cgroup.directory), str(self.cgroup.mount))
        name = f"{direction}-{mode}-{run.repeat}"
        conf = run.stack.dir / f"{name}.conf.py"
        conf.write_text(conf_text)
        gunicorn = shlex.join([sys.executable, "-m", "gunicorn", "-c", str(conf)])
        deployment = deploy_command(
            run.stack, name, plan, "gunicorn", self.cgroup.enter_command(gunicorn), env=self.env
        )
        run_closed_loop(deployment.url, connections=1, duration_s=0.5)  # import and warm the app
        return deployment

    def measure(
        self, run: Run[ResizeSizes], config: str, served: Any, level: Any
    ) -> dict[str, Any]:
        from servertune.bench.harness.load import run_closed_loop
        from servertune.bench.harness.stats import group_members

        direction, _, mode = config.partition(", ")
        start_cores, end_cores = DIRECTIONS[direction]
        pgid = served.app_servers[0].pgid

        def workers() -> int:
            return len(group_members(pgid)) - 1  # the arbiter leads the group

        seconds = run.size.seconds
        before = run_closed_loop(served.url, connections=CONNECTIONS, duration_s=seconds)
        workers_before = workers()
        self.cgroup.set_cores(end_cores)
        changed = time.monotonic()
        # Through the change: the window, then the move (for "following").
        during = run_closed_loop(served.url, connections=CONNECTIONS, duration_s=WINDOW_S + 1.0)
        wanted = end_cores if mode == "following" else workers_before
        while workers() != wanted:
            if time.monotonic() - changed > SETTLE_TIMEOUT_S:
                raise RuntimeError(
                    f"{config}: {workers()} workers {SETTLE_TIMEOUT_S:g} s after the quota "
                    f"moved to {end_cores} cores, not {wanted}\n{served.app_servers[0].log_tail()}"
                )
            time.sleep(0.05)
        moved_s = time.monotonic() - changed
        after = run_closed_loop(served.url, connections=CONNECTIONS, duration_s=seconds)
        return {
            "config": config, "cores_before": start_cores, "cores_after": end_cores,
            "workers_before": workers_before, "workers_after": workers(),
            "rps_before": round(before.rps, 2), "p99_ms_before": before.metrics()["p99_ms"],
            "rps": round(after.rps, 2), "p99_ms": after.metrics()["p99_ms"],
            "requests": after.requests,
            "errors_during": during.errors, "requests_during": during.requests,
            "errors": before.errors + during.errors + after.errors,
            "settled_s": round(moved_s, 2),
        }  # fmt: skip

    def summarize(self, run: Run[ResizeSizes], results: Results) -> Report:
        from servertune.bench.harness.load_result import unanswered
        from servertune.bench.harness.versions import dist_version
        from servertune.bench.harness.wrk import find_wrk

        configs = self.configs(run)
        runs = [results.median(c) for c in configs]
        report = Report(scenario=self.name, runs=runs)
        report.versions = {d: dist_version(d) for d in ("servertune", "gunicorn")}
        report.versions["load"] = "wrk" if find_wrk() else "builtin"
        by = {r["config"]: r for r in runs}
        unmeasured = []
        for direction in run.size.directions:
            fixed, following = by[f"{direction}, fixed"], by[f"{direction}, following"]
            start, end = DIRECTIONS[direction]
            label = f"{direction} {start}->{end} cores"
            # The ratios compare the loads after the change: one that answered nothing says why.
            repeats = [*results.rows(fixed["config"]), *results.rows(following["config"])]
            if why := unanswered(*repeats):
                unmeasured.append(f"{label}: not measurable: {why}")
                continue
            report.ratios[f"{label}: following/fixed req/s after"] = round(
                following["rps"] / fixed["rps"], 3
            )
            if following["p99_ms"] and fixed["p99_ms"]:
                report.ratios[f"{label}: following/fixed p99 after"] = round(
                    following["p99_ms"] / fixed["p99_ms"], 3
                )
        report.notes = [
            (
                "gunicorn gthread from the plan, behind nginx, in a real child cgroup "
                f"({self.cgroup.version}, {self.cgroup.directory}, removed); half-GIL app (5 x (10 ms sleep + ~10 ms CPU)); "
                f"{CONNECTIONS} connections; quota moved between 2 cores and 1"
            ),
            (
                f"fixed: the workers the plan gave at start; following: servertune.live's "
                f"gunicorn hook, window {WINDOW_S:g} s, readings every {INTERVAL_S:g} s"
            ),
            (
                f"{run.size.seconds:g} s before and after the change; errors_during: failed "
                f"requests in the {WINDOW_S + 1:g} s through the change; medians of "
                f"{run.repeats} interleaved run(s). The 2 cores are shared: read the ratios"
            ),
            *unmeasured,
        ]
        return report
