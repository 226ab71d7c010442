"""The command a kustomize overlay gives a base workload's container.

check reads a base manifest as written, but where every overlay of the tree that builds the
base patches a container's `command` / `args` (`kustomize/overlays/prod` turning the task
worker's image command into `python manage.py db_worker`: dbca-wa/ibms), the base's command
is what no overlay deploys. Those fields are then read from the overlay's patch, the way
kustomize builds them: a strategic-merge patch of the workload (same kind and name) whose
container of the same name sets them (a list field replaces the base's), or a JSON 6902
`replace` / `add` of `/spec/template/spec/containers/<n>/command` (or `args`). Overlays that
disagree, or one that leaves the command as the base has it, change nothing: the base's
command is then one of those deployed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from servertune.check.kubernetes import _documents, _Node, _objects
from servertune.check.kustomization import is_kustomization
from servertune.check.model import CheckInputError
from servertune.check.source import read_text

__all__ = ["overlay_patched"]

#: The names kustomize looks for in a folder.
_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
#: Folders up from the base searched for overlays, and how deep below that.
_UP = 3
_DOWN = 4
#: The fields of a container that decide what it starts.
_FIELDS = ("command", "args")
_JSON_PATH = re.compile(r"/spec/template/spec/containers/(\d+)/(command|args)")


def overlay_patched(path: Path, obj: _Node, container: _Node) -> _Node:
    """`container` (of workload `obj` in the base manifest `path`) with the `command` and
    `args` every overlay building it gives; itself when none does, or they differ."""
    name = container.get("name")
    if name is None or not name.text():
        return container
    overlays = _overlays(path)
    if not overlays:
        return container
    found = [_patched_fields(o, obj, str(name.text())) for o in overlays]
    first = found[0]
    if first is None or any(f is None or _texts(f) != _texts(first) for f in found[1:]):
        return container
    kept = [
        (k, v)
        for k, v in container.node.value
        if not (isinstance(k, yaml.ScalarNode) and k.value in first)
    ]
    added = [(yaml.ScalarNode("tag:yaml.org,2002:str", k), v.node) for k, v in first.items()]
    node = yaml.MappingNode(
        container.node.tag, kept + added, container.node.start_mark, container.node.end_mark
    )
    return _Node(node, container.path)


def _texts(fields: dict[str, _Node]) -> dict[str, list[str | None]]:
    return {k: [item.text() for item in v.list()] or [v.text()] for k, v in fields.items()}


def _kustomizations(folder: Path) -> list[tuple[Path, _Node]]:
    """The kustomizations under `folder`, a few levels deep, with their object."""
    found: list[tuple[Path, _Node]] = []
    for root, dirs, files in os.walk(folder):
        depth = Path(root).relative_to(folder).parts
        if len(depth) >= _DOWN:
            dirs.clear()
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in _NAMES:
            if name in files:
                found += [(Path(root) / name, o) for o in _read(Path(root) / name)]
    return found


def _read(path: Path) -> list[_Node]:
    if not path.is_file():
        return []
    try:
        objects = list(_objects(_documents(path, read_text(path))))
    except (CheckInputError, OSError):
        return []
    return [o for o in objects if is_kustomization(o) or path.name in _NAMES]


def _resources(file: Path, obj: _Node) -> set[str]:
    return {
        os.path.normpath(file.parent / (item.text() or ""))
        for field in ("resources", "bases")
        for item in obj.each(field)
        if item.text() and "://" not in (item.text() or "")
    }


def _overlays(path: Path) -> list[tuple[Path, _Node]]:
    """The kustomizations that build `path` through the kustomization beside it (its base,
    which lists it as a resource), sorted by path; none when there is no such base."""
    wanted = os.path.normpath(path)
    beside = [(path.parent / n, o) for n in _NAMES for o in _read(path.parent / n)]
    if not any(wanted in _resources(file, obj) for file, obj in beside):
        return []
    base = os.path.normpath(path.parent)
    top = path.parent
    for _ in range(_UP):
        top = top.parent
    return [
        (file, obj)
        for file, obj in _kustomizations(top)
        if base in _resources(file, obj) and os.path.normpath(file.parent) != base
    ]


def _patched_fields(overlay: tuple[Path, _Node], obj: _Node, name: str) -> dict[str, _Node] | None:
    """The `command` / `args` the overlay's patches give the container `name` of `obj`."""
    file, kustomization = overlay
    kind, workload = _kind_name(obj)
    fields: dict[str, _Node] = {}
    entries = [*kustomization.each("patches"), *kustomization.each("patchesStrategicMerge")]
    entries += kustomization.each("patchesJson6902")
    for entry in entries:
        named = entry.get("path") if entry.get("path") is not None else entry
        text = named.text() if named is not None else None
        if not text or "\n" in text:
            continue  # an inline patch: not read
        target = entry.get("target")
        for patch in _read_patch(Path(os.path.normpath(file.parent / text))):
            # kustomize tells the two kinds apart by content: a list of operations is a JSON
            # 6902 patch (of its `target`), a mapping a strategic merge (of its `target` when
            # given, else of the object of its own kind and name).
            if isinstance(patch.node, yaml.SequenceNode):
                if target is not None and _targets(target, (kind, workload)):
                    fields.update(_json6902(patch, obj, name))
            elif (
                _targets(target, (kind, workload))
                if target is not None
                else (_kind_name(patch) == (kind, workload))
            ):
                fields.update(_merged(patch, name))
    return fields or None


def _targets(target: _Node, wanted: tuple[str | None, str | None]) -> bool:
    """A patch's `target` selects the workload: its kind and name where it gives them."""
    kind, name = target.get("kind"), target.get("name")
    return all(
        given is None or given.text() == value
        for given, value in ((kind, wanted[0]), (name, wanted[1]))
    )


def _read_patch(path: Path) -> list[_Node]:
    try:
        return _documents(path, read_text(path))
    except (CheckInputError, OSError):
        return []


def _kind_name(obj: _Node) -> tuple[str | None, str | None]:
    kind, name = obj.get("kind"), obj.get("metadata", "name")
    return (kind.text() if kind else None), (name.text() if name else None)


def _merged(patch: _Node, name: str) -> dict[str, _Node]:
    for container in patch.each("spec", "template", "spec", "containers"):
        named = container.get("name")
        if named is not None and named.text() == name:
            return {f: v for f in _FIELDS if (v := container.get(f)) is not None}
    return {}


def _json6902(patch: _Node, obj: _Node, name: str) -> dict[str, _Node]:
    """A JSON 6902 patch's `replace` / `add` of the command or args of the container `name`."""
    names = [
        (named.text() if (named := c.get("name")) is not None else None)
        for c in obj.each("spec", "template", "spec", "containers")
    ]
    fields: dict[str, _Node] = {}
    for op in patch.list():
        verb, where, value = op.get("op"), op.get("path"), op.get("value")
        found = _JSON_PATH.fullmatch((where.text() if where else None) or "")
        if verb is None or verb.text() not in ("replace", "add") or value is None or not found:
            continue
        index = int(found[1])
        if index < len(names) and names[index] == name:
            fields[found[2]] = value
    return fields
