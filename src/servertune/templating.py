"""The Jinja2 environment every target renders with, and its allow-list of values.

Templates hold no arithmetic and no defaults: everything they print comes from the Plan, whose
string values were allow-listed by the Workload model. The `finalize` hook is a second line of
defence: any value that would carry a directive separator into a config aborts the render.
"""

from __future__ import annotations

import ipaddress
import re
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from servertune import __version__

__all__ = ["RenderError", "Verbatim", "render_template"]

# Characters a rendered value may contain. No whitespace, quotes, `;`, braces, `#`, `$`, `%`,
# `@`, parentheses or backslashes: nothing that ends a directive or starts an expansion in nginx,
# uWSGI ini files or Python source.
_SAFE_VALUE = re.compile(r"\A[A-Za-z0-9_.:/\[\]*,-]*\Z")


class RenderError(ValueError):
    """A value failed the render-time allow-list: a bug upstream of the template, never input."""


class Verbatim(str):
    """Text servertune declares as a constant in its own code (never built from input), rendered
    as is: a line of code a script runs, which the allow-list above would refuse for its spaces."""

    __slots__ = ()


def _finalize(value: Any) -> Any:
    if isinstance(value, Verbatim):
        return value
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, ipaddress.IPv4Address | ipaddress.IPv6Address):
        return str(value)
    if isinstance(value, str) and _SAFE_VALUE.match(value):
        return value
    raise RenderError(f"refusing to render {value!r}: not an allow-listed config value")


def template_dir() -> Path:
    """Templates ship inside the wheel as servertune/templates; a source checkout has them at the top."""
    # A plain path, not importlib.resources: the wheel installs the package as files, and
    # importlib.resources (with zipfile) would add to every `servertune gen`'s cold start.
    packaged = Path(__file__).resolve().parent / "templates"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "templates"
    if checkout.is_dir():
        return checkout
    raise RenderError("servertune's templates are missing from this installation")


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(template_dir()),
        autoescape=False,  # configs, not HTML: escaping would corrupt them
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )


def render_template(template: str, **context: Any) -> str:
    """Render one file of templates/ with `version` and `context`."""
    return _environment().get_template(template).render(version=__version__, **context)
