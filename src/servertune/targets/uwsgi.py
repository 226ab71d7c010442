"""uwsgi.ini: one socket per worker mapped to it (map-socket), or every worker on one socket.

Which one is the plan's `socket_layout` (one socket once a process has one thread); a benchmark
may name the other to compare them.
"""

from __future__ import annotations

from servertune.sizing import Plan
from servertune.targets.layout import Layout
from servertune.templating import render_template


def render_uwsgi(
    plan: Plan, layout: Layout | None = None, *, thunder_lock: bool | None = None
) -> str:
    """`per-worker` maps socket i to worker i+1; `shared` puts every worker on one socket.

    Both default to the plan's (`socket_layout`, `thunder_lock`). `thunder_lock` (shared layout
    only) serializes accept() on the shared socket with uWSGI's `thunder-lock`
    (`servertune bench balance` measures it against per-worker sockets).
    """
    layout = plan.socket_layout if layout is None else layout
    if thunder_lock is None:
        thunder_lock = plan.thunder_lock and layout == "shared"
    if thunder_lock and layout != "shared":
        raise ValueError("thunder_lock: only the shared-socket layout has one socket to lock")
    if layout == "per-worker":
        sockets = list(plan.sockets)
        # uWSGI numbers workers from 1: socket i belongs to worker i + 1.
        mapping = [(index, index + 1) for index in range(len(sockets))]
        backlog = plan.backlog
    else:
        sockets, mapping, backlog = [plan.shared_socket], [], plan.shared_backlog
    return render_template(
        "uwsgi.ini.j2",
        plan=plan,
        w=plan.workload,
        layout=layout,
        sockets=[s.address for s in sockets],
        mapping=mapping,
        backlog=backlog,
        thunder_lock=thunder_lock,
    )
