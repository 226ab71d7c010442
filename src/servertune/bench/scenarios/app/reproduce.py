"""What the report's "Reproduce" section says of each candidate: a line a user can paste.

servertune's layouts are the files `servertune gen` writes: one `gen TARGET ... --out DIR` per
file (the server's, then its fronts': nginx, HAProxy), with every workload value the run used
given as its flag, so the pasted line renders them for the user's own ports and paths. The
copied layouts and the user's own are the command line the run started; the files they ran
with (their nginx.conf, a rendered uwsgi.ini) are no `gen` output, so the report carries them.
"""

from __future__ import annotations

import ipaddress
import shlex
from collections.abc import Sequence

from servertune.bench.harness.deployments import AsgiFront
from servertune.bench.scenarios.app.asgi_layouts import AsgiLayout
from servertune.workload import Workload

__all__ = ["asgi_gen", "gen_line", "workload_flags"]

#: Values the harness sets to run beside other candidates (free loopback ports), not the
#: user's: a pasted line keeps the defaults.
_PLACED = frozenset({"bind_host", "listen_host", "base_port", "listen_port", "lb_listen_port"})


def workload_flags(workload: Workload) -> list[str]:
    """Every field the workload sets to other than its default, as `gen`'s flags (a switch as
    `--name` / `--no-name`, a list comma-separated)."""
    flags: list[str] = []
    for name, info in Workload.model_fields.items():
        value = getattr(workload, name)
        if name in _PLACED or value is None or value == info.get_default(call_default_factory=True):
            continue
        if name == "cpu_fraction" and workload.cpu_ms is not None:
            continue  # derived from cpu_ms: gen derives it again
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            flags.append(flag if value else "--no-" + flag[2:])
        elif isinstance(value, tuple):
            flags += [flag, ",".join(str(v) for v in value)]
        elif isinstance(value, float):  # short where that is exact
            flags += [flag, f"{value:g}" if float(f"{value:g}") == value else repr(value)]
        elif isinstance(value, int | str | ipaddress.IPv4Address | ipaddress.IPv6Address):
            flags += [flag, str(value)]
    return flags


def gen_line(workload: Workload, targets: Sequence[str], out: str) -> str:
    """`servertune gen TARGET <flags> --out OUT`, one per target, joined by `&&`."""
    flags = workload_flags(workload)
    return " && ".join(
        shlex.join(["servertune", "gen", target, *flags, "--out", out]) for target in targets
    )


#: The `gen` targets of the proxies in front of an ASGI layout (per worker, shared socket).
_ASGI_FRONTS: dict[AsgiFront, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "nginx": (("nginx-asgi-per-worker",), ("nginx-asgi",)),
    "haproxy": (("haproxy-asgi-per-worker",), ()),
    "haproxy-nginx": (("nginx-asgi-per-worker", "haproxy"), ("nginx-asgi", "haproxy")),
}


def asgi_gen(layout: AsgiLayout) -> tuple[str, ...]:
    """A servertune ASGI layout's `gen` targets: its server's file, then its fronts'."""
    suffix = "-per-worker" if layout.per_worker else ""
    return (f"{layout.server}{suffix}", *_ASGI_FRONTS[layout.front][not layout.per_worker])
