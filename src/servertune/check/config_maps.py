"""Files a pod's containers read from ConfigMaps: the ConfigMaps of every manifest of the run
(kustomize bases keep a ConfigMap in a file of its own, `cm-*.yaml`, beside the Deployment
that mounts it), and the nginx config a container mounts from one at nginx's own paths
(`/etc/nginx/nginx.conf` by `subPath`, or a ConfigMap mounted as `/etc/nginx/conf.d`), read
as a front like a file of the repository, each setting at its line in the ConfigMap."""

from __future__ import annotations

import contextvars
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from servertune.check.model import CheckInputError, Location, NginxConfig, note

if TYPE_CHECKING:
    from servertune.check.commands import ConfigFile
    from servertune.check.kubernetes import _Node

__all__ = ["config_maps_of_run", "mounted_nginx"]

#: Where the official nginx images read their config: the main file, and the folders its
#: `include`s name (Debian's packages: sites-enabled).
NGINX_MAIN = PurePosixPath("/etc/nginx/nginx.conf")
NGINX_FOLDERS = (PurePosixPath("/etc/nginx/conf.d"), PurePosixPath("/etc/nginx/sites-enabled"))
_CONFIG_MAP = re.compile(r"(?m)^kind:\s*['\"]?ConfigMap\b")

#: ConfigMap name -> its `data` node, over every manifest of the run; a name two files
#: define differently is left out (which one a cluster holds is not known here).
_MAPS: contextvars.ContextVar[dict[str, _Node] | None] = contextvars.ContextVar(
    "servertune_check_config_maps", default=None
)


@contextmanager
def config_maps_of_run(paths: Sequence[Path]) -> Iterator[None]:
    """While the block runs, a container's ConfigMap volume is found in any manifest of
    `paths`, not only in the file that mounts it."""
    token = _MAPS.set(_read(paths))
    try:
        yield
    finally:
        _MAPS.reset(token)


def _read(paths: Sequence[Path]) -> dict[str, _Node]:
    try:
        from servertune.check.kubernetes import _config_maps, _documents, _objects
    except ModuleNotFoundError:  # no YAML parser: manifests are refused, with the extra
        return {}
    from servertune.check.source import read_text

    found: dict[str, _Node] = {}
    twice: set[str] = set()
    for path in paths:
        if path.suffix not in (".yaml", ".yml"):
            continue
        try:
            text = read_text(path)
            if not _CONFIG_MAP.search(text):
                continue
            maps = _config_maps(list(_objects(_documents(path, text))))
        except (CheckInputError, OSError, ValueError):
            continue  # the file's own reading says why
        for name, data in maps.items():
            if name in found and found[name].at != data.at:
                twice.add(name)
            found.setdefault(name, data)
    return {name: data for name, data in found.items() if name not in twice}


def _mounted(pod: _Node, container: _Node, maps: dict[str, _Node]) -> dict[str, _Node]:
    """Container path -> the ConfigMap value held there, for each ConfigMap volume the
    container mounts: one key by `subPath`, else every key (or the volume's `items`) in the
    mount's folder. The file's own ConfigMaps first, then the run's."""
    run = _MAPS.get() or {}
    volumes: dict[str, tuple[_Node, _Node | None]] = {}
    for volume in pod.each("volumes"):
        name, ref = volume.get("name"), volume.get("configMap", "name")
        data = (maps.get(ref.text() or "") or run.get(ref.text() or "")) if ref else None
        if name is not None and data is not None:
            volumes[name.text() or ""] = (data, volume.get("configMap", "items"))
    held: dict[str, _Node] = {}
    for mount in container.each("volumeMounts"):
        name, where = mount.get("name"), mount.get("mountPath")
        if name is None or where is None or (name.text() or "") not in volumes:
            continue
        data, items = volumes[name.text() or ""]
        inside = PurePosixPath(where.text() or "/")
        sub = mount.get("subPath")
        if sub is not None:
            value = data.get(sub.text() or "")
            if value is not None:
                held[str(inside)] = value
            continue
        paths = {k: k for k, _ in data.items()}
        if items is not None:
            paths = {
                (i.get("key") and i.get("key").text()) or "": (  # type: ignore[union-attr]
                    i.get("path") and i.get("path").text()  # type: ignore[union-attr]
                )
                or ""
                for i in items.list()
            }
        for key, relative in paths.items():
            value = data.get(key)
            if value is not None and relative:
                held[str(inside / relative)] = value
    return held


def mounted_nginx(path: Path, text: str) -> tuple[NginxConfig, ...]:
    """The nginx configs the containers of the manifests in `path` mount from ConfigMaps at
    nginx's paths: the main file, or (without one) each `*.conf` of its include folders, each
    read with the other files mounted there as what its `include`s name. One that does not
    parse is noted, never a reason to refuse the manifest that mounts it."""
    from servertune.check.kubernetes import WORKLOAD_KINDS, _config_maps, _documents, _objects

    objects = list(_objects(_documents(path, text)))
    maps = _config_maps(objects)
    configs: list[NginxConfig] = []
    for obj in objects:
        kind = obj.get("kind")
        pod_path = WORKLOAD_KINDS.get((kind.text() if kind else None) or "")
        pod = obj.get(*pod_path) if pod_path is not None else None
        if pod is None:
            continue
        for container in pod.each("containers"):
            configs.extend(_container_nginx(_mounted(pod, container, maps)))
    return tuple(configs)


def _container_nginx(held: dict[str, _Node]) -> list[NginxConfig]:
    """The nginx configs among the files a container mounts (container path -> value)."""
    from servertune.check.nginx import read_started_nginx

    files = {inside: _config_file(value) for inside, value in held.items()}
    wanted = [NGINX_MAIN] if str(NGINX_MAIN) in files else []
    wanted = wanted or [
        PurePosixPath(inside)
        for inside in sorted(files)
        if PurePosixPath(inside).parent in NGINX_FOLDERS and inside.endswith(".conf")
    ]

    def find(name: str, at: Location | None = None, /) -> ConfigFile | None:
        del at
        return files.get(str(PurePosixPath(name)))

    configs: list[NginxConfig] = []
    for inside in wanted:
        config = files[str(inside)]
        try:
            read = read_started_nginx(config, str(inside), find, tuple(files))
        except CheckInputError as why:
            at = Location(config.file, config.first_line)
            note("not-followed", at, f"{at}: not followed: nginx's {inside}: {why}")
            continue
        configs.append(replace(read, in_cluster=True))
    return configs


def _config_file(value: _Node) -> ConfigFile:
    """A ConfigMap value as a file: its text, from the line below its `|` header (a block
    scalar), else from its own line."""
    from servertune.check.commands import ConfigFile

    below = 1 if getattr(value.node, "style", None) in ("|", ">") else 0
    return ConfigFile(value.text() or "", value.path, value.node.start_mark.line + 1 + below)
