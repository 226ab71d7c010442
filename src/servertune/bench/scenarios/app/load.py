"""Load on a served candidate: wrk (a Lua script mixing the paths by weight) or the built-in
client at a closed level, open-loop arrivals at an ASGI app's unloaded and overload levels;
each run a row with the CPU each part used per request."""

from __future__ import annotations

import math
from typing import Any

from servertune.bench.harness.scenario import Level, Run
from servertune.bench.scenarios.app.candidates import Candidates
from servertune.bench.scenarios.app.inputs import AppSizes
from servertune.bench.scenarios.app.levels import (
    CLIENT_TIMEOUT_S,
    QUICK_CLIENT_TIMEOUT_S,
    REPLAY_SEED,
    open_loop_rates,
    replay_log_seconds,
    replay_speed,
)
from servertune.bench.scenarios.app.wsgi_layouts import BY_NAME

#: The CPU figures of a run row (`cpu_per_request`), in table order.
CPU_KEYS = (
    "app_cpu_ms_per_req",
    "proxy_cpu_ms_per_req",
    "load_cpu_ms_per_req",
    "ceiling_rps",
    "app_ceiling_rps",
)
#: An admitted answer counts as served in time (`good_rps`) within this many ms of its
#: scheduled send: past a second a page feels broken, and under overload an unbounded queue
#: answers most requests only just before the client gives up.
GOOD_WITHIN_MS = 1000.0


def _lua_string(text: str) -> str:
    """A Lua string literal for a request target (visible ASCII: only \\ and " need escaping)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def wrk_lua(paths: tuple[tuple[str, float], ...]) -> str:
    """A wrk request() choosing each path with its weight's share of the requests."""
    total = sum(w for _, w in paths)
    cumulative, entries = 0.0, []
    for path, weight in paths:
        cumulative += weight / total
        entries.append(f"{{{min(cumulative, 1.0):.6f}, {_lua_string(path)}}}")
    return (
        f"local paths = {{{', '.join(entries)}}}\n"
        "request = function()\n"
        "  local r = math.random()\n"
        "  for _, p in ipairs(paths) do\n"
        "    if r <= p[1] then return wrk.format('GET', p[2]) end\n"
        "  end\n"
        "  return wrk.format('GET', paths[#paths][2])\n"
        "end\n"
    )


def split_connections(paths: tuple[tuple[str, float], ...], connections: int) -> list[int]:
    """Connections per path for the built-in client, by weight (largest remainder, >= 1 each)."""
    total = sum(w for _, w in paths)
    exact = [connections * w / total for _, w in paths]
    counts = [max(1, math.floor(x)) for x in exact]
    order = sorted(range(len(paths)), key=lambda i: exact[i] - math.floor(exact[i]), reverse=True)
    for i in order:
        if sum(counts) >= connections:
            break
        counts[i] += 1
    return counts


#: --keep-log: the most a candidate's proxies may take, once its last load is over, to answer
#: the requests the client left in flight before they stop (each answers within about its
#: path's time: nothing queues behind it once the load stopped).
LOG_DRAIN_S = 10.0


class Load(Candidates):
    """`measure()`: one run of load on a served candidate, as a row."""

    def measure(self, run: Run[AppSizes], config: str, served: Any, level: Level) -> dict[str, Any]:
        """Load through nginx at `level` connections, the paths mixed by weight (an ASGI app's
        unloaded and overload levels: open-loop arrivals on its heaviest path)."""
        from servertune.bench.harness.client import Users, run_builtin
        from servertune.bench.harness.load import LoadResult
        from servertune.bench.harness.stats import CpuWatch
        from servertune.bench.harness.wrk import REFUSED_LUA, run_wrk

        self._use(self.interface_of(config))
        # Every load starts on an idle app, not behind what the last level left queued (as in
        # bench balance: a few hundred ms in the next level's p99 otherwise).
        with run.spent.phase("wait idle"):
            served.wait_idle()
        if level.concurrency is None:
            return self._measure_open(run, config, served, level.role)
        paths = self.input.paths
        result: LoadResult
        parts = {"app": served.app_cpu_seconds, "proxy": served.proxy_cpu_seconds}
        with CpuWatch(served.cpu_seconds, parts) as watch:
            if self.tool == "wrk":
                result = run_wrk(
                    served.url,
                    connections=level.concurrency,
                    duration_s=run.size.seconds,
                    lua=(REFUSED_LUA if self.interface == "asgi" else "") + wrk_lua(paths),
                )
            else:
                counts = split_connections(paths, level.concurrency)
                groups = [Users(p, n) for (p, _), n in zip(paths, counts, strict=True)]
                parts = run_builtin(served.url, groups, duration_s=run.size.seconds)
                result = merge_parts(list(parts.values()), level.concurrency, run.size.seconds)
        good = max(0, result.requests - result.non_2xx) if self.tool == "wrk" else result.requests
        plan = self.served_plans[config]
        metrics = result.metrics()
        row: dict[str, Any] = {
            "config": config,
            "concurrency": level.concurrency,
            "rps": round(good / max(result.duration_s, 1e-9), 2),
            "p50_ms": metrics["p50_ms"],
            "p90_ms": metrics["p90_ms"],
            "p99_ms": metrics["p99_ms"],
            "max_ms": metrics["max_ms"],
            "errors": result.non_2xx + result.socket_errors,
            "non_2xx": result.non_2xx,
            "socket_errors": result.socket_errors,
            "requests": result.requests,
            "repeat": run.repeat,
            "processes": self._processes(config, plan),
            **cpu_per_request(
                self.cores,
                result.requests,
                app_s=watch.part_seconds["app"],
                proxy_s=watch.part_seconds["proxy"],
                load_s=watch.load_seconds,
            ),
            "other_cpu_cores": round(watch.other_cores, 2),
        }
        if self.interface == "asgi":
            # 503s are the load nginx sheds on purpose: counted apart from the errors.
            refused = result.refused_503 or 0
            row["load"] = "closed"
            row["refused_503"] = refused
            row["shed"] = round(refused / result.requests, 3) if result.requests else 0.0
            row["errors"] = row["errors"] - refused
            row["non_2xx"] = row["non_2xx"] - refused
        return row

    def _measure_open(
        self, run: Run[AppSizes], config: str, served: Any, role: str
    ) -> dict[str, Any]:
        """Open-loop Poisson arrivals on the heaviest path at the role's rate (a share or a
        multiple of the plan's capacity); for a replay level, the log's own arrival times at its
        multiple of the log's pace, on every path by weight (`app.replay`)."""
        from servertune.bench.harness.open_loop import run_arrivals, run_open_loop
        from servertune.bench.harness.stats import CpuWatch

        timeout_s = CLIENT_TIMEOUT_S if run.size.all_levels else QUICK_CLIENT_TIMEOUT_S
        parts = {"app": served.app_cpu_seconds, "proxy": served.proxy_cpu_seconds}
        speed = replay_speed(role)
        if speed is not None:
            arrivals = self.input.replay.head(replay_log_seconds(run.size))
            pace = speed * self.replay_scale
            with CpuWatch(served.cpu_seconds, parts) as watch:
                result = run_arrivals(
                    served.url, self.input.paths, arrivals.schedule(pace),
                    duration_s=arrivals.seconds / pace, timeout_s=timeout_s, seed=REPLAY_SEED,
                )  # fmt: skip
        else:
            client_rps = self.client.rps if self.client else None
            rate = open_loop_rates(float(self.plan.asgi_capacity_rps or 0), client_rps)[role]
            # Full runs: overload twice as long (its queue must build); quick: both half as long.
            if run.size.all_levels:
                seconds = (run.size.open_seconds or run.size.seconds) * (
                    2 if role == "overload" else 1
                )
            else:  # a smoke run: at 4 x capacity half a second is hundreds of requests
                seconds = run.size.seconds * 0.5
            with CpuWatch(served.cpu_seconds, parts) as watch:
                result = run_open_loop(
                    served.url.rstrip("/") + self.open_path, rate=rate, duration_s=seconds,
                    timeout_s=timeout_s,
                )  # fmt: skip
        row = {
            "config": config,
            "load": role,
            "concurrency": None,
            **open_loop_row(result),
            "repeat": run.repeat,
            "processes": self._processes(config, self.served_plans[config]),
            **cpu_per_request(
                self.cores, result.ok,
                app_s=watch.part_seconds["app"], proxy_s=watch.part_seconds["proxy"],
                load_s=watch.load_seconds,
            ),
            "other_cpu_cores": round(watch.other_cores, 2),
        }  # fmt: skip
        if speed is not None:
            # Answered 2xx within GOOD_WITHIN_MS, of the requests sent: the replay's verdict.
            row["in_time_count"] = sum(1 for ms in result.ok_latencies_ms if ms <= GOOD_WITHIN_MS)
            row["pace"] = round(pace, 4)
            row["timeline"] = replay_timeline(arrivals, pace, result)
        return row

    def finish(self, run: Run[AppSizes], config: str, served: Any) -> None:
        """--keep-log: the proxies stop once every request the client left in flight is
        answered, so the kept log holds every request the app answered (`drain_fronts`)."""
        log = self._log_path(run, config)
        if log is None:
            return
        dropped = served.drain_fronts(run.stack, LOG_DRAIN_S)
        if served.log_stats is not None:
            self.dropped_log_lines[log.name] = dropped

    def _processes(self, config: str, plan: Any) -> int | None:
        """Worker processes the candidate runs (None: set by the user's file)."""
        if self.interface == "asgi":
            return int(plan.processes)
        layout = BY_NAME.get(config)
        if layout is None:  # set by the user's file
            return None
        return layout.workers(self.cores) if layout.workers else int(plan.processes)


def replay_timeline(arrivals: Any, pace: float, result: Any) -> dict[str, Any]:
    """Per log second of a replay: the requests the log holds, and those the layout answered 2xx
    within GOOD_WITHIN_MS, each as req/s of the time it was played in (the log's rate over
    time beside what the layout kept up with)."""
    in_time = [0] * arrivals.seconds
    for offset, ms in zip(result.ok_offsets_s, result.ok_latencies_ms, strict=True):
        if ms <= GOOD_WITHIN_MS:
            in_time[min(int(offset * pace), arrivals.seconds - 1)] += 1
    return {
        "log_second_s": round(1 / pace, 4),
        "offered_rps": [round(n * pace, 1) for n in arrivals.per_second()],
        "in_time_rps": [round(n * pace, 1) for n in in_time],
    }


def cpu_per_request(
    cores: int, requests: int, *, app_s: float, proxy_s: float, load_s: float
) -> dict[str, float | None]:
    """CPU ms per request of each part (app servers, nginx, the load generator) and the two
    ceilings they give: `cores` over all three (everything on this host, as measured) and over
    the app's alone (nginx and the load generator on other machines). None without requests."""
    if requests <= 0:
        return dict.fromkeys(CPU_KEYS)
    app, proxy, load = (1000 * s / requests for s in (app_s, proxy_s, load_s))
    total = app + proxy + load
    return {
        "app_cpu_ms_per_req": round(app, 3),
        "proxy_cpu_ms_per_req": round(proxy, 3),
        "load_cpu_ms_per_req": round(load, 3),
        "ceiling_rps": round(1000 * cores / total, 1) if total > 0 else None,
        "app_ceiling_rps": round(1000 * cores / app, 1) if app > 0 else None,
    }


def merge_parts(parts: list[Any], connections: int, seconds: float) -> Any:
    """One LoadResult from the built-in client's per-path results."""
    from servertune.bench.harness.load import LoadResult
    from servertune.bench.harness.stats import percentile, percentile_curve

    latencies = [v for part in parts for v in part.latencies_ms]
    errors = sum(p.errors for p in parts)
    non_2xx = sum(p.non_2xx for p in parts)
    if not latencies:
        nan = math.nan
        return LoadResult("builtin", connections, seconds, 0, errors, 0.0, nan, nan, nan, nan,
                          non_2xx=non_2xx, socket_errors=errors - non_2xx)  # fmt: skip
    return LoadResult(
        tool="builtin",
        connections=connections,
        duration_s=seconds,
        requests=len(latencies),
        errors=errors,
        rps=len(latencies) / seconds,
        p50_ms=percentile(latencies, 50),
        p90_ms=percentile(latencies, 90),
        p99_ms=percentile(latencies, 99),
        max_ms=max(latencies),
        distribution=tuple(percentile_curve(latencies)),
        non_2xx=non_2xx,
        socket_errors=errors - non_2xx,
    )


def open_loop_row(result: Any) -> dict[str, Any]:
    """An open-loop result as a run row: admitted answers' req/s and latencies, 503s apart
    from errors (other statuses, failed connections, timeouts), and the share shed."""
    metrics = result.metrics()
    return {
        "offered_rps": metrics["offered_rps"],
        "rps": metrics["rps"],
        "good_rps": round(
            sum(1 for ms in result.ok_latencies_ms if ms <= GOOD_WITHIN_MS) / result.duration_s, 2
        ),
        "p50_ms": metrics["p50_ms"],
        "p90_ms": metrics["p90_ms"],
        "p99_ms": metrics["p99_ms"],
        "max_ms": metrics["max_ms"],
        # How much of the admitted p99 the load generator added itself (it shares the cores).
        "send_lag_p99_ms": metrics["send_lag_p99_ms"],
        "errors": result.errors + result.timeouts,
        "refused_503": result.refused_503,
        "timeouts": result.timeouts,
        # Of them, never written (the client's own lag, or a connection not opened in time).
        "timeouts_unsent": result.timeouts_unsent,
        "shed": round(result.refused_503 / result.sent, 3) if result.sent else 0.0,
        "requests": result.sent,
    }
