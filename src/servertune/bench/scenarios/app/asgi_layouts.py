"""`bench app` on an ASGI app: servertune's ASGI layouts and the command lines people copy.

The layouts are data: one `AsgiLayout` per line of `LAYOUTS`. servertune's are started from
the files `servertune gen` writes for them (`deploy_asgi` renders them from the plan), each
behind its front: the generated nginx with its admission limit, the generated HAProxy in
nginx's place (`gen haproxy-asgi-per-worker`: a queue bounded by time past each server's
admission), or the generated HAProxy in front of that nginx; the copied ones are the commands
the servers' and FastAPI's docs show, behind the same nginx without an admission limit:

* `uvicorn-1-worker`: `uvicorn APP` (one process: uvicorn's default);
* `uvicorn-2n+1`: `uvicorn APP --workers (2 x cores) + 1`, gunicorn's worker rule carried over;
* `fastapi-run-4`: what FastAPI's "Server Workers" page runs, `fastapi run --workers 4`, i.e.
  uvicorn with 4 workers and proxy headers on (never the same as (2 x cores) + 1, an odd number);
* `granian-default`: `granian --interface asgi APP` (one worker: granian's default);
* `gunicorn-uvicorn-2n+1`: `gunicorn -k uvicorn_worker.UvicornWorker -w (2 x cores) + 1 APP`.

Adding a layout (another server's worker class, another doc's advice) is one line of `LAYOUTS`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from servertune.bench.harness.deployments import AsgiFront, AsgiServer

#: The workers FastAPI's "Server Workers" page passes to `fastapi run --workers`.
FASTAPI_DOCS_WORKERS = 4


@dataclass(frozen=True)
class Copied:
    """What a copied command line needs: the app, where it lives, the socket, the cores."""

    app: str
    app_dir: str
    host: str
    port: int
    cores: int


def _uvicorn(copied: Copied, *flags: str) -> list[str]:
    return [
        sys.executable, "-m", "uvicorn", copied.app, "--app-dir", copied.app_dir,
        "--host", copied.host, "--port", str(copied.port), "--no-access-log", *flags,
    ]  # fmt: skip


def _granian(copied: Copied) -> list[str]:
    return [
        str(Path(sys.executable).parent / "granian"), "--interface", "asgi", copied.app,
        "--working-dir", copied.app_dir, "--host", copied.host, "--port", str(copied.port),
        "--no-access-log",
    ]  # fmt: skip


def _gunicorn_uvicorn(copied: Copied) -> list[str]:
    return [
        sys.executable, "-m", "gunicorn", "-k", "uvicorn_worker.UvicornWorker",
        "-w", str(docs_workers(copied.cores)), "--bind", f"{copied.host}:{copied.port}",
        "--chdir", copied.app_dir, copied.app,
    ]  # fmt: skip


def docs_workers(cores: int) -> int:
    """gunicorn's docs' rule, (2 x cores) + 1, which people carry over to uvicorn."""
    return 2 * cores + 1


@dataclass(frozen=True)
class AsgiLayout:
    """One candidate: servertune's (rendered from the plan) or a copied command line."""

    name: str
    server: AsgiServer
    #: servertune's file for `server`, one instance per socket when `per_worker`.
    ours: bool = False
    per_worker: bool = False
    #: A copied layout's command line and its worker processes (from the cores).
    command: Callable[[Copied], list[str]] | None = None
    workers: Callable[[int], int] | None = None
    #: Whether the layout is run on a machine with this many cores (a copied advice that
    #: would repeat another row is left out).
    applies: Callable[[int], bool] = lambda cores: True
    #: What the clients reach: nginx (limit_conn admission), HAProxy in its place (per-server
    #: maxconn, a queue bounded by the plan's wait), or HAProxy in front of nginx.
    front: AsgiFront = "nginx"


#: servertune's layouts last, the copied ones first (table order). servertune's first two are
#: its recommended ASGI front, HAProxy in nginx's place over one server per socket; the nginx
#: rows stay to show what `limit_conn` does past admission. HAProxy in front of nginx
#: (`front="haproxy-nginx"`) was measured and is no row: one hop more for the same queue, 0.66 x
#: the answers of HAProxy alone at 128 connections on FastAPI `/io` (docs/benchmarks.md, "HAProxy
#: in nginx's place").
LAYOUTS: tuple[AsgiLayout, ...] = (
    AsgiLayout("uvicorn-1-worker", "uvicorn", command=_uvicorn, workers=lambda c: 1),
    AsgiLayout(
        "uvicorn-2n+1",
        "uvicorn",
        workers=docs_workers,
        command=lambda c: _uvicorn(c, "--workers", str(docs_workers(c.cores))),
    ),
    AsgiLayout(
        "fastapi-run-4",
        "uvicorn",
        workers=lambda c: FASTAPI_DOCS_WORKERS,
        command=lambda c: _uvicorn(c, "--workers", str(FASTAPI_DOCS_WORKERS), "--proxy-headers"),
    ),
    AsgiLayout("granian-default", "granian", command=_granian, workers=lambda c: 1),
    AsgiLayout(
        "gunicorn-uvicorn-2n+1", "gunicorn-asgi", command=_gunicorn_uvicorn, workers=docs_workers
    ),
    AsgiLayout(
        "servertune-uvicorn-haproxy", "uvicorn", ours=True, per_worker=True, front="haproxy"
    ),
    AsgiLayout(
        "servertune-granian-haproxy", "granian", ours=True, per_worker=True, front="haproxy"
    ),
    AsgiLayout("servertune-uvicorn-per-worker", "uvicorn", ours=True, per_worker=True),
    AsgiLayout("servertune-uvicorn", "uvicorn", ours=True),
    AsgiLayout("servertune-granian", "granian", ours=True),
    AsgiLayout("servertune-gunicorn-asgi", "gunicorn-asgi", ours=True),
)


def layouts_for(cores: int) -> tuple[AsgiLayout, ...]:
    """The layouts run on a machine with `cores` cores, in table order."""
    return tuple(layout for layout in LAYOUTS if layout.applies(cores))
