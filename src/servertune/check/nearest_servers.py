"""Which of several servers at one local address a front reaches, when only the address joins
them: the one whose files sit nearest the front's in the repository's folders.

A repository often keeps several setups that each pair a front with a server on the same
address (staffanm/ferenda: `docker/ferenda/nginx.conf` with `docker/ferenda/supervisord.conf`,
`tools/nginx.conf` with `tools/nginx-uwsgi.ini`, all on `unix:/tmp/ferenda.sock`). Such setups
run on different machines or containers; a shared socket path or loopback port does not tie a
front to a server of another setup. So when a front's pass to a local address (a loopback or
wildcard TCP address, a unix socket) reaches servers whose files share folders with it to
different depths, only those sharing the deepest one are joined, and the others are a
coverage note. Of servers equally near, those whose uWSGI `chdir` holds the folder the front
serves (its `root` where the pass is written) are kept: ferenda's tools/nginx-staging.conf
serves /www/staffan/ferenda.lagen.nu/data, tools/uwsgi-staging.ini's chdir, not the developer's
tools/nginx-uwsgi.ini beside it. When none does they are all kept, with a note that the pairing
is not known (nothing in the folders tells them apart),
and a pass to a named host (a compose service, another machine) is tied by its name, not
judged here.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from servertune.check.chain import Link, Stacks, normalise
from servertune.check.model import AppServer, note

if TYPE_CHECKING:
    from servertune.check.dockerfile import Image

__all__ = ["nearest_servers_first"]

#: The hosts that name the machine's own interfaces, as `chain.normalise` writes them.
_LOCAL = frozenset({"127.0.0.1", "0.0.0.0", "[::]", "*", "", "unix"})


def _first(link: Link) -> Path:
    return (link.nginx.files or (link.nginx.file,))[0]


#: The nearness of a server whose image copies the front: they run in one container.
_SAME_IMAGE = 1 << 16


def _nearness(front: Path, app: AppServer, holders: Sequence[Image] = ()) -> int:
    """How many folders the front's file shares with the nearest of the server's files (the
    server's own, those of the launch that starts it and the file that runs its container); the most there is when one of those
    is the Dockerfile of one of `holders`, the images that copy the front by name or folder,
    or a file such an image copies too (a start script beside the front's copy)."""
    own = os.path.dirname(os.path.normpath(front.absolute()))
    best = 0
    # The compose file or manifest that runs the container is one of the launch's files too:
    # a deployment's `deploy/app/docker-compose.yml` sits nearer `deploy/nginx/` than a dev
    # stack's `dev/docker-compose.yml`, though both build the same root Dockerfile.
    box = (app.container.at.file,) if app.container is not None else ()
    for file in (app.file, *(at.file for at in app.launched_by), *box):
        if any(_in_image(file, image, app) for image in holders):
            return _SAME_IMAGE
        folder = os.path.dirname(os.path.normpath(file.absolute()))
        try:
            common = os.path.commonpath([own, folder])
        except ValueError:
            continue
        best = max(best, len(Path(common).parts))
    return best


def nearest_servers_first(links: Sequence[Link], stacks: Stacks | None = None) -> list[Link]:
    """`links` without those of a front's pass to a local address that reaches a server
    farther from the front in the folders than another server the same pass reaches, with a
    coverage note at the pass naming the servers left out. A server whose image copies the
    front (one of `stacks`' images) is as near as can be, wherever its files sit: a front
    two images copy (feathr's `deploy/nginx.conf` in FeathrRegistry.Dockerfile and
    FeathrSandbox.Dockerfile) is each image's own, joined in each."""
    passes: dict[tuple[int, str], list[Link]] = {}
    for k in links:
        if normalise(k.server.value)[0] in _LOCAL:
            passes.setdefault((id(k.passing), k.server.value), []).append(k)
    dropped: set[int] = set()
    apart: list[list[Link]] = []  # groups whose servers no one image runs with the front
    for group in passes.values():
        holders = _holders(_first(group[0]), stacks)
        near = {id(k): _nearness(_first(k), k.app, holders) for k in group}
        deepest = max(near.values())
        far = [k for k in group if near[id(k)] < deepest]
        if deepest < _SAME_IMAGE and len(group) > 1:
            apart.append(group)
        if not far:
            continue
        dropped.update(id(k) for k in far)
        names = ", ".join(sorted({_where(k.app) for k in far}))
        at = far[0].passing.at
        note(
            "not-followed",
            at,
            f"{at}: not joined: {far[0].server.value} is also where {names} listen, in "
            "folders apart from this front's, which a server nearer it listens on too (so "
            "they are another setup's, on a machine or container of its own)",
        )
    kept = [k for k in links if id(k) not in dropped]
    # Servers each in an image that copies the front run each with its own copy: no pairing
    # is in doubt, so `_same_root_first` leaves them be.
    return _same_root_first(kept, apart)


def _holders(front: Path, stacks: Stacks | None) -> tuple[Image, ...]:
    """The images that copy `front` by name, folder or wildcard (not with a whole build
    context, which carries every setup's files)."""
    images = stacks.images if stacks is not None else ()
    return tuple(i for i in images if i.holds(front, whole_context=False) is not None)


def _in_image(file: Path, image: Image, app: AppServer) -> bool:
    """`file` is the image's Dockerfile, where the launch of `app` runs what the image runs
    (see `_runs_image`), or a file the image copies by name or folder."""
    real = os.path.normpath(file.absolute())
    if real == os.path.normpath(image.path.absolute()):
        return _runs_image(app, image, real)
    return image.holds(file, whole_context=False) is not None


def _serves(root: str, chdir: str) -> bool:
    """`root` (a front's folder of files) lies in `chdir` (a server's folder): one site's."""
    if not root.startswith("/") or not chdir.startswith("/"):
        return False
    return os.path.commonpath([root, chdir]) == os.path.normpath(chdir)


def _same_root_first(links: list[Link], groups: Sequence[Sequence[Link]]) -> list[Link]:
    """`links` without those of a pass, among several servers equally near it at one local
    address, to a server whose `chdir` is not the folder its front's `root` lies in, when
    another's is (a coverage note says which were left out); a pass no `chdir` tells apart
    keeps them all, with a note that which one it reaches is not known."""
    left = {id(k) for k in links}
    dropped: set[int] = set()
    for group in groups:
        group = [k for k in group if id(k) in left]
        if len({id(k.app) for k in group}) < 2:
            continue
        root, at, address = group[0].passing.root, group[0].passing.at, group[0].server.value
        same = [k for k in group if _serves(root, k.app.chdir)]
        names = ", ".join(sorted({_where(k.app) for k in group if k not in same}))
        if same:
            dropped.update(id(k) for k in group if k not in same)
            why = f"whose chdir is not the folder this front serves (root {root})"
            note(
                "not-followed",
                at,
                f"{at}: not joined: {address} is also where {names} listen, {why}",
            )
            continue
        note(
            "not-followed",
            at,
            f"{at}: joined to each of {names}: they listen at {address}, and no root and chdir"
            " here say which of them this front reaches, so its findings may pair it with"
            " another setup's server",
        )
    return [k for k in links if id(k) not in dropped]


def _where(app: AppServer) -> str:
    """The file that starts `app`, as a coverage note names it."""
    return str(app.launched_by[0]) if app.launched_by else app.file.as_posix()


def _runs_image(app: AppServer, image: Image, dockerfile: str) -> bool:
    """The launch of `app` passes through the image's own ENTRYPOINT or CMD line, when the
    Dockerfile writes one: another stage of the same Dockerfile (a target compose builds)
    starts its server from lines of its own, and copies its own front (seanmorley15/
    AdventureLog: stages `backend` and `aio` each COPY their nginx.conf to one path)."""
    starts = {
        word.at.line
        for word in (*image.entrypoint, *image.cmd)
        if os.path.normpath(word.at.file.absolute()) == dockerfile
    }
    lines = {
        at.line for at in app.launched_by if os.path.normpath(at.file.absolute()) == dockerfile
    }
    return not starts or not lines or bool(starts & lines)
