"""Servers one launch starts together: a supervisord config a script runs starts every program
it holds, not only the first one the chain returns.

The chain (`scripts.run_words` and the layers above it: the script, the image, the compose
service, the Kubernetes container) carries one server outward, each layer adding its own line
first in the launch chain and, for some, a fact of the process that starts them all (the
container, how PID 1 runs it). The other servers ride along in `AppServer.started_with`, as
they were found; here each gets what the layers added to the one they rode with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from servertune.check.model import AppServer, NginxConfig, StartedWith

__all__ = ["SHARED_FACTS", "started_fronts", "started_together", "with_others"]

#: What a layer above the process manager sets on the server it carries that is a fact of the
#: whole launch, so of every server it starts: the container, the PID-1 shell that does not
#: `exec` it or runs it in the background, the Procfile runner that signals its group, the
#: base image's process, the signal the container stops with. A server's own settings
#: (workers, sockets, config) are never copied from another.
SHARED_FACTS = (
    "container",
    "shell_form",
    "shell_form_sh",
    "one_string_exec",
    "without_exec",
    "without_exec_fix",
    "backgrounded",
    "group_signalled",
    "init",
    "manager_without_exec",
    "started_by_base",
    "stop_signal",
    "stop_signal_fix",
)


def with_others(apps: Sequence[AppServer], fronts: Sequence[NginxConfig] = ()) -> AppServer:
    """The first of the servers one config starts, carrying the others and the fronts it
    starts from rendered templates."""
    first, *others = apps
    if not others and not fronts:
        return first
    return replace(first, started_with=StartedWith(tuple(others), first, tuple(fronts)))


def started_fronts(apps: Sequence[AppServer]) -> list[NginxConfig]:
    """The fronts the servers' launches start from rendered templates, each once (a compose
    service and the image it runs reach the same one)."""
    fronts: list[NginxConfig] = []
    for app in apps:
        together = app.started_with
        if together is None:
            continue
        fronts += [f for f in together.fronts if f not in fronts]
        fronts += [f for f in started_fronts(together.servers) if f not in fronts]
    return fronts


def _beside(app: AppServer, found: AppServer, other: AppServer) -> AppServer | None:
    """`other`, found beside `found`, with what the layers above added to `found` on its way
    to `app`; None when `app`'s chain does not end with `found`'s (a layer rewrote it: which
    lines start `other` is then not known)."""
    tail = found.launched_by
    prefix_len = len(app.launched_by) - len(tail)
    if prefix_len < 0 or app.launched_by[prefix_len:] != tail:
        return None
    facts = {
        name: getattr(app, name)
        for name in SHARED_FACTS
        if getattr(app, name) != getattr(found, name)
    }
    return replace(other, launched_by=app.launched_by[:prefix_len] + other.launched_by, **facts)


def started_together(apps: Sequence[AppServer]) -> list[AppServer]:
    """Every server, each one's companions after it as their launch reaches them."""
    every: list[AppServer] = []
    for app in apps:
        together = app.started_with
        every.append(replace(app, started_with=None) if together is not None else app)
        if together is None:
            continue
        for other in together.servers:
            placed = _beside(app, together.first, other)
            if placed is not None:
                every.extend(started_together([placed]))
    return every
