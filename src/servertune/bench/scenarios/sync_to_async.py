"""sync_to_async under load: asgiref's three ways vs servertune's bounded pool vs native async.

Seed 003, scaled: uvicorn serves a raw ASGI app (`servertune.bench.sync_app`) on 127.0.0.1, one
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

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from servertune.bench.report import BenchOptions, Report, Target

__all__ = ["run"]

#: Concurrent connections: seed 003's load, scaled to one machine (RESEARCH.md: ~200).
CONNECTIONS = 200
CONNECTIONS_QUICK = 40
#: The blocking call waits uniform(0, MAX_BLOCK_MS) ms: seed 003's 0-2 s, scaled by 1/10.
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
#: A server that is not listening after this long has failed to start.
START_TIMEOUT_S = 20.0
#: SIGTERM, then SIGKILL after this long: asgiref's single-thread variant may hold a queue of
#: blocked requests that graceful shutdown would wait out.
STOP_GRACE_S = 1.0

VARIANTS = ("native", "asgiref-default", "asgiref-unsensitive", "asgiref-context", "servertune")
OURS = "servertune"
NATIVE = "native"

# wrk prints its own summary; this script adds one JSON line with the numbers we keep.
WRK_SCRIPT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\\n{"requests": %d, "duration_us": %d, "connect": %d, "read": %d, "write": %d, '
    .. '"status": %d, "timeout": %d, "p50_us": %d, "p90_us": %d, "p99_us": %d, "max_us": %d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
"""


@dataclass(frozen=True)
class Load:
    """How hard to push: connections, seconds, and the pool servertune sizes for that."""

    connections: int
    duration_s: int
    threads: int


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_listening(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"uvicorn exited with {process.returncode}: {_tail(log)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"uvicorn did not listen on 127.0.0.1:{port} in {START_TIMEOUT_S:g} s")


def _tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-2000:]
    except OSError:
        return ""


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server's whole process group: SIGTERM, then SIGKILL after STOP_GRACE_S."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)
    except ProcessLookupError:
        pass


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


def _wrk(port: int, load: Load, script: Path) -> dict[str, Any]:
    wrk = shutil.which("wrk")
    if wrk is None:
        raise RuntimeError("wrk is not on PATH: install it (apt install wrk) to run this scenario")
    threads = max(1, min(2, os.cpu_count() or 1))
    command = [
        wrk,
        f"-t{threads}",
        f"-c{load.connections}",
        f"-d{load.duration_s}s",
        f"--timeout={WRK_TIMEOUT_S}s",
        "-s",
        str(script),
        f"http://127.0.0.1:{port}/",
    ]
    # wrk stops by itself after the duration; the timeout only guards against a hung wrk.
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=load.duration_s + 60, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr.strip()}")
    lines = [line for line in done.stdout.splitlines() if line.startswith('{"requests"')]
    if not lines:
        raise RuntimeError(f"wrk printed no summary: {done.stdout.strip()}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _one_run(variant: str, load: Load, script: Path, workdir: Path) -> dict[str, Any]:
    port = _free_port()
    log = workdir / f"{variant}.log"
    env = {
        **os.environ,
        "SERVERTUNE_BENCH_VARIANT": variant,
        "SERVERTUNE_BENCH_MAX_MS": str(MAX_BLOCK_MS),
        "SERVERTUNE_BENCH_THREADS": str(load.threads),
        "PYTHONUNBUFFERED": "1",
    }
    command = [
        sys.executable, "-m", "uvicorn", "--factory", "servertune.bench.sync_app:create",
        "--host", "127.0.0.1", "--port", str(port), "--lifespan", "on",
        "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    with open(log, "wb") as out:
        process = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        _wait_listening(port, process, log)
        with _ThreadPeak(process.pid) as threads:
            stats = _wrk(port, load, script)
        if process.poll() is not None:
            raise RuntimeError(f"uvicorn died during the run: {_tail(log)}")
    finally:
        _stop(process)
    seconds = stats["duration_us"] / 1e6
    errors = stats["connect"] + stats["read"] + stats["write"] + stats["status"] + stats["timeout"]
    return {
        "config": variant,
        "concurrency": load.connections,
        "rps": stats["requests"] / seconds if seconds else 0.0,
        "p50_ms": stats["p50_us"] / 1000,
        "p90_ms": stats["p90_us"] / 1000,
        "p99_ms": stats["p99_us"] / 1000,
        "max_ms": stats["max_us"] / 1000,
        "errors": errors,
        "timeouts": stats["timeout"],
        "peak_threads": threads.peak,
    }


def _median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {"config": rows[0]["config"], "concurrency": rows[0]["concurrency"]}
    for key in ("rps", "p50_ms", "p90_ms", "p99_ms", "max_ms", "errors", "timeouts"):
        merged[key] = round(statistics.median(r[key] for r in rows), 1)
    merged["peak_threads"] = max(r["peak_threads"] for r in rows)
    merged["runs"] = len(rows)
    return merged


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


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
    with tempfile.TemporaryDirectory(prefix="servertune-bench-") as tmp:
        workdir = Path(tmp)
        script = workdir / "summary.lua"
        script.write_text(WRK_SCRIPT)
        for repeat in range(repeats):
            for variant in VARIANTS:
                row = _one_run(variant, load, script, workdir)
                results[variant].append(row)
                if options.progress:
                    print(
                        f"  [{repeat + 1}/{repeats}] {variant}: {row['rps']:.0f} req/s, "
                        f"p99 {row['p99_ms']:.0f} ms, {row['peak_threads']} threads",
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
        versions={dist: _version(dist) for dist in ("servertune", "asgiref", "uvicorn", "h11")},
    )
