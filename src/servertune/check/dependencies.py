"""What a project's packaging installs that changes how a server runs: uvloop, which
`uvicorn[standard]` (and `fastapi[standard]`, through it) installs and uvicorn's `--loop auto`
then picks. uvloop sets TCP_NODELAY on every connection it makes (MagicStack/uvloop
uvloop/handles/tcp.pyx, TCPTransport.new: `handle._set_nodelay()`), so a uvicorn with workers
does not leave Nagle's algorithm on there.

The files are the packaging a launch's folder or one above it holds, within the tree check
reads: pyproject.toml (PEP 621 and poetry's `uvicorn = { extras = ["standard"] }`), Pipfile,
setup.py, setup.cfg, `requirements*.txt`, `requirements/*.txt` and the lock files Pipfile.lock,
uv.lock and poetry.lock (a lock installs uvloop when it holds uvloop's own entry: poetry.lock
also names uvloop in uvicorn's unchosen `standard` extra). Nothing is installed or run.

uvloop is absent only where that is shown: packaging here names uvicorn or fastapi (so it is
what installs the server) and none of it installs uvloop. Where no packaging here names the
server (a requirements file the image copies from elsewhere, a lock left out of the tree),
whether uvloop is installed is unknown, and `server_declarations` finds nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from servertune.check import resolve
from servertune.check.budget import each_within_budget
from servertune.check.model import CheckInputError, Location
from servertune.check.source import read_text

__all__ = ["Packaging", "packaging_declarations", "uvloop_for"]

_PACKAGING = ("pyproject.toml", "Pipfile", "setup.py", "setup.cfg")
_LOCKS = ("Pipfile.lock", "uv.lock", "poetry.lock")

#: A requirement that installs uvloop: by name, as `uvicorn[standard]` / `fastapi[standard]`
#: (any extras list holding `standard`), or poetry's table with `extras = ["standard"]`.
_UVLOOP = re.compile(
    r"\buvloop\b"
    r"|\b(?:uvicorn|fastapi)\s*\[[^\]\n]*\bstandard\b"
    r"|\buvicorn\s*=\s*\{[^}\n]*\bextras\s*=\s*\[[^\]\n]*[\"']standard[\"']",
    re.IGNORECASE,
)

#: uvloop's own entry in a lock: `name = "uvloop"` (uv.lock, poetry.lock), `"uvloop": {`
#: (Pipfile.lock).
_LOCKED_UVLOOP = re.compile(r'^name\s*=\s*"uvloop"|"uvloop"\s*:\s*\{', re.MULTILINE)

#: A requirement or lock entry naming the server itself.
_SERVER = re.compile(r"(?<![\w.-])(?:uvicorn|fastapi)(?![\w.-])", re.IGNORECASE)


def _candidates(folder: Path) -> list[Path]:
    """The packaging files `folder` may hold."""
    found = [folder / name for name in (*_PACKAGING, *_LOCKS)]
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


@dataclass(frozen=True)
class Packaging:
    """Where the packaging beside a launch's files declares what the rules ask of it."""

    #: A requirement that installs uvloop.
    uvloop: tuple[Location, ...] = ()
    #: A requirement naming uvicorn or fastapi: the packaging that installs the server, so
    #: the one whose lack of uvloop shows uvloop absent.
    server: tuple[Location, ...] = ()


def packaging_declarations(paths: Sequence[Path], root: Path | None) -> Packaging:
    """Where the packaging beside the files given (or above them, within the tree check
    reads: `root`, else the files' common folder) installs uvloop and names the server, one
    place per file that does; each file read once, within its budget (one over it declares
    nothing: the run names it, once)."""
    with resolve.confined_to(root if root is not None else resolve.default_root(paths)):
        candidates = [c for f in _folders(paths) for c in _candidates(f) if resolve.inside(c)]
        found = [at for _, at in each_within_budget(candidates, _declared_in) if at is not None]
    return Packaging(
        tuple(u for u, _ in found if u is not None), tuple(s for _, s in found if s is not None)
    )


def _declared_in(candidate: Path) -> tuple[Location | None, Location | None]:
    """Where the packaging file `candidate` installs uvloop and where it names the server."""
    try:
        text = read_text(candidate)
    except (CheckInputError, OSError, UnicodeDecodeError):
        return None, None
    uvloop = _LOCKED_UVLOOP if candidate.name in _LOCKS else _UVLOOP
    return _at(candidate, text, uvloop), _at(candidate, text, _SERVER)


def _at(candidate: Path, text: str, pattern: re.Pattern[str]) -> Location | None:
    match = pattern.search(text)
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
