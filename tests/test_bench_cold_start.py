"""`servertune bench cold-start` runs and reports its commands, ratios and target (no timing asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.bench.scenarios.cold_start import BYTECODE_NOTE, bytecode_environ, importtime_extra
from servertune.cli import app


def test_cold_start_quick_reports_every_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--quick times each command a few times and writes the report's JSON shape; its bytecode
    cache is a temporary directory of the run, gone when the run ends."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
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
        "+ a one-option Typer command",
        "servertune gen uwsgi --cores 4",
    ]
    assert set(data["versions"]) == {"python", "pydantic", "typer", "jinja2"}
    assert all(run["median_ms"] > 0 for run in data["runs"])
    assert data["targets"][0]["threshold"] == 1.15
    assert data["targets"][0]["met"] in (True, False)
    assert BYTECODE_NOTE in data["notes"]
    assert list(temp.iterdir()) == []
    importtime = [note for note in data["notes"] if note.startswith("-X importtime")]
    assert len(importtime) == 1
    assert "servertune.cli" in importtime[0]


def test_children_read_bytecode_from_a_private_cache_whatever_the_caller_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller's PYTHONDONTWRITEBYTECODE would have servertune compile its own sources on every
    timed run while its installed dependencies load bytecode: the children drop it, and write to
    and read from the scenario's cache directory, never the source tree."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    environ = bytecode_environ(str(tmp_path))
    assert "PYTHONDONTWRITEBYTECODE" not in environ
    assert environ["PYTHONPYCACHEPREFIX"] == str(tmp_path)
    assert environ["XDG_CACHE_HOME"] == str(tmp_path)
    subprocess.run([sys.executable, "-c", "import servertune.sizing"], env=environ, check=True)
    cached = {p.name for p in tmp_path.rglob("*.pyc")}
    assert any(name.startswith("plan.") for name in cached), sorted(cached)[:5]


def test_importtime_extra_sums_only_what_the_baseline_lacks_by_package() -> None:
    """Modules both import are left out; the rest are summed per package, heaviest first."""
    baseline = {"pydantic": 500, "typer": 300}
    command = {
        "pydantic": 900,
        "typer": 300,
        "pydantic.types": 1000,
        "pydantic.main": 200,
        "servertune.check.rules": 4000,
        "servertune.check": 100,
        "servertune.cli": 2000,
    }
    assert importtime_extra(baseline, command) == {
        "servertune.check": 4100,
        "servertune.cli": 2000,
        "pydantic": 1200,
    }


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
