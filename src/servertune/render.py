"""Plan -> text: the public face of the targets, the template environment and atomic writes.

The renderers live one per target in `servertune.targets`; this module names what callers use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from servertune import targets
from servertune.files import write_atomically
from servertune.targets import TARGETS, Backend, Layout, Target, TargetError, fitting, render_target
from servertune.targets.unused import unused_fields
from servertune.templating import RenderError

if TYPE_CHECKING:
    from servertune.targets import (
        render_granian,
        render_granian_per_worker,
        render_gunicorn,
        render_gunicorn_asgi,
        render_gunicorn_asgi_per_worker,
        render_haproxy,
        render_nginx,
        render_uvicorn,
        render_uvicorn_per_worker,
        render_uwsgi,
    )


def __getattr__(name: str) -> Any:
    # The renderers are imported when first used (see servertune.targets), not by `gen`'s start.
    return getattr(targets, name)


__all__ = [
    "TARGETS",
    "Backend",
    "Layout",
    "RenderError",
    "Target",
    "TargetError",
    "fitting",
    "render_granian",
    "render_granian_per_worker",
    "render_gunicorn",
    "render_gunicorn_asgi",
    "render_gunicorn_asgi_per_worker",
    "render_haproxy",
    "render_nginx",
    "render_target",
    "render_uvicorn",
    "render_uvicorn_per_worker",
    "render_uwsgi",
    "unused_fields",
    "write_atomically",
]
