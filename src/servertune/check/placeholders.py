"""Placeholders another tool fills before the program runs: YunoHost's `__PORT__` (its
`ynh_add_config` replaces `__NAME__`), autoconf's `@PORT@`, a Jinja / Helm `{{ port }}`, and a
shell's command substitution `$(...)` or backquotes, which only the running shell computes.

Such a value is unknown here, like a variable set nowhere: it is never handed to a server's own
argument parser, which would refuse it (`'__PORT__' is not a valid integer`) and make the file
an error when the file is only unfinished until its installer runs.
"""

from __future__ import annotations

import re

__all__ = ["placeholder"]

#: `__PORT__` (upper case: `__init__`, `__main__` are Python's names), `@PORT@`, `{{ x }}`,
#: `$(cmd)` and `` `cmd` ``.
_PLACEHOLDER = re.compile(r"__[A-Z][A-Z0-9_]*?__|@[A-Za-z_][A-Za-z0-9_]*@|\{\{.*?\}\}|\$\(|`", re.S)


def placeholder(value: str) -> str | None:
    """The first placeholder `value` holds, None when it holds none."""
    found = _PLACEHOLDER.search(value)
    return None if found is None else found[0]
