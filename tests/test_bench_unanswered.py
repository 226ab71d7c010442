"""A measured load run that answered no request (the cores taken by other work): the reports say
"not measurable" and why instead of dividing by it; no server is started here."""

from __future__ import annotations

import json
import types
from typing import Any

import pytest

from servertune.bench.harness.load_result import UNANSWERED, LoadResult, unanswered
from servertune.bench.harness.scenario import Level, Results
from servertune.bench.harness.wrk import parse_wrk_output
from servertune.workload import Workload

#: wrk 4.2's own output for a 1 s run whose requests were never answered (a socket that accepted
#: and never replied): 0 requests, 0 req/s, every latency 0 - what a starved run returns.
WRK_NOTHING_ANSWERED = """Running 1s test @ http://127.0.0.1:54687/
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     0.00us    0.00us   0.00us    -nan%
    Req/Sec     0.00      0.00     0.00      -nan%
  Latency Distribution
     50%    0.00us
     75%    0.00us
     90%    0.00us
     99%    0.00us
  0 requests in 1.01s, 0.00B read
Requests/sec:      0.00
Transfer/sec:       0.00B
"""


def _nothing(connections: int) -> LoadResult:
    return parse_wrk_output(WRK_NOTHING_ANSWERED, connections, 1.0)


def _answered(connections: int, rps: float, p99_ms: float) -> LoadResult:
    return LoadResult(
        tool="wrk", connections=connections, duration_s=1.0, requests=round(rps),
        errors=0, rps=rps, p50_ms=p99_ms / 2, p90_ms=p99_ms * 0.8, p99_ms=p99_ms,
        max_ms=p99_ms * 1.1, distribution=((50.0, p99_ms / 2), (99.0, p99_ms)),
    )  # fmt: skip


def test_a_run_that_answered_nothing_is_named_and_one_that_answered_is_not() -> None:
    """`unanswered`: the reason for the zero-request run wrk returns; None for answered runs."""
    assert _nothing(4).requests == 0
    assert unanswered(_nothing(4).metrics()) == UNANSWERED
    assert unanswered(_answered(4, 20.0, 100.0).metrics()) is None
    assert unanswered(_answered(4, 20.0, 100.0).metrics(), _nothing(4).metrics()) == UNANSWERED
    assert "cores were taken by other work" in UNANSWERED


def _balance(lost: str | None, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, Results]:
    """A Balance scenario as setup() leaves it (2 cores, 4 connections), and one repeat of every
    layout as measure() records it from wrk's result; `lost` (a config, or "single") answered
    nothing."""
    from servertune.bench.harness import load
    from servertune.bench.scenarios.balance import (
        CONFIGS,
        CPU_FRACTION,
        SERVICE_TIME_MS,
        SINGLE,
        Balance,
    )
    from servertune.sizing import plan_for

    scenario = Balance()
    scenario.cores, scenario.level_counts, scenario.tool, scenario.loops = 2, [4], "wrk", 1000
    scenario.workload = Workload(
        cores=2, service_time_ms=SERVICE_TIME_MS, cpu_fraction=CPU_FRACTION, app="m:app",
        memory_per_worker_mb=40, memory_limit_mb=4096,
    )  # fmt: skip
    scenario.plan = plan_for(scenario.workload)
    scenario.layouts = {n: scenario.config_plan(scenario.workload, n)[0] for n in CONFIGS}
    scenario.worker_mb, scenario.budget_mb, scenario.budget_source = 40, 4096, "RAM"
    run: Any = types.SimpleNamespace(size=types.SimpleNamespace(seconds=1.0), repeats=1)
    cpu = iter(range(1000))
    served = types.SimpleNamespace(
        url="http://127.0.0.1:1/",
        wait_idle=lambda: 0.0,
        app_cpu_seconds=lambda: float(next(cpu)),
        cpu_seconds=lambda: 0.0,
    )
    samples: dict[tuple[str, Level], list[dict[str, Any]]] = {}
    order = [("servertune", Level(1, SINGLE)), *((c, Level(4)) for c in CONFIGS)]
    for n, (config, level) in enumerate(order):
        assert level.concurrency is not None
        answered = config != lost and not (lost == "single" and level.role == SINGLE)
        result = (
            _answered(level.concurrency, 17.0 + n / 4, 150.0 + n)
            if answered
            else _nothing(level.concurrency)
        )
        monkeypatch.setattr(load, "run_closed_loop", lambda *a, r=result, **k: r)
        samples[(config, level)] = [scenario.measure(run, config, served, level)]
    return scenario, run, Results(samples)


@pytest.mark.parametrize("lost", ["shared-socket", "servertune"])
def test_balance_reports_a_level_that_answered_nothing_as_not_measurable(
    lost: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A measured run of 0 requests at c=4 (the old report divided by its req/s and p99 and
    raised ZeroDivisionError): that level's targets are not measured, its ratios absent, its
    verdict "not measurable" with the reason; the report prints and writes JSON."""
    scenario, run, results = _balance(lost, monkeypatch)
    report = scenario.summarize(run, results)
    assert [t.value for t in report.targets] == [None] * len(report.targets)
    assert report.ratios == {}
    verdicts = [n for n in report.notes if n.startswith("c=4:")]
    assert len(verdicts) == 2, report.notes  # against shared-socket and thunder-lock
    assert all("not measurable against" in n and UNANSWERED in n for n in verdicts)
    assert "not measured" in report.table()
    json.dumps(report.to_json(), allow_nan=False)


def test_balance_with_an_unanswered_single_request_run_still_compares_the_layouts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The 1-connection run answered nothing: the p99-over-single target and its note say so;
    the layouts' own comparison at c=4 stands."""
    scenario, run, results = _balance("single", monkeypatch)
    report = scenario.summarize(run, results)
    by_name = {t.name: t for t in report.targets}
    assert by_name["servertune p99 / single-request latency at 4 connections"].value is None
    assert by_name["servertune req/s / CPU ceiling at 4 connections"].value is not None
    assert report.ratios
    assert f"single-request latency (p50 at 1 connection): not measurable: {UNANSWERED}" in (
        report.notes
    )


def test_balance_with_every_run_answered_judges_every_target(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The control: every run answered, so every target has a value and a verdict."""
    scenario, run, results = _balance(None, monkeypatch)
    report = scenario.summarize(run, results)
    assert all(t.value is not None and t.met is not None for t in report.targets)
    assert not any("not measurable" in n for n in report.notes)


def _rows(result: LoadResult, **extra: Any) -> dict[str, Any]:
    return {**result.metrics(), "distribution": [list(p) for p in result.distribution], **extra}


def test_sync_to_async_with_native_unanswered_says_not_measurable() -> None:
    """The native run answered nothing (the old report divided every req/s by its 0): the
    ratios to native and servertune's throughput and p99 targets are not measured, and a note
    says why; the thread-count target, which divides by nothing, is still judged."""
    from servertune.bench.apps.sync_app import VARIANTS
    from servertune.bench.scenarios.sync_to_async import NATIVE, SyncToAsync

    scenario = SyncToAsync()
    scenario.started, scenario.threads = 0.0, 8
    scenario.workload = Workload(cores=1, peak_rps=100.0, service_time_ms=25.0)
    samples = {
        (v, Level()): [
            {"config": v, "concurrency": 4, "peak_threads": 3}
            | _rows(_nothing(4) if v == NATIVE else _answered(4, 50.0, 80.0))
        ]
        for v in VARIANTS
    }
    run: Any = types.SimpleNamespace(
        size=types.SimpleNamespace(connections=4, seconds=1.0), repeats=1
    )
    report = scenario.summarize(run, Results(samples))
    values = {t.name.split(" (")[0]: t.value for t in report.targets}
    assert values["servertune throughput / native"] is None
    assert values["servertune p99 / native p99"] is None
    assert values["servertune peak threads <= native's + pool bound"] == 3.0
    assert report.ratios == {}
    assert f"servertune against native: not measurable: {UNANSWERED}" in report.notes


def test_granian_threads_with_an_unanswered_pool_at_the_top_level_says_not_measurable() -> None:
    """One pool's run at the top level answered nothing: no ratio, the target not measured,
    a note with the reason (the old report divided by servertune's 0 req/s)."""
    from servertune.bench.scenarios.granian_threads import CONFIGS, GranianThreads

    scenario = GranianThreads()
    scenario.cores, scenario.threads = 2, {}
    samples = {
        (c, Level(4)): [
            {"config": c, "concurrency": 4, "peak_threads": 9, "settle_s": 0.0}
            | _rows(_nothing(4) if c == "servertune" else _answered(4, 30.0, 90.0))
        ]
        for c in CONFIGS
    }
    run: Any = types.SimpleNamespace(
        size=types.SimpleNamespace(per_core=(2,), seconds=1.0), repeats=1
    )
    report = scenario.summarize(run, Results(samples))
    assert [t.value for t in report.targets] == [None]
    assert report.ratios == {}
    assert f"c=4: not measurable: {UNANSWERED}" in report.notes
