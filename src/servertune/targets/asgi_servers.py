"""The ASGI servers' files: uvicorn and granian launch scripts, gunicorn with an ASGI worker.

Each server has two layouts. One shared socket (`uvicorn.sh`, `granian.sh`,
`gunicorn-asgi.conf.py`, behind `nginx-asgi.conf`): the kernel hands connections to whichever
process accepts first. Per worker (`uvicorn-per-worker.sh`, `granian-per-worker.sh`,
`gunicorn-asgi-per-worker.conf.py`, behind `nginx-asgi-per-worker.conf`): one one-worker
instance per socket and nginx least_conn picks the least busy loop per request. nginx's
limit_conn is the plan's admission in both. `servertune bench asgi` measures every layout
under overload; the shared-socket files quote what it measured (`ASGI_OVERLOAD_P99`) and name
the per-worker file that met the target.
"""

from __future__ import annotations

from typing import Any

from servertune.sizing import Plan
from servertune.sizing.defaults import (
    ASGI_NORMAL_RPS,
    ASGI_OVERLOAD_FACTOR,
    ASGI_OVERLOAD_P99,
    ASGI_OVERLOAD_P99_TARGET,
    ASGI_THROUGHPUT_NOISE,
)
from servertune.templating import Verbatim, render_template

__all__ = [
    "PER_WORKER_FILES",
    "UVICORN_NODELAY_LAUNCHER",
    "prefers_per_worker",
    "recommended_per_worker",
    "render_granian",
    "render_granian_per_worker",
    "render_gunicorn_asgi",
    "render_gunicorn_asgi_per_worker",
    "render_uvicorn",
    "render_uvicorn_per_worker",
]

#: Each shared-socket ASGI target's per-worker counterpart and the file that one emits.
PER_WORKER_FILES: dict[str, tuple[str, str]] = {
    "uvicorn": ("uvicorn-per-worker", "uvicorn-per-worker.sh"),
    "gunicorn-asgi": ("gunicorn-asgi-per-worker", "gunicorn-asgi-per-worker.conf.py"),
    "granian": ("granian-per-worker", "granian-per-worker.sh"),
}


#: uvicorn.sh's launcher for 2+ workers on a TCP port (plan.uvicorn_listener_nodelay): set
#: TCP_NODELAY on the socket uvicorn's supervisor binds (Linux copies it to every accepted
#: connection; uvicorn leaves it off: Kludex/uvicorn#3149), then run uvicorn's own CLI with the
#: words after `python -c CODE uvicorn`. One line with no single quote: it sits in '...' in sh.
#: uvicorn.sh.j2 prints it; `bench app --against` reuses it.
UVICORN_NODELAY_LAUNCHER = Verbatim(
    "import socket, sys, uvicorn.config as c; from uvicorn.main import main; "
    "bind = c.Config.bind_socket; "
    "on = lambda s: (s.family == socket.AF_UNIX or "
    "s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1), s)[1]; "
    "c.Config.bind_socket = lambda config: on(bind(config)); "
    "main(sys.argv[2:], prog_name=sys.argv[1])"
)


def recommended_per_worker(server: str) -> str:
    """The per-worker target to use instead of `server`'s shared socket: its own counterpart if
    that met the overload target in `servertune bench asgi`, else the per-worker layout that
    measured best (a layout not measured yet is never recommended)."""
    own = PER_WORKER_FILES[server][0]
    if ASGI_OVERLOAD_P99.get(own, float("inf")) <= ASGI_OVERLOAD_P99_TARGET:
        return own
    measured = [t for t, _ in PER_WORKER_FILES.values() if t in ASGI_OVERLOAD_P99]
    return min(measured, key=ASGI_OVERLOAD_P99.__getitem__)


def _verdict(ratio: float) -> str:
    return "meets" if ratio <= ASGI_OVERLOAD_P99_TARGET else "misses"


def prefers_per_worker(server: str, per_worker: str) -> bool:
    """Whether `servertune bench asgi` favoured the per-worker target over `server`'s shared
    socket: it met the overload target, and had the lower overload p99 or more req/s at normal
    load than the noise explains."""
    p99, rps = ASGI_OVERLOAD_P99, ASGI_NORMAL_RPS
    return p99[per_worker] <= ASGI_OVERLOAD_P99_TARGET and (
        p99[per_worker] < p99[server] or rps[per_worker] / rps[server] > 1 + ASGI_THROUGHPUT_NOISE
    )


def _overload_note(plan: Plan, server: str) -> dict[str, Any] | None:
    """What the bench measured for this server's shared socket and the per-worker target, for
    its header; None when the file serves no ASGI app or one process (then one socket is the
    per-worker layout)."""
    if plan.workload.interface != "asgi" or plan.processes == 1:
        return None
    target = recommended_per_worker(server)
    file = next(f for t, f in PER_WORKER_FILES.values() if t == target)
    shared, per_worker = ASGI_OVERLOAD_P99[server], ASGI_OVERLOAD_P99[target]
    return {
        "factor": f"{ASGI_OVERLOAD_FACTOR:g}",
        "shared": f"{shared:g}",
        "shared_verdict": _verdict(shared),
        "per_worker": f"{per_worker:g}",
        "per_worker_verdict": _verdict(per_worker),
        "per_worker_file": file,
        "per_worker_target": target,
        "rps_ratio": f"{ASGI_NORMAL_RPS[target] / ASGI_NORMAL_RPS[server]:.2f}",
        "prefer": prefers_per_worker(server, target),
        # The recorded numbers are of uvicorn's worker: say so in a file with the native one.
        "native_worker": server == "gunicorn-asgi" and plan.gunicorn_asgi_worker == "asgi",
        "target": f"{ASGI_OVERLOAD_P99_TARGET:g}",
    }


def _bind(plan: Plan) -> dict[str, Any]:
    """The shared socket as the launch scripts spell it: a unix path, or host and port."""
    socket = plan.shared_socket
    return {
        "socket_path": socket.path if socket.kind == "unix" else None,
        "host": socket.host,
        "port": socket.port,
    }


def _per_worker(plan: Plan) -> dict[str, Any]:
    """The per-worker sockets as the per-worker files choose among them (SERVERTUNE_WORKER)."""
    return {
        "sockets": list(plan.sockets),
        "unix": plan.workload.socket_dir is not None,
        "last_worker": len(plan.sockets) - 1,
    }


def render_uvicorn(plan: Plan) -> str:
    """uvicorn.sh: `uvicorn --workers N` with the plan's admission, backlog and timeouts."""
    return render_template(
        "uvicorn.sh.j2",
        plan=plan,
        w=plan.workload,
        overload=_overload_note(plan, "uvicorn"),
        nodelay_launcher=UVICORN_NODELAY_LAUNCHER,
        **_bind(plan),
    )


def render_uvicorn_per_worker(plan: Plan) -> str:
    """uvicorn-per-worker.sh: one one-worker uvicorn per socket, chosen by SERVERTUNE_WORKER."""
    return render_template(
        "uvicorn-per-worker.sh.j2", plan=plan, w=plan.workload, **_per_worker(plan)
    )


def render_granian(plan: Plan) -> str:
    """granian.sh: processes, blocking threads and backpressure for the app's interface."""
    nginx = "nginx-asgi.conf" if plan.workload.interface == "asgi" else "nginx-gunicorn-shared.conf"
    return render_template(
        "granian.sh.j2",
        plan=plan,
        w=plan.workload,
        nginx_file=nginx,
        overload=_overload_note(plan, "granian"),
        **_bind(plan),
    )


def render_granian_per_worker(plan: Plan) -> str:
    """granian-per-worker.sh: one one-worker granian per socket, chosen by SERVERTUNE_WORKER."""
    return render_template(
        "granian-per-worker.sh.j2", plan=plan, w=plan.workload, **_per_worker(plan)
    )


def render_gunicorn_asgi(plan: Plan) -> str:
    """gunicorn-asgi.conf.py: gunicorn's arbiter over the plan's ASGI worker class (gunicorn's
    native asgi worker, or uvicorn's from the uvicorn-worker package)."""
    return render_template(
        "gunicorn-asgi.conf.py.j2",
        plan=plan,
        w=plan.workload,
        shared=plan.shared_socket.endpoint,
        overload=_overload_note(plan, "gunicorn-asgi"),
    )


def render_gunicorn_asgi_per_worker(plan: Plan) -> str:
    """gunicorn-asgi-per-worker.conf.py: one gunicorn with one ASGI worker per socket."""
    return render_template(
        "gunicorn-asgi-per-worker.conf.py.j2",
        plan=plan,
        w=plan.workload,
        sockets=[s.endpoint for s in plan.sockets],
        last_worker=len(plan.sockets) - 1,
    )
