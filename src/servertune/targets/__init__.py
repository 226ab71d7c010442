"""Every file `servertune gen` can emit: one registry line each.

A target is a template under templates/, a renderer in a module here, and (in the tests) the
real server's own check of what it renders. Adding one is a module and a line in `TARGETS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from servertune.sizing import Plan, PlanError
from servertune.targets.layout import Backend, Interface, Layout

if TYPE_CHECKING:
    from servertune.targets.asgi_servers import (
        render_granian,
        render_granian_per_worker,
        render_gunicorn_asgi,
        render_gunicorn_asgi_per_worker,
        render_uvicorn,
        render_uvicorn_per_worker,
    )
    from servertune.targets.gunicorn import render_gunicorn
    from servertune.targets.haproxy import render_haproxy
    from servertune.targets.kubernetes import render_kubernetes
    from servertune.targets.nginx import render_nginx
    from servertune.targets.uwsgi import render_uwsgi

#: Where each renderer lives. A renderer's module is imported when it is first used (PEP 562's
#: module `__getattr__`), so `gen uwsgi` does not import the other targets' modules on every
#: cold start; `from servertune.targets import render_nginx` works as before.
_RENDERERS: Mapping[str, str] = {
    "render_granian": "asgi_servers",
    "render_granian_per_worker": "asgi_servers",
    "render_gunicorn": "gunicorn",
    "render_gunicorn_asgi": "asgi_servers",
    "render_gunicorn_asgi_per_worker": "asgi_servers",
    "render_haproxy": "haproxy",
    "render_kubernetes": "kubernetes",
    "render_nginx": "nginx",
    "render_uvicorn": "asgi_servers",
    "render_uvicorn_per_worker": "asgi_servers",
    "render_uwsgi": "uwsgi",
}


def __getattr__(name: str) -> Any:
    module = _RENDERERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def _lazy(renderer: str, *args: Any, **kwargs: Any) -> Callable[[Plan], str]:
    """`renderer(plan, *args, **kwargs)`, its module imported at the first render."""

    def render(plan: Plan) -> str:
        function: Callable[..., str] = __getattr__(renderer)
        return function(plan, *args, **kwargs)

    return render


__all__ = [
    "TARGETS",
    "Backend",
    "Interface",
    "Layout",
    "Target",
    "TargetError",
    "fitting",
    "render_granian",
    "render_granian_per_worker",
    "render_gunicorn",
    "render_gunicorn_asgi",
    "render_gunicorn_asgi_per_worker",
    "render_haproxy",
    "render_kubernetes",
    "render_nginx",
    "render_target",
    "render_uvicorn",
    "render_uvicorn_per_worker",
    "render_uwsgi",
]

WSGI: frozenset[Interface] = frozenset({"wsgi"})
ASGI: frozenset[Interface] = frozenset({"asgi"})


class TargetError(PlanError):
    """A target asked for an app it cannot serve (an ASGI app to uWSGI, a WSGI app to uvicorn)."""


# A NamedTuple, not a frozen dataclass: every `servertune` run creates this class, and a
# dataclass execs its generated methods at creation, ~0.5 ms more each (bench cold-start).
class Target(NamedTuple):
    """One emitted file: its name in `gen all` and how to render it."""

    filename: str
    render: Callable[[Plan], str]
    summary: str
    #: The app interfaces the emitted file can serve (Workload.interface).
    interfaces: frozenset[Interface] = WSGI


TARGETS: Mapping[str, Target] = {
    "uwsgi": Target(
        "uwsgi.ini", _lazy("render_uwsgi"), "uWSGI, one socket per worker (map-socket)"
    ),
    "nginx": Target(
        "nginx-uwsgi.conf", _lazy("render_nginx"), "complete nginx.conf in front of uWSGI"
    ),
    "nginx-snippet": Target(
        "nginx-uwsgi-site.conf",
        _lazy("render_nginx", snippet=True),
        "upstream + server for an existing nginx (http context)",
    ),
    "gunicorn": Target(
        "gunicorn.conf.py", _lazy("render_gunicorn"), "gunicorn gthread, one shared socket"
    ),
    "gunicorn-per-worker": Target(
        "gunicorn-per-worker.conf.py",
        _lazy("render_gunicorn", "per-worker"),
        "one single-worker gunicorn per socket (SERVERTUNE_WORKER=0..N-1)",
    ),
    "nginx-gunicorn": Target(
        "nginx-gunicorn.conf",
        _lazy("render_nginx", "gunicorn"),
        "complete nginx.conf in front of the per-worker gunicorns",
    ),
    "nginx-gunicorn-shared": Target(
        "nginx-gunicorn-shared.conf",
        _lazy("render_nginx", "gunicorn", "shared"),
        "complete nginx.conf in front of the shared-socket gunicorn.conf.py",
    ),
    "nginx-gunicorn-snippet": Target(
        "nginx-gunicorn-site.conf",
        _lazy("render_nginx", "gunicorn", snippet=True),
        "upstream + server over the per-worker gunicorns",
    ),
    "haproxy": Target(
        "haproxy.cfg",
        _lazy("render_haproxy"),
        "HAProxy in front of nginx, set up like a cloud load balancer (idle timeout, reuse)",
        WSGI | ASGI,
    ),
    "haproxy-asgi-per-worker": Target(
        "haproxy-asgi-per-worker.cfg",
        _lazy("render_haproxy", "app"),
        "HAProxy in nginx's place over the per-worker ASGI servers: per-server maxconn, a "
        "queue bounded by time",
        ASGI,
    ),
    "kubernetes": Target(
        "kubernetes.yaml",
        _lazy("render_kubernetes"),
        "Deployment (nginx + gunicorn pod), Service, HPA, PDB",
    ),
    "uvicorn": Target(
        "uvicorn.sh",
        _lazy("render_uvicorn"),
        "uvicorn --workers N on one socket, admission and timeouts from the plan",
        ASGI,
    ),
    "uvicorn-per-worker": Target(
        "uvicorn-per-worker.sh",
        _lazy("render_uvicorn_per_worker"),
        "one one-worker uvicorn per socket (SERVERTUNE_WORKER=0..N-1), for nginx or HAProxy",
        ASGI,
    ),
    "gunicorn-asgi": Target(
        "gunicorn-asgi.conf.py",
        _lazy("render_gunicorn_asgi"),
        "gunicorn with its native asgi worker or uvicorn's, one shared socket",
        ASGI,
    ),
    "gunicorn-asgi-per-worker": Target(
        "gunicorn-asgi-per-worker.conf.py",
        _lazy("render_gunicorn_asgi_per_worker"),
        "one gunicorn with one ASGI worker per socket (SERVERTUNE_WORKER=0..N-1)",
        ASGI,
    ),
    "granian": Target(
        "granian.sh",
        _lazy("render_granian"),
        "granian for an ASGI or WSGI app: workers, blocking threads, backpressure",
        WSGI | ASGI,
    ),
    "granian-per-worker": Target(
        "granian-per-worker.sh",
        _lazy("render_granian_per_worker"),
        "one one-worker granian per socket (SERVERTUNE_WORKER=0..N-1), for nginx or HAProxy",
        ASGI,
    ),
    "nginx-asgi": Target(
        "nginx-asgi.conf",
        _lazy("render_nginx", "asgi", "shared"),
        "complete nginx.conf in front of uvicorn, gunicorn-asgi or granian, with admission",
        ASGI,
    ),
    "nginx-asgi-per-worker": Target(
        "nginx-asgi-per-worker.conf",
        _lazy("render_nginx", "asgi", "per-worker"),
        "complete nginx.conf, least_conn over the per-worker uvicorn, granian or gunicorn-asgi",
        ASGI,
    ),
    "nginx-asgi-snippet": Target(
        "nginx-asgi-site.conf",
        _lazy("render_nginx", "asgi", "shared", snippet=True),
        "upstream + server (with admission) over the ASGI server's socket",
        ASGI,
    ),
}


def fitting(interface: Interface) -> list[str]:
    """The targets that can serve an app of this interface, in registry order."""
    return [name for name, target in TARGETS.items() if interface in target.interfaces]


def render_target(name: str, plan: Plan) -> str:
    """Render one target by its `TARGETS` name; refuse one that cannot serve the plan's app."""
    interface = plan.workload.interface
    if interface not in TARGETS[name].interfaces:
        kind = " or ".join(sorted(i.upper() for i in TARGETS[name].interfaces))
        raise TargetError(
            f"interface: {name} serves {kind} apps, and this app is {interface.upper()} "
            f"(interface = {interface!r}); for it use {', '.join(fitting(interface))}"
        )
    return TARGETS[name].render(plan)
