"""kustomize's `kustomization.yaml`: the files it names, checked to lie inside the tree.

check does not build kustomizations (the manifests it reads are the files given, as written);
a kustomization's `resources`, `components`, `patches` (`path:`), `patchesStrategicMerge`,
`patchesJson6902` (`path:`), `configMapGenerator` / `secretGenerator` (`files`, `envs`) name
other files. None is followed, and one outside the tree check reads is said so, at its line,
so that a base pulled in from `../../` is a known gap, never a read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from servertune.check import resolve
from servertune.check.kubernetes import _documents, _Node, _objects

__all__ = ["check_references", "is_kustomization"]

#: Fields whose items are file or folder names (a URL or a remote base is not a file here).
_LISTS = ("resources", "components", "bases", "patchesStrategicMerge", "crds")
#: Fields whose items are mappings naming a file under `path`.
_PATHS = ("patches", "patchesJson6902")
#: Generators whose items name files under these keys (`name=path` or a plain path).
_GENERATORS = ("configMapGenerator", "secretGenerator")


def is_kustomization(obj: _Node) -> bool:
    """`kind: Kustomization` (or `Component`) of kustomize's own API group."""
    kind, version = obj.get("kind"), obj.get("apiVersion")
    return (kind.text() if kind else None) in ("Kustomization", "Component") and (
        (version.text() if version else None) or ""
    ).startswith("kustomize.config.k8s.io/")


def _named(obj: _Node) -> Iterator[tuple[str, _Node]]:
    """(field, the node naming a file) for each file the kustomization names."""
    for field in _LISTS:
        for item in obj.each(field):
            yield field, item
    for field in _PATHS:
        for item in obj.each(field):
            named = item.get("path")
            if named is not None:
                yield field, named
    for field in _GENERATORS:
        for generator in obj.each(field):
            for key in ("files", "envs"):
                for item in generator.each(key):
                    yield f"{field} {key}", item
        for generator in obj.each(field):
            env = generator.get("env")
            if env is not None:
                yield f"{field} env", env


def check_references(path: Path, text: str) -> None:
    """A coverage note for each file a kustomization in `path` names outside the tree check
    reads; none is read."""
    for obj in filter(is_kustomization, _objects(_documents(path, text))):
        for field, node in _named(obj):
            name = node.text()
            if not name or "://" in name or name.startswith(("github.com/", "git@")):
                continue  # a remote base: not a file of this tree, and never fetched
            local = name.rpartition("=")[2] if field.endswith("files") else name
            resolve.admit(node.path.parent / local, name, node.at, f"kustomization {field}")
