"""Restarts under load: SIGTERM an instance, SIGKILL a worker, SIGHUP a reload; no failed GET.

A rolling deploy stops app-server instances one at a time (SIGTERM: stop accepting, finish what is
in flight), a crash or the OOM killer takes a worker (SIGKILL), and a config change reloads
(SIGHUP). Each happens here under steady load - closed-loop users on `GET /quick`, users sending
`POST /order?id=N` with a fresh id each time, and one user on `GET /slow` - with the real
gunicorn behind the real nginx, for two configurations:

* `defaults`: what most deployments run - one gunicorn (the shared-socket layout, the plan's
  workers and threads) with gunicorn's default keep-alive (2 s), behind the nginx
  `gen nginx-gunicorn-shared` writes: one upstream server, so nothing to retry on;
* `servertune`: `servertune gen gunicorn-per-worker` + `gen nginx-gunicorn`: one gunicorn per
  socket behind nginx least_conn, so stopping one instance leaves the others serving and nginx
  sends a failed GET to the next one. An instance is drained before it is stopped: marked `down`
  in nginx (`render_nginx(..., down=[i])`) and nginx reloaded, its in-flight requests answered
  (the old nginx workers have exited), then SIGTERM - so nothing waits in the listen backlog
  gunicorn drops when it closes its socket (benoitc/gunicorn#3397).

The app writes every POST id it receives to a ledger, so a POST nginx sent twice (a replay)
shows as an id written twice. Counted per event: failed GETs, failed POSTs, replayed POSTs, the
slow call drained by the stopped instance, and the worst GET latency against the steady p99.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.bench.harness.users import KeepAliveUsers
from servertune.targets.layout import Layout

__all__ = ["CONFIGS", "EVENTS", "Restart", "RestartSizes"]

CONFIGS = ("defaults", "servertune")
EVENTS = ("sigterm-instance", "sigkill-worker", "sighup-reload")

#: The workload as a user would describe the bench app: ~5 ms requests, half of it GIL time,
#: 1 in 100 waiting on a 2 s external call.
SERVICE_TIME_MS = 5.0
CPU_FRACTION = 0.5
SLOW_CALL_RATIO = 0.01
#: Users: closed loop, each thinking THINK_S between requests.
GET_USERS = 6
POST_USERS = 2
SLOW_USERS = 1
THINK_S = (0.01, 0.05)
#: No single request may take longer than this; every user stops after MAX_REQUESTS_PER_USER.
CLIENT_TIMEOUT_S = 30.0
MAX_REQUESTS_PER_USER = 20_000
#: gunicorn's own default keep-alive, which the `defaults` config keeps.
GUNICORN_DEFAULT_KEEPALIVE_S = 2


@dataclass(frozen=True)
class _Sample:
    start: float
    kind: str  # "get", "post", "slow", "drain" (the slow call sent straight to a stopped instance)
    status: int  # 0: no HTTP answer (connection refused, reset, timeout)
    ms: float
    order: str | None = None


def _users(port: int, label: str, seed: int) -> KeepAliveUsers[_Sample]:
    """Closed-loop users in threads, each on its own keep-alive connection to nginx."""
    kinds = ["get"] * GET_USERS + ["post"] * POST_USERS + ["slow"] * SLOW_USERS
    return KeepAliveUsers(
        kinds, label=label, seed=seed,
        connect=lambda: http.client.HTTPConnection("127.0.0.1", port, CLIENT_TIMEOUT_S),
        sample=lambda o: _Sample(o.began, o.kind, o.status, o.ms, o.order),
        think_s=THINK_S, max_requests=MAX_REQUESTS_PER_USER, timeout_s=CLIENT_TIMEOUT_S,
    )  # fmt: skip


def _direct_slow(port: int, load: KeepAliveUsers[_Sample]) -> threading.Thread:
    """A slow call sent straight to one instance, in flight when it is told to stop."""

    def call() -> None:
        start = time.monotonic()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, CLIENT_TIMEOUT_S)
            conn.request("GET", "/slow")
            response = conn.getresponse()
            response.read()
            status = response.status
            conn.close()
        except (OSError, http.client.HTTPException):
            status = 0
        load.record(_Sample(start, "drain", status, (time.monotonic() - start) * 1000))

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    return thread


def _environ(pid: int) -> dict[str, str]:
    """A running process's environment, to start its replacement exactly as it was started."""
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


def _children(pid: int) -> list[int]:
    """The worker processes a gunicorn master forked."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            found.extend(int(p) for p in (task / "children").read_text().split())
    return found


def _wait_workers(pid: int, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not _children(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


@dataclass(frozen=True)
class RestartSizes:
    """Steady seconds before the first event and after each; the slow call's length; repeats."""

    warm_s: float
    settle_s: float
    slow_s: float
    repeats: int


@dataclass
class _Served:
    deployment: Any
    ledger: Path
    plan: Any


class Restart(BaseScenario[RestartSizes]):
    """Both configs under the same load and the same three events; count what failed."""

    name = "restart"
    needs = ("gunicorn",)
    sizes = QuickFull(
        quick=RestartSizes(warm_s=1.0, settle_s=1.5, slow_s=0.5, repeats=1),
        full=RestartSizes(warm_s=5.0, settle_s=6.0, slow_s=2.0, repeats=1),
    )
    has_plot = True

    def setup(self, run: Run[RestartSizes]) -> None:
        """Install the app; describe it as a user would."""
        from servertune.bench.apps import install
        from servertune.machine import Machine
        from servertune.workload import Workload

        self.cores = max(2, Machine.read().cores)
        self.workload = Workload(
            cores=self.cores,
            service_time_ms=SERVICE_TIME_MS,
            cpu_fraction=CPU_FRACTION,
            slow_call_ratio=SLOW_CALL_RATIO,
            slow_call_ms=run.size.slow_s * 1000,
            app=install("restart", run.stack.dir),
        )
        self.plans: dict[str, Any] = {}

    def configs(self, run: Run[RestartSizes]) -> tuple[str, ...]:
        """The defaults, then servertune's per-worker layout."""
        return CONFIGS

    def config_plan(self, workload: Any, config: str) -> tuple[Any, Layout]:
        """servertune's plan, or the defaults' (gunicorn's own keep-alive forced); and the layout."""
        from servertune.sizing import Forced, plan_for

        if config == "servertune":
            return plan_for(workload), "per-worker"
        reason = "forced by the benchmark: gunicorn's default"
        forced = {"gunicorn_keepalive_s": Forced(GUNICORN_DEFAULT_KEEPALIVE_S, reason)}
        return plan_for(workload, forced=forced), "shared"

    def start(self, run: Run[RestartSizes], config: str) -> _Served:
        """gunicorn (one, or one per socket) and nginx; a fresh POST ledger."""
        from servertune.bench.harness.deployments import deploy_gunicorn, place

        plan, layout = self.config_plan(place(self.workload, run.stack, self.cores), config)
        self.plans[config] = plan
        ledger = run.stack.dir / f"ledger-{config}-{run.repeat}"
        ledger.mkdir()
        env = {
            "SERVERTUNE_BENCH_SLOW_S": f"{run.size.slow_s:g}",
            "SERVERTUNE_BENCH_LEDGER": str(ledger),
        }
        deployment = deploy_gunicorn(
            run.stack, f"{config}-{run.repeat}", plan,
            layout=layout, env=env, python=run.options.python,
        )  # fmt: skip
        return _Served(deployment, ledger, plan)

    def measure(
        self, run: Run[RestartSizes], config: str, served: _Served, level: Level
    ) -> dict[str, Any]:
        """Steady load, then the three events in turn; one row per window under `windows`."""
        from servertune.bench.apps.restart import arrivals

        size, stack, deployment, plan = run.size, run.stack, served.deployment, served.plan
        windows: list[tuple[str, float]] = []
        drains: list[threading.Thread] = []
        with _users(plan.workload.listen_port, f"{config}-{run.repeat}", seed=run.repeat) as load:
            windows.append(("steady", time.monotonic()))
            time.sleep(size.warm_s)

            # 1. A rolling deploy stops one instance: SIGTERM with a slow call in flight.
            windows.append(("sigterm-instance", time.monotonic()))
            target = deployment.app_servers[0]
            environ = _environ(target.process.pid)
            drains.append(_direct_slow(target.ports[0], load))
            time.sleep(min(0.2, size.slow_s / 4))
            if config == "servertune":
                # Drain first: nginx stops sending to the instance and finishes what it sent,
                # so nothing waits in the backlog gunicorn drops on SIGTERM.
                self.drain(deployment, plan, [0])
            target.process.send_signal(signal.SIGTERM)
            target.process.wait(plan.graceful_timeout_s + 10)
            stack.stop(target)
            deployment.app_servers[0] = stack.start(
                f"{target.name}-new", "gunicorn", target.argv,
                ports=list(target.ports), env=environ,
            )  # fmt: skip
            if config == "servertune":
                self.drain(deployment, plan, [])  # back in the upstream once it listens
            time.sleep(size.settle_s)

            # 2. The OOM killer or a crash takes one worker (its master forks another).
            windows.append(("sigkill-worker", time.monotonic()))
            victim = deployment.app_servers[-1]
            _wait_workers(victim.process.pid)
            workers = _children(victim.process.pid)
            if workers:
                os.kill(workers[0], signal.SIGKILL)
            time.sleep(size.settle_s)

            # 3. A config reload: SIGHUP to every master (new workers, old ones drain).
            windows.append(("sighup-reload", time.monotonic()))
            for server in deployment.app_servers:
                server.process.send_signal(signal.SIGHUP)
            time.sleep(size.settle_s)
            windows.append(("end", time.monotonic()))
        for drain in drains:
            drain.join(CLIENT_TIMEOUT_S)
        rows = _rows(config, load.samples, windows, arrivals(str(served.ledger)), run.repeat + 1)
        return {"config": config, **_totals(rows), "windows": rows}

    @staticmethod
    def drain(deployment: Any, plan: Any, down: list[int]) -> None:
        """Mark the instances at `down` `down` in nginx (none: every instance back) and reload;
        return once the old nginx workers have answered everything they had sent."""
        from servertune.bench.harness.deployments import reload_nginx
        from servertune.render import render_nginx

        text = render_nginx(plan, "gunicorn", "per-worker", down=down)
        reload_nginx(deployment.nginx, text, plan.nginx_read_timeout_s + 10)

    def summarize(self, run: Run[RestartSizes], results: Results) -> Report:
        """Every window of every run as a row; targets on the counts summed over runs."""
        from servertune.bench.harness.versions import tool_versions

        rows = [w for c in CONFIGS for sample in results.rows(c) for w in sample["windows"]]
        report = Report(scenario=self.name, runs=rows)
        report.versions = tool_versions(["gunicorn", "nginx"])
        totals = {c: _totals([r for r in rows if r["config"] == c]) for c in CONFIGS}
        ours, theirs = totals["servertune"], totals["defaults"]
        report.targets = [
            Target("servertune: failed GETs over all events", ours["get_failed"], "==", 0),
            Target("servertune: failed POSTs over all events", ours["post_failed"], "==", 0),
            Target("servertune: replayed POSTs over all events", ours["post_replayed"], "==", 0),
            Target(
                "servertune: slow call drained by the stopped instance",
                ours["drain_failed"],
                "==",
                0,
            ),
            Target(
                "defaults: failed requests over all events (measured, not assumed)",
                theirs["get_failed"] + theirs["post_failed"],
                ">",
                0,
            ),
        ]
        report.ratios = {
            "defaults/servertune failed requests": round(
                (theirs["get_failed"] + theirs["post_failed"])
                / max(1, ours["get_failed"] + ours["post_failed"]),
                2,
            )
        }
        plan = self.plans["servertune"]
        size = run.size
        report.notes = [
            (
                f"{self.cores} cores; servertune: {plan.processes} gunicorn instances x "
                f"{plan.threads} threads behind nginx least_conn; defaults: one gunicorn with "
                f"{plan.processes} workers x {plan.threads} threads, keep-alive "
                f"{GUNICORN_DEFAULT_KEEPALIVE_S} s"
            ),
            (
                f"{GET_USERS} GET users, {POST_USERS} POST users (a fresh id each), {SLOW_USERS} "
                f"on /slow ({size.slow_s:g} s); {size.warm_s:g} s steady, then each event and "
                f"{size.settle_s:g} s after it; {run.repeats} run(s) per config, interleaved; "
                "targets count every run"
            ),
            "a request counts in the window of the event that precedes its start",
            (
                "servertune drains an instance before its SIGTERM: marked down in nginx, nginx "
                "reloaded, the old nginx workers' requests answered; the users reconnect when "
                "nginx has closed an idle keep-alive connection (as urllib3 and browsers do)"
            ),
            (
                "post_failed: POSTs nginx answered 502 because the connection broke after it had "
                "sent them (a backlog gunicorn dropped on SIGTERM, a killed worker); nginx never "
                "replays a POST (no non_idempotent): whether to resend is the client's call"
            ),
        ]
        return report

    def plot(self, report: Report, path: Path) -> None:
        """Failed GETs, failed and replayed POSTs (summed over runs) and the worst latency spike
        per event, defaults beside servertune."""
        _plot(report, path)


def _rows(
    config: str,
    samples: list[_Sample],
    windows: list[tuple[str, float]],
    counts: dict[str, int],
    run: int = 1,
) -> list[dict[str, Any]]:
    """One row per window: what was sent in it and how it went."""
    rows = []
    steady_p99: float | None = None
    for (name, start), (_, end) in itertools.pairwise(windows):
        inside = [s for s in samples if start <= s.start < end]
        gets = [s for s in inside if s.kind in ("get", "slow")]
        quick = sorted(s.ms for s in inside if s.kind == "get" and s.status == 200)
        posts = [s for s in inside if s.kind == "post"]
        drains = [s for s in inside if s.kind == "drain"]
        p99 = quick[min(len(quick) - 1, int(len(quick) * 0.99))] if quick else None
        if name == "steady":
            steady_p99 = p99
        worst = quick[-1] if quick else None
        rows.append(
            {
                "config": config,
                "event": name,
                "run": run,
                "get_requests": len(gets),
                "get_failed": sum(1 for s in gets if s.status != 200),
                "post_requests": len(posts),
                "post_failed": sum(1 for s in posts if s.status != 200),
                "post_replayed": sum(1 for s in posts if s.order and counts.get(s.order, 0) > 1),
                # A failed POST the app never ran (not in the ledger): safe to send again.
                "post_failed_unrun": sum(
                    1 for s in posts if s.status != 200 and s.order and not counts.get(s.order)
                ),
                # No HTTP answer at all (connection closed or reset), as opposed to nginx's 502.
                "no_answer": sum(1 for s in inside if s.kind != "drain" and s.status == 0),
                "drain_failed": sum(1 for s in drains if s.status != 200),
                "p99_ms": None if p99 is None else round(p99, 1),
                "max_ms": None if worst is None else round(worst, 1),
                "spike_ms": (
                    None
                    if worst is None or steady_p99 is None
                    else round(max(0.0, worst - steady_p99), 1)
                ),
            }
        )
    return rows


def _totals(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Failures summed over the event windows (the steady window is the control)."""
    keys = ("get_failed", "post_failed", "post_replayed", "drain_failed")
    return {k: sum(int(r[k]) for r in rows if r["event"] in EVENTS) for k in keys}


def _plot(report: Report, path: Path) -> None:
    from servertune.bench.harness.plotting import pyplot

    plt = pyplot()
    metrics = (("get_failed", "failed GETs"), ("post_failed", "failed POSTs"),
               ("post_replayed", "replayed POSTs"), ("spike_ms", "latency spike (ms)"))  # fmt: skip
    figure, axes = plt.subplots(1, len(metrics), figsize=(4 * len(metrics), 3.6))
    width = 0.38
    for axis, (key, title) in zip(axes, metrics, strict=True):
        for offset, config in ((-width / 2, "defaults"), (width / 2, "servertune")):
            # Counts add up over the runs; the spike is the worst run's.
            combine = max if key == "spike_ms" else sum
            values = [
                combine(
                    [r[key] or 0 for r in report.runs if r["config"] == config and r["event"] == e]
                    or [0]
                )
                for e in EVENTS
            ]
            axis.bar([i + offset for i in range(len(EVENTS))], values, width, label=config)
        axis.set_xticks(range(len(EVENTS)), [e.replace("-", "\n") for e in EVENTS])
        axis.set_title(title)
    axes[0].legend()
    figure.suptitle("servertune bench restart")
    figure.tight_layout()
    from servertune.bench.harness.plotting import write_png

    write_png(figure, path, dpi=110)
    plt.close(figure)
