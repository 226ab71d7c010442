"""Which deployment environment a front and a server are written for, when a repository keeps
each environment's files in a folder of its name (DOAJ/doaj: `deploy/supervisor/production/`,
`deploy/supervisor/test/`, `deploy/nginx/production/`, `deploy/nginx/test/`). Environments
run on machines of their own: a front of one never reaches a server another's files start,
even at the same local address, and a front whose upstream is other machines' literal
addresses (the production site's app hosts) reaches the server its own environment's files
start on that port (a multi-host layout: those hosts run it).

The environment is read from the folders below the deepest folder the front and the server's
files share (so nothing above the repository, and no folder both sit in, counts); a side with
no such folder, or with two environments, is not known, and nothing is decided by it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from servertune.check.development_folders import DEVELOPMENT_WORDS
from servertune.check.model import AppServer

__all__ = ["developer_front", "environments_differ", "same_environment"]

#: Folder names that name a deployment environment, with the environment each names.
_ENVIRONMENTS = {
    "production": "production",
    "prod": "production",
    "staging": "staging",
    "stage": "staging",
    "preprod": "staging",
    "test": "test",
    "testing": "test",
    "qa": "test",
    "uat": "test",
    "development": "development",
    "dev": "development",
}


def _files(app: AppServer) -> list[str]:
    return [
        os.path.normpath(f.absolute()) for f in (app.file, *(at.file for at in app.launched_by))
    ]


def _named(folder: str, below: str) -> set[str]:
    """The environments the folders of `folder` below `below` name."""
    parts = Path(os.path.relpath(folder, below)).parts if folder != below else ()
    return {_ENVIRONMENTS[p.lower()] for p in parts if p.lower() in _ENVIRONMENTS}


def _environments(front: Path, app: AppServer) -> tuple[str | None, str | None]:
    """(the front's environment, the server's), each None when not known."""
    folders = [os.path.dirname(f) for f in _files(app)]
    own = os.path.dirname(os.path.normpath(front.absolute()))
    try:
        common = os.path.commonpath([own, *folders])
    except ValueError:
        return None, None
    front_side = _named(own, common)
    app_side = set().union(*(_named(f, common) for f in folders))
    one = next(iter(front_side)) if len(front_side) == 1 else None
    other = next(iter(app_side)) if len(app_side) == 1 else None
    return one, other


def environments_differ(front: Path, app: AppServer) -> bool:
    """The front's folders name one environment and the server's files another."""
    mine, theirs = _environments(front, app)
    return mine is not None and theirs is not None and mine != theirs


def same_environment(front: Path, app: AppServer) -> bool:
    """The front's folders and the server's files name the same one environment."""
    mine, theirs = _environments(front, app)
    return mine is not None and mine == theirs


def developer_front(front: Path, app: AppServer) -> bool:
    """The front sits in a folder of developer tools (swirlai/swirl-search's
    `DevUtils/nginx/nginx.conf`: a word of a folder name below the folder it shares with the
    server's files names development) and the server is no development server and its files
    name no development environment (a reloading server is the developer's): a developer's sample for a server run by hand, not the
    deployment's front."""
    if app.reloads is not None and app.reloads.value:
        return False
    folders = [os.path.dirname(f) for f in _files(app)]
    own = os.path.dirname(os.path.normpath(front.absolute()))
    try:
        common = os.path.commonpath([own, *folders])
    except ValueError:
        return False
    if any("development" in _named(f, common) for f in folders):
        return False
    parts = Path(os.path.relpath(own, common)).parts if own != common else ()
    words = {w.lower() for p in parts for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", p)}
    return bool(words & DEVELOPMENT_WORDS)
