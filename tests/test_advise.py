"""`servertune advise`: the execution model per workload, with the numbers that decide it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from servertune.advise import ASYNC_MAX_CPU_FRACTION, SUBINTERPRETER_MIN_CPU_MS, advise
from servertune.sizing import plan_for
from servertune.sizing.defaults import WSGI_SERVER_MS_PER_REQUEST
from servertune.workload import Workload
from servertune.workload_file import Measured, MeasuredPath, Spread


def _parallel(python: str) -> dict[str, Any]:
    return {
        "scenario": "parallel",
        "machine": {"measured_python": python},
        "ratios": {"fib: asyncio / loop": 1.01, "fib: subinterpreters / loop": 0.55,
                   "fib: processes / loop": 0.6, "fetch: asyncio / loop": 0.11},
        "runs": [{"config": "subinterpreters", "task": "fib", "first_start_s": 0.03}],
    }  # fmt: skip


def test_seed000_workload_gets_processes_and_threads() -> None:
    """Half-CPU requests: processes x threads, and asyncio is poor (each request blocks the loop)."""
    advice = advise(Workload(cores=2, cpu_fraction=0.5, service_time_ms=100))
    assert advice.recommended.model == "processes x threads"
    asyncio_fit = next(f for f in advice.fits if f.model == "asyncio")
    assert asyncio_fit.verdict == "poor"
    assert any("50.0 ms" in r for r in asyncio_fit.reasons)  # cites the CPU per request


def test_many_waiting_requests_get_asyncio() -> None:
    """Mostly-waiting requests, so many in flight that threads would exceed their cap: asyncio."""
    workload = Workload(
        cores=2, cpu_fraction=0.02, service_time_ms=20, slow_call_ratio=0.5,
        slow_call_ms=2000, peak_rps=500,
    )  # fmt: skip
    advice = advise(workload)
    assert advice.recommended.model == "asyncio"
    assert any("exceeds" in r for r in advice.fits[0].reasons)


def test_waiting_requests_fit_asyncio_without_needing_it() -> None:
    """Low cpu_fraction with few requests in flight: asyncio fits, threads stay recommended."""
    advice = advise(Workload(cores=2, cpu_fraction=0.05, service_time_ms=50, peak_rps=20))
    assert advice.recommended.model == "processes x threads"
    assert next(f for f in advice.fits if f.model == "asyncio").verdict == "fits"


def test_subinterpreters_need_312() -> None:
    """On Python 3.11 sub-interpreters are poor, and the reason names the versions that have them."""
    advice = advise(Workload(cores=2), parallel=_parallel("3.11.7"))
    fit = next(f for f in advice.fits if f.model == "sub-interpreters")
    assert fit.verdict == "poor"
    assert "3.12" in fit.reasons[0]


def test_subinterpreters_fit_heavy_cpu_requests_on_312() -> None:
    """On 3.12+, a request computing >= the threshold fits sub-interpreters, citing the bench."""
    ms = SUBINTERPRETER_MIN_CPU_MS * 2
    advice = advise(
        Workload(cores=2, cpu_fraction=1.0, service_time_ms=ms), parallel=_parallel("3.12.1")
    )
    fit = next(f for f in advice.fits if f.model == "sub-interpreters")
    assert fit.verdict == "fits"
    assert any("0.55" in r for r in fit.reasons)
    assert any("30 ms" in r for r in fit.reasons)


def test_measured_spread_is_cited() -> None:
    """The [measured] table's request count and percentiles appear in the advice."""
    measured = {
        "requests": 50, "method": "GET", "path": "/x",
        "service_time_ms": {"p10": 10.0, "p50": 12.0, "p90": 40.0},
        "cpu_fraction": {"p10": 0.2, "p50": 0.25, "p90": 0.3},
    }  # fmt: skip
    text = advise(Workload(cores=2), measured=measured).format()
    assert "50 requests of GET /x" in text
    assert "p10-p90 10.0-40.0" in text
    assert "slow_call_ratio" in text  # a 4x spread points at slow calls


@settings(max_examples=40, deadline=None)
@given(
    cpu=st.floats(0.01, 1.0),
    service=st.floats(1, 5000),
    slow_ratio=st.floats(0, 1),
    rps=st.one_of(st.none(), st.floats(1, 10_000)),
)
def test_exactly_one_model_is_recommended(
    cpu: float, service: float, slow_ratio: float, rps: float | None
) -> None:
    """For any valid workload exactly one model is recommended, and asyncio only when waits dominate."""
    workload = Workload(
        cores=2, cpu_fraction=cpu, service_time_ms=service, slow_call_ratio=slow_ratio,
        slow_call_ms=1000, peak_rps=rps,
    )  # fmt: skip
    advice = advise(workload)
    assert sum(f.verdict == "recommended" for f in advice.fits) == 1
    if advice.recommended.model == "asyncio":
        assert cpu <= ASYNC_MAX_CPU_FRACTION
    assert all(f.reasons for f in advice.fits)


def test_asyncio_advice_names_the_asgi_targets_and_when_threads_run_out() -> None:
    """When asyncio wins, advise names the ASGI files to generate and the rate where threads run out."""
    workload = Workload(
        cores=2, cpu_fraction=0.02, service_time_ms=20, slow_call_ratio=0.5,
        slow_call_ms=2000, peak_rps=500,
    )  # fmt: skip
    reasons = next(f for f in advise(workload).fits if f.model == "asyncio").reasons
    # 64 threads x 2 processes / (20 ms + 0.5 x 2000 ms held) = 125 req/s.
    assert any("threads serve up to 125 req/s" in r for r in reasons)
    # Each request holds the loop 0.4 ms + 0.08 ms of the server's own work, and nginx takes
    # 0.05 ms of a core: 2 loops serve 2 x 1000 / 0.53 = 3774 req/s.
    assert any("2 loops serve 3390 req/s" in r for r in reasons)
    assert any("gen uvicorn-per-worker --interface asgi" in r for r in reasons)


def test_threads_advice_does_not_send_a_cpu_heavy_app_to_asgi() -> None:
    """Half-CPU requests keep processes x threads; the ASGI numbers are shown, no ASGI target is pushed."""
    reasons = next(
        f
        for f in advise(Workload(cores=2, cpu_fraction=0.5, service_time_ms=100)).fits
        if f.model == "asyncio"
    ).reasons
    assert any("holds its process's loop 50.1 ms" in r for r in reasons)
    assert not any("uvicorn-per-worker" in r for r in reasons)


def test_measured_mix_cites_each_path_with_its_share_and_the_mix() -> None:
    """A mixed [measured] table is cited per path (with its traffic share) and as a mix; a mix's
    wide spread is not mistaken for slow calls."""
    wide = Spread(p10=1.0, p50=2.0, p90=50.0)
    narrow = Spread(p10=0.1, p50=0.2, p90=0.3)
    paths = (
        MeasuredPath(path="/slow", weight=1, requests=5, service_time_ms=Spread(p10=50, p50=51, p90=52), cpu_fraction=narrow),
        MeasuredPath(path="/fast", weight=3, requests=5, service_time_ms=Spread(p10=1, p50=1.1, p90=1.2), cpu_fraction=narrow),
    )  # fmt: skip
    measured = Measured(requests=10, service_time_ms=wide, cpu_fraction=narrow, paths=paths)
    text = advise(Workload(cores=2), measured=measured).format()
    assert "5 requests of GET /slow (25% of traffic)" in text
    assert "5 requests of GET /fast (75% of traffic)" in text
    assert "10 requests of the weighted mix of 2 paths" in text
    assert "slow_call_ratio" not in text


def test_threads_advice_quotes_the_ceiling_that_binds() -> None:
    """When the cores cap the rate below the thread cap, the advice quotes the CPU ceiling, not the cap."""
    advice = advise(Workload(cores=2, service_time_ms=100, cpu_fraction=0.25))
    line = next(r for r in advice.fits[1].reasons if "as ASGI" in r)
    ceiling = 2 / (0.025 + WSGI_SERVER_MS_PER_REQUEST / 1000)  # the WSGI server's own share too
    assert f"threads serve up to the CPU ceiling of {ceiling:.0f} req/s" in line
    assert "threads serve up to 1280" not in line


def test_waiting_without_slow_calls_is_not_blamed_on_slow_calls() -> None:
    """A tiny cpu_fraction and no slow calls: the thread cap is hit by waiting inside the
    service time, and neither the plan's warning nor the advice mentions slow calls."""
    workload = Workload(cores=2, cpu_fraction=1e-9, slow_call_ratio=0)
    advice = advise(workload)
    warnings = plan_for(workload).warnings
    text = " ".join(r for f in advice.fits for r in f.reasons) + " ".join(warnings)
    assert "slow calls dominate" not in text.lower()
    assert "parked on slow calls" not in text
    assert "waits outside the GIL" in text
    # The loop time is floored at what a bare call and the server's own work cost: no absurd
    # capacity (2 x 1000 / (0.001 + 0.14 + 0.05 ms)).
    assert any("2 loops serve 10471 req/s" in r for f in advice.fits for r in f.reasons)


def test_asyncio_is_recommended_where_its_loops_serve_clearly_more_than_the_threads() -> None:
    """A mostly-waiting app (20 ms, 0.2 ms of CPU) whose 64 threads never run out before the CPU
    ceiling: the WSGI server's own 0.5 ms a request puts that ceiling at 2 cores / 0.7 ms, where
    two event loops serve 1.2 x that or more, so asyncio is recommended on capacity and the
    reason gives both numbers. A mostly-waiting app whose own CPU dwarfs the servers' (20 ms,
    3 ms) keeps threads: its loops would serve only 1.1 x."""
    lead = advise(Workload(cores=2, service_time_ms=20, cpu_ms=0.2))
    assert lead.recommended.model == "asyncio"
    threads = next(f for f in lead.fits if f.model == "processes x threads")
    assert any("x the CPU ceiling of" in reason for reason in threads.reasons), threads.reasons
    near = advise(Workload(cores=2, service_time_ms=20, cpu_ms=3))
    assert near.recommended.model == "processes x threads"
