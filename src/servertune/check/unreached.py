"""Server command lines no launch reaches: said, never left silent.

A line of a file check read that runs a server check reads (`CMD gunicorn -c conf.py app:app`)
but that no launch check followed reaches is a link check could not follow: the CMD of a
Dockerfile stage that is not the final one (only `docker build --target` runs it), a script
nothing read here runs, a branch of a script check did not take. Left silent, the run reads
as if the server were not there; a `not-followed` note at the line says where it stopped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from servertune.check.budget import OVER_BUDGET_FIX, each_within_budget, over_budget
from servertune.check.commands import dockerfile_name
from servertune.check.discover import Discovery
from servertune.check.graph import app_locations
from servertune.check.model import AppServer, Location, Note, server_program

#: Words that may stand before a server's program in the same command: a wrapper, an
#: interpreter running it as a module, a key naming the command (`web:`, `command:`, `CMD`).
_BEFORE = frozenset(
    {
        *("exec", "env", "nohup", "nice", "tini", "dumb-init", "--", "-m", "-u", "run"),
        *("python", "python3", "uv", "poetry", "pipenv", "pdm", "ddtrace-run"),
        *("opentelemetry-instrument", "CMD", "ENTRYPOINT", "-", "command:", "args:"),
    }
)
#: What splits a line into commands; what stands between a JSON array's or a quoted
#: script's words.
_SPLIT = re.compile(r"&&|\|\||[;|`]")
_QUOTES = re.compile(r"[\[\],\"']")
#: A key before the command on its line: a Procfile's `web:`, a systemd `ExecStart=`.
_KEY = re.compile(r"\A(?:[A-Za-z_][\w.-]*:|Exec[A-Za-z]*=[-@+!:]*)")
#: Files whose lines are no command lines (a gunicorn config is Python; docs describe).
_NOT_COMMANDS = (".py", ".md", ".rst", ".txt", ".toml", ".cfg", ".lock", ".json", ".conf")
#: Options with which a server's program serves nothing (it prints, checks or builds).
_NOT_SERVING = frozenset(
    {"--version", "-v", "--help", "-h", "--build-plugin", "--check-config", "--print-config"}
)
_FROM = re.compile(r"\A\s*FROM\s+\S+(?:\s+AS\s+(?P<name>\S+))?", re.IGNORECASE)


def unreached_servers(
    files: Iterable[Path],
    apps: Sequence[AppServer],
    said: Sequence[Note],
    walks: Sequence[Discovery] = (),
) -> list[Note]:
    """A `not-followed` note at each line of `files`, or of the templates the `walks` found
    and no chain rendered, that runs a server check reads, with options or an app, that no app's
    launch was read at and no note in `said` is at."""
    templates = [path for walk in walks for path, _ in walk.templates]
    unrendered = {os.path.normpath(p) for p in templates}
    reached: dict[str, set[int]] = {}
    #: The servers of each file some launch was read at: another line of that file running
    #: the same server is part of it (a command over lines of a YAML scalar), but in a
    #: Dockerfile, only a line of a stage a launch was read in.
    kinds: dict[str, set[str]] = {}
    started: set[str] = set()
    for app in apps:
        for at in app_locations(app):
            reached.setdefault(os.path.normpath(at.file), set()).add(at.line)
            kinds.setdefault(os.path.normpath(at.file), set()).add(app.kind)
        started.update(os.path.normpath(at.file) for at in app.launched_by)
        if app.container is not None:
            started.add(os.path.normpath(app.container.at.file))
    noted = {(os.path.normpath(n.at.file), n.at.line) for n in said}
    stopped: dict[str, list[str]] = {}
    for n in said:
        if n.kind == "not-followed":
            stopped.setdefault(os.path.normpath(n.at.file), []).append(n.message)
    # A file whose `server-chosen` note names every server line it has says them already.
    # So does one a reader judged to start no server, with why (a kustomize patch, an
    # example); a Dockerfile's stages are told apart below.
    chosen = {
        os.path.normpath(n.at.file)
        for n in said
        if n.kind == "server-chosen"
        or (n.kind == "starts-no-server" and not dockerfile_name(n.at.file))
    }
    candidates = [p for p in dict.fromkeys([*files, *templates]) if _commands_in(p, chosen)]
    scanned = dict(each_within_budget(candidates, _scanned))
    # One over its budget: named as a file not read, once.
    notes = [
        Note("not-read", Location(p), f"{p}: {over_budget()}", OVER_BUDGET_FIX)
        for p in candidates
        if p not in scanned
    ]
    for path, found in scanned.items():
        if found is None:
            continue
        lines, stages, servers = found
        key = os.path.normpath(path)
        for number, server in servers:
            last = _continued(lines, number)
            if stages is not None:
                if _skipped_stage(
                    stages, len(lines), number, reached.get(key, set()), stopped.get(key, ())
                ):
                    continue
            elif server in kinds.get(key, ()):
                continue
            if any((key, n) in noted for n in range(number, last + 1)):
                continue
            at = Location(path, number)
            why = (
                f"{path.name} is a template check did not render: what it runs is not here"
                if key in unrendered
                else _why(path, stages, number, key in reached or key in started)
            )
            notes.append(
                Note(
                    "not-followed",
                    at,
                    f"{at}: not followed: this line runs {server}, but no launch check "
                    f"followed reaches it ({why}), so that server was not checked",
                )
            )
    return notes


def _commands_in(path: Path, chosen: set[str]) -> bool:
    """Whether `path` may hold command lines not said already (`chosen`: those said)."""
    return (
        path.suffix not in _NOT_COMMANDS
        and not path.name.startswith(".")
        and os.path.normpath(path) not in chosen
    )


def _scanned(
    path: Path,
) -> tuple[list[str], list[tuple[int, re.Match[str]]] | None, list[tuple[int, str]]] | None:
    """The file's lines, its Dockerfile stages (None: no Dockerfile) and its server lines;
    None when it cannot be read."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return lines, _stages(lines) if dockerfile_name(path) else None, _server_lines(lines)


def _server_lines(lines: Sequence[str]) -> list[tuple[int, str]]:
    """Each command (by its first line, 1-based; backslash continuations joined) that runs
    a server, with arguments after its program."""
    found: list[tuple[int, str]] = []
    number = 1
    while number <= len(lines):
        last = _continued(lines, number)
        text = " ".join(line.rstrip().rstrip("\\") for line in lines[number - 1 : last]).strip()
        server = _command_server(text)
        if server is not None:
            found.append((number, server))
        number = last + 1
    return found


def _command_server(text: str) -> str | None:
    """The server a command line runs, if any (a comment, an echo, a RUN installing one:
    none)."""
    if not text or text.startswith(("#", "//", "echo ", "RUN ")) or "--reload" in text:
        return None
    for part in _SPLIT.split(_QUOTES.sub(" ", text)):
        words = part.split()
        if words and _KEY.match(words[0]):
            words[0] = _KEY.sub("", words[0])
            words = [w for w in words if w]
        server = _server_in(words)
        if server is not None:
            return server
    return None


def _server_in(words: Sequence[str]) -> str | None:
    """The server the command `words` runs, when only wrappers stand before its program and
    an option or an app follows it (`gunicorn --version` or a bare mention is none)."""
    for index, word in enumerate(words):
        server = server_program(os.path.basename(word))
        if server is not None:
            rest = words[index + 1 :]
            if not rest or any(w in _NOT_SERVING for w in rest):
                return None
            # An option, an app (`module:app`), a config file or a variable: not prose.
            return server if any(re.search(r"\A-|[:.$=/]", w) for w in rest) else None
        wrapper = word in _BEFORE or word.endswith(("/python", "/python3"))
        if not wrapper and not re.match(r"\A[A-Z_][A-Z0-9_]*=", word):
            return None
    return None


def _stages(lines: Sequence[str]) -> list[tuple[int, re.Match[str]]]:
    """Each of a Dockerfile's `FROM` lines (1-based) with its match (`name`: the stage's)."""
    return [(n, m) for n, line in enumerate(lines, 1) if (m := _FROM.match(line))]


def _skipped_stage(
    starts: Sequence[tuple[int, re.Match[str]]],
    length: int,
    number: int,
    reached: set[int],
    stopped: Sequence[str],
) -> bool:
    """Whether a Dockerfile's server line `number` is said already or is no stage's unread
    command: the final stage's command runs when the image runs (a container's own command
    replaces it, or the image's reading said why not); a stage a launch was read in, or one a
    not-followed note of the file names (`FROM ${env}` naming the stages), is said."""
    first = max((n for n, _ in starts if n <= number), default=1)
    past = min((n for n, _ in starts if n > number), default=length + 1)
    if past > length or any(first <= n < past for n in reached):
        return True
    name = next((m.group("name") for n, m in starts if n == first), None)
    if not name:
        return False
    return any(re.search(rf"\b{re.escape(name)}\b", s) for s in stopped)


def _continued(lines: Sequence[str], number: int) -> int:
    """The last line of the command starting at line `number` (backslash continuations)."""
    last = number
    while last < len(lines) and lines[last - 1].rstrip().endswith("\\"):
        last += 1
    return last


def _why(
    path: Path,
    stages: Sequence[tuple[int, re.Match[str]]] | None,
    number: int,
    in_a_launch: bool,
) -> str:
    """Which step was not followed to the line (`stages`: a Dockerfile's, None for another
    file)."""
    if stages is not None:
        before = [(n, m) for n, m in stages if n < number]
        if before and any(n > number for n, _ in stages):
            name = before[-1][1].group("name")
            if name and "$" in stages[-1][1].group(0):
                return (
                    f"the command of stage {name!r}, which the final stage's "
                    f"`{stages[-1][1].group(0).strip()}` chooses by a build argument no file "
                    "here gives"
                )
            if name:
                return (
                    f"the command of stage {name!r}, not the final stage: only `docker build "
                    f"--target {name}` runs it, and no file read here builds that target"
                )
            return "the command of a stage that is not the final one"
    if in_a_launch:
        return "a branch, function or case of this file that the launch read did not take"
    return f"nothing read here runs {path.name}"
