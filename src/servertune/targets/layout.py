"""The two socket layouts every app-server target can render."""

from __future__ import annotations

from typing import Literal

#: `per-worker`: one socket per worker behind nginx least_conn (servertune's); `shared`: every
#: worker accepts from one socket (the layout servertune's benchmarks compare against).
Layout = Literal["per-worker", "shared"]
#: Who nginx talks to: uWSGI's protocol, or HTTP/1.1 to gunicorn or an ASGI server (`asgi`: the
#: upstream also gets the plan's admission limit).
Backend = Literal["uwsgi", "gunicorn", "asgi"]
#: How a server calls the app (Workload.interface).
Interface = Literal["wsgi", "asgi"]
