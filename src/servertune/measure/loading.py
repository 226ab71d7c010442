"""Finding the app: import `module:callable` and tell WSGI from ASGI by its signature."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable
from typing import Any, Literal

from servertune.measure.errors import MeasureError, describe_exception

__all__ = ["Interface", "detect_interface", "load_app"]

Interface = Literal["wsgi", "asgi"]


def load_app(spec: str, app_dir: str | None = None) -> Callable[..., Any]:
    """Import `module:callable`, with `app_dir` (default: the current directory) on sys.path."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise MeasureError(
            "app", f"must be module:callable (e.g. 'mysite.wsgi:application'); got {spec!r}"
        )
    if app_dir is not None and not os.path.isdir(app_dir):
        reason = "is not a directory" if os.path.exists(app_dir) else "no such directory"
        raise MeasureError("app_dir", f"{reason}: {app_dir}")
    directory = os.path.abspath(app_dir or os.getcwd())
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise MeasureError("app", f"cannot import {module_name!r}: {error}") from None
    except SystemExit as error:
        raise MeasureError(
            "app", f"importing {module_name!r} called sys.exit({error.code!r})"
        ) from None
    except Exception as error:
        # An app whose module raises on import (bad settings, a syntax error) is not measurable:
        # say what it raised and where, not 50 lines of traceback.
        raise MeasureError(
            "app", f"importing {module_name!r} raised {describe_exception(error, directory)}"
        ) from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise MeasureError("app", f"module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise MeasureError("app", f"{spec!r} is not callable")
    return obj  # type: ignore[no-any-return]


def detect_interface(app: Callable[..., Any]) -> Interface:
    """ASGI if the app (or its __call__) is a coroutine function, else WSGI."""
    call = getattr(app, "__call__", None)  # noqa: B004 - we want the method, not callability
    if inspect.iscoroutinefunction(app) or inspect.iscoroutinefunction(call):
        return "asgi"
    return "wsgi"
