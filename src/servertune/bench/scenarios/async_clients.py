"""Async HTTP clients: req/s, p99 and CPU per request of httpx, httpx2, aiohttp and niquests under concurrency.

One asyncio client process sends GETs to a local nginx (one worker, `return 200`, HTTP/1.1 and
HTTPS) from 1, 10, 100 and 500 concurrent tasks sharing one session, for a fixed time after a
warm-up. Configurations: httpx's and httpx2's `AsyncClient()` as they come, then
`async_session(...)` for httpx, httpx2, aiohttp and niquests, each with servertune's pool size
for that client and with the other candidate (1 or 100 connections per host). HTTPS runs use one
shared verified context (`ssl_context=`; niquests, which takes none, gets the CA file).

httpx's pool passes every request through one lock (encode/httpcore#922, #953, reverted in
#1002); httpx2, its maintained fork, reworked that pool (httpcore2 2.3.0: #974, #970; 2.8.0:
#1075). The question is how much each costs against the other clients on this machine.
Target: the recommended async session (`RECOMMENDED_ASYNC_CLIENTS[0]`) at least 2x
the req/s of httpx's default AsyncClient at 100 concurrent requests, with no errors. niquests
runs in the interpreter of .venv-niquests (its urllib3-future replaces urllib3) as a subprocess
worker, or is reported as not measured. Client and server share the machine's cores.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.bench.harness.versions import dist_version

#: Configurations in table order: (name, client library, how the session is made).
#: Each client with servertune's pool size and with the other value DEFAULT_ASYNC_POOL_MAXSIZE
#: chose between (1 or 100 connections per host), so that choice is measured too.
CONFIGS: tuple[tuple[str, str], ...] = (
    ("httpx default", "httpx"),
    ("httpx servertune", "httpx"),
    ("httpx pool_maxsize=100", "httpx"),
    ("httpx2 default", "httpx2"),
    ("httpx2 servertune", "httpx2"),
    ("httpx2 pool_maxsize=1", "httpx2"),
    ("aiohttp servertune", "aiohttp"),
    ("aiohttp pool_maxsize=1", "aiohttp"),
    ("niquests servertune", "niquests"),
    ("niquests pool_maxsize=1", "niquests"),
)
#: The issue's target: recommended session / httpx default, req/s at TARGET_CONCURRENCY.
MIN_SPEEDUP = 2.0
TARGET_CONCURRENCY = 100
BASELINE = "httpx default"
#: Where to look for the niquests interpreter unless SERVERTUNE_NIQUESTS_PYTHON says.
NIQUESTS_VENV = ".venv-niquests"


@dataclass(frozen=True)
class AsyncClientsSizes:
    """How hard and how long to push: concurrency levels per scheme, timed seconds, repeats."""

    http_levels: tuple[int, ...]
    https_levels: tuple[int, ...]
    warmup_s: float
    duration_s: float
    #: A hard cap on requests per measurement, so a run is bounded in count as well as time.
    max_requests: int
    repeats: int = 1


FULL = AsyncClientsSizes(
    (1, 10, 100, 500), (10, 100), warmup_s=0.5, duration_s=2.0, max_requests=200_000
)
QUICK = AsyncClientsSizes((1, 100), (10,), warmup_s=0.1, duration_s=0.4, max_requests=20_000)


@dataclass(frozen=True)
class Endpoint:
    """One endpoint to load: its URL and, for HTTPS, the test CA that verifies it."""

    url: str
    ca: str | None


def recommended_config() -> str:
    """The row of the session `async_session()` makes without a client name."""
    from servertune.http import RECOMMENDED_ASYNC_CLIENTS

    return f"{RECOMMENDED_ASYNC_CLIENTS[0]} servertune"


# --- one measurement (runs in this process, or in .venv-niquests for niquests) -----------------


def _make_session(config: str, ca: str | None) -> Any:
    """The session for `config`; inside a running loop (aiohttp needs one)."""
    import ssl

    from servertune.http import async_session

    context = ssl.create_default_context(cafile=ca) if ca else None
    client, setting = config.split()
    if setting == "default":  # httpx or httpx2 as it comes
        import importlib

        library = importlib.import_module(client)
        return library.AsyncClient(verify=context) if context else library.AsyncClient()
    extra: dict[str, Any] = {}
    if setting.startswith("pool_maxsize="):
        extra["pool_maxsize"] = int(setting.partition("=")[2])
    if client == "niquests":  # takes no SSLContext: the CA file goes with each request
        return async_session("niquests", server="nginx", **extra)
    return async_session(client, server="nginx", ssl_context=context, **extra)  # type: ignore[call-overload]


def _sender(config: str, session: Any, ca: str | None) -> Callable[[str], Any]:
    """An async function sending one GET and reading the whole body; raises on non-200."""
    if config.startswith("aiohttp"):

        async def aiohttp_get(url: str) -> None:
            async with session.get(url) as response:
                await response.read()
                if response.status != 200:
                    raise RuntimeError(f"HTTP {response.status}")

        return aiohttp_get

    # niquests' AsyncSession ignores a `verify` set on the session (3.21); per request it holds.
    extra = {"verify": ca} if ca and config.startswith("niquests") else {}

    async def get(url: str) -> None:
        response = await session.get(url, **extra)
        if response.status_code != 200:
            raise RuntimeError(f"HTTP {response.status_code}")

    return get


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


async def _load(
    config: str, endpoint: Endpoint, concurrency: int, size: AsyncClientsSizes
) -> dict[str, Any]:
    session = _make_session(config, endpoint.ca)
    send = _sender(config, session, endpoint.ca)
    latencies: list[float] = []
    errors: list[str] = []
    window: dict[str, float] = {}
    stop = asyncio.Event()

    async def task() -> None:
        while not stop.is_set() and len(latencies) + len(errors) < size.max_requests:
            start = time.perf_counter()
            try:
                await send(endpoint.url)
            except Exception as exc:
                if "t0" in window and not stop.is_set():
                    errors.append(type(exc).__name__)
                continue
            end = time.perf_counter()
            if "t0" in window and not stop.is_set():
                latencies.append(end - start)

    async def clock() -> None:
        await asyncio.sleep(size.warmup_s)
        window["t0"], window["cpu0"] = time.perf_counter(), _cpu()
        await asyncio.sleep(size.duration_s)
        window["t1"], window["cpu1"] = time.perf_counter(), _cpu()
        stop.set()

    try:
        tasks = [asyncio.create_task(task()) for _ in range(concurrency)]
        timer = asyncio.create_task(clock())
        deadline = size.warmup_s + size.duration_s + 30.0
        _, pending = await asyncio.wait([timer, *tasks], timeout=deadline)
        for leftover in pending:
            leftover.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    finally:
        closer = getattr(session, "aclose", None) or session.close
        await closer()
    if "t1" not in window:  # the count cap ended the run before the clock did
        window["t1"], window["cpu1"] = time.perf_counter(), _cpu()
        window.setdefault("t0", window["t1"])
        window.setdefault("cpu0", window["cpu1"])
    return {
        "latencies_ms": [round(s * 1000, 4) for s in latencies],
        "errors": len(errors),
        "error_kinds": sorted(set(errors)),
        "seconds": window["t1"] - window["t0"],
        "cpu_s": window["cpu1"] - window["cpu0"],
        "timed_out": bool(pending),
    }


def measure_one(
    config: str, endpoint: Endpoint, concurrency: int, size: AsyncClientsSizes
) -> dict[str, Any]:
    """One timed run of one config at one concurrency: raw latencies, errors, wall and CPU time."""
    return asyncio.run(_load(config, endpoint, concurrency, size))


def summarize(
    config: str, scheme: str, concurrency: int, samples: list[dict[str, Any]]
) -> dict[str, Any]:
    """One table row from interleaved repeats: the median repeat's numbers, all repeats' rps."""
    from servertune.bench.harness.stats import median, percentile

    per_repeat = []
    for sample in samples:
        lat = sample["latencies_ms"]
        done = len(lat)
        per_repeat.append(
            {
                "rps": done / sample["seconds"] if sample["seconds"] > 0 else 0.0,
                "p50_ms": percentile(lat, 50) if lat else None,
                "p90_ms": percentile(lat, 90) if lat else None,
                "p99_ms": percentile(lat, 99) if lat else None,
                "max_ms": max(lat) if lat else None,
                "cpu_us_per_request": 1e6 * sample["cpu_s"] / done if done else None,
                "errors": sample["errors"],
                "requests": done,
            }
        )

    def mid(key: str) -> float | None:
        values = [r[key] for r in per_repeat if r[key] is not None]
        return round(median(values), 3) if values else None

    return {
        "config": config,
        "client": config.split()[0],
        "scheme": scheme,
        "concurrency": concurrency,
        "rps": mid("rps"),
        "p50_ms": mid("p50_ms"),
        "p90_ms": mid("p90_ms"),
        "p99_ms": mid("p99_ms"),
        "max_ms": mid("max_ms"),
        "cpu_us_per_request": mid("cpu_us_per_request"),
        "errors": sum(r["errors"] for r in per_repeat),
        "requests": sum(r["requests"] for r in per_repeat),
        "rps_repeats": [round(r["rps"], 1) for r in per_repeat],
        "error_kinds": sorted({k for s in samples for k in s["error_kinds"]}),
    }


# --- niquests in its own interpreter ----------------------------------------------------------


def niquests_python() -> Path | None:
    """The interpreter of .venv-niquests: $SERVERTUNE_NIQUESTS_PYTHON, or ./.venv-niquests."""
    env = os.environ.get("SERVERTUNE_NIQUESTS_PYTHON")
    candidates = [Path(env)] if env else []
    candidates.append(Path.cwd() / NIQUESTS_VENV / "bin" / "python")
    return next((p for p in candidates if p.exists()), None)


def _measure_elsewhere(
    python: Path, config: str, endpoint: Endpoint, concurrency: int, size: AsyncClientsSizes
) -> dict[str, Any]:
    import servertune

    # The worker imports this very servertune, whichever checkout the harness runs from.
    source = str(Path(servertune.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH", "")) if p)
    args = json.dumps(
        {"config": config, "endpoint": asdict(endpoint), "concurrency": concurrency,
         "size": asdict(size)}
    )  # fmt: skip
    done = subprocess.run(
        [str(python), "-m", "servertune.bench.scenarios.async_clients", args],
        capture_output=True,
        text=True,
        check=False,
        timeout=size.warmup_s + size.duration_s + 120,
        env={**os.environ, "PYTHONPATH": path},
    )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"niquests worker failed: {tail}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _worker_main(argv: list[str]) -> None:
    """Entry point for the niquests subprocess: one measurement, JSON on stdout."""
    params = json.loads(argv[0])
    fields: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in params["size"].items()
    }
    size = AsyncClientsSizes(**fields)
    result = measure_one(
        params["config"], Endpoint(**params["endpoint"]), params["concurrency"], size
    )
    result["version"] = dist_version("niquests")
    result["urllib3"] = dist_version("urllib3-future")
    json.dump(result, sys.stdout)


# --- the server --------------------------------------------------------------------------------

_NGINX_CONF = """\
worker_processes 1;
pid {home}/nginx.pid;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    default_type text/plain;
    keepalive_timeout 75s;
    keepalive_requests 10000000;
    server {{
        listen 127.0.0.1:{http_port};
        location / {{ return 200 "ok"; }}
    }}
    server {{
        listen 127.0.0.1:{https_port} ssl;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        location / {{ return 200 "ok"; }}
    }}
}}
"""


def _start_nginx(stack: Any, home: Path, cert: Path, key: Path) -> tuple[Any, int, int]:
    from servertune.bench.harness.ports import free_port_block
    from servertune.bench.harness.supervision import tool_path

    base = free_port_block(2)
    for temp in ("client_body_temp", "proxy_temp", "uwsgi_temp", "fastcgi_temp", "scgi_temp"):
        (home / temp).mkdir(exist_ok=True)
    conf = home / "nginx.conf"
    conf.write_text(
        _NGINX_CONF.format(home=home, http_port=base, https_port=base + 1, cert=cert, key=key)
    )
    argv = [tool_path("nginx"), "-p", f"{home}/", "-c", str(conf), "-e", str(home / "error.log"),
            "-g", "daemon off;"]  # fmt: skip
    server = stack.start("async-clients-nginx", "nginx", argv, ports=[base, base + 1])
    return server, base, base + 1


# --- the run -----------------------------------------------------------------------------------


class AsyncClients(BaseScenario[AsyncClientsSizes]):
    """Every config at every (scheme, concurrency) level against one nginx that lives all run."""

    name = "async-clients"
    sizes = QuickFull(quick=QUICK, full=FULL)
    has_plot = True

    def setup(self, run: Run[AsyncClientsSizes]) -> None:
        """Check the clients are installed (before any server starts), find niquests, start nginx."""
        import importlib.util

        from servertune.bench.harness.report import BenchInputError
        from servertune.bench.harness.tls import make_test_pki

        missing = [m for m in ("httpx", "aiohttp") if importlib.util.find_spec(m) is None]
        if missing:
            raise BenchInputError(
                f"bench async-clients needs {' and '.join(missing)}: "
                "pip install 'servertune[httpx,aiohttp]'"
            )
        self.python = niquests_python()
        self.notes: list[str] = []
        self.versions: dict[str, str] = {}
        self.httpx2 = importlib.util.find_spec("httpx2") is not None
        if not self.httpx2:
            self.notes.append("httpx2 not measured: pip install 'servertune[httpx2]'")
        if self.python is None:
            self.notes.append(
                "niquests not measured: no .venv-niquests in the current directory (python -m "
                "venv .venv-niquests && .venv-niquests/bin/pip install 'servertune[niquests]'), "
                "or set SERVERTUNE_NIQUESTS_PYTHON"
            )
        pki = make_test_pki(run.stack.dir / "pki")
        _, http_port, https_port = _start_nginx(run.stack, run.stack.dir, pki.cert, pki.key)
        self.endpoints = {
            "http": Endpoint(f"http://127.0.0.1:{http_port}/", None),
            "https": Endpoint(f"https://127.0.0.1:{https_port}/", str(pki.ca)),
        }

    def configs(self, run: Run[AsyncClientsSizes]) -> list[str]:
        """CONFIGS in table order; niquests when its interpreter exists, httpx2 when installed."""
        left_out = {"niquests"} if self.python is None else set()
        if not self.httpx2:
            left_out.add("httpx2")
        return [c for c, client in CONFIGS if client not in left_out]

    def levels(self, run: Run[AsyncClientsSizes], config: str) -> list[Level]:
        """Every HTTP concurrency, then every HTTPS one (the scheme is the level's role)."""
        size = run.size
        return [Level(c, "http") for c in size.http_levels] + [
            Level(c, "https") for c in size.https_levels
        ]

    def measure(
        self, run: Run[AsyncClientsSizes], config: str, served: Any, level: Level
    ) -> dict[str, Any]:
        """One timed run: in this process, or in .venv-niquests's interpreter for niquests."""
        scheme, concurrency = level.role, level.concurrency
        assert concurrency is not None
        endpoint = self.endpoints[scheme]
        if config.startswith("niquests"):
            assert self.python is not None
            result = _measure_elsewhere(self.python, config, endpoint, concurrency, run.size)
            self.versions["niquests"] = result.pop("version", "?")
            self.versions["urllib3-future"] = result.pop("urllib3", "?")
        else:
            result = measure_one(config, endpoint, concurrency, run.size)
        if result["timed_out"]:
            self.notes.append(f"{config} {scheme} x{concurrency}: hit its deadline")
        done = len(result["latencies_ms"])
        rps = done / result["seconds"] if result["seconds"] > 0 else 0.0
        return {
            "config": config,
            "scheme": scheme,
            "concurrency": concurrency,
            "rps": rps,
            **result,
        }

    def summarize(self, run: Run[AsyncClientsSizes], results: Results) -> Report:
        """One row per (scheme, concurrency) and config, ratios, the 2x target, versions."""
        configs = self.configs(run)
        rows = [
            summarize(config, level.role, level.concurrency or 0, results.rows(config, level))
            for level in self.levels(run, configs[0])
            for config in configs
        ]
        report = build_report(rows, run.size, run.repeats, self.notes)
        report.versions.update(
            {
                c: dist_version(c)
                for c in ("httpx", "httpcore", "httpx2", "httpcore2", "anyio", "sniffio", "aiohttp")
            },
            **self.versions,
        )
        report.versions["nginx"] = _nginx_version()
        return report

    def plot(self, report: Report, path: Path) -> None:
        """req/s and p99 by concurrency per config (HTTP)."""
        plot_report(report, path)


def _nginx_version() -> str:
    from servertune.bench.harness.versions import tool_versions

    return tool_versions(["nginx"]).get("nginx", "?")


def _row(rows: list[dict[str, Any]], config: str, scheme: str, level: int) -> dict[str, Any] | None:
    return next(
        (
            r
            for r in rows
            if (r["config"], r["scheme"], r["concurrency"]) == (config, scheme, level)
        ),
        None,
    )


def build_report(
    rows: list[dict[str, Any]], size: AsyncClientsSizes, repeats: int, notes: list[str]
) -> Report:
    """Ratios against httpx's default at every point, the target, and the notes on method."""
    ratios: dict[str, float] = {}
    for row in rows:
        base = _row(rows, BASELINE, row["scheme"], row["concurrency"])
        if row["config"] != BASELINE and base and base["rps"] and row["rps"]:
            ratios[f"{row['config']} / {BASELINE} req/s, {row['scheme']} x{row['concurrency']}"] = (
                round(row["rps"] / base["rps"], 2)
            )
    recommended = recommended_config()
    ours = _row(rows, recommended, "http", TARGET_CONCURRENCY)
    base = _row(rows, BASELINE, "http", TARGET_CONCURRENCY)
    speedup = ours["rps"] / base["rps"] if ours and base and base["rps"] and ours["rps"] else None
    errors = sum(r["errors"] for r in rows if r["config"] == recommended)
    return Report(
        scenario="async-clients",
        runs=rows,
        ratios=ratios,
        targets=[
            Target(
                f"{recommended} / {BASELINE} req/s at {TARGET_CONCURRENCY} concurrent (http)",
                round(speedup, 2) if speedup else None,
                ">=",
                MIN_SPEEDUP,
            ),
            Target(f"{recommended} errors, all points", float(errors), "<=", 0),
        ],
        notes=[
            *notes,
            (
                f"{repeats} interleaved repeat(s) of {size.warmup_s:g} s warm-up + "
                f"{size.duration_s:g} s timed per point; every task of a point shares one "
                "session; numbers are the median repeat, rps_repeats lists each"
            ),
            (
                'server: nginx, 1 worker, `return 200 "ok"`, HTTP/1.1 and TLS (loopback test CA, '
                "one shared verified SSLContext per client run); client and server share the "
                "machine's cores, and other work may have too"
            ),
            (
                "cpu_us_per_request: the client process's user+system CPU over the timed window "
                "per completed request (the server's CPU is not included)"
            ),
        ],
    )


def plot_report(report: Report, path: Path) -> None:
    """req/s and p99 by concurrency per config (HTTP), log scales."""
    from servertune.bench.harness.plotting import pyplot, save_figure

    plt = pyplot()
    runs = [r for r in report.runs if r["scheme"] == "http" and r["rps"]]
    if not runs:
        raise ValueError("no HTTP runs to plot")
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for config in dict.fromkeys(r["config"] for r in runs):
        mine = sorted((r for r in runs if r["config"] == config), key=lambda r: r["concurrency"])
        xs = [r["concurrency"] for r in mine]
        width = 2.5 if config == recommended_config() else 1.2
        left.plot(xs, [r["rps"] for r in mine], marker="o", label=config, linewidth=width)
        right.plot(xs, [r["p99_ms"] for r in mine], marker="o", label=config, linewidth=width)
    for axis, label in ((left, "requests per second"), (right, "p99 latency (ms, log)")):
        axis.set_xscale("log")
        axis.set_xlabel("concurrent requests (log)")
        axis.set_ylabel(label)
        axis.grid(True, which="both", alpha=0.3)
    right.set_yscale("log")
    left.legend(fontsize="small")
    save_figure(plt, fig, report, path)


if __name__ == "__main__":
    _worker_main(sys.argv[1:])
