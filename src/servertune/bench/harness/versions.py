"""Versions of the tools a benchmark ran, for the report: numbers are only comparable with them."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterable

from servertune import __version__

__all__ = ["dist_version", "tool_versions"]

_COMMANDS: dict[str, list[str]] = {
    "uwsgi": ["--version"],
    "nginx": ["-v"],
    "wrk": ["-v"],
    "gunicorn": ["--version"],
}


def dist_version(dist: str) -> str:
    """An installed distribution's version, or "not installed"."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def _version_of(name: str) -> str:
    from servertune.bench.harness.supervision import ServerError, tool_path

    if name == "builtin":
        return "servertune built-in client"
    if name == "gunicorn":
        argv = [sys.executable, "-m", "gunicorn", "--version"]
    else:
        try:
            argv = [tool_path(name), *_COMMANDS.get(name, ["--version"])]
        except ServerError:
            return "not installed"
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except OSError:
        return "not installed"
    text = (done.stdout + done.stderr).strip()
    # nginx: "nginx version: nginx/1.22.1"; wrk: "wrk debian/4.1.0-3 [epoll] ..."
    found = re.search(r"(\d+\.\d+(?:\.\d+)?)", text)
    return found.group(1) if found else (text.splitlines()[0] if text else "unknown")


def tool_versions(names: Iterable[str]) -> dict[str, str]:
    """servertune's and Python's versions, and each named tool's."""
    versions = {"servertune": __version__, "python": sys.version.split()[0]}
    for name in names:
        versions[name] = _version_of(name)
    return versions
