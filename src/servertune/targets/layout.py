"""The two socket layouts every app-server target can render."""

from __future__ import annotations

from typing import Literal

#: `per-worker`: one socket per worker behind nginx least_conn (servertune's); `shared`: every
#: worker accepts from one socket (the layout servertune's benchmarks compare against).
Layout = Literal["per-worker", "shared"]
Backend = Literal["uwsgi", "gunicorn"]
