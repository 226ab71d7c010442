"""`servertune bench aws --quick`: every way at both batch sizes, the targets, and no leftovers.

No timing is asserted (the machine is shared); the targets are the benchmark's to check.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from servertune.bench.harness.ports import listening_ports
from servertune.bench.harness.stats import group_members
from servertune.bench.scenarios import aws
from servertune.cli import app


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, str]:
    """One quick run through the CLI, with JSON and plot."""
    out = tmp_path_factory.mktemp("aws")
    before = dict(os.environ)
    result = CliRunner().invoke(
        app,
        ["bench", "aws", "--quick", "--no-progress",
         "--json", str(out / "report.json"), "--plot", str(out / "plot.png")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert dict(os.environ) == before  # the fake credentials were only borrowed
    return json.loads((out / "report.json").read_text()), out, result.stdout


def test_every_way_fetches_both_batches(quick: tuple[dict[str, Any], Path, str]) -> None:
    """A row per way and batch size at the target delay, each with a real batch time."""
    report, _, _ = quick
    rows = {(r["config"], r["gets"], r["delay_ms"]) for r in report["runs"]}
    assert rows == {(c, n, aws.TARGET_DELAY_MS) for c in aws.CONFIGS for n in aws.BATCHES}
    for run in report["runs"]:
        assert run["max_ms"] >= run["median_ms"] >= run["min_ms"] > 0
        # n GETs of objects delayed TARGET_DELAY_MS each cannot finish faster than one delay.
        assert run["min_ms"] >= aws.TARGET_DELAY_MS
        # moto's CPU is read from /proc for its process group: every GET costs it something.
        assert run["server_cpu_ms"] > 0
        assert run["server_cpu_ms_per_get"] == pytest.approx(
            run["server_cpu_ms"] / run["gets"], abs=0.01
        )


def test_targets_compare_signed_async_with_boto3(quick: tuple[dict[str, Any], Path, str]) -> None:
    """Both issue targets are measured (met or not) at the added delay."""
    report, _, _ = quick
    names = [t["name"] for t in report["targets"]]
    assert names == [
        f"boto3 serial / signed async, 10 GETs +{aws.TARGET_DELAY_MS:g} ms",
        f"boto3 threads / signed async, 100 GETs +{aws.TARGET_DELAY_MS:g} ms",
    ]
    assert all(t["met"] in (True, False) for t in report["targets"])


def test_moto_was_stopped_and_left_nothing(quick: tuple[dict[str, Any], Path, str]) -> None:
    """The run's moto server is stopped, its port free and its process group empty."""
    report, _, _ = quick
    (server,) = report["servers"]
    assert server["kind"] == "moto"
    assert server["stopped"]
    assert not set(server["ports"]) & listening_ports()
    assert group_members(server["pgid"]) == []


def test_table_and_plot_are_written(quick: tuple[dict[str, Any], Path, str]) -> None:
    """The CLI prints the table and writes a PNG."""
    _, out, stdout = quick
    assert "servertune bench aws" in stdout
    assert (out / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_summarize_takes_the_median_batch() -> None:
    """Three batches: the median wall time, its spread, GETs per second from the median, and
    the client's and moto's median CPU per GET."""
    samples = [
        {"wall_s": w, "cpu_s": c, "server_cpu_s": m}
        for w, c, m in ((0.2, 0.01, 0.04), (0.1, 0.03, 0.05), (0.4, 0.02, 0.03))
    ]
    row = aws.summarize("signed async", 20.0, 10, samples)
    assert (row["median_ms"], row["min_ms"], row["max_ms"]) == (200.0, 100.0, 400.0)
    assert row["gets_per_s"] == 50.0
    assert (row["cpu_ms_per_get"], row["server_cpu_ms"], row["server_cpu_ms_per_get"]) == (
        2.0,
        40.0,
        4.0,
    )


def test_missing_moto_is_one_error_line(tmp_path: Path) -> None:
    """Without moto the scenario stops before starting anything, with one `error:` line."""
    import subprocess
    import sys

    code = (
        "import importlib.util, sys\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda n, *a: None if n == 'moto' else real(n, *a)\n"
        "from servertune.cli import main\n"
        "sys.argv = ['servertune', 'bench', 'aws', '--quick']\n"
        "main()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert out.returncode == 2
    assert out.stderr == (
        "error: bench aws needs moto: pip install 'servertune[aws,aiohttp]' 'moto[server]'\n"
    )
