"""Go's duration syntax (`time.ParseDuration`), which Caddy and Traefik both read their times in.

`1m30s`, `250ms`, `2h`, `1.5s`; a lone `0` is zero. Caddy adds `d` (24 h) on top
(https://caddyserver.com/docs/conventions#durations); Traefik takes bare digits as seconds
(https://doc.traefik.io/traefik/routing/entrypoints/#respondingtimeouts: "If no units are
provided, the value is parsed assuming seconds").
"""

from __future__ import annotations

import re

__all__ = ["parse_go_duration"]

_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h|d)")
_UNITS = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
    "h": 3600.0, "d": 86400.0,
}  # fmt: skip


def parse_go_duration(text: str, *, days: bool = False, bare_seconds: bool = False) -> float | None:
    """`text` in seconds, or None when it is not a duration. `days`: Caddy's `d` unit;
    `bare_seconds`: Traefik's digits without a unit."""
    text = text.strip()
    if text == "0" or (bare_seconds and text.isdigit()):
        return float(text)
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("+-")
    if not body:
        return None
    total, position = 0.0, 0
    for match in _PART.finditer(body):
        if match.start() != position or (match.group(2) == "d" and not days):
            return None
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if position != len(body):
        return None
    return sign * total
