"""`servertune bench async-clients --quick`: every config at every point, the agreed JSON, no leftovers.

No timing is asserted (the machine is shared); the 2x target is the benchmark's to check.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from servertune.bench.harness.ports import listening_ports
from servertune.bench.harness.stats import group_members
from servertune.bench.scenarios import async_clients
from servertune.cli import app


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, str]:
    """One quick run through the CLI, with JSON and plot."""
    out = tmp_path_factory.mktemp("async-clients")
    result = CliRunner().invoke(
        app,
        ["bench", "async-clients", "--quick", "--no-progress",
         "--json", str(out / "report.json"), "--plot", str(out / "plot.png")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text()), out, result.stdout


def test_every_config_runs_at_every_point(quick: tuple[dict[str, Any], Path, str]) -> None:
    """Each in-process config has a row per scheme and concurrency with real numbers."""
    report, _, _ = quick
    plan = async_clients.QUICK
    points = {("http", c) for c in plan.http_levels} | {("https", c) for c in plan.https_levels}
    for config, client in async_clients.CONFIGS:
        rows = {(r["scheme"], r["concurrency"]) for r in report["runs"] if r["config"] == config}
        if client == "niquests" and not rows:
            assert any("niquests not measured" in n for n in report["notes"])
            continue
        assert rows == points, config
    for run in report["runs"]:
        assert run["requests"] > 0, run["config"]
        assert run["rps"] > 0
        assert run["max_ms"] >= run["p99_ms"] >= run["p50_ms"] > 0
        assert run["cpu_us_per_request"] > 0
        assert run["errors"] >= 0


def test_ratios_and_targets_name_the_recommended_session(
    quick: tuple[dict[str, Any], Path, str],
) -> None:
    """The target compares async_session()'s default client with httpx's default at 100."""
    report, _, _ = quick
    assert report["targets"][0]["name"].startswith("aiohttp servertune / httpx default")
    assert report["targets"][0]["met"] in (True, False)
    assert "aiohttp servertune / httpx default req/s, http x100" in report["ratios"]


def test_nginx_was_stopped_and_left_nothing(quick: tuple[dict[str, Any], Path, str]) -> None:
    """The run's nginx is stopped, its ports free and its process group empty."""
    report, _, _ = quick
    (server,) = report["servers"]
    assert server["kind"] == "nginx"
    assert server["stopped"]
    assert not set(server["ports"]) & listening_ports()
    assert group_members(server["pgid"]) == []


def test_table_and_plot_are_written(quick: tuple[dict[str, Any], Path, str]) -> None:
    """The CLI prints the table and writes a PNG."""
    _, out, stdout = quick
    assert "servertune bench async-clients" in stdout
    assert (out / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_summarize_takes_the_median_repeat_and_sums_errors() -> None:
    """Three repeats: rps is the median repeat's, errors add up, p99 comes from latencies."""
    samples = [
        {"latencies_ms": [1.0] * 100, "errors": e, "error_kinds": ["X"] if e else [],
         "seconds": s, "cpu_s": 0.01}
        for e, s in ((0, 1.0), (2, 2.0), (1, 0.5))
    ]  # fmt: skip
    row = async_clients.summarize("aiohttp servertune", "http", 10, samples)
    assert row["rps"] == 100.0
    assert row["rps_repeats"] == [100.0, 50.0, 200.0]
    assert row["errors"] == 3
    assert row["p99_ms"] == 1.0
    assert row["cpu_us_per_request"] == 100.0


def test_missing_client_is_one_error_line(tmp_path: Path) -> None:
    """Without aiohttp the scenario stops before starting nginx, with one `error:` line."""
    import subprocess
    import sys

    code = (
        "import importlib.util, sys\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda n, *a: None if n == 'aiohttp' else real(n, *a)\n"
        "from servertune.cli import main\n"
        "sys.argv = ['servertune', 'bench', 'async-clients', '--quick']\n"
        "main()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr == (
        "error: bench async-clients needs aiohttp: pip install 'servertune[httpx,aiohttp]'\n"
    )


@pytest.mark.parametrize(("httpx2", "niquests"), [(True, True), (False, True), (False, False)])
def test_configs_leave_out_only_the_clients_that_are_missing(httpx2: bool, niquests: bool) -> None:
    """Without httpx2 (or .venv-niquests) its rows are left out; every other config stays."""
    scenario = async_clients.AsyncClients()
    scenario.httpx2 = httpx2
    scenario.python = Path(sys.executable) if niquests else None
    configs = scenario.configs(None)  # type: ignore[arg-type]
    expected = [
        config
        for config, client in async_clients.CONFIGS
        if (client != "httpx2" or httpx2) and (client != "niquests" or niquests)
    ]
    assert configs == expected
    assert any(c.startswith("httpx2") for c in configs) == httpx2
    assert any(c.startswith("aiohttp") for c in configs)
