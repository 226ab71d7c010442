"""`bench app`'s WSGI candidates: servertune's layouts (rendered by `servertune gen`) and the
command lines people copy from gunicorn's and uWSGI's docs."""

from __future__ import annotations

#: servertune's candidates, and the layouts people copy from docs (table order: naive first).
OURS = ("servertune-uwsgi", "servertune-gunicorn", "servertune-gthread")
NAIVE = ("gunicorn-default", "gunicorn-2n+1", "gunicorn-gthread-4", "uwsgi-shared")
#: The threads of the docs' gthread candidate.
NAIVE_GTHREADS = 4


def naive_argv(config: str, gunicorn: list[str], app: str, cores: int) -> list[str] | None:
    """A copied gunicorn candidate's command line (`gunicorn` is its start, bound and chdir'd),
    or None for one that is not a copied gunicorn line."""
    docs_workers = str(2 * cores + 1)
    return {
        "gunicorn-default": [*gunicorn, app],
        "gunicorn-2n+1": [*gunicorn, "--workers", docs_workers, app],
        "gunicorn-gthread-4": [
            *gunicorn, "--workers", docs_workers, "--worker-class", "gthread",
            "--threads", str(NAIVE_GTHREADS), app,
        ],
    }.get(config)  # fmt: skip
