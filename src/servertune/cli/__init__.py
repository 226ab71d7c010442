"""The `servertune` command: one module per command, each a parse-and-call of the library.

`COMMANDS` (servertune.cli.entry) registers them: a command is one module here and one line
there. `servertune.cli.app` is the whole Typer app (built on first use); the console entry
point `main()` builds only the command its argv names, so `servertune gen` never imports
`check`'s readers or `bench`'s scenarios (docs/benchmarks.md, "cold-start").
"""

from __future__ import annotations

from typing import Any

import typer

from servertune.cli.entry import build_app, main

__all__ = ["app", "main"]

#: Every command registered (`build_app()`), made on first access: see `__getattr__`.
app: typer.Typer


def __getattr__(name: str) -> Any:
    """`app` (every command) and `FLAGS` are built on first use, not by `import servertune.cli`."""
    if name == "app":
        built = build_app()
        globals()["app"] = built
        return built
    if name == "FLAGS":
        from servertune.cli.workload_options import FLAGS

        return FLAGS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
