"""kustomize's `kustomization.yaml`: the files it names, checked to lie inside the tree.

check does not build kustomizations (the manifests it reads are the files given, as written,
but for a container command every overlay patches: `kustomize_patches`);
a kustomization's `resources`, `components`, `patches` (`path:`), `patchesStrategicMerge`,
`patchesJson6902` (`path:`), `configMapGenerator` / `secretGenerator` (`files`, `envs`) name
other files. None is followed, and one outside the tree check reads is said so, at its line,
so that a base pulled in from `../../` is a known gap, never a read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from servertune.check import resolve
from servertune.check.kubernetes import _documents, _Node, _objects
from servertune.check.model import CheckInputError
from servertune.check.source import read_text

__all__ = ["check_references", "is_kustomization", "patched_by"]

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


#: The fields whose files kustomize merges into the resources they target: patches, not
#: resources (https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/patches/).
_PATCHES = frozenset({"patches", "patchesStrategicMerge", "patchesJson6902"})
#: The names kustomize looks for in a folder (its `konfig.RecognizedKustomizationFileNames`).
_KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
#: How many folders up from a manifest a kustomization naming it as a patch is looked for.
_LEVELS = 4


def patched_by(path: Path) -> Path | None:
    """The kustomization (in the manifest's folder or one above it) that names `path` under
    `patches`, `patchesStrategicMerge` or `patchesJson6902`: kustomize merges such a file into
    the resource it targets, so its workloads are not workloads of their own (a partial
    Deployment adding an initContainer; seen in PokeAPI/pokeapi's kustomize/ga)."""
    wanted = os.path.normpath(os.path.abspath(path))
    for folder in [path.parent, *path.parent.parents][:_LEVELS]:
        for name in _KUSTOMIZATION_NAMES:
            candidate = folder / name
            if candidate.is_file() and wanted in _patch_files(candidate):
                return candidate
    return None


def _patch_files(path: Path) -> set[str]:
    """The files a kustomization names as patches, by normalized path; none when unreadable."""
    try:
        objects = list(_objects(_documents(path, read_text(path))))
    except CheckInputError:
        return set()
    return {
        os.path.normpath(os.path.abspath(node.path.parent / name))
        for obj in objects  # named `kustomization.yaml`: kustomize lets it omit its kind
        for field, node in _named(obj)
        if field in _PATCHES and (name := node.text() or "") and "\n" not in name
    }
