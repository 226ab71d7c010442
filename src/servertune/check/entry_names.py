"""The name a launch line is written under: a Procfile's process type, a justfile's recipe, a
Makefile's target or a tox environment.

A line of such a file runs only when its entry is asked for (`heroku` starts the `web`
process, `just prod`, `make serve`, `tox -e dev-server`), so the entry's name says which run
the line is: `web`
is the process a Procfile platform routes requests to, and `prod` / `web_dev` say
production or development as a file's name does.
"""

from __future__ import annotations

import re
from pathlib import Path

from servertune.check.model import CheckInputError, Location
from servertune.check.source import read_text

__all__ = ["PROCFILE_WEB", "entry_name", "entry_words"]

#: The process type Heroku (and Dokku, Scalingo) route HTTP requests to.
PROCFILE_WEB = "web"
_PROCESS = re.compile(r"\A([A-Za-z0-9_-]+):")
#: A recipe's or target's heading: a name at the line's start, its parameters or
#: prerequisites, then a colon that is no `:=` assignment (`prod:`, `serve port="8000":`).
_HEADING = re.compile(r"\A@?([A-Za-z0-9_][A-Za-z0-9_.-]*)(?:\s[^:=]*)?:(?!=)")


def _kind(file: Path) -> str | None:
    name = file.name
    if name == "Procfile" or (name.startswith("Procfile.") and file.suffix not in (".sh", ".bash")):
        return "procfile"
    if name.lower() in ("justfile", ".justfile") or file.suffix == ".just":
        return "recipes"
    if name in ("Makefile", "makefile", "GNUmakefile") or file.suffix == ".mk":
        return "recipes"
    if name == "tox.ini":
        return "tox"
    return None


#: A tox environment's section (`[testenv:dev-server]`): `tox -e dev-server` runs its commands.
_TOX_SECTION = re.compile(r"\A\[testenv:([^\]\s]+)\]")


def entry_name(at: Location) -> str | None:
    """The process type (`web: ...`), recipe or target (`prod:` above the indented line)
    that the line `at` belongs to; None when `at` is in no such file or under no heading."""
    kind = _kind(at.file)
    if kind is None:
        return None
    try:
        lines = read_text(at.file).splitlines()
    except (CheckInputError, OSError, UnicodeDecodeError):
        return None
    if not 0 < at.line <= len(lines):
        return None
    if kind == "procfile":
        match = _PROCESS.match(lines[at.line - 1].strip())
        return match[1] if match else None
    if kind == "tox":
        for line in reversed(lines[: at.line]):
            if line.startswith("["):
                match = _TOX_SECTION.match(line)
                return match[1] if match else None
        return None
    for line in reversed(lines[: at.line]):
        if not line.strip() or line[0] in " \t#":
            continue
        match = _HEADING.match(line)
        return match[1] if match else None
    return None


def entry_words(at: Location) -> str | None:
    """The entry of `entry_name` in words (`the Procfile's web process`, `the justfile's
    recipe prod`, `the Makefile's target serve`); None when `at` is under none."""
    name = entry_name(at)
    if name is None:
        return None
    if _kind(at.file) == "procfile":
        return f"the {at.file.name}'s {name} process"
    if _kind(at.file) == "tox":
        return f"the {at.file.name}'s environment {name}"
    what = "recipe" if at.file.name.lower() in ("justfile", ".justfile") else "target"
    return f"the {at.file.name}'s {what} {name}"
