"""`bench app` judges a plan's capacity against the same server without servertune's
admission (its copied layouts in the same run), and says when a "copied faster" verdict came
from servertune's own 503s."""

from __future__ import annotations

from typing import Any

from servertune.bench.scenarios.app.capacity import (
    saturation,
    saturation_note,
    saturation_target,
    without_admission,
)
from servertune.bench.scenarios.app.verdicts import shed_cause


def _closed(concurrency: int, rps: float, refused: int = 0) -> dict[str, Any]:
    return {"concurrency": concurrency, "rps": rps, "refused_503": refused, "requests": 1000}


def test_a_plan_stopped_by_its_own_admission_is_judged_against_the_copied_server() -> None:
    """The issue's run: the plan said 1,737 req/s, servertune's uvicorn behind its admission
    shed at 256 connections having served 1,800 (1.04 x: 'met' against itself), while uvicorn
    copied with no admission served 4,300 and stopped growing: judged against 4,300, the plan
    is 0.40 x and the target fails."""
    ours = saturation(
        "servertune-uvicorn-haproxy", "uvicorn", 1737.0,
        [_closed(128, 1700.0), _closed(256, 1800.0, refused=226107)],
    )  # fmt: skip
    assert ours.saturated is not None
    assert saturation_target(ours).met
    copied = saturation(
        "uvicorn-2n+1", "uvicorn", 1737.0, [_closed(128, 2500.0), _closed(256, 4300.0)]
    )
    flat = saturation(
        "uvicorn-1-worker", "uvicorn", 1737.0, [_closed(128, 2400.0), _closed(256, 2500.0)]
    )
    judged = without_admission(ours, [flat, copied])
    assert judged.against == "uvicorn-2n+1"
    assert judged.measured_rps == 4300.0
    assert judged.planned_rps == 1737.0
    target = saturation_target(judged)
    assert "uvicorn-2n+1 (the same server without servertune's admission)" in target.name
    assert "0.40" in target.name


def test_the_best_copied_layout_that_only_floors_leaves_the_target_unjudged() -> None:
    """A copied layout still growing at its top level is a floor, as a row's own would be."""
    ours = saturation("servertune-uvicorn", "uvicorn", 5000.0, [_closed(64, 1000.0, refused=5)])
    growing = saturation(
        "uvicorn-2n+1", "uvicorn", 5000.0, [_closed(32, 600.0), _closed(64, 1200.0)]
    )
    judged = without_admission(ours, [growing])
    assert judged.saturated is None
    assert saturation_target(judged).value is None


def test_without_a_copied_layout_of_the_server_the_row_is_judged_against_itself_and_says_so() -> (
    None
):
    """--only with no copied granian: the granian row's own saturation, named as such."""
    ours = saturation(
        "servertune-granian", "granian", 900.0, [_closed(32, 850.0), _closed(64, 880.0)]
    )
    judged = without_admission(ours, [])
    assert judged.against is None
    note = saturation_note(judged, 2, "wrk", "nginx")
    assert "by servertune-granian itself" in note
    assert "behind its own admission" in note


def test_copied_faster_because_of_servertune_s_503s_says_so() -> None:
    """A level servertune lost while its admission shed what the copied layout answered says
    that cause; one where neither shed says nothing more."""
    said = shed_cause({"refused_503": 226107}, {"refused_503": 0})
    assert "caused by servertune's own admission" in said
    assert "226107" in said
    assert shed_cause({"refused_503": 0}, {"refused_503": 0}) == ""
