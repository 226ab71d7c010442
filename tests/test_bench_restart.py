"""`servertune bench restart --quick`: real gunicorn behind real nginx, restarted, killed and
reloaded under load; every event is counted, every server stopped, and the counts add up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from servertune.bench.harness.ports import listening_ports
from servertune.bench.harness.stats import group_members
from servertune.bench.scenarios.restart import CONFIGS, EVENTS, _rows, _Sample
from servertune.cli import app


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, str]:
    """One `--quick` run shared by the tests below."""
    out = tmp_path_factory.mktemp("restart")
    result = CliRunner().invoke(
        app,
        [
            "bench", "restart", "--quick", "--no-progress",
            "--json", str(out / "report.json"), "--plot", str(out / "plot.png"),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text()), out, result.stdout


def test_every_config_sees_every_event(quick: tuple[dict[str, Any], Path, str]) -> None:
    """A row per config and window (steady + the three events), each with requests sent."""
    report, _, _ = quick
    seen = [(run["config"], run["event"]) for run in report["runs"]]
    assert {run["run"] for run in report["runs"]} == {1}  # --quick runs once
    assert seen == [(c, e) for c in CONFIGS for e in ("steady", *EVENTS)]
    for run in report["runs"]:
        assert run["get_requests"] > 0, run
        assert run["post_requests"] > 0, run
        assert 0 <= run["get_failed"] <= run["get_requests"]
        assert 0 <= run["post_replayed"] <= run["post_requests"]


def test_steady_load_fails_nothing(quick: tuple[dict[str, Any], Path, str]) -> None:
    """Before any event nothing fails, in either config (a failure there is a harness bug)."""
    report, _, _ = quick
    for run in report["runs"]:
        if run["event"] == "steady":
            assert run["get_failed"] == run["post_failed"] == 0, run


def test_the_defaults_lose_requests_when_their_only_instance_stops(
    quick: tuple[dict[str, Any], Path, str],
) -> None:
    """SIGTERM to the one gunicorn of the defaults: nginx has no other server, requests fail."""
    report, _, _ = quick
    (row,) = [
        r for r in report["runs"] if r["config"] == "defaults" and r["event"] == "sigterm-instance"
    ]
    assert row["get_failed"] > 0


def test_servers_stopped_and_ports_released(quick: tuple[dict[str, Any], Path, str]) -> None:
    """Every server started (restarted instances too) was stopped; no port or process is left."""
    report, _, _ = quick
    servers = report["servers"]
    assert {s["kind"] for s in servers} == {"gunicorn", "nginx"}
    assert any(s["name"].endswith("-new") for s in servers), "no instance was restarted"
    assert all(s["stopped"] for s in servers)
    assert not {p for s in servers for p in s["ports"]} & listening_ports()
    for server in servers:
        assert group_members(server["pgid"]) == [], server["name"]


def test_table_and_plot(quick: tuple[dict[str, Any], Path, str]) -> None:
    """The table names every target with a verdict, and the PNG is written."""
    _, out, stdout = quick
    assert "target servertune: failed GETs over all events" in stdout
    assert "target servertune: replayed POSTs over all events" in stdout
    assert (out / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_post_written_twice_counts_as_replayed() -> None:
    """The replay count is the ledger's: an id the app recorded twice is one replayed POST."""
    samples = [
        _Sample(1.0, "get", 200, 5.0),
        _Sample(1.1, "post", 200, 5.0, "a"),
        _Sample(1.2, "post", 502, 5.0, "b"),
        _Sample(2.1, "get", 0, 5.0),
    ]
    rows = _rows("x", samples, [("steady", 0.0), ("sigterm-instance", 2.0), ("end", 3.0)], {"a": 2})
    steady, event = rows
    assert (steady["post_replayed"], steady["post_failed"], steady["get_failed"]) == (1, 1, 0)
    assert (event["get_requests"], event["get_failed"]) == (1, 1)


def test_failed_posts_the_app_never_ran_and_unanswered_requests_are_counted() -> None:
    """A failed POST whose id is not in the ledger never ran (safe to resend); a request with no
    HTTP answer at all (status 0) is told apart from nginx's 502."""
    samples = [
        _Sample(1.0, "post", 502, 5.0, "ran"),
        _Sample(1.1, "post", 502, 5.0, "never"),
        _Sample(1.2, "post", 0, 5.0, "lost"),
        _Sample(1.3, "get", 0, 5.0),
        _Sample(1.4, "drain", 0, 5.0),
    ]
    (row,) = _rows("x", samples, [("sigterm-instance", 0.0), ("end", 2.0)], {"ran": 1})
    assert row["post_failed"] == 3
    assert row["post_failed_unrun"] == 2
    assert row["no_answer"] == 2  # the POST and the GET; the direct drain call is counted apart
