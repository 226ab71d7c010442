"""uWSGI's default request log: `... [Thu Nov 26 13:15:46 2026] GET /p => generated 12 bytes in 20
msecs (HTTP/1.1 200) ...` (uwsgi/core/logging.c, `log_request`; `in N micros` with
`log-micros`). The time is uWSGI's own, from the request's start to the end of the response,
inside the worker. The timestamp has no zone (the server's local time): only differences are used.
"""

from __future__ import annotations

import re

from servertune.logs.formats.base import MONTHS, LogFormat, LogFormatError, unix_second

__all__ = ["build"]

_PATTERN = (
    r"^[^\n]*?\[pid: \d+\|app: [-\d]+\|req: [-\d]+/\d+\] [^\n]*? "
    r"\[[A-Z][a-z]{2} (?P<ts>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\] "
    r"(?P<method>[A-Z]{1,20}) (?P<path>[^ ?\n]*)[^ \n]* => generated \d+ bytes in "
    r"(?P<service>\d+ m?s?[a-z]*) \([^ \n]* (?P<status>\d{3})\)[^\n]*$"
)


def _second(text: str) -> int:
    """`Nov 26 13:15:46 2026` as a second (the log's local time read as UTC)."""
    try:
        return unix_second(
            int(text[16:20]), MONTHS[text[0:3]], int(text[4:6]),
             int(text[7:9]), int(text[10:12]), int(text[13:15]),
        )  # fmt: skip
    except (KeyError, ValueError) as error:
        raise ValueError(f"not a time: {text!r} ({error})") from None


def _service_ms(text: str) -> float | None:
    number, _, unit = text.partition(" ")
    return int(number) / 1000.0 if unit.startswith("micro") else float(int(number))


def build(spec: str | None) -> LogFormat:
    """uWSGI's default request log (it takes no spec: a custom `log-format` is not read)."""
    if spec is not None:
        raise LogFormatError("uwsgi: only uWSGI's default request log is read (no spec)")
    return LogFormat(
        name="uwsgi",
        pattern=re.compile(_PATTERN, re.MULTILINE),
        second=_second,
        service_ms=_service_ms,
        service_field="in N msecs",
    )
