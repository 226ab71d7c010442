"""The numbers an app server can be given at all: one rule for every reader's settings.

gunicorn's own validators refuse a negative `workers`; uWSGI refuses `processes = -4` and reads
`threads = 99999999999999999999` as a negative C int ("must be > 0"), but starts with
`processes = 0` (its no-workers mode: it serves nothing) and `listen = 0` (a backlog of no
connections: the `listen-queue-zero` finding, since the server runs with it). A reader hands over what the file says; this module refuses, for every server
alike, a count that is negative, zero where the server then serves or queues nothing, beyond the
C int every one of them stores it in, or a time that is negative or not finite. Refused input is
exit 2 with the file:line and the option as the server spells it, never "no findings".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from servertune.check.model import CheckInputError

if TYPE_CHECKING:
    from servertune.check.model import AppServer, Setting

__all__ = ["refuse_nonsense"]

#: The largest count a server takes: uWSGI parses options into a C int (core/uwsgi.c
#: uwsgi_opt_set_int), the kernel's listen() takes an int backlog.
C_INT_MAX = 2**31 - 1


@dataclass(frozen=True)
class Bound:
    """The smallest value a field can take, and what a smaller one would mean."""

    least: float
    below: str


#: Each AppServer number: its least sensible value and why (counts also at most C_INT_MAX).
BOUNDS: dict[str, Bound] = {
    "workers": Bound(1, "a server with no worker process serves nothing"),
    "threads": Bound(1, "a worker with no thread serves nothing"),
    # 0 is a backlog the servers take (uWSGI starts with `listen = 0`): it is the
    # listen-queue-zero fault, judged at its line, not a file refused.
    "backlog": Bound(0, "a listen backlog cannot be negative"),
    "max_requests": Bound(0, "a count of requests cannot be negative (0: never recycle)"),
    "max_requests_jitter": Bound(0, "a count of requests cannot be negative"),
    "concurrency_limit": Bound(1, "a limit of no connection refuses every request"),
    "request_timeout": Bound(0, "a time cannot be negative (0: never)"),
    "graceful_timeout": Bound(0, "a time cannot be negative"),
    "keepalive": Bound(0, "a time cannot be negative"),
}

#: The concept each field is spelled by (servertune.check.rules.spelling.SPELLING, the one
#: table of how each server spells a setting); a field not here is its own concept.
_CONCEPT = {
    "request_timeout": "timeout",
    "graceful_timeout": "graceful",
    "max_requests_jitter": "jitter",
    "concurrency_limit": "concurrency",
}


def _spelled(server: AppServer, field: str) -> str:
    # Imported when a value is refused, after every reader and rule module is loaded: the
    # rules package imports the readers, which import this module.
    from servertune.check.rules.spelling import spelled_or

    return spelled_or(server, _CONCEPT.get(field, field), field)


def refuse_nonsense(server: AppServer) -> None:
    """Raise CheckInputError for the first setting of `server` no server could run with."""
    for field, bound in BOUNDS.items():
        setting: Setting[float] | None = getattr(server, field)
        if setting is None:
            continue
        value = setting.value
        reason = None
        if isinstance(value, float) and not math.isfinite(value):
            reason = "not a finite number"
        elif value < bound.least:
            reason = f"must be at least {bound.least:g}: {bound.below}"
        elif isinstance(value, int) and value > C_INT_MAX:
            reason = f"more than {C_INT_MAX}, the largest a server stores (a C int)"
        if reason is not None:
            raise CheckInputError(
                f"{setting.at}: {_spelled(server, field)} = {value!r:.40}: {reason}"
            )
