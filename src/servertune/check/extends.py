"""Compose `extends`: a service that takes another service's attributes (of its own file, or of
`extends: {file: common.yml}`) and overrides some of them, as Compose reads it
(https://docs.docker.com/compose/how-tos/multiple-compose-files/extends/).

The extended service's attributes are merged under the extending service's, with the rules of a
merge of files (`overlay._merge`: mappings key by key, `command` and `entrypoint` replaced,
`environment` merged by name): `web: {extends: {file: common.yml, service: app}, command:
runserver}` runs app's image with `runserver`. A chain of `extends` is followed to its end; a
cycle, a missing service, or a file outside the tree check reads leaves the service as written
(a coverage note says why). An extended file in another folder is followed only when its
service names no path (a `build` context, an `env_file`, a bind mount), since Compose resolves
those from the extended file's folder and this reader from the extending file's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import yaml

from servertune.check import overlay, resolve
from servertune.check.kubernetes import _Node
from servertune.check.model import Location, note
from servertune.check.source import read_text

__all__ = ["EXTENDS_DOCS", "extended_services", "settled_services"]

#: Where Compose documents `extends`.
EXTENDS_DOCS = "https://docs.docker.com/compose/how-tos/multiple-compose-files/extends/"
#: A service's attributes that name a path, resolved from the folder of the file it is in.
_PATHS = ("build", "env_file", "volumes")
#: The longest chain followed (Compose has none; a longer one is a generated file's).
_MAX_DEPTH = 16

#: `services_in` of another compose file, its values interpolated as its own reading does.
Loader = Callable[[Path], "_Node | None"]


def extended_services(
    path: Path, services: _Node, load: Loader, lines: dict[Path, list[str]]
) -> _Node:
    """`services` of the compose file `path`, each service that `extends` another merged over
    it (see the module's docstring); the others as they are. `load` reads another file's
    services; the lines of each file read are added to `lines`."""
    assert isinstance(services.node, yaml.MappingNode)
    loaded: dict[Path, _Node | None] = {}

    def load_once(other: Path) -> _Node | None:
        # Several services extend one file's services: it is read and interpolated once.
        if other not in loaded:
            loaded[other] = load(other)
        return loaded[other]

    pairs: list[tuple[yaml.Node, yaml.Node]] = []
    changed = False
    for key, value in services.node.value:
        merged = _resolved(_Node(value, path), path, services, load_once, lines, 0, frozenset())
        merged = value if merged is None else merged
        changed = changed or merged is not value
        pairs.append((key, merged))
    if not changed:
        return services
    node = yaml.MappingNode(
        services.node.tag, pairs, services.node.start_mark, services.node.end_mark
    )
    return _Node(node, services.path)


def settled_services(
    path: Path, services: _Node, load: Loader, lines: dict[Path, list[str]]
) -> _Node:
    """`services` of the base compose file `path` as an overlay merges over them: each that
    `extends` another merged over it, and no `extends` key left. Compose applies each file's
    `extends` before it merges the files given together (compose-go's loader), so a base's
    `production: {extends: base-production}` is whole under the overlay's `production`, and
    its `extends` names a service of the base, not of the overlay (seen in translate/pootle,
    docker/example/docker-compose.override.yml over docker-compose.yml). One that cannot be
    followed is left as written (the base's own reading says why)."""
    extended = extended_services(path, services, load, lines)
    assert isinstance(extended.node, yaml.MappingNode)
    pairs = [(key, _without_extends(value)) for key, value in extended.node.value]
    node = yaml.MappingNode(
        extended.node.tag, pairs, extended.node.start_mark, extended.node.end_mark
    )
    return _Node(node, extended.path)


def _without_extends(service: yaml.Node) -> yaml.Node:
    if not isinstance(service, yaml.MappingNode):
        return service
    pairs = [(k, v) for k, v in service.value if str(k.value) != "extends"]
    return yaml.MappingNode(service.tag, pairs, service.start_mark, service.end_mark)


def _resolved(
    service: _Node,
    path: Path,
    services: _Node,
    load: Loader,
    lines: dict[Path, list[str]],
    depth: int,
    seen: frozenset[tuple[Path, str]],
) -> yaml.Node | None:
    """The node of `service` (of the file `path`, among its `services`) with what it extends
    merged under it; the node as written when it extends nothing; None when a link of its
    chain cannot be followed (Compose refuses such a file: nothing of the chain is taken)."""
    extends = service.get("extends") if isinstance(service.node, yaml.MappingNode) else None
    if extends is None:
        return service.node
    named: _Node | None = extends
    file_node: _Node | None = None
    if not isinstance(extends.node, yaml.ScalarNode):  # else `extends: app` (the short form)
        named, file_node = extends.get("service"), extends.get("file")
    name = named.text() if named is not None else None
    if not name:
        return service.node
    where = path
    others = services
    if file_node is not None and file_node.text():
        target = Path(os.path.normpath(path.parent / (file_node.text() or "")))
        if not resolve.inside(target, path):
            return None  # `_outside_references` said so at its line
        loaded = load(target) if target.is_file() else None
        if loaded is None:
            _not_followed(extends.at, f"extends file {file_node.text()!r} is not here")
            return None
        where, others = target, loaded
        if target not in lines:
            lines[target] = read_text(target).splitlines()
    base = others.get(name)
    if base is None or (where, name) in seen or depth >= _MAX_DEPTH:
        why = "is extended in a cycle" if base is not None else "is not in it"
        _not_followed(extends.at, f"service {name!r} of {where.name} {why}")
        return None
    if where.parent != path.parent and any(base.get(k) is not None for k in _PATHS):
        _not_followed(
            extends.at,
            f"service {name!r} of {where.name} names paths from another folder "
            "(its build, env_file or volumes)",
        )
        return None
    under = _resolved(base, where, others, load, lines, depth + 1, seen | {(where, name)})
    return None if under is None else overlay.merge(under, service.node)


def _not_followed(at: Location, why: str) -> None:
    note("not-followed", at, f"not followed: extends: {why} ({EXTENDS_DOCS})")
