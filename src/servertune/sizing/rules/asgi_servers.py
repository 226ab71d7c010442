"""Flags of the ASGI servers (uvicorn, gunicorn's ASGI workers, granian) from the plan.

Each number restates a choice made elsewhere (admission, keep-alive order, recycling) in the
server's own terms, and steers around the pitfalls users report with these servers.
"""

from __future__ import annotations

from servertune.machine import Machine
from servertune.sizing.plan import Derivation, PlanError
from servertune.workload import Workload

#: gunicorn's worker classes for an ASGI app, as `worker_class` names them.
NATIVE_WORKER = "asgi"
UVICORN_WORKER = "uvicorn_worker.UvicornWorker"


def gunicorn_asgi_worker(w: Workload, m: Machine) -> tuple[str, str]:
    """gunicorn's worker class for the ASGI app and why: the native one when asked, or for
    'auto' when the installed gunicorn registers it; uvicorn's worker otherwise."""
    native = (
        "gunicorn's native asgi worker (no uvicorn-worker package; it does not enforce "
        "worker_connections, so nginx's limit_conn is the only admission)"
    )
    uvicorn = (
        "uvicorn's worker (uvicorn-worker package), which also applies the plan's limit_concurrency"
    )
    if w.gunicorn_asgi_worker == "native":
        if m.gunicorn_asgi_worker is False:
            raise PlanError(
                "gunicorn_asgi_worker: 'native', but the gunicorn installed here has no 'asgi' "
                "worker (not in gunicorn.workers.SUPPORTED_WORKERS, or gunicorn is not "
                "installed): pip install 'gunicorn>=25.1', or choose 'uvicorn'"
            )
        seen = (
            "the installed gunicorn has it"
            if m.gunicorn_asgi_worker
            else "the gunicorn it runs under was not read here: it needs gunicorn >= 25.1"
        )
        return NATIVE_WORKER, f"'native' as asked ({seen}): {native}"
    if w.gunicorn_asgi_worker == "uvicorn":
        return UVICORN_WORKER, f"'uvicorn' as asked: {uvicorn}"
    if m.gunicorn_asgi_worker:
        return NATIVE_WORKER, f"'auto', and the installed gunicorn has it: {native}"
    if m.gunicorn_asgi_worker is False:
        return UVICORN_WORKER, (
            f"'auto', and the installed gunicorn has no native asgi worker (older than 24.0, "
            f"or not installed): {uvicorn}"
        )
    return UVICORN_WORKER, (
        f"'auto', and the gunicorn it runs under was not read (a machine described by hand): "
        f"{uvicorn}, which any gunicorn runs; 'native' needs gunicorn >= 25.1"
    )


def listener_nodelay(processes: int, d: Derivation) -> tuple[bool, str]:
    """Whether uvicorn.sh turns TCP_NODELAY on for its listening socket itself, and why."""
    if processes == 1:
        return False, (
            "one worker: uvicorn hands asyncio the host and port, and asyncio turns TCP_NODELAY "
            "on for every connection it accepts"
        )
    if d.values["shared_socket"].kind == "unix":
        return False, "a unix socket: no Nagle's algorithm to turn off"
    return True, (
        f"{processes} workers on a TCP port: uvicorn's supervisor binds the port itself with "
        "the socket's protocol left at 0, and asyncio turns TCP_NODELAY on only for sockets "
        "whose protocol reads IPPROTO_TCP, so each answer's body waits for nginx's delayed ACK "
        "after its headers (+44 ms per request, captured on loopback: Kludex/uvicorn#3149, open). "
        "uvicorn.sh sets TCP_NODELAY on the listening socket, which Linux copies to every "
        "accepted connection, as gunicorn does"
    )


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """uvicorn's limit and keep-alive, gunicorn's ASGI worker class, recycling only under a
    supervisor, granian's pools."""
    if w.interface == "asgi":
        _uvicorn(w, m, d)
    else:
        for name in (
            "limit_concurrency",
            "gunicorn_asgi_worker",
            "asgi_keepalive_s",
            "asgi_max_requests",
            "uvicorn_listener_nodelay",
        ):
            d.put(name, None, "interface is 'wsgi': no ASGI server")
    _granian(w, d)


def _uvicorn(w: Workload, m: Machine, d: Derivation) -> None:
    """uvicorn's connection limit, keep-alive, recycling and listener; gunicorn's ASGI worker."""
    processes = d.get_int("processes")
    d.put("gunicorn_asgi_worker", *gunicorn_asgi_worker(w, m))
    admission = d.values["admission_limit"]
    idle = d.get_int("nginx_worker_processes") * d.get_int("upstream_keepalive_connections")
    if admission is None:
        d.put("limit_concurrency", None, "no admission limit: none for uvicorn either")
    else:
        nginx = admission + idle
        # HAProxy in nginx's place: maxconn on each of its two backends (the reusing one and
        # the one that closes after each answer) and the reusing one's idle pool.
        haproxy = 2 * d.get_int("in_service_per_process") + d.get_int("lb_server_pool")
        d.put(
            "limit_concurrency",
            max(nginx, haproxy) + 1,
            f"the most connections a front may hold open to one process + 1: nginx's admission "
            f"({admission}) + the {idle} idle connections its keep-alive pools may hold = "
            f"{nginx}; HAProxy in nginx's place, maxconn on its two backends + its idle pool = "
            f"{haproxy}. uvicorn counts open connections, idle ones and the request's own "
            "included, and answers 503 once they reach the limit, so this bound trips only if "
            "traffic bypasses the front",
        )
    d.put(
        "asgi_keepalive_s",
        d.get_int("gunicorn_keepalive_s"),
        "--timeout-keep-alive = gunicorn's keepalive: above nginx's upstream idle limit, so "
        "nginx closes an idle connection first (uvicorn's 5 s default is below it)",
    )
    if processes > 1:
        recycle, reason = (
            d.get_int("max_requests"),
            "--limit-max-requests: uvicorn's supervisor restarts a worker that exits",
        )
    else:
        recycle, reason = (
            None,
            (
                "one worker: uvicorn --limit-max-requests would exit the whole server (no "
                "supervisor process restarts it), so no recycling; gunicorn-asgi recycles safely"
            ),
        )
    d.put("asgi_max_requests", recycle, reason)
    d.put("uvicorn_listener_nodelay", *listener_nodelay(processes, d))


def _granian(w: Workload, d: Derivation) -> None:
    """granian's blocking threads, backpressure and RSS cap, for either interface."""
    processes = d.get_int("processes")
    asgi = w.interface == "asgi"
    d.put(
        "granian_blocking_threads",
        1 if asgi else d.get_int("threads"),
        "ASGI: 1, the only value granian accepts (the app runs on the loop)"
        if asgi
        else "= threads per process: granian's WSGI default is backpressure / 2 (512 threads "
        "for one worker), far more than the GIL can use",
    )
    slots = d.values["admission_limit"] or processes * d.get_int("threads")
    idle = d.get_int("nginx_worker_processes") * d.get_int("upstream_keepalive_connections")
    d.put(
        "granian_backpressure",
        slots + idle,
        f"{slots} requests in flight + the {idle} idle connections nginx's keep-alive pools may "
        "hold: granian's backpressure counts open connections, and at the admitted count alone "
        "idle kept-alive ones kept new ones waiting for 30 s (granian 2.8, behind nginx)"
        + (
            ""
            if asgi
            else "; nginx buffers responses, so a stream to a slow client holds no thread"
        ),
    )
    rss = d.values["reload_on_rss_mb"]
    if rss is not None and processes == 1:
        d.put(
            "granian_max_rss_mb",
            None,
            f"one worker: respawning it at {rss} MiB would leave nothing serving (a one-worker "
            "pod is OOM-killed or drops requests either way); run two workers to recycle safely",
        )
    else:
        d.put(
            "granian_max_rss_mb",
            rss,
            "= reload_on_rss_mb: granian respawns a worker over it"
            if rss is not None
            else "no memory given: no RSS cap",
        )
