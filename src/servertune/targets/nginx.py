"""nginx.conf (complete, run with `nginx -p DIR -c DIR/nginx.conf`) or the includable snippet."""

from __future__ import annotations

from servertune.sizing import Plan
from servertune.sizing.plan import host_port
from servertune.targets.layout import Backend, Layout
from servertune.templating import render_template


def render_nginx(
    plan: Plan, backend: Backend = "uwsgi", layout: Layout = "per-worker", *, snippet: bool = False
) -> str:
    """least_conn over the per-worker sockets (or the one shared socket) of `backend`."""
    servers = list(plan.sockets) if layout == "per-worker" else [plan.shared_socket]
    w = plan.workload
    return render_template(
        "nginx-site.conf.j2" if snippet else "nginx.conf.j2",
        plan=plan,
        w=w,
        backend=backend,
        upstream=f"servertune_{backend}",
        servers=[s.endpoint for s in servers],
        listen=host_port(w.listen_host, w.listen_port),
        # w.static, split: nginx serves these prefixes from their directories itself.
        static=w.static_dirs,
    )
