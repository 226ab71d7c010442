"""S3 GETs from moto: boto3 serial, boto3 in threads, presigned URLs, and signed async requests.

10 and 100 GETs of distinct 100 KB objects from a real moto server on 127.0.0.1, four ways:
one boto3 client in a loop; a thread pool with a boto3 session and client per thread (boto3's
docs: a Session is not thread-safe, so threaded code makes its own); presigned URLs fetched
by one pooled sync servertune session from the same thread pool; and requests built and
signed by botocore (`servertune.aws.Signer`) sent all at once through the recommended async
session, over as many connections as the pool has threads. Every way runs warm: clients, sessions and connections exist before the clock starts, as in a service.

On loopback a GET costs only CPU, which the two cores share with moto; S3 answers over a
network. So each batch runs against moto as it is, and against moto answering every request
20 ms and 100 ms later (stand-ins for network and service time; moto itself is unchanged).
Targets (checked at each added delay): signed async >= 5x faster than boto3 serial
for 10 GETs, and faster than boto3 in threads for 100.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.bench.harness.stats import median
from servertune.bench.harness.versions import dist_version

#: The ways, in table order.
CONFIGS = ("boto3 serial", "boto3 threads", "presigned sync pool", "signed async")
#: Objects fetched per batch, and each object's size.
BATCHES = (10, 100)
OBJECT_BYTES = 100 * 1024
#: Threads for the thread-pool ways: concurrent.futures' own cap (min(32, cores + 4)) at most.
MAX_THREADS = 32
#: moto's answer delays: as it is, and with stand-ins for network and service time (an
#: in-region call, and a distant one). The targets are checked at every delay but 0.
DELAYS_MS = (0.0, 20.0, 100.0)
TARGET_DELAY_MS = 20.0
#: The issue's targets.
MIN_SPEEDUP_VS_SERIAL_10 = 5.0
MIN_SPEEDUP_VS_THREADS_100 = 1.0
BUCKET = "servertune-bench"
#: Seconds a batch may take before the run is abandoned as broken.
BATCH_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class AwsSizes:
    """moto's answer delays to measure at, and interleaved repeats of every batch."""

    delays_ms: tuple[float, ...]
    repeats: int


def _keys(n: int) -> list[str]:
    return [f"obj/{i:04d}" for i in range(n)]


class Ways:
    """Everything each way needs, made before the clock starts (warm clients and pools)."""

    def __init__(self, endpoint: str, server_cpu_s: Callable[[], float] = lambda: 0.0) -> None:
        import boto3

        from servertune.aws import Signer
        from servertune.http import session

        self.endpoint = endpoint
        #: CPU seconds moto has used so far: its share of every GET, on the same two cores.
        self.server_cpu_s = server_cpu_s
        self.boto = boto3.Session()
        self.serial_client = self.boto.client("s3", endpoint_url=endpoint)
        self.local = threading.local()
        self.pool = ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix="bench-aws")
        self.signer = Signer("s3", session=self.boto, endpoint_url=endpoint)
        self.sync_http = session("urllib3", pool_maxsize=MAX_THREADS)
        self.loop = asyncio.new_event_loop()
        self.async_http: Any = None

    def _thread_client(self) -> Any:
        client = getattr(self.local, "client", None)
        if client is None:
            # boto3.Session is not thread-safe either: one session and client per thread.
            import boto3

            client = boto3.Session().client("s3", endpoint_url=self.endpoint)
            self.local.client = client
        return client

    def boto3_serial(self, keys: list[str]) -> None:
        """One client, one GET after the other."""
        for key in keys:
            self.serial_client.get_object(Bucket=BUCKET, Key=key)["Body"].read()

    def boto3_threads(self, keys: list[str]) -> None:
        """The thread pool, one client per thread."""

        def get(key: str) -> None:
            self._thread_client().get_object(Bucket=BUCKET, Key=key)["Body"].read()

        list(self.pool.map(get, keys, timeout=BATCH_TIMEOUT_S))

    def presigned_sync_pool(self, keys: list[str]) -> None:
        """Presign every URL, then fetch them from the thread pool over one pooled session."""
        urls = [self.signer.presigned_url("get_object", {"Bucket": BUCKET, "Key": k}) for k in keys]

        def get(url: str) -> None:
            response = self.sync_http.request("GET", url)
            if response.status != 200:
                raise RuntimeError(f"HTTP {response.status}")

        list(self.pool.map(get, urls, timeout=BATCH_TIMEOUT_S))

    def signed_async(self, keys: list[str]) -> None:
        """Sign each GET with botocore, send them all at once on the recommended async session."""

        async def batch() -> None:
            if self.async_http is None:
                from servertune.http import async_session

                self.async_http = async_session(pool_maxsize=MAX_THREADS)
            calls = [
                self.signer.acall(self.async_http, "get_object", {"Bucket": BUCKET, "Key": k})
                for k in keys
            ]
            await asyncio.wait_for(asyncio.gather(*calls), BATCH_TIMEOUT_S)

        self.loop.run_until_complete(batch())

    def run(self, config: str, keys: list[str]) -> None:
        """Run one batch the `config` way."""
        method: Callable[[list[str]], None] = getattr(self, config.replace(" ", "_"))
        method(keys)

    def warm(self, keys: list[str]) -> None:
        """One batch each way, untimed: clients in every thread, connections open."""
        # Start every thread of the pool and give each its client: a barrier holds each task
        # until all MAX_THREADS run, so no thread is left to be made while the clock runs.
        barrier = threading.Barrier(MAX_THREADS)

        def start_thread(_: int) -> None:
            self._thread_client()
            barrier.wait(timeout=BATCH_TIMEOUT_S)

        list(self.pool.map(start_thread, range(MAX_THREADS), timeout=BATCH_TIMEOUT_S))
        for config in CONFIGS:
            self.run(config, keys)

    def close(self) -> None:
        """Close the sessions, the pool and the loop."""
        if self.async_http is not None:
            self.loop.run_until_complete(self.async_http.close())
        self.loop.close()
        self.pool.shutdown(wait=True)
        self.sync_http.clear()


def measure_one(ways: Ways, config: str, n: int) -> dict[str, float]:
    """Wall seconds of one batch of `n` GETs, and the CPU seconds of this process and of moto."""
    cpu, server = os.times(), ways.server_cpu_s()
    start = time.perf_counter()
    ways.run(config, _keys(n))
    wall = time.perf_counter() - start
    after, server_after = os.times(), ways.server_cpu_s()
    return {
        "wall_s": wall,
        "cpu_s": (after.user + after.system) - (cpu.user + cpu.system),
        "server_cpu_s": server_after - server,
    }


def summarize(
    config: str, delay_ms: float, n: int, samples: list[dict[str, float]]
) -> dict[str, Any]:
    """One row: median batch time over the interleaved repeats, and its spread."""
    walls = [s["wall_s"] * 1000 for s in samples]
    median_ms = median(walls)
    return {
        "config": config,
        "delay_ms": delay_ms,
        "gets": n,
        "median_ms": round(median_ms, 2),
        "min_ms": round(min(walls), 2),
        "max_ms": round(max(walls), 2),
        "gets_per_s": round(n / (median_ms / 1000), 1),
        "cpu_ms": round(median(s["cpu_s"] for s in samples) * 1000, 1),
        "cpu_ms_per_get": round(median(s["cpu_s"] for s in samples) * 1000 / n, 2),
        "server_cpu_ms": round(median(s.get("server_cpu_s", 0.0) for s in samples) * 1000, 1),
        "server_cpu_ms_per_get": round(
            median(s.get("server_cpu_s", 0.0) for s in samples) * 1000 / n, 2
        ),
        "repeats": len(samples),
    }


def _setup(endpoint: str) -> None:
    import boto3

    client = boto3.Session().client("s3", endpoint_url=endpoint)
    client.create_bucket(Bucket=BUCKET)
    body = os.urandom(OBJECT_BYTES)
    for key in _keys(max(BATCHES)):
        client.put_object(Bucket=BUCKET, Key=key, Body=body)


def _require() -> None:
    """Say in one line what to install, before any server starts."""
    import importlib.util
    import shutil
    import sys

    from servertune.bench.harness.report import BenchInputError

    missing = [m for m in ("boto3", "moto", "aiohttp") if importlib.util.find_spec(m) is None]
    moto_server = Path(sys.executable).parent / "moto_server"
    if not missing and not moto_server.exists() and shutil.which("moto_server") is None:
        missing.append("moto_server")
    if missing:
        raise BenchInputError(
            f"bench aws needs {', '.join(missing)}: pip install 'servertune[aws,aiohttp]' "
            "'moto[server]'"
        )


@contextlib.contextmanager
def _borrowed_environ(values: dict[str, str]) -> Iterator[None]:
    """Set `values` in os.environ for the run, then put back what was there."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class Aws(BaseScenario[AwsSizes]):
    """Every way at every batch size and delay; one moto (and one warm `Ways`) per delay."""

    name = "aws"
    sizes = QuickFull(
        quick=AwsSizes(delays_ms=(TARGET_DELAY_MS,), repeats=1),
        full=AwsSizes(delays_ms=DELAYS_MS, repeats=5),
    )
    has_plot = True

    def setup(self, run: Run[AwsSizes]) -> None:
        """Check what is installed, borrow fake credentials, start moto per delay, warm up."""
        from servertune.bench.harness.moto import FAKE_CREDENTIALS, start_moto_with_latency

        _require()
        run.enter(_borrowed_environ(FAKE_CREDENTIALS))  # fake keys; nothing leaves 127.0.0.1
        self.ways: dict[float, Ways] = {}
        for delay in run.size.delays_ms:
            moto, endpoint = start_moto_with_latency(run.stack, delay)
            _setup(endpoint)
            ways = run.enter(contextlib.closing(Ways(endpoint, moto.cpu_seconds)))
            ways.warm(_keys(max(BATCHES)))
            self.ways[delay] = ways
        #: The level names and what they stand for: a batch size at one delay.
        self.points = {
            Level(role=f"{n} GETs +{delay:g} ms"): (delay, n)
            for delay in run.size.delays_ms
            for n in BATCHES
        }

    def configs(self, run: Run[AwsSizes]) -> tuple[str, ...]:
        """The four ways, in table order."""
        return CONFIGS

    def levels(self, run: Run[AwsSizes], config: str) -> list[Level]:
        """Every batch size at every delay."""
        return list(self.points)

    def measure(self, run: Run[AwsSizes], config: str, served: Any, level: Level) -> dict[str, Any]:
        """Wall and CPU time of one batch."""
        delay, n = self.points[level]
        return {"config": config, **measure_one(self.ways[delay], config, n)}

    def summarize(self, run: Run[AwsSizes], results: Results) -> Report:
        """A row per delay, batch and way; speed-ups and targets; versions."""
        rows = [
            summarize(config, delay, n, results.rows(config, level))
            for level, (delay, n) in self.points.items()
            for config in CONFIGS
        ]
        report = build_report(rows, run.repeats)
        report.versions = {
            d: dist_version(d) for d in ("boto3", "botocore", "moto", "aiohttp", "urllib3")
        }
        return report

    def plot(self, report: Report, path: Path) -> None:
        """Median batch time per way, one panel per delay."""
        plot_report(report, path)


def _ms(rows: list[dict[str, Any]], config: str, delay: float, n: int) -> float | None:
    row = next(
        (r for r in rows if (r["config"], r["delay_ms"], r["gets"]) == (config, delay, n)), None
    )
    return None if row is None else float(row["median_ms"])


def build_report(rows: list[dict[str, Any]], repeats: int) -> Report:
    """Speed-ups against boto3 serial and boto3 threads, and the two targets."""
    ratios: dict[str, float] = {}
    for row in rows:
        for base in ("boto3 serial", "boto3 threads"):
            base_ms = _ms(rows, base, row["delay_ms"], row["gets"])
            if row["config"] != base and base_ms and row["median_ms"]:
                name = f"{base} / {row['config']}, {row['gets']} GETs +{row['delay_ms']:g} ms"
                ratios[name] = round(base_ms / row["median_ms"], 2)

    def speedup(base: str, n: int, delay: float) -> float | None:
        base_ms, ours = (_ms(rows, c, delay, n) for c in (base, "signed async"))
        return round(base_ms / ours, 2) if base_ms and ours else None

    targets = []
    for delay in sorted({r["delay_ms"] for r in rows} - {0.0}):
        targets += [
            Target(
                f"boto3 serial / signed async, 10 GETs +{delay:g} ms",
                speedup("boto3 serial", 10, delay),
                ">=",
                MIN_SPEEDUP_VS_SERIAL_10,
            ),
            Target(
                f"boto3 threads / signed async, 100 GETs +{delay:g} ms",
                speedup("boto3 threads", 100, delay),
                ">",
                MIN_SPEEDUP_VS_THREADS_100,
            ),
        ]
    return Report(
        scenario="aws",
        runs=rows,
        ratios=ratios,
        targets=targets,
        notes=[
            (
                f"{repeats} interleaved repeat(s) per batch; median_ms is the median batch, "
                "min/max its spread; cpu_ms: this process's CPU per batch; cpu_ms_per_get and "
                "server_cpu_ms_per_get: this process's and moto's CPU per GET. moto is one "
                "process serving under one GIL, so n x server_cpu_ms_per_get is a floor no "
                "client can go below"
            ),
            (
                f"objects: {OBJECT_BYTES // 1024} KB each, distinct keys; thread pools: "
                f"{MAX_THREADS} threads; warm: every client, session and thread made and every "
                "connection opened before timing"
            ),
            (
                "delay_ms: moto (its own WSGI app and threaded server) answers each request this "
                "much later, standing in for network and service time; 0 is plain loopback, "
                "where every way is bound by the CPU it shares with moto"
            ),
        ],
    )


def plot_report(report: Report, path: Path) -> None:
    """Median batch time per way, one panel per delay, grouped by batch size."""
    from servertune.bench.harness.plotting import pyplot, save_figure

    plt = pyplot()
    delays = sorted({r["delay_ms"] for r in report.runs})
    if not delays:
        raise ValueError("no runs to plot")
    fig, axes = plt.subplots(1, len(delays), figsize=(5.5 * len(delays), 4.2), squeeze=False)
    for axis, delay in zip(axes[0], delays, strict=True):
        runs = [r for r in report.runs if r["delay_ms"] == delay]
        sizes = sorted({r["gets"] for r in runs})
        width = 0.8 / len(CONFIGS)
        for i, config in enumerate(CONFIGS):
            values = [_ms(runs, config, delay, n) or 0.0 for n in sizes]
            axis.bar([x + i * width for x in range(len(sizes))], values, width, label=config)
        axis.set_xticks([x + 0.4 - width / 2 for x in range(len(sizes))])
        axis.set_xticklabels([f"{n} GETs" for n in sizes])
        axis.set_yscale("log")
        axis.set_ylabel("batch time (ms, log)")
        axis.set_title(f"moto +{delay:g} ms per request")
        axis.grid(True, axis="y", which="both", alpha=0.3)
        axis.legend(fontsize="small")
    save_figure(plt, fig, report, path)
