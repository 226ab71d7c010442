"""Access-log formats: one module per server, each building a `LogFormat`, and their registry.

A `LogFormat` is one regular expression over whole lines (MULTILINE, never crossing a newline)
whose named groups are the columns servertune reads, plus converters that turn one column's
text into a number. The reader matches a whole chunk of lines at once (`findall`, in C, over
bytes: `LogFormat.scanner`, which captures only the columns it is asked for) and counts the
distinct values of each column before converting them, so the Python work per line is a few
C-level counter updates, and each distinct timestamp, time or path is decoded and converted once.

Columns (named groups; a format has the ones its log holds):
  ts       the request's second, in the format's own spelling (`LogFormat.second` reads it)
  method   the request method
  path     the request path, without its query (and without scheme and host in a URL)
  status   the status code sent to the client
  service  the time the app took (`LogFormat.service_ms` reads it; None: not recorded)
  connect  the time to connect to the app (ms, same reader as `service` unless said otherwise)
  length   the request's length in bytes (nginx $request_length, ALB received_bytes)
  term     HAProxy's termination state (`sH--`: the server timed out before its headers)
"""

from __future__ import annotations

from collections.abc import Callable

# The shared part lives beneath the format modules (they import it, the registry imports them);
# its names stay importable from here.
from servertune.logs.formats.base import (
    COLUMNS,
    MONTHS,
    LogFormat,
    LogFormatError,
    clf_second,
    epoch_second,
    iso_second,
    seconds_to_ms,
)

__all__ = [
    "COLUMNS",
    "FORMATS",
    "MONTHS",
    "LogFormat",
    "LogFormatError",
    "build_format",
    "clf_second",
    "epoch_second",
    "format_names",
    "iso_second",
    "seconds_to_ms",
]

# --- The registry --------------------------------------------------------------------------------

#: Every format, by the name `--log-format` takes: a builder from the optional spec (nginx's
#: log_format string, gunicorn's access_log_format) to a LogFormat.
FORMATS: dict[str, Callable[[str | None], LogFormat]] = {}


def _register() -> None:
    from servertune.logs.formats import alb, gunicorn, haproxy, nginx, uwsgi

    FORMATS.update(
        {
            "nginx": nginx.build,
            "gunicorn": gunicorn.build,
            "uwsgi": uwsgi.build,
            "haproxy": haproxy.build,
            "alb": alb.build,
        }
    )


def format_names() -> list[str]:
    """The names `--log-format` takes."""
    if not FORMATS:
        _register()
    return list(FORMATS)


def build_format(name: str, spec: str | None = None) -> LogFormat:
    """The LogFormat called `name`, built from `spec` where the format takes one."""
    if not FORMATS:
        _register()
    try:
        builder = FORMATS[name]
    except KeyError:
        raise LogFormatError(f"unknown log format {name!r} (known: {', '.join(FORMATS)})") from None
    return builder(spec)
