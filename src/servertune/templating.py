"""The Jinja2 environment every target renders with, and its allow-list of values.

Templates hold no arithmetic and no defaults: everything they print comes from the Plan, whose
string values were allow-listed by the Workload model. The `finalize` hook is a second line of
defence: any value that would carry a directive separator into a config aborts the render.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import os
import pickle
import re
import stat
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from servertune import __version__

__all__ = ["RenderError", "Verbatim", "render_template", "template_cache_dir"]

# Characters a rendered value may contain. No whitespace, quotes, `;`, braces, `#`, `$`, `%`,
# `@`, parentheses or backslashes: nothing that ends a directive or starts an expansion in nginx,
# uWSGI ini files or Python source. Letters and digits of any script (`\w`: what str.isalnum
# takes, never a space, separator or punctuation) so a Unicode module name (`módulo:app`) renders.
_SAFE_VALUE = re.compile(r"\A[\w.:/\[\]*,-]*\Z")


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


#: How every template is compiled. The cache directory's name hashes these with Jinja2's and
#: Python's versions: code compiled under other settings is never loaded.
_OPTIONS: dict[str, Any] = {
    "autoescape": False,  # configs, not HTML: escaping would corrupt them
    "undefined": jinja2.StrictUndefined,
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
    "finalize": _finalize,
}


class _TemplateCache(jinja2.FileSystemBytecodeCache):
    """Jinja2's own cache of compiled templates, which never fails a render: a cache that cannot
    be read or written is a compile, as without it."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        # A truncated or garbled entry fails in pickle (its checksum) or marshal (its code).
        try:
            super().load_bytecode(bucket)
        except (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError):
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def template_cache_dir() -> Path | None:
    """Where compiled templates are kept: `$XDG_CACHE_HOME/servertune` (default ~/.cache), one
    directory per Jinja2 version, Python version and set of options; None when there is none
    this process owns and only it can write (then every run compiles, as without a cache)."""
    options = {name: getattr(v, "__qualname__", v) for name, v in _OPTIONS.items()}
    key = repr((jinja2.__version__, sys.implementation.cache_tag, sorted(options.items())))
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = Path(base) / "servertune" / f"templates-{digest}"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = directory.stat()
    except OSError:
        return None
    # Jinja2 loads compiled code from here: a directory another user could write is not used.
    if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    return directory


@cache
def _environment() -> jinja2.Environment:
    # Compiling a template (lex, parse, generate Python, compile it) is most of a render; Jinja2's
    # bytecode cache keys each compiled template on its source's checksum, so an edited template
    # (an editable install) recompiles and a wheel's are compiled once per user (bench cold-start).
    directory = template_cache_dir()
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(template_dir()),
        bytecode_cache=None if directory is None else _TemplateCache(str(directory)),
        **_OPTIONS,
    )


def render_template(template: str, **context: Any) -> str:
    """Render one file of templates/ with `version` and `context`."""
    return _environment().get_template(template).render(version=__version__, **context)
