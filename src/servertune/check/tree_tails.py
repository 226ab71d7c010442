"""A deployed absolute path the repository keeps a copy of somewhere in its tree.

Repositories that deploy to a host often mirror the host's root filesystem below a folder of
their own (`deploy/common/etc/nginx/snippets/site.conf` for `/etc/nginx/snippets/site.conf`).
A config naming the deployed path (`include /etc/nginx/snippets/site.conf;`) reads that copy
when the tree holds exactly one file ending in the path's longest tail that any file ends
in; the tail has at least two segments (a folder and a name), so a bare file name never
maps to an unrelated file of the same name, and two files ending in the same longest tail
leave the path unknown.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from servertune.check import memo, resolve

__all__ = ["unique_by_name", "unique_by_tail"]

#: A tail shorter than this many path segments is a file name alone: not evidence enough.
_MIN_SEGMENTS = 2
#: How many files of the tree are listed at most (a very large tree maps nothing beyond).
_MAX_FILES = 50_000
#: Folders no deployed copy is kept in.
_SKIPPED = frozenset({"node_modules", "__pycache__"})


def unique_by_tail(wanted: str, referrer: Path) -> Path | None:
    """The one file of the tree (the run's root, else `referrer`'s) whose path ends in the
    longest tail of `wanted` (an absolute path, no glob) that some file ends in; None when no
    tail of at least two segments names a file, or two files end in that longest tail."""
    parts = [p for p in PurePosixPath(wanted).parts if p != "/"]
    if not wanted.startswith("/") or ".." in parts or len(parts) < _MIN_SEGMENTS:
        return None
    with resolve.within_default(referrer) as top:
        files = memo.recall(memo.run_table("tree files"), top, lambda: _files(top))
    for start in range(len(parts) - _MIN_SEGMENTS + 1):
        tail = "/".join(parts[start:])
        found = [f for f in files if f == tail or f.endswith("/" + tail)]
        if len(found) == 1:
            return resolve.tree_form(top / found[0], referrer)
        if found:
            return None
    return None


def unique_by_name(wanted: str, referrer: Path) -> Path | None:
    """The one file of the tree (the run's root, else `referrer`'s) named as `wanted` (an
    absolute path) ends; None when no file or more than one has that name, or the tree is too
    large to list whole. Weaker evidence than a tail: its callers say so where they use it."""
    name = PurePosixPath(wanted).name
    if not wanted.startswith("/") or not name or "\n" in wanted or name in ("..", "."):
        return None
    with resolve.within_default(referrer) as top:
        files = memo.recall(memo.run_table("tree files"), top, lambda: _files(top))
    if len(files) >= _MAX_FILES:
        return None  # a file of the same name may be among those not listed
    found = [f for f in files if f.rpartition("/")[2] == name]
    return resolve.tree_form(top / found[0], referrer) if len(found) == 1 else None


def _files(top: Path) -> tuple[str, ...]:
    """Every file below `top` as a path from it, hidden folders and dependency folders left
    out, in a stable order; at most _MAX_FILES."""
    found: list[str] = []
    for folder, subfolders, names in os.walk(top):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d not in _SKIPPED)
        base = Path(folder).relative_to(top).as_posix()
        for name in sorted(names):
            found.append(name if base == "." else f"{base}/{name}")
            if len(found) >= _MAX_FILES:
                return tuple(found)
    return tuple(found)
