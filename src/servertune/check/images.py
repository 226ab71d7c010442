"""The images a run's Dockerfiles build, for the files read on their own that they hold.

A supervisord config, an entrypoint or a Procfile found in a folder is read on its own, but it
runs inside the image a Dockerfile of the same repository copies it into: what it names (a
container path such as `/opt/app/gunicorn.conf.py`, or a path relative to the image's WORKDIR,
the working directory its command starts in) is that image's file, found through the image's
COPYs. Each run sets the images once (`images_of_run`); `found_in_images` is asked only after
the file's own folder, and only of the images that copy that very file, so one stack's file is
never taken for another's.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from servertune.check.model import CheckInputError, Location, collect_notes

if TYPE_CHECKING:
    from servertune.check.commands import ConfigFile
    from servertune.check.dockerfile import Image

__all__ = [
    "env_at_of_image",
    "env_of_image",
    "found_in_images",
    "image_holding",
    "image_named",
    "images_of_run",
    "read_images",
]

_IMAGES: contextvars.ContextVar[tuple[Image, ...]] = contextvars.ContextVar(
    "servertune_check_images", default=()
)


def read_images(paths: Sequence[Path]) -> tuple[Image, ...]:
    """The final image of every Dockerfile among `paths` that parses (one that does not is the
    Dockerfile reader's error to report, once, when it is read)."""
    from servertune.check.dockerfile import looks_like_dockerfile, read_image
    from servertune.check.source import read_text

    images: list[Image] = []
    for path in paths:
        if not looks_like_dockerfile(path, ""):
            continue
        try:
            with collect_notes():  # the Dockerfile's own reading says what it notes
                images.append(read_image(path, read_text(path)))
        except (CheckInputError, OSError, ModuleNotFoundError):
            continue  # a missing extra is said in one line when the Dockerfile is read
    return tuple(images)


@contextmanager
def images_of_run(images: Sequence[Image]) -> Iterator[None]:
    """The images of the run in progress, for `found_in_images` (which `commands.beside`
    asks), while the block runs."""
    from servertune.check.commands import IMAGE_ENV_AT, IN_IMAGES

    token = _IMAGES.set(tuple(images))
    hook = IN_IMAGES.set(found_in_images)
    env_hook = IMAGE_ENV_AT.set(env_at_of_image)
    try:
        yield
    finally:
        IMAGE_ENV_AT.reset(env_hook)
        IN_IMAGES.reset(hook)
        _IMAGES.reset(token)


def found_in_images(file: Path, wanted: str, at: Location | None) -> ConfigFile | None:
    """The file `wanted` names (absolute, or relative to the WORKDIR) in the first image of the
    run that copies `file`, the file that names it; None when no image of the run holds `file`
    or that image does not hold `wanted`."""
    for image in _IMAGES.get():
        if image.holds(file) is None:
            continue
        found = image.find(wanted, at)
        if found is not None:
            return found
    return None


def image_named(reference: str, referrer: Path) -> Image | None:
    """The image of the run a compose service's `image:` names when no service builds it
    (`libretranslate/libretranslate:latest` for the repository's docker/Dockerfile): the one
    Dockerfile of the run that sets a command, when the reference's last name is that
    Dockerfile's folder's, or is in the name of a folder above it within the tree check reads
    (the repository's own). A name with no owner (`postgres`, `redis:7`) is a library image,
    never the project's. None when the files do not say which."""
    from servertune.check import resolve

    path = reference.split("@", 1)[0]
    if "/" not in path:
        return None
    name = _plain(path.rsplit("/", 1)[-1].split(":", 1)[0])
    commanded = [image for image in _IMAGES.get() if image.entrypoint or image.cmd]
    if len(name) < 4 or len(commanded) != 1:
        return None
    image = commanded[0]
    folder = image.path.absolute().parent
    if _plain(folder.name) == name:
        return image
    for above in folder.parents:
        if not resolve.inside(above, referrer):
            break
        if name in _plain(above.name):
            return image
    return None


def _plain(name: str) -> str:
    """A name without case and separators (`paperless-ngx`, `Paperless_NGX`: `paperlessngx`)."""
    return "".join(c for c in name.lower() if c.isalnum())


def image_holding(file: Path) -> Image | None:
    """The first image of the run that copies `file` (a compose file inside the build context
    an image copies whole: its `image:` services with no `build` of their own run that image's
    files, `entrypoint: ./docker/entrypoints/uwsgi.sh` relative to its WORKDIR), else None."""
    return next((image for image in _IMAGES.get() if image.holds(file) is not None), None)


def env_of_image(file: Path) -> dict[str, str] | None:
    """The `ENV` of the first image of the run that copies `file` (what a supervisord config
    or a script it holds runs under: `ENV UWSGI_PROCESSES 16` is uWSGI's option), None when no
    image of the run holds it."""
    image = image_holding(file)
    return dict(image.env) if image is not None else None


def env_at_of_image(file: Path, name: str) -> Location | None:
    """The `ENV` line that sets `name` in the first image of the run that copies `file` (the
    line a fix of that variable changes: `ENV UWSGI_PROCESSES 16`), None when none does."""
    image = image_holding(file)
    return image.env_at.get(name) if image is not None else None
