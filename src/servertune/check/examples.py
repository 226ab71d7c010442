"""Example copies of a deployment file (`docker-compose.override.yml.example`,
`kube/configmap.yaml.example`): a file kept for a person to copy to the name without the
suffix and edit. It is read as the kind its name without the suffix says (a fault in it is
the user's to see), but it is not deployed: nothing it starts is a launch, no front in it
fronts anything, so it is named once as an example and linked into nothing.

(Env files' examples, `.env.example`, are the env reader's: read as env files, loaded by
nothing. Templates, `.template` / `.tpl`, are rendered into the deployment and read as it.)
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["EXAMPLE_KINDS", "EXAMPLE_SUFFIXES", "example_of"]

#: Suffixes of a copy to fill in, never deployed under its own name.
EXAMPLE_SUFFIXES = (".example", ".sample")

#: The YAML kinds read from an example copy under the name it is copied to.
EXAMPLE_KINDS = frozenset({"compose", "kubernetes"})


def example_of(path: Path) -> Path | None:
    """The name an example copy is copied to (`x.yml.example` -> `x.yml`), for a YAML file;
    None for any other file."""
    if path.suffix.lower() not in EXAMPLE_SUFFIXES or not path.stem:
        return None
    target = path.with_name(path.stem)
    return target if target.suffix.lower() in (".yml", ".yaml") else None
