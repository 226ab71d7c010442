"""The arms of an entrypoint's `case "$1" in` that start a server no file here chooses.

An image's entrypoint dispatches on its first argument (`case "$1" in web) exec uwsgi ...;;
web-async) exec daphne ...;; esac`); the image's CMD, a compose `command`, a pod's `args` or a
`docker run IMAGE web-async` choose the arm. An arm whose server line no launch here reaches
is chosen only by an argument given outside these files (a deployment's `docker run`): what it
starts is not followed, and a `not-followed` note at the arm says so and names its server,
rather than leaving it silently missing. A `*)` arm runs for any other argument and is not one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from servertune.check.commands import Word, server_command, words_of
from servertune.check.model import AppServer, CheckInputError, Location, Note
from servertune.check.shell_lists import logical_lines

__all__ = ["unchosen_arm_notes"]

_CASE = re.compile(r"""^\s*case\s+["']?\$(?:1|\{1\})["']?\s+in\s*$""")
#: A pattern holds no `|`, so a line splits into patterns one way only: with `|` inside a
#: pattern a line of `a|b|...` with no `)` tried every grouping, exponential in its `|`s.
_ARM = re.compile(
    r"""^\s*\(?\s*(?P<patterns>[^()\s;|]+(?:\s*\|\s*[^()\s;|]+)*)\s*\)\s*(?P<rest>.*)$"""
)
#: `if [ "$1" = "web" ]; then` / `elif [[ $1 == web ]]` (a test of the first argument only).
_IF_ARM = re.compile(
    r"""^\s*(?P<kw>if|elif)\s+(?:\[\[?|test)\s+["']?\$(?:1|\{1\})["']?\s*==?\s*["']?"""
    r"""(?P<word>[^\s"'\]]+)["']?\s*\]?\]?\s*;?\s*(?:then\b\s*(?P<rest>.*))?$"""
)
_LEADING = frozenset({"exec", "then", "else", "do", "{", "!"})


def _server(path: Path, number: int, line: str) -> str | None:
    """The server the line starts, None when it starts none."""
    try:
        words: list[Word] = words_of(line.strip().rstrip(";").strip(), Location(path, number))
    except CheckInputError:
        return None
    while words and words[0].text in _LEADING:
        words = words[1:]
    found = server_command(words) if words else None
    return found.server if found is not None else None


def argument_arms(path: Path, text: str) -> list[tuple[str, int, str]]:
    """(the arm's word, its server line, the server) of each arm chosen by the first
    argument that starts a server: a `case "$1" in` arm (`*)` left out), an `if`/`elif`
    branch testing `"$1" = word`."""
    return _case_arms(path, text) + _if_arms(path, text)


def _if_arms(path: Path, text: str) -> list[tuple[str, int, str]]:
    """The `if`/`elif [ "$1" = word ]` branches that start a server (`argument_arms`)."""
    found: list[tuple[str, int, str]] = []
    arm: str | None = None
    depth, arm_depth = 0, -1  # the `if`s open; the one whose branch `arm` is
    for number, line in logical_lines(text):
        stripped = line.strip()
        head = _IF_ARM.match(line)
        closed = bool(re.search(r"(^|;)\s*fi\s*$", stripped))  # a one-line `if ...; fi`
        if head is not None:
            depth += head["kw"] == "if" and not closed
            arm, arm_depth = head["word"], depth
            stripped = (head["rest"] or "").strip()
        elif re.match(r"^if\s", stripped):
            depth += not closed
        elif re.match(r"^(elif|else)\b", stripped) and depth == arm_depth:
            arm = None  # a branch another test chooses
            continue
        elif re.match(r"^fi\b", stripped):
            arm = None if depth == arm_depth else arm
            depth -= 1
            continue
        if arm is not None and stripped:
            server = _server(path, number, re.sub(r";\s*fi\s*$", "", stripped))
            if server is not None:
                found.append((arm, number, server))
    return found


def _case_arms(path: Path, text: str) -> list[tuple[str, int, str]]:
    """The `case "$1" in` arms that start a server (`argument_arms`)."""
    found: list[tuple[str, int, str]] = []
    arm: str | None = None
    depth = 0  # inside the `case "$1"`: 1; a nested `case` deeper
    for number, line in logical_lines(text):
        stripped = line.strip()
        if depth == 0:
            depth = 1 if _CASE.match(line) else 0
            arm = None
            continue
        if re.match(r"^case\s", stripped):
            depth += 1
        elif stripped == "esac" or stripped.startswith("esac "):
            depth -= 1
            continue
        if depth != 1:
            continue
        head = _ARM.match(line) if arm is None else None
        if head is not None:
            arm, stripped = head["patterns"], head["rest"]
        if arm is not None and arm != "*" and stripped:
            server = _server(path, number, stripped.removesuffix(";;"))
            if server is not None:
                found.append((arm, number, server))
        if stripped.endswith(";;"):
            arm = None
    return found


def _key(path: Path) -> str:
    return os.path.normpath(os.path.abspath(path))


def unchosen_arm_notes(apps: Sequence[AppServer]) -> list[Note]:
    """A `not-followed` note for each server arm of a script some launch here runs (a step
    after another in its launch chain) whose server line no such launch reaches (a script
    read on its own chooses no arm: nothing passed it an argument)."""
    from servertune.check.graph import launches
    from servertune.check.scripts import looks_like_script
    from servertune.check.source import read_text

    chains = [launch.chain for launch in launches(apps, ()) if len(launch.chain) > 1]
    run = {_key(at.file): at.file for chain in chains for at in chain[1:]}
    reached = {(_key(at.file), at.line) for chain in chains for at in chain}
    notes: list[Note] = []
    for key, path in sorted(run.items()):
        try:
            text = read_text(path)
        except CheckInputError:
            continue
        if not looks_like_script(path, text):
            continue
        for arm, line, server in argument_arms(path, text):
            if (key, line) in reached:
                continue
            notes.append(
                Note(
                    "not-followed",
                    Location(path, line),
                    f"not followed: `{arm}` arm starts {server}, chosen only by an argument "
                    "no file here passes",
                )
            )
    return notes
