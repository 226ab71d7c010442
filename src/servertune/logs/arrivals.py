"""A log's arrival times, to the millisecond where it has them: what `bench app --replay` plays.

`read_traffic` keeps the log's busiest minute as counts per second (`Traffic.busiest`); a burst
of twenty requests within 100 ms and twenty spread over the second count the same there, but
they do not fill a queue the same. This module reads the arrival times themselves, in a second
pass over the log restricted to a window of it (the busiest REPLAY_LOG_SECONDS of that minute),
so memory is bounded by the window, never the log: at most MAX_ARRIVALS times, the first of the
window when it holds more (the window is then cut short, and `describe` says so).

Sub-second stamps (nginx `$msec`, HAProxy's accept date, ALB's ISO time) are read as they are:
the fraction follows the second the format's `ts` column captures. A log stamped in whole
seconds keeps its count per second and spreads each second's requests at random within it
(uniform, sorted: a Poisson process given its count), and `describe` says that too.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from servertune.logs.errors import LogError
from servertune.logs.formats import LogFormat
from servertune.logs.reader import chunks, rotation_order

__all__ = [
    "MAX_ARRIVALS",
    "MIN_ARRIVALS",
    "REPLAY_LOG_SECONDS",
    "Arrivals",
    "busiest_seconds",
    "read_arrivals",
]

#: Log seconds replayed by default: each is played at 1 x, 2 x and 4 x its pace for every layout
#: (1.75 x this many seconds of load per layout), so this bounds what --replay adds to a run.
REPLAY_LOG_SECONDS = 10
#: Arrival times kept: 800 KB of floats; past the client's own ceiling (about 12,000 req/s here,
#: docs/benchmarks.md) for the default window anyway.
MAX_ARRIVALS = 100_000
#: Fewer timed requests than this have no inter-arrival pattern to speak of.
MIN_ARRIVALS = 2
#: The fraction of a second that follows a `ts` column's whole second, where the log has one.
_FRACTION = re.compile(rb"\.(\d{1,9})")
#: Whole-second stamps are spread within their second with this seed: the same schedule each run.
_SPREAD_SEED = 17


@dataclass(frozen=True)
class Arrivals:
    """The arrival times of a window of a log, as seconds from the window's start, sorted."""

    source: str
    #: The window's first second (epoch, UTC) and length in log seconds.
    start: int
    seconds: int
    offsets: tuple[float, ...]
    #: Whether the log's stamps are finer than a second (else spread within each second).
    subsecond: bool
    #: The window's arrivals left out past MAX_ARRIVALS (the window cut short to hold the rest).
    left_out: int = 0

    @property
    def mean_rps(self) -> float:
        """The window's mean arrival rate (req/s of log time)."""
        return len(self.offsets) / self.seconds

    def per_second(self) -> tuple[int, ...]:
        """Arrivals in each log second of the window: the log's rate over time."""
        counts = [0] * self.seconds
        for at in self.offsets:
            counts[min(int(at), self.seconds - 1)] += 1
        return tuple(counts)

    def head(self, seconds: int) -> Arrivals:
        """The window's first `seconds` (all of it when shorter)."""
        if seconds >= self.seconds:
            return self
        kept = tuple(at for at in self.offsets if at < seconds)
        return Arrivals(self.source, self.start, seconds, kept, self.subsecond, self.left_out)

    def schedule(self, speed: float) -> tuple[float, ...]:
        """The arrivals played `speed` x faster: every gap divided by it, the rate times it."""
        return tuple(at / speed for at in self.offsets)

    def describe(self) -> str:
        """The window, its requests and how its times were read, in words (the notes)."""
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(self.start))
        counts = self.per_second()
        how = (
            "arrival times as logged (sub-second stamps)"
            if self.subsecond
            else "the log's stamps are whole seconds: each second's requests spread at random "
            "within it"
        )
        cut = (
            f"; {self.left_out:,} later arrivals of the window left out (at most "
            f"{MAX_ARRIVALS:,} kept)"
            if self.left_out
            else ""
        )
        return (
            f"{self.seconds} s of {self.source} from {when} UTC: {len(self.offsets):,} requests, "
            f"mean {self.mean_rps:.1f} req/s, {min(counts)} to {max(counts)} per second; "
            f"{how}{cut}"
        )


def busiest_seconds(counts: Sequence[int], seconds: int) -> int:
    """The index of the first of the `seconds` consecutive counts with the most requests (the
    earliest on a tie)."""
    if len(counts) <= seconds:
        return 0
    total = best = sum(counts[:seconds])
    at = 0
    for i in range(seconds, len(counts)):
        total += counts[i] - counts[i - seconds]
        if total > best:
            best, at = total, i - seconds + 1
    return at


def read_arrivals(
    paths: Sequence[Path], fmt: LogFormat, start: int, seconds: int, *, limit: int = MAX_ARRIVALS
) -> Arrivals:
    """The arrival times of the log's requests stamped in [start, start + seconds) (epoch
    seconds); LogError when fewer than MIN_ARRIVALS, or, stamped in whole seconds, all in one."""
    scan = fmt.scanner(("ts",))
    ordered = rotation_order(paths)
    names = ["stdin" if str(p) == "-" else Path(p).name for p in ordered]
    # The phrase `Traffic.source` uses: `access.log`, or `access.log.1 and 2 more`.
    source = names[0] + (f" and {len(names) - 1} more" if len(names) > 1 else "")
    whole: dict[int, int] = {}  # second -> requests, for whole-second stamps
    exact: list[float] = []
    subsecond = False
    seen = 0
    end = start + seconds
    for path in ordered:
        for chunk in chunks(path):
            data = chunk.data
            for match in scan.finditer(data):
                try:
                    second = fmt.second(match.group("ts").decode("ascii"))
                except (ValueError, UnicodeDecodeError):
                    continue
                if not start <= second < end:
                    continue
                seen += 1
                if seen > limit:
                    continue
                fraction = _FRACTION.match(data, match.end("ts"))
                if fraction is None:
                    whole[second] = whole.get(second, 0) + 1
                    continue
                subsecond = True
                digits = fraction.group(1)
                exact.append(second - start + int(digits) / 10 ** len(digits))
    offsets = exact + _spread(whole, start)
    if len(offsets) < MIN_ARRIVALS:
        raise LogError(
            f"{source}: {len(offsets)} timed request{'s' if len(offsets) != 1 else ''} in its "
            f"busiest {seconds} s: an arrival pattern needs at least {MIN_ARRIVALS}"
        )
    if not subsecond and len(whole) == 1:
        raise LogError(
            f"{source}: all {len(offsets):,} requests are stamped within the same second, so "
            "there is no arrival pattern to replay (give a longer log, or one with sub-second "
            "stamps such as nginx $msec)"
        )
    offsets.sort()  # lines are logged when a request ends, so a few are out of order
    left_out = max(0, seen - limit)
    if left_out:
        # The window cut short where the kept arrivals end: its rate stays the log's.
        seconds = max(1, min(seconds, int(offsets[-1]) + 1))
    return Arrivals(source, start, seconds, tuple(offsets), subsecond, left_out)


def _spread(whole: dict[int, int], start: int) -> list[float]:
    """Each whole second's requests at uniform random times within it (seeded)."""
    rng = random.Random(_SPREAD_SEED)
    offsets: list[float] = []
    for second in sorted(whole):
        offsets += [second - start + rng.random() for _ in range(whole[second])]
    return offsets
