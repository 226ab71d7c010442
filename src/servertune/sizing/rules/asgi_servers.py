"""Flags of the ASGI servers (uvicorn, gunicorn's uvicorn worker, granian) from the plan.

Each number restates a choice made elsewhere (admission, keep-alive order, recycling) in the
server's own terms, and steers around the pitfalls users report with these servers.
"""

from __future__ import annotations

from servertune.machine import Machine
from servertune.sizing.plan import Derivation
from servertune.workload import Workload


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """uvicorn's limit and keep-alive, recycling only under a supervisor, granian's pools."""
    processes = d.get_int("processes")
    asgi = w.interface == "asgi"
    if asgi:
        admission = d.values["admission_limit"]
        idle = d.get_int("nginx_worker_processes") * d.get_int("upstream_keepalive_connections")
        d.put(
            "limit_concurrency",
            None if admission is None else admission + idle,
            "no admission limit: none for uvicorn either"
            if admission is None
            else f"nginx's admission ({admission}) + the {idle} idle connections its keep-alive "
            "pools may hold: uvicorn counts open connections, idle ones included, and answers "
            "503 to every request past the limit, so this bound trips only if traffic bypasses nginx",
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
    else:
        for name in ("limit_concurrency", "asgi_keepalive_s", "asgi_max_requests"):
            d.put(name, None, "interface is 'wsgi': no ASGI server")

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
