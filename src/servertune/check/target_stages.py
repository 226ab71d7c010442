"""The servers of a Dockerfile's build targets: a named stage that is not the last, that no
other stage builds FROM or copies from, and that writes its own CMD or ENTRYPOINT is an image
of its own, what `docker build --target NAME` builds (Codium-ai/pr-agent's `github_app`
stage runs gunicorn; its last stage `cli` runs a command-line tool). Read only when the last
stage starts no server check reads: the last stage is the image a plain build makes, and a
target beside one that starts a server is a choice the files do not make."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from servertune.check.model import AppServer, Location, NothingToCheck, collect_notes, note

__all__ = ["target_stage_servers"]


def _leaf_stages(text: str) -> list[tuple[str, int]]:
    """(name, line of its own last CMD / ENTRYPOINT) of each named stage but the last that no
    stage builds FROM or copies `--from`, and that writes its own command; none when a stage
    is built FROM a build argument (`FROM ${env} AS final`, boxwise/boxtribute): which stage
    that builds is the `--build-arg`'s, and no stage is guessed (a not-followed note says so)."""
    import dockerfile

    try:
        commands = dockerfile.parse_string(text)
    except dockerfile.GoParseError:
        return []
    used: set[str] = set()
    stages: list[tuple[str, int]] = []
    for command in commands:
        name = command.cmd.upper()
        if name == "FROM" and command.value:
            used.add(command.value[0].lower())
            named = len(command.value) >= 3 and command.value[1].upper() == "AS"
            stages.append((command.value[2].lower() if named else "", 0))
        elif name in ("COPY", "ADD"):
            used |= {f[7:].lower() for f in command.flags if f.lower().startswith("--from=")}
        elif name in ("CMD", "ENTRYPOINT") and stages:
            stages[-1] = (stages[-1][0], command.start_line)
    if any("$" in u for u in used):
        return []  # `FROM ${env}`: a build argument picks the stage, not said here
    return [(n, line) for n, line in stages[:-1] if n and line and n not in used]


def target_stage_servers(
    path: Path, text: str, env: Mapping[str, str] | None
) -> tuple[AppServer, ...]:
    """The server each build target of the Dockerfile (`_leaf_stages`) starts, each with a
    `server-chosen` note at its command saying it runs only where the image is built with
    `--target`; () when none starts one check reads."""
    from servertune.check.dockerfile import read_dockerfile

    found: list[AppServer] = []
    for name, line in _leaf_stages(text):
        with collect_notes() as notes:
            try:
                app = read_dockerfile(path, text, env, target=name)
            except NothingToCheck:  # a `test` stage running pytest: not a server, silently
                continue
        for said in notes:
            note(said.kind, said.at, said.message, said.fix)
        note(
            "server-chosen",
            Location(path, line),
            f"{path}:{line}: the stage {name!r} is not the last: its command runs where the "
            f"image is built with `docker build --target {name}`, read so (the last stage "
            "starts none that check reads or follows)",
        )
        found.append(app)
    return tuple(found)
