"""AWS Copilot service manifests: what `copilot/<service>/manifest.yml` starts on ECS.

A manifest (https://aws.github.io/copilot-cli/docs/manifest/overview/) names its `type`
(`Load Balanced Web Service`, `Backend Service`, `Worker Service`, `Request-Driven Web
Service`; a `Scheduled Job` serves nothing) and its container's image: `image.build`, a
Dockerfile's path (its folder the build context) or `dockerfile` / `context`, every path from
the workspace root (the folder holding `copilot/`;
https://aws.github.io/copilot-cli/docs/include/image-config/), else `image.location`, a
registry image tied to a Dockerfile here only on evidence (`images.image_named`).
`entrypoint` and `command` (a string split into words, or a list) replace the image's
ENTRYPOINT and CMD as ECS's `entryPoint` / `command` do; `variables` are its environment;
`count` its task count. Each `environments.<name>` that overrides the image, `entrypoint` or
`command` starts its own launch, its `variables` over the service's.

Copilot's manifest has no stop timeout: the task definition it generates sets no
`stopTimeout`, so ECS's 30 s between SIGTERM and SIGKILL applies, changed through
`taskdef_overrides` (https://aws.github.io/copilot-cli/docs/developing/taskdef-overrides/).
A Request-Driven Web Service runs on App Runner, whose stop no file sets.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from servertune.check.commands import FollowWords, Word
from servertune.check.model import (
    AppServer,
    CheckInputError,
    Container,
    Location,
    NotFollowed,
    NothingToCheck,
    PlatformWords,
    Setting,
)

if TYPE_CHECKING:
    from servertune.check.kubernetes import _Node

__all__ = ["looks_like_copilot_manifest", "read_copilot_manifest"]

_TYPE = re.compile(
    r"^type:[ \t]*['\"]?(Load Balanced Web Service|Backend Service|Worker Service|"
    r"Request-Driven Web Service)['\"]?[ \t]*(#.*)?$",
    re.M,
)
_WORDS = PlatformWords(
    "Amazon ECS (AWS Copilot)",
    "StopTimeout",
    "taskdef_overrides: [{path: ContainerDefinitions[0].StopTimeout, value: {}}]",
    "https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_ContainerDefinition.html "
    "(stopTimeout: 30 s by default, which the task definition Copilot generates keeps); "
    "https://aws.github.io/copilot-cli/docs/developing/taskdef-overrides/",
    "cpu",
    "memory",
)
_APP_RUNNER = PlatformWords("AWS App Runner (AWS Copilot)", cpu_name="cpu", memory_name="memory")


def looks_like_copilot_manifest(path: Path, text: str) -> bool:
    """A `manifest.yml` of a service folder under `copilot/` with a service's `type:`."""
    return (
        path.name.lower() in ("manifest.yml", "manifest.yaml")
        and path.parent.parent.name == "copilot"
        and bool(_TYPE.search(text))
    )


def read_copilot_manifest(
    path: Path, text: str, env: Mapping[str, str] | None, follow: FollowWords | None
) -> tuple[AppServer, ...]:
    """The server the service's container starts, and each environment's own where it
    changes what runs."""
    from servertune.check.platforms import yaml_root

    root = yaml_root(path, text)
    overrides: list[tuple[str, _Node | None]] = [("", None)]
    environments = root.get("environments")
    for name, node in environments.items() if environments is not None else []:
        if any(node.get(key) is not None for key in ("image", "entrypoint", "command")):
            overrides.append((name, node))
    images: list[Path] = []
    apps = [
        app
        for name, node in overrides
        if (app := _service(path, root, name, node, env or {}, follow, images)) is not None
    ]
    if not apps:
        ran = sorted({str(image) for image in images})
        raise NothingToCheck(
            f"{path}: the service's container starts no server check reads (gunicorn, uvicorn, "
            "granian, uWSGI) from the files here"
            + (f" (it runs the image of {', '.join(ran)}, whose own notes say more)" if ran else "")
            + ": nothing to check"
        )
    return tuple(apps)


def _pick(root: _Node, override: _Node | None, *keys: str) -> _Node | None:
    """The environment's value where it sets one, else the service's."""
    found = override.get(*keys) if override is not None else None
    return found if found is not None else root.get(*keys)


def _words(node: _Node | None) -> tuple[Word, ...] | None:
    """`entrypoint` / `command`: a list as is, a string split into words (exec form)."""
    if node is None:
        return None
    items = node.list()
    if items:
        return tuple(Word(item.text() or "", item.at) for item in items)
    try:
        return tuple(Word(w, node.at) for w in shlex.split(node.text() or ""))
    except ValueError:
        raise CheckInputError(f"{node.at}: cannot split the command into words") from None


def _environment(root: _Node, override: _Node | None) -> tuple[dict[str, str], dict[str, Location]]:
    values: dict[str, str] = {}
    where: dict[str, Location] = {}
    for node in (root, override):
        variables = node.get("variables") if node is not None else None
        for key, value in variables.items() if variables is not None else []:
            if value.text() is not None:  # not `from_cfn:`, known when deployed
                values[key] = value.text() or ""
                where[key] = value.at
    return values, where


def _service(
    path: Path,
    root: _Node,
    env_name: str,
    override: _Node | None,
    env: Mapping[str, str],
    follow: FollowWords | None,
    images: list[Path],
) -> AppServer | None:
    """The server the service (with `override`, an environment's) starts; the Dockerfile of
    the image it runs is added to `images`."""
    from servertune.check.dockerfile import Image, image_run_server, read_image
    from servertune.check.images import image_named
    from servertune.check.platforms import command_server, dockerfile_image
    from servertune.check.source import read_text

    workspace = path.parent.parent.parent
    environment, env_at = _environment(root, override)
    environment = {**environment, **env}
    entrypoint = _words(_pick(root, override, "entrypoint"))
    command = _words(_pick(root, override, "command"))
    build = _pick(root, override, "image", "build")
    location = _pick(root, override, "image", "location")
    image: Image | None = None
    if build is not None and build.text():
        dockerfile = workspace / (build.text() or "")
        image = dockerfile_image(path, dockerfile, dockerfile.parent)
    elif build is not None:
        written, context = build.get("dockerfile"), build.get("context")
        folder = workspace / ((context.text() if context else None) or ".")
        dockerfile = (
            workspace / (written.text() or "") if written is not None else folder / "Dockerfile"
        )
        folder = folder if context is not None else dockerfile.parent
        image = dockerfile_image(path, dockerfile, folder)
        target = build.get("target")
        if image is not None and target is not None and target.text():
            image = read_image(dockerfile, read_text(dockerfile), folder, target.text())
    elif location is not None and location.text():
        image = image_named(location.text() or "", path, location.at)
        if image is None and entrypoint is None and command is None:
            raise NotFollowed(
                f"{location.at}: not followed: the service runs the registry image "
                f"{location.text()!r}, which the files do not tie to a Dockerfile here"
            )
    found: AppServer | None
    if image is not None:
        images.append(
            image.path.relative_to(workspace)
            if image.path.is_relative_to(workspace)
            else Path(image.path.name)
        )
        found = image_run_server(path, image, entrypoint, command, environment, env_at)
    else:
        argv = [*(entrypoint or ()), *(command or ())]
        line = Word(shlex.join(w.text for w in argv), argv[0].at) if argv else None
        found = command_server(path, line, workspace, environment, env_at, follow) if line else None
    if found is None:
        return None
    return _in_service(path, root, env_name, override, found)


def _in_service(
    path: Path, root: _Node, env_name: str, override: _Node | None, app: AppServer
) -> AppServer:
    from servertune.check.ecs import ECS_STOP_TIMEOUT_S

    name_node, kind = root.get("name"), root.get("type")
    name = (name_node.text() if name_node is not None else None) or path.parent.name
    app_runner = kind is not None and kind.text() == "Request-Driven Web Service"
    count = _pick(root, override, "count")
    replicas = (
        Setting(int(count.number("count") or 1), count.at)
        if count is not None and count.text() is not None
        else None
    )
    memory = _pick(root, override, "memory")
    memory_mb = (
        Setting(float(memory.number("memory") or 0), memory.at)
        if memory is not None and memory.text() is not None
        else None
    )
    box = Container(
        name=f"{name} ({env_name})" if env_name else name,
        at=root.at,
        platform="ecs",
        memory_limit_mb=memory_mb,
        grace_period_s=None if app_runner else Setting(ECS_STOP_TIMEOUT_S, root.at, default=True),
        replicas=replicas,
        words=_APP_RUNNER if app_runner else _WORDS,
    )
    return replace(app, container=box)
