"""Why measuring stopped: bad input (`MeasureError`) or the app itself failing (`AppFailed`).

Both carry one line. When the app raised, the line says what it raised and where: the innermost
frame of the app's own code (under the directory it was imported from, outside installed
packages), else the innermost frame of all, so the user can open the file at that line.
"""

from __future__ import annotations

import os
import traceback
from pathlib import Path

__all__ = ["AppFailed", "MeasureError", "describe_exception"]

#: Longest exception message quoted: enough for any real message's gist, on one terminal line.
MAX_MESSAGE_CHARS = 200
#: This package's own frames are never "where the app failed".
_HERE = str(Path(__file__).resolve().parent) + os.sep


class MeasureError(ValueError):
    """The app cannot be imported or driven: one line naming the input (`field`) and why.

    `field` is the library's name (`app`, `path`, `requests`, ...); the CLI maps it to a flag.
    """

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class AppFailed(RuntimeError):
    """The app raised while handling a measured request: one line with the type, message and where."""


def describe_exception(
    error: BaseException, app_dir: str | None = None, head: str | None = None
) -> str:
    """`Type: message at file:line in function`, on one line, for the app's innermost frame.

    `head` replaces `Type: message` when the caller can say it better (`sys.exit(5)`).
    """
    text = " ".join(str(error).split())
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 3] + "..."
    if head is None:
        head = type(error).__name__ + (f": {text}" if text else "")
    where = _where(error, app_dir)
    return f"{head} at {where}" if where else head


def _where(error: BaseException, app_dir: str | None) -> str:
    root = os.path.abspath(app_dir or os.getcwd()) + os.sep
    if isinstance(error, SyntaxError) and error.filename:
        return f"{_shown(error.filename, root)}:{error.lineno}"
    frames = [
        f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(_HERE)
    ]
    if not frames:
        return ""
    own = [
        f
        for f in frames
        if f.filename.startswith(root)
        and "site-packages" not in f.filename
        and "dist-packages" not in f.filename
    ]
    frame = (own or frames)[-1]
    return f"{_shown(frame.filename, root)}:{frame.lineno} in {frame.name}"


def _shown(filename: str, root: str) -> str:
    # Relative to the app's directory when inside it: shorter, and what the user would type.
    return filename[len(root) :] if filename.startswith(root) else filename
