"""Every file `servertune gen` can emit: one registry line each.

A target is a template under templates/, a renderer in a module here, and (in the tests) the
real server's own check of what it renders. Adding one is a module and a line in `TARGETS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from servertune.sizing import Plan
from servertune.targets.gunicorn import render_gunicorn
from servertune.targets.kubernetes import render_kubernetes
from servertune.targets.layout import Backend, Layout
from servertune.targets.nginx import render_nginx
from servertune.targets.uwsgi import render_uwsgi

__all__ = [
    "TARGETS",
    "Backend",
    "Layout",
    "Target",
    "render_gunicorn",
    "render_kubernetes",
    "render_nginx",
    "render_target",
    "render_uwsgi",
]


@dataclass(frozen=True)
class Target:
    """One emitted file: its name in `gen all` and how to render it."""

    filename: str
    render: Callable[[Plan], str]
    summary: str


TARGETS: Mapping[str, Target] = {
    "uwsgi": Target("uwsgi.ini", render_uwsgi, "uWSGI, one socket per worker (map-socket)"),
    "nginx": Target("nginx-uwsgi.conf", render_nginx, "complete nginx.conf in front of uWSGI"),
    "nginx-snippet": Target(
        "nginx-uwsgi-site.conf",
        lambda p: render_nginx(p, snippet=True),
        "upstream + server for an existing nginx (http context)",
    ),
    "gunicorn": Target("gunicorn.conf.py", render_gunicorn, "gunicorn gthread, one shared socket"),
    "gunicorn-per-worker": Target(
        "gunicorn-per-worker.conf.py",
        lambda p: render_gunicorn(p, "per-worker"),
        "one single-worker gunicorn per socket (SERVERTUNE_WORKER=0..N-1)",
    ),
    "nginx-gunicorn": Target(
        "nginx-gunicorn.conf",
        lambda p: render_nginx(p, "gunicorn"),
        "complete nginx.conf in front of the per-worker gunicorns",
    ),
    "nginx-gunicorn-shared": Target(
        "nginx-gunicorn-shared.conf",
        lambda p: render_nginx(p, "gunicorn", "shared"),
        "complete nginx.conf in front of the shared-socket gunicorn.conf.py",
    ),
    "nginx-gunicorn-snippet": Target(
        "nginx-gunicorn-site.conf",
        lambda p: render_nginx(p, "gunicorn", snippet=True),
        "upstream + server over the per-worker gunicorns",
    ),
    "kubernetes": Target(
        "kubernetes.yaml", render_kubernetes, "Deployment (nginx + gunicorn pod), Service, HPA, PDB"
    ),
}


def render_target(name: str, plan: Plan) -> str:
    """Render one target by its `TARGETS` name."""
    return TARGETS[name].render(plan)
