"""Request paths grouped into routes: the ids, UUIDs, hashes and tokens in a path collapsed.

`/users/8812/orders/3f2b...e9` and `/users/17/orders/a0c1...77` are one route,
`/users/{id}/orders/{hash}`: per-route numbers are about what the code does, not which row it
read. A segment is collapsed when it is all digits (`{id}`), a UUID (`{uuid}`), 16 or more hex
digits (`{hash}`), or 20 or more characters mixing letters and digits (`{token}`: session keys,
base64 ids). The query string is dropped.
"""

from __future__ import annotations

import re

__all__ = [
    "MAX_ROUTES",
    "OTHER",
    "Routes",
    "not_the_apps",
    "template",
    "template_block",
    "template_lines",
]

#: Routes kept apart; the rest share OTHER. A log of a crawler or a scanner can hold millions of
#: distinct paths, and a per-route table is read for its top rows anyway.
MAX_ROUTES = 500
OTHER = "(other routes)"

_END = r"(?=[/.?\n]|\Z)"
#: Each kind of segment and its pattern, tried in this order (a UUID before its hex runs).
_KINDS = (
    ("{uuid}", r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
    ("{id}", r"\d+"),
    ("{hash}", r"[0-9a-fA-F]{16,}"),
    # The length first: most segments are short, and fail it at their end (measured on the bench
    # log-read paths: 31 ns a path against 109 with the digit and letter look-aheads first).
    (
        "{token}",
        r"(?=[A-Za-z0-9_-]{20})(?=[A-Za-z_-]*\d)(?=[\d_-]*[A-Za-z])[A-Za-z0-9_-]{20,}={0,2}",
    ),
)
#: Each starts at its literal `/`, which the engine finds fast (a look-behind is tried everywhere).
_SUBS = tuple((f"/{name}", re.compile(f"/{pattern}{_END}")) for name, pattern in _KINDS)
#: The same over bytes, for the log reader (which matches bytes: `LogFormat.scanner`).
_BYTE_SUBS = tuple((name.encode(), re.compile(pattern.pattern.encode())) for name, pattern in _SUBS)


#: Routes that are not the app's load: files a front serves (by their extension, or under the
#: prefixes frameworks collect them to) and probes (the paths load balancers and orchestrators
#: poll). A log of mostly these would otherwise size the app for a CDN's or a probe's traffic.
STATIC = re.compile(
    r"\A/(?:static|media|assets|_next/static|favicon\.ico|robots\.txt)(?:/|\Z)"
    r"|\.(?:css|js|mjs|map|png|jpe?g|gif|svg|ico|webp|avif|woff2?|ttf|eot|otf|mp4|webm)\Z",
    re.IGNORECASE,
)
HEALTH = re.compile(
    r"\A/(?:health|healthz|healthcheck|health-check|_health|ready|readyz|readiness|live|livez"
    r"|liveness|ping|status|up|lbcheck|elb-status)/?\Z",
    re.IGNORECASE,
)


def not_the_apps(route: str) -> str | None:
    """'static files' or 'health checks' for a route that is not the app's load, else None."""
    if STATIC.search(route):
        return "static files"
    if HEALTH.match(route):
        return "health checks"
    return None


def template_lines(paths: str) -> str:
    """`template` of each line of `paths` at once (one pass per kind, in C: the reader's way)."""
    for name, pattern in _SUBS:
        paths = pattern.sub(name, paths)
    return paths


#: The digits, as the bytes `in` looks for (each a memchr over a block).
_DIGITS = tuple(b"0123456789")


def template_block(paths: bytes) -> bytes:
    """`template_lines` over bytes (the log reader's columns). A pass is skipped where a memchr
    says it cannot match: the UUID pass for a block without a `-` (the pass costs 38 ns a path
    on the bench log-read log), the token pass for a block left without a digit by the passes
    before it (a token holds one; the pass costs 25-60 ns a path, the check 10 memchr at most)."""
    for name, pattern in _BYTE_SUBS:
        if name == b"/{uuid}" and b"-" not in paths:
            continue
        if name == b"/{token}" and not any(map(paths.__contains__, _DIGITS)):
            continue
        paths = pattern.sub(name, paths)
    return paths


def template(path: str) -> str:
    """The route of a request path (query dropped, ids collapsed)."""
    return template_lines(path.partition("?")[0] or "/")


class Routes:
    """Routes kept apart up to MAX_ROUTES; past it, a new route is counted as OTHER."""

    def __init__(self) -> None:
        self._known: set[str] = set()

    def __call__(self, route: str) -> str:
        if route in self._known:
            return route
        if len(self._known) >= MAX_ROUTES:
            return OTHER
        self._known.add(route)
        return route
