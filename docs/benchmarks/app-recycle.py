"""The targeted run behind docs/benchmarks.md's "servertune-uwsgi's p99 at 64 connections".

servertune's per-worker layouts (uWSGI, and one gunicorn per socket) on httpbin at 66
connections for 10 s from a fresh start, with the old fixed recycling (max_requests 5000), with
the plan's (derived from the rate: at most one restart a worker in ten minutes) and with it
forced off, interleaved twice; prints one JSON line per run (app-recycle.jsonl). Run it alone
(no other benchmark at the same time) as `python app-recycle.py 10`.
"""

import json
import sys

from servertune.bench.harness.deployments import deploy_gunicorn, deploy_uwsgi, place
from servertune.bench.harness.supervision import Stack
from servertune.bench.harness.wrk import run_wrk
from servertune.bench.scenarios.app import wrk_lua
from servertune.sizing import Forced, plan_for
from servertune.workload import Workload

VARIANTS = (
    "uwsgi max-requests 5000",
    "uwsgi the plan's max-requests",
    "uwsgi no recycling",
    "gunicorn-per-worker max-requests 5000",
    "gunicorn-per-worker the plan's max-requests",
    "gunicorn-per-worker no recycling",
)
FORCED = {
    "max-requests 5000": {"max_requests": Forced(5000, "the fixed count before the rate rule")},
    "the plan's max-requests": {},
    "no recycling": {"max_requests": Forced(10_000_000, "recycling off for the comparison")},
}

env = {"UWSGI_VIRTUALENV": sys.prefix}
workload = Workload(cores=2, service_time_ms=25.7, cpu_fraction=0.03, app="httpbin:app")
lua = wrk_lua((("/delay/0.05", 1.0), ("/get", 1.0)))
seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
runs = 0
with Stack("recycle") as stack:
    for repeat in range(2):
        for variant in VARIANTS:
            placed = place(workload, stack, 2, app_dir=str(stack.dir))
            forced = next(f for key, f in FORCED.items() if variant.endswith(key))
            plan = plan_for(placed, forced=forced)
            name = f"v{repeat}-{runs}"
            deploy = deploy_uwsgi if variant.startswith("uwsgi") else deploy_gunicorn
            served = deploy(stack, name, plan, layout="per-worker", env=env, ready_path="/get")
            result = run_wrk(served.url, connections=66, duration_s=seconds, lua=lua)
            logs = "".join(s.log.read_text(errors="replace") for s in served.app_servers)
            # uWSGI logs each respawn; gunicorn logs every boot (one per instance at start).
            boots = logs.count("Booting worker") - (2 if "gunicorn" in variant else 0)
            restarts = logs.count("Respawned uWSGI worker") + boots
            row = {"variant": variant, "repeat": repeat, "rps": round(result.rps, 1),
                   "p50": result.p50_ms, "p90": result.p90_ms, "p99": result.p99_ms,
                   "max": result.max_ms, "errors": result.errors, "restarts": restarts,
                   "requests": result.requests, "max_requests": plan.max_requests}  # fmt: skip
            print(json.dumps(row), flush=True)
            runs += 1
            served.stop(stack)
