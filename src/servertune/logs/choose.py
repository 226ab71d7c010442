"""The format a `--log-format` option names (with an nginx.conf or not), as a LogFormat.

`--log-format` takes a name (`nginx`, `gunicorn`, `uwsgi`, `haproxy`, `alb`: their defaults) or
`name:SPEC`, SPEC being nginx's `log_format` string or gunicorn's `access_log_format`. With an
nginx.conf (`--log-conf`), `nginx` is the format its `access_log` uses, and `nginx:NAME` the
`log_format NAME` it defines. Without `--log-format`, the format is told from the log's lines.
"""

from __future__ import annotations

from pathlib import Path

from servertune.inputfile import InputFileError, read_text
from servertune.logs.detect import detect_format
from servertune.logs.errors import LogConfError
from servertune.logs.formats import LogFormat, LogFormatError, build_format, format_names

__all__ = ["MAX_CONF_BYTES", "choose_format", "format_from_configs"]

#: Largest nginx.conf read for its log_format (a config is a few KiB; includes are not followed).
MAX_CONF_BYTES = 1024 * 1024


def choose_format(option: str | None, conf: Path | None, first_log: Path) -> LogFormat:
    """The LogFormat that `--log-format option` (and `--log-conf conf`) name."""
    if option is None and conf is None:
        return detect_format(first_log)
    name, sep, spec = (option or "nginx").partition(":")
    if name not in format_names():
        raise LogFormatError(
            f"must be one of {', '.join(format_names())}, or NAME:SPEC; got {name!r}"
        )
    if conf is None:
        return build_format(name, spec if sep else None)
    if name != "nginx":
        raise LogFormatError(f"--log-conf reads an nginx.conf: it goes with nginx, not {name}")
    from servertune.logs.formats.nginx import formats_in_conf

    try:
        text = read_text(conf, max_bytes=MAX_CONF_BYTES, what="nginx config")
    except InputFileError as error:
        raise LogConfError(str(error)) from None
    formats, used = formats_in_conf(text)
    if sep:
        chosen = spec
    else:
        custom = [u for u in used if u != "combined"]
        named = [n for n in formats if n != "combined"]
        chosen = (custom or named or used or ["combined"])[0]
    if chosen not in formats:
        raise LogConfError(
            f"{conf} defines no log_format {chosen!r} (it has: {', '.join(formats)})"
        )
    return build_format("nginx", formats[chosen])


def format_from_configs(paths: list[Path]) -> LogFormat | None:
    """The log_format of the first nginx config among `paths` that defines one of its own."""
    from servertune.logs.formats.nginx import formats_in_conf

    for path in paths:
        try:
            text = read_text(path, max_bytes=MAX_CONF_BYTES, what="nginx config")
        except InputFileError:
            continue
        if "log_format" not in text:
            continue
        formats, used = formats_in_conf(text)
        named = [u for u in used if u != "combined"] or [n for n in formats if n != "combined"]
        if named and named[0] in formats:
            return build_format("nginx", formats[named[0]])
    return None
