"""bench balance's layouts at the same levels for every layout (no 1-connection run first), with
and without waiting for an idle app before each load, plus `processes-per-worker`: the same 4
slots as 4 single-threaded processes on per-worker sockets + least_conn.

Runs `bench balance`'s own scenario class (same app, calibration, warm-up, wrk, measure()),
repeats interleaved. One JSON row per load on stdout.

    CONFIGS=shared-socket,thunder-lock,processes-per-worker,servertune \
        python balance-idle-start.py 1,2,4 3 6     # levels (x cores), repeats, seconds per load
    SETTLE=0 CONFIGS=processes-only,processes-per-worker,servertune \
        python balance-idle-start.py 1,2,4 5 6     # without the wait for an idle app
"""
import json, sys
from servertune.bench.scenarios.balance import Balance, BalanceSizes
from servertune.bench.harness.scenario import QuickFull, Level
from servertune.bench.harness.report import BenchOptions, Report
from servertune.bench.harness.runner import run_scenario

MULTS = tuple(int(x) for x in sys.argv[1].split(","))
REPEATS = int(sys.argv[2])
SECONDS = float(sys.argv[3])
import os
CONFIGS = tuple(os.environ.get("CONFIGS", "processes-only,processes-per-worker,servertune").split(","))
SETTLE = os.environ.get("SETTLE", "1") == "1"


class Exp(Balance):
    sizes = QuickFull(quick=BalanceSizes(SECONDS, MULTS, REPEATS), full=BalanceSizes(SECONDS, MULTS, REPEATS))

    def configs(self, run):
        return CONFIGS

    def levels(self, run, config):
        return [Level(n) for n in self.level_counts]

    def config_plan(self, workload, config):
        from servertune.sizing import Forced, plan_for
        if config != "processes-per-worker":
            return super().config_plan(workload, config)
        ours = plan_for(workload)
        slots = ours.processes * ours.threads
        forced = {
            "processes": Forced(slots, "forced by the benchmark: a process per slot"),
            "threads": Forced(1, "forced by the benchmark: single-threaded processes"),
        }
        return plan_for(workload, forced=forced), "per-worker", False

    def measure(self, run, config, served, level):
        if not SETTLE:  # as bench balance measured before Deployment.wait_idle
            served.wait_idle = lambda: 0.0
        row = super().measure(run, config, served, level)
        row.pop("distribution", None)
        row["repeat"] = run.repeat
        print(json.dumps({k: row[k] for k in ("config", "concurrency", "repeat", "rps", "p50_ms", "p99_ms", "app_cpu_ms_per_req", "ceiling_fraction", "other_cpu_cores", "settle_s") if k in row}), flush=True)
        return row

    def summarize(self, run, results):
        return Report(scenario="exp", runs=[])


run_scenario(Exp(), BenchOptions(quick=False, progress=False))
