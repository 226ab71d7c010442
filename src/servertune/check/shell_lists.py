"""A script's lines as the shell reads them before it runs them: backslash-continued lines
joined (`logical_lines`), and a line's simple commands, the words between `;`, `&&`, `||`,
`|` and `&` (`simple_commands`). The readers that only look for which line or command starts
something (a `docker run` in a script, a pod's `sh -c` string, an entrypoint's `case` arm, a
`sed` an installer runs) share these; the script reader, which also tracks backgrounds, tests
and redirections, keeps its own."""

from __future__ import annotations

import shlex

__all__ = ["logical_lines", "simple_commands"]

_OPERATORS = frozenset(";&|")


def logical_lines(text: str) -> list[tuple[int, str]]:
    """The script's lines with backslash-continued ones joined, each with its first line; a
    last line still continued at the end of the file ends there, as the shell ends it."""
    lines: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        start, before = pending if pending is not None else (number, "")
        if line.endswith("\\"):
            pending = (start, before + line[:-1] + " ")
            continue
        pending = None
        lines.append((start, before + line))
    if pending is not None:
        lines.append(pending)
    return lines


def simple_commands(text: str, *, commenters: str = "") -> list[list[str]]:
    """The words of each simple command of `text`, in order, empty commands left out; [] when
    the shell could not split it (an unclosed quote). `commenters="#"` drops a comment to the
    end of the line, as the shell does for a word that starts with `#`."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = commenters
    try:
        tokens = list(lexer)
    except ValueError:
        return []
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token and set(token) <= _OPERATORS:
            commands.append([])
        else:
            commands[-1].append(token)
    return [c for c in commands if c]
