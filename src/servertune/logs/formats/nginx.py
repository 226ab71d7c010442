"""nginx access logs, in any `log_format`: given as nginx's own string or read from nginx.conf.

The format string is compiled into one pattern, a variable at a time; the variables servertune
reads become columns (see `servertune.logs.formats`), any other variable matches up to the
literal text that follows it (nginx escapes `"` and control characters in variables as `\\xHH`,
so a quoted variable never holds its closing quote).

Timing, best first: `$upstream_response_time` (the app's time: from the connection to the app
to the last byte of its answer), else `$request_time` (also counts the client's upload and
download). `$upstream_response_time` holds one value per upstream tried, `a, b` for a retry to
the next server and `a : b` for an internal redirect to another group; the request's time is their
sum, and `-` (no answer) counts nothing.
"""

from __future__ import annotations

import re

from servertune.logs.formats.base import (
    QUOTED_REQUEST_LINE,
    REQUEST_LINE,
    LogFormat,
    LogFormatError,
    clf_second,
    epoch_second,
    iso_second,
    seconds_to_ms,
)

__all__ = ["COMBINED", "TIMED", "build", "formats_in_conf", "upstream_ms"]

#: nginx's predefined format (ngx_http_log_module: `log_format combined ...`).
COMBINED = (
    '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
    '"$http_referer" "$http_user_agent"'
)

#: combined with the timing `measure --log` reads: what `bench app --keep-log` writes, and a
#: format to give your own nginx (`log_format timed '...'; access_log ... timed;`).
_TIMING = "$request_length $request_time $upstream_response_time $upstream_connect_time"
TIMED = f"{COMBINED} {_TIMING}"

TIMING_HINT = (
    "add $upstream_response_time (the app's time) or $request_time to the log_format, e.g. "
    f"log_format timed '$remote_addr [$time_local] \"$request\" $status $body_bytes_sent {_TIMING}';"
)

_TIMES = r"[-\d.]+(?:(?:, | : )[-\d.]+)*"
#: The same, its list never given back (`*+`), where what follows the variable cannot start with
#: a part of the list (`, 0.1`, ` : 0.1`, a digit): the line's end, or a `"`. The same matches
#: (a shorter list would leave a `,`, `:` or digit where the rest of the line starts), without the
#: saved state a line of a repeat that may give back (0.02 us of the bench log-read line's 0.43).
_TIMES_KEPT = _TIMES + "+"
#: What may follow a variable read with `_TIMES_KEPT` ("": the end of the line).
_AFTER_TIMES = frozenset({"", '"', "'", "]", "|", ";"})
#: The pattern of each variable servertune reads, and the column it fills.
_VARIABLES: dict[str, tuple[str, str]] = {
    "time_local": ("ts", r"\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}"),
    "time_iso8601": ("ts", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:[+-]\d\d:\d\d|Z"),
    "msec": ("ts", r"\d+)\.(?:\d+"),
    "status": ("status", r"\d{3}"),
    "request_method": ("method", r"[A-Z]{1,20}"),
    "request_uri": ("path", r"[^ ?\"\n]*)(?:\?[^ \"\n]*)?(?:"),
    "uri": ("path", r"[^ ?\"\n]*"),
    "upstream_response_time": ("service", _TIMES),
    "request_time": ("service", r"[\d.]+"),
    "upstream_connect_time": ("connect", _TIMES),
    "request_length": ("length", r"\d+"),
}
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))")


def build(spec: str | None) -> LogFormat:
    """The LogFormat of an nginx `log_format` string (None: nginx's `combined`)."""
    text = COMBINED if spec is None else spec
    if "\n" in text or len(text) > 4096:
        raise LogFormatError("an nginx log_format is one line of at most 4096 characters")
    parts: list[str] = []
    taken: set[str] = set()
    service_field: str | None = None
    position = 0
    matches = list(_VARIABLE.finditer(text))
    if not matches:
        raise LogFormatError(f"an nginx log_format names variables ($status, ...); got {text!r}")
    for index, match in enumerate(matches):
        parts.append(re.escape(text[position : match.start()]))
        position = match.end()
        name = match.group(1) or match.group(2)
        following = text[position : position + 1]
        if index + 1 < len(matches) and matches[index + 1].start() == position:
            following = ""  # two variables side by side: nothing to stop at
        if name == "request" and not {"method", "path"} & taken:
            parts.append(QUOTED_REQUEST_LINE if following == '"' else REQUEST_LINE)
            taken |= {"method", "path"}
            continue
        column, pattern = _VARIABLES.get(name, ("", ""))
        # $upstream_response_time wins over $request_time, wherever each stands in the format.
        wanted = column and column not in taken
        if column == "service" and name == "request_time" and "$upstream_response_time" in text:
            wanted = False
        if wanted:
            if pattern == _TIMES and text[position : position + 1] in _AFTER_TIMES:
                pattern = _TIMES_KEPT
            parts.append(f"(?P<{column}>{pattern})")
            taken.add(column)
            if column == "service":
                service_field = f"${name}"
        elif following:
            parts.append(f"[^{re.escape(following)}\\n]*")
        else:
            parts.append(r"[^\n]*?")
    parts.append(re.escape(text[position:]))
    compiled = re.compile("^" + "".join(parts) + "$", re.MULTILINE)
    second = clf_second
    if "time_iso8601" in text and "$time_local" not in text:
        second = iso_second
    elif "$msec" in text and "$time_local" not in text:
        second = epoch_second
    return LogFormat(
        name="nginx",
        pattern=compiled,
        second=second,
        service_ms=upstream_ms if service_field == "$upstream_response_time" else seconds_to_ms,
        service_field=service_field,
        timing_hint="" if service_field else TIMING_HINT,
    )


def upstream_ms(text: str) -> float | None:
    """`$upstream_response_time` in ms: the sum over the upstreams tried (`a, b : c`)."""
    if "," not in text and ":" not in text:
        return seconds_to_ms(text)
    total = None
    for item in re.split(r", | : ", text):
        value = seconds_to_ms(item)
        if value is not None:
            total = value + (total or 0.0)
    return total


# --- log_format from nginx.conf -----------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:#[^\n]*|'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|([;{}])|([^\s;{}'"]+))"""
)


def formats_in_conf(text: str) -> tuple[dict[str, str], list[str]]:
    """The `log_format` strings an nginx.conf defines by name, and the format names its
    `access_log` directives use, in order (`combined` where an access_log names none)."""
    words: list[str | None] = []  # None ends a directive
    for match in _TOKEN.finditer(text):
        quoted = match.group(1) if match.group(1) is not None else match.group(2)
        if quoted is not None:
            words.append(quoted.replace("\\'", "'").replace('\\"', '"'))
        elif match.group(3):
            words.append(None)
        elif match.group(4):
            words.append(match.group(4))
    formats: dict[str, str] = {"combined": COMBINED}
    used: list[str] = []
    directive: list[str] = []
    for word in [*words, None]:
        if word is not None:
            directive.append(word)
            continue
        if len(directive) >= 3 and directive[0] == "log_format":
            rest = [w for w in directive[2:] if not w.startswith("escape=")]
            formats[directive[1]] = "".join(rest)
        elif len(directive) >= 2 and directive[0] == "access_log" and directive[1] != "off":
            used.append(
                directive[2] if len(directive) >= 3 and "=" not in directive[2] else "combined"
            )
        directive = []
    return formats, used
