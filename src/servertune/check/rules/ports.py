"""A published port or a front that reaches no port the server listens on: compose's `ports:`
publishes container ports, and a request to one where nothing in the container listens is
refused (Docker's proxy accepts, then resets it), whatever the server's own settings."""

from __future__ import annotations

from collections.abc import Iterator

from servertune.check.bound_ports import alone, known_ports
from servertune.check.chain import loopback, normalise
from servertune.check.model import AppServer, Container, Finding, Severity
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule

_COMPOSE_PORTS = "https://docs.docker.com/reference/compose-file/services/#ports"
_DOCKER_PUBLISH = "https://docs.docker.com/engine/network/port-publishing/"
_PASS_BACKING = (
    "https://nginx.org/en/docs/http/ngx_http_proxy_module.html#proxy_pass (an address without "
    "a port is at the scheme's default, 80 for http); "
    "https://docs.docker.com/compose/how-tos/networking/ (a service's name reaches its "
    "container, at the port the client gives)"
)


@check_rule(
    "front-port-mismatch",
    Severity.warning,
    "a published port reaches no port the server in the container listens on",
    f"{_COMPOSE_PORTS} (`ports:` maps a host port to a container port, its `target`); "
    f"{_DOCKER_PUBLISH} (the published port forwards to that port of the container: with "
    "nothing listening there, the connection is refused or reset)",
    kind="fault",
)
def front_port_mismatch(rule: Rule, c: Context) -> Iterator[Finding]:
    groups: dict[tuple[str, str], tuple[Container, list[AppServer]]] = {}
    for app in c.apps:
        box = app.container
        if box is not None and box.platform == "compose" and box.ports:
            groups.setdefault((box.name, str(box.at)), (box, []))[1].append(app)
    inside = {id(link.app) for link in c.links if _local_pass(link.server.value)}
    for box, apps in groups.values():
        binds = [known_ports(a) for a in apps]
        if any(b is None for b in binds) or any(id(a) in inside or not alone(a) for a in apps):
            continue
        bound = set().union(*(b for b in binds if b is not None))
        if any(p.value in bound for p in box.ports or ()) or box.development is not None:
            continue
        yield _finding(rule, box, apps[0])
    for missed in c.ports_missed:
        yield rule.finding(missed.at, missed.message, missed.fix, backing=_PASS_BACKING)


def _local_pass(target: str) -> bool:
    """A pass to the front's own machine (a loopback port, a unix socket): a front in the
    container, which may be what the published port reaches."""
    host, _ = normalise(target)
    return host == "unix" or loopback(host)


def _finding(rule: Rule, box: Container, app: AppServer) -> Finding:
    published = ", ".join(sorted({str(p.value) for p in box.ports or ()}, key=int))
    socket = app.sockets[0]
    port = normalise(socket.value)[1]
    first = (box.ports or ())[0]
    return rule.finding(
        first.at,
        f"compose service {box.name} publishes container port {published}, but {app.kind} in "
        f"it listens on {', '.join(s.value for s in app.sockets)} ({socket.at}) and nothing "
        "else read runs in that container: a request to the published port finds no listener "
        "there (Docker's proxy resets it, the client sees 'connection reset' or 'empty reply')",
        f"publish container port {port}, the one {app.kind} binds (`ports:` entry at "
        f"{first.at}: the same host port, `:{port}` after it), or bind {app.kind} to "
        f":{first.value} at {socket.at}",
        related=(socket.at,),
    )
