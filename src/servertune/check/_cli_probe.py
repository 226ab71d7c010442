"""Run by `servertune check` in a child interpreter: parse a uvicorn or granian command line.

This file is passed to `python -c`, so it imports nothing from servertune. It reads JSON
`{"server": "uvicorn"|"granian", "argvs": [[...], ...]}` on stdin (one argument list per
instance the script starts) and hands each to the server's own click command, `make_context()`
only: options are parsed, validated and defaulted (environment variables included, as the server
would) and nothing is served. Paths are taken as written, as for gunicorn's `chdir`. It prints
one JSON line, the parsed values of each, after a marker.
"""

from __future__ import annotations

import enum
import json
import resource
import sys
from typing import Any

MARK = "@@servertune-check@@"


def command(server: str) -> tuple[Any, dict[str, Any]]:
    """The server's click command, and the context settings its own entry point passes."""
    if server == "uvicorn":
        from uvicorn.main import main

        return main, {}
    from granian.cli import cli

    return cli, {"auto_envvar_prefix": "GRANIAN"}  # as granian's console script passes it


def lenient_paths(cli: Any) -> None:
    """Accept paths as written (`--working-dir`, `--app-dir`, `--env-file`, ...): they name the
    production host's files, which the machine running the check need not have."""
    import click

    for param in cli.params:
        if isinstance(param.type, click.Path):
            param.type.exists = False


def plain(value: Any) -> Any:
    """JSON-ready: enums by value, paths and other objects as text."""
    if isinstance(value, enum.Enum):
        return plain(value.value)
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return str(value)


def main() -> None:
    """Parse the command line given on stdin; print the values or one line saying why not."""
    request = json.loads(sys.stdin.read())
    # A limit of CPU time, not of wall time: a busy machine only makes the child wait.
    resource.setrlimit(resource.RLIMIT_CPU, (request["cpu_limit_s"], request["cpu_limit_s"]))
    cli, settings = command(request["server"])
    lenient_paths(cli)
    parsed = []
    for argv in request["argvs"]:
        try:
            context = cli.make_context(request["server"], list(argv), **settings)
        except Exception as error:  # click's UsageError / BadParameter / Exit: the server refuses
            message = getattr(error, "format_message", lambda e=error: str(e))()
            sys.stderr.write(f"{' '.join(str(message).split()) or type(error).__name__}\n")
            sys.exit(3)
        parsed.append({name: plain(value) for name, value in context.params.items()})
    sys.stdout.write("\n" + MARK + json.dumps(parsed) + "\n")


if __name__ == "__main__":
    main()
