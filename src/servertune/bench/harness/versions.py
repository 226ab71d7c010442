"""Versions of the tools a benchmark ran, for the report: numbers are only comparable with them."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from servertune import __version__

__all__ = ["NOT_INSTALLED", "app_stack", "app_version", "dist_version", "ran", "tool_versions"]

#: What a version is when its program or distribution is not here.
NOT_INSTALLED = "not installed"

_COMMANDS: dict[str, list[str]] = {
    "uwsgi": ["--version"],
    "nginx": ["-v"],
    "wrk": ["-v"],
    "gunicorn": ["--version"],
}


def app_version(app: str) -> dict[str, str]:
    """The version of the distribution an app's top module comes from, when it is one (an app
    from PyPI, such as httpbin); nothing for a local module, which no "not installed" line
    describes (`myapp not installed` in a report of myapp's own run)."""
    module = app.split(":")[0].split(".")[0]
    found = dist_version(module)
    return {} if found == NOT_INSTALLED else {module: found}


def dist_version(dist: str) -> str:
    """An installed distribution's version, or "not installed"."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return NOT_INSTALLED


#: Web frameworks a report names by version when the app imports them, each with the
#: distributions it is built on (FastAPI's versions are only comparable with Starlette's).
FRAMEWORKS: dict[str, tuple[str, ...]] = {
    "fastapi": ("fastapi", "starlette", "pydantic"),
    "starlette": ("starlette",),
    "django": ("django",),
    "flask": ("flask", "werkzeug"),
    "litestar": ("litestar",),
    "quart": ("quart",),
    "falcon": ("falcon",),
    "sanic": ("sanic",),
    "httpx": ("httpx",),
}


def app_stack(app: str, app_dir: Path) -> list[str]:
    """The distributions of the app's own stack: the frameworks its module imports (read, not
    run), in FRAMEWORKS' order; a Django project's settings module is not followed."""
    import ast

    module = app.split(":")[0]
    candidates = [app_dir / Path(*module.split(".")).with_suffix(".py"),
                  app_dir / Path(*module.split(".")) / "__init__.py"]  # fmt: skip
    imported: set[str] = set()
    for path in candidates:
        try:
            tree = ast.parse(path.read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])
    if module.split(".")[-1] in ("wsgi", "asgi") and "django" in imported | {"django"}:
        imported.add("django")  # a Django project's wsgi.py / asgi.py
    return list(dict.fromkeys(d for name, dists in FRAMEWORKS.items() if name in imported
                              for d in dists))  # fmt: skip


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
            return NOT_INSTALLED
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except OSError:
        return NOT_INSTALLED
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


def ran(versions: dict[str, str]) -> dict[str, str]:
    """A run's versions without what is not installed: a program the run started is here, so
    such a line can only name one it did not run (uWSGI beside `--only` gunicorn candidates,
    uvicorn-worker beside gunicorn's native ASGI worker), which the report need not list."""
    return {name: found for name, found in versions.items() if found != NOT_INSTALLED}
