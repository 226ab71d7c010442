"""Compose's v1 file format: services at the top level, with no `services:` key.

Compose v2 reads only the Compose Specification, whose services sit under `services:`
(https://docs.docker.com/compose/intro/history/: the v1 file format is no longer supported),
so a v1 file in a repository (money-to-prisoners-api's local-development compose) is named
as not read, not taken for a compose file that starts nothing, nor an unreadable input.
"""

from __future__ import annotations

import re

__all__ = ["COMPOSE_V1", "legacy_v1"]

COMPOSE_V1 = "compose file format v1 (no services: key), which Compose v2 no longer reads"

#: The Compose Specification's own top-level keys besides `services`.
_OWN_KEYS = frozenset({"version", "name", "include", "volumes", "networks", "configs", "secrets"})

#: A top-level key whose indented block sets `image:` or `build:`: a service, v1's way. Each
#: line of the block matches one way only (empty, or a blank or tab then the rest of the line):
#: two ways per line (`[ \t]+.*` or `[ \t]*` split anywhere in the indent) made a block with no
#: `image:` backtrack through every split of every line, exponential in its lines (a
#: process-compose file's readiness probes hung a folder walk for minutes, evroon/bracket).
_V1_SERVICE = re.compile(
    r"^([A-Za-z_][\w.-]*):[ \t]*\n(?:(?:[ \t][^\n]*)?\n)*?[ \t]+(?:image|build):", re.M
)


def legacy_v1(text: str) -> bool:
    """A compose file of the v1 format: no `services:` key, and a top-level key that is not
    one of compose's own (nor an `x-` extension) whose block says how to get a container
    (`image:` or `build:`)."""
    keys = set(re.findall(r"^([A-Za-z_][\w.-]*):", text, re.M))
    if "services" in keys:
        return False
    return any(
        m[1] not in _OWN_KEYS and not m[1].startswith("x-") for m in _V1_SERVICE.finditer(text)
    )
