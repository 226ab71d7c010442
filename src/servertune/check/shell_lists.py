"""A shell line's simple commands: the words between `;`, `&&`, `||`, `|` and `&`, as the
shell splits a list before it runs each command. The readers that only look for which
command of a line starts a server (a `docker run` in a script, a pod's `sh -c` string) share
this one split; the script reader, which also tracks backgrounds, tests and redirections,
keeps its own."""

from __future__ import annotations

import shlex

__all__ = ["simple_commands"]

_OPERATORS = frozenset(";&|")


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
