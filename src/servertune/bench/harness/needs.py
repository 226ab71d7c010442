"""What a scenario needs installed, and the extra that installs it: said in one line before
any server starts, instead of a server that exits before listening or an ImportError."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

from servertune.bench.harness.report import BenchInputError

__all__ = ["EXTRA_OF", "missing", "require"]

#: Each module (or, for uwsgi, command) a scenario may need, and the extra that brings it.
EXTRA_OF = {
    "gunicorn": "servers",
    "uwsgi": "servers",
    "uvicorn": "asgi-servers",
    "uvicorn_worker": "asgi-servers",
    "granian": "asgi-servers",
    "crossplane": "check",
    "yaml": "check",
    "asgiref": "bench",
    "methodtools": "bench",
    "cachetools": "bench",
    "matplotlib": "plot",
    "requests": "requests",
    # Not an extra of its own: requests depends on it (and httpx, through httpcore).
    "certifi": "requests",
    "httpx": "httpx",
    "httpx2": "httpx2",
    "urllib3": "urllib3",
    "niquests": "niquests",
    "aiohttp": "aiohttp",
    "ddsketch": "logs",
}
#: Needs met by a command on PATH (or beside this interpreter), not by an importable module:
#: uWSGI is its own program (pyuwsgi's wheel or a source build both install `uwsgi`).
COMMANDS = frozenset({"uwsgi"})


def _present(name: str) -> bool:
    if name in COMMANDS:
        beside = Path(sys.executable).parent / name
        return beside.exists() or shutil.which(name) is not None
    return importlib.util.find_spec(name) is not None


def missing(names: Iterable[str]) -> list[str]:
    """The names of `names` not installed here, in order."""
    return [name for name in names if not _present(name)]


def require(what: str, names: Iterable[str]) -> None:
    """BenchInputError naming what is missing and the extras to install, if anything is."""
    absent = missing(names)
    if not absent:
        return
    extras = ",".join(dict.fromkeys(EXTRA_OF.get(name, name) for name in absent))
    raise BenchInputError(f"{what} needs {', '.join(absent)}: pip install 'servertune[{extras}]'")
