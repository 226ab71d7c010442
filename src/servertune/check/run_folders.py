"""The folders a Dockerfile's `RUN` makes: `mkdir -p A B`, `git clone URL [DIR]` (DIR, else
the URL's last part without `.git`, as git names it), each relative to where the RUN's `cd`
moved (the WORKDIR first). A later `COPY FILE DIR` with no trailing slash puts FILE inside
such a folder, as Docker copies into a folder that exists.
"""

from __future__ import annotations

import posixpath
import re
import shlex

__all__ = ["clone_target", "made_folders"]

#: `git clone`'s options that take the next word as their value (git-clone(1)).
_CLONE_VALUED = frozenset(
    {"-b", "--branch", "--depth", "-o", "--origin", "-c", "--config", "-j", "--jobs"}
    | {"--reference", "--reference-if-able", "--template", "--separate-git-dir", "-u"}
    | {"--upload-pack", "--shallow-since", "--shallow-exclude", "--filter", "--server-option"}
    | {"--bundle-uri"}
)


def made_folders(text: str, workdir: str) -> set[str]:
    """The absolute folders the RUN `text` (its variables expanded) makes, and those above
    them; a folder named by a variable or a command substitution left is not known."""
    made: set[str] = set()
    cwd: str | None = workdir
    for part in re.split(r"&&|\|\||;|\n", text):
        try:
            words = shlex.split(part, comments=True)
        except ValueError:
            continue
        if not words:
            continue
        if words[0] == "cd":
            cwd = _moved(cwd, words[1:])
            continue
        for folder in _named(words):
            if cwd is None or any(c in folder for c in "$`*?"):
                continue
            absolute = posixpath.normpath(posixpath.join(cwd, folder))
            while absolute not in ("/", ""):
                made.add(absolute)
                absolute = posixpath.dirname(absolute)
    return made


def _moved(cwd: str | None, args: list[str]) -> str | None:
    """Where `cd ARGS` moves from `cwd`; None when not known."""
    if len(args) != 1 or cwd is None or args[0].startswith(("-", "~")):
        return None
    if any(c in args[0] for c in "$`*?"):
        return None
    return posixpath.normpath(posixpath.join(cwd, args[0]))


def _named(words: list[str]) -> list[str]:
    """The folders one simple command makes (`mkdir -p A B`; `git clone URL DIR`)."""
    if posixpath.basename(words[0]) == "mkdir":
        names, skip = [], False
        for word in words[1:]:
            if skip:
                skip = False
            elif word in ("-m", "--mode"):
                skip = True
            elif not word.startswith("-"):
                names.append(word)
        return names
    target = clone_target(words)
    return [target[1]] if target is not None and target[1] else []


def clone_target(words: list[str]) -> tuple[str, str] | None:
    """(URL, the folder it is cloned into) of a `git clone [options] URL [DIR]` command: DIR,
    else the URL's last part without `.git`, as git names it; None for another command."""
    if len(words) < 3 or posixpath.basename(words[0]) != "git" or words[1] != "clone":
        return None
    names, skip = [], False
    for word in words[2:]:
        if skip:
            skip = False
        elif word in _CLONE_VALUED:
            skip = True
        elif not word.startswith("-"):
            names.append(word)
    if not names:
        return None
    if len(names) >= 2:
        return names[0], names[1]
    last = names[0].rstrip("/").rpartition("/")[2].rpartition(":")[2]
    return names[0], last[: -len(".git")] if last.endswith(".git") else last
