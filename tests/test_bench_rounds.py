"""The adaptive rounds of `bench app`, driven by scripted measurements (no servers, no clock)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from servertune.bench.harness.rounds import AdaptiveRounds, FixedRounds, Rounds
from servertune.bench.harness.scenario import Level

CLIMB = [Level(2), Level(4), Level(8), Level(16), Level(32), Level(64)]
UNLOADED, OVERLOAD = Level(role="unloaded"), Level(role="overload")
LEVELS = [UNLOADED, *CLIMB, OVERLOAD]

#: What a config serves at a level, per repeat (the last value repeats).
Script = dict[str, Callable[[Level, int], float]]


def saturating(
    limit: float, per_connection: float = 20.0, spread: float = 0.0
) -> Callable[[Level, int], float]:
    """req/s = connections x per_connection up to `limit`; `spread` alternates +-spread."""

    def value(level: Level, repeat: int) -> float:
        sign = 1 if repeat % 2 == 0 else -1
        base = (
            limit if level.concurrency is None else min(limit, level.concurrency * per_connection)
        )
        return base * (1 + sign * spread)

    return value


def drive(rounds: Rounds, script: Script) -> list[tuple[int, str, Level]]:
    """Run the rounds as the runner does; every measurement taken, as (round, config, level)."""
    taken: list[tuple[int, str, Level]] = []
    repeat = 0
    while (plan := rounds.next_round()) is not None:
        for config, levels in plan:
            for level in levels:
                if not rounds.wanted(config, level):
                    continue
                value = script[config](level, repeat)
                row = {"rps": value, "good_rps": value, "p99_ms": 50.0}
                rounds.record(config, level, row)
                taken.append((repeat, config, level))
        repeat += 1
    return taken


def adaptive(configs: dict[str, str], **kw: Any) -> AdaptiveRounds:
    return AdaptiveRounds(
        [(c, list(LEVELS)) for c in configs],
        side={c: ("asgi", s) for c, s in configs.items()},
        ranked=lambda level: level.role != "unloaded",
        climb=lambda level: level.concurrency is not None,
        value=lambda level, row: float(row["good_rps" if level.role == "overload" else "rps"]),
        **kw,
    )


def test_fixed_rounds_measure_everything_every_repeat() -> None:
    """--thorough and --quick: every config at every level, `repeats` times."""
    rounds = FixedRounds([("a", list(LEVELS)), ("b", list(LEVELS))], 3)
    taken = drive(rounds, {"a": saturating(100), "b": saturating(100)})
    assert len(taken) == 3 * 2 * len(LEVELS) == rounds.planned


def test_the_climb_stops_where_every_config_has_saturated() -> None:
    """a flattens at 8 connections (100 req/s: 16 shows no gain), b only at 32 (500 req/s: 64
    shows no gain). a stops climbing at 16; b climbs to 64; a gets 32 and 64 in the next round,
    so both share every level, and the overload level is never cut by the climb."""
    rounds = adaptive({"a": "ours", "b": "copied"})
    taken = drive(rounds, {"a": saturating(100), "b": saturating(500)})
    first = [(c, lv) for r, c, lv in taken if r == 0]
    assert [lv for c, lv in first if c == "a" and lv.concurrency] == CLIMB[:4]
    assert [lv for c, lv in first if c == "b" and lv.concurrency] == CLIMB
    assert ("a", OVERLOAD) in first
    second = [(c, lv) for r, c, lv in taken if r == 1]
    assert ("a", Level(32)) in second
    assert ("a", Level(64)) in second


def test_a_config_still_growing_keeps_everyone_climbing() -> None:
    """b never saturates: every level is in play, and a (flat from 8) is measured at all of
    them by the end."""
    rounds = adaptive({"a": "ours", "b": "copied"})
    taken = drive(rounds, {"a": saturating(100), "b": saturating(10_000)})
    assert {lv for _, c, lv in taken if c == "a"} >= set(CLIMB)


def test_the_climb_stops_at_the_first_level_with_no_gain_for_all() -> None:
    """Both saturate at 4 connections: 8 is measured (to see it is flat), 16 and beyond never."""
    rounds = adaptive({"a": "ours", "b": "copied"})
    taken = drive(rounds, {"a": saturating(80), "b": saturating(80)})
    measured = {lv for _, _, lv in taken}
    assert Level(8) in measured
    assert not measured & {Level(16), Level(32), Level(64)}


def test_a_config_clearly_behind_everywhere_is_measured_once() -> None:
    """c serves half of its side's best at every level: measured in the first round only, and
    named in the notes."""
    rounds = adaptive({"a": "ours", "b": "copied", "c": "copied"})
    script = {
        "a": saturating(300, spread=0.1),
        "b": saturating(300, spread=0.1),
        "c": saturating(150, per_connection=10, spread=0.1),
    }
    taken = drive(rounds, script)
    assert {r for r, c, _ in taken if c == "c"} == {0}
    assert rounds.dropped == ["c"]
    assert any("dropped" in note and "c" in note for note in rounds.notes())


def test_a_config_tied_at_one_level_is_kept() -> None:
    """c is behind at high load but its side's equal at 2 connections: it could be the best
    there, so it is not dropped."""
    rounds = adaptive({"a": "ours", "b": "copied", "c": "copied"})
    script = {
        "a": saturating(300, spread=0.1),
        "b": saturating(300, spread=0.1),
        "c": saturating(60, spread=0.1),
    }
    drive(rounds, script)
    assert rounds.dropped == []


def test_levels_whose_ranges_separate_stop_at_two_repeats() -> None:
    """ours serves 2x the copied layout at every level (spread 3%): two repeats settle every
    level, so no third round runs."""
    rounds = adaptive({"a": "ours", "b": "copied"})
    taken = drive(rounds, {"a": saturating(400, 40, 0.03), "b": saturating(200, 20, 0.03)})
    assert max(r for r, _, _ in taken) == 1
    assert rounds.settled("a", OVERLOAD)


def test_close_medians_stop_at_two_repeats() -> None:
    """Two leaders within 2% of each other clearly overlap after two repeats: no third."""
    rounds = adaptive({"a": "ours", "b": "copied"})
    taken = drive(rounds, {"a": saturating(300, spread=0.0), "b": saturating(297, spread=0.0)})
    assert max(r for r, _, _ in taken) == 1


def test_unsettled_levels_get_the_third_repeat_only_there() -> None:
    """Above 4 connections a serves b's req/s, then 10% more: the ranges overlap and the
    medians are 5% apart, so a third round runs, only at those levels (at 2 and 4 connections
    both are equal, settled after two)."""

    def ahead(level: Level, repeat: int) -> float:
        base = saturating(300)(level, repeat)
        return base * (1.1 if repeat and (level.concurrency or 99) > 4 else 1.0)

    rounds = adaptive({"a": "ours", "b": "copied"})
    taken = drive(rounds, {"a": ahead, "b": saturating(300)})
    third = {lv for r, _, lv in taken if r == 2}
    assert third
    assert Level(2) not in third
    assert Level(4) not in third
    assert UNLOADED in third  # the baseline goes with every round its config runs


def test_the_baseline_never_decides_anything() -> None:
    """The unloaded level is measured whenever its config runs but ranks nothing: a config
    measured only there would never be kept for it."""
    rounds = adaptive({"a": "ours", "b": "copied"})
    drive(rounds, {"a": saturating(300), "b": saturating(300)})
    assert not any(lv == UNLOADED for _, lv in rounds.samples)


def test_every_round_measures_less_than_the_thorough_run() -> None:
    """On a run like the FastAPI /io one (9 layouts, three far behind) the adaptive rounds take
    well under half of the thorough run's measurements."""
    configs = {f"copied-{i}": "copied" for i in range(5)} | {f"ours-{i}": "ours" for i in range(4)}
    script: Script = {}
    for i, name in enumerate(configs):
        slow = i in (1, 2, 6)  # the three layouts with 96 ms instead of 52 ms
        script[name] = saturating(300 if not slow else 160, 20 if not slow else 10, 0.04)
    rounds = adaptive(configs)
    taken = drive(rounds, script)
    assert len(taken) < 0.5 * 3 * len(configs) * len(LEVELS)
    assert sorted(rounds.dropped) == ["copied-1", "copied-2", "ours-1"]


def test_a_baseline_is_measured_only_with_the_levels_it_pairs_with() -> None:
    """Paired with overload only: a round that repeats only closed levels of a config skips its
    baseline; one that repeats overload measures it again."""
    rounds = adaptive({"a": "ours", "b": "copied"}, paired=lambda level: level == OVERLOAD)

    def swing_closed(level: Level, repeat: int) -> float:
        base = saturating(300)(level, repeat)
        return base * (1.1 if repeat and level != OVERLOAD else 1.0)

    def swing_overload(level: Level, repeat: int) -> float:
        return saturating(300)(level, repeat) * (1.1 if repeat and level == OVERLOAD else 1.0)

    taken = drive(rounds, {"a": swing_closed, "b": saturating(300)})
    assert [lv for r, c, lv in taken if r == 2 and c == "a"]
    assert (2, "a", UNLOADED) not in taken  # only closed levels were unsettled
    rounds = adaptive({"a": "ours", "b": "copied"}, paired=lambda level: level == OVERLOAD)
    taken = drive(rounds, {"a": swing_overload, "b": saturating(300)})
    assert (2, "a", OVERLOAD) in taken
    assert (2, "a", UNLOADED) in taken


def test_a_once_level_is_measured_in_the_first_round_only() -> None:
    """`bench app --replay`'s levels: unranked like the baseline, but not measured again with a
    repeated overload (the baseline is)."""
    replay = Level(role="replay-1x")
    rounds = AdaptiveRounds(
        [(c, [*LEVELS, replay]) for c in ("a", "b")],
        side={"a": ("asgi", "ours"), "b": ("asgi", "copied")},
        ranked=lambda level: level.role not in ("unloaded", "replay-1x"),
        climb=lambda level: level.concurrency is not None,
        value=lambda level, row: float(row["good_rps" if level.role == "overload" else "rps"]),
        paired=lambda level: level == OVERLOAD,
        once=lambda level: level == replay,
    )

    def swing_overload(level: Level, repeat: int) -> float:
        return saturating(300)(level, repeat) * (1.1 if repeat and level == OVERLOAD else 1.0)

    taken = drive(rounds, {"a": swing_overload, "b": saturating(300)})
    assert (0, "a", replay) in taken
    assert (0, "b", replay) in taken
    assert (2, "a", OVERLOAD) in taken
    assert (2, "a", UNLOADED) in taken
    assert [r for r, _, lv in taken if lv == replay] == [0, 0]


def test_a_side_of_its_own_is_never_dropped_nor_decides() -> None:
    """The user's own config (a side of its own) is repeated where the verdict is open, is never
    dropped, and does not stop a level being settled between ours and copied."""
    rounds = adaptive({"a": "ours", "b": "copied", "u": "user"})
    taken = drive(rounds, {"a": saturating(600, 40), "b": saturating(300), "u": saturating(30, 3)})
    assert rounds.dropped == []
    assert rounds.settled("a", OVERLOAD)
    assert {r for r, c, _ in taken if c == "u"} == {0, 1}


def test_the_notes_say_which_levels_were_skipped_and_why_repeats_stopped() -> None:
    """The climb levels never measured are named, and each level's repeats with the rule that
    stopped them: ranges apart, medians close, or still open at the most repeats."""
    rounds = adaptive({"a": "ours", "b": "copied"})

    def wide(
        level: Level, repeat: int
    ) -> float:  # b swings from -20% to +30% of a at 8 connections
        base = saturating(300)(level, repeat)
        return base * (1.3 if repeat % 2 else 0.8) if level == Level(8) else base

    def fast(level: Level, repeat: int) -> float:  # a serves twice b's req/s at overload
        return saturating(300)(level, repeat) * (2 if level == OVERLOAD else 1)

    drive(rounds, {"a": fast, "b": wide})
    notes = "\n".join(rounds.notes())
    assert "not measured, every candidate had saturated below" in notes
    assert "64 connections" in notes
    assert "2 connections: 2 (the leaders within 2%)" in notes
    assert "8 connections: 3 (still open at the most repeats)" in notes
    assert "overload: 2 (the leaders' ranges apart)" in notes
