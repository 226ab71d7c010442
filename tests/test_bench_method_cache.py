"""`servertune bench method-cache --quick`: the report has every variant and every target."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from servertune.bench import BenchOptions, load_scenario, run_scenario, scenario_names
from servertune.cli import app

VARIANTS = [
    "lru_cache-function",
    "lru_cache-method",
    "init-pattern",
    "methodtools",
    "cachetools",
    "servertune",
    "servertune-shared",
]


def test_method_cache_is_listed() -> None:
    """The scenario is found by its dashed name."""
    assert "method-cache" in scenario_names()


def test_quick_run_reports_every_variant_with_costs_and_memory() -> None:
    """A quick run has one row per variant with hit/miss cost, memory and survivors, and 4 targets."""
    report = run_scenario(load_scenario("method-cache"), BenchOptions(quick=True, progress=False))
    assert [run["config"] for run in report.runs] == VARIANTS
    for run in report.runs:
        assert run["hit_ns"] > 0
        assert run["miss_ns"] > 0
    rows = {run["config"]: run for run in report.runs}
    # Counting survivors is not a timing: the leaky pattern keeps every instance, ours none.
    assert rows["lru_cache-method"]["alive"] == rows["lru_cache-method"]["instances"]
    assert rows["servertune"]["alive"] == 0
    assert rows["servertune"]["alive_no_gc"] == 0
    assert len(report.targets) == 4
    assert all(t.value is not None for t in report.targets)
    json.dumps(report.to_json())


def test_cli_runs_the_quick_scenario_and_writes_json(tmp_path: Path) -> None:
    """`servertune bench method-cache --quick --json FILE` prints the table and writes the JSON."""
    out = tmp_path / "method-cache.json"
    result = CliRunner().invoke(
        app, ["bench", "method-cache", "--quick", "--no-progress", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "servertune bench method-cache" in result.output
    assert json.loads(out.read_text())["scenario"] == "method-cache"
