"""A front whose upstream address nginx computes where it runs (`set_by_lua_block $port {
return os.getenv('LISTEN_PORT') or '8080' }`, a `map`), not known here, joined by the image it
runs in: when one image copies the front's config by name or folder (not a whole build
context) and starts exactly one app server of the run, that nginx and that server run in one
container, and a pass of that config to an address not known here reaches that server, the
only one there to reach (the s6-overlay or supervisord image that starts nginx beside
gunicorn). A part of the address that is written (`http://$host:8000`) must still match: a
server known to listen on other ports only is not joined. Two images holding the config, or
an image starting two servers, join nothing: unknown, never guessed."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from servertune.check.dockerfile import Image
from servertune.check.model import AppServer, NginxConfig, PassTarget, note

__all__ = ["same_image_server", "same_image_unbound"]

#: `host:port` as a pass writes it after its scheme, a `$name` allowed in each part.
_PORT = re.compile(r":(?P<port>[^:/]+)\Z")


def _real(path: Path) -> str:
    return os.path.realpath(path)


def _written_port(target: str) -> str | None:
    """The port a pass target writes literally (`$host:8000` -> 8000), None when it is a
    variable, left out, or the target is a unix socket."""
    address = re.sub(r"\A[a-z]+://", "", target).split("/", 1)[0]
    found = _PORT.search(address)
    return found["port"] if found and found["port"].isdigit() else None


def _ports(app: AppServer) -> set[str]:
    """The TCP ports the app is known to listen on (empty: none known)."""
    return {
        s.value.rsplit(":", 1)[1]
        for s in app.sockets
        if not s.value.startswith(("unix:", "/")) and ":" in s.value
    }


def same_image_server(
    config: NginxConfig,
    passing: PassTarget,
    apps: Sequence[AppServer],
    images: Sequence[Image],
) -> AppServer | None:
    """The one app server the image holding `config` starts, which `passing` (an address not
    known here) reaches, with a `joined-by-name` note saying it is joined by the image; None
    when the files do not say which image runs the front or which server it starts."""
    found = _only_server(config, passing, apps, images)
    if found is None:
        return None
    holder, started = found
    port = _written_port(passing.target)
    ports = _ports(started)
    if port is not None and ports and port not in ports:
        return None
    note(
        "joined-by-name",
        passing.at,
        f"{passing.at}: joined by image: the pass's address {passing.target!r} is computed where "
        f"nginx runs, not known here; {holder.path.name} copies this config and starts "
        f"only the server at {_start(started)}, the one this front can reach in that container",
    )
    return started


def _start(app: AppServer) -> object:
    return app.launched_by[0] if app.launched_by else app.file


def _only_server(
    config: NginxConfig, passing: PassTarget, apps: Sequence[AppServer], images: Sequence[Image]
) -> tuple[Image, AppServer] | None:
    """(the one image holding `config`, the one app server it starts that `passing`'s protocol
    reaches); None when the files do not say which image or which server."""
    first = (config.files or (config.file,))[0]
    holders = [i for i in images if i.holds(first, whole_context=False) is not None]
    if len(holders) != 1:
        return None
    image = _real(holders[0].path)
    started = [
        a
        for a in apps
        if image in {_real(at.file) for at in a.launched_by} | {_real(a.file)}
        and (passing.protocol != "uwsgi" or a.kind == "uwsgi" or a.uwsgi_protocol)
    ]
    return (holders[0], started[0]) if len(started) == 1 else None


def _loopback_ports(config: NginxConfig) -> set[str]:
    """The ports of the loopback addresses the config passes to, directly or through an
    upstream: one is the one local server; several (a log viewer on :23020, a token server
    on :4406, as meeb/tubesync's image runs beside gunicorn) say the container runs other
    servers too, which of them is the app's is not known."""
    targets = [p.target for p in config.passes if p.target not in config.upstreams]
    targets += [s.value for u in config.upstreams.values() for s in u.servers]
    found = [_LOCAL.match(re.sub(r"\A[a-z]+://", "", t)) for t in targets]
    return {m["port"] for m in found if m is not None}


#: A loopback address and its port, as a pass or an upstream server writes it.
_LOCAL = re.compile(r"(?:127(?:\.[0-9]+){3}|localhost|\[::1\]):(?P<port>[0-9]+)(?:/|\Z)")


def same_image_unbound(
    config: NginxConfig,
    passing: PassTarget,
    target: str,
    apps: Sequence[AppServer],
    images: Sequence[Image],
    including: Sequence[NginxConfig] = (),
) -> AppServer | None:
    """The one app server the image holding `config` starts, when no socket of it is known
    (`uvicorn.run(port=Env.port)`: computed where it runs) and `passing` reaches the loopback
    address `target` of its own container: the only server there to reach (OpenBMB/XAgent's
    nginx.conf `proxy_pass http://127.0.0.1:8090` copied into the image whose start_server.py
    runs uvicorn), with a `joined-by-name` note; None otherwise, or when the config passes to
    more than one loopback port (`_loopback_ports`), itself or with the configs `including`
    it (a site that nginx.conf includes beside others)."""
    found = _only_server(config, passing, apps, images)
    ports = set().union(*(_loopback_ports(c) for c in (config, *including)))
    if found is None or found[1].sockets or len(ports) != 1:
        return None
    holder, started = found
    note(
        "joined-by-name",
        passing.at,
        f"{passing.at}: joined by image: the server's socket is computed where it runs, not "
        f"known here; {holder.path.name} copies this config and starts only the server at "
        f"{_start(started)}, the one this front's {target} can reach in that container",
    )
    return started
