"""The servers of a Dockerfile's build targets: a named stage that is not the last, that no
other stage builds FROM or copies from, and that writes its own CMD or ENTRYPOINT is an image
of its own, what `docker build --target NAME` builds (Codium-ai/pr-agent's `github_app`
stage runs gunicorn; its last stage `cli` runs a command-line tool). Read only when the last
stage starts no server check reads: the last stage is the image a plain build makes, and a
target beside one that starts a server is a choice the files do not make.

A last stage that is only `FROM ${env} [AS final]`, a build argument with no value here
(boxwise/boxtribute's back/Dockerfile), is a selector: it writes nothing of its own, so the
image is the stage the `--build-arg` names (Docker expands an ARG declared before the first
FROM in a FROM line: https://docs.docker.com/reference/dockerfile/#understand-how-arg-and-from-interact),
and building an outside image unchanged would need no stage. Its candidates are the file's
own stages no other stage builds FROM or copies from; each that starts a server is read as
a launch with a `server-chosen` note naming the `--build-arg` that builds it, never as the
image's unconditional launch. A last stage that adds instructions of its own keeps the
not-followed note: its argument may name an outside image."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from servertune.check.model import AppServer, Location, NothingToCheck, collect_notes, note

__all__ = ["selecting_argument", "target_stage_servers"]

#: A FROM word that is one build argument and nothing else: `${env}`, `$env`.
_ALONE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")


def _leaf_stages(text: str) -> list[tuple[str, int, str]]:
    """(name, line of its own last CMD / ENTRYPOINT, the build argument choosing it) of each
    named stage but the last that no stage builds FROM or copies `--from`, and that writes its
    own command (the argument ""); none when a stage is built FROM a build argument with no
    value (`FROM ${env} AS final`, boxwise/boxtribute), unless the last stage is only that
    selector line: then each such stage is a candidate, at its command or its FROM, chosen by
    `--build-arg env=NAME`."""
    import dockerfile

    try:
        commands = dockerfile.parse_string(text)
    except dockerfile.GoParseError:
        return []
    used: set[str] = set()
    stages: list[tuple[str, int, int]] = []  # name, command line, FROM line
    own = 0  # instructions of the last stage after its FROM (a selector has none)
    for command in commands:
        name = command.cmd.upper()
        if name == "FROM" and command.value:
            used.add(command.value[0].lower())
            named = len(command.value) >= 3 and command.value[1].upper() == "AS"
            stages.append((command.value[2].lower() if named else "", 0, command.start_line))
            own = 0
            continue
        own += name != "ARG"
        if name in ("COPY", "ADD"):
            used |= {f[7:].lower() for f in command.flags if f.lower().startswith("--from=")}
        elif name in ("CMD", "ENTRYPOINT") and stages:
            stages[-1] = (stages[-1][0], command.start_line, stages[-1][2])
    argument = _selector(commands, own)
    if any("$" in u for u in used) and not argument:
        return []  # `FROM ${env}` building more than the stage: the argument is not said here
    return [
        (n, line or (start if argument else 0), argument)
        for n, line, start in stages[:-1]
        if n and (line or argument) and n not in used
    ]


def selecting_argument(text: str) -> str:
    """The build argument the Dockerfile's last stage, only `FROM ${NAME}`, selects a stage
    by (`_selector`); "" when it is no such selector or does not parse."""
    import dockerfile

    try:
        commands = dockerfile.parse_string(text)
    except dockerfile.GoParseError:
        return ""
    starts = [i for i, c in enumerate(commands) if c.cmd.upper() == "FROM"]
    own = sum(c.cmd.upper() != "ARG" for c in commands[starts[-1] + 1 :]) if starts else 0
    return _selector(commands, own)


def _selector(commands: Sequence[Any], own: int) -> str:
    """The build argument a last stage that is only `FROM ${NAME}` (or `FROM $NAME`, with
    `AS`) selects a stage by, when no ARG before the first FROM gives it a default; ""
    otherwise (an argument with a default builds the stage it names, read as the image)."""
    froms = [c for c in commands if c.cmd.upper() == "FROM"]
    last = froms[-1] if froms else None
    if last is None or own or not last.value:
        return ""
    chosen = _ALONE.fullmatch(last.value[0])
    if chosen is None:
        return ""
    argument = chosen.group(1) or chosen.group(2)
    for command in commands:
        if command.cmd.upper() == "FROM":
            return argument  # declared (or not) with no default before the first FROM
        if command.cmd.upper() == "ARG":
            for word in command.value:
                key, sep, value = word.partition("=")
                if key == argument and sep and value.strip("\"'"):
                    return ""
    return argument


def target_stage_servers(
    path: Path, text: str, env: Mapping[str, str] | None
) -> tuple[AppServer, ...]:
    """The server each build target of the Dockerfile (`_leaf_stages`) starts, each with a
    `server-chosen` note at its command saying it runs only where the image is built with
    `--target` (or the `--build-arg` a selecting last stage names); () when none starts one
    check reads."""
    from servertune.check.dockerfile import read_dockerfile

    found: list[AppServer] = []
    for name, line, argument in _leaf_stages(text):
        with collect_notes() as notes:
            try:
                app = read_dockerfile(path, text, env, target=name)
            except NothingToCheck:  # a `test` stage running pytest: not a server, silently
                continue
        for said in notes:
            note(said.kind, said.at, said.message, said.fix)
        note("server-chosen", Location(path, line), _chosen(path, line, name, argument))
        found.append(app)
    return tuple(found)


def _chosen(path: Path, line: int, name: str, argument: str) -> str:
    """The `server-chosen` note of stage `name`: built by `--target`, or by the build
    argument the last stage's `FROM` names."""
    if argument:
        return (
            f"{path}:{line}: the stage {name!r} is the image only when built with "
            f"`--build-arg {argument}={name}` (the last stage is `FROM ${{{argument}}}`, a "
            "build argument no file here gives): read so, as one of the stages it may name"
        )
    return (
        f"{path}:{line}: the stage {name!r} is not the last: its command runs where the "
        f"image is built with `docker build --target {name}`, read so (the last stage "
        "starts none that check reads or follows)"
    )
