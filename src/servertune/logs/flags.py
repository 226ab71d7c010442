"""The access logs `measure --log` and `check --log` read: the format chosen from the flags, and
every failure named by the flag it concerns (`--log-format`, `--log-conf`, `--log`).

The format comes from `--log-format`, else the `--log-conf` nginx.conf, else the log's own lines,
else (for `check`) the `log_format` of an nginx config among the files checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from servertune.logs.choose import choose_format, format_from_configs
from servertune.logs.errors import LogConfError, LogError
from servertune.logs.formats import LogFormat, LogFormatError
from servertune.logs.traffic import Traffic, read_traffic

__all__ = ["LogFlagError", "in_flags_of", "read_logs"]


class LogFlagError(ValueError):
    """A log that cannot be read, with the flag to blame: `str()` is `--flag: reason`."""

    def __init__(self, flag: str, error: Exception) -> None:
        super().__init__(f"{flag}: {error}")
        self.flag = flag


def read_logs(
    logs: list[Path],
    log_format: str | None,
    log_conf: Path | None = None,
    configs: Sequence[Path] = (),
    on_chunk: Callable[[int], None] | None = None,
) -> Traffic:
    """Read `logs` in the format the flags (or lines, or `configs`) say; LogFlagError if not."""
    try:
        fmt = _choose(logs, log_format, log_conf, configs)
    except LogFormatError as error:
        raise LogFlagError("--log-format", error) from None
    except LogConfError as error:
        raise LogFlagError("--log-conf", error) from None
    except LogError as error:
        raise LogFlagError("--log", error) from None
    try:
        return read_traffic(logs, fmt, on_chunk=on_chunk)
    except LogFormatError as error:
        raise LogFlagError("--log-format", error) from None
    except LogError as error:
        raise LogFlagError("--log", error) from None


def _choose(
    logs: list[Path], log_format: str | None, log_conf: Path | None, configs: Sequence[Path]
) -> LogFormat:
    try:
        return choose_format(log_format, log_conf, logs[0])
    except LogError:
        # Lines that tell no format: an nginx config among the files checked may say it.
        found = format_from_configs(list(configs)) if configs and log_format is None else None
        if found is None:
            raise
        return found


#: The hint a log error gives for a format of its own, in `measure`'s flags.
_CONF_HINT = " or --log-conf nginx.conf"


def in_flags_of(message: str, format_flag: str, conf_hint: str = "") -> str:
    """A log error worded in another command's flags (`check --log` suggested
    `--log-conf`, which only `measure` has; `bench app --replay` said `--log-format` for its
    `--replay-format`). `conf_hint` replaces measure's `or --log-conf nginx.conf`."""
    return message.replace(_CONF_HINT, conf_hint).replace("--log-format", format_flag)
