"""A server started by `tox -e NAME [-- ARGS]`: the testenv's `commands`, read as tox runs them.

A development unit or script often starts the server through tox (`tox -e dev-server -- --port
8000`), whose `tox.ini` (`-c FILE`, else the working directory's) holds `[testenv:dev-server]`
with `commands = uvicorn --reload app:app {posargs}`. tox runs each line of `commands` in
turn (a testenv without its own takes `[testenv]`'s), with `{posargs}` the arguments after
`--` (`{posargs:DEFAULT}` DEFAULT when there are none) and `{toxinidir}` the folder of
`tox.ini`, the commands' working directory (tox's docs, "Configuration"). A leading `-` (its
exit status ignored) is dropped. A `tox` naming no environment or several is not read: which
one starts the server is not guessed. Nothing here runs tox: `tox.ini` is read, never executed.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from servertune.check.commands import FindConfig, Word, program_name
from servertune.check.makefile import Recipe
from servertune.check.model import Location

__all__ = ["tox_recipe"]

#: tox's options that take a value (`-e NAME`, `-c FILE`, `-x KEY=VALUE`...).
_VALUED = frozenset(
    {"-e", "--env", "-c", "--conf", "--root", "--workdir", "-x", "--override", "-f", "--factor"}
)
_SECTION = re.compile(r"\A\[(?P<name>[^\]]+)\]\s*\Z")
_KEY = re.compile(r"\A(?P<key>[A-Za-z_][\w-]*)\s*[=:]\s*(?P<value>.*)\Z")
_POSARGS = re.compile(r"\{posargs(?::(?P<default>[^}]*))?\}")


def tox_recipe(words: Sequence[Word], find_config: FindConfig) -> Recipe | None:
    """The `commands` `tox [run] -e NAME [-- ARGS]` runs, from the `tox.ini` `find_config`
    finds; None when they are not a tox command line naming one environment, or its commands
    are not among the files."""
    if not words or program_name(words[0].text) != "tox":
        return None
    names: list[str] = []
    config = "tox.ini"
    rest = list(words[1:])
    posargs: list[str] = []
    while rest:
        word = rest.pop(0).text
        if word == "--":
            posargs = [w.text for w in rest]
            break
        if word in _VALUED and rest:
            value = rest.pop(0).text
            if word in ("-e", "--env"):
                names.extend(value.split(","))
            elif word in ("-c", "--conf"):
                config = value
        elif word.startswith("-e") and len(word) > 2 and not word.startswith("--"):
            names.extend(word[2:].split(","))
    if len(names) != 1:
        return None
    found = find_config(config, words[0].at)
    if found is None:
        return None
    commands = _commands(found.text, names[0]) or _commands(found.text, "")
    if not commands:
        return None
    given = shlex.join(posargs)
    lines = tuple(
        Word(_substituted(text, given, bool(posargs)), Location(found.file, found.first_line + n))
        for n, text in commands
    )
    return Recipe(found, lines)


def _commands(text: str, name: str) -> list[tuple[int, str]]:
    """The `commands` of `[testenv:NAME]` (`[testenv]` for ""), each with its line (0-based),
    continuation lines (indented, or after a trailing `\\`) joined."""
    wanted = f"testenv:{name}" if name else "testenv"
    section = ""
    found: list[tuple[int, str]] = []
    inside = False  # in the value of the wanted section's `commands`
    for index, line in enumerate(text.splitlines()):
        header = _SECTION.match(line.strip())
        if header is not None and not line[:1].isspace():
            section, inside = header["name"].strip(), False
            continue
        if inside and line[:1].isspace() and line.strip():
            stripped = line.strip()
            if not stripped.startswith("#"):
                if found and found[-1][1].endswith("\\"):
                    found[-1] = (found[-1][0], found[-1][1][:-1] + " " + stripped)
                else:
                    found.append((index, stripped))
            continue
        inside = False
        key = _KEY.match(line) if section == wanted else None
        if key is not None and key["key"] == "commands":
            inside = True
            if key["value"].strip():
                found.append((index, key["value"].strip()))
    return found


def _substituted(text: str, given: str, has_posargs: bool) -> str:
    """A command line as tox runs it: `{posargs}` the arguments after `--` (else its default),
    `{toxinidir}` the working directory, a leading `-` dropped."""
    text = text.lstrip("-").lstrip()
    text = _POSARGS.sub(lambda m: given if has_posargs else (m["default"] or "").strip(), text)
    return text.replace("{toxinidir}", ".")
