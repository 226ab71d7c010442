"""A supervisor of service folders a script starts: `exec runsvdir /etc/service` at the end of
an image's entrypoint script runs each `/etc/service/NAME/run` the image holds, as the same
command in the image's CMD does. The services are the image's (its COPYs and `ln -s` links),
so the image that runs the script reads them (`dockerfile` sets `SUPERVISED`); a script read
on its own, or run from no image, leaves the command unfollowed.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping, Sequence

from servertune.check.commands import Word, program_name
from servertune.check.model import AppServer, Location

__all__ = ["SUPERVISED", "SUPERVISORS", "supervised"]

#: The programs given a folder of services (`DIR/*/run`) they start: runit's runsvdir and
#: runsv (one service's folder), s6's s6-svscan (the same layout).
SUPERVISORS = frozenset({"runsvdir", "s6-svscan", "runsv"})

#: The server the services of the image that runs the script start, given the supervisor's
#: words and the script's variables at that line; set while an image's command is read.
SUPERVISED: contextvars.ContextVar[
    Callable[[Sequence[Word], Mapping[str, str], Mapping[str, Location]], AppServer | None] | None
] = contextvars.ContextVar("servertune_check_supervised", default=None)


def supervised(
    words: Sequence[Word], env: Mapping[str, str] | None, env_at: Mapping[str, Location] | None
) -> tuple[bool, AppServer | None]:
    """(whether `words` run a supervisor of service folders in an image that holds them,
    the server its services start)."""
    reader = SUPERVISED.get()
    if reader is None or not words or program_name(words[0].text) not in SUPERVISORS:
        return False, None
    return True, reader(words, env or {}, env_at or {})
