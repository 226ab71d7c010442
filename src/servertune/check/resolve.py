"""Which files `check` may read: the tree it was given, and nothing outside it.

`check` runs in CI on contributors' pull requests, and its output is public: a file it reads
must never steer it into reading the runner's own files (`env_file: ../../secrets.env`, a
symlink to `/etc`, `include /home/runner/...`). Every reader asks this module before it opens
a file another file names, and gets either the path to read (inside the root after following
symlinks) or None, with a coverage note naming the reference as written and the line that
wrote it. The root is passed in (`check_files(root=)`: the repository in folder mode), else
the common folder of the files given, taken up to the repository holding it when that is
close above (`default_root`); the files the user names (`--env-file`, `--log`, `--workload`,
and the configs themselves) are the user's own choice and are read without asking. A folder
walk asks `inside` of each path it finds (a symlink out of the tree is not the tree's).
"""

from __future__ import annotations

import contextvars
import fnmatch
import glob
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import takewhile
from pathlib import Path

from servertune.check import memo
from servertune.check.model import Location, note

__all__ = [
    "NGINX_SERVER_DIRECTORIES",
    "REPOSITORY_LEVELS",
    "admit",
    "at_one_root",
    "confined_to",
    "default_root",
    "glob_inside",
    "glob_prefix",
    "inside",
    "real_path",
    "root",
    "tree_form",
    "within_default",
]

_ROOT: contextvars.ContextVar[Path | None] = contextvars.ContextVar(
    "servertune_check_root", default=None
)


#: Directories nginx's packages include server files from: their relative includes name
#: files of the configuration prefix above them (nginx.py resolves them there).
NGINX_SERVER_DIRECTORIES = frozenset({"conf.d", "sites-available", "sites-enabled", "http.d"})
#: How far above the files' common folder the repository holding them is looked for: as far
#: as a Dockerfile's build context is (dockerfile.CONTEXT_ANCESTORS: `docker/Dockerfile` built
#: from the root), and no further, so a home folder kept in git is never taken for it.
REPOSITORY_LEVELS = 2


def _home(path: Path) -> Path:
    """The folder a given file's references are relative to: its own, or for an nginx server
    file in `conf.d/` / `sites-available/` the configuration prefix above it (nginx resolves
    its relative includes there)."""
    parent = path.absolute().parent
    return parent.parent if parent.name in NGINX_SERVER_DIRECTORIES else parent


def default_root(paths: Sequence[Path]) -> Path:
    """The tree `check` reads within when given files rather than a repository: their common
    folder (symlinks followed), or the repository holding it (the folder with `.git`) when
    that is at most REPOSITORY_LEVELS above: `check docker/Dockerfile` may read what the
    Dockerfile copies from the repository's root, never anything outside the repository."""
    homes = [str(_home(p).resolve()) for p in paths] or [str(Path.cwd().resolve())]
    common = Path(os.path.commonpath(homes))
    for folder in [common, *common.parents][: REPOSITORY_LEVELS + 1]:
        if (folder / ".git").exists():
            return folder
    return common


@contextmanager
def confined_to(folder: Path) -> Iterator[Path]:
    """Read nothing outside `folder` (symlinks followed) while the block runs."""
    resolved = folder.resolve()
    token = _ROOT.set(resolved)
    try:
        yield resolved
    finally:
        _ROOT.reset(token)


@contextmanager
def within_default(path: Path) -> Iterator[Path]:
    """The run's root when one is set; else (a reader called on its own) the given file's."""
    current = _ROOT.get()
    if current is not None:
        yield current
        return
    with confined_to(default_root([path])) as folder:
        yield folder


def root() -> Path | None:
    """The run's root (symlinks followed), None with no run in progress."""
    return _ROOT.get()


def inside(path: Path, referrer: Path | None = None) -> bool:
    """Whether `path`, symlinks followed, lies inside the root (with no run in progress: inside
    the folder of `referrer`, the file that names it)."""
    folder = _ROOT.get()
    if folder is None:
        folder = default_root([referrer]) if referrer is not None else Path.cwd().resolve()
    try:
        real = real_path(path)
    except (OSError, RuntimeError):  # a symlink loop: nothing to read
        return False
    return real.is_relative_to(folder)


def real_path(path: Path) -> Path:
    """`path.resolve()`, worked out once per run for each path (and working folder): the
    links of a chain ask whether the same few candidates are inside the tree thousands of
    times (a supervisord config's programs looked for from every folder up to the root, for
    every command of every script that runs it), and the files do not move while check runs."""
    return memo.recall(memo.run_table("real paths"), (os.getcwd(), path), lambda: path.resolve())


def admit(target: Path, reference: str, at: Location, what: str) -> Path | None:
    """`target` (the file `what` names as `reference` at `at`) when it may be read: inside the
    root after following symlinks; else None, and a coverage note naming the reference and its
    line (never where it resolves to: that would print the runner's own layout)."""
    if inside(target, at.file):
        return target
    folder = _ROOT.get() or default_root([at.file])
    how = "a symlink out of" if _through_symlink(target, folder) else "outside"
    note(
        "outside-tree",
        at,
        f"{what} {reference!r}: {how} the tree check reads ({_shown(folder)}): not read",
    )
    return None


def tree_form(target: Path, referrer: Path) -> Path:
    """`target` written the way the run writes its files, so one file has one name: an
    absolute path (from compose's `$PWD`, the folder it runs in) under the working folder is
    relative to it when the file naming it is (`check .`), else left as it is. Two names for
    one file would reach one launch twice, once through each name, and say every finding on
    it twice (Kinto/kinto-dist: a `$PWD:/app` mount and the image's `COPY . /app`)."""
    if not target.is_absolute() or referrer.is_absolute():
        return target
    here = Path.cwd()
    if not target.is_relative_to(here):
        return target
    return Path(os.path.relpath(target, here))


def _shown(folder: Path) -> str:
    """The root as the user would write it: relative to the working folder when under it."""
    here = Path.cwd().resolve()
    if folder.is_relative_to(here):
        return os.path.relpath(folder, here)
    return str(folder)


def glob_inside(pattern: str, reference: str, at: Location, what: str) -> list[Path]:
    """The paths `pattern` (absolute, with `*`, `?`, `[...]` in any part) matches, sorted, as
    glob(3) finds them, listing only folders inside the tree: a folder outside it (the glob's
    fixed part, or a symlink to a folder met on the way) is a note, never listed."""
    parts = Path(pattern).parts
    fixed = len(list(takewhile(lambda part: not glob.has_magic(part), parts)))
    found = [Path(*parts[:fixed])]
    for part in parts[fixed:]:
        if not glob.has_magic(part):
            found = [folder / part for folder in found]
            continue
        matched: list[Path] = []
        for folder in found:
            if not folder.is_dir() or admit(folder, reference, at, what) is None:
                continue
            with os.scandir(folder) as entries:
                names = [e.name for e in entries if not e.name.startswith(".") or part[0] == "."]
            matched += [folder / name for name in sorted(names) if fnmatch.fnmatchcase(name, part)]
        found = matched
    return [path for path in found if os.path.lexists(path)]


def glob_prefix(pattern: str) -> str:
    """The part of a glob before its first wildcard: where listing it starts (a folder outside
    the tree is not listed either, its names being the runner's)."""
    return re.split(r"[*?\[]", pattern, maxsplit=1)[0]


def _through_symlink(target: Path, folder: Path) -> bool:
    """Whether `target` is written inside `folder` and only a symlink takes it out."""
    return os.path.normpath(target.absolute()).startswith(str(folder) + os.sep)


def at_one_root(path: str) -> str:
    """A container path with its leading slashes made one: `$BASE_DIR/conf/x.py` with
    BASE_DIR=/ (a script's parent folder at the root) is `//conf/x.py`, which Linux resolves
    as `/conf/x.py` (path_resolution(7)), where `os.path.normpath` and `PurePosixPath` keep
    exactly two leading slashes as a root of their own."""
    return re.sub(r"\A/{2,}", "/", path)
