"""Which (config, level) pairs the runner measures in each round of repeats.

`FixedRounds` is what every scenario did so far: every config at every level, `repeats` times,
interleaved. `AdaptiveRounds` is the default run of `bench app`: it measures only what the
verdict still needs, decided from the numbers measured so far (no clock, so unit tests drive it
with scripted samples):

* **the climb stops once every config has saturated.** In the first round each config climbs
  the closed-loop levels in ascending order; it stops when doubling the connections gained less
  than SATURATION_GAIN over its best so far, but never below the highest level another config
  had to reach before it saturated (so the configs share their levels up to that top). A config
  that stopped below the final top gets the missing levels in the next round, unless dropped;
* **configs clearly behind are dropped after the first round.** A config is a contender at a
  level while its median is within DROP_MARGIN of the best median of its side (servertune's or
  the copied layouts'); one that is a contender at no level cannot be its side's best anywhere,
  so the verdict does not need more of it. Its one sample stays in the report;
* **a level stops being repeated once its verdict is settled**: both sides' leaders have at
  least `min_repeats` samples and their ranges (min-max, widened to +-noise band of the median)
  no longer overlap, or their medians are within CLOSE_MARGIN of each other (a third sample
  cannot separate ranges that wide apart that close); otherwise its contenders are measured
  again, up to `max_repeats`.

Levels with no verdict of their own (a baseline such as `bench app`'s "unloaded") are measured
in every round that measures a level they are paired with (`bench app`: the overload level,
whose p99 target is set against that repeat's unloaded p99), so each repeat keeps its baseline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from servertune.bench.harness.stats import median

__all__ = [
    "CLOSE_MARGIN",
    "DROP_MARGIN",
    "SATURATION_GAIN",
    "AdaptiveRounds",
    "FixedRounds",
    "Rounds",
    "band_range",
]

#: A config has saturated when doubling its connections raised its req/s by less than this over
#: its best so far: wrk's req/s moves by about 5% run to run here (bench balance), so a 10% gain
#: is the smallest that is not noise.
SATURATION_GAIN = 0.10
#: A config more than this below its side's best median at a level (one sample each, 2 shared
#: cores that move +-40% between runs when busy) is not a contender there.
DROP_MARGIN = 0.25
#: Two leaders whose medians are within this of each other clearly overlap: with ranges widened
#: to +-5%, no further sample can separate them.
CLOSE_MARGIN = 0.02


def band_range(values: Sequence[float], band: float) -> tuple[float, float]:
    """The samples' min-max, widened to at least +-band of their median."""
    middle = median(values)
    return min(min(values), middle * (1 - band)), max(max(values), middle * (1 + band))


class Rounds(Protocol):
    """What the runner asks between measurements."""

    @property
    def planned(self) -> int:
        """An upper bound of the measurements in the run (the progress bar's total)."""
        ...

    def next_round(self) -> list[tuple[str, list[Any]]] | None:
        """The configs to start in the next round, each with its levels in order; None: done."""
        ...

    def wanted(self, config: str, level: Any) -> bool:
        """Whether to measure `config` at `level` now (False skips it in this round)."""
        ...

    def record(self, config: str, level: Any, row: dict[str, Any]) -> None:
        """One sample measured."""
        ...

    def notes(self) -> list[str]:
        """What was skipped and why, for the report."""
        ...


@dataclass
class FixedRounds:
    """Every config at every level, `repeats` times (the runner's behaviour for every scenario)."""

    order: list[tuple[str, list[Any]]]
    repeats: int
    done: int = 0

    @property
    def planned(self) -> int:
        return self.repeats * sum(len(levels) for _, levels in self.order)

    def next_round(self) -> list[tuple[str, list[Any]]] | None:
        if self.done >= self.repeats:
            return None
        self.done += 1
        return self.order

    def wanted(self, config: str, level: Any) -> bool:
        return True

    def record(self, config: str, level: Any, row: dict[str, Any]) -> None:
        return None

    def notes(self) -> list[str]:
        return []


@dataclass
class AdaptiveRounds:
    """Rounds that measure what the verdict still needs (see the module docstring).

    `side` maps each config to (group, side): leaders are compared within a group (an entry
    point): the best "ours" against the best "copied"; any other side (e.g. "user") is a
    contender of its own, repeated with the levels its group still needs. `ranked(level)` says whether a level has a
    verdict (else it is a baseline), `climb(level)` whether it is a closed-loop level of the
    climb (they come in ascending order in `order`), and `value(level, row)` reads the number a
    ranked level compares (higher is better) from a sample row. `paired(level)`: whether a
    round that measures this ranked level measures the baselines too. `once(level)`: an
    unranked level that is no baseline, measured in the first round only (`bench app
    --replay`'s levels: their verdict is read from that one sample, and a replay repeated with
    every overload round would cost its whole played time again).
    """

    order: list[tuple[str, list[Any]]]
    side: dict[str, tuple[str, str]]
    ranked: Callable[[Any], bool]
    climb: Callable[[Any], bool]
    value: Callable[[Any, dict[str, Any]], float]
    paired: Callable[[Any], bool] = lambda level: True
    once: Callable[[Any], bool] = lambda level: False
    min_repeats: int = 2
    max_repeats: int = 3
    band: float = 0.05
    #: The repeats --thorough would measure, as the notes say them (0: max_repeats).
    thorough_repeats: int = 0
    samples: dict[tuple[str, Any], list[float]] = field(default_factory=dict)
    #: The highest climb level (its index) any config measured in the first round.
    top: int = -1
    stopped: set[str] = field(default_factory=set)
    dropped: list[str] = field(default_factory=list)
    rounds: int = 0
    measured: int = 0
    planned: int = 0

    def _climbing(self, config: str) -> list[Any]:
        return [lv for lv in self._levels(config) if self.climb(lv)]

    def _levels(self, config: str) -> list[Any]:
        return next(levels for c, levels in self.order if c == config)

    # --- round 1: every config, the climb cut where every config has saturated -------------

    def wanted(self, config: str, level: Any) -> bool:
        if self.rounds != 1 or not self.climb(level):
            return True
        return config not in self.stopped

    def record(self, config: str, level: Any, row: dict[str, Any]) -> None:
        self.measured += 1
        if not self.ranked(level):
            return
        self.samples.setdefault((config, level), []).append(self.value(level, row))
        if self.rounds != 1 or not self.climb(level):
            return
        index = self._climbing(config).index(level)
        if self._saturated(config, level) and index >= self.top:
            self.stopped.add(config)
        self.top = max(self.top, index)

    def _saturated(self, config: str, level: Any) -> bool:
        """Whether `config` gained less than SATURATION_GAIN at `level` over its best below."""
        levels = self._climbing(config)
        below = [self.samples[(config, lv)][0] for lv in levels[: levels.index(level)]
                 if (config, lv) in self.samples]  # fmt: skip
        return bool(below) and self.samples[(config, level)][-1] < (1 + SATURATION_GAIN) * max(
            below
        )

    # --- later rounds: drop, repeat, stop ----------------------------------------------------

    def next_round(self) -> list[tuple[str, list[Any]]] | None:
        if self.rounds >= self.max_repeats:
            return None
        if self.rounds == 0:
            plan = [(c, list(levels)) for c, levels in self.order]
        else:
            if self.rounds == 1:
                self._drop()
            plan = []
            for config, levels in self.order:
                if config in self.dropped:
                    continue
                needed = [lv for lv in levels if self.ranked(lv) and self._needs(config, lv)]
                if needed:
                    base = any(self.paired(lv) for lv in needed)
                    plan.append(
                        (
                            config,
                            [
                                lv
                                for lv in levels
                                if lv in needed
                                or (base and not self.ranked(lv) and not self.once(lv))
                            ],
                        )
                    )
        if not plan:
            return None
        self.rounds += 1
        left = self.max_repeats - self.rounds + 1
        self.planned = self.measured + left * sum(len(levels) for _, levels in plan)
        return plan

    def in_play(self, level: Any) -> bool:
        """Whether a level is part of the run (climb levels above the first round's top are not)."""
        if not self.climb(level):
            return True
        return self._climbing(self.order[0][0]).index(level) <= self.top

    def _group(self, config: str) -> list[str]:
        group = self.side[config][0]
        return [c for c, _ in self.order if self.side[c][0] == group]

    def leaders(self, config: str, level: Any) -> dict[str, str]:
        """Each side's best config at `level` (in `config`'s group) by median of its samples."""
        best: dict[str, str] = {}
        for other in self._group(config):
            values = self.samples.get((other, level))
            if not values:
                continue
            side = self.side[other][1]
            if side not in best or median(values) > median(self.samples[(best[side], level)]):
                best[side] = other
        return best

    def _contender(self, config: str, level: Any) -> bool:
        values = self.samples.get((config, level))
        if not values:
            return True
        leader = self.leaders(config, level)[self.side[config][1]]
        return median(values) >= (1 - DROP_MARGIN) * median(self.samples[(leader, level)])

    def _drop(self) -> None:
        for config, levels in self.order:
            measured = [lv for lv in levels if (config, lv) in self.samples]
            if measured and not any(self._contender(config, lv) for lv in measured):
                self.dropped.append(config)

    def settled(self, config: str, level: Any) -> bool:
        """Whether the verdict at `level` (in `config`'s group) needs no more samples."""
        return self._settled_by(config, level) is not None

    def _settled_by(self, config: str, level: Any) -> str | None:
        """Why the verdict at `level` needs no more samples ("apart", "close"); None: it does."""
        leaders = self.leaders(config, level)
        if not {"ours", "copied"} <= leaders.keys():
            return None
        # The verdict compares servertune's best with the best copied layout; a side of its own
        # (the user's --against file on WSGI) is measured alongside, never the verdict.
        a, b = (self.samples[(leaders[side], level)] for side in ("ours", "copied"))
        if min(len(a), len(b)) < self.min_repeats:
            return None
        (a_low, a_high), (b_low, b_high) = band_range(a, self.band), band_range(b, self.band)
        if a_low > b_high or b_low > a_high:
            return "apart"
        if abs(median(a) - median(b)) <= CLOSE_MARGIN * max(median(a), median(b)):
            return "close"
        return None

    def _needs(self, config: str, level: Any) -> bool:
        if not self.in_play(level):
            return False
        if len(self.samples.get((config, level), [])) >= self.max_repeats:
            return False
        return self._contender(config, level) and not self.settled(config, level)

    def notes(self) -> list[str]:
        """The adaptive run in words: what was dropped, where the climb stopped."""
        times = "once" if self.max_repeats == 1 else f"{self.max_repeats} times"
        thorough = self.thorough_repeats or self.max_repeats
        # --quick measures each level once: there is no "at least 2, at most 1".
        repeated = (
            f"each level is measured {times}"
            if self.max_repeats <= self.min_repeats
            else (
                f"a level is repeated (at least {self.min_repeats}, at most {self.max_repeats} "
                f"times) until the best of each side are apart or within {CLOSE_MARGIN:.0%} of "
                "each other"
            )
        )
        lines = [
            (
                f"adaptive run: {self.measured} measurements in {self.rounds} round(s) (--thorough: "
                f"every candidate at every level, {'once' if thorough == 1 else f'{thorough} times'}"
                f"); {repeated}; the climb stops "
                f"where doubling the connections gained every candidate less than "
                f"{SATURATION_GAIN:.0%}"
            )
        ]
        if self.dropped:
            lines.append(
                "measured once, then dropped as clearly behind (more than "
                f"{DROP_MARGIN:.0%} below their side's best at every level): "
                + ", ".join(self.dropped)
            )
        lines.extend(self._skipped_notes())
        return lines

    def _skipped_notes(self) -> list[str]:
        """Per group: the climb levels never measured, and each level's repeats and why they
        stopped there."""
        lines = []
        for group in dict.fromkeys(g for g, _ in self.side.values()):
            first = next(c for c, _ in self.order if self.side[c][0] == group)
            levels = self._levels(first)
            unused = [str(lv) for lv in levels if not self.in_play(lv)]
            if unused:
                lines.append(
                    f"adaptive run ({group}): not measured, every candidate had saturated below "
                    "(less than "
                    f"{SATURATION_GAIN:.0%} more req/s from doubling its connections): "
                    + ", ".join(unused)
                )
            stops = []
            for level in levels:
                if self.max_repeats == 1:  # each level once: nothing was repeated or stopped
                    break
                if not self.ranked(level) or not self.in_play(level):
                    continue
                leaders = self.leaders(first, level)
                counts = [len(self.samples[(c, level)]) for c in leaders.values()]
                if not counts:
                    continue
                why = {
                    "apart": "the leaders' ranges apart",
                    "close": f"the leaders within {CLOSE_MARGIN:.0%}",
                    None: "still open at the most repeats"
                    if max(counts) >= self.max_repeats
                    else "left open",
                }[self._settled_by(first, level)]
                stops.append(f"{level}: {max(counts)} ({why})")
            if stops:
                lines.append(
                    f"adaptive run ({group}): repeats per level, and why no more: "
                    + "; ".join(stops)
                )
        return lines
