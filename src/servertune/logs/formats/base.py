"""What every access-log format shares: `LogFormat`, its error, and the time and number readers.

Beneath the package's registry (`servertune.logs.formats`) and the one module per server that
builds a `LogFormat`, so the format modules import from here and the registry imports them.
"""

from __future__ import annotations

import calendar
import functools
import importlib
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from servertune.logs.errors import LogError

__all__ = [
    "COLUMNS",
    "MONTHS",
    "QUOTED_REQUEST_LINE",
    "REQUEST_LINE",
    "LogFormat",
    "LogFormatError",
    "clf_second",
    "epoch_second",
    "iso_second",
    "seconds_to_ms",
]

COLUMNS = ("ts", "method", "path", "status", "service", "connect", "length", "term")

#: A request line as servers log it (nginx `$request`, gunicorn `%(r)s`, HAProxy's `%r`): method
#: and path as columns when it has the usual shape (`GET /path?q HTTP/1.1`); anything else up to
#: a quote still matches (nginx logs a TLS hello on a plain port as escaped bytes).
REQUEST_LINE = r"(?:(?P<method>[A-Z]{1,20}) (?P<path>[^ ?\"\n]*)[^ \"\n]*(?: [^\"\n]*)?|[^\"\n]*)"
#: The same, where only a `"` or the line's end may follow it (a format that quotes it): the
#: method and path taken when they are there, never given back (`?+`), then the line up to the
#: quote. The same matches as `REQUEST_LINE`'s: whichever way that splits the request, it ends
#: at the first `"` or newline, the only place a `"` or the line's end follows. Without the
#: alternation, which the regex engine enters with a saved state a line: 0.06 us a line of the
#: 0.43 the bench log-read line takes to match (tests/test_logs.py pins the agreement).
QUOTED_REQUEST_LINE = r"(?:(?P<method>[A-Z]{1,20}) (?P<path>[^ ?\"\n]*))?+[^\"\n]*"

#: A named group's opening (a literal `(?P<` in a format string is escaped: `\(\?P<`).
_NAMED_GROUP = re.compile(r"\(\?P<(\w+)>")
#: A negated set that excludes a newline and something else: `[^ ?"\n]` (the set's text in 1).
_NEWLINE_IN_SET = re.compile(r"\[\^((?:[^\]\\]|\\.)+?)\\n\]")
#: A negated set (`[^ ?"]`; its text in 1), not one inside an escaped `\[`.
_NEGATED_SET = re.compile(r"(?<!\\)\[\^((?:[^\]\\]|\\.)+)\]")

MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}


class LogFormatError(LogError):
    """A format spec (nginx log_format, gunicorn access_log_format) that cannot be read."""


@dataclass(frozen=True)
class LogFormat:
    """One compiled access-log format: the line pattern and how to read its columns."""

    name: str
    pattern: re.Pattern[str]
    #: Reads a `ts` column value into a Unix second (the zone applied where the log has one).
    second: Callable[[str], int]
    #: Reads a `service` (or `connect`) column value into milliseconds; None when not recorded.
    service_ms: Callable[[str], float | None]
    #: Which field the `service` column is, as the server names it (shown as the number's source).
    service_field: str | None
    #: The directive (or flag) that would add the missing timing field, when `service_field` is None.
    timing_hint: str = ""
    #: Extra words on what the format reads, for `--log-format` errors and the docs.
    notes: tuple[str, ...] = field(default=())
    #: The lines the server writes about itself among its requests (HAProxy's proxy and server
    #: events), anchored at a line start: counted apart, neither requests nor unparsable.
    events: re.Pattern[bytes] | None = None

    def column(self, name: str) -> int | None:
        """The index of a column in `findall`'s tuples, or None when this format lacks it."""
        index = self.pattern.groupindex.get(name)
        return None if index is None else index - 1

    def scanner(self, columns: Collection[str], *, strict: bool = True) -> re.Pattern[bytes]:
        """`pattern` over bytes, capturing only `columns` (the others' groups made
        non-capturing): every captured group costs an object per line, and a bytes object is
        cheaper to make than a str (measured on the bench log-read log: 1.06 us a line against
        1.30 us for the str pattern with all its groups). Character classes become ASCII ones
        (`\\d` is 0-9), which is what the servers write; a non-ASCII character of a user's
        log_format is matched as its UTF-8 bytes.

        `strict=False` drops the newline from the negated classes (`[^"\\n]*` becomes `[^"]*`):
        a run of one excluded byte is a tight loop in the regex engine where a set is a lookup
        a byte (0.90 us a line against 1.06). Such a pattern may match across lines, so its
        `findall` over a chunk is only trusted when it found one match per line: each match
        starts at a line start, so a match over two lines leaves a line without one. Then every
        match is within its line and the same as the strict pattern's; else the chunk is
        matched again with the strict pattern.

        It also reads a fixed-width `ts` as that many characters of a line (`.{26}` for
        `$time_local`: one tight loop, not 26 steps; 40 ns a line on the bench log-read log):
        the same span as the strict pattern's wherever the strict one matches, so a chunk's rows
        are trusted only when each distinct `ts` they hold also matches `time_check`."""
        text = _NAMED_GROUP.sub(
            lambda m: m.group(0) if m.group(1) in columns else "(?:", self.pattern.pattern
        )
        if not strict:
            text = _NEWLINE_IN_SET.sub(r"[^\1]", text)
            if (span := _fixed_time(text)) is not None:
                start, end, width = span
                text = f"{text[:start]}.{{{width}}}{text[end:]}"
        text = _NEGATED_SET.sub(_as_bitmap, text)
        return re.compile(text.encode("utf-8"), self.pattern.flags & ~re.UNICODE)

    @property
    def time_check(self) -> Callable[[bytes], object] | None:
        """The `ts` column's own pattern, a fullmatch over bytes, where `scanner(strict=False)`
        reads it by its width only (None: it reads it as the strict pattern does)."""
        span = _fixed_time(self.pattern.pattern)
        if span is None:
            return None
        start, end, _ = span
        body = self.pattern.pattern[start:end]
        return re.compile(body.encode("utf-8"), self.pattern.flags & ~re.UNICODE).fullmatch


def _as_bitmap(match: re.Match[str]) -> str:
    """A negated set of two or more bytes (`[^ ?"]`) as the ranges of the bytes it matches
    (`[\\x00-\\x1f\\x21\\x23-\\x3e\\x40-\\xff]`): the regex engine tests a byte against the ranges' bitmap
    at once, where it tests a negated set's members one by one (the bench log-read path's
    `[^ ?"]*`: 0.04 us a line less). One excluded byte stays a negated set: a tight loop."""
    bytes_class = re.compile(f"[^{match.group(1)}]".encode())
    members = [b for b in range(256) if bytes_class.fullmatch(bytes((b,)))]
    if len(members) >= 255:
        return match.group(0)
    ranges: list[str] = []
    last = -2
    for byte in members:
        if ranges and byte == last + 1:
            ranges[-1] = f"{ranges[-1][:4]}-\\x{byte:02x}"
        else:
            ranges.append(f"\\x{byte:02x}")
        last = byte
    return "[" + "".join(ranges) + "]"


def _fixed_time(text: str) -> tuple[int, int, int] | None:
    """Where the body of the `(?P<ts>...)` group of a pattern's `text` starts and ends, and
    its width, when every match of it has the same width; None otherwise (`$msec`'s `\\d+`,
    or a Python whose `re` no longer has the parser that measures it)."""
    try:  # `re`'s own reading of a pattern's width (its parser, `sre_parse` before 3.11)
        parser: Any = importlib.import_module("re._parser")
    except ImportError:
        return None
    start = text.find("(?P<ts>")
    if start < 0:
        return None
    start += len("(?P<ts>")
    depth, at, in_class = 1, start, False
    while at < len(text):
        char = text[at]
        if char == "\\":
            at += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            at += 1 if text[at + 1 : at + 2] != "^" else 2  # a `]` first is a member
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                break
        at += 1
    else:
        return None
    try:
        low, high = parser.parse(text[start:at]).getwidth()
    except (re.error, AttributeError):
        return None
    return (start, at, low) if low == high and "\n" not in text[start:at] else None


# --- Shared readers ------------------------------------------------------------------------------


#: The years a log's time may fall in: before the first of these servers wrote a log, or past
#: the century, a time is a parse of garbage (`+9999`, a year 9999), not a request; a span
#: between the two would turn the log's requests into a rate of nothing.
FIRST_YEAR, LAST_YEAR = 1990, 2100


def unix_second(
    year: int, month: int, day: int, hour: int, minute: int, second: int, offset_s: int = 0
) -> int:
    """A civil time as a Unix second; ValueError for one no clock shows (31 Feb, 25:61:61, a
    zone past +14:00, a year outside FIRST_YEAR..LAST_YEAR), which `timegm` would roll over."""
    if not FIRST_YEAR <= year <= LAST_YEAR:
        raise ValueError(f"year {year} is not between {FIRST_YEAR} and {LAST_YEAR}")
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        raise ValueError(f"{year}-{month:02d}-{day:02d} is not a date")
    if hour > 23 or minute > 59 or second > 60:  # 60: a leap second
        raise ValueError(f"{hour:02d}:{minute:02d}:{second:02d} is not a time of day")
    if abs(offset_s) > 14 * 3600:
        raise ValueError("a zone offset past 14 hours")
    return calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0)) - offset_s


def clf_second(text: str) -> int:
    """`10/Oct/2000:13:55:36 -0700` (nginx $time_local, gunicorn %(t)s) as a Unix second."""
    try:
        hour, minute, second = int(text[12:14]), int(text[15:17]), int(text[18:20])
        if hour > 23 or minute > 59 or second > 60:  # 60: a leap second
            raise ValueError(f"{hour:02d}:{minute:02d}:{second:02d} is not a time of day")
        return _clf_day(text[0:11], text[21:26]) + hour * 3600 + minute * 60 + second
    except (KeyError, ValueError, IndexError) as error:
        raise ValueError(f"not a time: {text!r} ({error})") from None


@functools.lru_cache(maxsize=64)
def _clf_day(date: str, zone: str) -> int:
    """The Unix second of `10/Oct/2000`'s midnight in `-0700`: read once a day and zone (a log
    reads every second it holds, a day's seconds of one date: 1.8 us a second uncached)."""
    offset = 0
    if zone:
        if zone[0] not in "+-" or int(zone[3:5]) > 59:
            raise ValueError(f"{zone} is not a zone")
        offset = int(zone[1:3]) * 3600 + int(zone[3:5]) * 60
        offset = offset if zone[0] == "+" else -offset
    return unix_second(int(date[7:11]), MONTHS[date[3:6]], int(date[0:2]), 0, 0, 0, offset)


def iso_second(text: str) -> int:
    """`2026-11-26T13:15:46` (the zone, if any, already cut by the pattern) as a Unix second."""
    try:
        return unix_second(
            int(text[0:4]), int(text[5:7]), int(text[8:10]),
            int(text[11:13]), int(text[14:16]), int(text[17:19]),
        )  # fmt: skip
    except (ValueError, IndexError) as error:
        raise ValueError(f"not a time: {text!r} ({error})") from None


def epoch_second(text: str) -> int:
    """`1732627000` (the integer part of nginx $msec) as a Unix second."""
    second = int(text)
    low = calendar.timegm((FIRST_YEAR, 1, 1, 0, 0, 0, 0, 0, 0))
    high = calendar.timegm((LAST_YEAR + 1, 1, 1, 0, 0, 0, 0, 0, 0))
    if not low <= second < high:
        raise ValueError(f"not a time: {text!r} (not between {FIRST_YEAR} and {LAST_YEAR})")
    return second


def seconds_to_ms(text: str) -> float | None:
    """`0.123` seconds as ms; `-` (not recorded) as None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value * 1000.0 if value >= 0 else None
