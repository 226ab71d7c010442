"""Numbers the benchmarks report: percentiles, medians of repeats, CPU time of a process group."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servertune.bench.harness.stats import (
    CpuWatch,
    group_cpu_seconds,
    median,
    median_run,
    percentile,
    percentile_curve,
)


def test_percentile_interpolates_between_ranks() -> None:
    """p50 of 1..4 is 2.5 and p100 is the maximum, as numpy's default computes them."""
    assert percentile([4, 1, 3, 2], 50) == 2.5
    assert percentile([4, 1, 3, 2], 100) == 4
    assert percentile([4, 1, 3, 2], 0) == 1


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=200), st.floats(0, 100), st.floats(0, 100))
def test_percentile_is_monotonic_and_bounded(samples: list[float], p: float, q: float) -> None:
    """A higher percentile is never smaller, and every percentile lies within min..max."""
    low, high = sorted((p, q))
    assert min(samples) <= percentile(samples, low) <= percentile(samples, high) <= max(samples)


def test_percentile_of_nothing_raises() -> None:
    """No samples is an error, never an invented number."""
    with pytest.raises(ValueError, match="no samples"):
        percentile([], 50)


def test_curve_ends_at_the_maximum() -> None:
    """The plotted distribution runs from the minimum (p0) to the maximum (p100)."""
    curve = percentile_curve([5.0, 1.0, 9.0])
    assert curve[0] == (0.0, 1.0)
    assert curve[-1] == (100.0, 9.0)


def test_median_run_takes_each_numbers_median_and_keeps_the_repeats() -> None:
    """Repeated runs collapse to medians per number; the raw runs stay under `repeats`."""
    runs = [
        {"config": "a", "concurrency": 4, "rps": r, "p99_ms": p, "distribution": [[100, p]]}
        for r, p in [(10.0, 300.0), (30.0, 100.0), (20.0, 200.0)]
    ]
    row = median_run(runs)
    assert (row["config"], row["concurrency"], row["rps"], row["p99_ms"]) == ("a", 4, 20.0, 200.0)
    assert [r["rps"] for r in row["repeats"]] == [10.0, 30.0, 20.0]
    assert row["distribution"] == [[100, 200.0]]
    assert median([3, 1, 2]) == 2


def test_median_run_with_a_repeat_that_answered_nothing_takes_the_others() -> None:
    """A repeat with no answer at all (p99 None, as on a machine too busy for the level) does not
    vote and never stops the report: the distribution is the median of the runs that answered."""
    runs = [
        {"config": "a", "concurrency": 4, "rps": r, "p99_ms": p, "distribution": [[100, p]]}
        for r, p in [(10.0, 300.0), (0.0, None), (20.0, 100.0)]
    ]
    row = median_run(runs)
    assert row["p99_ms"] == 200.0
    assert row["distribution"] == [[100, 300.0]]


BURN_IN_CHILD = """
import os, time
if os.fork() == 0:
    start = time.process_time()
    while time.process_time() - start < 0.5:
        pass
time.sleep(30)
"""


def test_group_cpu_counts_every_process_of_the_group() -> None:
    """A process group burning CPU in a child shows that CPU, and an idle group shows little."""
    # The leader sleeps; a forked child burns 0.5 s of CPU, then sleeps too.
    burner = subprocess.Popen(
        [sys.executable, "-c", BURN_IN_CHILD],
        start_new_session=True,
    )
    try:
        # /proc counts in clock ticks (10 ms): allow one tick.
        deadline = time.monotonic() + 20
        while group_cpu_seconds(burner.pid) < 0.49 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert group_cpu_seconds(burner.pid) >= 0.49
        assert group_cpu_seconds(os.getpgid(0) + 10**7) == 0  # no such group
    finally:
        os.killpg(burner.pid, 9)
        burner.wait()


def test_cpu_watch_splits_named_parts_and_counts_this_process_as_load() -> None:
    """Each named part is its counter's change over the watch; CPU burnt here is the load's."""
    readings = {"app": iter([1.0, 3.5]), "proxy": iter([2.0, 2.25])}
    parts = {name: (lambda it=it: next(it)) for name, it in readings.items()}
    with CpuWatch(lambda: 0.0, parts) as watch:
        start = time.process_time()
        while time.process_time() - start < 0.1:  # 100 ms of CPU in this process
            pass
    assert watch.part_seconds == {"app": 2.5, "proxy": 0.25}
    # os.times() truncates user and system time to 10 ms ticks each: at least 80 ms show.
    assert watch.load_seconds >= 0.07
