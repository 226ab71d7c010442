"""The working directory a server is started in, for the relative unix sockets it binds.

A server binding `unix:app.sock` (gunicorn's `--bind`) or `socket = app.sock` (uWSGI's)
creates the socket in the directory it runs in: its own `chdir` (uWSGI changes to it before it
binds), joined to the one its starter runs it in (a Dockerfile's WORKDIR for its CMD, a compose
service's `working_dir`, a Kubernetes container's `workingDir`, a systemd unit's
`WorkingDirectory=`, a supervisord program's `directory=`). Each starter hands its folder to
`started_in` once it has read the server; the innermost one that makes the path absolute
wins (a script's own `cd` before an image's WORKDIR), since an absolute socket is left as it is.
A front reaches the socket by its absolute path (`proxy_pass http://unix:/code/app.sock`).
"""

from __future__ import annotations

import posixpath
from dataclasses import replace

from servertune.check.model import AppServer, Setting

__all__ = ["started_in"]

_UNIX = "unix:"


def started_in(app: AppServer, workdir: str) -> AppServer:
    """`app` as run in `workdir` (as written; "" when its starter sets none): each relative
    unix socket it binds is the path below its own `chdir` joined to `workdir`, when that
    makes an absolute path; `app` unchanged otherwise."""
    folder = posixpath.join(workdir, app.chdir) if workdir else app.chdir
    if not folder.startswith("/"):
        return app
    moved = {
        s.value: _UNIX + posixpath.normpath(posixpath.join(folder, s.value[len(_UNIX) :]))
        for s in app.sockets
        if _relative(s.value)
    }
    if not moved:
        return app
    return replace(
        app,
        sockets=tuple(
            Setting(moved.get(s.value, s.value), s.at, default=s.default) for s in app.sockets
        ),
        uwsgi_protocol=tuple(moved.get(s, s) for s in app.uwsgi_protocol),
    )


def _relative(socket: str) -> bool:
    """A unix socket written relative to the directory the server runs in (`unix:app.sock`,
    `unix:run/app.sock`), not an abstract one (`unix:@name`)."""
    path = socket[len(_UNIX) :] if socket.startswith(_UNIX) else ""
    return bool(path) and not path.startswith(("/", "@", "$"))
