"""Placeholders another tool fills before the program runs: YunoHost's `__PORT__` (its
`ynh_add_config` replaces `__NAME__`), autoconf's `@PORT@`, a Jinja / Helm `{{ port }}`, and a
shell's command substitution `$(...)` or backquotes, which only the running shell computes.

Such a value is unknown here, like a variable set nowhere: it is never handed to a server's own
argument parser, which would refuse it (`'__PORT__' is not a valid integer`) and make the file
an error when the file is only unfinished until its installer runs.
"""

from __future__ import annotations

import re

__all__ = ["placeholder", "placeholder_port"]

#: `__PORT__` (upper case: `__init__`, `__main__` are Python's names), `@PORT@`, `{{ x }}`,
#: `$(cmd)` and `` `cmd` ``.
_PLACEHOLDER = re.compile(r"__[A-Z][A-Z0-9_]*?__|@[A-Za-z_][A-Za-z0-9_]*@|\{\{.*?\}\}|\$\(|`", re.S)


def placeholder(value: str) -> str | None:
    """The first placeholder `value` holds, None when it holds none."""
    found = _PLACEHOLDER.search(value)
    return None if found is None else found[0]


#: The options whose value is a port alone, and those whose value is `host:port`.
_PORT_OPTIONS = frozenset({"--port"})
_BIND_OPTIONS = frozenset({"--bind", "-b", "--http", "--http-socket", "--socket"})
#: The hosts a bind answers a loopback connection on: every interface, or the loopback itself.
_LOCAL_HOSTS = frozenset({"", "0.0.0.0", "::", "[::]", "localhost", "::1", "[::1]"})
#: A variable's assignment before its value (`GRANIAN_PORT=__PORT__`, as a left-out
#: environment option is written).
_ASSIGNED = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*=")


def placeholder_port(option: str) -> str | None:
    """The placeholder token that is the whole port of a bind left out for it (`--port
    __PORT__`, `--port GRANIAN_PORT=__PORT__`, `--bind 127.0.0.1:__PORT__`), when the host it
    binds (if written) answers on the machine's loopback; None otherwise. Only an installer's
    token (`__PORT__`, `@PORT@`): a command's output may be any port."""
    flag, _, value = option.partition(" ") if " " in option else option.partition("=")
    value = _ASSIGNED.sub("", value.strip())
    if flag in _PORT_OPTIONS:
        host, port = "", value
    elif flag in _BIND_OPTIONS:
        host, _, port = value.rpartition(":")
    else:
        return None
    local = host in _LOCAL_HOSTS or re.fullmatch(r"127(\.[0-9]+){3}", host) is not None
    token = placeholder(port)
    return port if local and token == port and token[0] in "_@" else None
