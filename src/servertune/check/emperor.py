"""uWSGI's emperor: `uwsgi --emperor DIR` (or `emperor = DIR` in its ini) serves no app itself;
it runs each vassal config in DIR (a folder, or a glob such as `/etc/uwsgi/vassals/*.ini`) as a
uWSGI instance of its own and restarts it when it dies
(https://uwsgi-docs.readthedocs.io/en/latest/Emperor.html). So each vassal ini the repository
holds where DIR points is a launch, started by the emperor's own starter (a systemd unit), and
the emperor is no server to size. DIR is a path of the deployed host: the vassal folders are
those of the repository whose path ends with DIR's longest tail any of them matches
(`deploy/production/etc/uwsgi/vassals` for `/etc/uwsgi/vassals`, one per environment)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from servertune.check.deploy_installs import installed_as
from servertune.check.model import AppServer, Note

__all__ = ["VASSAL_SUFFIXES", "vassals_started"]

#: The config files an emperor watching a folder takes as vassals (the Emperor docs' "files
#: ending in .ini, .xml, .yml, .yaml, .json, .js"); check reads uWSGI's ini.
VASSAL_SUFFIXES = (".ini", ".xml", ".yml", ".yaml", ".json", ".js")


def _tail(folder: str, file: PurePosixPath, pattern: str) -> int:
    """How many of `folder`'s last parts `file`'s own folder ends with (0: none, or the file's
    name is not one the emperor takes)."""
    if not fnmatchcase(file.name, pattern):
        return 0
    wanted = [p for p in PurePosixPath(folder).parts if p != "/"]
    held = list(file.parent.parts)
    count = 0
    while count < min(len(wanted), len(held)) and wanted[-1 - count] == held[-1 - count]:
        count += 1
    return count


#: The score of a config a deploy tool installs in the emperor's folder: above any tail.
_INSTALLED = 1_000


def _installed_in(folder: str, installed: PurePosixPath, pattern: str) -> bool:
    """Whether the host path `installed` is a vassal of an emperor watching `folder` for
    names matching `pattern`."""
    wanted = PurePosixPath(folder)
    return installed.parent == wanted and fnmatchcase(installed.name, pattern)


def _vassals(emperor: str, apps: Sequence[AppServer]) -> list[int]:
    """The indexes of the uWSGI configs read alone (nothing starts them) that are vassals of
    an emperor watching `emperor`: those whose folder ends with the longest tail of it."""
    where = PurePosixPath(emperor)
    glob = any(c in where.name for c in "*?[")
    folder, pattern = (str(where.parent), where.name) if glob else (emperor, "*")
    scores: dict[int, int] = {}
    for index, app in enumerate(apps):
        if app.kind != "uwsgi" or app.launched_by or app.container is not None:
            continue
        file = PurePosixPath(app.file.as_posix())
        if file.suffix not in VASSAL_SUFFIXES or app.emperor is not None:
            continue
        scores[index] = _tail(folder, file, pattern)
        installed = installed_as(app.file)
        if installed is not None and _installed_in(folder, PurePosixPath(installed), pattern):
            # A deploy tool installs it there (an ansible role's template, or a link to it,
            # at `/etc/uwsgi/app.ini`): that is the vassal, above any folder's likeness.
            scores[index] = _INSTALLED
    best = max(scores.values(), default=0)
    return [i for i, score in scores.items() if score == best and best > 0]


def vassals_started(apps: Sequence[AppServer], notes: list[Note]) -> list[AppServer]:
    """`apps` with each emperor replaced by its vassals, each launched by the emperor's
    starter; an emperor whose vassals the files do not hold is left out with a note (it is
    no server of its own: its processes and threads are its vassals')."""
    out = list(apps)
    emperors = [i for i, a in enumerate(apps) if a.kind == "uwsgi" and a.emperor is not None]
    # An emperor's ini read on its own is the same emperor as the launch that names it
    # (`--ini emperor.ini`): the launch, with the longer chain, takes the vassals.
    configs = {a.config_file.file for a in apps if a.emperor and a.config_file is not None}
    emperors.sort(key=lambda i: -len(apps[i].launched_by))
    for index in emperors:
        app = apps[index]
        if app.emperor is None or (not app.launched_by and app.file in configs):
            continue
        vassals = _vassals(app.emperor.value, out)
        start = app.launched_by or (app.emperor.at,)
        for vassal in vassals:
            out[vassal] = replace(out[vassal], launched_by=(*start, *out[vassal].launched_by))
        if not vassals:
            at = app.emperor.at
            notes.append(
                Note(
                    "not-followed",
                    at,
                    f"{at}: not followed: a uWSGI emperor runs the vassal configs in "
                    f"{app.emperor.value}, and no uWSGI config here sits in a folder of that "
                    "name, so its servers are not known",
                )
            )
    return [a for i, a in enumerate(out) if i not in emperors]
