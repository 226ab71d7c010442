"""Faults in files no launch here starts, in a walked tree: said as `info` at most.

A server config found in a folder is read on its own, as the root of its own launch, so that a
config given alone (a user's gunicorn.conf.py, a folder of configs) is still judged. In a
repository whose launches are followed from a starter (a Dockerfile's command, a compose
service, a pod, a Procfile, a systemd unit, a script an image runs), a config, supervisord file
or front that none of them reaches is another matter: a leftover (staffanm/ferenda keeps
supervisord.conf files for uWSGI in docker/ferenda/ while its image runs gunicorn), a
developer's copy, or a setup deployed by hand from files not here. Its faults are said, as a
note, with why ("nothing in these files starts it"), never as a warning a maintainer is sent.
A config named as an example (`config/example.ini`) nothing starts is such a file even in a
tree with no launch: a copy to edit (`servertune.check.examples`).

Not capped: files a launch reaches (`graph.chain_files`); everything when no launch outside
development is followed (then the configs are what the tree deploys); files in the folder of a
Dockerfile whose own command was not followed (its image may copy them and start them through
a file not here: `CMD supervisord -c /etc/supervisor/supervisord.conf` with the program in
`conf.d/`); a file given by name (`Context.walked` is false).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Sequence
from pathlib import Path

from servertune.check.commands import is_dockerfile
from servertune.check.development import development_reason
from servertune.check.examples import named_as_example
from servertune.check.graph import Launch, chain_files, named_as_config
from servertune.check.model import AppServer, Finding, Location, Note, Severity

__all__ = ["unstarted_capped", "unused_launches", "unused_reasons"]


def _key(path: Path) -> str:
    return str(path.resolve())


def _launched(app: AppServer) -> bool:
    return bool(app.launched_by) or app.container is not None


def _deployed_launch(apps: Sequence[AppServer]) -> Location | None:
    """The first step of the first launch here followed from a starter and not a developer's
    run; None when there is none."""
    for app in apps:
        if _launched(app) and development_reason(app, apps) is None:
            return app.container.at if app.container is not None else app.launched_by[0]
    return None


def _maybe_started(file: Path, notes: Sequence[Note]) -> bool:
    """`file` lies in the folder of a Dockerfile whose command was not followed: the image
    may copy it and start it through a file that is not here."""
    target = _key(file)
    return any(
        n.kind == "not-followed"
        and is_dockerfile(n.at.file)
        and target.startswith(_key(n.at.file.parent) + os.sep)
        for n in notes
    )


def _alone(apps: Sequence[AppServer], started: set[str], notes: Sequence[Note]) -> dict[str, Path]:
    """The files of the servers no launch here starts (by resolved path), none a launch
    reaches."""
    alone: dict[str, Path] = {}
    for app in apps:
        if _launched(app):
            continue
        for path in chain_files(app):
            key = _key(path)
            if key not in started and not _maybe_started(path, notes):
                alone.setdefault(key, path)
    return alone


def _why(finding: Finding, alone: dict[str, Path], by: Location | None) -> str | None:
    """Why `finding` is a note: its file is an example or one nothing starts, or it joins a
    front to servers nothing starts; None when it stays as graded."""
    file = finding.at.file
    if _key(file) in alone:
        return (
            f"nothing in these files starts it: no launch here runs {file.name}, while {by}"
            " starts this repository's server; info, not a fault of the deployment"
        )
    related = [at.file for at in finding.related]
    if related and all(_key(p) in alone for p in related):
        names = ", ".join(dict.fromkeys(p.name for p in related))
        return (
            f"nothing in these files starts it: no launch here runs {names}, the server this"
            f" is joined to, while {by} starts this repository's server; info, not a fault of"
            " the deployment"
        )
    if named_as_example(file):
        return f"{file.name} is named as an example and no launch here starts it: info, not a fault of the deployment"
    return None


def _naming_line(name: str, files: Sequence[Path], own: set[str]) -> Location | None:
    """The first line of a file read here, not one of `own`, that names the file `name`
    (`UWSGI_INI=/app/uwsgi.ini` in an env file, `-c conf/gunicorn.py` in a script check did
    not follow), outside comments and the COPY / ADD lines that only place it in an image."""
    pattern = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])")
    for file in dict.fromkeys(files):
        if _key(file) in own:
            continue
        try:
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            words = line.split()
            if not words or words[0].startswith("#") or words[0].upper() in {"COPY", "ADD"}:
                continue
            if pattern.search(line):
                return Location(file, number)
    return None


def _reason(
    path: Path, apps: Sequence[AppServer], notes: Sequence[Note], files: Sequence[Path]
) -> str:
    """Why the server config `path`, which no launch followed here reaches, is not a launch:
    unused when nothing names it; not followed when a launch may read it by default, a file
    names it or a step check could not follow may start it."""
    if path.name == "gunicorn.conf.py":
        # A bare `gunicorn` reads ./gunicorn.conf.py from its working directory (the default
        # of `-c`), a folder check may not have placed.
        bare = next(
            (a for a in apps if a.kind == "gunicorn" and _launched(a) and a.config_file is None),
            None,
        )
        if bare is not None:
            at = bare.container.at if bare.container is not None else bare.launched_by[0]
            return (
                f"not followed: {at} runs gunicorn without -c, which reads ./gunicorn.conf.py"
                " from its working directory, and check did not place it there"
            )
    own = {_key(p) for a in apps for p in chain_files(a) if path in chain_files(a)}
    named = _naming_line(path.name, files, own | {_key(path)})
    if named is not None:
        return f"not followed: {named} names it, in no step check followed to a launch"
    stopped = next((n for n in notes if n.kind == "not-followed"), None)
    if stopped is not None:
        return f"not followed: {stopped.at} was not followed and may start it"
    return "unused: no launch here names it"


def unused_reasons(
    apps: Sequence[AppServer], notes: Sequence[Note], files: Sequence[Path]
) -> dict[str, str]:
    """For each server config (no script) of a walked tree that no launch followed from a starter reaches
    (by resolved path), why it is no launch: "unused: no launch here names it" or "not
    followed: ..." (`_reason`). Empty when no launch outside development is followed: then the
    configs are what the tree deploys."""
    started = {_key(p) for a in apps if _launched(a) for p in chain_files(a)}
    if _deployed_launch(apps) is None:
        return {}
    alone = _alone(apps, started, notes)
    # A script nothing runs is said by its own rules (`entrypoint-without-exec-unlaunched`).
    return {
        key: _reason(path, apps, notes, files)
        for key, path in alone.items()
        if named_as_config(path)
    }


def unused_launches(
    launches: Sequence[Launch],
    apps: Sequence[AppServer],
    notes: Sequence[Note],
    files: Sequence[Path],
) -> list[Launch]:
    """`launches`, each server config nothing followed here starts marked with why
    (`Launch.unused`): said so in the launch graph instead of as a launch of its own."""
    reasons = unused_reasons(apps, notes, files)
    marked: list[Launch] = []
    for launch in launches:
        keys = [_key(at.file) for at in launch.chain]
        if _launched(launch.app) or not keys or not all(k in reasons for k in keys):
            marked.append(launch)
            continue
        said = [reasons[k] for k in keys]
        why = next((r for r in said if r.startswith("not followed")), said[0])
        marked.append(dataclasses.replace(launch, unused=why))
    return marked


def unstarted_capped(
    findings: Sequence[Finding],
    apps: Sequence[AppServer],
    notes: Sequence[Note],
    files: Sequence[Path] = (),
) -> list[Finding]:
    """`findings` of a walked tree whose launches are `apps` (development ones too), each one
    in a file no launch starts lowered to `info`, saying why; the rest as they are. servertune's
    advice (a plan for a server that runs) on a config nothing here names is left out."""
    if not findings:
        return list(findings)
    unused = {k for k, r in unused_reasons(apps, notes, files).items() if r.startswith("unused")}
    findings = [
        f for f in findings if not (f.severity == Severity.advice and _key(f.at.file) in unused)
    ]
    started = {_key(p) for a in apps if _launched(a) for p in chain_files(a)}
    by = _deployed_launch(apps)
    alone = _alone(apps, started, notes) if by is not None else {}
    capped: list[Finding] = []
    for finding in findings:
        why = None
        if finding.severity > Severity.info and _key(finding.at.file) not in started:
            why = _why(finding, alone, by)
        if why is None:
            capped.append(finding)
        else:
            message = f"{finding.message} ({why})"
            capped.append(dataclasses.replace(finding, severity=Severity.info, message=message))
    return capped
