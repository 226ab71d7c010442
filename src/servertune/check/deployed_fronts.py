"""Which of a folder's nginx configs the deployment runs: when the files put one of them into a
proxy's config path (a Dockerfile's COPY, a compose service's mount) and a sibling beside it
(`default-maintenance.conf` beside `default.conf`) is put nowhere, both passing to the same
server, the sibling is a variant kept for another occasion (a maintenance window, a test
site) and not that server's front. Configs in other folders, or siblings nothing deploys
either, are joined as before: nothing says which one runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from servertune.check.chain import Link, Stacks
from servertune.check.model import note
from servertune.check.namespaces import placed

__all__ = ["deployed_siblings_first"]


def _first(link: Link) -> Path:
    return (link.nginx.files or (link.nginx.file,))[0]


def deployed_siblings_first(links: Sequence[Link], stacks: Stacks) -> list[Link]:
    """`links` without those of a front no file deploys whose folder holds a deployed front
    joined to the same server (akvo/akvo-rsr: Dockerfile-nginx copies nginx/default.conf,
    nothing copies nginx/default-maintenance.conf), with a coverage note for each left out."""
    deployed: dict[int, dict[Path, Path]] = {}
    for k in links:
        if placed(_first(k), stacks):
            deployed.setdefault(id(k.app), {}).setdefault(_first(k).parent, _first(k))
    kept: list[Link] = []
    said: set[Path] = set()
    for k in links:
        sibling = deployed.get(id(k.app), {}).get(_first(k).parent)
        if sibling is None or placed(_first(k), stacks):
            kept.append(k)
        elif _first(k) not in said:
            said.add(_first(k))
            note(
                "not-followed",
                k.passing.at,
                f"{k.passing.at}: not joined: {_first(k).name} is a variant kept beside "
                f"{sibling.name}, which the files deploy (an image copies it or a service "
                "mounts it) in front of the same server; nothing deploys this one",
            )
    return kept
