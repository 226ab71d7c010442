"""Where `bench balance` loses at 4 x cores: per-process CPU, run queue, nginx's upstream choices.

Runs `bench balance`'s own scenario class (same app, calibration, warm-up, load tool and
measure()) for the layouts named, at the levels given (multiples of the cores), interleaved.
Besides the scenario's row it records the CPU seconds of nginx (its process group) and of wrk
(this process's waited children), the run queue (/proc/stat procs_running every 50 ms), and
nginx's choice of upstream per request (an extra access log of $upstream_addr). Variants of
servertune's layout, by suffix:

* `servertune+random2`: `random two least_conn;` instead of `least_conn;`
* `servertune+overflow`: each per-worker server gets `max_conns=<threads>`, and one extra
  socket that every uWSGI worker accepts from (not mapped) is the upstream's `backup`: requests
  beyond the slots wait in one queue that the first free thread takes from.

    python balance-saturation.py shared-socket,thunder-lock,servertune,servertune+overflow 2,4 4 4

Arguments: layouts, levels (x cores), repeats, seconds per load. One JSON row per load on stdout.
"""
import json, sys, re
from typing import Any
from servertune.bench.scenarios.balance import Balance, BalanceSizes
from servertune.bench.harness.scenario import QuickFull, Level
from servertune.bench.harness.report import BenchOptions
from servertune.bench.harness.runner import run_scenario
from servertune.bench.harness import deployments as D
from servertune.targets.uwsgi import render_uwsgi
from servertune.targets.nginx import render_nginx

VARIANTS = sys.argv[1].split(",")
MULTS = tuple(int(x) for x in sys.argv[2].split(","))
REPEATS = int(sys.argv[3])
SECONDS = float(sys.argv[4])


_orig = D.render_nginx
def _patched(plan, backend="uwsgi", layout="per-worker", **kw):
    return add_log(_orig(plan, backend, layout, **kw))
def add_log(t):
    return t.replace("    access_log access.log combined buffer=64k flush=1s;",
        "    log_format up '$upstream_addr $upstream_response_time';\n    access_log access.log combined buffer=64k flush=1s;\n    access_log upstream.log up buffer=64k flush=1s;")
D.render_nginx = _patched

class Exp(Balance):
    name = "balance"
    sizes = QuickFull(quick=BalanceSizes(SECONDS, MULTS, REPEATS), full=BalanceSizes(SECONDS, MULTS, REPEATS))

    def configs(self, run):
        return tuple(VARIANTS)

    def levels(self, run, config):
        return [Level(n) for n in self.level_counts]

    def start(self, run, config):
        from servertune.bench.harness.load import run_closed_loop
        base = config.split("+")[0]
        if base in ("servertune", "shared-socket", "thunder-lock", "processes-only", "threads-only"):
            if "+" not in config:
                served = super().start(run, config)
                return served
        # variants of servertune's per-worker layout
        slots = self.plan.processes * self.plan.threads
        w = D.place(self.workload, run.stack, slots)
        plan, layout, _ = self.config_plan(w, "servertune")
        ini = render_uwsgi(plan, "per-worker")
        ngx = render_nginx(plan, "uwsgi", "per-worker")
        mods = config.split("+")[1:]
        extra_port = w.base_port + plan.processes
        if "random2" in mods:
            ngx = ngx.replace("least_conn;", "random two least_conn;")
        if "overflow" in mods:
            ini = ini.replace("listen = ", f"socket = 127.0.0.1:{extra_port}\nlisten = ", 1)
            ngx = re.sub(r"(server 127\.0\.0\.1:\d+) max_fails=0 fail_timeout=5s;",
                         rf"\1 max_fails=0 fail_timeout=5s max_conns={plan.threads};", ngx)
            ngx = ngx.replace("    }\n\n    server {",
                              f"        server 127.0.0.1:{extra_port} max_fails=0 backup;\n    }}\n\n    server {{", 1)
        ngx = add_log(ngx)
        name = f"{config}-{run.repeat}".replace("+", "_")
        home = run.stack.dir / name
        home.mkdir()
        (home / "uwsgi.ini").write_text(ini)
        ports = [s.port for s in plan.sockets]
        app = run.stack.start(f"{name}-uwsgi", "uwsgi", [D.tool_path("uwsgi"), "--ini", str(home / "uwsgi.ini")],
                              ports=ports, env=self.env)
        served = D._behind_nginx(run.stack, name, plan, home, ngx, [app], {"uwsgi.ini": ini, "nginx.conf": ngx}, "/")
        run_closed_loop(served.url, connections=max(self.level_counts), duration_s=1.0)
        return served

    def measure(self, run, config, served, level):
        import resource, threading, time as _t
        samples = []
        stop = threading.Event()
        def sample():
            while not stop.is_set():
                for line in open("/proc/stat"):
                    if line.startswith("procs_running"):
                        samples.append(int(line.split()[1]))
                stop.wait(0.05)
        th = threading.Thread(target=sample); th.start()
        log = run.stack.dir / f"{config}-{run.repeat}".replace("+", "_") / "upstream.log"
        n0 = len(log.read_text().splitlines()) if log.exists() else 0
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        ng0 = served.nginx.cpu_seconds()
        row = super().measure(run, config, served, level)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        stop.set(); th.join()
        row["runq_median"] = sorted(samples)[len(samples)//2] if samples else None
        row["runq_mean"] = round(sum(samples)/len(samples), 2) if samples else None
        import collections, time as _t2
        _t2.sleep(1.2)
        if log.exists():
            lines = log.read_text().splitlines()[n0:]
            row["upstreams"] = dict(collections.Counter(l.split()[0] for l in lines))
        row["nginx_cpu_s"] = round(served.nginx.cpu_seconds() - ng0, 3)
        wrk = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
        row["wrk_cpu_s"] = round(wrk, 3)
        row.pop("distribution", None)
        print(json.dumps({k: row[k] for k in ("config", "concurrency", "rps", "p50_ms", "p99_ms", "cpu_s", "nginx_cpu_s", "wrk_cpu_s", "app_cpu_ms_per_req", "ceiling_fraction", "other_cpu_cores", "runq_median", "runq_mean", "upstreams") if k in row}), flush=True)
        return row

    def summarize(self, run, results):
        from servertune.bench.harness.report import Report
        return Report(scenario="exp", runs=[])


run_scenario(Exp(), BenchOptions(quick=False, progress=False))
