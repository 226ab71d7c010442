"""Which format a log is in, from its first lines, when `--log-format` does not say.

Only the defaults are tried (nginx `combined`, gunicorn's default, uWSGI, HAProxy, ALB), and
servertune's own `timed` nginx format (`combined` + the timing, what `bench app --keep-log`
writes and the timing hint offers): any other nginx `log_format` or gunicorn
`access_log_format` has to be given, since any format string could have written any line. nginx `combined` and gunicorn's default write the same
shape; `combined` is named, and a log of either has no timing until its format adds one.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from servertune.logs.errors import LogError
from servertune.logs.formats import LogFormat, build_format, format_names
from servertune.logs.reader import chunks

__all__ = ["SNIFF_LINES", "detect_format", "sniffed_lines"]

#: Lines looked at; a format must match most of them.
SNIFF_LINES = 200


def sniffed_lines(path: Path) -> list[str]:
    """The first SNIFF_LINES non-empty lines of `path` (of the first file of a rotated set)."""
    lines: list[str] = []
    for chunk in chunks(path):
        lines += [line for line in chunk.text.split("\n") if line][: SNIFF_LINES - len(lines)]
        if len(lines) >= SNIFF_LINES:
            break
    return lines


def _candidates() -> list[LogFormat]:
    """Each default format, then nginx's `timed` (whose lines `combined` does not match)."""
    from servertune.logs.formats.nginx import TIMED

    return [*(build_format(name) for name in format_names()), build_format("nginx", TIMED)]


def detect_format(path: Path) -> LogFormat:
    """The default format that matches most of the first SNIFF_LINES lines of `path`."""
    if str(path) == "-":
        raise LogError("stdin: name the format with --log-format (it cannot be read twice)")
    lines = sniffed_lines(path)
    if not lines:
        raise LogError(f"{path} is empty")
    best: tuple[int, LogFormat] | None = None
    tied: list[LogFormat] = []
    for fmt in _candidates():
        hits = sum(1 for line in lines if fmt.pattern.match(line))
        if hits and best is not None and hits == best[0]:
            tied.append(fmt)
        if hits and (best is None or hits > best[0]):
            best, tied = (hits, fmt), []
    if best is None or best[0] * 2 < len(lines):
        raise LogError(
            f"{path}: not one of the default formats ({', '.join(format_names())}, or nginx "
            "`timed`); name it with "
            "--log-format (nginx:'<log_format string>', gunicorn:'<access_log_format>')"
        )
    if tied:  # nginx `combined` and gunicorn's default look alike: name both fixes
        hints = " / ".join(f"{f.name}: {f.timing_hint}" for f in (best[1], *tied))
        return dataclasses.replace(best[1], timing_hint=hints)
    return best[1]
