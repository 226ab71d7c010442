"""The one error the log readers raise: a line naming the file (or flag) and the reason."""

from __future__ import annotations

__all__ = ["LogConfError", "LogError"]


class LogError(ValueError):
    """A log or a log format cannot be used: one line naming it and the reason."""


class LogConfError(LogError):
    """The nginx.conf named for its log_format cannot be used."""
