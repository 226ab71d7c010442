"""`servertune bench asgi --quick`: the harness's invariants and the admission's behaviour, never timings.

One quick run starts every configuration (servertune's uvicorn, gunicorn-asgi and granian, each on
one socket and per worker; gunicorn's native asgi worker on one socket; uvicorn and granian
defaults) behind nginx on 127.0.0.1 for about a second per load.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from servertune.bench.harness.deployments import IDLE_WINDOW_S
from servertune.bench.harness.ports import listening_ports
from servertune.bench.harness.stats import group_members
from servertune.bench.scenarios.asgi import CONFIGS, DEFAULTS, QUICK_SKIPS
from servertune.cli import app
from servertune.machine import Machine

LOADS = ("unloaded", "normal", "overload")
#: What the quick mode runs: every configuration but the native worker's per-worker layout.
QUICK = [name for name in CONFIGS if name not in QUICK_SKIPS]


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """One `bench asgi --quick` run with JSON and plot, shared by the tests below."""
    out = tmp_path_factory.mktemp("asgi")
    result = CliRunner().invoke(
        app,
        [
            "bench", "asgi", "--quick", "--no-progress",
            "--json", str(out / "report.json"), "--plot", str(out / "plot.png"),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text()), out


def test_every_config_ran_every_load(quick_report: tuple[dict[str, Any], Path]) -> None:
    """Each configuration has an unloaded, a normal and an overload row with real numbers."""
    report, _ = quick_report
    assert [(r["config"], r["load"]) for r in report["runs"]] == [
        (c, load) for c in QUICK for load in LOADS
    ]
    for run in report["runs"]:
        assert run["requests"] > 0, run
        assert run["rps"] >= 0


def test_every_load_started_on_an_idle_app(quick_report: tuple[dict[str, Any], Path]) -> None:
    """Before each load (the unloaded one after the warm-up or start, the normal and overload ones
    after the load before them) the app was waited for until a whole window passed idle, and
    the report says how long the waits took."""
    report, _ = quick_report
    waits = [repeat["settle_s"] for run in report["runs"] for repeat in run["repeats"]]
    assert len(waits) == len(QUICK) * len(LOADS)
    assert all(wait >= IDLE_WINDOW_S for wait in waits)
    note = next(n for n in report["notes"] if n.startswith("settle_s: every load started"))
    assert f"{min(waits):.2f}-{max(waits):.2f} s" in note


def test_only_servertunes_admission_answers_503(quick_report: tuple[dict[str, Any], Path]) -> None:
    """At 4 x capacity servertune's nginx refuses the excess with 503; the defaults never do."""
    report, _ = quick_report
    overload = {r["config"]: r for r in report["runs"] if r["load"] == "overload"}
    for name in QUICK:
        if name in DEFAULTS:
            assert overload[name]["refused_503"] == 0, name
        else:
            assert overload[name]["refused_503"] > 0, name


def test_overload_rows_say_how_the_processes_shared_the_work(
    quick_report: tuple[dict[str, Any], Path],
) -> None:
    """Each overload row counts the admitted answers per process: a one-worker default's single
    process took them all; behind least_conn every per-worker process took some."""
    report, _ = quick_report
    overload = {r["config"]: r for r in report["runs"] if r["load"] == "overload"}
    for name in QUICK:
        row = overload[name]
        counts = [count for count, _ in row["per_process"]]
        assert sum(counts) == row["requests"] - row["errors"], name
        assert row["busiest_share"] == round(max(counts) / sum(counts), 3), name
    for name in ("uvicorn-1-worker", "granian-default"):
        assert overload[name]["processes_seen"] == 1
        assert overload[name]["busiest_share"] == 1
    per_worker = [name for name in QUICK if name.endswith("-per-worker")]
    assert len(per_worker) == 3
    for name in per_worker:  # one process per core (the plan), each behind its own socket
        assert overload[name]["processes_seen"] == Machine.read().cores, name


def test_native_worker_is_measured_beside_uvicorns(
    quick_report: tuple[dict[str, Any], Path],
) -> None:
    """gunicorn's native asgi worker runs in the same run as uvicorn's, one loop per core, and
    the report gives native / uvicorn-worker ratios computed from the two rows."""
    report, _ = quick_report
    rows = {(r["config"], r["load"]): r for r in report["runs"]}
    native, uvicorn = (
        rows[("servertune-gunicorn-native", "normal")],
        rows[("servertune-gunicorn-asgi", "normal")],
    )
    assert native["rps"] > 0
    assert rows[("servertune-gunicorn-native", "overload")]["processes_seen"] == (
        Machine.read().cores
    )
    ratio = report["ratios"]["servertune-gunicorn-native / servertune-gunicorn-asgi normal req/s"]
    assert ratio == round(native["rps"] / uvicorn["rps"], 3)
    assert "servertune-gunicorn-native / servertune-gunicorn-asgi overload p99" in report["ratios"]
    assert not any("native-per-worker" in key for key in report["ratios"])


def test_no_server_port_or_process_is_left(quick_report: tuple[dict[str, Any], Path]) -> None:
    """Every server started was stopped; none of their ports listens, none of their processes runs."""
    report, _ = quick_report
    servers = report["servers"]
    assert {s["kind"] for s in servers} == {"uvicorn", "gunicorn", "granian", "nginx"}
    assert all(s["stopped"] for s in servers)
    assert not {p for s in servers for p in s["ports"]} & listening_ports()
    for server in servers:
        assert group_members(server["pgid"]) == [], server["name"]


def test_plot_is_written(quick_report: tuple[dict[str, Any], Path]) -> None:
    """--plot writes a PNG."""
    _, out = quick_report
    assert (out / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
