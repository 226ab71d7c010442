"""Plain progress on stderr: a bar and the step being run, rewritten in place on a terminal.

No dependency and no colour: benchmarks also run in CI logs, where each step gets its own line.
"""

from __future__ import annotations

import sys
from typing import TextIO

__all__ = ["Progress"]

#: Characters in the bar.
BAR_WIDTH = 24


class Progress:
    """Counts steps of a benchmark and shows `[#####-----] 3/12 what is running`."""

    def __init__(self, total: int, *, enabled: bool = True, stream: TextIO | None = None) -> None:
        self.total = max(1, total)
        self.done = 0
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self._inline = enabled and self.stream.isatty()

    def _bar(self) -> str:
        filled = round(BAR_WIDTH * min(self.done, self.total) / self.total)
        return "[" + "#" * filled + "-" * (BAR_WIDTH - filled) + f"] {self.done}/{self.total}"

    def show(self, text: str) -> None:
        """Show what is running now, without counting a step."""
        if not self.enabled:
            return
        line = f"{self._bar()} {text}"
        if self._inline:
            self.stream.write("\r\x1b[2K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def advance(self, text: str = "") -> None:
        """Count one finished step (and say what it gave)."""
        self.done += 1
        if text:
            self.show(text)

    def close(self) -> None:
        """End the in-place line so the table starts on a fresh one."""
        if self.enabled and self._inline:
            self.stream.write("\n")
            self.stream.flush()
