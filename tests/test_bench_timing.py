"""Where a run's time went: phases add up without counting a nested one twice."""

from __future__ import annotations

import time

import pytest

from servertune.bench.harness.timing import TimeSpent


def test_a_nested_phase_is_taken_out_of_the_one_around_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A phase opened inside another counts its own seconds; the phase around it keeps only
    the rest (on a clock the test moves: sleeps compared with each other raced on a busy machine,
    where a 0.05 s sleep can wake later than a 0.1 s one)."""
    now = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    spent = TimeSpent()
    with spent.phase("load"):
        now[0] += 0.05
        with spent.phase("wait idle"):
            now[0] += 0.1
    with spent.phase("load"):
        pass
    assert spent.counts == {"wait idle": 1, "load": 2}
    # The outer phase got only its own 0.05 s, not the nested 0.1 s.
    assert spent.seconds == {"wait idle": pytest.approx(0.1), "load": pytest.approx(0.05)}


def test_the_note_lists_phases_largest_first_and_the_rest() -> None:
    spent = TimeSpent()
    spent.add("start", 3.0)
    spent.add("load closed", 10.0)
    spent.add("start", 2.0)
    assert spent.to_json() == {
        "start": {"seconds": 5.0, "count": 2},
        "load closed": {"seconds": 10.0, "count": 1},
    }
    assert spent.note(20.0) == (
        "time: 20 s in all: load closed 10 s (1x), start 5 s (2x), the rest 5 s"
    )


def test_a_phase_that_raises_is_still_counted() -> None:
    spent = TimeSpent()
    try:
        with spent.phase("start"):
            raise RuntimeError("did not start")
    except RuntimeError:
        pass
    assert spent.counts == {"start": 1}
