"""sync_to_async under load: asgiref's three ways vs servertune's bounded pool vs native async.

The asgiref article's experiment (docs/references.md), scaled: uvicorn serves a raw ASGI app
(`servertune.bench.apps.sync_app`) on 127.0.0.1, one
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

import sys
import time
from dataclasses import dataclass
from typing import Any

from servertune.bench.apps.sync_app import VARIANTS
from servertune.bench.harness.ports import LOOPBACK
from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run

__all__ = ["SyncToAsync", "SyncToAsyncSizes", "uvicorn_argv", "variant_env"]

#: The blocking call waits uniform(0, MAX_BLOCK_MS) ms: the article's 0-2 s, scaled by 1/10.
MAX_BLOCK_MS = 200
#: wrk's per-request timeout: long enough to see asgiref's single thread's queue (20 s deep).
WRK_TIMEOUT_S = 30
#: Targets of the scenario.
MIN_THROUGHPUT_RATIO = 0.9
MAX_P99_RATIO = 1.2
#: How often the server's thread count is sampled.
THREAD_SAMPLE_S = 0.02
#: wrk threads: two keep 200 connections busy without taking a core from the server.
WRK_THREADS = 2

OURS = "servertune"
NATIVE = "native"


@dataclass(frozen=True)
class SyncToAsyncSizes:
    """Concurrent connections (the article's load, scaled to one machine: about 200),
    seconds of load per run (10 s is ~20,000 requests for native async), repeats (>= 3 for a
    median worth the name)."""

    connections: int
    seconds: int
    repeats: int


def uvicorn_argv(port: int) -> list[str]:
    """uvicorn serving the bench app on 127.0.0.1:port, quietly."""
    return [
        sys.executable, "-m", "uvicorn", "--factory", "servertune.bench.apps.sync_app:create",
        "--host", LOOPBACK, "--port", str(port), "--lifespan", "on",
        "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip


def variant_env(variant: str, threads: int, **extra: str) -> dict[str, str]:
    """The environment that tells `servertune.bench.apps.sync_app` which variant to serve."""
    return {
        "SERVERTUNE_BENCH_VARIANT": variant,
        "SERVERTUNE_BENCH_MAX_MS": str(MAX_BLOCK_MS),
        "SERVERTUNE_BENCH_THREADS": str(threads),
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


class SyncToAsync(BaseScenario[SyncToAsyncSizes]):
    """Serve each variant in turn (interleaved over repeats) and load it with wrk."""

    name = "sync-to-async"
    needs = ("uvicorn", "asgiref")
    sizes = QuickFull(
        quick=SyncToAsyncSizes(connections=40, seconds=1, repeats=1),
        full=SyncToAsyncSizes(connections=200, seconds=10, repeats=3),
    )

    def setup(self, run: Run[SyncToAsyncSizes]) -> None:
        """The workload a user would write for this app, and the pool servertune sizes for it."""
        from servertune.asgi import executor_threads
        from servertune.workload import Workload

        self.started = time.perf_counter()
        mean_ms = MAX_BLOCK_MS / 2
        # One process, every request holding a thread for ~100 ms, at the rate the connections
        # can drive (Little's law: N / mean time).
        self.workload = Workload(
            cores=1,
            peak_rps=run.size.connections / (mean_ms / 1000),
            service_time_ms=mean_ms,
            cpu_fraction=0.01,
        )
        self.threads = executor_threads(self.workload)

    def configs(self, run: Run[SyncToAsyncSizes]) -> tuple[str, ...]:
        """Native async, asgiref's three ways, servertune's pool."""
        return VARIANTS

    def start(self, run: Run[SyncToAsyncSizes], config: str) -> Any:
        """uvicorn serving the variant on a free port."""
        from servertune.bench.harness.ports import free_port

        port = free_port()
        server = run.stack.start(
            f"uvicorn-{config}-{run.repeat}",
            "uvicorn",
            uvicorn_argv(port),
            ports=[port],
            env=variant_env(config, self.threads),
        )
        return server, port

    def measure(
        self, run: Run[SyncToAsyncSizes], config: str, served: Any, level: Level
    ) -> dict[str, Any]:
        """wrk for the run's seconds while the server's thread count is sampled."""

        from servertune.bench.harness.supervision import ServerError
        from servertune.bench.harness.threads import ThreadPeak
        from servertune.bench.harness.wrk import run_wrk

        server, port = served
        with ThreadPeak(lambda: [server.process.pid], THREAD_SAMPLE_S) as threads:
            result = run_wrk(
                f"http://{LOOPBACK}:{port}/",
                connections=run.size.connections,
                duration_s=run.size.seconds,
                threads=WRK_THREADS,
                timeout_s=WRK_TIMEOUT_S,
            )
        if server.process.poll() is not None:
            raise ServerError(f"uvicorn died during the run: {server.log_tail()}")
        return {
            "config": config,
            "concurrency": run.size.connections,
            **result.metrics(),
            "peak_threads": threads.peak,
        }

    def summarize(self, run: Run[SyncToAsyncSizes], results: Results) -> Report:
        """Medians per variant (peak threads: the largest seen), ratios to native, targets."""
        from servertune.bench.harness.load_result import unanswered
        from servertune.bench.harness.versions import dist_version

        runs = []
        for variant in VARIANTS:
            row = results.median(variant)
            row["peak_threads"] = max(r["peak_threads"] for r in results.rows(variant))
            runs.append(row)
        by = {r["config"]: r for r in runs}
        native, ours = by[NATIVE], by[OURS]
        # Every ratio divides by native's run and the targets read servertune's.
        why = unanswered(*results.rows(NATIVE), *results.rows(OURS))
        ratios: dict[str, float] = {}
        p99_ratio: float | None = None
        if why is None:
            for r in runs[1:]:
                if not unanswered(*results.rows(r["config"])):
                    ratios[f"{r['config']} rps / native"] = r["rps"] / native["rps"]
            p99_ratio = ours["p99_ms"] / native["p99_ms"]
            ratios["servertune p99 / native p99"] = p99_ratio
        thread_bound = native["peak_threads"] + self.threads
        return Report(
            scenario=self.name,
            runs=runs,
            ratios={k: round(v, 3) for k, v in ratios.items()},
            targets=[
                Target(
                    "servertune throughput / native",
                    ratios.get("servertune rps / native"),
                    ">=",
                    MIN_THROUGHPUT_RATIO,
                ),
                Target("servertune p99 / native p99", p99_ratio, "<=", MAX_P99_RATIO),
                Target(
                    f"servertune peak threads <= native's + pool bound ({self.threads})",
                    float(ours["peak_threads"]),
                    "<=",
                    float(thread_bound),
                ),
            ],
            notes=[
                (
                    f"{run.size.connections} connections, {run.size.seconds} s per run, median of "
                    f"{run.repeats} interleaved runs per variant; each request blocks "
                    f"uniform(0, {MAX_BLOCK_MS}) ms"
                ),
                (
                    f"servertune pool: executor_threads(Workload(cores=1, peak_rps="
                    f"{self.workload.peak_rps:g}, service_time_ms={MAX_BLOCK_MS / 2:g})) = "
                    f"{self.threads} threads"
                ),
                (
                    "latencies are wrk's, over completed requests: a variant whose queue outlasts "
                    "the run (asgiref-default) never reports its slowest requests"
                ),
                f"took {time.perf_counter() - self.started:.1f} s",
                *([f"servertune against native: not measurable: {why}"] if why else []),
            ],
            versions={
                dist: dist_version(dist) for dist in ("servertune", "asgiref", "uvicorn", "h11")
            },
        )
