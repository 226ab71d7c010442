"""sync_to_async under load: asgiref's three ways vs servertune's bounded pool vs native async.

A published Django load test (docs/references.md), scaled: uvicorn serves a raw ASGI app (`servertune.bench.sync_app`) on 127.0.0.1, one
process per variant; wrk keeps CONNECTIONS connections busy; every request blocks for
uniform(0, 200) ms. Variants: native `asyncio.sleep`; asgiref's default (thread_sensitive=True:
one thread); asgiref thread_sensitive=False (the loop's default pool, min(32, cpus + 4)); asgiref
inside a per-request `ThreadSensitiveContext` (Django's way: a thread per request); servertune's
`sync_to_async` on a pool `install()`ed with `executor_threads()` of the matching workload.

Each run reports requests/s, p50/p90/p99/max latency (wrk, completed requests only), errors
(socket errors, timeouts and non-2xx) and the server's peak thread count (sampled from
/proc/PID/status). Targets: servertune >= 90% of native throughput, p99 <= 1.2 x native's,
and no more threads than native's plus the pool's bound.
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from servertune.bench.load import run_wrk
from servertune.bench.report import BenchOptions, Report, Target
from servertune.bench.servers import LOOPBACK, ServerError, Stack, free_port
from servertune.bench.versions import dist_version

__all__ = ["run"]

#: Concurrent connections: that load test's, scaled to one machine (~200).
CONNECTIONS = 200
CONNECTIONS_QUICK = 40
#: The blocking call waits uniform(0, MAX_BLOCK_MS) ms: that load test's 0-2 s, scaled by 1/10.
MAX_BLOCK_MS = 200
#: Seconds of load per run. 10 s is ~20,000 requests for native async; quick is a smoke run.
DURATION_S = 10
DURATION_QUICK_S = 1
#: Runs per variant (interleaved); the table shows medians. House rule: at least 3.
MIN_REPEATS = 3
#: wrk's per-request timeout: long enough to see asgiref's single thread's queue (20 s deep).
WRK_TIMEOUT_S = 30
#: Targets from issue 5.
MIN_THROUGHPUT_RATIO = 0.9
MAX_P99_RATIO = 1.2
#: How often the server's thread count is sampled.
THREAD_SAMPLE_S = 0.02
#: wrk threads: two keep 200 connections busy without taking a core from the server.
WRK_THREADS = 2

VARIANTS = ("native", "asgiref-default", "asgiref-unsensitive", "asgiref-context", "servertune")
OURS = "servertune"
NATIVE = "native"


@dataclass(frozen=True)
class Load:
    """How hard to push: connections, seconds, and the pool servertune sizes for that."""

    connections: int
    duration_s: int
    threads: int


class _ThreadPeak:
    """Samples /proc/PID/status `Threads:` in the background; `peak` is the largest seen."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        path = f"/proc/{self.pid}/status"
        while not self._stop.is_set():
            try:
                with open(path) as handle:
                    for line in handle:
                        if line.startswith("Threads:"):
                            self.peak = max(self.peak, int(line.split()[1]))
                            break
            except OSError:
                return
            self._stop.wait(THREAD_SAMPLE_S)

    def __enter__(self) -> _ThreadPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def _one_run(variant: str, load: Load) -> dict[str, Any]:
    with Stack(label=f"sync-to-async-{variant}") as stack:
        port = free_port()
        server = stack.start(
            f"uvicorn-{variant}",
            "uvicorn",
            uvicorn_argv(port),
            ports=[port],
            env=variant_env(variant, load.threads),
        )
        with _ThreadPeak(server.process.pid) as threads:
            result = run_wrk(
                f"http://{LOOPBACK}:{port}/",
                connections=load.connections,
                duration_s=load.duration_s,
                threads=WRK_THREADS,
                timeout_s=WRK_TIMEOUT_S,
            )
        if server.process.poll() is not None:
            raise ServerError(f"uvicorn died during the run: {server.log_tail()}")
    return {
        "config": variant,
        "concurrency": load.connections,
        **result.metrics(),
        "peak_threads": threads.peak,
    }


def uvicorn_argv(port: int) -> list[str]:
    """uvicorn serving the bench app on 127.0.0.1:port, quietly."""
    return [
        sys.executable, "-m", "uvicorn", "--factory", "servertune.bench.sync_app:create",
        "--host", LOOPBACK, "--port", str(port), "--lifespan", "on",
        "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip


def variant_env(variant: str, threads: int, **extra: str) -> dict[str, str]:
    """The environment that tells `servertune.bench.sync_app` which variant to serve."""
    return {
        "SERVERTUNE_BENCH_VARIANT": variant,
        "SERVERTUNE_BENCH_MAX_MS": str(MAX_BLOCK_MS),
        "SERVERTUNE_BENCH_THREADS": str(threads),
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


def _median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {"config": rows[0]["config"], "concurrency": rows[0]["concurrency"]}
    for key in ("rps", "p50_ms", "p90_ms", "p99_ms", "max_ms", "errors", "requests"):
        merged[key] = round(statistics.median(r[key] for r in rows), 1)
    merged["peak_threads"] = max(r["peak_threads"] for r in rows)
    merged["runs"] = len(rows)
    return merged


def run(options: BenchOptions) -> Report:
    """Serve each variant in turn (interleaved over repeats) and load it with wrk."""
    from servertune.asgi import executor_threads
    from servertune.workload import Workload

    connections = CONNECTIONS_QUICK if options.quick else CONNECTIONS
    mean_ms = MAX_BLOCK_MS / 2
    # The workload a user would write for this app: one process, every request holding a
    # thread for ~100 ms, at the rate the connections can drive (Little's law: N / mean time).
    workload = Workload(
        cores=1,
        peak_rps=connections / (mean_ms / 1000),
        service_time_ms=mean_ms,
        cpu_fraction=0.01,
    )
    load = Load(
        connections=connections,
        duration_s=DURATION_QUICK_S if options.quick else DURATION_S,
        threads=executor_threads(workload),
    )
    repeats = 1 if options.quick else max(MIN_REPEATS, options.repeat)
    results: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    started = time.perf_counter()
    for repeat in range(repeats):
        for variant in VARIANTS:
            row = _one_run(variant, load)
            results[variant].append(row)
            if options.progress:
                print(
                    f"  [{repeat + 1}/{repeats}] {variant}: {row['rps']:.0f} req/s, "
                    f"p99 {row['p99_ms']:.0f} ms, {row['peak_threads']} threads",
                    file=sys.stderr,
                    flush=True,
                )
    runs = [_median_row(results[v]) for v in VARIANTS]
    by = {r["config"]: r for r in runs}
    native, ours = by[NATIVE], by[OURS]
    ratios = {f"{r['config']} rps / native": r["rps"] / native["rps"] for r in runs[1:]}
    p99_ratio = ours["p99_ms"] / native["p99_ms"] if native["p99_ms"] else float("inf")
    ratios["servertune p99 / native p99"] = p99_ratio
    thread_bound = native["peak_threads"] + load.threads
    return Report(
        scenario="sync-to-async",
        runs=runs,
        ratios={k: round(v, 3) for k, v in ratios.items()},
        targets=[
            Target(
                "servertune throughput / native",
                ratios["servertune rps / native"],
                ">=",
                MIN_THROUGHPUT_RATIO,
            ),
            Target("servertune p99 / native p99", p99_ratio, "<=", MAX_P99_RATIO),
            Target(
                f"servertune peak threads <= native's + pool bound ({load.threads})",
                float(ours["peak_threads"]),
                "<=",
                float(thread_bound),
            ),
        ],
        notes=[
            (
                f"{connections} connections, {load.duration_s} s per run, median of {repeats} "
                f"interleaved runs per variant; each request blocks uniform(0, {MAX_BLOCK_MS}) ms"
            ),
            (
                f"servertune pool: executor_threads(Workload(cores=1, peak_rps="
                f"{workload.peak_rps:g}, service_time_ms={mean_ms:g})) = {load.threads} threads"
            ),
            (
                "latencies are wrk's, over completed requests: a variant whose queue outlasts "
                "the run (asgiref-default) never reports its slowest requests"
            ),
            f"took {time.perf_counter() - started:.1f} s",
        ],
        versions={dist: dist_version(dist) for dist in ("servertune", "asgiref", "uvicorn", "h11")},
    )
