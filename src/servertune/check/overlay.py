"""Compose overlays: a compose file that completes another (`docker compose -f compose.yaml -f
compose.production.yaml`), read as the project the two make.

Which file is an overlay, on evidence in the files only: `compose.override.yaml` (and its
`docker-compose.` / `.yml` spellings), which Compose merges over the base file beside it by
default; a `compose.<label>.yaml` / `docker-compose.<label>.yml` whose label has the word
`override` (`docker-compose.override-build.yml`) beside a base file of the same spelling that
holds each of its services, to each of which it only adds keys (`build:` to a service that
pulls an `image:`); and a `compose.<label>.yaml` / `docker-compose.<label>.yml` beside a base file of the
same spelling that shares a service with it and cannot run alone: a shared service with neither
`image` nor `build`, or a `build` whose Dockerfile is not where the file alone would look (the
base's `build` says where). A file that runs alone (`docker-compose.prod.yml` with its own
`build` and `command`) is its own project, never merged. A copy to rename
(`docker-compose.override.template.yml`, `.sample`) is read as the override it becomes once
renamed: a stack's front may run only from it (kartoza/django-bims's nginx service).

The merge is Compose's, per service (the Compose Specification, "Merge":
https://docs.docker.com/reference/compose-file/merge/): mappings merge key by key, the
overlay's value winning; `command`, `entrypoint` and `healthcheck.test` are replaced;
`environment` and `labels` merge by name; `volumes` are unique by container path; other
sequences append. Each value keeps the file and line it is written at.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from servertune.check import compose_commands, memo, resolve
from servertune.check.kubernetes import _documents, _Node
from servertune.check.model import CheckInputError, Location, note
from servertune.check.source import read_text

__all__ = [
    "MERGE_DOCS",
    "base_of",
    "merge",
    "merged_services",
    "mounts_project",
    "overridden",
    "production_twin",
    "project_folder",
    "services_in",
]

#: Where Compose documents how it merges files given together.
MERGE_DOCS = "https://docs.docker.com/reference/compose-file/merge/"
#: The base file names Compose looks for, in its order.
_BASES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
_LABELLED = re.compile(r"\A(?P<prefix>(?:docker-)?compose)\.(?P<label>[\w.-]+?)\.ya?ml\Z")
#: Replaced, not appended (the specification's "Shell commands" exception).
_REPLACED = frozenset({"command", "entrypoint"})
#: Merged by the name each entry sets.
_BY_NAME = frozenset({"environment", "labels"})


def base_of(path: Path, services: _Node) -> Path | None:
    """The base compose file `path` overlays (see the module's docstring), None when it is a
    project of its own. The repository's own commands say it first: a script, Makefile or
    workflow running `docker compose -f BASE -f path` (`compose_commands.given_over`)."""
    given = compose_commands.given_over(path)
    if given is not None:
        return given
    found = _base_by_files(path, services)
    first = compose_commands.given_over(found) if found is not None else None
    if first is not None and first.resolve() == path.resolve():
        return None  # the commands give `path` first: it is the base, not the overlay
    return found


def _base_by_files(path: Path, services: _Node) -> Path | None:
    """The base `path` overlays by the files alone (their names and services)."""
    match = _LABELLED.match(path.name)
    if match is None:
        return _other_base(path, services) or _base_above(path, services)
    base = next(
        (
            path.parent / name
            for name in _BASES
            if name.startswith(match["prefix"] + ".") and (path.parent / name).is_file()
        ),
        None,
    )
    if base is None:
        return _other_base(path, services) or _base_above(path, services)
    if base == path or not resolve.inside(base, path):
        return None
    if match["label"] == "override":
        return base
    base_services = services_in(base)
    if base_services is None:
        return None
    if "override" in _name_words(match["label"]) and _only_adds(services, base_services):
        return base
    shared = [(s, base_services.get(n)) for n, s in services.items()]
    if any(_incomplete(s, path, under, base) for s, under in shared if under is not None):
        return base
    return None


def _only_adds(services: _Node, base_services: _Node) -> bool:
    """Every service of the file is one of the base's, and each only adds to it: a key the
    base's service does not set (`build:` to a service that pulls its `image:`), or
    `environment` / `labels`, which merge by name (`docker-compose.override-build.yml`,
    StartupsPoleEmploi/trefle, given as `-f docker-compose.yml -f` it)."""
    pairs = services.items()
    if not pairs:
        return False
    for name, service in pairs:
        under = base_services.get(name)
        if under is None:
            return False
        if any(under.get(key) is not None and key not in _BY_NAME for key, _ in service.items()):
            return False
    return True


#: Words of a compose file's name that say production's stack (`docker-compose.prod.yml`).
_PRODUCTION_WORDS = frozenset({"prod", "production"})


def _name_words(name: str) -> frozenset[str]:
    return frozenset(w for w in re.split(r"[^a-z0-9]+", name.lower()) if w)


def production_twin(path: Path) -> Path | None:
    """The compose file beside `path` named as it is plus a production word, which runs alone
    (`docker-compose.prod.yml` with its own `build`s beside `docker-compose.yml`): production
    has a stack of its own, so `path`'s is the developers'. None when there is none, when
    `path` is itself named for production, or when the twin only completes `path` (an overlay:
    `path`'s services then run in production too)."""
    # Asked for each stop finding of a compose file: its folder is looked through once a run.
    return memo.recall(memo.run_table("production twins"), path, lambda: _production_twin(path))


def _production_twin(path: Path) -> Path | None:
    words = _name_words(path.name)
    if path.suffix not in (".yml", ".yaml") or not words or words & _PRODUCTION_WORDS:
        return None
    try:
        beside = sorted(path.parent.iterdir())
    except OSError:
        return None
    for other in beside:
        twin = _name_words(other.name)
        if other.suffix not in (".yml", ".yaml") or not twin & _PRODUCTION_WORDS:
            continue
        if twin - _PRODUCTION_WORDS != words - {"yml", "yaml"} | {other.suffix[1:]}:
            continue
        services = services_in(other) if other.is_file() else None
        if services is not None and base_of(other, services) is None:
            return other
    return None


#: Compose files of one folder looked at as a base (a folder of compose files holds a few).
_MAX_SIBLINGS = 32


def _other_base(path: Path, services: _Node) -> Path | None:
    """The one compose file of `path`'s folder that `path` only completes, whatever the two
    are named (`compose/base.yml` with `compose/override.dev.yml`, given together with `-f`):
    every service of `path` is one of its, each of those runs from it alone (an `image` or
    a `build`), and some service of `path` cannot run from `path` alone (`_incomplete`).
    None when no file, or more than one, is such a base."""
    folder = path.parent
    try:
        siblings = sorted(
            p for p in folder.iterdir() if p.suffix in (".yml", ".yaml") and p != path
        )[:_MAX_SIBLINGS]
    except OSError:
        return None
    found: list[Path] = []
    for sibling in siblings:
        if not sibling.is_file() or not resolve.inside(sibling, path):
            continue
        theirs = services_in(sibling)
        if theirs is None:
            continue
        under = dict(theirs.items())
        shared = [(s, under.get(n)) for n, s in services.items()]
        if not shared or any(u is None or _incomplete(u, sibling, u, sibling) for _, u in shared):
            continue  # a service it does not run alone: not a base of this file
        if any(_incomplete(s, path, u, sibling) for s, u in shared if u is not None):
            found.append(sibling)
    return found[0] if len(found) == 1 else None


#: Folders above a compose file looked in for the base it completes (`docker/compose.prod.yml`
#: given after the root's `docker-compose.yml`).
_LEVELS_UP = 2


def _base_above(path: Path, services: _Node) -> Path | None:
    """The base compose file (one of Compose's default names) of a folder above `path` that
    `path` completes: they share a service, and a shared service cannot run from `path` alone
    (`_incomplete`: no `image`/`build`, or a `build` found only from the base's folder), as
    `docker compose -f docker-compose.yml -f docker/docker-compose.prod.yml` gives them. The
    nearest such folder's; None when none is (a file that runs alone is its own project)."""
    folder = path.parent
    for _ in range(_LEVELS_UP):
        if folder.parent == folder:
            return None
        folder = folder.parent
        for name in _BASES:
            base = folder / name
            if not base.is_file() or not resolve.inside(base, path):
                continue
            theirs = services_in(base)
            if theirs is None:
                continue
            under = dict(theirs.items())
            shared = [(s, under[n]) for n, s in services.items() if n in under]
            if any(_incomplete(s, path, u, base) for s, u in shared):
                return base
    return None


def _mounts_written_from(path: Path, services: _Node) -> Path | None:
    """The folder above `path` its relative bind mounts are resolved from, when the file is
    an overlay whose base is not here: a mount's host path spells the way from that folder
    down to the file's own (`./components/api/entrypoint` in components/api/compose.yml, given
    with `-f` after a base two levels up), names nothing from the file's folder, and names a
    file or folder from the one above. None when no mount says so. Seen in
    bird-house/birdhouse-deploy."""
    folder = path.parent
    for host in _bind_hosts(services):
        parts = Path(host).parts
        if not host.startswith("./") or ".." in parts or "$" in host:
            continue
        for depth in range(1, min(_MOUNT_LEVELS_UP, len(folder.parts)) + 1):
            above = Path(*folder.parts[:-depth]) if depth < len(folder.parts) else Path()
            if parts[:depth] != folder.parts[-depth:]:
                continue
            if (folder / host).exists() or not (above / host).exists():
                continue
            if resolve.inside(above / host, path):
                return above
    return None


#: How many folders above a compose file its mounts may be written from.
_MOUNT_LEVELS_UP = 4


def _bind_hosts(services: _Node) -> list[str]:
    """The host paths of the services' bind mounts as written (short and long syntax)."""
    found: list[str] = []
    for _, service in services.items():
        volumes = service.get("volumes") if isinstance(service.node, yaml.MappingNode) else None
        for entry in volumes.list() if volumes is not None else ():
            if isinstance(entry.node, yaml.MappingNode):
                source = entry.get("source")
                found.append((source.text() or "") if source is not None else "")
            else:
                found.append((entry.text() or "").split(":", 1)[0])
    return found


def mounts_project(path: Path, services: _Node) -> Path | None:
    """The folder above `path` its bind mounts are written from when no base file here says
    where its project is (`_mounts_written_from`); None otherwise."""
    if base_of(path, services) is not None:
        return None
    return _mounts_written_from(path, services)


def project_folder(path: Path) -> Path:
    """The folder the relative paths of the compose file `path` are resolved from: the folder
    of the base file it overlays, when that is another folder (Compose resolves every file's
    paths from the first file's folder: "Merge", https://docs.docker.com/compose/how-tos/
    multiple-compose-files/merge/), else its own; with no base found, the folder above that
    its bind mounts are written from (`_mounts_written_from`)."""

    def compute() -> Path:
        services = services_in(path)
        base = base_of(path, services) if services is not None else None
        if base is not None:
            return base.parent
        return (_mounts_written_from(path, services) if services else None) or path.parent

    return memo.recall(memo.run_table("compose project folders"), path, compute)


#: What a service runs: an override that sets none of them runs the base's program.
_RUNS_KEYS = ("command", "entrypoint", "build", "image")


def overridden(path: Path) -> frozenset[str]:
    """The services of the base compose file `path` that the override file beside it
    (`docker-compose.override.yml` beside `docker-compose.yml`) redefines without changing
    what runs (no `command`, `entrypoint`, `build` or `image`: mounts, ports, environment):
    `docker compose up` merges the override by default, so each runs as the override's
    reading shows it, and the base's own reading would be the same launch again. One whose
    override runs another program (a development command) is also the base's launch as
    published (`docker compose -f docker-compose.yml`). Seen in mozilla-services/eliot."""
    if path.name not in _BASES:
        return frozenset()
    prefix = path.name.split(".", 1)[0]
    for suffix in ("yaml", "yml"):
        override = path.parent / f"{prefix}.override.{suffix}"
        if override.is_file() and resolve.inside(override, path):
            services = services_in(override)
            if services is not None and base_of(override, services) == path:
                return frozenset(
                    n for n, s in services.items() if not any(s.get(k) for k in _RUNS_KEYS)
                )
    return frozenset()


def services_in(path: Path, text: str | None = None) -> _Node | None:
    """The `services` mapping of the compose file `path` (its `text` when already read), as
    written; None when it does not parse or has none (its own reading says why)."""
    try:
        documents = _documents(path, read_text(path) if text is None else text)
    except (CheckInputError, OSError):
        return None
    services = documents[0].get("services") if documents else None
    if services is None or not isinstance(services.node, yaml.MappingNode):
        return None
    return services


def _incomplete(service: _Node, path: Path, under: _Node, base: Path) -> bool:
    """The service cannot run from this file alone: no `image`, `build` or `extends`, or a `build`
    whose Dockerfile is not where this file's folder puts it but is where the base's `build`
    of the service (`under`) puts it."""
    build = service.get("build")
    if build is None:
        # `extends:` copies another service's settings into this one (the file it names is
        # not an overlay's base: its other services are not this project's).
        return service.get("image") is None and service.get("extends") is None
    base_build = under.get("build")
    return (
        base_build is not None
        and _dockerfile_here(build, path) is False
        and _dockerfile_here(base_build, base) is True
    )


def _dockerfile_here(build: _Node, path: Path) -> bool | None:
    """Whether the Dockerfile `build` names, from the folder of `path`, is a file here; None
    when it is not known here (inline, a git URL, a variable)."""
    if isinstance(build.node, yaml.MappingNode):
        if build.get("dockerfile_inline") is not None:
            return None
        context_node, named = build.get("context"), build.get("dockerfile")
        context = (context_node.text() if context_node is not None else None) or "."
        name = (named.text() if named is not None else None) or "Dockerfile"
    else:
        context, name = build.text() or ".", "Dockerfile"
    if "://" in context or "$" in context + name:
        return None
    return (Path(os.path.normpath(path.parent / context)) / name).is_file()


def merged_services(path: Path, services: _Node, base: Path, base_services: _Node) -> _Node:
    """`services` of the overlay `path`, each merged over the service of its name in
    `base_services` (the base's, interpolated as its own reading does; the base's other
    services are the base file's own reading); a note says the file was read so."""
    pairs: list[tuple[yaml.Node, yaml.Node]] = []
    by_name = dict(base_services.items())
    assert isinstance(services.node, yaml.MappingNode)
    for key, value in services.node.value:
        under = by_name.get(str(key.value))
        pairs.append((key, _merge(under.node, value) if under is not None else value))
    given = compose_commands.where_given(path)
    where = "beside it" if base.parent == path.parent else f"in {base.parent}"
    at = "" if given is None else f" at {given}"
    note(
        "overlay",
        Location(path),
        f"{path}: read merged over {base.name} {where}, as `docker compose -f {base.name} "
        f"-f {path.name}`{at} reads them (the overlay's values win; {MERGE_DOCS})",
    )
    merged = yaml.MappingNode(
        services.node.tag, pairs, services.node.start_mark, services.node.end_mark
    )
    return _Node(merged, path)


def merge(base: yaml.Node, over: yaml.Node) -> yaml.Node:
    """The service `over` merged over the service `base` as Compose merges them (also what
    `extends` does: `check.extends`)."""
    return _merge(base, over)


def _merge(base: yaml.Node, over: yaml.Node, key: str = "") -> yaml.Node:
    """`over` merged over `base` as Compose merges one service's attribute (`!reset` and
    `!override` replace it whole: the overlay's value, or none, is what runs)."""
    if key in _REPLACED or key == "test" or getattr(over, "merge_tag", None) is not None:
        return over
    if key in _BY_NAME:
        return _by_name(base, over)
    if isinstance(base, yaml.MappingNode) and isinstance(over, yaml.MappingNode):
        overs = {str(k.value): (k, v) for k, v in over.value}
        pairs = [
            (k, _merge(v, overs[str(k.value)][1], str(k.value)))
            if str(k.value) in overs
            else (k, v)
            for k, v in base.value
        ]
        names = {str(k.value) for k, _ in base.value}
        pairs += [(k, v) for k, v in over.value if str(k.value) not in names]
        return yaml.MappingNode(over.tag, pairs, over.start_mark, over.end_mark)
    if key == "env_file" or (
        isinstance(base, yaml.SequenceNode) and isinstance(over, yaml.SequenceNode)
    ):
        items = _items(base) + _items(over)
        if key == "volumes":
            items = _unique_targets(items)
        return yaml.SequenceNode("tag:yaml.org,2002:seq", items, over.start_mark, over.end_mark)
    return over


def _items(node: yaml.Node) -> list[yaml.Node]:
    """A sequence's items, a scalar as the one item (`env_file: .env`)."""
    return list(node.value) if isinstance(node, yaml.SequenceNode) else [node]


def _unique_targets(items: list[yaml.Node]) -> list[yaml.Node]:
    """Volumes unique by container path, the later (the overlay's) winning."""
    kept: dict[str, yaml.Node] = {}
    for item in items:
        if isinstance(item, yaml.ScalarNode):
            parts = str(item.value).split(":")
            target = parts[1] if len(parts) > 1 else parts[0]
        else:
            found = _Node(item, Path()).get("target")
            target = (found.text() if found is not None else None) or str(id(item))
        kept.pop(target, None)
        kept[target] = item
    return list(kept.values())


def _by_name(base: yaml.Node, over: yaml.Node) -> yaml.Node:
    """`environment` / `labels` merged by name, the overlay's value winning; the result in the
    overlay's form (a mapping, or a `NAME=value` list)."""
    entries: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for node in (base, over):
        if isinstance(node, yaml.MappingNode):
            pairs = [(str(k.value), (k, v)) for k, v in node.value]
        elif isinstance(node, yaml.SequenceNode):
            pairs = [
                (str(item.value).partition("=")[0], _as_pair(item))
                for item in node.value
                if isinstance(item, yaml.ScalarNode)
            ]
        else:
            pairs = []
        for name, pair in pairs:
            entries.pop(name, None)  # the later entry, in the later place
            entries[name] = pair
    if isinstance(over, yaml.MappingNode):
        return yaml.MappingNode(over.tag, list(entries.values()), over.start_mark, over.end_mark)
    items = [_as_item(k, v) for k, v in entries.values()]
    return yaml.SequenceNode("tag:yaml.org,2002:seq", items, over.start_mark, over.end_mark)


def _as_pair(item: yaml.ScalarNode) -> tuple[yaml.Node, yaml.Node]:
    """A `NAME=value` list item as a mapping entry at the item's line (a bare `NAME`: null)."""
    name, sep, value = str(item.value).partition("=")
    tag = "tag:yaml.org,2002:str" if sep else "tag:yaml.org,2002:null"
    return (
        yaml.ScalarNode("tag:yaml.org,2002:str", name, item.start_mark, item.end_mark),
        yaml.ScalarNode(tag, value, item.start_mark, item.end_mark),
    )


def _as_item(key: yaml.Node, value: yaml.Node) -> yaml.Node:
    """A mapping entry as a `NAME=value` list item, at the value's line."""
    if isinstance(value, yaml.ScalarNode) and value.tag != "tag:yaml.org,2002:null":
        text = f"{key.value}={value.value}"
    else:
        text = str(key.value)
    return yaml.ScalarNode("tag:yaml.org,2002:str", text, value.start_mark, value.end_mark)
