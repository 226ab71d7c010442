"""Example copies of a deployment file (`docker-compose.override.yml.example`,
`kube/configmap.yaml.example`): a file kept for a person to copy to the name without the
suffix and edit. It is read as the kind its name without the suffix says (a fault in it is
the user's to see), but it is not deployed: nothing it starts is a launch, no front in it
fronts anything, so it is named once as an example and linked into nothing.

(Env files' examples, `.env.example`, are the env reader's: read as env files, loaded by
nothing. Templates, `.template` / `.tpl`, are rendered into the deployment and read as it.)

A server config named as an example (`config/example.ini`, `gunicorn.example.conf.py`,
`example-site.conf`) that no launch here starts is one to copy and edit, like those copies: a
fault in it is said as `info` at most, never a warning or an error a maintainer would be sent
(Kinto/kinto-dist keeps its `config/example.ini` beside the `/etc/kinto.ini` it deploys):
`servertune.check.unstarted` grades it.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["EXAMPLE_KINDS", "EXAMPLE_SUFFIXES", "example_of", "named_as_example"]

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


#: Words of a file's name that say it is an example to copy (`example.ini`, `x.sample.conf`).
_EXAMPLE_WORDS = frozenset({"example", "examples", "sample"})


def named_as_example(path: Path) -> bool:
    """`path`'s name has a word that says it is an example to copy (`example.ini`,
    `x.sample.conf`)."""
    return bool(set(re.split(r"[^a-z0-9]+", path.name.lower())) & _EXAMPLE_WORDS)
