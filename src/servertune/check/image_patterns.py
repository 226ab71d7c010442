"""Image names written with variables, matched against a name written out in full.

A compose file builds and tags `eu.gcr.io/${PROJECT_NAME}/rsr-backend`; a Kubernetes manifest
runs `eu.gcr.io/akvo-lumen/rsr-backend`. The deployment's variables complete the first name,
so it may be the second: each variable (`$NAME`, `${NAME}`, `${NAME:-default}`) stands for any
text within one path part (its default is one such text). Only a name whose last part, the
image's own name, is written out on both sides is matched: `${IMAGE}` alone names anything.
"""

from __future__ import annotations

import re

__all__ = ["matches"]

#: A variable as a compose file or a shell writes it, with a default when it gives one.
_VARIABLE = re.compile(r"\$\{[A-Za-z_]\w*(?::?-(?P<default>[^}$]*))?[^}]*\}|\$[A-Za-z_]\w*")


def matches(written: str, name: str) -> bool:
    """`written` (an image path with variables, no tag) may be `name` (an image path with
    none): each variable matches any text within one path part, and the last path parts are
    literal on both sides. A registry host (written, or a variable in its place) is compared
    when both name one, else left out of both."""
    if "$" in name or "$" in written.rpartition("/")[2]:
        return False
    names = {name, _without_host(name)}
    forms = {written, _without_host(written)}
    patterns = [re.compile(_pattern(form), re.I) for form in forms]
    return any(p.fullmatch(n) for p in patterns for n in names)


def _without_host(path: str) -> str:
    """`path` without its first part when that is a registry host (`eu.gcr.io`,
    `localhost:5000`) or a variable alone (`${REGISTRY}`), else as it is."""
    first, _, rest = path.partition("/")
    host = "." in first or ":" in first or first == "localhost"
    variable = _VARIABLE.fullmatch(first) is not None
    return rest if rest and (host or variable) else path


def _pattern(written: str) -> str:
    """The regular expression `written` stands for."""
    out: list[str] = []
    index = 0
    for variable in _VARIABLE.finditer(written):
        out.append(re.escape(written[index : variable.start()]))
        default = variable["default"]
        any_text = r"[^/]*"
        out.append(f"(?:{re.escape(default)}|{any_text})" if default else any_text)
        index = variable.end()
    out.append(re.escape(written[index:]))
    return "".join(out)
