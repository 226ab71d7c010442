"""Options and helpers every command shares, declared once: the `error:` line, output-path
checks, the access-log options, and Typer's help for switches."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperOption
from typer.models import ParameterInfo

__all__ = [
    "check_output_path",
    "fail",
    "log_format_option",
    "log_option",
    "one_line",
    "without_pydantic_plugins",
]

_display_type_rich = TyperOption.display_type_rich


def _switch_shows_no_type(self: TyperOption, ctx: Any) -> str | None:
    """A switch (`--json`, `--help`, `--quick`) takes no value: typer 0.29 labels it `<bool>`,
    which reads as if it wanted one. Help shows no type for it."""
    if self.is_flag and self.metavar is None:
        return None
    return _display_type_rich(self, ctx)


TyperOption.display_type_rich = _switch_shows_no_type  # type: ignore[method-assign]

try:
    # Private to Typer (0.29 on): where it builds each option's adapter. Another Typer builds
    # its own way and keeps it; servertune only loses the shared adapters' 3.5 ms.
    from typer import _adapters
except ImportError:  # pragma: no cover - Typer before 0.29
    _adapters = None  # type: ignore[assignment]
_build_leaf_adapter: Any = getattr(_adapters, "build_leaf_adapter", None)
#: One adapter per plain `str` or `bool` option, shared (see `_shared_leaf_adapter`).
_SHARED_ADAPTERS: dict[type, Any] = {}


def _shared_leaf_adapter(annotation: Any, parameter_info: ParameterInfo) -> Any:
    """Typer 0.29 builds a Pydantic `TypeAdapter` for every option of the command it runs, given
    or not: `gen` has ~25, ~20 of them plain `str` or `bool` (the Workload fields, validated by
    the model). For those, without a `parser`, Typer's adapter reads nothing of the option
    (`typer._adapters.build_leaf_adapter`: `Annotated[str | bool, BeforeValidator(...)]`), so
    one is built per type and shared: 3.5 ms of `gen`'s run (bench cold-start). Every other
    option gets its own, as Typer builds it."""
    if parameter_info.parser is None and (annotation is str or annotation is bool):
        if annotation not in _SHARED_ADAPTERS:
            _SHARED_ADAPTERS[annotation] = _build_leaf_adapter(annotation, parameter_info)
        return _SHARED_ADAPTERS[annotation]
    return _build_leaf_adapter(annotation, parameter_info)


if _build_leaf_adapter is not None:
    _adapters.build_leaf_adapter = _shared_leaf_adapter

#: Pydantic's switch for its plugins (docs: "Pydantic plugins"); "__all__" disables them all.
PYDANTIC_PLUGINS_VARIABLE = "PYDANTIC_DISABLE_PLUGINS"


@contextlib.contextmanager
def without_pydantic_plugins() -> Iterator[None]:
    """Build servertune's own models without Pydantic's plugin scan, then restore the setting.

    Pydantic looks for plugins (entry points of every installed distribution) when it builds the
    first model; in a full environment that scan is a measurable share of `servertune gen`'s
    cold start (bench cold-start). Pydantic's documented switch turns it off while the CLI's
    models are built; models built later (an app that `measure` imports) still get plugins.
    """
    before = os.environ.get(PYDANTIC_PLUGINS_VARIABLE)
    if before is None:
        os.environ[PYDANTIC_PLUGINS_VARIABLE] = "__all__"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(PYDANTIC_PLUGINS_VARIABLE, None)


def fail(message: str) -> typer.Exit:
    """Print one line to stderr and return the exit (code 2: bad input) for the caller to raise."""
    typer.echo(f"error: {one_line(message)}", err=True)
    return typer.Exit(code=2)


def one_line(text: str) -> str:
    """`text` with control characters escaped as Python writes them: a file name or value with a
    newline (or an ANSI escape) in it cannot split the `error:` line or recolour the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def log_option(help_text: str) -> Any:
    """`--log FILE`, repeatable (a rotated set): `measure` and `check` read access logs."""
    return typer.Option("--log", help=help_text, dir_okay=False)


def log_format_option(help_text: str) -> Any:
    """`--log-format NAME[:SPEC]`, the format of `--log`."""
    return typer.Option("--log-format", metavar="NAME[:SPEC]", help=help_text)


def check_output_path(flag: str, path: Path | None) -> None:
    """Refuse, before any work, an output file that could not be written at the end.

    Creating (and removing) a scratch file next to it is the only honest test: root passes every
    permission check, yet cannot create files in /proc or on a read-only mount.
    """
    if path is None:
        return
    try:
        _check_output_path(flag, path)
    except OSError as error:  # a name too long (ENAMETOOLONG), a loop of symlinks, ...
        raise fail(f"{flag}: cannot write {path}: {error.strerror}") from None


def _check_output_path(flag: str, path: Path) -> None:
    directory = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise fail(f"{flag}: cannot write {path}: a directory is in the way")
    from servertune.files import SpecialFileError, links_to_nothing, refuse_special_file

    if links_to_nothing(path):
        # Writing would replace the link itself (a rename over it), not a regular file; and a
        # path under a loop of links makes resolve() raise at the end of a long run.
        raise fail(
            f"{flag}: cannot write {path}: a symbolic link to nothing (a missing target, or "
            "links in a loop)"
        )

    try:
        refuse_special_file(path)
    except SpecialFileError as error:
        raise fail(f"{flag}: cannot write {path}: {error.strerror}") from None
    if not directory.is_dir():
        what = "is not a directory" if directory.exists() else "does not exist"
        raise fail(f"{flag}: cannot write {path}: {directory} {what}")
    try:
        fd, scratch = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".check", dir=directory)
    except OSError as error:
        raise fail(f"{flag}: cannot write {path}: {error.strerror}") from None
    os.close(fd)
    os.unlink(scratch)
