"""The ASGI servers' files: uvicorn and granian launch scripts, gunicorn with uvicorn's worker.

All three serve every worker from the plan's one shared socket, behind `nginx-asgi.conf`
(`render_nginx(plan, "asgi", "shared")`), whose limit_conn is the plan's admission; uvicorn
also has the per-worker layout (one one-worker instance per socket, nginx least_conn), which
`servertune bench asgi` measured ahead of the shared socket for event loops.
"""

from __future__ import annotations

from typing import Any

from servertune.sizing import Plan
from servertune.templating import render_template

__all__ = ["render_granian", "render_gunicorn_asgi", "render_uvicorn", "render_uvicorn_per_worker"]


def _bind(plan: Plan) -> dict[str, Any]:
    """The shared socket as the launch scripts spell it: a unix path, or host and port."""
    socket = plan.shared_socket
    return {
        "socket_path": socket.path if socket.kind == "unix" else None,
        "host": socket.host,
        "port": socket.port,
    }


def render_uvicorn(plan: Plan) -> str:
    """uvicorn.sh: `uvicorn --workers N` with the plan's admission, backlog and timeouts."""
    return render_template("uvicorn.sh.j2", plan=plan, w=plan.workload, **_bind(plan))


def render_uvicorn_per_worker(plan: Plan) -> str:
    """uvicorn-per-worker.sh: one one-worker uvicorn per socket, chosen by SERVERTUNE_WORKER."""
    return render_template(
        "uvicorn-per-worker.sh.j2",
        plan=plan,
        w=plan.workload,
        sockets=list(plan.sockets),
        unix=plan.workload.socket_dir is not None,
        last_worker=len(plan.sockets) - 1,
    )


def render_granian(plan: Plan) -> str:
    """granian.sh: processes, blocking threads and backpressure for the app's interface."""
    nginx = "nginx-asgi.conf" if plan.workload.interface == "asgi" else "nginx-gunicorn-shared.conf"
    return render_template(
        "granian.sh.j2", plan=plan, w=plan.workload, nginx_file=nginx, **_bind(plan)
    )


def render_gunicorn_asgi(plan: Plan) -> str:
    """gunicorn-asgi.conf.py: gunicorn's arbiter over uvicorn workers (uvicorn-worker package)."""
    return render_template(
        "gunicorn-asgi.conf.py.j2",
        plan=plan,
        w=plan.workload,
        shared=plan.shared_socket.endpoint,
    )
