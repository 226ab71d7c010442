"""Shared SSLContext: session creation and first HTTPS request, fresh context vs shared one.

Building an SSLContext loads the whole CA bundle (httpx#2298, #3627; cpython#95031). httpx does
it in every `Client()`; requests and urllib3 do it for every new TLS connection. This scenario
times, per client, (1) creating a session and (2) creating one and making its first HTTPS
request to a loopback TLS server, once with a freshly built context and once with one shared
verified context (what `servertune.http.ssl_context()` returns). Both contexts load the same
bundle: certifi's plus a throwaway test CA, so the fresh one costs what a real one does.

Target: shared-context session creation at least 10x cheaper than a fresh context.
niquests is not measured: it takes no SSLContext, and urllib3-future already caches one per
process.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.bench.harness.stats import median
from servertune.bench.harness.versions import dist_version

CLIENTS = ("requests", "httpx", "urllib3")
CONTEXTS = ("fresh", "shared")
#: The issue's target for session creation with a shared context.
MIN_CREATE_SPEEDUP = 10.0


@dataclass(frozen=True)
class SslContextSizes:
    """Timed repetitions per measurement (the median is reported), and repeats of those."""

    samples: int
    repeats: int = 1


def _median_ms(action: Callable[[], None], samples: int) -> float:
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return median(times) * 1000


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


class SslContext(BaseScenario[SslContextSizes]):
    """Time session creation and first request per client, fresh vs shared context."""

    name = "ssl-context"
    #: The clients compared, and the CA bundle both contexts load (certifi comes with requests).
    needs = (*CLIENTS, "certifi")
    sizes = QuickFull(quick=SslContextSizes(samples=5), full=SslContextSizes(samples=40))

    def setup(self, run: Run[SslContextSizes]) -> None:
        """A throwaway PKI, the bundle both contexts load, and a loopback TLS server."""
        import ssl

        import certifi

        from servertune.bench.harness.loopback import KeepAliveServer
        from servertune.bench.harness.tls import make_test_pki

        tmp = Path(run.enter(tempfile.TemporaryDirectory(prefix="servertune-ssl-")))
        pki = make_test_pki(tmp)
        bundle = tmp / "bundle.pem"
        bundle.write_text(Path(certifi.where()).read_text() + pki.ca.read_text())
        shared = ssl.create_default_context(cafile=str(bundle))
        self.factories = _factories(bundle, shared)
        self.url = run.enter(KeepAliveServer(5.0, tls=pki.server_context())).url

    def configs(self, run: Run[SslContextSizes]) -> list[str]:
        """`client context` for every client and both contexts."""
        return [f"{client} {context}" for client in CLIENTS for context in CONTEXTS]

    def measure(
        self, run: Run[SslContextSizes], config: str, served: Any, level: Level
    ) -> dict[str, Any]:
        """The median of `samples` creations, and of `samples` creations + first requests."""
        client, context = config.split(" ")
        make = self.factories[(client, context)]
        url = self.url

        def first_request() -> None:
            c = make()
            try:
                _get(c, url)
            finally:
                _close(c)

        def create_once() -> None:
            _close(make())

        return {
            "config": f"{client} {context} context",
            "client": client,
            "context": context,
            "create_ms": _median_ms(create_once, run.size.samples),
            "first_request_ms": _median_ms(first_request, run.size.samples),
        }

    def summarize(self, run: Run[SslContextSizes], results: Results) -> Report:
        """Medians over the repeats, fresh/shared ratios per client, the httpx target."""
        rows: list[dict[str, Any]] = []
        for config in self.configs(run):
            row = dict(results.rows(config)[0])
            for key in ("create_ms", "first_request_ms"):
                row[key] = round(results.median_of(config, key), 3)
            rows.append(row)
        ratios: dict[str, float] = {}
        for client in CLIENTS:
            fresh_row, shared_row = (
                next(r for r in rows if r["client"] == client and r["context"] == c)
                for c in CONTEXTS
            )
            ratios[f"{client} create fresh/shared"] = (
                fresh_row["create_ms"] / shared_row["create_ms"]
            )
            ratios[f"{client} first request fresh/shared"] = (
                fresh_row["first_request_ms"] / shared_row["first_request_ms"]
            )
        return Report(
            scenario=self.name,
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
                    f"median of {run.size.samples} timings x {run.repeats} repeat(s); CA bundle: "
                    "certifi + a throwaway test CA; server: loopback TLS 1.3, ECDSA P-256"
                ),
                (
                    "create_ms: build the session (httpx builds its context here; requests and "
                    "urllib3 build one per new TLS connection, so their fresh cost shows in "
                    "first_request_ms)"
                ),
                "niquests not measured: it takes no SSLContext and urllib3-future already caches one",
            ],
            versions={c: dist_version(c) for c in (*CLIENTS, "certifi")},
        )
