"""Railway's config as code: what a `railway.toml` / `railway.json` starts.

Railway reads `railway.toml` or `railway.json` (https://docs.railway.com/config-as-code/
reference): `build.dockerfilePath` names the Dockerfile (Railway "will always build with a
Dockerfile if it finds one", `Dockerfile` at the service's root); `deploy.startCommand`
overrides that image's ENTRYPOINT in exec form, else the image runs its ENTRYPOINT / CMD
(https://docs.railway.com/deployments/start-command); without a Dockerfile Railpack runs the
start command in a shell. `deploy.numReplicas` is the instance count and
`deploy.drainingSeconds` the seconds between SIGTERM and SIGKILL
(https://docs.railway.com/guides/deployment-teardown); Railway's own default is not in its
reference, so none is assumed when unset.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from servertune.check.commands import FollowWords, Word
from servertune.check.model import AppServer, CheckInputError, Location, Setting

__all__ = ["looks_like_railway", "read_railway"]

_NAME = re.compile(r"\Arailway\.(toml|json)\Z", re.I)


def looks_like_railway(path: Path, text: str) -> bool:
    """`railway.toml` / `railway.json` with a `build` or `deploy` section."""
    return bool(_NAME.match(path.name)) and bool(
        re.search(r'^\s*\[(build|deploy)\]|"(build|deploy)"\s*:', text, re.M)
    )


def _line(text: str, key: str) -> int:
    match = re.search(rf"^\s*\"?{key}\"?\s*[=:]", text, re.M)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def read_railway(
    path: Path, text: str, env: Mapping[str, str] | None, follow: FollowWords | None
) -> tuple[AppServer, ...]:
    """The server the service starts, in a container of Railway."""
    from servertune.check.platforms import command_server, dockerfile_image, in_platform

    try:
        data: Any = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as error:
        raise CheckInputError(f"{path}: cannot read Railway's config: {error}") from None
    build = data.get("build") if isinstance(data.get("build"), dict) else {}
    deploy = data.get("deploy") if isinstance(data.get("deploy"), dict) else {}
    start = deploy.get("startCommand")
    start_word = (
        Word(start, Location(path, _line(text, "startCommand"))) if isinstance(start, str) else None
    )
    written = build.get("dockerfilePath")
    dockerfile = path.parent / (written if isinstance(written, str) else "Dockerfile")
    environment = dict(env or {})
    found: AppServer | None
    if isinstance(written, str) or dockerfile.is_file():
        image = dockerfile_image(path, dockerfile, dockerfile.parent)
        if image is None:
            return ()
        from servertune.check.dockerfile import container_words, find_server

        if start_word is not None:  # exec form, in place of the image's ENTRYPOINT (and CMD)
            try:
                words = tuple(Word(w, start_word.at) for w in shlex.split(start_word.text))
            except ValueError:
                raise CheckInputError(f"{start_word.at}: cannot split the command") from None
            first, rest = container_words(image, words, False, (), False)
        else:
            first, rest = container_words(
                image, image.entrypoint, image.entrypoint_shell, image.cmd, image.cmd_shell
            )
        found = find_server(
            path, first, rest, {**image.env, **environment}, dict(image.env_at), image
        )
    elif start_word is not None:
        found = command_server(path, start_word, path.parent, environment, {}, follow)
    else:
        found = None
    if found is None:
        return ()
    draining, replicas = deploy.get("drainingSeconds"), deploy.get("numReplicas")
    grace = (
        Setting(float(draining), Location(path, _line(text, "drainingSeconds")))
        if isinstance(draining, (int, float)) and not isinstance(draining, bool)
        else None
    )
    count = (
        Setting(replicas, Location(path, _line(text, "numReplicas")))
        if isinstance(replicas, int) and not isinstance(replicas, bool)
        else None
    )
    return (in_platform(found, "railway", "railway", Location(path), grace, count),)
