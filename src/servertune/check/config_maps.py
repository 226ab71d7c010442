"""Files a pod's containers read from ConfigMaps: the ConfigMaps of every manifest of the run
(kustomize bases keep a ConfigMap in a file of its own, `cm-*.yaml`, beside the Deployment
that mounts it), and the nginx config a container mounts from one at nginx's own paths
(`/etc/nginx/nginx.conf` by `subPath`, or a ConfigMap mounted as `/etc/nginx/conf.d`), read
as a front like a file of the repository, each setting at its line in the ConfigMap."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from servertune.check.budget import each_within_budget
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


@contextmanager
def config_maps_of_run(paths: Sequence[Path]) -> Iterator[None]:
    """While the block runs, a container's ConfigMap volume is found in any manifest of
    `paths`, not only in the file that mounts it."""
    try:
        from servertune.check.kubernetes import RUN_CONFIG_MAPS
    except ModuleNotFoundError:  # no YAML parser: manifests are refused, with the extra
        yield
        return
    token = RUN_CONFIG_MAPS.set(_read(paths))
    try:
        yield
    finally:
        RUN_CONFIG_MAPS.reset(token)


def _read(paths: Sequence[Path]) -> dict[str, _Node]:
    try:
        from servertune.check.kubernetes import _config_maps, _documents, _objects
    except ModuleNotFoundError:  # no YAML parser: manifests are refused, with the extra
        return {}
    from servertune.check.helm_templates import (
        chart_values,
        is_chart_template,
        read_chart_template,
    )
    from servertune.check.source import read_text

    def maps_of(path: Path) -> dict[str, _Node]:
        try:
            text = read_text(path)
            if not _CONFIG_MAP.search(text):
                return {}
            if is_chart_template(path):
                # A chart's ConfigMap, read with its values as the chart's Deployments are.
                reading = read_chart_template(text, *chart_values(path))
                if reading is None:
                    return {}
                text = reading.text
            return _config_maps(list(_objects(_documents(path, text))))
        except (CheckInputError, OSError, ValueError):
            return {}  # the file's own reading says why

    found: dict[str, _Node] = {}
    twice: set[str] = set()
    manifests = [p for p in paths if p.suffix in (".yaml", ".yml")]
    # One over its budget is left out: its own reading says so.
    for _, maps in each_within_budget(manifests, maps_of):
        for name, data in maps.items():
            if name in found and found[name].at != data.at:
                twice.add(name)
            found.setdefault(name, data)
    return {name: data for name, data in found.items() if name not in twice}


def mounted_nginx(path: Path, text: str) -> tuple[NginxConfig, ...]:
    """The nginx configs the containers of the manifests in `path` mount from ConfigMaps at
    nginx's paths: the main file, or (without one) each `*.conf` of its include folders, each
    read with the other files mounted there as what its `include`s name. One that does not
    parse is noted, never a reason to refuse the manifest that mounts it."""
    from servertune.check.kubernetes import (
        WORKLOAD_KINDS,
        _config_maps,
        _documents,
        _objects,
        mounted_files,
    )

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
            found = _container_nginx(mounted_files(pod, container, maps))
            configs.extend(replace(config, pod=pod.at) for config in found)
    return tuple(configs)


def _container_nginx(held: dict[str, _Node]) -> list[NginxConfig]:
    """The nginx configs among the files a container mounts (container path -> value)."""
    from servertune.check.kubernetes import mounted_config
    from servertune.check.nginx import read_started_nginx

    files = {inside: mounted_config(value) for inside, value in held.items()}
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
