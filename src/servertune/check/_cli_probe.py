"""Run by `servertune check` in a child interpreter: parse uvicorn and granian command lines.

This file is passed to `python -c`, so it imports nothing from servertune. It reads one JSON
request a line on stdin, `{"server": "uvicorn"|"granian", "argvs": [[...], ...], "env": {...},
"cpu_limit_s": N}` (one argument list per instance a script starts), and hands each list to
the server's own click command, `make_context()` only, with `os.environ` set to the request's
`env` for that request alone: options are parsed, validated and defaulted (environment variables
included, as the server would) and nothing is served. Paths are taken as written, as for
gunicorn's `chdir`. It answers each request with one JSON line after a marker: the parsed values
of each list, or why the server refuses one. One child reads every command line of a `check`
run: an interpreter and the servers' imports cost more than all the parsing.
"""

from __future__ import annotations

import enum
import json
import os
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


def limit_cpu(seconds: int) -> None:
    """Let this request use `seconds` more of CPU (whole seconds: the kernel's unit), counted
    from what the child has used so far. A limit of CPU time, not of wall time: a busy machine
    only makes the child wait. Only the soft limit moves (an unprivileged process cannot raise
    its hard limit again): past it the kernel sends SIGXCPU, which ends the child."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(usage.ru_utime + usage.ru_stime) + seconds
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard < 0 else min(soft, hard), hard))


def parse(request: dict[str, Any], cli: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """Each argument list as the server reads it, in the request's environment, or the first
    refusal (click's UsageError / BadParameter / Exit) in one line."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(request["env"])
    parsed = []
    try:
        for argv in request["argvs"]:
            try:
                context = cli.make_context(request["server"], list(argv), **settings)
            except Exception as error:  # the server refuses this command line
                message = getattr(error, "format_message", lambda e=error: str(e))()
                return {"refused": " ".join(str(message).split()) or type(error).__name__}
            parsed.append({name: plain(value) for name, value in context.params.items()})
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return {"parsed": parsed}


def main() -> None:
    """Answer each request line on stdin, until stdin ends."""
    commands: dict[str, tuple[Any, dict[str, Any]]] = {}
    for line in sys.stdin:
        request = json.loads(line)
        limit_cpu(request["cpu_limit_s"])
        server = request["server"]
        try:
            if server not in commands:
                commands[server] = command(server)
                lenient_paths(commands[server][0])
        except ImportError as error:  # the server is not installed here
            reply: dict[str, Any] = {"refused": f"{type(error).__name__}: {error}"}
        else:
            reply = parse(request, *commands[server])
        sys.stdout.write("\n" + MARK + json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
