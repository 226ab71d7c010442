"""`bench app`'s WSGI candidates as data: servertune's layouts (rendered from the plan, as
`servertune gen` writes them) and the ones people copy from gunicorn's and uWSGI's docs.

* `gunicorn-default`: `gunicorn APP` (1 sync worker);
* `gunicorn-2n+1`: its docs' `(2 x cores) + 1` sync workers;
* `gunicorn-gthread-4`: gthread, `--threads 4` on that worker count;
* `uwsgi-shared`: `processes = cores`, one thread, one shared socket;
* `servertune-uwsgi` (one socket per worker + nginx least_conn), `servertune-gunicorn` (one
  single-worker gunicorn per socket), `servertune-gthread` (gunicorn gthread on one socket).

Adding a layout is one line of `LAYOUTS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from servertune.targets.layout import Backend, Layout

#: The threads of the docs' gthread candidate.
NAIVE_GTHREADS = 4


def docs_workers(cores: int) -> int:
    """gunicorn's docs' rule: (2 x cores) + 1 workers."""
    return 2 * cores + 1


def _docs_flags(cores: int) -> list[str]:
    return ["--workers", str(docs_workers(cores))]


_GTHREAD_FLAGS = ("--worker-class", "gthread", "--threads", str(NAIVE_GTHREADS))


@dataclass(frozen=True)
class WsgiLayout:
    """One WSGI candidate: rendered from the plan (`rendered`), or a copied gunicorn command
    line (`flags`)."""

    name: str
    ours: bool = False
    #: The server whose file servertune renders from the plan, in `layout` (None: the plan's
    #: `socket_layout`, as `gen uwsgi` writes it).
    rendered: Backend | None = None
    layout: Layout | None = "shared"
    #: A copied gunicorn line's flags before the app, from the cores.
    flags: Callable[[int], list[str]] | None = None
    #: The worker processes a copied line runs, from the cores (None: the plan's).
    workers: Callable[[int], int] | None = None
    #: The plan forced to `processes = cores` and one thread (a rendered copied layout).
    per_core: bool = False
    #: servertune's layouts: the `servertune gen` targets that write its files, server first,
    #: then its nginx (the report's "Reproduce" lines).
    gen: tuple[str, ...] = ()


#: The copied layouts first, servertune's last (table order).
LAYOUTS: tuple[WsgiLayout, ...] = (
    WsgiLayout("gunicorn-default", flags=lambda c: [], workers=lambda c: 1),
    WsgiLayout("gunicorn-2n+1", flags=_docs_flags, workers=docs_workers),
    WsgiLayout(
        "gunicorn-gthread-4",
        flags=lambda c: [*_docs_flags(c), *_GTHREAD_FLAGS],
        workers=docs_workers,
    ),
    WsgiLayout("uwsgi-shared", rendered="uwsgi", layout="shared", per_core=True),
    WsgiLayout(
        "servertune-uwsgi", ours=True, rendered="uwsgi", layout=None, gen=("uwsgi", "nginx")
    ),
    WsgiLayout(
        "servertune-gunicorn",
        ours=True,
        rendered="gunicorn",
        layout="per-worker",
        gen=("gunicorn-per-worker", "nginx-gunicorn"),
    ),
    WsgiLayout(
        "servertune-gthread",
        ours=True,
        rendered="gunicorn",
        layout="shared",
        gen=("gunicorn", "nginx-gunicorn-shared"),
    ),
)
#: servertune's candidates, and the layouts people copy from docs (table order: naive first).
OURS = tuple(layout.name for layout in LAYOUTS if layout.ours)
NAIVE = tuple(layout.name for layout in LAYOUTS if not layout.ours)
#: Every layout by name.
BY_NAME = {layout.name: layout for layout in LAYOUTS}
