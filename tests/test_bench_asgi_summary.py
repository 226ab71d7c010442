"""`bench asgi`'s verdicts follow its numbers: ratios and targets computed from the medians."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from servertune.bench.harness.scenario import Level, Results
from servertune.bench.scenarios.asgi import CONFIGS, DEFAULTS, AsgiServers
from servertune.sizing import make_plan


def _scenario(tmp_path: Path) -> tuple[AsgiServers, Any]:
    scenario = AsgiServers()
    run: Any = SimpleNamespace(
        size=AsgiServers.sizes.full,
        repeats=1,
        stack=SimpleNamespace(dir=tmp_path),
        options=SimpleNamespace(quick=False),
    )
    scenario.setup(run)
    scenario.plan = make_plan(scenario.workload)
    return scenario, run


def _row(config: str, level: Level, rps: float, p99: float) -> dict[str, Any]:
    return {
        "config": config, "load": level.role, "rps": rps, "p50_ms": p99 / 2, "p90_ms": p99,
        "p99_ms": p99, "max_ms": p99, "errors": 0, "requests": 100,
    }  # fmt: skip


def test_targets_follow_overload_p99_and_normal_throughput(tmp_path: Path) -> None:
    """A config whose admitted p99 under overload stays within 2 x its unloaded p99 meets the
    latency target; one at 20 x does not; throughput is judged against the best default."""
    scenario, run = _scenario(tmp_path)
    levels = scenario.levels(run, CONFIGS[0])
    assert [level.role for level in levels] == ["unloaded", "normal", "overload"]
    samples = {}
    for config in CONFIGS:
        overload_p99 = 300.0 if config == "servertune-uvicorn-per-worker" else 4000.0
        normal_rps = 120.0 if config == "servertune-uvicorn-per-worker" else 90.0
        for level, rps, p99 in zip(
            levels, (20.0, normal_rps, 100.0), (200.0, 300.0, overload_p99), strict=True
        ):
            samples[(config, level)] = [_row(config, level, rps, p99)]
    report = scenario.summarize(run, Results(samples))
    targets = {t.name: t.met for t in report.targets}
    assert targets["servertune-uvicorn-per-worker: overload p99 of admitted / unloaded p99"]
    assert not targets["servertune-uvicorn: overload p99 of admitted / unloaded p99"]
    assert targets["servertune-uvicorn-per-worker: normal req/s / best default's"]
    assert report.ratios["servertune-uvicorn-per-worker normal req/s / best default"] == round(
        120 / 90, 3
    )
    assert all(f"{name} overload p99 / unloaded p99" in report.ratios for name in DEFAULTS)


def test_native_worker_ratios_come_from_the_two_rows(tmp_path: Path) -> None:
    """native / uvicorn-worker ratios divide the native layout's median by uvicorn's worker's,
    shared socket with shared socket and per worker with per worker."""
    scenario, run = _scenario(tmp_path)
    levels = scenario.levels(run, CONFIGS[0])
    samples = {}
    for config in CONFIGS:
        native = "native" in config
        for level, rps, p99 in zip(
            levels,
            (20.0, 150.0 if native else 100.0, 100.0),
            (200.0, 300.0, 400.0 if native else 800.0),
            strict=True,
        ):
            samples[(config, level)] = [_row(config, level, rps, p99)]
    ratios = scenario.summarize(run, Results(samples)).ratios
    for native, uvicorn in (
        ("servertune-gunicorn-native", "servertune-gunicorn-asgi"),
        ("servertune-gunicorn-native-per-worker", "servertune-gunicorn-asgi-per-worker"),
    ):
        assert ratios[f"{native} / {uvicorn} normal req/s"] == 1.5
        assert ratios[f"{native} / {uvicorn} overload p99"] == 0.5
        assert ratios[f"{native} / {uvicorn} unloaded p99"] == 1.0
