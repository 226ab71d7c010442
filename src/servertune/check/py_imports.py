"""The modules of the tree a gunicorn config imports names from (`from .base import *`,
`from config.gunicorn import gunicorn_workers`): found as Python would on the config's own
folder and the folders above it (a relative import from the config's package), parsed, never
run. `check.pystatic` reads their top level one level deep; a module not found here (the
standard library, an installed package) leaves what it gives unknown."""

from __future__ import annotations

import ast
import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from servertune.check import resolve
from servertune.check.model import CheckInputError
from servertune.check.pystatic import Importer
from servertune.check.source import read_text

__all__ = ["importing_beside", "tree_importer"]

#: How many folders above the config an absolute import is looked for in (the project's root,
#: where the process runs with it on `sys.path`, is rarely further up).
_LEVELS = 4


#: The file a config read from a temporary copy was written in (a command line's `-c` file):
#: its imports are found beside that file, not beside the copy.
_ORIGIN: contextvars.ContextVar[Path | None] = contextvars.ContextVar(
    "servertune_check_import_origin", default=None
)


@contextmanager
def importing_beside(origin: Path) -> Iterator[None]:
    """While the block runs, a config's imports are found beside `origin`."""
    token = _ORIGIN.set(origin)
    try:
        yield
    finally:
        _ORIGIN.reset(token)


def tree_importer(config: Path) -> Importer:
    """The importer for the config at `config` (or the file it was copied from): a module name
    -> its syntax tree when it is a file of the tree (`name.py` or `name/__init__.py`), else
    None."""
    config = _ORIGIN.get() or config

    def find(name: str) -> ast.Module | None:
        dotted = name.lstrip(".")
        level = len(name) - len(dotted)
        parts = dotted.split(".") if dotted else []
        above = [config.parent, *config.parent.parents]
        folders = above[level - 1 : level] if level else above[:_LEVELS]
        for folder in folders:
            for candidate in (
                folder.joinpath(*parts).with_suffix(".py") if parts else None,
                folder.joinpath(*parts, "__init__.py"),
            ):
                if candidate is not None and _readable(candidate, config):
                    return _parsed(candidate)
        return None

    return find


def _readable(candidate: Path, config: Path) -> bool:
    return candidate.is_file() and candidate != config and resolve.inside(candidate, config)


def _parsed(path: Path) -> ast.Module | None:
    """The module's syntax tree; None when it cannot be read or parsed (its names unknown)."""
    try:
        return ast.parse(read_text(path), filename=str(path))
    except (CheckInputError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
