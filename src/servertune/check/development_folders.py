"""Folders named for a developer's run (`deploy/minikube/`, `k8s-local/`, `.devcontainer/`),
within the tree check reads: what a manifest or image under one is, whatever its own name."""

from __future__ import annotations

import re
from pathlib import Path

from servertune.check import resolve

__all__ = ["DEVELOPMENT_WORDS", "development_folder", "tree_folders"]

#: Words of a name that say a developer's run (`Dockerfile.dev`, `k8s/dev/`, `api-develop`).
DEVELOPMENT_WORDS = frozenset({"dev", "devel", "develop", "development"})


def tree_folders(file: Path) -> tuple[str, ...]:
    """The folders of the tree check reads that hold `file` (none above it, none with no run)."""
    top = resolve.root()
    if top is None:
        return ()
    try:
        return file.resolve().relative_to(top).parent.parts
    except ValueError:
        return ()


#: Folders that hold a developer's cluster or stack (`deploy/minikube/`, `k8s/kind/`,
#: `manifests/local/`, `.devcontainer/`), besides those named with `DEVELOPMENT_WORDS` (`k8s/dev/`).
_DEVELOPMENT_FOLDERS = DEVELOPMENT_WORDS | {"minikube", "kind", "local", "devcontainer"}


def development_folder(file: Path) -> str | None:
    """The folder of the tree check reads, holding `file`, whose name says a developer's run
    (a word of it: `k8s-local`, `minikube`); None when none does, or with no run in progress.
    Folders above the tree (a home folder named `dev`) say nothing of the project."""
    return next(
        (
            f
            for f in tree_folders(file)
            if set(re.split(r"[^a-z0-9]+", f.lower())) & _DEVELOPMENT_FOLDERS
        ),
        None,
    )
