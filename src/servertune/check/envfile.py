"""Env files (`KEY=value` lines): compose's `env_file`, `docker run --env-file`, and
`servertune check --env-file`.

Read by python-dotenv's parser, the one uvicorn's own `--env-file` uses: comments, blank lines,
`export KEY=value`, single quotes (literal), double quotes (escapes), inline comments after
unquoted values, each binding with its line. A line the parser cannot read is refused with its
line; a `KEY` without `=` takes its value from `lookup` (compose takes it from the shell), and
is left out when `lookup` has none. `interpolate` (compose's rule for env files) is applied to
unquoted and double-quoted values.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from pathlib import Path

from servertune.check.model import CheckInputError, Location
from servertune.check.source import read_text

__all__ = ["read_env_file"]


def read_env_file(
    path: Path,
    lookup: Mapping[str, str] | None = None,
    interpolate: Callable[[str, Location], str] | None = None,
) -> tuple[dict[str, str], dict[str, Location]]:
    """The variables of the env file, and the line that set each."""
    from dotenv.parser import parse_stream

    text = read_text(path)
    values: dict[str, str] = {}
    where: dict[str, Location] = {}
    for binding in parse_stream(io.StringIO(text)):
        at = Location(path, binding.original.line)
        if binding.error:
            shown = binding.original.string.strip()[:60]
            raise CheckInputError(f"{at}: not a KEY=value line: {shown!r}")
        if binding.key is None:
            continue  # a comment or a blank line
        value = binding.value
        if value is None:
            value = (lookup or {}).get(binding.key)
            if value is None:
                continue
        else:
            raw = binding.original.string.partition("=")[2].lstrip()
            if interpolate is not None and not raw.startswith("'"):
                value = interpolate(value, at)
        values[binding.key] = value
        # a binding's `original` may start on the blank lines before it
        leading = len(binding.original.string) - len(binding.original.string.lstrip("\n"))
        where[binding.key] = Location(path, binding.original.line + leading)
    return values, where
