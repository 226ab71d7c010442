"""`servertune bench sync-to-async --quick` and the bench app, against real uvicorn servers."""

from __future__ import annotations

import http.client
import threading

from servertune.bench import BenchOptions, load_scenario, run_scenario, scenario_names
from servertune.bench.apps.sync_app import VARIANTS
from servertune.bench.harness.ports import free_port
from servertune.bench.harness.report import LOAD_RUN_KEYS
from servertune.bench.harness.supervision import Stack
from servertune.bench.scenarios.sync_to_async import uvicorn_argv, variant_env


def test_sync_to_async_is_listed() -> None:
    """The scenario is found by its dashed name."""
    assert "sync-to-async" in scenario_names()


def test_quick_run_reports_every_variant_in_the_load_contract() -> None:
    """A quick run has one row per variant with the load keys, peak threads, and 3 targets."""
    report = run_scenario(load_scenario("sync-to-async"), BenchOptions(quick=True, progress=False))
    assert [run["config"] for run in report.runs] == list(VARIANTS)
    for run in report.runs:
        assert set(LOAD_RUN_KEYS) <= set(run)
        assert run["rps"] > 0
        assert run["peak_threads"] >= 1
    rows = {run["config"]: run for run in report.runs}
    # Thread counts are structure, not speed: asgiref's default runs every call on one thread.
    assert rows["asgiref-default"]["peak_threads"] <= rows["native"]["peak_threads"] + 1
    assert len(report.targets) == 3
    assert "servertune rps / native" in report.ratios


def test_overloaded_bridge_answers_503_through_uvicorn() -> None:
    """With one thread and a 50 ms queue_timeout, a burst gets 200s and 503s, never a hang."""
    statuses: list[int] = []
    lock = threading.Lock()
    gate = threading.Barrier(4)

    def get(port: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            gate.wait(timeout=30)
            connection.request("GET", "/")
            status = connection.getresponse().status
        finally:
            connection.close()
        with lock:
            statuses.append(status)

    env = variant_env(
        "servertune",
        1,
        SERVERTUNE_BENCH_QUEUE_TIMEOUT="0.05",
        SERVERTUNE_BENCH_MIN_MS="500",
        SERVERTUNE_BENCH_MAX_MS="500",
    )
    with Stack(label="test-503") as stack:
        port = free_port()
        stack.start("uvicorn", "uvicorn", uvicorn_argv(port), ports=[port], env=env)
        clients = [threading.Thread(target=get, args=(port,)) for _ in range(4)]
        for client in clients:
            client.start()
        for client in clients:
            client.join(timeout=60)
    assert len(statuses) == 4
    assert 200 in statuses
    assert 503 in statuses
    assert set(statuses) <= {200, 503}
