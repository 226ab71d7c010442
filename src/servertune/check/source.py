"""Reading a config file safely: it exists, is a regular file, is small, and is UTF-8 text.

Every reader starts here, so a missing file, a directory, a binary or a huge file is refused
with the same one-line reason whichever format it claimed to be.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType

from servertune.check.model import CheckInputError

__all__ = ["MAX_CONFIG_BYTES", "read_text", "reading_as", "template_text"]

#: Larger than any hand-written server config (nginx's own examples are a few KiB; a site with
#: large `map` blocks stays well under 1 MiB), small enough that a mistaken path (a log, a dump)
#: is refused at once instead of being parsed.
MAX_CONFIG_BYTES = 2 * 1024 * 1024


def read_text(path: Path) -> str:
    """The file's text, or CheckInputError naming the file and the reason."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise CheckInputError(f"{path}: no such file") from None
    except OSError as error:
        raise CheckInputError(f"{path}: cannot read ({error.strerror})") from None
    if path.is_dir():
        raise CheckInputError(f"{path}: is a directory, not a config file")
    if not path.is_file():
        raise CheckInputError(f"{path}: not a regular file")
    if size > MAX_CONFIG_BYTES:
        raise CheckInputError(
            f"{path}: {size} bytes is larger than {MAX_CONFIG_BYTES} bytes; not a config file"
        )
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CheckInputError(f"{path}: cannot read ({error.strerror})") from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        # UTF-16 (what some Windows editors save): text, not binary, but no server reads it.
        raise CheckInputError(
            f"{path}: UTF-16 text (byte-order mark {data[:2].hex(' ').upper()}); the servers "
            "read UTF-8: save it as UTF-8"
        )
    if b"\0" in data:
        raise CheckInputError(f"{path}: binary file (contains NUL bytes)")
    # A UTF-8 byte-order mark is read past, as Python (a gunicorn config) and most editors do.
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CheckInputError(
            f"{path}: not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start})"
        ) from None
    own, read = _READ_AS.get().get(_key(path), (None, ""))
    return read if own == text else text


#: The templates the run in progress reads as the file they install as
#: (`check.value_templates`), by normalized path: the template's own text and the text read in
#: its place. Set for one run only (`reading_as`), so a run never sees another's.
_READ_AS: contextvars.ContextVar[Mapping[str, tuple[str, str]]] = contextvars.ContextVar(
    "servertune_check_read_as", default=MappingProxyType({})
)


def _key(path: Path) -> str:
    return os.path.normpath(os.path.abspath(path))


@contextmanager
def reading_as(readings: Mapping[Path, tuple[str, str]]) -> Iterator[None]:
    """While the block runs, `read_text(path)` gives `read` for each `path: (own, read)` of
    `readings` whose file still holds `own` (a template whose templating is only in values,
    read as its kind: the run decided it)."""
    token = _READ_AS.set({_key(p): pair for p, pair in readings.items()})
    try:
        yield
    finally:
        _READ_AS.reset(token)


def read_in_place(path: Path) -> bool:
    """Whether the run reads `path`, a template whose templating is only in values, as its
    kind (`reading_as`)."""
    return _key(path) in _READ_AS.get()


def template_text(path: Path, text: str) -> str:
    """The template's own text when `text` is what `read_text(path)` gives in its place (a
    renderer of Jinja reads the template, not the run's reading of it), else `text`."""
    own, read = _READ_AS.get().get(_key(path), (None, ""))
    return own if own is not None and read == text else text
