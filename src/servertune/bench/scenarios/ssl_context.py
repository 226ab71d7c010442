"""Shared SSLContext: session creation and first HTTPS request, fresh context vs shared one.

Building an SSLContext loads the whole CA bundle (httpx#2298, #3627; cpython#95031). httpx does
it in every `Client()`; requests and urllib3 do it for every new TLS connection. This scenario
times, per client, (1) creating a session and (2) creating one and making its first HTTPS
request to a loopback TLS server, once with a freshly built context and once with one shared
verified context (what `servertune.http.ssl_context()` returns). Both contexts load the same
bundle: certifi's plus a throwaway test CA, so the fresh one costs what a real one does.

Target (issue #4): shared-context session creation at least 10x cheaper than a fresh context.
niquests is not measured: it takes no SSLContext, and urllib3-future already caches one per
process.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from servertune.bench.report import BenchOptions, Report, Target
from servertune.bench.versions import dist_version

CLIENTS = ("requests", "httpx", "urllib3")
#: The issue's target for session creation with a shared context.
MIN_CREATE_SPEEDUP = 10.0
#: Timed repetitions per measurement (the median is reported).
FULL_SAMPLES = 40
QUICK_SAMPLES = 5


def _median_ms(action: Callable[[], None], samples: int) -> float:
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _factories(bundle: Path, shared: Any) -> dict[tuple[str, str], Callable[[], Any]]:
    """(client, context) -> a function creating that session, context creation included."""
    import ssl

    from servertune.http import session

    def fresh() -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(bundle))

    def requests_fresh() -> Any:
        s = session("requests")
        s.verify = str(bundle)  # requests builds a context per new connection from this file
        s.trust_env = False  # else $REQUESTS_CA_BUNDLE would replace it
        return s

    def requests_shared() -> Any:
        s = session("requests", ssl_context=shared)
        s.trust_env = False  # $REQUESTS_CA_BUNDLE would replace verify=True and the context
        return s

    return {
        ("requests", "fresh"): requests_fresh,
        ("requests", "shared"): requests_shared,
        ("httpx", "fresh"): lambda: session("httpx", ssl_context=fresh()),
        ("httpx", "shared"): lambda: session("httpx", ssl_context=shared),
        ("urllib3", "fresh"): lambda: session("urllib3", ca_certs=str(bundle)),
        ("urllib3", "shared"): lambda: session("urllib3", ssl_context=shared),
    }


def _get(client: Any, url: str) -> None:
    if hasattr(client, "connection_from_url"):  # urllib3
        status = client.request("GET", url).status
    else:
        status = client.get(url).status_code
    if status != 200:
        raise RuntimeError(f"HTTP {status}")


def _close(client: Any) -> None:
    (getattr(client, "close", None) or client.clear)()


def run(options: BenchOptions) -> Report:
    """Time session creation and first request per client, fresh vs shared context."""
    import ssl

    import certifi

    from servertune.bench.loopback import KeepAliveServer
    from servertune.bench.tls import make_test_pki

    samples = QUICK_SAMPLES if options.quick else FULL_SAMPLES
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="servertune-ssl-") as tmp:
        pki = make_test_pki(Path(tmp))
        bundle = Path(tmp) / "bundle.pem"
        bundle.write_text(Path(certifi.where()).read_text() + pki.ca.read_text())
        shared = ssl.create_default_context(cafile=str(bundle))
        factories = _factories(bundle, shared)
        with KeepAliveServer(5.0, tls=pki.server_context()) as server:
            for client in CLIENTS:
                for context in ("fresh", "shared"):
                    make = factories[(client, context)]
                    if options.progress:
                        print(f"ssl-context: {client} {context}", file=sys.stderr)

                    def first_request(make: Callable[[], Any] = make) -> None:
                        c = make()
                        try:
                            _get(c, server.url)
                        finally:
                            _close(c)

                    def create_once(make: Callable[[], Any] = make) -> None:
                        _close(make())

                    create = [_median_ms(create_once, samples) for _ in range(options.repeat)]
                    first = [_median_ms(first_request, samples) for _ in range(options.repeat)]
                    rows.append(
                        {
                            "config": f"{client} {context} context",
                            "client": client,
                            "context": context,
                            "create_ms": round(statistics.median(create), 3),
                            "first_request_ms": round(statistics.median(first), 3),
                        }
                    )
    ratios: dict[str, float] = {}
    for client in CLIENTS:
        fresh_row, shared_row = (
            next(r for r in rows if r["client"] == client and r["context"] == c)
            for c in ("fresh", "shared")
        )
        ratios[f"{client} create fresh/shared"] = fresh_row["create_ms"] / shared_row["create_ms"]
        ratios[f"{client} first request fresh/shared"] = (
            fresh_row["first_request_ms"] / shared_row["first_request_ms"]
        )
    return Report(
        scenario="ssl-context",
        runs=rows,
        ratios=ratios,
        targets=[
            Target(
                "httpx session creation, fresh/shared context",
                ratios["httpx create fresh/shared"],
                ">=",
                MIN_CREATE_SPEEDUP,
            )
        ],
        notes=[
            (
                f"median of {samples} timings x {options.repeat} repeat(s); CA bundle: certifi + "
                "a throwaway test CA; server: loopback TLS 1.3, ECDSA P-256"
            ),
            (
                "create_ms: build the session (httpx builds its context here; requests and urllib3 "
                "build one per new TLS connection, so their fresh cost shows in first_request_ms)"
            ),
            "niquests not measured: it takes no SSLContext and urllib3-future already caches one",
        ],
        versions={c: dist_version(c) for c in (*CLIENTS, "certifi")},
    )
