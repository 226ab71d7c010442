"""`run_scenario()`: the one loop every benchmark runs in.

It owns what each scenario used to do its own way: the `Stack` every server starts on (and
stops on, whatever happens), progress on stderr, interleaved repeats (every config once, then
again, so a noisy minute on a shared machine hits all configs alike instead of one), stopping a
config's servers (together) before the next starts, and the report's record of every server.
"""

from __future__ import annotations

import time
from typing import Any

from servertune.bench.harness.needs import require
from servertune.bench.harness.progress import Progress
from servertune.bench.harness.report import BenchOptions, Report
from servertune.bench.harness.rounds import Rounds
from servertune.bench.harness.scenario import Level, Results, Run, Scenario
from servertune.bench.harness.supervision import Stack

__all__ = ["describe", "run_scenario"]


def describe(row: dict[str, Any]) -> str:
    """A sample in a few words for the progress line: throughput and tail when it has them."""
    if isinstance(row.get("rps"), int | float) and isinstance(row.get("p99_ms"), int | float):
        return f"{row['rps']:.1f} req/s, p99 {row['p99_ms']:.0f} ms"
    if "rps" in row:
        return f"{row['rps']:.1f} req/s"
    return "done"


def run_scenario(scenario: Scenario, options: BenchOptions) -> Report:
    """Run `scenario`: setup, every config at every level `repeats` times interleaved (or the
    rounds the scenario plans), summary; the report says how long it took."""
    require(f"bench {scenario.name}", scenario.needs)
    began = time.monotonic()
    size = scenario.sizes.pick(options.quick, options.thorough)
    repeats = size.repeats * options.repeat
    progress = Progress(1, enabled=options.progress)
    samples: dict[tuple[str, Level], list[dict[str, Any]]] = {}
    stack = Stack(scenario.name)
    with stack:
        run = Run(options=options, size=size, repeats=repeats, stack=stack, progress=progress)
        try:
            with run.resources:
                with run.spent.phase("setup"):
                    scenario.setup(run)
                order = [(c, list(scenario.levels(run, c))) for c in scenario.configs(run)]
                rounds = scenario.rounds(run, order)
                budget = scenario.budget_s(run)
                cut: int | None = None
                while cut is None and (planned := rounds.next_round()) is not None:
                    progress.total = max(1, rounds.planned)
                    for config, levels in planned:
                        if (
                            budget is not None
                            and run.repeat > 0
                            and time.monotonic() - began > budget
                        ):
                            cut = run.repeat + 1  # the round it stopped in, counted from 1
                            break
                        _measure_config(scenario, run, config, levels, samples, rounds)
                    run.repeat += 1
        finally:
            progress.close()
    with run.spent.phase("summary"):
        report = scenario.summarize(run, Results(samples))
    report.notes.extend(rounds.notes())
    if cut is not None and budget is not None:
        report.notes.append(
            f"time budget: the run had taken {budget / 60:g} min by round {cut}, so the "
            "repeats left were not measured (their levels have the samples above; --thorough "
            "measures every repeat)"
        )
    report.servers = stack.record()
    elapsed = time.monotonic() - began
    report.elapsed_s = round(elapsed, 1)
    report.time_spent = run.spent.to_json()
    report.notes.append(run.spent.note(elapsed))
    return report


def _measure_config(
    scenario: Scenario,
    run: Run[Any],
    config: str,
    levels: list[Level],
    samples: dict[tuple[str, Level], list[dict[str, Any]]],
    rounds: Rounds,
) -> None:
    """Start one config, measure it at each level the rounds want, stop every server it
    started."""
    of_run = f"run {run.repeat + 1}/{run.repeats}"
    first = len(run.stack.servers)
    run.progress.show(f"{config}: starting ({of_run})")
    try:
        with run.spent.phase("start"):
            served = scenario.start(run, config)
        for level in levels:
            if not rounds.wanted(config, level):
                continue
            at = f"{config}, {level}" if str(level) else config
            run.progress.show(f"{at} ({of_run})")
            with run.spent.phase(f"load {level.role or 'closed'}"):
                row = scenario.measure(run, config, served, level)
            samples.setdefault((config, level), []).append(row)
            rounds.record(config, level, row)
            run.progress.advance(f"{at}: {describe(row)}")
        scenario.finish(run, config, served)
    finally:
        with run.spent.phase("stop"):
            run.stack.stop_together(
                list(reversed(run.stack.servers[first:])), grace_s=scenario.stop_grace_s
            )
