"""The spread of `bench app`'s closed-loop req/s: 2.5 s (wrk: 2 s) against 3 s loads.

Same candidates, same level, interleaved (the two lengths alternate which goes first, round by
round); every round restarts each candidate, as the default run does. Run from the recipe's
directory (docs/recipes/bench-your-fastapi-app) with its delay server listening, on a machine
running nothing else:

    python delay_server.py 18777 50 &
    UPSTREAM_URL=http://127.0.0.1:18777/ python app-load-seconds.py \
        4,16 6 servertune-uvicorn-per-worker,gunicorn-uvicorn-2n+1 out.json

Arguments: connections, rounds, candidates, output JSON. wrk takes whole seconds: the "2.5s"
loads ran 2 s (`bench/harness/wrk.py` rounds the length), which is what the default run uses.
"""
import dataclasses, json, statistics, sys, time
from pathlib import Path
from servertune.bench.harness.report import BenchOptions, Report
from servertune.bench.harness.rounds import FixedRounds
from servertune.bench.harness.runner import run_scenario
from servertune.bench.harness.scenario import Level
from servertune.bench.scenarios.app.inputs import AppInput
from servertune.bench.scenarios.app.scenario import AppBench

CONNS = [int(c) for c in sys.argv[1].split(",")]
ROUNDS = int(sys.argv[2])
ONLY = tuple(sys.argv[3].split(","))
OUT = Path(sys.argv[4])

class Spread(AppBench):
    def configs(self, run):
        return [c for c in super().configs(run) if c in ONLY]
    def levels(self, run, config):
        out = []
        for n in CONNS:
            out += [Level(n, "2.5s"), Level(n, "3s")]
        return out
    def rounds(self, run, order):
        class R(FixedRounds):
            def next_round(inner):
                plan = FixedRounds.next_round(inner)
                if plan is None or inner.done % 2:
                    return plan
                # ABBA: every other round the 3 s load goes first
                return [(c, [lv for pair in zip(levels[1::2], levels[0::2]) for lv in pair]) for c, levels in plan]
        return R(list(order), ROUNDS)
    def measure(self, run, config, served, level):
        seconds = 2.5 if level.role == "2.5s" else 3.0
        run.size = dataclasses.replace(run.size, seconds=seconds)
        row = super().measure(run, config, served, Level(level.concurrency))
        row["seconds"] = seconds
        return row
    def summarize(self, run, results):
        rows = []
        for (config, level), samples in results.samples.items():
            rps = [s["rps"] for s in samples]
            med = statistics.median(rps)
            rows.append({"config": config, "concurrency": level.concurrency, "seconds": level.role,
                         "rps": rps, "median": med,
                         "range_pct": round(100 * (max(rps) - min(rps)) / med, 1),
                         "cv_pct": round(100 * statistics.stdev(rps) / statistics.mean(rps), 1) if len(rps) > 1 else 0,
                         "outside_5pct": sum(abs(v - med) > 0.05 * med for v in rps),
                         "other_cores": [s["other_cpu_cores"] for s in samples]})
        return Report("spread", rows)

app = AppInput(app="main:app", paths=(("/io", 1.0),), interface="asgi", concurrency=tuple(CONNS))
t = time.monotonic()
report = run_scenario(Spread(), BenchOptions(progress=True, extra={"app": app}))
json.dump({"rows": report.runs, "time_spent": report.time_spent, "elapsed_s": report.elapsed_s}, OUT.open("w"), indent=1)
for r in report.runs:
    print(r["config"], r["concurrency"], r["seconds"], "median", r["median"], "range%", r["range_pct"], "cv%", r["cv_pct"], "out5%", r["outside_5pct"])
