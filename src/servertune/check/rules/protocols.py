"""nginx and the app server speak the same protocol: `uwsgi_pass` sends uWSGI's binary uwsgi
protocol, which a uWSGI `http` router or `http-socket` (HTTP) does not read."""

from __future__ import annotations

from collections.abc import Iterator

from servertune.check.chain import Link, normalise
from servertune.check.model import Finding, Setting, Severity
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule

_UWSGI_NGINX = "https://uwsgi-docs.readthedocs.io/en/latest/Nginx.html"
_UWSGI_HTTP = "https://uwsgi-docs.readthedocs.io/en/latest/HTTP.html"
_NGINX_UWSGI_PASS = "https://nginx.org/en/docs/http/ngx_http_uwsgi_module.html#uwsgi_pass"

#: Hosts that stand for every address of a port, as `chain.normalise` writes them.
_WILDCARDS = frozenset({"0.0.0.0", "[::]", "*", ""})


def _reached(link: Link) -> list[Setting[str]]:
    """The app's sockets the link's pass reaches: the same unix path, or the same port at the
    same address, a wildcard, or (a host name, another container's) any of its addresses."""
    host, port = normalise(link.server.value)
    found = []
    for socket in link.app.sockets:
        own_host, own_port = normalise(socket.value)
        if "unix" in (host, own_host):
            if (host, port) == (own_host, own_port):
                found.append(socket)
        elif own_port == port and (
            own_host in _WILDCARDS or own_host == host or host[:1].isalpha()
        ):
            found.append(socket)
    return found


@check_rule(
    "uwsgi-pass-to-http-socket",
    Severity.warning,
    "nginx's uwsgi_pass reaches a uWSGI socket that speaks HTTP, not the uwsgi protocol",
    f"{_NGINX_UWSGI_PASS} (uwsgi_pass speaks the uwsgi protocol); {_UWSGI_NGINX} (nginx's "
    f"uwsgi_pass goes to a `socket`); {_UWSGI_HTTP} (`http` starts an HTTP router, "
    "`http-socket` speaks HTTP natively); tests/test_check_protocols.py shows a real nginx's "
    "uwsgi_pass to uWSGI's HTTP router failing (502/504) while HTTP gets the app's answer",
    kind="fault",
)
def uwsgi_pass_to_http_socket(rule: Rule, c: Context) -> Iterator[Finding]:
    for link in c.links:
        if link.passing.protocol != "uwsgi" or link.app.kind != "uwsgi":
            continue
        reached = _reached(link)
        if not reached or any(s.value in link.app.uwsgi_protocol for s in reached):
            continue
        socket = reached[0]
        yield rule.finding(
            link.passing.at,
            f"uwsgi_pass {link.passing.target} sends the uwsgi protocol to {socket.value}, "
            f"where uWSGI ({socket.at}) listens with an HTTP socket (`http` / `http-socket`): "
            "it reads the binary uwsgi packet as an HTTP request that never ends or is "
            "malformed, and never answers: every request through this location fails, 502 "
            "(nginx: 'upstream prematurely closed connection') or 504 after "
            f"{link.passing.timeout_name('read')}",
            f"socket = {socket.value}   (uWSGI's own protocol, what uwsgi_pass speaks; at "
            f"{socket.at}), or proxy_pass http://{link.server.value}; in nginx",
            related=(socket.at,),
        )
