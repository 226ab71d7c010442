"""The syntax of a systemd unit file, as systemd.syntax(7) writes it: `[Section]` headers,
`Key=value` lines, `#` / `;` comments, a backslash continuing a line."""

from __future__ import annotations

from pathlib import Path

from servertune.check.model import CheckInputError

__all__ = ["unit_entries"]


def unit_entries(path: Path, text: str) -> list[tuple[str, str, str, int]]:
    """(section, key, value, line) of every `Key=value`, continued lines joined."""
    entries: list[tuple[str, str, str, int]] = []
    section, pending, start = "", "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not pending:
            start = number
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
                continue
        elif line[:1] in ("#", ";"):
            continue  # a comment inside a continued line is dropped (systemd.syntax(7))
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        key, equals, value = line.partition("=")
        if not equals:
            raise CheckInputError(f"{path}:{start}: not a `Key=value` line: {line[:60]!r}")
        entries.append((section, key.strip(), value.strip(), start))
    return entries
