"""The format a `--log-format` option names (with an nginx.conf or not), as a LogFormat.

`--log-format` takes a name (`nginx`, `gunicorn`, `uwsgi`, `haproxy`, `alb`: their defaults) or
`name:SPEC`, SPEC being nginx's `log_format` string or gunicorn's `access_log_format`. With an
nginx.conf (`--log-conf`), `nginx` is the format its `access_log` uses, and `nginx:NAME` the
`log_format NAME` it defines. Without `--log-format`, the format is told from the log's lines.
"""

from __future__ import annotations

import glob
import re
from pathlib import Path

from servertune.inputfile import InputFileError, read_text
from servertune.logs.detect import detect_format
from servertune.logs.errors import LogConfError
from servertune.logs.formats import LogFormat, LogFormatError, build_format, format_names

__all__ = ["MAX_CONF_BYTES", "choose_format", "format_from_configs"]

#: Largest nginx.conf (and each file it includes) read for its log_format: a config is a few KiB.
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

    formats, used = formats_in_conf(_with_includes(conf))
    if sep:
        chosen = spec
    else:
        custom = list(dict.fromkeys(u for u in used if u != "combined"))
        named = [n for n in formats if n != "combined"]
        candidates = [c for c in (custom or named) if c in formats]
        chosen = (
            _best_match(candidates, formats, first_log)
            if len(candidates) > 1
            else (custom or named or used or ["combined"])[0]
        )
    if chosen not in formats:
        raise LogConfError(
            f"{conf} defines no log_format {chosen!r} (it has: {', '.join(formats)})"
        )
    return build_format("nginx", formats[chosen])


#: How deep `include`s of an nginx.conf are followed for its log_format (nginx has no limit;
#: a real tree nests two or three).
MAX_INCLUDE_DEPTH = 8


def _with_includes(conf: Path) -> str:
    """The text of `conf` with the files its `include` directives name appended (globs
    relative to its folder, as nginx resolves them from its prefix), at most MAX_CONF_BYTES
    each and MAX_INCLUDE_DEPTH deep; an include outside the conf's folder, missing or a cycle
    is passed over: the log_format is what is looked for, the config is nginx's to check."""
    try:
        first = read_text(conf, max_bytes=MAX_CONF_BYTES, what="nginx config")
    except InputFileError as error:  # a loop of links too, before resolve() meets it
        raise LogConfError(str(error)) from None
    root = conf.resolve().parent
    seen: set[Path] = set()
    parts: list[str] = []

    def read(path: Path, depth: int, text: str | None = None) -> None:
        real = path.resolve()
        if real in seen or depth > MAX_INCLUDE_DEPTH:
            return
        seen.add(real)
        if text is None:
            try:
                text = read_text(path, max_bytes=MAX_CONF_BYTES, what="nginx config")
            except InputFileError:
                return
        parts.append(text)
        for match in re.finditer(r"(?m)^\s*include\s+['\"]?([^;'\"]+)['\"]?\s*;", text):
            pattern = match.group(1).strip()
            full = pattern if pattern.startswith("/") else str(root / pattern)
            for name in sorted(glob.glob(full)):
                found = Path(name)
                if found.is_file() and found.resolve().is_relative_to(root):
                    read(found, depth + 1)

    read(conf, 0, first)
    return "\n".join(parts)


def _best_match(candidates: list[str], formats: dict[str, str], first_log: Path) -> str:
    """Of several log_formats the config uses, the one most of the log's first lines match
    (the first on a tie, or when the log cannot be read twice)."""
    from servertune.logs.detect import sniffed_lines

    lines = sniffed_lines(first_log) if str(first_log) != "-" else []
    best, best_hits = candidates[0], -1
    for name in candidates:
        try:
            pattern = build_format("nginx", formats[name]).pattern
        except LogFormatError:
            continue
        hits = sum(1 for line in lines if pattern.match(line))
        if hits > best_hits:
            best, best_hits = name, hits
    return best


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
