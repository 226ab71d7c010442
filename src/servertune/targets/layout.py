"""The two socket layouts every app-server target can render."""

from __future__ import annotations

from typing import Literal

from servertune.sizing.plan import SocketLayout

#: `per-worker`: one socket per worker behind nginx least_conn; `shared`: every worker accepts
#: from one socket. uWSGI's comes from the plan (`socket_layout`); the other targets name theirs.
Layout = SocketLayout
#: Who nginx talks to: uWSGI's protocol, or HTTP/1.1 to gunicorn or an ASGI server (`asgi`: the
#: upstream also gets the plan's admission limit).
Backend = Literal["uwsgi", "gunicorn", "asgi"]
#: How a server calls the app (Workload.interface).
Interface = Literal["wsgi", "asgi"]
