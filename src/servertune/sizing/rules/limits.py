"""Request limits the app servers enforce, written out so a config review sees them."""

from __future__ import annotations

from servertune.machine import Machine
from servertune.sizing.defaults import (
    LIMIT_REQUEST_FIELD_SIZE,
    LIMIT_REQUEST_FIELDS,
    LIMIT_REQUEST_LINE,
    UWSGI_BUFFER_SIZE,
)
from servertune.sizing.plan import Derivation
from servertune.workload import Workload


def rule(w: Workload, m: Machine, d: Derivation) -> None:
    """uWSGI's header buffer and gunicorn's request-line and header limits."""
    d.put(
        "buffer_size",
        UWSGI_BUFFER_SIZE,
        "uWSGI header buffer: the 4 KiB default turns large cookies into 502s",
    )
    d.put(
        "limit_request_line",
        LIMIT_REQUEST_LINE,
        "gunicorn's limit on the request line, kept explicit",
    )
    d.put(
        "limit_request_fields",
        LIMIT_REQUEST_FIELDS,
        "gunicorn's limit on header count, kept explicit",
    )
    d.put(
        "limit_request_field_size",
        LIMIT_REQUEST_FIELD_SIZE,
        "gunicorn's limit on one header, kept explicit",
    )
