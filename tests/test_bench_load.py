"""The load generators: wrk's output parsed right, the built-in client counting every request."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from servertune.bench.harness.client import Users, run_builtin
from servertune.bench.harness.load import LoadError, run_closed_loop
from servertune.bench.harness.wrk import parse_wrk_output, run_wrk

# Seed 000's wrk output for the per-worker layout at 8 connections, verbatim.
SEED_WRK = """\
Running 20s test @ http://localhost:8000
  1 threads and 8 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   135.41ms   12.10ms 186.63ms   76.30%
    Req/Sec    59.02     15.26    80.00     61.62%
  Latency Distribution
     50%  132.56ms
     75%  141.02ms
     90%  151.48ms
     99%  176.16ms
  1177 requests in 20.02s, 232.18KB read
Requests/sec:     58.79
Transfer/sec:     11.60KB
"""


def test_wrk_output_parses_into_the_result_fields() -> None:
    """rps, p50/p90/p99 and max come from wrk's --latency text, in milliseconds."""
    result = parse_wrk_output(SEED_WRK, connections=8, duration_s=20)
    assert (result.rps, result.requests, result.errors) == (58.79, 1177, 0)
    assert (result.p50_ms, result.p90_ms, result.p99_ms, result.max_ms) == (
        132.56, 151.48, 176.16, 186.63,
    )  # fmt: skip
    assert result.duration_s == pytest.approx(20.02)


def test_wrk_errors_and_units_are_read() -> None:
    """Socket errors and non-2xx responses count as errors; us and s units convert to ms."""
    text = (
        SEED_WRK.replace("135.41ms   12.10ms 186.63ms", "800.00us   12.10ms 1.50s")
        .replace("99%  176.16ms", "99%    1.20s")
        .replace("Requests/sec", "  Socket errors: connect 1, read 2, write 0, timeout 3\n"
                 "  Non-2xx or 3xx responses: 4\nRequests/sec")
    )  # fmt: skip
    result = parse_wrk_output(text, connections=8, duration_s=20)
    assert result.errors == 10
    assert (result.p99_ms, result.max_ms) == (1200.0, 1500.0)


def test_unparsable_wrk_output_raises() -> None:
    """Output without a latency distribution is an error, not zeros."""
    with pytest.raises(LoadError):
        parse_wrk_output("Running 1s test\n", connections=1, duration_s=1)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self.path.startswith("/sleep"):
            time.sleep(float(self.path.split("=")[1]))
        status = 500 if self.path == "/fail" else 200
        body = b"hello"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    """A real threaded HTTP/1.1 keep-alive server on a free loopback port."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_builtin_client_measures_each_group(server: str) -> None:
    """Each path gets its own result with latencies and a positive request rate."""
    results = run_builtin(
        server, [Users("/", 3), Users("/sleep=0.05", 1, (0.0, 0.01))], duration_s=0.5
    )
    fast, slow = results["/"], results["/sleep=0.05"]
    assert fast.requests > slow.requests > 0
    assert fast.errors == slow.errors == 0
    assert slow.p50_ms >= 50
    assert slow.max_ms >= slow.p99_ms >= slow.p50_ms
    assert len(fast.latencies_ms) == fast.requests
    assert fast.tool == "builtin"


def test_builtin_client_waits_for_requests_in_flight_at_the_deadline(server: str) -> None:
    """A request still running when the run ends is waited for and recorded, not cut off."""
    result = run_builtin(server, [Users("/sleep=0.6", 1)], duration_s=0.1)["/sleep=0.6"]
    assert result.requests == 1
    assert result.count_over(500) == 1


def test_builtin_client_counts_unfinished_requests_as_errors(server: str) -> None:
    """A request still running after the grace period is cancelled and counted as an error."""
    results = run_builtin(
        server, [Users("/", 1), Users("/sleep=2", 1)], duration_s=0.2, grace_s=0.3
    )
    assert (results["/sleep=2"].errors, results["/sleep=2"].requests) == (1, 0)
    assert results["/sleep=2"].metrics()["max_ms"] is None
    assert results["/"].errors == 0
    assert results["/"].requests > 0


def test_builtin_client_refuses_a_run_where_nothing_succeeded(server: str) -> None:
    """Every answer a 5xx: the run raises, naming the errors, instead of reporting no latency."""
    with pytest.raises(LoadError, match=r"no request to .* succeeded \([1-9]\d* errors"):
        run_closed_loop(server + "/fail", connections=1, duration_s=0.2, tool="builtin")


def test_wrk_and_builtin_return_the_same_fields(server: str) -> None:
    """wrk and the built-in client fill the same metrics for the report."""
    by_wrk = run_wrk(server + "/", connections=2, duration_s=1)
    by_builtin = run_closed_loop(server + "/", connections=2, duration_s=0.3, tool="builtin")
    assert by_wrk.tool == "wrk"
    assert by_builtin.tool == "builtin"
    assert by_wrk.metrics().keys() == by_builtin.metrics().keys()
    assert by_wrk.requests > 0
    assert by_wrk.distribution[-1][0] == 100


def test_wrk_percentiles_never_exceed_the_exact_max() -> None:
    """Regression: p99 == max == 208035 us; wrk's %.2Lf prints 208.04 but the max rounds to 208.03."""
    text = SEED_WRK.replace("99%  176.16ms", "99%  208.04ms") + (
        "servertune-pct 50 132560\nservertune-pct 90 151480\n"
        "servertune-pct 99 208035\nservertune-pct 100 208035\n"
    )
    metrics = parse_wrk_output(text, connections=8, duration_s=20).metrics()
    assert metrics["max_ms"] >= metrics["p99_ms"] >= metrics["p90_ms"] >= metrics["p50_ms"]
