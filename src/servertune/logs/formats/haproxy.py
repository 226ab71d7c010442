"""HAProxy's HTTP log (`option httplog`), with or without a syslog prefix.

`... 10.0.1.2:33317 [06/Feb/2009:12:14:14.655] http-in static/srv1 10/0/30/69/109 200 2750 - -
---- 1/1/1/1/0 0/0 {..} {..} "GET /index.html HTTP/1.1"` (HAProxy configuration manual,
"HTTP log format"). The timers are TR/Tw/Tc/Tr/Ta in ms (Tq/Tw/Tc/Tr/Tt before 1.9); Tr, the
server's time to send its response headers, is the app's time; -1 means it never answered. The
termination state's first two characters say who ended the session and when: `sH` is the server
timeout before headers (the 504), `cD`/`CD` the client leaving during the data.
"""

from __future__ import annotations

import re

from servertune.logs.formats.base import (
    MONTHS,
    QUOTED_REQUEST_LINE,
    LogFormat,
    LogFormatError,
    unix_second,
)

__all__ = ["build"]

#: The line up to the `[` that opens the time (past a syslog prefix's `haproxy[14389]:`): each
#: `[` in turn, the first the rest of the pattern matches from, as `^[^\n]*?\[` finds it, but a
#: run to the next `[` at a time, not a character at a time (a syslog line 1.30 us to match
#: against 0.99, a line without the prefix 1.04 against 0.94).
_UP_TO_TIME = r"^(?:[^\[\n]*\[)+?"
_PATTERN = (
    _UP_TO_TIME + r"(?P<ts>\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d)(?:\.\d+)?\] \S+ \S+ "
    r"-?\d+/-?\d+/(?P<connect>-?\d+)/(?P<service>-?\d+)/\+?-?\d+ (?P<status>-?\d+) \+?\d+ \S+ \S+ "
    r"(?P<term>\S{4}) \S+ \S+(?: \{[^}\n]*\})* "
    rf"\"{QUOTED_REQUEST_LINE}\"?$"
)


#: HAProxy's own messages, which go to the same log as the requests (its configuration manual,
#: "log"; the texts are its source's, proxy.c and server.c): a proxy started, paused, resumed
#: or stopped (a soft stop writes "Proxy NAME stopped (cumulated conns: ...)"), a server going
#: up or down, a backend left without servers. With or without a syslog prefix.
_EVENTS = (
    rb"^(?:[^\n]*?\]: )?(?:Proxy \S+ (?:started|stopped)|(?:Stopping|Pausing|Resuming) "
    rb"(?:frontend|backend|proxy) |(?:Health check for )?(?:backup )?[Ss]erver \S+/\S+ "
    rb"(?:is |was )?(?:UP|DOWN|going DOWN|succeeded|failed)|(?:backend|proxy) \S+ has no "
    rb"server available)[^\n]*$"
)


def _second(text: str) -> int:
    try:
        return unix_second(
            int(text[7:11]), MONTHS[text[3:6]], int(text[0:2]),
             int(text[12:14]), int(text[15:17]), int(text[18:20]),
        )  # fmt: skip
    except (KeyError, ValueError) as error:
        raise ValueError(f"not a time: {text!r} ({error})") from None


def _ms(text: str) -> float | None:
    value = int(text)
    return float(value) if value >= 0 else None


def build(spec: str | None) -> LogFormat:
    """HAProxy's HTTP log format (it takes no spec)."""
    if spec is not None:
        raise LogFormatError("haproxy: only HAProxy's `option httplog` format is read (no spec)")
    return LogFormat(
        name="haproxy",
        pattern=re.compile(_PATTERN, re.MULTILINE),
        second=_second,
        service_ms=_ms,
        service_field="Tr",
        events=re.compile(_EVENTS, re.MULTILINE),
    )
