"""What a project's packaging installs that changes how a server runs: uvloop, which
`uvicorn[standard]` (and `fastapi[standard]`, through it) installs and uvicorn's `--loop auto`
then picks. uvloop sets TCP_NODELAY on every connection it makes (MagicStack/uvloop
uvloop/handles/tcp.pyx, TCPTransport.new: `handle._set_nodelay()`), so a uvicorn with workers
does not leave Nagle's algorithm on there.

The files are the packaging a launch's folder or one above it holds, within the tree check
reads: pyproject.toml (PEP 621 and poetry's `uvicorn = { extras = ["standard"] }`), Pipfile,
setup.py, setup.cfg, `requirements*.txt` and `requirements/*.txt`. Nothing is installed or run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from servertune.check import resolve
from servertune.check.budget import each_within_budget
from servertune.check.model import CheckInputError, Location
from servertune.check.source import read_text

__all__ = ["uvloop_declarations", "uvloop_for"]

_PACKAGING = ("pyproject.toml", "Pipfile", "setup.py", "setup.cfg")

#: A requirement that installs uvloop: by name, as `uvicorn[standard]` / `fastapi[standard]`
#: (any extras list holding `standard`), or poetry's table with `extras = ["standard"]`.
_UVLOOP = re.compile(
    r"\buvloop\b"
    r"|\b(?:uvicorn|fastapi)\s*\[[^\]\n]*\bstandard\b"
    r"|\buvicorn\s*=\s*\{[^}\n]*\bextras\s*=\s*\[[^\]\n]*[\"']standard[\"']",
    re.IGNORECASE,
)


def _candidates(folder: Path) -> list[Path]:
    """The packaging files `folder` may hold."""
    found = [folder / name for name in _PACKAGING]
    found += sorted(folder.glob("requirements*.txt"))
    found += sorted((folder / "requirements").glob("*.txt"))
    return [f for f in found if f.is_file()]


def _folders(paths: Sequence[Path]) -> list[Path]:
    """The folders of the files given and those above them, up to the tree's root."""
    top = resolve.root()
    if top is None:
        return []
    seen: dict[Path, None] = {}
    for path in paths:
        folder = path.resolve().parent
        while folder not in seen and (folder == top or top in folder.parents):
            seen[folder] = None
            folder = folder.parent
    return list(seen)


def uvloop_declarations(paths: Sequence[Path], root: Path | None) -> tuple[Location, ...]:
    """Where the packaging beside the files given (or above them, within the tree check reads:
    `root`, else the files' common folder) declares a requirement that installs uvloop, one
    place per file that does."""
    with resolve.confined_to(root if root is not None else resolve.default_root(paths)):
        return _declarations(paths)


def _declarations(paths: Sequence[Path]) -> tuple[Location, ...]:
    candidates = [c for f in _folders(paths) for c in _candidates(f) if resolve.inside(c)]
    # Each within its budget: one over it declares nothing (the run names it, once).
    found = each_within_budget(candidates, _declared_in)
    return tuple(at for _, at in found if at is not None)


def _declared_in(candidate: Path) -> Location | None:
    """Where the packaging file `candidate` installs uvloop, None if it does not."""
    try:
        text = read_text(candidate)
    except (CheckInputError, OSError, UnicodeDecodeError):
        return None
    match = _UVLOOP.search(text)
    if match is None:
        return None
    return Location(candidate, text.count("\n", 0, match.start()) + 1)


def uvloop_for(files: Sequence[Path], declared: Sequence[Location]) -> Location | None:
    """The declaration that covers a launch through `files`: one in their folder or one
    above it; None when none does."""
    for at in declared:
        home = at.file.resolve().parent
        if any(home == f.resolve().parent or home in f.resolve().parents for f in files):
            return at
    return None
