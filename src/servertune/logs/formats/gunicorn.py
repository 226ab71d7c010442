"""gunicorn access logs, in any `access_log_format` (default: gunicorn's own).

gunicorn's atoms (gunicorn/glogging.py, `Logger.atoms`): `%(t)s` is `[10/Oct/2000:13:55:36 -0700]`
brackets included, `%(r)s` the request line, `%(s)s` the status, and the request's time as
`%(D)s` (microseconds), `%(M)s` (milliseconds), `%(L)s` (seconds, decimal) or `%(T)s` (whole
seconds); the finest one in the format is read. gunicorn times the request from the start of
its handling to the end of the response, inside the worker: the app's own time.
"""

from __future__ import annotations

import re

from servertune.logs.formats.base import (
    QUOTED_REQUEST_LINE,
    REQUEST_LINE,
    LogFormat,
    LogFormatError,
    clf_second,
    seconds_to_ms,
)

__all__ = ["DEFAULT", "build"]

#: gunicorn's default access_log_format (gunicorn/config.py, AccessLogFormat).
DEFAULT = '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s"'

TIMING_HINT = (
    "add %(D)s (microseconds) or %(M)s (milliseconds) to gunicorn's access_log_format, e.g. "
    "access_log_format = '%(h)s %(t)s \"%(r)s\" %(s)s %(b)s %(D)s'"
)


def _micro(text: str) -> float | None:
    return int(text) / 1000.0


def _milli(text: str) -> float | None:
    return float(int(text))


#: Timing atoms, finest first: (atom, reader).
_TIMING = (("D", _micro), ("M", _milli), ("L", seconds_to_ms), ("T", seconds_to_ms))
_ATOMS: dict[str, tuple[str, str]] = {
    "t": ("ts", r"\[(?P<ts>\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4})\]"),
    "r": ("", REQUEST_LINE),
    "m": ("method", r"(?P<method>[A-Z]{1,20})"),
    "U": ("path", r"(?P<path>[^ ?\"\n]*)"),
    "s": ("status", r"(?P<status>\d{3})"),
    "D": ("service", r"(?P<service>\d+)"),
    "M": ("service", r"(?P<service>\d+)"),
    "L": ("service", r"(?P<service>\d+\.\d+)"),
    "T": ("service", r"(?P<service>\d+)"),
}
_ATOM = re.compile(r"%\(([A-Za-z]|\{[^}]*\}[ioe])\)s")


def build(spec: str | None) -> LogFormat:
    """The LogFormat of a gunicorn access_log_format (None: gunicorn's default)."""
    text = DEFAULT if spec is None else spec
    if "\n" in text or len(text) > 4096:
        raise LogFormatError("a gunicorn access_log_format is one line of at most 4096 characters")
    atoms = [m.group(1) for m in _ATOM.finditer(text)]
    if not atoms:
        raise LogFormatError(f"a gunicorn access_log_format names atoms (%(s)s, ...); got {text!r}")
    timing = next(((atom, reader) for atom, reader in _TIMING if atom in atoms), None)
    parts: list[str] = []
    taken: set[str] = set()
    position = 0
    matches = list(_ATOM.finditer(text))
    for index, match in enumerate(matches):
        parts.append(re.escape(text[position : match.start()]))
        position = match.end()
        atom = match.group(1)
        column, pattern = _ATOMS.get(atom, ("", ""))
        wanted = pattern and (column not in taken if column else not {"method", "path"} & taken)
        if column == "service" and (timing is None or atom != timing[0]):
            wanted = False
        if wanted:
            if pattern == REQUEST_LINE and text[position : position + 1] == '"':
                pattern = QUOTED_REQUEST_LINE
            parts.append(pattern)
            taken |= {column} if column else {"method", "path"}
            continue
        following = text[position : position + 1]
        if index + 1 < len(matches) and matches[index + 1].start() == position:
            following = ""
        parts.append(f"[^{re.escape(following)}\\n]*" if following else r"[^\n]*?")
    parts.append(re.escape(text[position:]))
    return LogFormat(
        name="gunicorn",
        pattern=re.compile("^" + "".join(parts) + "$", re.MULTILINE),
        second=clf_second,
        service_ms=timing[1] if timing else seconds_to_ms,
        service_field=f"%({timing[0]})s" if timing else None,
        timing_hint="" if timing else TIMING_HINT,
    )
