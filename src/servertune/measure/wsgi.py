"""Calling a WSGI app in process: an environ like a server's, the body iterated and closed."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import unquote

from servertune.measure.errors import MeasureError
from servertune.measure.target import Request

__all__ = ["call_wsgi", "wsgi_environ"]


def wsgi_environ(req: Request) -> dict[str, Any]:
    """The PEP 3333 environ a server on 127.0.0.1:80 would pass for `req`."""
    environ: dict[str, Any] = {
        "REQUEST_METHOD": req.method,
        "SCRIPT_NAME": "",
        "PATH_INFO": unquote(req.path, encoding="latin-1"),
        "QUERY_STRING": req.query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(req.body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    if req.body:
        environ["CONTENT_LENGTH"] = str(len(req.body))
    for name, value in req.headers:
        key = name.upper().replace("-", "_")
        if key in {"CONTENT_TYPE", "CONTENT_LENGTH"}:
            environ[key] = value
        else:
            environ[f"HTTP_{key}"] = value
    return environ


def call_wsgi(app: Callable[..., Any], req: Request) -> int:
    """Run one request through `app` and return its status code."""
    status: list[str] = []

    def start_response(
        status_line: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[[bytes], None]:
        status[:] = [status_line]
        return lambda data: None

    result: Iterable[bytes] = app(wsgi_environ(req), start_response)
    try:
        for _ in result:  # the body is produced, and paid for, while iterating
            pass
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    if not status:
        raise MeasureError("app", "the WSGI app returned without calling start_response")
    return int(status[0].split(" ", 1)[0])
