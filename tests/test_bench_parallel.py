"""`servertune bench parallel` (seed 002): report shape, waterfalls, interpreters, cleanup."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from servertune.bench import BenchOptions, Report, run_scenario
from servertune.bench.harness.waterfall import Waterfall, plot_waterfalls, text_waterfall
from servertune.bench.scenarios import parallel


def _children() -> list[int]:
    """Live processes whose parent is this test process."""
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            found.append(int(entry))
    return found


@pytest.fixture(scope="module")
def quick_report() -> Report:
    """One --quick run under this interpreter, shared by the shape tests."""
    return run_scenario(parallel.Parallel(), BenchOptions(quick=True, progress=False))


def test_every_task_and_model_has_a_row(quick_report: Report) -> None:
    """Each task x model is a run: timed with ten spans, or skipped with a reason."""
    seen = {(r["task"], r["config"]) for r in quick_report.runs}
    assert seen == {(t, m) for t in parallel.TASKS for m in parallel.MODELS}
    for run in quick_report.runs:
        if "skipped" in run:
            assert "see notes" in run["skipped"]
            continue
        assert len(run["spans"]) == parallel.COUNT
        assert all(0 <= s <= e <= run["wall_s"] + 1e-3 for s, e in run["spans"])


def test_ratios_are_to_the_plain_loop(quick_report: Report) -> None:
    """The loop's ratio is 1 and every other timed model has a `task: model / loop` ratio."""
    for run in quick_report.runs:
        if run["config"] == "loop":
            assert run["ratio"] == 1
        elif "skipped" not in run:
            assert quick_report.ratios[f"{run['task']}: {run['config']} / loop"] == run["ratio"]


def test_subinterpreters_column_matches_the_interpreter(quick_report: Report) -> None:
    """Sub-interpreters run on 3.12+ and are skipped with the versions that have them before."""
    rows = [r for r in quick_report.runs if r["config"] == "subinterpreters"]
    if sys.version_info >= (3, 12):
        assert all("spans" in r for r in rows)
    else:
        assert all(r["skipped"].startswith("not in Python") for r in rows)
        assert any("subinterpreters skipped" in n and "3.12" in n for n in quick_report.notes)


def test_table_shows_text_waterfalls_and_json_round_trips(
    quick_report: Report, tmp_path: Path
) -> None:
    """The table ends with a waterfall per task and model; the JSON has the report's contract keys."""
    text = quick_report.table()
    for task in parallel.TASKS:
        assert f"== {task}:" in text
    assert "threads" in text
    assert " 10 |" in text
    path = tmp_path / "parallel.json"
    quick_report.write_json(path)
    data = json.loads(path.read_text())
    assert data["scenario"] == "parallel"
    assert {"runs", "ratios", "targets", "notes", "machine"} <= data.keys()


def test_plot_writes_a_png(quick_report: Report, tmp_path: Path) -> None:
    """--plot draws the grid of waterfalls as a PNG."""
    path = tmp_path / "parallel.png"
    parallel.Parallel().plot(quick_report, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_other_interpreter_by_path_and_nothing_left_running(tmp_path: Path) -> None:
    """--python runs the worker under the named interpreter, and no worker or server outlives the run."""
    report = run_scenario(
        parallel.Parallel(), BenchOptions(quick=True, progress=False, python=sys.executable)
    )
    assert report.machine["measured_python"] == sys.version.split()[0]
    assert _children() == []


def test_pyenv_versions_are_found_when_the_shim_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python3.99` resolves to $PYENV_ROOT/versions/3.99.*/bin/python when nothing on PATH runs."""
    bindir = tmp_path / "versions" / "3.99.1" / "bin"
    bindir.mkdir(parents=True)
    (bindir / "python").symlink_to(sys.executable)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert parallel.find_python("python3.99") == str(bindir / "python")


def test_unknown_interpreter_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A --python that names nothing runnable raises InterpreterNotFoundError naming it."""
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    with pytest.raises(parallel.InterpreterNotFoundError, match=r"python9\.9"):
        parallel.find_python("python9.9")


def test_text_waterfall_draws_a_staircase_and_a_column() -> None:
    """Serial tasks step right row by row; parallel tasks start in the same column."""
    serial = text_waterfall(Waterfall("loop", [(i, i + 1) for i in range(4)], 4.0), 4.0, width=40)
    together = text_waterfall(Waterfall("threads", [(0, 1)] * 4, 1.0), 4.0, width=40)
    starts = [row.index("#") for row in serial[1:5]]
    assert starts == sorted(starts)
    assert len(set(starts)) == 4
    assert len({row.index("#") for row in together[1:5]}) == 1


def test_plot_marks_skipped_cells(tmp_path: Path) -> None:
    """A None cell (a skipped model) still yields a PNG."""
    path = tmp_path / "grid.png"
    plot_waterfalls([("fib", [Waterfall("loop", [(0, 1)], 1.0), None])], ["loop", "sub"], path)
    assert path.stat().st_size > 0


def test_unknown_python_is_one_line_exit_2() -> None:
    """`bench parallel --python` naming no interpreter is bad input: exit code 2, one line, no traceback."""
    from typer.testing import CliRunner

    from servertune.cli import app

    result = CliRunner().invoke(app, ["bench", "parallel", "--quick", "--python", "python9.9"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --python: ")
    assert result.stderr.count("\n") == 1
