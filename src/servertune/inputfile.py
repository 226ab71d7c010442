"""Reading a small text file a user names: bounded in size, UTF-8, one-line errors.

Every file servertune reads on a user's word (a workload TOML, a bench report) goes through
`read_text`, so a directory, a device, a huge or binary file, or bytes that are not UTF-8 are
refused the same way everywhere, with the file's name and the reason and never a traceback.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["InputFileError", "read_text"]


class InputFileError(ValueError):
    """A file cannot be used as input: one line naming the file and the reason."""


def read_text(path: Path, *, max_bytes: int, what: str = "file") -> str:
    """The UTF-8 text of `path`, refusing anything but a regular file of at most `max_bytes`."""
    try:
        # O_NONBLOCK: opening a FIFO someone named as input must not hang the command.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise InputFileError(f"cannot read {path}: {error.strerror}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputFileError(f"cannot read {path}: it is a directory, not a {what}")
        raise InputFileError(f"cannot read {path}: it is not a regular file")
    with os.fdopen(fd, "rb") as handle:
        try:
            # One byte more than allowed tells "too big" from "exactly the limit" without trusting
            # st_size (it can grow while we read).
            data = handle.read(max_bytes + 1)
        except OSError as error:
            raise InputFileError(f"cannot read {path}: {error.strerror}") from None
    if len(data) > max_bytes:
        raise InputFileError(f"{path} is larger than {max_bytes // 1024} KiB: too big for a {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputFileError(
            f"{path} is not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start})"
        ) from None
