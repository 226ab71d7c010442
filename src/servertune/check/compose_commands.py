"""Compose files the repository's own commands give together: `docker compose -f A -f B` (or
`docker-compose -f A -f B`, `COMPOSE_FILE=A:B`) in a script, a Makefile or a CI workflow says
that B is read merged over A (https://docs.docker.com/compose/how-tos/multiple-compose-files/
merge/), whatever the two are named and whether or not B could run alone.

The files are those `image_builds.command_files` lists (the ones whose `docker build` lines
choose a Dockerfile's stage). A command's names are taken from the folders it may run in (the
repository's root, where CI and a root Makefile run; the file's own folder, where a script is
run from; a `cd DIR &&` before it on its line); a pair is evidence only when every name it
gives resolves, inside the tree, to the same files from each folder where all resolve (two
readings of one command are no evidence). With more than two files each later one is read over
the first. A file that two commands give over two different bases is not taken: a note names
both, and it is read as before."""

from __future__ import annotations

import os
import re
from pathlib import Path

from servertune.check import memo, resolve
from servertune.check.model import Location, note

__all__ = ["given_over", "where_given"]

_COMMAND = re.compile(r"(?<![\w-])(?:docker[ \t]+compose|docker-compose)(?![\w-])")
#: `COMPOSE_FILE=a.yml:b.yml` (a shell or Makefile assignment, a workflow's `env:` key).
_VARIABLE = re.compile(
    r"""(?<![\w-])COMPOSE_FILE[ \t]*(?:[:?]?=|:)[ \t]*["']?(?P<files>[^\s"'#;&|]+)"""
)
_CD = re.compile(r"(?<![\w-])cd[ \t]+[\"']?(?P<folder>[^\s\"';&|]+)[\"']?[ \t]*(?:&&|;)")
#: Words that end a command on a line (`docker compose ... up -d && docker compose logs`).
_ENDS = frozenset({"&&", "||", ";", "|", ")", "&"})

#: (overlay, base, where the command says so), each path resolved.
_Pair = tuple[Path, Path, Location]


def given_over(path: Path) -> Path | None:
    """The compose file the repository's commands give before `path` (`-f base.yml -f
    path`), written as `path` is (its folder joined to the way there); None when none does,
    or when two commands give it over two different files (a note names both)."""
    root = resolve.root()
    if root is None:
        return None
    wanted = path.resolve()

    def compute() -> tuple[Path, Location] | None:
        bases: dict[Path, Location] = {}
        for overlay, base, at in _pairs(root):
            if overlay == wanted:
                bases.setdefault(base, at)
        if len(bases) > 1:
            said = "; ".join(f"over {b.name} at {_shown(at, root)}" for b, at in bases.items())
            note(
                "overlay",
                Location(path),
                f"{path}: the commands here give it over different files ({said}): which "
                "one it completes is not in these files, read as before",
            )
        return next(iter(bases.items())) if len(bases) == 1 else None

    found = memo.recall(memo.run_table("compose files given over"), wanted, compute)
    if found is None:
        return None
    base = found[0]
    return Path(os.path.normpath(path.parent / os.path.relpath(base, wanted.parent)))


def where_given(path: Path) -> str | None:
    """Where the command giving `path` over its base is (`docker/deploy.sh:59`), as the
    repository writes it; None when no command does."""
    root = resolve.root()
    if root is None:
        return None
    wanted = path.resolve()
    found = [at for overlay, _, at in _pairs(root) if overlay == wanted]
    return _shown(found[0], root) if found else None


def _shown(at: Location, root: Path) -> str:
    try:
        return f"{at.file.resolve().relative_to(root)}:{at.line}"
    except ValueError:
        return str(at)


def _pairs(root: Path) -> tuple[_Pair, ...]:
    """Every (overlay, base) the repository's commands give, read once a run."""

    def found() -> tuple[_Pair, ...]:
        from servertune.check.image_builds import command_files

        return tuple(pair for file in command_files(root) for pair in _read(file, root))

    return memo.recall(memo.run_table("compose commands"), str(root), found)


def _read(file: Path, root: Path) -> list[_Pair]:
    from servertune.check.image_builds import build_file_text

    lines = build_file_text(file).splitlines()
    pairs: list[_Pair] = []
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("#"):
            continue
        at = Location(file, number)
        start = _COMMAND.search(line)
        if start is not None:
            names = _files(lines, number, line[start.end() :])
            pairs += _resolved(names, _folders(file, root, line[: start.start()]), at)
        variable = _VARIABLE.search(line)
        if variable is not None:
            names = [n for n in variable["files"].split(":") if n]
            pairs += _resolved(names, _folders(file, root, line[: variable.start()]), at)
    return pairs


def _files(lines: list[str], number: int, rest: str) -> list[str]:
    """The `-f` / `--file` names of the compose command at line `number`, its `\\`
    continuations joined, up to the word ending the command."""
    from servertune.check.image_builds import continued_words

    words = [word for word, _ in continued_words(lines, number, rest)]
    names: list[str] = []
    for index, word in enumerate(words):
        if word in _ENDS or word.startswith("#"):
            break
        if word in ("-f", "--file") and index + 1 < len(words):
            names.append(words[index + 1])
        elif word.startswith("--file="):
            names.append(word.removeprefix("--file="))
    return names


def _folders(file: Path, root: Path, before: str) -> list[Path]:
    """The folders the command may run in: the root, the file's folder, each joined to a
    `cd DIR` written before the command on its line."""
    folders = [root, file.parent.resolve()]
    moved = _CD.findall(before)
    if moved and "$" not in moved[-1]:
        folders = [folder / moved[-1] for folder in folders]
    return list(dict.fromkeys(folders))


def _resolved(names: list[str], folders: list[Path], at: Location) -> list[_Pair]:
    """Each later file of `names` paired with the first, when one reading of them holds: from
    every folder where all of them are files inside the tree, the same files."""
    if len(names) < 2 or any("$" in n or "://" in n or n == "-" for n in names):
        return []
    readings: set[tuple[Path, ...]] = set()
    for folder in folders:
        paths = tuple(Path(os.path.normpath(folder / n)).resolve() for n in names)
        if all(p.is_file() and resolve.inside(p) for p in paths):
            readings.add(paths)
    if len(readings) != 1:
        return []
    ((base, *overlays),) = readings
    return [(overlay, base, at) for overlay in overlays if overlay != base]
