"""nginx.conf (complete, run with `nginx -p DIR -c DIR/nginx.conf`) or the includable snippet."""

from __future__ import annotations

from collections.abc import Collection

from servertune.sizing import Plan
from servertune.sizing.plan import host_port
from servertune.targets.layout import Backend, Layout
from servertune.templating import render_template


def render_nginx(
    plan: Plan,
    backend: Backend = "uwsgi",
    layout: Layout | None = None,
    *,
    snippet: bool = False,
    down: Collection[int] = (),
) -> str:
    """least_conn over the per-worker sockets (or the one shared socket) of `backend`, or over the
    app hosts of `upstream` when given.

    `layout` defaults to the plan's for uWSGI (`socket_layout`), and to per-worker for the other
    backends, whose layout is in the target's name (gunicorn-per-worker, uvicorn-per-worker, ...).

    `down` holds indices of local sockets (of the app hosts, with `upstream`) to mark `down`: an
    instance or host being drained before it is stopped (nginx sends it nothing new after a
    reload; the old workers finish what they sent).
    """
    if layout is None:
        layout = plan.socket_layout if backend == "uwsgi" else "per-worker"
    servers = list(plan.sockets) if layout == "per-worker" else [plan.shared_socket]
    endpoints = list(plan.upstream_hosts) or [s.endpoint for s in servers]
    if any(not 0 <= i < len(endpoints) for i in down):
        raise ValueError(f"down: {sorted(down)} is not among the {len(endpoints)} upstream servers")
    w = plan.workload
    return render_template(
        "nginx-site.conf.j2" if snippet else "nginx.conf.j2",
        plan=plan,
        w=w,
        backend=backend,
        upstream=f"servertune_{backend}",
        servers=[s.endpoint for s in servers],
        down=[endpoints[i] for i in sorted(down)],
        # `upstream` given: nginx balances those hosts (weight = cores) instead of local sockets.
        hosts=list(zip(plan.upstream_hosts, plan.upstream_weights, strict=True)),
        listen=host_port(w.listen_host, w.listen_port),
        # w.static, split: nginx serves these prefixes from their directories itself.
        static=w.static_dirs,
    )
