"""`servertune bench balance|hol --quick`: the harness's invariants, never its timings.

Each scenario really starts nginx, uWSGI or gunicorn from generated configs on 127.0.0.1 and
drives load for about a second per config; the tests check that every server started was
stopped, no port is left listening, no process is left in any server's process group, and the
JSON is complete. (They look only at this run's servers: other runs may share the machine.)
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from servertune.bench.harness import deployments
from servertune.bench.harness.deployments import IDLE_WINDOW_S, Deployment
from servertune.bench.harness.ports import listening_ports
from servertune.bench.harness.report import LOAD_RUN_KEYS
from servertune.bench.harness.stats import group_members
from servertune.cli import app

#: The top-level keys of every report (bench/report.py).
REPORT_KEYS = {
    "scenario", "machine", "versions", "ceiling_rps", "runs", "ratios", "targets", "notes",
    "servers", "elapsed_s", "time_spent",
}  # fmt: skip

EXPECTED_CONFIGS = {
    "balance": [
        "threads-only",
        "processes-only",
        "shared-socket",
        "thunder-lock",
        "per-core",
        "memory-tight",
        "no-headroom",
        "servertune-per-worker",
        "servertune-no-lock",
        "servertune",
    ],
    "hol": ["naive", "naive-sync", "2x2", "servertune-shared", "servertune"],
}


@pytest.fixture(scope="module", params=["balance", "hol"])
def quick_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, dict[str, Any], Path, str]:
    """One `--quick` run per scenario, shared by the tests below."""
    scenario: str = request.param
    out = tmp_path_factory.mktemp(scenario)
    result = CliRunner().invoke(
        app,
        [
            "bench", scenario, "--quick", "--no-progress",
            "--json", str(out / "report.json"), "--plot", str(out / "plot.png"),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return scenario, json.loads((out / "report.json").read_text()), out, result.stdout


def test_every_server_started_was_stopped(quick_run: tuple[str, dict[str, Any], Path, str]) -> None:
    """The report lists nginx and the app servers of every config, each stopped."""
    scenario, report, _, _ = quick_run
    servers = report["servers"]
    kinds = {s["kind"] for s in servers}
    assert kinds == ({"uwsgi", "nginx"} if scenario == "balance" else {"gunicorn", "nginx"})
    for config in EXPECTED_CONFIGS[scenario]:
        assert any(s["name"].startswith(f"{config}-") and s["kind"] == "nginx" for s in servers)
    assert all(s["stopped"] for s in servers)


def test_no_port_left_bound_and_no_process_left(
    quick_run: tuple[str, dict[str, Any], Path, str],
) -> None:
    """After the run none of the servers' ports listens and none of their processes runs."""
    _, report, _, _ = quick_run
    ports = {port for server in report["servers"] for port in server["ports"]}
    assert ports
    assert not ports & listening_ports()
    for server in report["servers"]:
        assert group_members(server["pgid"]) == [], server["name"]


def test_json_schema_is_complete(quick_run: tuple[str, dict[str, Any], Path, str]) -> None:
    """Every report key is there; every run has the issue #3 keys with real numbers."""
    scenario, report, _, _ = quick_run
    assert set(report) == REPORT_KEYS
    assert report["scenario"] == scenario
    configs = [run["config"] for run in report["runs"] if "role" not in run]
    assert sorted(set(configs)) == sorted(EXPECTED_CONFIGS[scenario])
    for run in report["runs"]:
        assert set(LOAD_RUN_KEYS) <= set(run)
        for key in LOAD_RUN_KEYS[1:]:
            value = run[key]
            assert isinstance(value, int | float), (run["config"], key)
            assert math.isfinite(value), (run["config"], key)
        assert run["rps"] > 0
        assert run["requests"] > 0
        assert run["max_ms"] >= run["p99_ms"] >= run["p90_ms"] >= run["p50_ms"] > 0
    assert report["targets"]
    assert all(t["met"] in (True, False) for t in report["targets"])
    assert report["versions"]["servertune"]
    assert report["machine"]["cores"] >= 1


def test_scenario_specific_numbers_are_present(
    quick_run: tuple[str, dict[str, Any], Path, str],
) -> None:
    """balance reports the CPU ceiling and fractions of it; hol counts /quick stalls over 1 s."""
    scenario, report, _, _ = quick_run
    runs = [run for run in report["runs"] if "role" not in run]
    if scenario == "balance":
        assert report["ceiling_rps"] > 0
        assert all(run["ceiling_fraction"] > 0 and run["p99_over_single"] > 0 for run in runs)
        assert any(run.get("role") == "single-request" for run in report["runs"])
        # Every load started on an idle app: at least one idle window was waited for.
        assert all(run["settle_s"] >= IDLE_WINDOW_S for run in report["runs"])
        # The memory-aware plan says what it measured and which layout each row served.
        notes = "\n".join(report["notes"])
        assert "MiB a worker (servertune measure, warm RSS)" in notes
        assert "(bound: memory)" in notes  # the tight budget fell back to threads
        assert all("rps_spread" in run for run in runs)
    else:
        assert report["ceiling_rps"] is None
        assert all(run["over_1s"] >= 0 and run["slow_requests"] >= 1 for run in runs)
        # The load started on an idle app (gunicorn done importing it), and the report says so.
        assert all(run["settle_s"] >= IDLE_WINDOW_S for run in runs)
        assert any(note.startswith("settle_s: every load started") for note in report["notes"])


def test_table_and_plot_are_written(quick_run: tuple[str, dict[str, Any], Path, str]) -> None:
    """The CLI prints the table with servertune's row and writes a PNG plot."""
    scenario, _, out, stdout = quick_run
    assert f"servertune bench {scenario}" in stdout
    assert "\nservertune " in stdout
    assert (out / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_balance_targets_compare_with_the_best_other_layout_at_every_level() -> None:
    """req/s against the highest other layout's, p99 against the lowest other p99: the two may
    be different layouts, and threads-only counts like any other."""
    from servertune.bench.scenarios.balance import CONFIGS, _against_the_best

    numbers = {  # config: (req/s, p99 ms) at 2 connections
        "threads-only": (10.0, 90.0),
        "processes-only": (19.0, 115.0),
        "shared-socket": (20.0, 130.0),
        "thunder-lock": (18.0, 140.0),
        "per-core": (18.5, 125.0),
        "memory-tight": (18.8, 118.0),
        "no-headroom": (19.1, 121.0),
        # servertune's own plan with a socket choice undone: reported, never "the best other".
        "servertune-per-worker": (25.0, 60.0),
        "servertune-no-lock": (25.0, 60.0),
        "servertune": (19.6, 120.0),
    }
    assert set(numbers) == set(CONFIGS)
    runs = [
        {"config": name, "concurrency": 2, "rps": rps, "p99_ms": p99}
        for name, (rps, p99) in numbers.items()
    ]
    rps, p99 = _against_the_best(runs, [2])
    assert rps.name == "servertune req/s / shared-socket's (the highest other) at c=2"
    assert (rps.value, rps.met) == (0.98, True)
    assert p99.name == "servertune p99 / threads-only's (the lowest other) at c=2"
    assert (p99.value, p99.met) == (1.333, False)
    # At concurrency = cores the memory-aware layout must win outright: 0.98 x is not enough.
    at_cores, _ = _against_the_best(runs, [2], cores=2)
    assert (at_cores.value, at_cores.met) == (0.98, False)
    assert at_cores.threshold == 1.0


def test_balance_verdicts_follow_the_numbers() -> None:
    """Where-it-shows notes: penalty, reverse, mixed and no difference, decided from the rows."""
    from servertune.bench.scenarios.balance import _where_it_shows

    def rows(
        level: int, ours: tuple[float, float], shared: tuple[float, float]
    ) -> list[dict[str, object]]:
        return [
            {"config": "servertune", "concurrency": level, "rps": ours[0], "p99_ms": ours[1]},
            {
                "config": "shared-socket",
                "concurrency": level,
                "rps": shared[0],
                "p99_ms": shared[1],
            },
        ]

    cases = {
        1: ((20.0, 100.0), (17.0, 150.0), "penalty shows"),
        2: ((17.0, 150.0), (20.0, 100.0), "does better"),
        3: ((22.0, 150.0), (20.0, 100.0), "mixed"),
        4: ((20.0, 100.0), (20.0, 100.0), "no clear difference"),
    }
    runs = [row for level, (ours, shared, _) in cases.items() for row in rows(level, ours, shared)]
    notes = _where_it_shows(runs, list(cases))
    for note, (_, _, verdict) in zip(notes, cases.values(), strict=True):
        assert verdict in note, note


class _Cpu:
    """The app servers' CPU counter, as /proc would advance it: busy for some reads, then idle."""

    def __init__(self, busy_reads: int) -> None:
        self.reads = 0
        self.busy_reads = busy_reads

    def __call__(self) -> float:
        self.reads += 1
        return min(self.reads, self.busy_reads) * 0.1  # 0.1 CPU-s per busy window, then none


def _deployment_on(cpu: _Cpu) -> Deployment:
    deployment = Deployment(
        name="d", url="http://127.0.0.1:1/", app_servers=[], nginx=None, files={}
    )  # type: ignore[arg-type]
    deployment.app_cpu_seconds = cpu  # type: ignore[method-assign]
    return deployment


def test_wait_idle_waits_out_what_a_load_left_and_no_longer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The next load starts once a whole window passes without the app using CPU: after three
    busy windows, the fourth is idle; an app that never idles is waited for IDLE_LIMIT_S only."""
    monkeypatch.setattr(deployments, "IDLE_WINDOW_S", 0.01)
    busy = _Cpu(busy_reads=4)
    waited = _deployment_on(busy).wait_idle()
    assert busy.reads == 5  # one reading before, three busy windows, one idle window
    assert waited >= 4 * 0.01
    monkeypatch.setattr(deployments, "IDLE_LIMIT_S", 0.1)
    never = _Cpu(busy_reads=10**9)
    assert 0.1 <= _deployment_on(never).wait_idle() < 5
