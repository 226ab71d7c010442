"""The WSGI apps the benchmarks serve: standard library only, copied next to the configs.

Each app is a plain module a user could have written; `install()` copies it into the directory a
workload's `app_dir` points at, so uWSGI and gunicorn import it exactly as they import a user's
app (by `chdir` + `module:callable`), whatever environment the servers run in.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["install"]

#: Installed module names carry this prefix so they never shadow a real module on sys.path.
MODULE_PREFIX = "servertune_bench_"


def install(name: str, directory: Path) -> str:
    """Copy app `name` (a module of this package) into `directory`; return its `module:app`."""
    source = resources.files(__package__) / f"{name}.py"
    module = f"{MODULE_PREFIX}{name}"
    (directory / f"{module}.py").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    return f"{module}:app"
