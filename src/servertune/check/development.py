"""Development launches: the runs a developer starts, not a deployment, on evidence in the files.

A server started through a file, container or stage named for development
(`scripts/run-django-dev.sh`, `compose/override.dev.yml`, a `dev` service or stage) is a
developer's run: check names it in the launch graph and judges none of its faults (its stop is
a developer's `docker compose down`, its front a laptop's); a reloader (`--reload`) is not sized
(`Context.sized`) but is judged, as a production compose file may run one. An image's own
command that every container here replaces with its own (`command:`), while the project is
deployed by another launch here (a Procfile, a pod, a platform), is no launch of its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from servertune.check.commands import Word, is_dockerfile
from servertune.check.deploy_installs import installed_as
from servertune.check.development_folders import development_folder, tree_folders
from servertune.check.entry_names import PROCFILE_WEB, entry_name
from servertune.check.front_names import (
    DEVELOPMENT_WORDS,
    named_for_development,
    settings_read_at,
    words_of,
)
from servertune.check.model import (
    DEVELOPMENT_SERVER_DEPLOYED,
    AppServer,
    Location,
    note,
)
from servertune.check.unfollowed import NOT_FOR_PRODUCTION, development_server_at

__all__ = [
    "DEVELOPMENT_LAUNCH",
    "compose_development_server",
    "development_folder",
    "development_reason",
    "launch_line",
    "production_compose",
    "production_evidence",
    "production_launch",
    "production_name",
]

#: Words of a compose file's name, or of a folder holding it, that say production's stack
#: (`docker-compose.prod.yml`, `deploy/production/compose.yaml`).
_PRODUCTION_WORDS = frozenset({"prod", "production"})
#: How `development_reason` starts when names say a developer's run (not "no launch of its
#: own"): the launch graph's `development` mark.
DEVELOPMENT_LAUNCH = "a development launch"


def production_launch(app: AppServer, overridden: bool) -> bool:
    """Started where a deployment runs it (`production_evidence`), or as an image's own
    command (its final stage: a compose service that builds another stage has a container)
    that no other container's command may replace, under no name that says development."""
    if production_evidence(app, overridden) is not None:
        return True
    image = (
        app.container is None
        and bool(app.launched_by)
        and is_dockerfile(app.launched_by[0].file)
        and not overridden
    )
    return image and not named_for_development(app)


def production_evidence(app: AppServer, overridden: bool = True) -> str | None:
    """What in the files says `app` is a deployment's launch, not a developer's, in words:
    a pod or a platform's container, a compose file named for production, a systemd unit (a
    host's service: hotosm/raw-data-api's unit its production playbook installs), an image's
    own command (when no container may replace it, `overridden` False) whose Dockerfile or
    script has a development twin beside it (`Dockerfile.dev`, `entrypoint.dev.sh`: this one
    is the other, airweave-ai/airweave's); None when nothing does or a name says development."""
    if named_for_development(app) or _dev_file(app) is not None or _dev_entry(app) is not None:
        return None
    box = app.container
    if box is not None:
        if box.platform != "compose":
            return f"the {box.platform} container {box.name} is a deployment's"
        if box.production:
            return f"a compose file named for production ({box.production}) runs it"
        if box.published:
            return f"compose runs the published image {box.published} with no source mounted"
        return None
    start = launch_line(app)
    entry = _entry_evidence(start) if start is not None else None
    if entry is not None:
        return entry
    if not app.launched_by:
        return None
    first = app.launched_by[0].file
    if first.suffix == ".service":
        return f"the systemd unit {first.name} is a host's service, not a developer's run"
    installed = installed_as(first)
    if installed is not None and installed.endswith(".service"):
        # A unit template a playbook installs (`gunicorn.service.j2`, picoCTF's role).
        return (
            f"a deploy tool installs {first.name} as the systemd unit {installed}, a host's service"
        )
    if not is_dockerfile(first) or overridden:
        return None
    twin = next(
        (t for t in (at.file for at in app.launched_by) if _development_twin(t) is not None),
        None,
    )
    if twin is None:
        return None
    return f"{_development_twin(twin)} beside {twin.name} is the development one, this production's"


def _dev_entry(app: AppServer) -> tuple[Location, str] | None:
    """A step of the launch written under an entry named for development (`just dev`, a tox
    environment `dev-server` a unit runs, release-engineering/exodus-gw's), with its name."""
    start = launch_line(app)
    for step in (*app.launched_by, *((start,) if start is not None else ())):
        entry = entry_name(step)
        if entry is not None and words_of(entry) & DEVELOPMENT_WORDS:
            return step, entry
    return None


def launch_line(app: AppServer) -> Location | None:
    """The first line that starts `app`: its launcher's, else the first line its own file is
    read at (a Procfile's `web:` line); None when no line is known."""
    if app.launched_by:
        return app.launched_by[0]
    lines = [at.line for at in settings_read_at(app) if at.file == app.file and at.line > 0]
    return Location(app.file, min(lines)) if lines else None


def _entry_evidence(at: Location) -> str | None:
    """What the entry the line `at` is written under says of production, in words: a
    Procfile's `web` process, which the platform routes requests to (ourresearch/oadoi's
    Heroku app), or a recipe or target named for production (`just prod`, pyrox0/vgarchive);
    None for another entry, or in a tree folder named for development."""
    name = entry_name(at)
    if name is None or _entry_development(at) is not None:
        return None
    if name == PROCFILE_WEB and at.file.name == "Procfile":
        return f"{at.file.name}'s {name} process is what the platform runs and routes requests to"
    if words_of(name) & _PRODUCTION_WORDS:
        return f"{at.file.name}'s entry {name!r} (line {at.line}) is named for production"
    return None


def _entry_development(at: Location) -> str | None:
    """The Procfile process, recipe or target name the line `at` is under, or a tree folder
    holding its file, when it says development (`web_dev:`, `just dev`); None otherwise."""
    name = entry_name(at)
    if name is not None and words_of(name) & DEVELOPMENT_WORDS:
        return name
    return next((f for f in tree_folders(at.file) if words_of(f) & DEVELOPMENT_WORDS), None)


def _name_words(name: str) -> frozenset[str]:
    """Every word of a file's name, its suffix too (`entrypoint.dev.sh`: entrypoint, dev, sh)."""
    return frozenset(w for w in re.split(r"[^a-z0-9]+", name.lower()) if w)


def _development_twin(file: Path) -> str | None:
    """The name of a file beside `file` named as it is plus a development word
    (`Dockerfile.dev` beside `Dockerfile`, `entrypoint.dev.sh` beside `entrypoint.sh`); None
    when there is none or `file` is itself so named."""
    words = _name_words(file.name)
    if not words or words & DEVELOPMENT_WORDS:
        return None
    try:
        beside = sorted(file.parent.iterdir())
    except OSError:
        return None
    return next(
        (
            other.name
            for other in beside
            if (twin := _name_words(other.name)) & DEVELOPMENT_WORDS
            and twin - DEVELOPMENT_WORDS == words
            and other.is_file()
        ),
        None,
    )


def compose_development_server(service: str, at: Location, words: Sequence[Word]) -> None:
    """Record a `DEVELOPMENT_SERVER_DEPLOYED` note when the compose service `service` (at
    `at`) runs a framework's development server from a file named for production
    (`production_name`) under a service name that says no development."""
    found = development_server_at(words)
    production = production_name(at.file)
    if found is None or production is None or words_of(service) & DEVELOPMENT_WORDS:
        return
    note(
        DEVELOPMENT_SERVER_DEPLOYED,
        found[1],
        f"compose service {service} of a file named for production ({production}) runs "
        f"{found[0]}, {NOT_FOR_PRODUCTION}",
    )


def production_compose(app: AppServer) -> bool:
    """`app` runs in a compose service whose file is named for production (`Container.production`)
    and is started under no name that says development: a deployment's stack, not a
    developer's, so a reloader there is a fault (okfn-brasil/serenata-de-amor's `gunicorn
    --reload` merged into the service by docker-compose.prod.yml)."""
    box = app.container
    return (
        box is not None
        and box.platform == "compose"
        and box.production is not None
        and not named_for_development(app)
    )


def production_name(file: Path) -> str | None:
    """The name of `file`, or of a folder of the tree holding it, that says production
    (`docker-compose.prod.yml`, `deploy/production/compose.yaml`); None when none does, or
    when one of them says development too (`prod.dev.yml`)."""
    names = [*tree_folders(file), file.name]
    if any(words_of(name) & DEVELOPMENT_WORDS for name in names):
        return None
    return next((name for name in names if words_of(name) & _PRODUCTION_WORDS), None)


def _dev_file(app: AppServer) -> Path | None:
    """The first file of the launch (the container's, the lines that start it, the script or
    config it is read from) whose name says development (`override.dev.yml`,
    `run-django-dev.sh`); None when none does. The config an image's own command names
    (`CMD pserve ${INI_FILE}`, `ENV INI_FILE=development.ini`: yeastgenome/SGDBackend-Nex2)
    is not counted: the image, in a file and stage named for no development, runs it by
    default, which is what a deployment of the image runs."""
    files = [app.container.at.file] if app.container is not None else []
    files += [at.file for at in app.launched_by]
    if app.container is not None or not app.launched_by or not is_dockerfile(files[0]):
        files.append(app.file)
    return next((f for f in files if words_of(f.name) & DEVELOPMENT_WORDS), None)


def _replaced_image(app: AppServer, apps: Sequence[AppServer]) -> str | None:
    """Why `app`, an image's own command, is no launch of its own: each container here that
    builds the image replaces that command, and another launch here, through no compose stack,
    is the deployment (a Procfile, a pod); None otherwise."""
    if app.container is not None or not app.launched_by:
        return None
    line = app.launched_by[0]
    if not is_dockerfile(line.file):
        return None
    replacing = [a.container for a in apps if a.container and line in a.container.replaces]
    if not replacing:
        return None
    deployed = [
        a
        for a in apps
        if a.container is not None
        and a.container.platform != "compose"
        and all(at.file != line.file for at in a.launched_by)
        and development_reason(a, ()) is None
    ]
    if not deployed:
        return None
    by = ", ".join(f"{b.name} {b.at}" for b in replacing)
    return (
        "no launch of its own (each container that builds the image here replaces its command:"
        f" {by})"
    )


def _dev_container(app: AppServer) -> str | None:
    """Why the container `app` runs in is a developer's by what its manifest says
    (`Container.development`: an image never pulled, a manifest under a folder for one)."""
    box = app.container
    if box is None or box.development is None:
        return None
    return f"a development launch ({box.development.at}: {box.development.value})"


def development_reason(app: AppServer, apps: Sequence[AppServer]) -> str | None:
    """Why `app` is a development launch by its names (or an image command nothing here
    runs), in words for the launch graph; None when it is not one. `apps`: every app server
    of the run."""
    # A reloader alone does not make one: a production compose file may run `watchmedo
    # auto-restart` (codalab/codabench), and a script's `--reload` may sit under a `--dev`
    # branch no file decides (Zipstack/unstract); its faults are still the deployment's.
    if named_for_development(app):
        return "a development launch (its container, stage or Dockerfile is named for one)"
    dev_file = _dev_file(app)
    if dev_file is not None:
        return f"a development launch (started through {dev_file.name}, named for one)"
    dev_entry = _dev_entry(app)
    if dev_entry is not None:
        start, entry = dev_entry
        return f"a development launch (started by {start.file.name}'s {entry!r}, named for one)"
    container = _dev_container(app)
    if container is not None:
        return container
    return _replaced_image(app, apps) if apps else None
