"""`servertune bench cold-start` runs and reports its three commands, ratios and target (no timing asserted)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from servertune.cli import app


def test_cold_start_quick_reports_every_command(tmp_path: Path) -> None:
    """--quick times each command a few times and writes the report's JSON shape."""
    out = tmp_path / "cold.json"
    result = CliRunner().invoke(
        app, ["bench", "cold-start", "--quick", "--no-progress", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["scenario"] == "cold-start"
    assert [run["config"] for run in data["runs"]] == [
        "import pydantic, jinja2, typer",
        "+ pydantic.BaseModel",
        "+ one validated model",
        "servertune gen uwsgi --cores 4",
    ]
    assert all(run["median_ms"] > 0 for run in data["runs"])
    assert data["targets"][0]["threshold"] == 1.25
    assert data["targets"][0]["met"] in (True, False)


def test_bench_list_names_the_scenarios() -> None:
    """`bench --list` shows each scenario with its summary line."""
    result = CliRunner().invoke(app, ["bench", "--list"])
    assert result.exit_code == 0
    assert "cold-start" in result.stdout
    assert "Cold start of" in result.stdout


def test_unknown_scenario_exits_2() -> None:
    """An unknown scenario is bad input: exit code 2 and one line."""
    result = CliRunner().invoke(app, ["bench", "no-such"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: scenario: must be one of")


def test_unwritable_json_is_refused_before_the_run() -> None:
    """--json into a directory that does not exist fails at once with one line and exit 2."""
    result = CliRunner().invoke(
        app, ["bench", "cold-start", "--quick", "--json", "/nonexistent-dir/x.json"]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --json: cannot write")
    assert result.stdout == ""
