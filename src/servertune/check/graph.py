"""The deployment as one value: what starts each app server, through which files, with which
config, and which front passes to it.

Every `AppServer` carries the file:line of each setting it was read with, and its container;
the files those locations name, in launch order (the platform file, the Dockerfile, the scripts,
the server's own config), are the chain that starts it. The same chain decides when two readings
are one process: a `gunicorn.conf.py` or an `entrypoint.sh` found in a folder is also reached
through the Dockerfile that copies it, and the server is the one the Dockerfile starts, once.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.check.chain import BalancerLink, Link
from servertune.check.development import (
    DEVELOPMENT_LAUNCH,
    development_reason,
    production_evidence,
)
from servertune.check.model import ASSUMED_UNSET, UNCALLED, AppServer, Location, Note, Setting

__all__ = [
    "Launch",
    "chain_files",
    "launches",
    "named_as_config",
    "one_reading_each",
    "without_false_starts",
]

#: The order a launch goes through files, by the kind of file: the platform (compose,
#: Kubernetes, Procfile, supervisord), the image, the scripts, the server's own config.
_PLATFORM, _IMAGE, _SCRIPT, _CONFIG = range(4)


def _rank(path: Path) -> int:
    from servertune.check.commands import is_dockerfile

    name = path.name.lower()
    if is_dockerfile(path):
        return _IMAGE
    if name.startswith("procfile") and path.suffix != ".sh":
        return _PLATFORM
    if path.suffix in (".yaml", ".yml", ".json") or "supervisor" in name:
        return _PLATFORM
    if path.suffix in (".py", ".ini", ".toml", ".xml"):
        return _CONFIG
    return _SCRIPT


def named_as_config(path: Path) -> bool:
    """Whether `path` is named as a server's own config (`uwsgi.ini`, `hypercorn.toml`,
    `gunicorn.conf.py`), not a platform file, an image or a script that starts a server."""
    return _rank(path) == _CONFIG


def _locations(app: AppServer) -> list[Location]:
    """Every file:line the app's settings were read at, its container's first."""
    found: list[Location] = [app.container.at] if app.container is not None else []
    found.append(Location(app.file))
    found += app.launched_by
    for field in dataclasses.fields(app):
        value = getattr(app, field.name)
        values = value if isinstance(value, tuple) else (value,)
        for one in values:
            pairs = one if isinstance(one, tuple) else (one,)
            found += [s.at for s in pairs if isinstance(s, Setting)]
    if app.config_file is not None and all(at.file != app.config_file.file for at in found):
        found.append(app.config_file)  # a config that sets nothing read: at its first line
    return found


def app_locations(app: AppServer) -> list[Location]:
    """Every file:line the app's launch and settings were read at, its container's first."""
    return _locations(app)


def _settings_at(app: AppServer, defaults: bool = False) -> set[Location]:
    """The lines the app's own settings were read at (not its chain's, not defaults placed at
    its file's first line); with `defaults`, the lines of the settings it could not read
    (kept at their default)."""
    found: set[Location] = set()
    for field in dataclasses.fields(app):
        if field.name in ("container", "launched_by"):
            continue
        value = getattr(app, field.name)
        for one in value if isinstance(value, tuple) else (value,):
            for pair in one if isinstance(one, tuple) else (one,):
                if isinstance(pair, Setting) and pair.default == defaults:
                    found.add(pair.at)
    return found


def chain_files(app: AppServer) -> tuple[Path, ...]:
    """The files that start the app, in launch order: its container's, then the lines that
    start it in the order they run (a Dockerfile's ENTRYPOINT, a script's `honcho` line, the
    Procfile's entry), then the rest by kind (platform, image, scripts, config)."""
    files = dict.fromkeys([*(at.file for at in _locations(app)), *app.config_parts])
    config = app.config_file.file if app.config_file is not None else None

    def rank(path: Path) -> int:  # a uWSGI `.conf` or `.cfg` is a config by being named so
        return _CONFIG if path == config else _rank(path)

    first = [app.container.at.file] if app.container is not None else []
    first = list(dict.fromkeys([*first, *(at.file for at in app.launched_by)]))
    # Of one rank, the files that lead to the config as they run, then the config and the parts
    # it reads in place, in the order it reads them.
    read = [config, *app.config_parts]
    rest = sorted(
        (p for p in files if p not in first),
        key=lambda p: (
            rank(p),
            p in read,
            read.index(p) if p in read else list(files).index(p),
        ),
    )
    return (*first, *rest)


def one_reading_each(apps: Sequence[AppServer], notes: list[Note]) -> list[AppServer]:
    """Each process once: a server read from a file (a script, a config) that a longer reading
    of the same server reaches through its launch chain is that reading's; the shorter reading
    goes, with its config-not-found note (the longer chain found the config), and no file a
    launch goes through is said to start no server."""
    chains = [set(chain_files(a)) for a in apps]
    # Words the shorter reading could not expand (`"$@"` of a script read without its
    # caller's arguments) are no setting of its own: the longer chain gives them.
    read_at = [_settings_at(a) - {s.at for s in a.unresolved} for a in apps]

    def reached(index: int) -> bool:
        app = apps[index]
        return app.container is None and any(
            j != index
            and other.kind == app.kind
            and app.file in chains[j]
            # Started by a line the longer chain does not go through (another stage's CMD of
            # the same Dockerfile, whose base stage's STOPSIGNAL both read): another process.
            and set(app.launched_by) <= set(other.launched_by) | read_at[j]
            # The same process: a setting read at the same line (a supervisord file's other
            # program, on its own lines, is another process the longer chain does not start).
            # A script read alone that had to assume the branch its first argument picks is
            # the longer chain's run of it, which gives that argument (the image's CMD).
            # Or the longer chain loads the file as its config, each of its settings then
            # overridden (an ini UWSGI_INI names, read before the image's UWSGI_PROCESSES).
            and bool(
                read_at[index] & read_at[j]
                or not read_at[index]
                or (other.config_file is not None and other.config_file.file == app.file)
                or (app.assumed_branch is not None and not app.launched_by)
            )
            # A longer chain that makes it a developer's `--reload` server (a dev compose
            # file's environment) is another run than the image's own, which is kept; an
            # image whose own CMD reloads is that image's run all the same.
            and (other.reloads is None or app.reloads is not None or other.container is None)
            and (
                len(chains[j]) > len(chains[index])
                or (len(chains[j]) == len(chains[index]) and other.container is not None)
            )
            for j, other in enumerate(apps)
        )

    dropped = {i for i in range(len(apps)) if reached(i) or _extended(apps[i], apps)}
    dropped |= {i for i, app in enumerate(apps) if _paste_loaded(app, apps, notes)}
    dropped |= _picked_elsewhere(apps, chains)
    files = {apps[i].file for i in dropped}
    notes[:] = [n for n in notes if not (n.kind == "config-not-found" and n.at.file in files)]
    # The branch a dropped reading assumed is said by the kept one's `server-chosen` note.
    # Not when a kept reading assumed one too (variables no file sets): its note says which.
    assumed = {apps[i].file for i in dropped if apps[i].assumed_branch is not None} - {
        a.assumed_branch[0].file
        for i, a in enumerate(apps)
        if i not in dropped and a.assumed_branch is not None
    }
    kept_at = {at for i, a in enumerate(apps) if i not in dropped for at in _settings_at(a)}
    notes[:] = [
        n
        for n in notes
        if not (
            n.kind == "server-chosen"
            and n.at.file in assumed
            and (n.at not in kept_at or ASSUMED_UNSET in n.message or UNCALLED in n.message)
        )
    ]
    kept = [a for i, a in enumerate(apps) if i not in dropped]
    # `processes = $(UWSGI_PROCESSES)` read alone is unknown (a default at that line); the
    # chain that exports it (a script) reads its value there: the note of the shorter reading
    # goes, unless a kept reading is still left with the default there.
    known = {at for i in range(len(apps)) if i not in dropped for at in read_at[i]}
    known &= {at for i in dropped for at in _settings_at(apps[i], defaults=True)}
    known -= {at for app in kept for at in _settings_at(app, defaults=True)}
    notes[:] = [
        n
        for n in notes
        if not (n.kind == "unresolved-variable" and n.at.file in files and n.at in known)
    ]
    without_false_starts(kept, notes)
    return kept


#: gunicorn's options that load the application from a PasteDeploy ini.
_PASTE_FLAGS = ("--paste", "--paster")


def _paste_pattern(text: str) -> str | None:
    """The path a `--paste VALUE` left out (a variable in it) may name, the variables as `*`
    (`./ini/${INI_NAME}` -> `ini/*`); None for another option."""
    flag, _, value = text.replace("=", " ", 1).partition(" ")
    if flag not in _PASTE_FLAGS or not value.strip():
        return None
    value = value.strip().strip("'\"").removeprefix("config:").split("#", 1)[0]
    pattern = re.sub(r"\$\{[^}]*\}|\$\w+", "*", value)
    return os.path.normpath(pattern).lstrip(os.sep)


def _paste_matches(pattern: str, path: Path) -> bool:
    """Whether `path` may be the file `pattern` names (a path in a container matched by its
    tail, from its folder and name at least)."""
    wanted = pattern.split(os.sep)
    parts = path.parts
    shortest = min(len(wanted), 2)
    return any(
        len(parts) >= size and all(map(fnmatch.fnmatchcase, parts[-size:], wanted[-size:]))
        for size in range(len(wanted), shortest - 1, -1)
    )


def _paste_loaded(app: AppServer, apps: Sequence[AppServer], notes: list[Note]) -> bool:
    """`app` is a PasteDeploy ini's `[server:*]` read alone, and a gunicorn here loads that ini
    through `--paste` (found, or a path with a variable that may name it): gunicorn takes only
    the application from it and ignores the server section ("using alternate server blocks is
    not supported", its docs), so the section is no launch. Said in one note at the ini."""
    if app.container is not None or app.launched_by or app.file.suffix != ".ini":
        return False
    for other in apps:
        if other is app or other.kind != "gunicorn":
            continue
        if app.file in other.config_parts:
            by = other.launched_by[-1] if other.launched_by else Location(other.file)
            how = f"{by}: `gunicorn --paste` reads"
        else:
            may = [
                s
                for s in other.unresolved
                if (p := _paste_pattern(s.value)) and _paste_matches(p, app.file)
            ]
            if not may:
                continue
            how = f"{may[0].at}: `gunicorn {may[0].value}` may read"
        notes.append(
            Note(
                "starts-no-server",
                Location(app.file),
                f"{app.file}: its server section is no launch: {how} it for the application only"
                ", and gunicorn ignores a PasteDeploy server section",
            )
        )
        return True
    return False


def _extended(app: AppServer, apps: Sequence[AppServer]) -> bool:
    """`app` is a compose service another file's service `extends` (`extends: {file:
    docker-compose.apps.yml, service: web}`, mitodl/mit-learn) and that service runs the
    same server by the same lines: the base file read on its own is the extending launch's.
    A service extended in its own file (`extends: app`) is a container of that file's stack."""
    box = app.container
    if box is None or box.platform != "compose":
        return False
    base = (Path(os.path.normpath(box.at.file)), box.name)
    return any(
        other is not app
        and other.kind == app.kind
        and other.container is not None
        and other.container.extends == base
        and Path(os.path.normpath(other.container.at.file)) != base[0]
        and set(app.launched_by) <= set(other.launched_by)
        for other in apps
    )


def without_false_starts(apps: Sequence[AppServer], notes: list[Note]) -> None:
    """No `starts-no-server` note for a file a launch goes through (a compose file or
    manifest whose container the chain starts at, a script an image runs), and no
    `not-followed` note at a line it goes through: the launch graph shows what it starts."""
    linked = {p.resolve() for app in apps for p in chain_files(app)}
    # A line a launch was followed through is not "not followed" (a script read alone, without
    # the image's variables, could not follow it). Not the chain's first line, though: that is
    # where a run's arguments are given (an image's ENTRYPOINT, with a compose service's
    # `command: runserver` over it), and another run of that line is another launch.
    steps = {(at.file.resolve(), at.line) for app in apps for at in app.launched_by[1:]}
    # A `server-chosen` note says one of its lines was read; when a launch was read through
    # each (a reading that knew the first daemonizes, where one alone could not), all run.
    through = {(at.file.resolve(), at.line) for app in apps for at in _locations(app)}
    notes[:] = [
        n
        for n in notes
        if not (n.kind == "starts-no-server" and n.at.file.resolve() in linked)
        and not (n.kind == "not-followed" and (n.at.file.resolve(), n.at.line) in steps)
        and not (n.kind == "server-chosen" and _each_line_run(n, through))
    ]


def _picked_elsewhere(apps: Sequence[AppServer], chains: Sequence[set[Path]]) -> set[int]:
    """The branches a variable picks (`AppServer.when`) whose files a longer chain runs (a
    compose service running the image): that chain's environment decides the variable, or
    its own reading picks the branch as well, so they are no launches of their own."""
    return {
        i
        for i, app in enumerate(apps)
        if app.when is not None and any(chains[i] < c for c in chains)
    }


def _each_line_run(chosen: Note, through: set[tuple[Path, int]]) -> bool:
    """Whether every line a `server-chosen` note names (`gunicorn at line 2`) is one a launch
    goes through."""
    lines = re.findall(r"\bat line (\d+)\b", chosen.message)
    file = chosen.at.file.resolve()
    return len(set(lines)) > 1 and all((file, int(line)) in through for line in lines)


@dataclass(frozen=True)
class Launch:
    """One app server and what starts it."""

    app: AppServer
    #: The files that start it, in launch order, each at its first line read.
    chain: tuple[Location, ...]
    #: Fronts that pass to it: nginx `*_pass` lines and load balancer server lines.
    fronts: tuple[Location, ...]
    #: Why it is a development launch, or no launch of its own, whose faults are not judged
    #: (`servertune.check.development`); "" when it is judged.
    not_judged: str = ""
    #: For each of `fronts`, the `include` lines that bring a pass written in a snippet into
    #: the config nginx serves, the nearest first; () for a front its own file writes. A
    #: snippet two sites include is two fronts at one line, one per site.
    included_from: tuple[tuple[Location, ...], ...] = ()
    #: Why a server config read on its own is no launch of this repository, said in place of
    #: its sizing (`servertune.check.unstarted.unused_launches`): "unused: no launch here names
    #: it", or "not followed: ..." when a step check could not follow may start it; "" else.
    unused: str = ""


def _base_step(app: AppServer) -> Location | None:
    """The FROM line of a well-known base image whose start script a script of the image runs
    (`dockerfile._through_base`: Dockerfile CMD -> entrypoint.sh -> the base's /start.sh): the
    last step of the app's chain, back in the file of its first step above that step's line
    (a FROM is above the CMD of its stage); None otherwise."""
    steps = app.launched_by
    if app.started_by_base is None or len(steps) < 2:
        return None
    last = steps[-1]
    return last if last.file == steps[0].file and last.line < steps[0].line else None


def _back_to_base(app: AppServer, chain: tuple[Location, ...]) -> tuple[Location, ...]:
    """`chain` (one step per file) with the app's own steps as they run when it ends in a
    base image's start script (`_base_step`): the Dockerfile at its CMD line, the scripts,
    and the Dockerfile again at the FROM line (a RUN-written /entrypoint.sh is a step of the
    Dockerfile too)."""
    if _base_step(app) is None:
        return chain
    lead = chain[:1] if app.container is not None else ()
    files = {at.file for at in app.launched_by} - {at.file for at in lead}
    steps = [at for at in dict.fromkeys(app.launched_by) if at.file in files]
    rest = [at for at in chain[len(lead) :] if at.file not in files]
    return (*lead, *steps, *rest)


def launches(
    apps: Sequence[AppServer], links: Sequence[Link], balancer_links: Sequence[BalancerLink] = ()
) -> list[Launch]:
    """Each app server with its chain (each file at the first line a setting was read at) and
    its fronts (the nginx passes and load balancer server lines linked to it)."""
    out: list[Launch] = []
    for app in apps:
        lines: dict[Path, int] = {}
        for at in _locations(app)[1 if app.container is None else 2 :]:
            lines[at.file] = min(lines.get(at.file, at.line), at.line)
        if app.container is not None:
            lines[app.container.at.file] = app.container.at.line
        chain = _back_to_base(app, tuple(Location(p, lines.get(p, 1)) for p in chain_files(app)))
        fronts = [
            (link.passing.at, link.passing.included_from) for link in links if link.app is app
        ]
        # An Ingress's pass goes through a Service to the pod, but a Service is no proxy
        # (kube-proxy forwards at L4: no timeout or keep-alive of its own to judge), so its
        # port line is not a front: the Ingress's path is.
        fronts += [(link.server.at, ()) for link in balancer_links if link.app is app]
        kept = _with_includes(fronts)
        aside = development_reason(app, apps) or ""
        fronts_at = tuple(at for at, _ in kept)
        out.append(Launch(app, chain, fronts_at, aside, tuple(via for _, via in kept)))
    return out


def _with_includes(
    fronts: Sequence[tuple[Location, tuple[Location, ...]]],
) -> list[tuple[Location, tuple[Location, ...]]]:
    """Each front once per include chain that brings it in, in order. A chain another at the
    same line extends is dropped: that file read on its own (a snippet, or a site that
    nginx.conf includes) is the same pass the longer chain shows served."""

    def extended(at: Location, via: tuple[Location, ...]) -> bool:
        return any(
            other == at and len(longer) > len(via) and longer[: len(via)] == via
            for other, longer in fronts
        )

    return list(dict.fromkeys((at, via) for at, via in fronts if not extended(at, via)))


def _started_by(app: AppServer) -> str:
    box = app.container
    if box is None:
        return ""
    what = "service" if box.platform == "compose" else "container"
    return f"{box.platform} {what} {box.name}"


def describe(launch: Launch) -> str:
    """One line: `compose service web -> Dockerfile:7 -> entrypoint.sh:4 -> gunicorn 5 x 1 on
    0.0.0.0:8000 (config gunicorn.conf.py), behind nginx.conf:5`."""
    app = launch.app
    steps = [str(at) for at in launch.chain]
    if app.container is not None:
        steps[0] = f"{_started_by(app)} ({launch.chain[0]})"
    base = _base_step(app)
    if base is not None:
        # A script of the image runs the base's start script: said at its FROM line.
        steps = [
            f"{s} ({app.started_by_base})" if at == base else s
            for s, at in zip(steps, launch.chain, strict=True)
        ]
    elif app.started_by_base is not None and app.launched_by:
        # The image's FROM line: what runs is the base image's process (s6-overlay's /init).
        image = app.launched_by[0]
        steps = [
            f"{s} ({app.started_by_base})" if at.file == image.file else s
            for s, at in zip(steps, launch.chain, strict=True)
        ]
    if app.assumed_branch is not None:
        # The script's first argument is given by no file read: the branch read is assumed.
        branch, test = app.assumed_branch
        steps = [
            f"{s} (branch assumed: line {branch.line} `{test}`)" if at.file == branch.file else s
            for s, at in zip(steps, launch.chain, strict=True)
        ]
    if app.when is not None:
        # Another branch than the one read where nothing sets the variable: the user's pick.
        steps[-1] = f"{steps[-1]} (when {app.when})"
    if launch.unused:
        # Nothing here runs it: its counts and address size nothing.
        fronts = ", ".join(_front_text(launch, index) for index in range(len(launch.fronts)))
        return " -> ".join([*steps, f"{app.kind}: {launch.unused}"]) + (
            f"; passed to by {fronts}" if fronts else ""
        )
    sockets = ", ".join(s.value for s in app.sockets) or "no socket known"
    # A count the files write but check could not work out is no count (`AppServer.unknown`).
    workers, threads = ("?" if f in app.unknown else "" for f in ("workers", "threads"))
    server = (
        f"{app.kind} {workers or app.workers.value} x {threads or app.threads.value} on {sockets}"
    )
    if app.reloads is not None:
        # A reloader (`--reload`) runs no count worth judging; it is a developer's run unless
        # the files say a deployment runs it (reloader-in-production says so there).
        # The reloader alone makes no development launch: names do (`not_judged`), else the
        # launch is said to be neither when no file says a deployment runs it.
        production = production_evidence(app, overridden=False)
        run = (
            "a production launch"
            if production
            else "a development launch"
            if is_development(launch)
            else "a launch no file says is production's or a developer's"
        )
        server = (
            f"{app.kind} on {sockets}, {run} (reloads on code changes, {app.reloads.at}): not sized"
        )
        server += "; faults not judged" if launch.not_judged else ""
    elif launch.not_judged:
        server += f", {launch.not_judged}: faults not judged"
    fronts = ", ".join(_front_text(launch, index) for index in range(len(launch.fronts)))
    return " -> ".join([*steps, server]) + f"; behind {fronts or 'no front found'}"


def is_development(launch: Launch) -> bool:
    """The launch is a developer's by its names (`development_reason`): a reloader alone
    (`--reload`) does not say so, as a Procfile's `web` process or a unit may run one."""
    return launch.not_judged.startswith(DEVELOPMENT_LAUNCH)


def _included_from(launch: Launch, index: int) -> tuple[Location, ...]:
    return launch.included_from[index] if index < len(launch.included_from) else ()


def _front_text(launch: Launch, index: int) -> str:
    """`snippets/x.conf:13`, or `snippets/x.conf:13 (included from sites/a.conf:40)` for a
    pass a site brings in by `include` (nearest include first)."""
    via = _included_from(launch, index)
    where = f" (included from {', '.join(str(at) for at in via)})" if via else ""
    return f"{launch.fronts[index]}{where}"


def _config_in_chain(launch: Launch) -> str | None:
    """The first file of the chain named like a config, not one that starts the server (a
    supervisord program's `ui.ini` running a script is a step, not the server's config; a
    Python launcher whose `uvicorn.run(...)` or `subprocess` call holds the server's command
    line starts it: its keyword arguments are settings, but no file the server reads)."""
    app = launch.app
    steps = {at.file for at in app.launched_by}
    if app.launcher is not None:
        steps.add(app.launcher)
    if app.kind == "gunicorn":
        # The PasteDeploy ini `--paste` loads gives the application (and logging), none of
        # gunicorn's settings: a step, not its config (apache/allura's docker-dev.ini).
        steps |= {part for part in app.config_parts if part.suffix == ".ini"}
    return next(
        (str(at.file) for at in launch.chain if _rank(at.file) == _CONFIG and at.file not in steps),
        None,
    )


def _front_json(launch: Launch, index: int) -> dict[str, Any]:
    """`{"file", "line"}`, with `included_from` (nearest include first) only for a pass a
    site brings in by `include`: a front its own file writes reads as it always has."""
    at = launch.fronts[index]
    found: dict[str, Any] = {"file": str(at.file), "line": at.line}
    via = _included_from(launch, index)
    if via:
        found["included_from"] = [{"file": str(by.file), "line": by.line} for by in via]
    return found


def launch_json(launch: Launch) -> dict[str, Any]:
    """The launch as JSON: the chain of file:line, the server, its fronts."""
    app = launch.app
    return {
        "started_by": _started_by(app) or None,
        "chain": [{"file": str(at.file), "line": at.line} for at in launch.chain],
        "server": app.kind,
        "workers": app.workers.value,
        "threads": app.threads.value,
        "sockets": [s.value for s in app.sockets],
        "development": is_development(launch),
        "config": str(app.config_file.file)
        if app.config_file is not None
        else _config_in_chain(launch),
        "fronts": [_front_json(launch, index) for index in range(len(launch.fronts))],
        "assumed_branch": {
            "file": str(app.assumed_branch[0].file),
            "line": app.assumed_branch[0].line,
            "test": app.assumed_branch[1],
        }
        if app.assumed_branch is not None
        else None,
        "unused": launch.unused or None,
        # Only on a launch a variable's value picks: every other launch's JSON is as it was.
        **({"when": app.when} if app.when is not None else {}),
    }
