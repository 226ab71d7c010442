"""The thin `measure` and `advise` commands: options reach the library, output reaches the user."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from servertune import measure
from servertune.cli import app

#: The repository root: the test apps import as `tests.measure_apps`.
HERE = Path(__file__).resolve().parents[1]
runner = CliRunner()


def test_measure_writes_a_workload_gen_reads(tmp_path: Path) -> None:
    """`measure --out` writes a TOML that `gen --workload` turns into a uWSGI config for the app."""
    out = tmp_path / "workload.toml"
    result = runner.invoke(
        app, ["measure", "tests.measure_apps:pure_cpu", "--app-dir", str(HERE), "--requests", "3",
              "--warmup", "0", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "cpu_fraction" in result.output
    gen = runner.invoke(app, ["gen", "uwsgi", "--workload", str(out)])
    assert gen.exit_code == 0, gen.output
    assert "module = tests.measure_apps:pure_cpu" in gen.output


def test_measure_bad_input_exits_2() -> None:
    """A malformed header or an app that cannot be imported is one error line and exit code 2."""
    bad_header = runner.invoke(app, ["measure", "tests.measure_apps:pure_cpu", "-H", "nocolon"])
    assert bad_header.exit_code == 2
    missing = runner.invoke(app, ["measure", "no_such_module_here:app", "--app-dir", str(HERE)])
    assert missing.exit_code == 2
    assert "cannot import" in missing.output


def test_measure_help_states_the_library_defaults() -> None:
    """The defaults `--help` quotes are the library's constants (the CLI does not import them)."""
    text = runner.invoke(app, ["measure", "--help"], env={"COLUMNS": "200"}).output
    assert f"default {measure.DEFAULT_REQUESTS})" in text
    assert f"default {measure.DEFAULT_WARMUP})" in text
    assert f"default {measure.DEFAULT_MAX_SECONDS:g})" in text


def test_advise_reads_the_measured_file_and_cites_it(tmp_path: Path) -> None:
    """`advise --workload` on a measured file recommends a model and cites the measured spread."""
    out = tmp_path / "workload.toml"
    runner.invoke(
        app, ["measure", "tests.measure_apps:pure_sleep", "--app-dir", str(HERE), "--requests", "3",
              "--out", str(out)],
    )  # fmt: skip
    result = runner.invoke(app, ["advise", "--workload", str(out), "--cores", "2"])
    assert result.exit_code == 0, result.output
    assert "recommended: asyncio" in result.output  # 20 ms of pure waiting: 1000s in flight
    assert "3 requests of GET /" in result.output
    as_json = runner.invoke(app, ["advise", "--workload", str(out), "--json"])
    assert json.loads(as_json.stdout)["recommended"]


def test_advise_rejects_a_file_that_is_not_a_parallel_report(tmp_path: Path) -> None:
    """--parallel must be a `bench parallel --json` report: anything else is exit code 2."""
    other = tmp_path / "other.json"
    other.write_text('{"scenario": "hol"}')
    result = runner.invoke(app, ["advise", "--parallel", str(other)])
    assert result.exit_code == 2
    assert "bench parallel" in result.output


def test_measure_refuses_a_path_with_control_characters(tmp_path: Path) -> None:
    """A --path carrying a newline (it would reach the workload file) is bad input: exit 2, one line."""
    out = tmp_path / "w.toml"
    result = runner.invoke(
        app, ["measure", "tests.measure_apps:pure_cpu", "--app-dir", str(HERE),
              "--path", "/x\n[workload]\ncores = 64 #", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --path: ")
    assert result.stderr.count("\n") == 1
    assert not out.exists()
