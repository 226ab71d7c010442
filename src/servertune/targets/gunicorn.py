"""gunicorn.conf.py: gthread on one shared socket, or one single-worker instance per socket."""

from __future__ import annotations

from servertune.sizing import Plan
from servertune.targets.layout import Layout
from servertune.templating import render_template


def render_gunicorn(plan: Plan, layout: Layout = "shared") -> str:
    """The shared-socket gunicorn (`shared`) or the per-worker one (`per-worker`)."""
    name = "gunicorn.conf.py.j2" if layout == "shared" else "gunicorn-per-worker.conf.py.j2"
    return render_template(
        name,
        plan=plan,
        w=plan.workload,
        sockets=[s.endpoint for s in plan.sockets],
        shared=plan.shared_socket.endpoint,
        last_worker=len(plan.sockets) - 1,
    )
