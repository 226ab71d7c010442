"""The app server a front's templated upstream names, when its host is a variable no file sets.

An envsubst template's `upstream meet_backend { server ${BACKEND_INTERNAL_HOST}:8000; }` is
rendered where nginx starts, from a value the repository does not hold. The port alone joins
nothing (every app on 8000 would do: a summary service, a config read alone). What the files
do say is the name: the upstream's and the variable's words (`backend`) against the names the
production starters on that port are known by - their compose service or Kubernetes container,
the Dockerfile stage that starts them (`backend-production`). Exactly one
production starter named so is joined; otherwise the candidates are named in the not-followed
note, never a guess.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path

from servertune.check import memo
from servertune.check.development_folders import DEVELOPMENT_WORDS
from servertune.check.model import AppServer, CheckInputError, Location, Setting

__all__ = ["DEVELOPMENT_WORDS", "named_starters", "settings_read_at", "words_of"]

#: Words that say what a name is, not whose it is (`BACKEND_INTERNAL_HOST`: `backend`).
_GENERIC = frozenset(
    {
        "host", "hostname", "internal", "external", "upstream", "upstreams", "server",
        "servers", "addr", "address", "url", "uri", "port", "name", "http", "https", "svc",
        "service", "proxy", "pass", "target", "endpoint", "domain", "ip", "the", "default",
        "local", "private", "public",
    }
)  # fmt: skip
#: Words of a starter's names that make it a developer's run, not production's.
_DEVELOPMENT = DEVELOPMENT_WORDS | {"test", "tests", "testing"}


def words_of(name: str) -> frozenset[str]:
    """The words of a name in lower case (`meet_backend`, `BACKEND_INTERNAL_HOST`,
    `backend-production`), generic ones and short ones left out."""
    words = re.split(r"[^a-z0-9]+", name.lower())
    return frozenset(w for w in words if len(w) >= 3 and w not in _GENERIC)


def _stage_at(dockerfile: Path, line: int) -> str:
    """The name of the Dockerfile stage `line` belongs to ("" when unnamed or unreadable)."""
    from servertune.check.dockerfile import stage_starts
    from servertune.check.source import read_text

    def stages() -> tuple[tuple[int, str], ...]:
        try:
            return stage_starts(read_text(dockerfile))
        except (CheckInputError, OSError):
            return ()

    found = memo.recall(memo.run_table("dockerfile stages at"), str(dockerfile), stages)
    return next((stage for number, stage in reversed(found) if number <= line), "")


def _stage_words(dockerfile: Path, line: int) -> frozenset[str]:
    """The words of the name of the stage `line` belongs to, when that name says what is
    built: none when a stage built FROM it under a name with no development word inherits its
    command (Syslifters/sysreptor's published image runs the command of `FROM python AS
    api-dev` through `FROM api-dev AS api-test`, `FROM api-test AS api`, `FROM api`)."""
    from servertune.check.dockerfile import stage_heirs
    from servertune.check.source import read_text

    def heirs() -> tuple[str, ...]:
        try:
            return stage_heirs(read_text(dockerfile), line)
        except (CheckInputError, OSError):
            return ()

    found = memo.recall(memo.run_table("dockerfile stage heirs"), f"{dockerfile}:{line}", heirs)
    if any(not words_of(name) & _DEVELOPMENT for name in found[1:]):
        return frozenset()
    return words_of(_stage_at(dockerfile, line))


def named_for_development(app: AppServer) -> bool:
    """`app` is started under a name that says a developer's run: its container, the stage of
    a Dockerfile line that starts it, or that Dockerfile's own name (`Dockerfile.dev`)."""
    from servertune.check.commands import is_dockerfile

    files = {at.file for at in app.launched_by if is_dockerfile(at.file)}
    return bool((_names(app) | {w for f in files for w in words_of(f.name)}) & _DEVELOPMENT)


def line_named_for_development(at: Location) -> bool:
    """The Dockerfile line `at` is in a file or stage named for a developer's run
    (`Dockerfile.dev`, `FROM base AS dev`): `named_for_development`'s names of an image line."""
    return bool((words_of(at.file.name) | _stage_words(at.file, at.line)) & _DEVELOPMENT)


def _names(app: AppServer) -> frozenset[str]:
    """The words of the names `app` is started under: its container, the stages of the
    Dockerfile lines that start it."""
    from servertune.check.commands import is_dockerfile

    words: set[str] = set()
    if app.container is not None:
        words |= words_of(app.container.name)
    for at in _read_at(app):
        if is_dockerfile(at.file):
            stage = app.container.stage if app.container is not None else None
            # The stage built decides: a compose `build.target` names it (mozilla-ai/lumigator).
            words |= words_of(stage) if stage else _stage_words(at.file, at.line)
    return frozenset(words)


def _read_at(app: AppServer) -> list[Location]:
    """The lines that start `app` and the lines its settings were read at (a Dockerfile's
    ENTRYPOINT in one stage, its CMD in the stage that runs)."""
    return [*app.launched_by, *settings_read_at(app)]


def settings_read_at(app: AppServer) -> list[Location]:
    """The lines each of `app`'s settings was read at, in field order."""
    found: list[Location] = []
    for field in dataclasses.fields(app):
        value = getattr(app, field.name)
        for one in value if isinstance(value, tuple) else (value,):
            found += [
                s.at for s in (one if isinstance(one, tuple) else (one,)) if isinstance(s, Setting)
            ]
    return found


def named_starters(
    names: Sequence[str], on_port: Sequence[AppServer]
) -> tuple[list[AppServer], list[AppServer]]:
    """(the production starters among `on_port` (the apps listening on the front's port)
    whose names share a word with `names` (the upstream's, the variable's), every production
    starter among them): a starter is an app a launch starts (a container, an image, a
    script: not a config read alone), run without `--reload` and named for no development
    run."""
    wanted = frozenset().union(*(words_of(n) for n in names))
    production = [
        app
        for app in on_port
        if (app.container is not None or app.launched_by)
        and app.reloads is None
        and not (_names(app) & _DEVELOPMENT)
    ]
    return [app for app in production if _names(app) & wanted], production
