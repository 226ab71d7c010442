"""The benchmark architecture: one registry, one Scenario protocol, one `run_scenario()` loop."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from servertune.bench import BenchOptions, load_scenario, run_scenario, scenario_names
from servertune.bench.harness.ports import free_port, listening_ports
from servertune.bench.harness.report import Report
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.bench.harness.stats import group_members
from servertune.bench.harness.supervision import ServerError, Stack
from servertune.bench.scenarios import SCENARIOS
from servertune.render import render_uwsgi
from servertune.sizing import plan_for
from servertune.workload import Workload


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_registered_scenario_implements_the_protocol(name: str) -> None:
    """Each registry line loads a scenario named as registered, with a summary and both sizes."""
    scenario = load_scenario(name)
    assert scenario.name == name
    assert scenario.summary
    assert "seed" not in scenario.summary.lower()
    for quick in (True, False):
        assert scenario.sizes.pick(quick).repeats >= 1
    assert scenario.sizes.pick(True) is scenario.sizes.quick
    assert callable(scenario.plot)


def test_registry_is_what_bench_lists() -> None:
    """`servertune bench --list` names exactly the registry's scenarios."""
    assert scenario_names() == sorted(SCENARIOS)


@dataclass(frozen=True)
class _Sizes:
    repeats: int


class _Toy(BaseScenario[_Sizes]):
    """A toy scenario serving a real HTTP server per config (test only)."""

    name = "toy"
    sizes = QuickFull(quick=_Sizes(repeats=2), full=_Sizes(repeats=3))

    def __init__(self) -> None:
        self.order: list[tuple[int, str, Level]] = []
        self.alive_at_start: list[int] = []

    def configs(self, run: Run[_Sizes]) -> Sequence[str]:
        return ("naive", "servertune")

    def levels(self, run: Run[_Sizes], config: str) -> Sequence[Level]:
        return (Level(1), Level(2))

    def start(self, run: Run[_Sizes], config: str) -> Any:
        # Only this config's server runs: the previous config's was stopped by the runner.
        self.alive_at_start.append(sum(not s.stopped for s in run.stack.servers))
        port = free_port()
        argv = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)]
        return run.stack.start(f"{config}-{run.repeat}", "python", argv, ports=[port])

    def measure(self, run: Run[_Sizes], config: str, served: Any, level: Level) -> dict[str, Any]:
        self.order.append((run.repeat, config, level))
        return {"config": config, "concurrency": level.concurrency, "rps": 10.0 * run.repeat}

    def summarize(self, run: Run[_Sizes], results: Results) -> Report:
        rows = [results.median(c, Level(n)) for c in ("naive", "servertune") for n in (1, 2)]
        return Report(scenario=self.name, runs=rows)


def test_runner_interleaves_repeats_and_stops_each_config_before_the_next() -> None:
    """Every config once per repeat, in order; one config's servers at a time; medians; all stopped."""
    toy = _Toy()
    report = run_scenario(toy, BenchOptions(quick=True, progress=False))
    assert [(r, c) for r, c, _ in toy.order[::2]] == [
        (0, "naive"), (0, "servertune"), (1, "naive"), (1, "servertune"),
    ]  # fmt: skip
    assert toy.alive_at_start == [0, 0, 0, 0]
    assert [row["rps"] for row in report.runs] == [5.0] * 4  # median of 0 and 10
    assert len(report.servers) == 4
    assert all(s["stopped"] for s in report.servers)
    assert not {p for s in report.servers for p in s["ports"]} & listening_ports()
    assert all(group_members(s["pgid"]) == [] for s in report.servers)


def test_repeat_multiplies_the_scenarios_own_repeats() -> None:
    """--repeat 2 on a size of 3 repeats measures each (config, level) six times."""
    toy = _Toy()
    run_scenario(toy, BenchOptions(quick=False, repeat=2, progress=False))
    assert len(toy.order) == 3 * 2 * 2 * 2


def test_progress_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    """Progress lines name the config and level on stderr; stdout stays for results."""
    run_scenario(_Toy(), BenchOptions(quick=True))
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "servertune, 2 connections: 10.0 req/s" in captured.err


def test_a_failing_measure_still_stops_every_server() -> None:
    """An error inside measure() propagates, and the config's server is stopped first."""

    class Broken(_Toy):
        def measure(
            self, run: Run[_Sizes], config: str, served: Any, level: Level
        ) -> dict[str, Any]:
            self.server = served
            raise RuntimeError("boom")

    broken = Broken()
    with pytest.raises(RuntimeError, match="boom"):
        run_scenario(broken, BenchOptions(quick=True, progress=False))
    assert broken.server.stopped
    assert group_members(broken.server.pgid) == []


def test_stack_run_reaps_the_whole_group_on_timeout() -> None:
    """A short-lived command that overruns is killed with every child it forked."""
    code = "import os, time\nif os.fork() == 0:\n    time.sleep(60)\ntime.sleep(60)\n"
    with Stack("test-run") as stack:
        with pytest.raises(ServerError, match="did not finish"):
            stack.run("sleeper", [sys.executable, "-c", code], timeout_s=0.5)
        done = stack.run("echo", [sys.executable, "-c", "print('hi')"], timeout_s=30)
    assert done.returncode == 0
    assert done.stdout == b"hi\n"
    assert stack.events == [
        ("sleeper", "started"), ("sleeper", "stopped"), ("echo", "started"), ("echo", "stopped"),
    ]  # fmt: skip


def _workload() -> Workload:
    return Workload(cores=2, service_time_ms=100.0, cpu_fraction=0.5, app="app:app")


def test_balance_baselines_are_forced_plans_with_their_reasons() -> None:
    """Baselines come from the rules with numbers forced, each reason saying the benchmark did it."""
    from servertune.bench.scenarios.balance import CONFIGS, Balance

    ours = plan_for(_workload())
    slots = ours.processes * ours.threads
    for config in CONFIGS:
        plan, layout, thunder_lock = Balance().config_plan(_workload(), config)
        assert thunder_lock == (config == "thunder-lock")
        if config in ("servertune", "per-core", "memory-tight", "no-headroom"):
            assert layout == "per-worker"  # the plan without memory figures: 2 x 2
            continue
        if config in ("servertune-per-worker", "servertune-no-lock"):
            # servertune's own plan, unforced, on the layout the row names.
            assert plan == ours
            assert layout == ("per-worker" if config == "servertune-per-worker" else "shared")
            continue
        assert plan.processes * plan.threads == slots, config
        forced = [r for r in plan.reasons.values() if r.startswith("forced by the benchmark")]
        assert forced, config
    shared, layout, _ = Balance().config_plan(_workload(), "shared-socket")
    assert layout == "shared"
    assert shared.reasons["sockets"].startswith("forced by the benchmark: shared socket")
    # Numbers derived from the forced socket list follow it (no stale zone size).
    assert shared.upstream_zone_kb < ours.upstream_zone_kb


def test_balance_memory_rows_are_servertune_plans_for_their_budgets() -> None:
    """servertune's row is the plan for the memory given (6 single-threaded processes: the
    slots the finite-source queue asks for), per-core the plan without memory figures (2 x 2:
    threads stop at what a process's GIL keeps busy),
    memory-tight the plan under a limit that holds one process more than the cores (3 x 2:
    threads for the rest); the baselines keep per-core's 4 slots; none of the three has a
    forced number. no-headroom forces the perfect-interleaving count, 4 x 1."""
    from servertune.bench.scenarios.balance import CONFIGS, Balance

    roomy = _workload().model_copy(update={"memory_per_worker_mb": 40, "memory_limit_mb": 24000})
    layouts = {name: Balance().config_plan(roomy, name)[0] for name in CONFIGS}
    shapes = {name: (p.processes, p.threads) for name, p in layouts.items()}
    assert shapes["servertune"] == (6, 1)
    assert shapes["per-core"] == (2, 2)
    assert shapes["memory-tight"] == (3, 2)
    assert shapes["processes-only"] == (4, 1)
    assert shapes["shared-socket"] == shapes["thunder-lock"] == (2, 2)
    assert shapes["no-headroom"] == (4, 1)
    assert layouts["no-headroom"].reasons["processes"].startswith("forced by the benchmark: 4")
    assert "85.0% of the cores" in layouts["no-headroom"].reasons["processes"]
    assert layouts["servertune"] == plan_for(roomy)
    # servertune's 6 single-threaded processes share one socket, taking turns in accept();
    # the two ablation rows undo one choice each.
    rows = {name: Balance().config_plan(roomy, name)[1:] for name in CONFIGS}
    assert rows["servertune"] == ("shared", True)
    assert rows["servertune-per-worker"] == ("per-worker", False)
    assert rows["servertune-no-lock"] == ("shared", False)
    assert layouts["servertune-per-worker"] == layouts["servertune-no-lock"] == plan_for(roomy)
    for name in ("servertune", "per-core", "memory-tight"):
        assert not any(r.startswith("forced") for r in layouts[name].reasons.values()), name
    assert "(bound: memory)" in layouts["memory-tight"].reasons["processes"]


def test_hol_baselines_force_workers_and_threads() -> None:
    """hol's naive and 2x2 configs are servertune's plan with workers/threads forced."""
    from servertune.bench.scenarios.hol import HeadOfLine

    slow = _workload().model_copy(update={"slow_call_ratio": 0.002, "slow_call_ms": 10000.0})
    naive, layout = HeadOfLine().config_plan(slow, "naive")
    assert (naive.threads, layout) == (1, "shared")
    assert naive.reasons["threads"].startswith("forced by the benchmark")
    assert naive.gunicorn_worker_class == "gthread"  # the copied setup, forced
    # naive-sync: the same one thread, with the worker class the plan gives one thread.
    sync, _ = HeadOfLine().config_plan(slow, "naive-sync")
    assert (sync.threads, sync.gunicorn_worker_class) == (1, "sync")
    assert "accepts only when it is idle" in sync.reasons["gunicorn_worker_class"]
    two, _ = HeadOfLine().config_plan(slow, "2x2")
    assert (two.processes, two.threads) == (2, 2)


def test_thunder_lock_is_rendered_by_the_uwsgi_target() -> None:
    """`render_uwsgi(plan, "shared", thunder_lock=True)` adds thunder-lock; per-worker refuses it."""
    plan = plan_for(_workload())
    text = render_uwsgi(plan, "shared", thunder_lock=True)
    assert "\nthunder-lock = true\n" in text
    assert "map-socket" not in text
    assert "thunder-lock" not in render_uwsgi(plan, "shared")
    with pytest.raises(ValueError, match="thunder_lock"):
        render_uwsgi(plan, "per-worker", thunder_lock=True)


def test_a_time_budget_ends_the_repeats_after_the_first_round(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A scenario with a budget: the first round is measured whole, then no config starts past
    the budget, and the report says the repeats left were not measured. The clock is the
    runner's, moved 100 s by each measurement (no sleeping)."""
    from servertune.bench.harness import runner

    clock = [1000.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: clock[0])

    class Budgeted(_Toy):
        def budget_s(self, run: Run[_Sizes]) -> float | None:
            return 450.0

        def measure(
            self, run: Run[_Sizes], config: str, served: Any, level: Level
        ) -> dict[str, Any]:
            clock[0] += 100.0
            return super().measure(run, config, served, level)

    toy = Budgeted()
    report = run_scenario(toy, BenchOptions(quick=False, progress=False))
    # Round 1: 2 configs x 2 levels (400 s); round 2: naive starts at 400 s (under 450 s),
    # servertune would start at 600 s: cut. The full size plans 3 rounds.
    assert [(r, c) for r, c, _ in toy.order[::2]] == [(0, "naive"), (0, "servertune"), (1, "naive")]
    assert any(
        note.startswith("time budget: the run had taken 7.5 min by round 2")
        for note in report.notes
    )
    assert all(s["stopped"] for s in report.servers)


def test_no_budget_measures_every_round() -> None:
    """BaseScenario has no budget: the full size's three rounds, every config, every level."""
    toy = _Toy()
    report = run_scenario(toy, BenchOptions(quick=False, progress=False))
    assert len(toy.order) == 3 * 2 * 2
    assert not any(note.startswith("time budget") for note in report.notes)
