"""`bench app APP --replay access.log`: the log's busiest routes, as real paths weighted by their
requests, are what `bench app` measures and loads (a real gunicorn run, two candidates)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.cli import app as cli
from servertune.logs import LogError, build_format, read_traffic
from servertune.logs.replay import route_mix
from tests.support import REPO

FORMAT = '%(h)s %(t)s "%(r)s" %(s)s %(D)s'


def _log(tmp_path: Path) -> Path:
    """300 requests: /items/<id> half, /fast and /slow a quarter each."""
    lines = []
    for i in range(300):
        path = ["/fast", f"/items/{i}", f"/items/{i + 7}", "/slow"][i % 4]
        lines.append(
            f'127.0.0.1 [26/Nov/2026:13:00:{i // 20:02d} +0000] "GET {path}?x=1 HTTP/1.1" 200 '
            f"{[25000, 40000, 40000, 150000][i % 4]}\n"
        )
    log = tmp_path / "access.log"
    log.write_text("".join(lines))
    return log


def test_route_mix_is_the_busiest_routes_with_real_paths(tmp_path: Path) -> None:
    traffic = read_traffic([_log(tmp_path)], build_format("gunicorn", FORMAT))
    mix, covered = route_mix(traffic)
    assert [(p.split("/")[1], w) for p, w in mix] == [("items", 150), ("fast", 75), ("slow", 75)]
    assert mix[0][0].startswith("/items/")
    assert mix[0][0][7:].isdigit()
    assert covered == 1.0
    two, part = route_mix(traffic, limit=2)
    assert len(two) == 2
    assert part == pytest.approx(0.75)
    traffic.routes.clear()
    with pytest.raises(LogError, match="no route"):
        route_mix(traffic)


def test_bench_app_replays_the_logs_route_mix(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        cli,
        ["bench", "app", "tests.log_apps:app", "--chdir", str(REPO), "--replay",
         str(_log(tmp_path)), "--replay-format", f"gunicorn:{FORMAT}", "--quick", "--no-progress",
         "--only", "servertune-gthread,gunicorn-default", "--json", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "replaying 3 routes of access.log: 100.0% of its 300 requests" in result.output
    notes = " ".join(json.loads(out.read_text())["notes"])
    assert "/fast x75" in notes
    assert "/slow x75" in notes
    assert "x150" in notes


def test_replay_errors_are_one_line(tmp_path: Path) -> None:
    log = _log(tmp_path)
    for args, message in (
        (["--replay", str(log), "--path", "/x"], "error: --replay: give --path or --replay"),
        (["--replay-format", "nginx"], "error: --replay-format: goes with --replay"),
        (["--replay", str(tmp_path / "none.log")], "error: --replay: cannot read"),
        (["--replay", str(log)], "error: --replay: "),  # combined: no timing
    ):
        result = CliRunner().invoke(cli, ["bench", "app", "m:app", *args, "--quick"])
        assert result.exit_code == 2, result.output
        assert result.output.startswith(message), result.output
    other = CliRunner().invoke(cli, ["bench", "hol", "--replay", str(log), "--quick"])
    assert other.exit_code == 2
    assert "only `servertune bench app` takes it" in other.output
