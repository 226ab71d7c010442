"""The app, its command registry, and the console entry point `main()`.

A new command is a module of this package holding one function named as the command, and one
line in `COMMANDS`.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import sys
from collections.abc import Iterable
from typing import Annotated, Any

import typer

import servertune.cli.options  # noqa: F401 - its help for switches applies to every command

__all__ = ["COMMANDS", "build_app", "main"]

#: Each command, in the order `--help` lists them: its module here, and what Typer's
#: `app.command()` takes beside the function, each value an attribute of that module (`measure`
#: refuses an option given twice).
COMMANDS: dict[str, dict[str, Any]] = {
    "gen": {},
    "explain": {},
    "plan": {},
    "bench": {},
    "measure": {"cls": "NoRepeatedOptions"},
    "advise": {},
    "check": {},
}

HELP = "Tuned, measured uWSGI / gunicorn / nginx configuration from a few workload numbers."


def _print_version(value: bool) -> None:
    if value:
        from servertune import __version__

        typer.echo(f"servertune {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="print the version and exit",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    """Tuned, measured uWSGI / gunicorn / nginx configuration from a few workload numbers."""


def build_app(names: Iterable[str] = COMMANDS, args: list[str] | None = None) -> typer.Typer:
    """The app with the commands `names` registered (each command's module imported now).

    With `args` (the words after the command's name), a command that takes the workload options
    declares only those `args` names (`servertune.cli.workload_options`): the app is for
    parsing these `args` once.
    """
    app = typer.Typer(
        name="servertune",
        help=HELP,
        no_args_is_help=True,
        # Typer's own --install-completion / --show-completion (bash, zsh, fish, PowerShell).
        add_completion=True,
        pretty_exceptions_enable=False,
    )
    app.callback()(_root)
    for name in names:
        module = importlib.import_module(f"servertune.cli.{name}")
        settings = {key: getattr(module, value) for key, value in COMMANDS[name].items()}
        command = getattr(module, name)
        narrowed = getattr(command, "narrowed", None)
        app.command(**settings)(command if args is None or narrowed is None else narrowed(args))
    return app


def _empty_option(argv: list[str]) -> str | None:
    """The first `--flag ''` or `--flag=` in argv: no option of servertune means anything empty
    (an empty --out would be the current directory, an empty --json a file named '')."""
    for flag, value in zip(argv, [*argv[1:], None], strict=True):
        if flag.startswith("--") and "=" not in flag and value == "":
            return flag
        if flag.startswith("--") and flag.endswith("=") and flag.count("=") == 1:
            return flag[:-1]
    return None


def _quiet_broken_stdout() -> None:
    """After stdout failed (a full disk, a closed pipe), point it at /dev/null so the
    interpreter's last flush at exit cannot print a second error."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def main() -> None:
    """Console entry point: usage errors are one `error:` line with exit code 2, like bad values.

    Bare `servertune` is a request for help, not a mistake: the help goes to stdout, exit 0.
    """
    if len(sys.argv) == 1:
        sys.argv.append("--help")
    empty = _empty_option(sys.argv[1:])
    if empty is not None:
        typer.echo(f"error: {empty}: empty value", err=True)
        sys.exit(2)
    # Typer turns every registered command into a click command (all ~20 workload options of
    # each) before parsing, and each command's module imports what it needs: when argv names a
    # command, build the app with only that one for this run.
    # The same for the workload options a command declares: only those argv names.
    known = sys.argv[1] in COMMANDS
    app = build_app([sys.argv[1]], sys.argv[2:]) if known else build_app(COMMANDS)
    try:
        code = app(standalone_mode=False, prog_name="servertune")
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not at the exit
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EPIPE, errno.EIO, errno.EDQUOT, errno.EFBIG):
            raise
        _quiet_broken_stdout()
        typer.echo(f"error: cannot write the output: {error.strerror}", err=True)
        sys.exit(2)
    except Exception as error:
        # typer's (vendored) click raises UsageError / BadParameter / ClickException here; they
        # all carry `exit_code` and `format_message()`. Anything else is a bug: let it surface.
        message = getattr(error, "format_message", None)
        if message is None or not hasattr(error, "exit_code"):
            raise
        text = " ".join(str(message()).split())
        if text:  # no_args_is_help raises with an empty message after printing the help
            typer.echo(f"error: {text}", err=True)
        sys.exit(int(error.exit_code))
    except KeyboardInterrupt:
        typer.echo("error: interrupted", err=True)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)
