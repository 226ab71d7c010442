"""`servertune bench granian-threads --quick`: every pool size ran, servers stopped, threads counted."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from servertune.bench.harness.deployments import IDLE_WINDOW_S
from servertune.bench.harness.ports import listening_ports
from servertune.bench.harness.stats import group_members
from servertune.bench.scenarios.granian_threads import CONFIGS
from servertune.cli import app


def test_quick_run_measures_each_pool_and_leaves_nothing(tmp_path: Path) -> None:
    """Each config has a row with requests; granian's default pool shows more threads than the
    plan's; each level waited for an idle app; every server was stopped and no port or process
    is left."""
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        app, ["bench", "granian-threads", "--quick", "--no-progress", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    rows = {r["config"]: r for r in report["runs"]}
    assert list(rows) == list(CONFIGS)
    assert all(r["requests"] > 0 for r in rows.values())
    assert rows["granian-default"]["peak_threads"] > rows["servertune"]["peak_threads"]
    # Every level started on an idle app, after at least one idle window; the report says so.
    assert all(r["settle_s"] >= IDLE_WINDOW_S for r in rows.values())
    assert any(note.startswith("settle_s: every load started") for note in report["notes"])
    servers = report["servers"]
    assert {s["kind"] for s in servers} == {"granian", "nginx"}
    assert all(s["stopped"] for s in servers)
    assert not {p for s in servers for p in s["ports"]} & listening_ports()
    assert all(group_members(s["pgid"]) == [] for s in servers)
