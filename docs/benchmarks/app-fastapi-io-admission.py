"""Why the admitted p99 under overload exceeds the unloaded p99: FastAPI /io, per-worker uvicorn.

Varies nginx's admission limit (forced; 0 = the plan's) and the overload rate; records the
client's own send lag (scheduled -> request written) apart from the server's time (written ->
answered), and the CPU of the client, the app and nginx. Repeats interleaved. Run from the
recipe's directory (docs/recipes/bench-your-fastapi-app) with its delay server listening:

    python delay_server.py 18777 50 &
    servertune measure main:app --path /io --out io.toml
    python app-fastapi-io-admission.py http://127.0.0.1:18777/ 0,20,10,6 3080,800 2 3 io.toml .

Arguments: upstream URL, admission limits, overload rates (req/s), repeats, seconds per load,
the measured workload file, the app's directory. One JSON row per load on stdout.
"""
import asyncio, json, os, random, resource, sys, time
from pathlib import Path
from servertune.bench.harness.deployments import deploy_asgi, place
from servertune.bench.harness.supervision import Stack
from servertune.bench.harness import open_loop as ol
from servertune.bench.harness.stats import percentile
from servertune.sizing import Forced, plan_for
from servertune.workload_file import read_workload_file
from servertune.workload_file import load_workload

async def drive(url, rate, dur, timeout):
    from urllib.parse import urlsplit
    p = urlsplit(url)
    req = f"GET {p.path} HTTP/1.1\r\nHost: {p.hostname}:{p.port}\r\n\r\n".encode()
    pool = ol._Pool(p.hostname, p.port)
    rng = random.Random(1)
    lag, srv, tot, n503, to = [], [], [], 0, 0
    async def one(s):
        nonlocal n503, to
        async with pool.slots:
            try:
                async with asyncio.timeout(timeout):
                    r, w = await pool.take()
                    t0 = time.perf_counter()
                    st, keep, _ = await ol._exchange(r, w, req)
            except Exception:
                to += 1; return
            t1 = time.perf_counter()
            if keep: pool.idle.append((r, w))
            else: w.close()
        if st == 200:
            lag.append((t0 - s) * 1000); srv.append((t1 - t0) * 1000); tot.append((t1 - s) * 1000)
        elif st == 503: n503 += 1
    start = time.perf_counter(); nxt = start; tasks = []
    while True:
        nxt += rng.expovariate(rate)
        if nxt - start >= dur: break
        d = nxt - time.perf_counter()
        if d > 0: await asyncio.sleep(d)
        tasks.append(asyncio.create_task(one(nxt)))
    await asyncio.wait(tasks, timeout=timeout + 5)
    q = lambda v: round(percentile(v, 99), 1) if v else None
    m = lambda v: round(percentile(v, 50), 1) if v else None
    return dict(sent=len(tasks), ok=len(tot), ok_rps=round(len(tot)/dur), n503=n503, to=to,
                p99=q(tot), p50=m(tot), lag_p99=q(lag), lag_p50=m(lag), srv_p99=q(srv), srv_p50=m(srv))

def cpu_self():
    r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime

def main():
    os.environ["UPSTREAM_URL"] = sys.argv[1]
    app_dir = str(Path(sys.argv[7]).resolve())
    base = read_workload_file(Path(sys.argv[6])).values
    w0 = load_workload(None, {**base, "cores": 2, "app_dir": app_dir})
    cap = plan_for(w0).asgi_capacity_rps
    limits = [int(x) for x in sys.argv[2].split(",")]
    rates = [float(x) for x in sys.argv[3].split(",")]
    reps = int(sys.argv[4]); dur = float(sys.argv[5])
    out = []
    for rep in range(reps):
        for lim in limits:
            with Stack("exp") as stack:
                w = place(w0, stack, 2, app_dir=app_dir)
                forced = {} if lim == 0 else {"admission_limit": Forced(lim, "exp"), "admitted_per_process": Forced(lim // 2, "exp")}
                plan = plan_for(w, forced=forced)
                dep = deploy_asgi(stack, f"l{lim}-{rep}", plan, "uvicorn", per_worker=True, cwd=Path(app_dir), ready_path="/io")
                url = dep.url.rstrip("/") + "/io"
                asyncio.run(drive(url, 50, 1, 5))  # warm
                for rate in [0.1 * cap, *rates]:
                    a0, n0, c0 = dep.app_cpu_seconds(), dep.nginx.cpu_seconds(), cpu_self()
                    r = asyncio.run(drive(url, rate, dur, 5))
                    r.update(rep=rep, limit=plan.admission_limit, rate=round(rate),
                             app_cpu=round(dep.app_cpu_seconds()-a0, 2), nginx_cpu=round(dep.nginx.cpu_seconds()-n0, 2), client_cpu=round(cpu_self()-c0, 2), secs=dur)
                    print(json.dumps(r), flush=True); out.append(r)
    print("capacity", cap)
main()
