"""What the official nginx image's `*.envsh` files export before it renders its templates.

The image's /docker-entrypoint.sh lists /docker-entrypoint.d/ (`find ... | sort -V`) and, in
that order, sources each executable `*.envsh` (the image's own `15-local-resolvers.envsh`
exports NGINX_LOCAL_RESOLVERS so) and runs each executable `*.sh`, among them
`20-envsubst-on-templates.sh`, which renders /etc/nginx/templates/*.template with the
environment it inherits (nginxinc/docker-nginx, entrypoint/docker-entrypoint.sh). An `.envsh`
an image copies there and that sorts before that script feeds the templates its exports; one
after it, or without its executable bit (the entrypoint says it ignores it), does not.

What is read of one: its top-level `export NAME=value` (or `NAME=value` and `export NAME`),
the value a word or `${ENV:-word}` (`shell_values`); a name also assigned inside a block
(`if`, `case`, a loop) is not known.

An image's own ENTRYPOINT script that renders the templates itself (rommapp/romm's
`export DEV_PORT=${DEV_PORT:-5000}` and then `/docker-entrypoint.d/20-envsubst-on-templates.sh`)
or hands over to the nginx image's entrypoint (`exec /docker-entrypoint.sh "$@"`) exports
to them the same way: its top-level exports on the lines before the one that renders, read
as above (`entrypoint_exports`). A script that does neither feeds them nothing known here.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from servertune.check.model import CheckInputError

if TYPE_CHECKING:
    from servertune.check.dockerfile import Image
from servertune.check.shell_values import own_values

__all__ = ["ENTRYPOINT_DIR", "entrypoint_exports", "envsh_exports"]

#: Where the nginx image's entrypoint finds what it sources and runs before nginx.
ENTRYPOINT_DIR = "/docker-entrypoint.d"
#: The image's script that renders the templates: an `.envsh` sorting after it comes too late.
_RENDERER = "20-envsubst-on-templates.sh"
_OPENS = frozenset({"if", "case", "for", "while", "until", "select"})
_CLOSES = frozenset({"fi", "esac", "done"})


def _version_key(name: str) -> list[int | str]:
    """`sort -V`'s order for names of one folder: digit runs compared as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def envsh_exports(held: Sequence[tuple[str, Path]], env: Mapping[str, str]) -> dict[str, str]:
    """The variables the `.envsh` files of `held` (the image's files under ENTRYPOINT_DIR, as
    (image path, repository file)) export before the templates are rendered, in `env` (the
    image's ENV and the service's environment)."""
    from servertune.check.source import read_text

    exported: dict[str, str] = {}
    last = _version_key(_RENDERER)
    for inside, file in sorted(held, key=lambda h: _version_key(PurePosixPath(h[0]).name)):
        name = PurePosixPath(inside).name
        if not name.endswith(".envsh") or _version_key(name) > last:
            continue
        try:
            if not os.access(file, os.X_OK):
                continue  # the entrypoint ignores it ("executable bit not set")
            text = read_text(file)
        except (OSError, CheckInputError):
            continue
        exported |= _exports(text, {**env, **exported})
    return exported


#: A line that renders the templates: the image's renderer, envsubst, or the nginx image's
#: entrypoint, which runs the renderer (`exec /docker-entrypoint.sh "$@"`).
_RENDERS = re.compile(r"(?:\b20-envsubst-on-templates\.sh|\benvsubst\b|/docker-entrypoint\.sh\b)")


def entrypoint_exports(image: Image, env: Mapping[str, str]) -> dict[str, str]:
    """The variables `image`'s ENTRYPOINT script exports before the line that renders the
    templates, in `env` (the image's ENV and what its `.envsh` files export); none when its
    script is not found here or renders nothing."""
    if not image.entrypoint or image.entrypoint_shell:
        return {}
    first = image.entrypoint[0].text
    if first in ("sh", "bash", "/bin/sh", "/bin/bash") and len(image.entrypoint) > 1:
        first = image.entrypoint[1].text
    try:
        script = image.find(first)
    except (OSError, CheckInputError):
        return {}
    if script is None:
        return {}
    before: list[str] = []
    for line in script.text.splitlines():
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#!") else ""
        if _RENDERS.search(code):
            return _exports("\n".join(before), env)
        before.append(line)
    return {}


def _exports(text: str, env: Mapping[str, str]) -> dict[str, str]:
    """The exported variables a sourced script sets at its top level, known in `env`."""
    physical = text.splitlines()
    lines: list[tuple[int, list[str]]] = []
    assigned: dict[str, int] = {}
    names: set[str] = set()
    depth = 0
    for number, line in enumerate(physical, start=1):
        try:
            words = shlex.split(line, comments=True, posix=True)
        except ValueError:
            continue
        head = words[0] if words else ""
        depth += head in _OPENS
        for word in words[1:] if head in ("export", "readonly", "declare") else words[:1]:
            if head == "export":
                names.add(word.partition("=")[0])
            if "=" in word:
                key = word.partition("=")[0]
                assigned[key] = assigned.get(key, 0) + (2 if depth else 1)
        if head in _CLOSES:
            depth = max(depth - 1, 0)
        if head == "export":
            lines += [(number, ["export", w]) for w in words[1:] if "=" in w]
        else:
            lines.append((number, words))
    once = {name for name, count in assigned.items() if count == 1}
    return {k: v for k, v in own_values(lines, physical, env, once).items() if k in names}
