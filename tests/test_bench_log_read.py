"""`bench log-read --quick`: every reader reads every line of the generated log, servertune's p99
agrees with the `re` loop's exact one within the sketch's accuracy, and the report has its two
targets and ratios (the numbers themselves are the full run's, in docs/benchmarks.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from servertune.bench import BenchOptions, load_scenario, run_scenario
from servertune.bench.scenarios.log_read import FORMAT, write_log
from servertune.logs import build_format, read_traffic
from servertune.logs.sketch import RELATIVE_ACCURACY


def test_generated_log_parses_whole_with_ids_collapsed(tmp_path: Path) -> None:
    log = tmp_path / "access.log"
    write_log(log, 1000)
    traffic = read_traffic([log], build_format("nginx", FORMAT))
    assert (traffic.lines, traffic.requests, traffic.unparsable) == (1000, 1000, 0)
    assert "/api/items/{id}/reviews" in traffic.routes
    assert "/a/{uuid}" in traffic.routes
    assert traffic.span_s == 20
    # 50 lines a second, of which /static/app.css and /health are not the app's load.
    assert set(traffic.left_out) == {"static files", "health checks"}
    assert traffic.app_requests + sum(traffic.left_out.values()) == 1000
    assert traffic.peak_rps == 38


def test_a_readers_peak_memory_is_its_own_not_its_parents(tmp_path: Path) -> None:
    """ru_maxrss survives fork and exec: a reader started by a process holding 200 MiB still
    reports its own peak (the servertune reader holds about 20 MiB)."""
    log = tmp_path / "access.log"
    write_log(log, 1000)
    held = bytearray(200 << 20)
    held[:: 1 << 12] = b"x" * len(held[:: 1 << 12])  # touched: resident
    done = subprocess.run(
        [sys.executable, "-m", "servertune.bench.scenarios.log_read", "servertune", str(log)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert len(held) == 200 << 20
    answer = json.loads(done.stdout)
    assert answer["lines"] == 1000
    assert 0 < answer["peak_rss_mb"] < 150, answer


def test_quick_run_reads_every_line_with_every_reader() -> None:
    report = run_scenario(load_scenario("log-read"), BenchOptions(quick=True, progress=False))
    configs = {row["config"] for row in report.runs}
    assert configs == {"servertune", "re loop"} | (
        {"goaccess"} if shutil.which("goaccess") else set()
    )
    for row in report.runs:
        assert row["read"] == row["lines"], row
        assert row["lines_per_cpu_s"] > 0
        assert row["peak_rss_mb"] > 0
    ours = {r["lines"]: r for r in report.runs if r["config"] == "servertune"}
    exact = {r["lines"]: r for r in report.runs if r["config"] == "re loop"}
    for lines, row in ours.items():
        assert row["p99_ms"] == pytest.approx(exact[lines]["p99_ms"], rel=2 * RELATIVE_ACCURACY)
    assert [t.name.split(",")[0] for t in report.targets] == [
        "servertune CPU s / the re loop's",
        "servertune lines per CPU second",
        "servertune peak RSS",
    ]
    assert any(name.startswith("servertune / re loop") for name in report.ratios)
