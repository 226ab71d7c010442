"""Smoke runs of the idle-race and ssl-context benchmarks: they run and report the agreed shape.

No timing is asserted here (the machine is shared); the targets are checked by the benchmarks.
"""

from __future__ import annotations

from servertune.bench import BenchOptions, load_scenario, run_scenario, scenario_names, summary

QUICK = BenchOptions(quick=True, progress=False)


def test_http_scenarios_are_listed_with_a_summary() -> None:
    """`servertune bench --list` shows idle-race and ssl-context with their docstring summary."""
    assert {"idle-race", "ssl-context"} <= set(scenario_names())
    assert summary("idle-race").startswith("Idle-timeout race")
    assert summary("ssl-context").startswith("Shared SSLContext")


def test_idle_race_quick_reports_every_client_and_config() -> None:
    """A quick idle-race run has a row per in-process client and config, and both targets."""
    report = run_scenario(load_scenario("idle-race"), QUICK)
    rows = {(r["client"], r["setting"]) for r in report.runs}
    for client in ("requests", "httpx", "urllib3"):
        assert (client, "default") in rows
        assert (client, "servertune") in rows
    niquests_measured = any(client == "niquests" for client, _ in rows)
    assert niquests_measured or any("niquests not measured" in n for n in report.notes)
    for row in report.runs:
        assert row["requests"] == 16
        assert 0 <= row["errors"] <= row["requests"]
        assert row["new_connections"] >= 1
    assert [t.name for t in report.targets] == [
        "servertune errors, all clients",
        "servertune reuse within the idle window, worst client (%)",
    ]
    assert report.to_json()["scenario"] == "idle-race"


def test_ssl_context_quick_reports_fresh_and_shared_per_client() -> None:
    """A quick ssl-context run times fresh and shared contexts for each client."""
    report = run_scenario(load_scenario("ssl-context"), QUICK)
    assert {(r["client"], r["context"]) for r in report.runs} == {
        (c, k) for c in ("requests", "httpx", "urllib3") for k in ("fresh", "shared")
    }
    for row in report.runs:
        assert row["create_ms"] > 0
        assert row["first_request_ms"] > 0
    assert "httpx create fresh/shared" in report.ratios
    assert report.targets[0].threshold == 10
    assert report.targets[0].met is not None
