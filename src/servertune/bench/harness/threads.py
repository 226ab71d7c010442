"""How many threads a server ran at its busiest: sampled from /proc while a load runs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["ThreadPeak"]


class ThreadPeak:
    """Sums `Threads:` of /proc/PID/status over `pids()` every `interval_s`; `peak` is the largest.

    `pids` is called at each sample, so a process group whose members come and go (a server's
    master and its workers) is counted as it is at that moment.
    """

    def __init__(self, pids: Callable[[], list[int]], interval_s: float) -> None:
        self.pids = pids
        self.interval_s = interval_s
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            total = 0
            for pid in self.pids():
                try:
                    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                        if line.startswith("Threads:"):
                            total += int(line.split()[1])
                            break
                except OSError:
                    continue  # gone between the listing and the read
            self.peak = max(self.peak, total)
            self._stop.wait(self.interval_s)

    def __enter__(self) -> ThreadPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
