"""`servertune bench resize --quick`: a real quota moved 2 -> 1 cores under gunicorn; the
following config moved its workers, the fixed one did not; nothing is left behind."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from servertune.bench.harness.ports import listening_ports
from servertune.bench.harness.stats import group_members
from servertune.cli import app


def test_quick_run_follows_the_quota_and_leaves_nothing(tmp_path: Path) -> None:
    """fixed keeps 2 workers under 1 core, following goes to 1; both answered before and after
    with no failed request; ratios reported; every server stopped, the cgroup removed."""
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        app, ["bench", "resize", "--quick", "--no-progress", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    rows = {r["config"]: r for r in report["runs"]}
    assert list(rows) == ["shrink, fixed", "shrink, following"]
    assert (rows["shrink, fixed"]["workers_before"], rows["shrink, fixed"]["workers_after"]) == (
        2,
        2,
    )
    assert (
        rows["shrink, following"]["workers_before"],
        rows["shrink, following"]["workers_after"],
    ) == (2, 1)
    assert all(r["requests"] > 0 and r["rps_before"] > 0 for r in rows.values())
    assert all(r["errors"] == 0 for r in rows.values()), rows
    assert "shrink 2->1 cores: following/fixed req/s after" in report["ratios"]
    servers = report["servers"]
    assert {s["kind"] for s in servers} == {"gunicorn", "nginx"}
    assert all(s["stopped"] for s in servers)
    assert not {p for s in servers for p in s["ports"]} & listening_ports()
    assert all(group_members(s["pgid"]) == [] for s in servers)
    cgroup = re.search(r"real child cgroup \(v\d, (/\S+), removed\)", " ".join(report["notes"]))
    assert cgroup is not None, report["notes"]
    assert not Path(cgroup[1]).exists()
