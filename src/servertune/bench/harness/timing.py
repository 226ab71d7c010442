"""Where a run's wall time went: setup, starting and stopping servers, each kind of load, waits.

The runner times its own steps (setup, each config's start and stop, each measurement by the
level's role) and a scenario times what happens inside a measurement (`bench app`'s wait for an
idle app) in a phase nested in it: a nested phase's seconds are taken out of the phase around
it, so the phases add up to the run's wall time without counting anything twice. The report's
notes and JSON carry the breakdown, so a run that took too long says where from its own clock.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["TimeSpent"]


@dataclass
class TimeSpent:
    """Seconds and counts per phase, phases nested without double counting."""

    seconds: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    _open: list[list[float]] = field(default_factory=list)

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the block as `name`; a phase opened inside it is taken out of it."""
        frame = [time.monotonic(), 0.0]  # started at, seconds of nested phases
        self._open.append(frame)
        try:
            yield
        finally:
            self._open.pop()
            took = time.monotonic() - frame[0]
            self.add(name, took - frame[1])
            if self._open:
                self._open[-1][1] += took

    def add(self, name: str, seconds: float) -> None:
        """Count one occurrence of `name` that took `seconds` (not nested in anything)."""
        self.seconds[name] = self.seconds.get(name, 0.0) + max(0.0, seconds)
        self.counts[name] = self.counts.get(name, 0) + 1

    def to_json(self) -> dict[str, dict[str, float]]:
        """Each phase's total seconds (one decimal) and how many times it ran."""
        return {
            name: {"seconds": round(total, 1), "count": self.counts[name]}
            for name, total in self.seconds.items()
        }

    def note(self, elapsed_s: float) -> str:
        """The breakdown in one line for the report's notes, largest phase first."""
        parts = [
            f"{name} {total:.0f} s ({self.counts[name]}x)"
            for name, total in sorted(self.seconds.items(), key=lambda kv: -kv[1])
        ]
        rest = elapsed_s - sum(self.seconds.values())
        return (
            f"time: {elapsed_s:.0f} s in all: "
            + ", ".join(parts)
            + f", the rest {max(0.0, rest):.0f} s"
        )
