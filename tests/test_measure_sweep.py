"""`measure`'s in-flight sweep: an ASGI app driven at 1, 2, 4, ... requests at once on its one
loop, and the limit it writes where the loop's time per request climbs; the plan's admission
keeps within it."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.cli import app
from servertune.measure import measure_mix
from servertune.measure.sweep import (
    COST_RISE,
    MAX_IN_FLIGHT,
    SWEEP_SECONDS,
    LevelFailed,
    RunLevel,
    sweep,
)
from servertune.measure.target import WeightedPath
from servertune.sizing import plan_for
from servertune.workload import Workload
from tests import measure_apps

HERE = str(Path(__file__).resolve().parent.parent)


def _ticks() -> Callable[[], float]:
    """A clock that moves one second each time it is read."""
    return iter(float(t) for t in range(1000)).__next__


def _scripted(levels: Mapping[int, tuple[float, float]]) -> tuple[list[int], RunLevel]:
    """A run function answering each level's (req/s, loop ms per request) over 1 s."""
    asked: list[int] = []

    def run(in_flight: int, count: int, seconds: float) -> tuple[int, float, float, float]:
        asked.append(in_flight)
        rps, loop_ms = levels[in_flight]
        return int(rps), 1.0, int(rps) * loop_ms / 1000, int(rps) * loop_ms / 1000

    return asked, run


def test_the_limit_is_the_best_level_before_the_cost_climbs() -> None:
    """Throughput doubles up to 32 at about 1 ms a request; at 64 the loop's time per request
    is 6 x and fewer are answered: the limit is 32, and the climb stops there."""
    levels = {1: (19, 2.8), 2: (37, 2.0), 4: (73, 1.5), 8: (145, 1.4), 16: (290, 1.3),
              32: (571, 1.05), 64: (161, 6.1)}  # fmt: skip
    asked, run = _scripted(levels)
    found = sweep(run, _ticks())
    assert found.limit == 32
    # The collapse at 64 is measured again with the best level (32) before it counts.
    assert asked == [1, 2, 4, 8, 16, 32, 64, 32, 64]
    assert "5.8 x its lowest" in found.stopped
    assert "again when both were measured again" in found.stopped
    assert "in_flight_limit = 32" in "\n".join(found.lines())


@pytest.mark.parametrize(
    ("levels", "reason"),
    [
        # A loop busy all the time: saturated, Little's law at its capacity is the bound.
        ({1: (400, 2.3), 2: (430, 2.2)}, "busy"),
        # The throughput stops growing twice over while the cost stays flat.
        ({1: (100, 0.1), 2: (105, 0.1), 4: (108, 0.1)}, "stopped growing"),
        # A cost that climbs while the throughput still grows is not a collapse.
        (
            {1: (10, 1.0), 2: (20, 1.0), 4: (40, 2.0), 8: (60, 2.0), 16: (62, 2.0), 32: (63, 2.0)},
            "stopped growing",
        ),
    ],
)
def test_no_limit_without_a_collapse(levels: dict[int, tuple[float, float]], reason: str) -> None:
    _, run = _scripted(levels)
    found = sweep(run, _ticks())
    assert found.limit is None
    assert reason in found.stopped
    assert "in_flight_limit: none" in "\n".join(found.lines())


def test_one_slow_level_on_a_shared_machine_is_no_limit() -> None:
    """At 16 in flight the first reading is slow (another process had the core: 3 x the loop
    time, fewer answered); measured again with the best level it is as cheap as the others, so
    the climb goes on, the level's second reading replaces the first, and no limit is written."""
    readings = {1: [(19, 1.4)], 2: [(37, 1.3)], 4: [(73, 1.3)], 8: [(145, 1.3)],
                16: [(120, 4.0), (290, 1.3)], 32: [(560, 1.3)], 64: [(600, 1.3)],
                128: [(610, 1.3)]}  # fmt: skip
    asked: list[int] = []

    def run(in_flight: int, count: int, seconds: float) -> tuple[int, float, float, float]:
        asked.append(in_flight)
        queue = readings[in_flight]
        rps, loop_ms = queue.pop(0) if len(queue) > 1 else queue[0]
        return int(rps), 1.0, int(rps) * loop_ms / 1000, int(rps) * loop_ms / 1000

    found = sweep(run, iter(float(t) / 10 for t in range(1000)).__next__)
    assert found.limit is None
    assert asked[:7] == [1, 2, 4, 8, 16, 8, 16]
    assert 32 in asked
    assert [x.rps for x in found.levels if x.in_flight == 16] == [290.0]


def test_the_climb_stops_at_the_top_level_and_at_the_budget() -> None:
    """Doubling every time reaches MAX_IN_FLIGHT and stops; a clock past the budget stops it
    before any level; a level that fails stops it with the reason."""
    levels = {2**i: (10.0 * 2**i, 0.1) for i in range(12)}
    asked, run = _scripted(levels)
    found = sweep(run, _ticks())
    assert asked[-1] == MAX_IN_FLIGHT
    assert found.limit is None
    late = iter([0.0, SWEEP_SECONDS + 1.0]).__next__
    assert sweep(run, late).levels == ()

    def failing(in_flight: int, count: int, seconds: float) -> tuple[int, float, float]:
        raise LevelFailed("GET / raised ValueError()")

    stopped = sweep(failing, _ticks())
    assert stopped.limit is None
    assert "raised ValueError" in stopped.stopped


def test_a_real_app_whose_cost_climbs_past_12_in_flight_gets_limit_8() -> None:
    """asgi_crowded costs its loop 0.5 ms per request held past 12 in flight: at 16 each
    request costs several ms and fewer are answered than at 8, so the limit is 8."""
    mix = measure_mix(
        "tests.measure_apps:asgi_crowded", [WeightedPath("/")], app_dir=HERE, requests=5, warmup=1
    )
    assert mix.sweep is not None
    assert [x.in_flight for x in mix.sweep.levels] == [1, 2, 4, 8, 16]
    sixteen = mix.sweep.levels[-1]
    assert sixteen.loop_ms > COST_RISE * min(x.loop_ms for x in mix.sweep.levels[:-1])
    assert mix.sweep.limit == 8
    assert mix.workload_values()["in_flight_limit"] == 8
    assert measure_apps._CROWD["held"] == 0  # every request finished


def test_a_loop_that_only_awaits_gets_no_limit() -> None:
    """asgi_pure_sleep awaits 20 ms: the throughput doubles with every level, no limit."""
    mix = measure_mix(
        "tests.measure_apps:asgi_pure_sleep", [WeightedPath("/")], app_dir=HERE, requests=3,
        warmup=1,
    )  # fmt: skip
    assert mix.sweep is not None
    assert mix.sweep.limit is None
    assert "in_flight_limit" not in mix.workload_values()


def test_cli_writes_the_limit_and_no_sweep_skips_it(tmp_path: Path) -> None:
    """`measure --out` writes in_flight_limit under [workload] and the levels in its table;
    `--no-sweep` measures the paths only; a WSGI app is never swept."""
    out = tmp_path / "w.toml"
    argv = ["measure", "tests.measure_apps:asgi_crowded", "--app-dir", HERE, "--requests", "3"]
    result = CliRunner().invoke(app, [*argv, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "in_flight_limit = 8" in result.output
    assert tomllib.loads(out.read_text())["workload"]["in_flight_limit"] == 8
    skipped = CliRunner().invoke(app, [*argv, "--no-sweep", "--out", str(out)])
    assert skipped.exit_code == 0, skipped.output
    assert "in flight" not in skipped.output
    assert "in_flight_limit" not in tomllib.loads(out.read_text())["workload"]
    wsgi = ["measure", "tests.measure_apps:pure_sleep", "--app-dir", HERE, "--requests", "2"]
    assert "in flight" not in CliRunner().invoke(app, wsgi).output


def test_admission_keeps_within_the_limit() -> None:
    """Little's law admits 62 a process for a 52 ms request at 0.03 of loop time; the measured
    limit caps it at 32 and says why; a limit below what the loop serves in time also caps the
    capacity at limit / held time."""
    base = {"cores": 2, "interface": "asgi", "service_time_ms": 52, "cpu_fraction": 0.03}
    free = plan_for(Workload(**base))
    capped = plan_for(Workload(**base, in_flight_limit=32))
    assert free.admitted_per_process == 62
    assert capped.admitted_per_process == 32
    assert capped.admission_limit == 64
    assert "capped at in_flight_limit 32" in capped.reasons["admitted_per_process"]
    assert capped.asgi_capacity_rps == free.asgi_capacity_rps  # 2 x 32 / 52 ms is above it
    low = plan_for(Workload(**base, in_flight_limit=8))
    assert low.admitted_per_process == 8
    assert low.asgi_capacity_rps == pytest.approx(2 * 8 / 0.05208, rel=0.01)
    assert "in_flight_limit 8" in low.reasons["asgi_capacity_rps"]
