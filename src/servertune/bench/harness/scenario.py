"""The `Scenario` protocol: what a benchmark declares; `run_scenario()` (runner.py) does the rest.

A scenario names the configurations it compares and how to measure one of them at one load
level; the runner owns everything around that: the server `Stack`, progress on stderr,
interleaved repeats, the report's servers record, and (through `Results`) the medians. A new
scenario is one module under `servertune.bench.scenarios` and one line in its `SCENARIOS`.

    class Mine(BaseScenario[MySizes]):
        name = "mine"
        sizes = QuickFull(quick=MySizes(repeats=1, ...), full=MySizes(repeats=3, ...))

        def configs(self, run): return ("naive", "servertune")
        def measure(self, run, config, served, level): return {"config": config, ...}
        def summarize(self, run, results): return Report(self.name, [results.median(c) ...])
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from servertune.bench.harness.progress import Progress
from servertune.bench.harness.report import BenchOptions, Report
from servertune.bench.harness.rounds import FixedRounds, Rounds
from servertune.bench.harness.stats import median, median_run
from servertune.bench.harness.supervision import Stack
from servertune.bench.harness.timing import TimeSpent

__all__ = [
    "NO_LEVEL",
    "BaseScenario",
    "Level",
    "QuickFull",
    "Results",
    "Run",
    "Scenario",
    "Sizes",
]

T = TypeVar("T")


class Sizes(Protocol):
    """What every scenario's sizes have: how many interleaved repeats one run makes."""

    @property
    def repeats(self) -> int:
        """Repeats of every (config, level) before `--repeat` multiplies them."""
        ...


S = TypeVar("S", bound=Sizes)


@dataclass(frozen=True)
class QuickFull(Generic[S]):
    """A scenario's two sizes, spelled one way: `--quick` (a smoke run for tests) and the full run."""

    quick: S
    full: S
    #: `--thorough`, where the full run is cut short by what it measures (bench app).
    thorough: S | None = None

    def pick(self, quick: bool, thorough: bool = False) -> S:
        """The size `--quick` (or `--thorough`) asks for."""
        if quick:
            return self.quick
        return self.thorough if thorough and self.thorough is not None else self.full


@dataclass(frozen=True)
class Level:
    """One load level of a configuration: its concurrency, and a role when it is not a plain one
    (balance's 1-connection "single-request" baseline)."""

    concurrency: int | None = None
    role: str = ""

    def __str__(self) -> str:
        if self.concurrency is None:
            return self.role
        shown = f"{self.concurrency} connection{'s' if self.concurrency != 1 else ''}"
        return f"{shown} ({self.role})" if self.role else shown


#: The one level of a scenario that has no load levels (timings, in-process clients).
NO_LEVEL = Level()


@dataclass
class Run(Generic[S]):
    """One run of a scenario, as the runner hands it to each step."""

    options: BenchOptions
    size: S
    #: Interleaved repeats of this run: the size's repeats x `--repeat`.
    repeats: int
    stack: Stack
    progress: Progress
    #: Closed when the run ends: `run.enter(cm)` for servers and files a scenario opens in setup.
    resources: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    #: The repeat being measured (from 0).
    repeat: int = 0
    #: Where the run's wall time went (the runner's steps; a scenario may nest its own).
    spent: TimeSpent = field(default_factory=TimeSpent)

    def enter(self, manager: contextlib.AbstractContextManager[T]) -> T:
        """Enter `manager` for the rest of the run (left when the run ends, even on error)."""
        return self.resources.enter_context(manager)


@dataclass
class Results:
    """Every sample the runner collected, by (config, level), in the order they were taken."""

    samples: dict[tuple[str, Level], list[dict[str, Any]]]

    def rows(self, config: str, level: Level = NO_LEVEL) -> list[dict[str, Any]]:
        """The raw samples of one config at one level, one per repeat."""
        return self.samples[(config, level)]

    def median(self, config: str, level: Level = NO_LEVEL) -> dict[str, Any]:
        """One row: the median of each number over the repeats, the raw ones under `repeats`."""
        return median_run(self.rows(config, level))

    def median_of(self, config: str, key: str, level: Level = NO_LEVEL) -> float:
        """The median of one number over the repeats."""
        return median(float(row[key]) for row in self.rows(config, level))

    def all_rows(self) -> Iterable[dict[str, Any]]:
        """Every sample of every config and level."""
        for rows in self.samples.values():
            yield from rows


class Scenario(Protocol):
    """What `run_scenario()` needs from a benchmark (BaseScenario gives the optional parts)."""

    #: The name `servertune bench NAME` takes and the report's `scenario`.
    name: ClassVar[str]
    #: Its sizes for `--quick` and the full run.
    sizes: ClassVar[QuickFull[Any]]
    #: Whether `plot()` draws something (the CLI says so when it does not).
    has_plot: ClassVar[bool]
    #: What it needs installed, checked before anything starts (`harness.needs`).
    needs: ClassVar[tuple[str, ...]]
    #: At most this long for a config's servers to stop on their own before SIGKILL (None:
    #: each kind's own grace, `supervision.STOP_GRACE_S`).
    stop_grace_s: ClassVar[float | None]

    @property
    def summary(self) -> str:
        """One line for `servertune bench --list`."""
        ...

    def setup(self, run: Run[Any]) -> None:
        """Once per run, before any config: calibrate, install the app, open shared servers."""
        ...

    def configs(self, run: Run[Any]) -> Sequence[str]:
        """The configurations compared, in table order (the same list on every repeat)."""
        ...

    def levels(self, run: Run[Any], config: str) -> Sequence[Level]:
        """The load levels `config` is measured at."""
        ...

    def rounds(self, run: Run[Any], order: list[tuple[str, list[Level]]]) -> Rounds:
        """Which configs and levels each round of repeats measures (`harness.rounds`)."""
        ...

    def budget_s(self, run: Run[Any]) -> float | None:
        """Seconds from the run's start after which the runner starts no further config once
        the first round is done (the remaining repeats are left out, and the report says so);
        None: every round the rounds plan."""
        ...

    def start(self, run: Run[Any], config: str) -> Any:
        """Start what `config` serves with (servers go on `run.stack`; the runner stops them
        after the config's levels); returns whatever `measure` needs."""
        ...

    def measure(self, run: Run[Any], config: str, served: Any, level: Level) -> dict[str, Any]:
        """One sample of `config` at `level`: a run row with `config` and its numbers."""
        ...

    def finish(self, run: Run[Any], config: str, served: Any) -> None:
        """After `config`'s last level, before the runner stops its servers: what must end
        before they stop (a request log's last lines)."""
        ...

    def summarize(self, run: Run[Any], results: Results) -> Report:
        """The report: rows (medians), ratios, targets, notes, versions."""
        ...

    def plot(self, report: Report, path: Path) -> None:
        """Draw the report as a PNG (only called when `has_plot`)."""
        ...


class BaseScenario(Generic[S]):
    """Defaults for the optional parts of `Scenario`: no setup, one level, nothing to start,
    no plot; the summary is the first line of the scenario module's docstring."""

    name: ClassVar[str]
    sizes: ClassVar[QuickFull[Any]]
    has_plot: ClassVar[bool] = False
    #: Modules (or the uwsgi command) it starts or imports: checked before anything starts,
    #: each missing one named with its extra (`servertune.bench.harness.needs`).
    needs: ClassVar[tuple[str, ...]] = ()
    stop_grace_s: ClassVar[float | None] = None

    @property
    def summary(self) -> str:
        """The first line of the module docstring."""
        doc = (sys.modules[type(self).__module__].__doc__ or "").strip()
        return doc.splitlines()[0] if doc else ""

    def setup(self, run: Run[S]) -> None:
        """Nothing to prepare."""

    def levels(self, run: Run[S], config: str) -> Sequence[Level]:
        """One level: the scenario has no load levels."""
        return (NO_LEVEL,)

    def configs(self, run: Run[S]) -> Sequence[str]:
        """Every scenario names its configurations."""
        raise NotImplementedError

    def rounds(self, run: Run[S], order: list[tuple[str, list[Level]]]) -> Rounds:
        """Every config at every level, `run.repeats` times, interleaved."""
        return FixedRounds(list(order), run.repeats)

    def budget_s(self, run: Run[S]) -> float | None:
        """No time budget: every round."""
        return None

    def start(self, run: Run[S], config: str) -> Any:
        """Nothing to start."""
        return None

    def measure(self, run: Run[S], config: str, served: Any, level: Level) -> dict[str, Any]:
        """Every scenario measures."""
        raise NotImplementedError

    def finish(self, run: Run[S], config: str, served: Any) -> None:
        """Nothing to end before the servers stop."""

    def summarize(self, run: Run[S], results: Results) -> Report:
        """Every scenario summarizes."""
        raise NotImplementedError

    def plot(self, report: Report, path: Path) -> None:
        """No plot (has_plot is False)."""
        raise NotImplementedError(f"scenario {self.name} has no plot")


def _conforms(scenario: BaseScenario[Any]) -> Scenario:
    """Never called: mypy proves here that every BaseScenario is a Scenario."""
    return scenario
