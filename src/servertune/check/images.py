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
import glob
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from servertune.check import memo, resolve
from servertune.check.base_shells import library_image
from servertune.check.image_builds import (
    BuiltFrom,
    built_from,
    dockerfiles_building,
    named_in_own_comments,
)
from servertune.check.image_patterns import matches
from servertune.check.model import CheckInputError, Location, collect_notes, note
from servertune.check.repository_names import origin_owner, repository_names, words

if TYPE_CHECKING:
    from servertune.check.commands import ConfigFile
    from servertune.check.dockerfile import Image

__all__ = [
    "Build",
    "base_image",
    "env_at_of_image",
    "env_of_image",
    "exposed_by_image",
    "files_at",
    "files_in_image",
    "found_in_images",
    "image_holding",
    "image_named",
    "images_of_run",
    "owners_image",
    "published_stage",
    "read_images",
    "run_images",
]

_IMAGES: contextvars.ContextVar[tuple[Image, ...]] = contextvars.ContextVar(
    "servertune_check_images", default=()
)
_BUILDS: contextvars.ContextVar[tuple[Build, ...]] = contextvars.ContextVar(
    "servertune_check_builds", default=()
)


def read_images(paths: Sequence[Path]) -> tuple[Image, ...]:
    """The final image of every Dockerfile among `paths` that parses (one that does not is the
    Dockerfile reader's error to report, once, when it is read)."""
    from servertune.check.budget import each_within_budget
    from servertune.check.commands import is_dockerfile
    from servertune.check.dockerfile import read_image
    from servertune.check.source import read_text

    def image(path: Path) -> Image | None:
        try:
            with collect_notes():  # the Dockerfile's own reading says what it notes
                return read_image(path, read_text(path))
        except (CheckInputError, OSError, ModuleNotFoundError):
            return None  # a missing extra is said in one line when the Dockerfile is read

    # One over its budget is left out: its own reading says so.
    dockerfiles = [p for p in paths if is_dockerfile(p)]
    return tuple(i for _, i in each_within_budget(dockerfiles, image) if i is not None)


def exposed_by_image(dockerfile: Path) -> tuple[str, ...]:
    """The TCP ports the image a Dockerfile of the run in progress builds EXPOSEs (its base's
    too); () when it is none of the run's."""
    wanted = dockerfile.absolute()
    return next((i.exposed for i in _IMAGES.get() if i.path.absolute() == wanted), ())


@contextmanager
def images_of_run(images: Sequence[Image], builds: Sequence[Build] = ()) -> Iterator[None]:
    """The images of the run in progress, for `found_in_images` (which `commands.beside`
    asks) and `image_named`, with the images compose files build and tag, while the block
    runs."""
    from servertune.check.commands import IMAGE_ENV_AT, IN_IMAGES
    from servertune.check.dockerfile import BASE_IMAGE
    from servertune.check.runtime_files import IMAGE_FILES
    from servertune.check.script_folder import HELD_AT
    from servertune.check.uwsgi import IMAGE_FILES as UWSGI_IMAGE_FILES

    token = _IMAGES.set(tuple(images))
    built = _BUILDS.set(tuple(builds))
    hook = IN_IMAGES.set(found_in_images)
    env_hook = IMAGE_ENV_AT.set(env_at_of_image)
    base_hook = BASE_IMAGE.set(base_image)
    with_bases = _IMAGES.set(_with_bases(tuple(images), tuple(builds)))
    files_hook = IMAGE_FILES.set(files_in_image)
    held_hook = HELD_AT.set(held_at)
    uwsgi_hook = UWSGI_IMAGE_FILES.set(files_at)
    try:
        yield
    finally:
        UWSGI_IMAGE_FILES.reset(uwsgi_hook)
        HELD_AT.reset(held_hook)
        IMAGE_FILES.reset(files_hook)
        _IMAGES.reset(with_bases)
        BASE_IMAGE.reset(base_hook)
        IMAGE_ENV_AT.reset(env_hook)
        IN_IMAGES.reset(hook)
        _BUILDS.reset(built)
        _IMAGES.reset(token)


#: The Dockerfiles whose FROM is being resolved, outermost first: a base that names one of
#: them again (`FROM app:old` in app's own Dockerfile) is not read a second time.
_BASING: contextvars.ContextVar[frozenset[Path]] = contextvars.ContextVar(
    "servertune_check_images_basing", default=frozenset()
)


def base_image(reference: str, dockerfile: Path) -> Image | None:
    """The image of the run a Dockerfile's FROM names (`FROM openwisp/openwisp-base:edge`
    with images/openwisp_base/Dockerfile here, `image_named`'s evidence), None when it is a
    library or registry image, or the files do not say which Dockerfile builds it."""
    basing = _BASING.get()
    if dockerfile.absolute() in basing or len(basing) > 4:
        return None
    token = _BASING.set(basing | {dockerfile.absolute()})
    try:
        with collect_notes():  # a FROM the files do not resolve is the base's own registry's
            found = image_named(reference, dockerfile)
    finally:
        _BASING.reset(token)
    if found is None or found.path.absolute() == dockerfile.absolute():
        return None
    return found


def _with_bases(images: tuple[Image, ...], builds: tuple[Build, ...]) -> tuple[Image, ...]:
    """Each of `images` with its base (`_with_base`), worked out once per run for the same
    images and builds: a run sets its images once per compose file it links."""
    key = (tuple(map(id, images)), builds, _BASING.get())
    # Keyed by the images' ids and kept with them, so that an id is never another image's.
    _, based = memo.recall(
        memo.run_table("images with bases"),
        key,
        lambda: (images, tuple(_with_base(image) for image in images)),
    )
    return based


def _with_base(image: Image) -> Image:
    """`image` with the image of the run its FROM names (`dockerfile.with_base`)."""
    from servertune.check.dockerfile import with_base

    if not image.base_reference or image.base is not None:
        return image
    base = base_image(image.base_reference, image.path)
    return with_base(image, base) if base is not None else image


def run_images() -> tuple[Image, ...]:
    """The images of the run in progress (`images_of_run`), none outside a run."""
    return _IMAGES.get()


def found_in_images(file: Path, wanted: str, at: Location | None) -> ConfigFile | None:
    """The file `wanted` names (absolute, or relative to the WORKDIR) in the first image of the
    run that copies `file`, the file that names it; None when no image of the run holds `file`
    or that image does not hold `wanted`."""
    del at  # the COPY that brings a file in is what names it (`Image.find`)
    images = _IMAGES.get()
    if not memo.in_run():
        return _found_in(images, file, wanted)
    # Asked for every lookup of every command of a chain (`commands.beside`): each answer
    # once per run and images. Keyed by the images' id and kept with them, so that an id is
    # never another tuple's; `at` is not asked (an image's COPY names what it holds).
    key = (id(images), resolve.root(), file, wanted)
    _, found = memo.recall(
        memo.run_table("found in images"), key, lambda: (images, _found_in(images, file, wanted))
    )
    return found


def _found_in(images: tuple[Image, ...], file: Path, wanted: str) -> ConfigFile | None:
    """`found_in_images`, worked out."""
    for image in images:
        if image.holds(file) is None:
            continue
        found = image.find(wanted)
        if found is not None:
            return found
    return None


@dataclass(frozen=True)
class Build:
    """A compose service that builds an image and tags it (`build:` with `image:`): the image
    that name runs, wherever else it is named (Compose tags the image it builds with the
    service's `image:`)."""

    reference: str
    dockerfile: Path
    context: Path
    target: str | None = None


def image_named(
    reference: str, referrer: Path, at: Location | None = None, runs: Sequence[str] = ()
) -> Image | None:
    """The image of the run a compose service's or a Kubernetes container's `image:` names
    when nothing there builds it, on evidence in the files only, first found wins:

    * a compose service of the run builds and tags that name (a library-like one: that tag);
    * a build file of the repository builds it (`image_builds`);
    * the name's own part (its last path part without the repository's name, else its tag:
      `baserow/backend`, `makeplane/plane-backend` in `plane`, `doccano/doccano:backend`)
      is one Dockerfile's folder or suffix (`backend/Dockerfile`, `Dockerfile.api`), else one
      Dockerfile's stage (`local/nautobot-dev`: the `dev` stage, whose command that runs);
    * the name's last part holds the repository's name (`repository_names`) and `runs`, the
      files the services running that name start (`./bin/entrypoint-api.sh`,
      `/opt/bin/prod-celery.sh`), are held by one Dockerfile's image only;
    * the name's last part is the repository's name (`ghcr.io/paperless-ngx/paperless-ngx`
      in paperless-ngx): its root Dockerfile, else the one Dockerfile of the run that sets a
      command.

    A name with no owner (`postgres`, `redis:7`) is a library image, never the project's; an
    owner's words and one word of a longer folder name are no evidence (the folder
    `open-webui+pipelines` does not make `ghcr.io/open-webui/open-webui` its image). A guess
    from the name that the build files contradict (they build the name from other
    Dockerfiles, without saying which) is no link either. None when the files do not say
    which; when the name could be the project's and Dockerfiles here could build it, a
    not-followed note at `at` says so, never a guess."""

    hosted, tag = _name_and_tag(reference)
    path = _without_registry(hosted)
    ownerless = library_image(path) and not _docker_hub(hosted)  # `acme.azurecr.io/shop-api`
    if "$" in path:
        return None  # a name only the deployment's variables complete
    # A library image's name is the project's only where a compose service builds that tag.
    built = _built_as(path, tag, exact=library_image(path) and not ownerless)
    if built is not None or (library_image(path) and not ownerless):
        return built or _bare_name(path, reference, referrer, at)
    images = _IMAGES.get()
    if not images:
        return None
    root_path, found = _by_build_files(path, reference, referrer, at, images)
    if found is not None or ownerless:
        return found
    last = path.rsplit("/", 1)[1]
    left = _without_repository(last, root_path)
    # The whole last part is a stage's name (`ghcr.io/libretime/libretime-api` and `FROM
    # python-base AS libretime-api`): the image published from that stage, before any
    # reading of the name without the repository's words.
    guess = _by_stage(images, _plain(last))
    if guess is None:
        # The tag picks a Dockerfile only for the project's own image (`doccano/doccano:backend`
        # in doccano): another owner's `dbpedia/lookup:dev` is not `Dockerfile.dev` (oeplatform).
        guess = _guessed(
            images,
            root_path,
            words(last) if left is None else left,
            tag if left == [] else "",
            left is None,
        )
    if guess is None and left is not None:
        guess = _holding_runs(images, runs)
    if guess is None and left == []:
        guess = _project_image(images, root_path)
    building = dockerfiles_building(path, root_path)
    if guess is not None and (not building or guess.path.resolve() in building):
        # Only a Dockerfile the name's own words together name is the image a registry
        # publishes from its production stage; a word of it alone (`docker` of `docker-osm`)
        # is too weak a guess to read a stage its build does not make.
        own = "".join(words(last) if left is None else left)
        whole = guess in images and (
            own in _keys(guess, root_path) or own in _nested_keys(guess, root_path)
        )
        return _production_stage(guess) if whole else guess
    if at is not None and (guess is not None or _may_be_ours(path, left, images, referrer)):
        _not_followed(reference, at, images, building, root_path)
    return None


def _by_build_files(
    path: str, reference: str, referrer: Path, at: Location | None, images: Sequence[Image]
) -> tuple[Path, Image | None]:
    """The tree's root, and the image of the run a build file of it builds as `path`
    (`docker build -t NAME`), None when none does (`_evidenced` notes one not read)."""
    with resolve.within_default(referrer) as root:
        root_path = root
    evidence = built_from(path, root_path)
    found = _evidenced(evidence, images, reference, at) if evidence is not None else None
    return root_path, found


def _bare_name(path: str, reference: str, referrer: Path, at: Location | None) -> Image | None:
    """The image of the run a name with no owner (`antarest:latest`) is built from: only
    where a build file of the repository builds that very name (`docker build -t antarest`);
    otherwise a library image (`postgres`); when the name is the repository's own, the
    repository's own image (`_project_image`: its root Dockerfile, else its one Dockerfile
    with a command; AntaresSimulatorTeam/AntaREST), else None with a not-followed note at
    `at` that says the files do not tie them."""
    images = _IMAGES.get()
    if not images:
        return None
    root_path, found = _by_build_files(path, reference, referrer, at, images)
    if found is not None:
        return found
    if _without_repository(path.rsplit("/", 1)[-1], root_path) != []:
        return None
    # The repository's own name (`antarest` in AntaREST): its own image, as for a name with
    # an owner (`_project_image`), unless the build files build it from another Dockerfile.
    building = dockerfiles_building(path, root_path)
    guess = _project_image(images, root_path)
    if guess is not None and (not building or guess.path.resolve() in building):
        return _production_stage(guess)
    if at is not None:
        _not_followed(reference, at, images, building, root_path)
    return None


def _may_be_ours(
    path: str, left: list[str] | None, images: Sequence[Image], referrer: Path
) -> bool:
    """The name may be the project's, which a not-followed note says: it holds the
    repository's name, shares a word with it (`_shares_words`), or the one Dockerfile of a
    folder below the root sits beside the file naming it (`deploy/compose.yml` running
    `ghcr.io/org/app:prod` beside `deploy/Dockerfile`: never "starts no server")."""
    if left is not None:
        return True
    with resolve.within_default(referrer) as root:
        if _shares_words(path, root):
            return True
        owner = origin_owner(root)
    # Not another known owner's image, nor a project's own `minio/minio`, `clamav/clamav`.
    image_owner, _, last = path.rpartition("/")
    image_owner = image_owner.rsplit("/", 1)[-1]
    if words(image_owner) == words(last) or (
        owner is not None and not _same_owner(image_owner, owner)
    ):
        return False
    # A deployment folder holding the file and one Dockerfile (`deploy/`), not the root,
    # where a compose file's other owners' images (`vendor/mcp`) sit beside the project's.
    folder = referrer.absolute().parent
    if folder == root.absolute():
        return False
    return len([i for i in images if i.path.absolute().parent == folder]) == 1


def _guessed(
    images: Sequence[Image], root: Path, own: list[str], tag: str, whole: bool
) -> Image | None:
    """The one Dockerfile the name's own words together, then each alone from the last
    (`shop-web-frontend` in `shop`: `frontend`) but a word of the repository's names, then
    its tag, name (`_by_key`); else the one Dockerfile under a folder so named
    (`_folders_above`), the first key that names any folder deciding. A name read `whole`
    (it does not hold the repository's name) that shares no word with it either is another
    owner's, matched whole only: one of its words is no evidence
    (`tiangolo/uvicorn-gunicorn-fastapi` is not `uvicorn.Dockerfile`; `akvo-lumen/rsr-nginx`
    in akvo-rsr is the project's, its `nginx` naming `Dockerfile-nginx`)."""
    keys = ["".join(own)] if own else []
    # A word alone ties only when it is the name's own: a word of the repository's names
    # (`yeti` of `yeti-agents` in yeti-docker) names the project, not which of its images.
    known = {w for n in repository_names(root) for w in words(n)}
    foreign = whole and not known.intersection(own)
    keys += [w for w in reversed(own) if w not in known] if len(own) > 1 and not foreign else []
    if tag and "$" not in tag:
        keys.append(_plain(tag))
    # The name's last words together, longest first, as a Dockerfile's own name's suffix
    # (`rsr-backend-prod-no-code`: `Dockerfile-prod-no-code`), before any word alone (`prod`,
    # another's); not a folder's name (`postgres-dev-env` is no image of a `dev-env/` folder:
    # a qualifier of the name, not what it is).
    runs = ["".join(own[i:]) for i in range(1, len(own) - 1)]
    for key in keys[:1] + runs + keys[1:]:
        found = _by_file_name(images, key) if key in runs else _by_key(images, key, root)
        if found is not None:
            return found
    # A folder further up a Dockerfile's path, only when no key names a Dockerfile itself:
    # SecObserve's `secobserve-backend` is built by `docker/backend/prod/django/Dockerfile`,
    # the only one under a `backend/` (`docker/frontend/prod/Dockerfile` builds the other).
    for key in (k for k in keys if len(k) >= 2):
        above = [i for i in images if key in _folders_above(i, root)]
        if len(above) == 1:
            return above[0]
        if above:
            return None
    return None


def _not_followed(
    reference: str,
    at: Location,
    images: Sequence[Image],
    building: frozenset[Path],
    root: Path,
) -> None:
    """The note for an image name that may be the project's and is not followed."""
    if building:
        top = root.resolve()
        written = " or ".join(sorted(Path(os.path.relpath(p, top)).as_posix() for p in building))
        why = f"the build files here build it from {written}"
    elif len(images) > 1:
        why = f"{len(images)} Dockerfiles here could build it and the files do not say which"
    else:
        why = f"the files do not say that {images[0].path.name} here builds it"
    note(
        "not-followed",
        at,
        f"{at}: not followed: image {reference}: {why} (a compose service that builds "
        "and tags it, or a Dockerfile named for it, would say)",
    )


def _evidenced(
    evidence: BuiltFrom, images: Sequence[Image], reference: str, at: Location | None
) -> Image | None:
    """The image of the run built from the Dockerfile a build file names for `reference`
    (the stage it names, when it names one); None, with a not-followed note at `at`, when
    that Dockerfile is not among those read."""
    image = next((i for i in images if i.path.resolve() == evidence.dockerfile), None)
    if image is None:
        if at is not None:
            note(
                "not-followed",
                at,
                f"{at}: not followed: image {reference}: {evidence.at} builds it from "
                f"{evidence.written}, which was not read here",
            )
        return None
    if evidence.target is None:
        return _production_stage(image)
    if _stage_named(image, _plain(evidence.target)) is None:
        return image
    return _read(image.path, image.context if image.context_given else None, evidence.target)


#: A stage's names that say production's (`FROM base AS production`, `AS prod`).
_PRODUCTION_STAGE = frozenset({"prod", "production"})
#: A FROM line and its stage's name, if any.
_FROM = re.compile(r"^\s*FROM\s+\S+(?:\s+AS\s+([A-Za-z0-9][\w.-]*))?\s*$", re.I | re.M)


def _production_stage(image: Image) -> Image:
    """The image a deployment pulls by name (no build, no target said): the Dockerfile's last
    stage, unless that stage is named for development (`FROM build AS development`, which a
    developer builds and bind-mounts the code into) and one other stage for production (`FROM
    base AS production`): that stage, the one a registry publishes (ITISFoundation/
    osparc-simcore's services end in `development`; the swarm deploy runs `production`)."""
    from servertune.check.front_names import DEVELOPMENT_WORDS
    from servertune.check.source import read_text

    try:
        text = read_text(image.path)
    except (CheckInputError, OSError):
        return image
    froms = [(m[1] or "", text.count("\n", 0, m.start()) + 1) for m in _FROM.finditer(text)]
    if not froms or not set(words(froms[-1][0])) & DEVELOPMENT_WORDS:
        return image
    # The name alone, not a word of it: `prod-only-deps` is a builder for production's.
    production = [(n, line) for n, line in froms[:-1] if _plain(n) in _PRODUCTION_STAGE]
    if len(production) != 1:
        return image
    ((stage, line),) = production
    staged = _read(image.path, image.context if image.context_given else None, stage)
    if staged is None:
        return image
    at = Location(image.path, line)
    note(
        "server-chosen",
        at,
        f"{at}: an image pulled by name whose Dockerfile's last stage is {froms[-1][0]!r} (a "
        f"developer's build): read as its {stage!r} stage, the one a registry publishes",
    )
    return staged


def owners_image(reference: str) -> bool:
    """`reference` names an owner's image (`acme/shop:1.0`, `ghcr.io/acme/shop`), which only
    evidence in the files links to a Dockerfile here (`image_named`), not a local one (`web`,
    `registry.example.com/web:1.0`) nor one the deployment's variables complete."""
    path = _without_registry(_name_and_tag(reference)[0])
    return "/" in path and "$" not in reference


_TAGGED = re.compile(r"\A(?P<path>.*?)(?::(?P<tag>[^:/]+))?\Z")


def _name_and_tag(reference: str) -> tuple[str, str]:
    """(the repository path in lower case, the tag) of an image reference, digest left out:
    `ghcr.io/a/b:1.2@sha256:...` is (`ghcr.io/a/b`, `1.2`)."""
    match = _TAGGED.match(reference.split("@", 1)[0].strip())
    if match is None:  # pragma: no cover - the pattern matches every string
        return reference.lower(), ""
    return match["path"].lower(), match["tag"] or ""


def _without_repository(name: str, root: Path) -> list[str] | None:
    """The words of `name` once a run of them that spells one of the repository's names is
    left out (`plane-backend` in `plane`: `backend`; `examplevotingapp_vote` in
    `example-voting-app`: `vote`; `paperless-ngx` in `paperless-ngx`: none), None when no run
    does (`open-webui` in the folder `open-webui+pipelines`: the name is not the repository's).
    The longest run wins."""
    names = {"".join(words(n)) for n in repository_names(root)}
    split = words(name)
    runs = sorted(
        ((i, j) for i in range(len(split)) for j in range(i + 1, len(split) + 1)),
        key=lambda run: run[0] - run[1],
    )
    for i, j in runs:
        if "".join(split[i:j]) in names:
            return split[:i] + split[j:]
    return None


def _shares_words(path: str, root: Path) -> bool:
    """A word of the image's path (its owner's too) is a word of one of the repository's
    names or of its owner's (its git origin's): the name may be the project's, which a
    not-followed note says, never a link.

    An image of another owner than the git origin's (`opensearchproject/opensearch`,
    `docker.elastic.co/elasticsearch/elasticsearch` in
    stac-utils/stac-fastapi-elasticsearch-opensearch, named for the programs it serves) is a
    published image running its own program, unless its name holds the repository's whole
    name (`pavics/weaver` in crim-ca/weaver: `_without_repository`, before this)."""
    known = {w for n in repository_names(root) for w in words(n)}
    owner = origin_owner(root)
    if owner is not None:
        image_owner = path.rpartition("/")[0].rsplit("/", 1)[-1]
        if image_owner and not _same_owner(image_owner, owner):
            return False
        known.update(words(owner))
    return any(w in known for w in words(path))


def _same_owner(image_owner: str, owner: str) -> bool:
    """The image's owner is the git origin's, or that owner's account of a registry named
    after it (`akvo-lumen` of the origin `akvo`: its words begin with the owner's)."""
    mine, theirs = words(owner), words(image_owner)
    return bool(mine) and theirs[: len(mine)] == mine


def _docker_hub(path: str) -> bool:
    """The image path is Docker Hub's: no registry host, or Docker Hub's own. A private
    registry's name with no owner (`acme.azurecr.io/shop-api`) is no library image, but only a
    build file naming it says which Dockerfile built it."""
    first, _, rest = path.partition("/")
    hosted = rest and ("." in first or ":" in first or first == "localhost")
    return not hosted or first in ("docker.io", "index.docker.io", "registry-1.docker.io")


def _without_registry(path: str) -> str:
    """An image path without its registry host (`ghcr.io/`, `localhost:5000/`): what is left
    names the owner and the image (`docker.io/postgres` is the library's `postgres`)."""
    first, _, rest = path.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return rest
    return path


def _built_as(path: str, tag: str, *, exact: bool = False) -> Image | None:
    """The image a compose service of the run builds and tags `path` (with `tag`, when
    builds differ by tag; with `tag` only when `exact`), when one Dockerfile (and stage)
    does."""
    tagged = [(b, _name_and_tag(b.reference)) for b in _BUILDS.get()]
    builds = [(b, t) for b, (name, t) in tagged if _without_registry(name) == path]
    if not builds and not exact:
        # A build whose name the deployment's variables complete (`eu.gcr.io/${PROJECT}/web`):
        # the name it runs under, when it is the one build that could be (`image_patterns`).
        matching = [(b, t) for b, (name, t) in tagged if "$" in name and matches(name, path)]
        if len({(b.dockerfile, b.context, b.target) for b, _ in matching}) == 1:
            builds = matching
    same_tag = [(b, t) for b, t in builds if t == tag]
    if exact and not same_tag:
        return None
    # Another tag than every build's (a chart's release `2025.1.0` where compose builds `debug`
    # with `target: debug`): the same Dockerfile, but the stage a service targets for a tag
    # named for it (`:debug`, a variant of the image) says nothing of it; a plain build of the
    # Dockerfile makes its last stage. A build tagging the bare name (`:latest` with `target:
    # main_image`) says which stage the name is built from, whatever its release's tag.
    other_tag = not same_tag and all(t and "$" not in t for t in [tag, *(t for _, t in builds)])
    chosen = {
        (b.dockerfile, b.context, None if other_tag and _tags_its_target(b, t) else b.target)
        for b, t in (same_tag or builds)
    }
    if len(chosen) != 1:
        return None
    ((dockerfile, context, target),) = chosen
    return _read(dockerfile, context, target)


def published_stage(dockerfile: Path, builds: Sequence[Build]) -> str | None:
    """The stage the compose builds that tag an image from `dockerfile` all target
    (`image: acme/app:latest` with `target: main_image`): the stage that image is built from,
    wherever a deployment runs it under a name no file completes; None when no build
    targets one, they differ, or a build's tag is named for its stage (`:debug` of `target:
    debug`, a variant of the image, not the image)."""
    wanted = dockerfile.resolve()
    mine = [b for b in builds if b.dockerfile.resolve() == wanted]
    if any(_tags_its_target(b, _name_and_tag(b.reference)[1]) for b in mine):
        return None
    targets = {b.target for b in mine}
    return next(iter(targets)) if len(targets) == 1 else None


def _tags_its_target(build: Build, tag: str) -> bool:
    """The build's tag is named for the stage it targets (`:debug` of `target: debug`): a
    variant of the image, not the name's own build."""
    return build.target is not None and _plain(build.target) in {_plain(tag), *words(tag)}


def _read(dockerfile: Path, context: Path | None, target: str | None) -> Image | None:
    from servertune.check.dockerfile import read_image
    from servertune.check.source import read_text

    try:
        with collect_notes():  # the Dockerfile's own reading says what it notes
            return read_image(dockerfile, read_text(dockerfile), context, target)
    except (CheckInputError, OSError, ModuleNotFoundError):
        return None


def _keys(image: Image, root: Path) -> frozenset[str]:
    """The names a Dockerfile is known by: its folder's (not the repository root's) and its
    name's suffix or prefix (`Dockerfile.api`, `Dockerfile-prod`, `api.Dockerfile`)."""
    key = (str(image.path), str(root))
    return memo.recall(memo.run_table("image keys"), key, lambda: _keys_of(image.path, root))


def _keys_of(path: Path, root: Path) -> frozenset[str]:
    keys: set[str] = set()
    folder = path.absolute().parent
    if os.path.normpath(folder) != os.path.normpath(root.absolute()):
        keys.add(_plain(folder.name))
        # `openwisp_base/` in the repository `openwisp` is known as `base` too, as the image
        # name `openwisp/openwisp-base` is read without the repository's name.
        own = _without_repository(folder.name, root)
        if own:
            keys.add("".join(own))
    for part in re.split(r"(?i)dockerfile", path.name):
        if _plain(part):
            keys.add(_plain(part))
    # The name its own comments build it as (`# docker build -t validation_service_v3beta
    # -f deployment/Dockerfile .`, HumanBrainProject/hbp-validation-framework).
    keys.update(k for n in _commented_names(path) if len(k := _plain(n)) >= 2)
    return frozenset(keys)


def _commented_names(path: Path) -> tuple[str, ...]:
    from servertune.check.source import read_text

    try:
        return named_in_own_comments(path, read_text(path))
    except (CheckInputError, OSError):
        return ()


_STAGE = re.compile(r"^\s*FROM\s.*?\sAS\s+([A-Za-z0-9][\w.-]*)\s*$", re.I | re.M)


def _stage_named(image: Image, key: str) -> str | None:
    """The stage of the image's Dockerfile named `key` (`FROM ... AS dev`), as written."""
    stages = memo.recall(memo.run_table("stages"), str(image.path), lambda: _stages(image.path))
    return next((s for s in stages if _plain(s) == key), None)


def _stages(path: Path) -> tuple[str, ...]:
    """The names of the Dockerfile's stages, as written; none when it cannot be read."""
    from servertune.check.source import read_text

    try:
        return tuple(_STAGE.findall(read_text(path)))
    except (CheckInputError, OSError):
        return ()


def _by_key(images: Sequence[Image], key: str, root: Path) -> Image | None:
    """The one Dockerfile named `key` (its folder or suffix), else the one Dockerfile with a
    stage `key`, read as that stage."""
    if len(key) < 2:
        return None
    named = [i for i in images if key in _keys(i, root)]
    if named:
        return named[0] if len(named) == 1 else None
    nested = [i for i in images if key in _nested_keys(i, root)]
    if nested:
        return nested[0] if len(nested) == 1 else None
    return _by_stage(images, key)


def _nested_keys(image: Image, root: Path) -> frozenset[str]:
    """The names a Dockerfile builds the code of a folder beside it under: its folder's with
    that folder's (`web/Dockerfile` copying `web/server/`: `webserver`), for each folder next
    to it the Dockerfile's text names by that path. Weaker than its own names (`_keys`), read
    only when no Dockerfile is known by the name itself (ITISFoundation/osparc-simcore's
    `itisfoundation/webserver` built by services/web/Dockerfile, which COPYs
    services/web/server/docker)."""
    key = (str(image.path), str(root))
    table = memo.run_table("image nested keys")
    return memo.recall(table, key, lambda: _nested_keys_of(image.path, root))


def _nested_keys_of(path: Path, root: Path) -> frozenset[str]:
    from servertune.check.source import read_text

    folder = path.absolute().parent
    if os.path.normpath(folder) == os.path.normpath(root.absolute()):
        return frozenset()  # the repository's root names no image
    try:
        text = read_text(path)
        beside = [p.name for p in folder.iterdir() if p.is_dir()]
    except (CheckInputError, OSError):
        return frozenset()
    named = (
        n
        for n in beside
        if re.search(rf"(?<![\w.-]){re.escape(folder.name)}/{re.escape(n)}(?![\w.-])", text)
    )
    return frozenset(k for n in named if len(k := _plain(folder.name) + _plain(n)) >= 2)


def _by_stage(images: Sequence[Image], key: str) -> Image | None:
    """The one Dockerfile with a stage named `key` (plain), read as that stage."""
    if len(key) < 2:
        return None
    staged = [(i, stage) for i in images if (stage := _stage_named(i, key)) is not None]
    if len(staged) != 1:
        return None
    ((image, stage),) = staged
    return _read(image.path, image.context if image.context_given else None, stage)


def _by_file_name(images: Sequence[Image], key: str) -> Image | None:
    """The one Dockerfile whose own name's suffix or prefix is `key` (`Dockerfile-prod-no-code`
    for `prodnocode`)."""
    named = [
        i for i in images if key in {_plain(p) for p in re.split(r"(?i)dockerfile", i.path.name)}
    ]
    return named[0] if len(named) == 1 else None


def _folders_above(image: Image, root: Path) -> frozenset[str]:
    """The names of the folders between the repository's root and the Dockerfile's own folder
    (`docker/backend/prod/django/Dockerfile`: `docker`, `backend`, `prod`), plain."""
    folder = image.path.absolute().parent
    try:
        parts = folder.relative_to(root.absolute()).parts[:-1]
    except ValueError:
        return frozenset()
    return frozenset(_plain(part) for part in parts if _plain(part))


#: A path a command names, inside a word too (`bash -c "... /webodm/start.sh"`).
_PATH_IN = re.compile(r"(?<![\w$/])(?:\.{1,2})?/?[\w.-]+(?:/[\w.-]+)+")


def _holding_runs(images: Sequence[Image], runs: Sequence[str]) -> Image | None:
    """The one image that holds a file the services running the name start (a path their
    command lines name)."""
    named = sorted({p for r in runs for p in _PATH_IN.findall(r)})
    if not named:
        return None
    with collect_notes():  # looking, not reading
        holding = [i for i in images if any(i.find(r) is not None for r in named)]
    return holding[0] if len(holding) == 1 else None


def _project_image(images: Sequence[Image], root: Path) -> Image | None:
    """The repository's own image: its root `Dockerfile`, else its one Dockerfile that sets a
    command."""
    top = [i for i in images if i.path.absolute().parent == root.absolute()]
    plain = [i for i in top if i.path.name == "Dockerfile"]
    if len(plain) == 1:
        return plain[0]
    commanded = [image for image in images if image.entrypoint or image.cmd]
    return commanded[0] if len(commanded) == 1 else None


def _plain(name: str) -> str:
    """A name without case and separators (`paperless-ngx`, `Paperless_NGX`: `paperlessngx`)."""
    return "".join(c for c in name.lower() if c.isalnum())


def files_in_image(file: Path, folder: str) -> list[str]:
    """The container files under `folder` of the first image of the run that copies `file`
    (a script listing them: `find /etc/app/conf.d ... -exec ln -s ...`), [] when none does."""
    image = image_holding(file)
    return [inside for inside, _ in image.held_under(folder)] if image is not None else []


def files_at(file: Path, name: str) -> list[tuple[str, Path]]:
    """The files the first image of the run that copies `file` keeps at the container path
    `name`, or that match it when it is a glob (`/etc/uwsgi.d/*`, each part as glob(3) matches
    it), as (container path, repository file) sorted by container path; [] when no image of
    the run holds `file`, or nothing is there."""
    image = image_holding(file)
    if image is None:
        return []
    if not glob.has_magic(name):
        found = image.find(name)
        held = found is not None and found.first_line == 1 and found.file.is_file()
        return [(name, found.file)] if found is not None and held else []
    folder = resolve.glob_prefix(name).rpartition("/")[0] or "/"
    return [(at, local) for at, local in image.held_under(folder) if PurePosixPath(at).match(name)]


def held_at(file: Path) -> str | None:
    """Where the first image of the run that copies `file` keeps it (a script's `$0`), None
    when none does."""
    image = image_holding(file)
    return image.holds(file) if image is not None else None


def images_copying(file: Path) -> list[Image]:
    """The images of the run that copy `file` by its name or folder (not a whole build
    context: an app image's `COPY . /app` deploys no front), in the run's order."""
    return [image for image in _IMAGES.get() if image.holds(file, whole_context=False) is not None]


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
