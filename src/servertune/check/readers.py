"""Which reader takes which file: the registry of file kinds `servertune check` reads.

A reader is one module with a `claims(path, text)` test and a `read(path, text, env)` that
returns a `Reading`; adding a file kind is that module and one line in `READERS`. The first
reader (in registry order) that claims a file reads it, so the specific kinds (named files,
signatures in the text) come before the general ones. A file no reader claims is refused with
one line saying which kinds were tried, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the registry is imported for its kinds alone (the CLI's --kind choices)
    from servertune.check.model import (
        AppServer,
        Balancer,
        Container,
        NginxConfig,
    )

__all__ = ["READERS", "Reader", "Reading", "env_loads_of", "read_with", "reader_for"]


@dataclass(frozen=True)
class Reading:
    """What one file contributed: app servers, nginx sites, load balancers."""

    apps: tuple[AppServer, ...] = ()
    nginx: tuple[NginxConfig, ...] = ()
    balancers: tuple[Balancer, ...] = ()
    #: Files read along the way (includes, env files), for the report's list of files.
    files: tuple[Path, ...] = field(default=())
    #: Kubernetes containers with no command or args: they run their image's CMD.
    image_containers: tuple[Container, ...] = ()
    #: The app servers an image's CMD starts (read from a Dockerfile), which such a
    #: container runs when it is the image's.
    image_apps: tuple[AppServer, ...] = ()
    #: Env files read as files of their own (`.env`, `prod.env`), for the launch graph.
    env_files: tuple[Path, ...] = ()
    #: (loader, env file): a compose file's `env_file` / `.env`, which the graph links.
    env_loads: tuple[tuple[Path, Path], ...] = ()

    def __add__(self, other: Reading) -> Reading:
        return Reading(
            apps=self.apps + other.apps,
            nginx=self.nginx + other.nginx,
            balancers=self.balancers + other.balancers,
            files=self.files + other.files,
            image_containers=self.image_containers + other.image_containers,
            image_apps=self.image_apps + other.image_apps,
            env_files=self.env_files + other.env_files,
            env_loads=self.env_loads + other.env_loads,
        )


ReadFunction = Callable[[Path, str, Mapping[str, str] | None], Reading]


@dataclass(frozen=True)
class Reader:
    """A file kind: its name, what it is in words, how it is recognised and how it is read."""

    kind: str
    #: What `check` took the file for, in an error or the report ("a gunicorn config file").
    described: str
    claims: Callable[[Path, str], bool]
    read: ReadFunction


def _gunicorn(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.gunicorn import read_gunicorn

    return Reading(apps=(read_gunicorn(path, text, env),))


def _uwsgi(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.uwsgi import read_uwsgi_files

    app, files = read_uwsgi_files(path, text, env)
    return Reading(apps=(app,), files=files)


def _script(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.commands import beside
    from servertune.check.docker_runs import run_servers
    from servertune.check.model import NothingToCheck
    from servertune.check.procfile import procfile_running
    from servertune.check.scripts import read_script

    # The images its `docker run` lines start, when the repository builds them.
    runs = run_servers(path, text)
    try:
        app = read_script(path, text, env, find_config=beside(path))
    except NothingToCheck:
        if not runs:
            raise
        return Reading(apps=runs)
    # Read on its own: a Procfile beside it may be what runs it (and signals its group).
    return Reading(apps=(replace(app, group_signalled=procfile_running(path)), *runs))


def _kubernetes(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.kubernetes import read_manifests
    from servertune.check.kustomization import check_references, patched_by
    from servertune.check.model import NothingToCheck

    check_references(path, text)  # a kustomization's files: never followed, outside never read
    kustomization = patched_by(path)
    if kustomization is not None:
        raise NothingToCheck(
            f"{path}: a kustomize patch ({kustomization} names it): merged into the resource "
            "it targets, not a workload of its own"
        )
    from servertune.check.kustomize_patches import overlay_patched

    apps, nginx = read_manifests(path, text, env, overlay_patched)
    from servertune.check.config_maps import mounted_nginx
    from servertune.check.ingress import ingress_fronts
    from servertune.check.kubernetes import image_containers

    return Reading(
        apps=apps,
        nginx=nginx + ingress_fronts(path, text) + mounted_nginx(path, text),
        image_containers=image_containers(path, text),
    )


def _is_manifest(path: Path, text: str) -> bool:
    from servertune.check.examples import example_of

    path = example_of(path) or path  # `configmap.yaml.example`: by its copy's name
    try:
        from servertune.check.kubernetes import looks_like_manifest
    except ModuleNotFoundError:  # no YAML parser: claimed by name, refused with the extra's name
        return path.suffix in (".yaml", ".yml")
    return looks_like_manifest(path, text)


def _dockerfile(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.dockerfile import read_dockerfile
    from servertune.check.model import NothingToCheck, note_nothing_to_check
    from servertune.check.target_stages import target_stage_servers

    built = _built_stage(path, text, env)
    if built is not None:
        return Reading(apps=(built,), image_apps=(built,))
    try:
        app = read_dockerfile(path, text, env)
    except NothingToCheck as why:
        # The last stage starts no server (or one not followed): a build target's may.
        staged = target_stage_servers(path, text, env)
        if not staged:
            raise
        note_nothing_to_check(path, why)  # what the last stage's reading would say alone
        return Reading(apps=staged)
    return Reading(apps=(app,), image_apps=(app,))


def _built_stage(path: Path, text: str, env: Mapping[str, str] | None) -> AppServer | None:
    """The server of the stage the repository's build commands build the Dockerfile as
    (`build_targets`: `docker build --target prod` in a Makefile or a CI workflow), with a
    note naming the command; None when they choose none, or that stage starts no server
    check reads (then the last stage is read, as before)."""
    from servertune.check.build_targets import chosen_stage, shown
    from servertune.check.dockerfile import read_dockerfile, stage_starts
    from servertune.check.model import Location, NothingToCheck, collect_notes, note

    chosen = chosen_stage(path, text)
    if chosen is None:
        return None
    stage, at = chosen
    with collect_notes() as notes:
        try:
            app = read_dockerfile(path, text, env, target=stage)
        except NothingToCheck:
            return None
    for said in notes:
        note(said.kind, said.at, said.message, said.fix)
    line = next((n for n, name in stage_starts(text) if name == stage), 1)
    note(
        "server-chosen",
        Location(path, line),
        f"{path}:{line}: read as the stage {stage!r}, the one the build command at {shown(at)} "
        "builds (no compose file here builds this Dockerfile; a plain build makes its last "
        "stage)",
    )
    return app


def _is_dockerfile(path: Path, text: str) -> bool:
    from servertune.check.dockerfile import looks_like_dockerfile

    return looks_like_dockerfile(path, text)


def _compose(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.compose import read_compose
    from servertune.check.model import NothingToCheck
    from servertune.check.traefik import read_compose_labels

    try:
        apps, files = read_compose(path, text, env)
    except NothingToCheck:
        # Traefik's labels on a service that runs no server check reads still front it.
        balancers = read_compose_labels(path, text, env)
        if not balancers:
            raise
        return Reading(balancers=balancers)
    from servertune.check.envfile import ENV_FILE_NAME

    loads = tuple((path, f) for f in files if ENV_FILE_NAME.match(f.name))
    loads += env_loads_of(path, text, "compose").env_loads
    balancers = read_compose_labels(path, text, env, _image_ports(apps))
    return Reading(apps=apps, files=files, balancers=balancers, env_loads=loads)


def _image_ports(apps: Sequence[AppServer]) -> dict[str, tuple[str, ...]]:
    """Each compose service's image's `EXPOSE`d ports, by service name, from the Dockerfile
    its server's launch goes through (a build, or the Dockerfile its `image:` is linked to)."""
    from servertune.check.commands import is_dockerfile
    from servertune.check.images import exposed_by_image

    found: dict[str, tuple[str, ...]] = {}
    for app in apps:
        box = app.container
        if box is None or box.platform != "compose":
            continue
        built = [at.file for at in app.launched_by if is_dockerfile(at.file)]
        if built:
            found.setdefault(box.name, exposed_by_image(built[0]))
    return found


def env_loads_of(path: Path, text: str, kind: str) -> Reading:
    """The env files a file of `kind` loads, read whether or not it starts a server (a compose
    stack of images built elsewhere loads its `env_file`s all the same; a justfile its
    `set dotenv-load` file)."""
    if kind == "justfile":
        from servertune.check.justfile import dotenv_loads

        return Reading(env_loads=tuple((path, f) for f in dotenv_loads(path, text)))
    if kind != "compose":
        return Reading()
    from servertune.check.envfile import compose_loads

    return Reading(env_loads=tuple((path, f) for f in compose_loads(path, text)))


def _is_compose(path: Path, text: str) -> bool:
    from servertune.check.examples import example_of

    path = example_of(path) or path  # `docker-compose.override.yml.example`: by its copy's name
    try:
        from servertune.check.compose import looks_like_compose
    except ModuleNotFoundError:  # no YAML parser: claimed by name, refused with the extra's name
        return path.name.endswith((".yaml", ".yml")) and "compose" in path.name
    return looks_like_compose(path, text)


def _procfile(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.procfile import read_procfile
    from servertune.check.scripts import follow_words

    return Reading(apps=read_procfile(path, text, env, follow_words))


def _is_procfile(path: Path, text: str) -> bool:
    from servertune.check.procfile import looks_like_procfile

    return looks_like_procfile(path, text)


def _justfile(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.justfile import read_justfile
    from servertune.check.scripts import follow_words

    apps = read_justfile(path, text, env, follow_words)
    return Reading(apps=apps) + env_loads_of(path, text, "justfile")


def _is_justfile(path: Path, text: str) -> bool:
    from servertune.check.justfile import looks_like_justfile

    return looks_like_justfile(path, text)


def _nginx(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    del env  # nginx reads no environment
    from servertune.check.model import CheckInputError
    from servertune.check.nginx import read_nginx

    with path.open("rb") as head:
        if head.read(3) == b"\xef\xbb\xbf":
            # Python reads past a UTF-8 byte-order mark; nginx does not (ngx_conf_file.c
            # takes it as part of the first directive's name, which is then unknown).
            raise CheckInputError(
                f"{path}:1: starts with a UTF-8 byte-order mark, which nginx reads as part of "
                "its first directive (unknown directive): save it without the BOM"
            )

    return Reading(nginx=(read_nginx(path, text),))


def _heroku_nginx(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    del env  # rendered with the dyno's environment, which no file here gives
    from servertune.check.heroku_nginx import read_buildpack_nginx

    return Reading(nginx=(read_buildpack_nginx(path, text),))


def _is_heroku_nginx(path: Path, text: str) -> bool:
    del text
    from servertune.check.heroku_nginx import is_buildpack_config

    return is_buildpack_config(path)


def _hypercorn(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    del env  # Hypercorn's TOML reads no environment
    from servertune.check.hypercorn import read_hypercorn

    return Reading(apps=(read_hypercorn(path, text),))


def _is_hypercorn(path: Path, text: str) -> bool:
    from servertune.check.hypercorn import looks_like_hypercorn

    return looks_like_hypercorn(path, text)


def _haproxy(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.haproxy import read_haproxy

    return Reading(balancers=read_haproxy(path, text, env))


def _is_haproxy(path: Path, text: str) -> bool:
    from servertune.check.haproxy import looks_like_haproxy

    return looks_like_haproxy(path, text)


#: Top-level assignments of the settings nearly every gunicorn config sets.
_GUNICORN_ASSIGNMENT = re.compile(
    r"^(bind|workers|worker_class|threads|timeout|graceful_timeout|keepalive|wsgi_app)\s*=", re.M
)


def _is_python(path: Path, text: str) -> bool:
    """A `.py` file; or a gunicorn config without the suffix (`gunicorn.conf`, `gunicorn_conf`):
    named for gunicorn, valid Python, assigning a gunicorn setting at its top level."""
    if path.suffix == ".py":
        return True
    if not path.name.lower().startswith("gunicorn") or not _GUNICORN_ASSIGNMENT.search(text):
        return False
    import ast

    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _launcher(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.scripts import read_python_launcher

    return Reading(apps=(read_python_launcher(path, text, env),))


def _is_launcher(path: Path, text: str) -> bool:
    """A Python file whose top level starts a server (`os.system("gunicorn ...")`,
    `uvicorn.run(...)`) or builds the command line another runs (a method returning
    `["gunicorn", ...]`); one named as gunicorn's config (`gunicorn.conf.py`, which gunicorn
    loads by default) or assigning a gunicorn setting stays gunicorn's config."""
    from servertune.check.pylauncher import starts_a_server

    named = path.name.lower()
    if named.startswith("gunicorn") and ("conf" in named or path.suffix != ".py"):
        return False
    if _GUNICORN_ASSIGNMENT.search(text):
        return False
    return starts_a_server(path, text)


def _traefik(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.traefik import read_traefik

    balancers, files = read_traefik(path, text, env)
    return Reading(balancers=balancers, files=files)


def _is_traefik(path: Path, text: str) -> bool:
    from servertune.check.traefik import looks_like_traefik

    return looks_like_traefik(path, text)


def _caddy(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.caddy import read_caddyfile

    balancers, files = read_caddyfile(path, text, env)
    return Reading(balancers=balancers, files=files)


def _is_caddy(path: Path, text: str) -> bool:
    from servertune.check.caddy import looks_like_caddyfile

    return looks_like_caddyfile(path, text)


def _supervisord(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.scripts import follow_words
    from servertune.check.supervisord import read_supervisord

    return Reading(apps=read_supervisord(path, text, env, follow=follow_words))


def _is_supervisord(path: Path, text: str) -> bool:
    from servertune.check.supervisord import looks_like_supervisord

    return looks_like_supervisord(path, text)


def _systemd(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.systemd import environment_files, read_systemd
    from servertune.check.systemd_sockets import looks_like_unit, read_unit

    if looks_like_unit(path, text):
        read_unit(path, text)  # a .socket or .timer: starts no server of its own
    app = read_systemd(path, text, env)
    loads = tuple((path, f) for f in environment_files(path, text))
    return Reading(apps=(app,), files=tuple(f for _, f in loads), env_loads=loads)


def _upstart(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.upstart import read_upstart

    return Reading(apps=(read_upstart(path, text, env),))


def _is_upstart(path: Path, text: str) -> bool:
    from servertune.check.upstart import looks_like_upstart

    return looks_like_upstart(path, text)


def _is_systemd(path: Path, text: str) -> bool:
    from servertune.check.systemd import looks_like_systemd
    from servertune.check.systemd_sockets import looks_like_unit

    return looks_like_systemd(path, text) or looks_like_unit(path, text)


def _env(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    """An env file: read (a line the parser cannot read is refused with its line), starting
    nothing of its own; the link says which compose service or script loads it."""
    del text, env
    from servertune.check.envfile import read_env_file

    read_env_file(path)
    return Reading(files=(path,))


def _is_env(path: Path, text: str) -> bool:
    from servertune.check.envfile import looks_like_env_file

    return looks_like_env_file(path, text)


def _platform(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.platforms import read_platform
    from servertune.check.scripts import follow_words

    return Reading(apps=read_platform(path, text, env, follow_words))


def _is_platform(path: Path, text: str) -> bool:
    from servertune.check.platforms import looks_like_platform

    return looks_like_platform(path, text)


def _railway(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.model import NothingToCheck
    from servertune.check.railway import read_railway
    from servertune.check.scripts import follow_words

    apps = read_railway(path, text, env, follow_words)
    if not apps:
        raise NothingToCheck(f"{path}: Railway's service starts no server check reads")
    return Reading(apps=apps)


def _s2i(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.s2i import read_s2i_environment
    from servertune.check.scripts import follow_words

    return Reading(apps=read_s2i_environment(path, text, env, follow_words))


def _is_s2i(path: Path, text: str) -> bool:
    from servertune.check.s2i import looks_like_s2i_environment

    return looks_like_s2i_environment(path, text)


def _digitalocean(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.digitalocean import read_app_spec
    from servertune.check.scripts import follow_words

    return Reading(apps=read_app_spec(path, text, env, follow_words))


def _is_digitalocean(path: Path, text: str) -> bool:
    from servertune.check.digitalocean import looks_like_app_spec

    return looks_like_app_spec(path, text)


def _copilot(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.copilot import read_copilot_manifest
    from servertune.check.scripts import follow_words

    return Reading(apps=read_copilot_manifest(path, text, env, follow_words))


def _is_copilot(path: Path, text: str) -> bool:
    from servertune.check.copilot import looks_like_copilot_manifest

    return looks_like_copilot_manifest(path, text)


def _nomad(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.nomad import read_nomad_job
    from servertune.check.scripts import follow_words

    return Reading(apps=read_nomad_job(path, text, env, follow_words))


def _is_nomad(path: Path, text: str) -> bool:
    from servertune.check.nomad import looks_like_nomad_job

    return looks_like_nomad_job(path, text)


def _is_railway(path: Path, text: str) -> bool:
    from servertune.check.railway import looks_like_railway

    return looks_like_railway(path, text)


def _ecs(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.ecs import read_task_definitions
    from servertune.check.scripts import follow_words

    return Reading(apps=read_task_definitions(path, text, env, follow_words))


def _is_ecs(path: Path, text: str) -> bool:
    from servertune.check.ecs import looks_like_task_definition

    return looks_like_task_definition(path, text)


def _apache(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.apache import read_apache

    return Reading(balancers=read_apache(path, text, env))


def _is_apache(path: Path, text: str) -> bool:
    from servertune.check.apache import looks_like_apache

    return looks_like_apache(path, text)


def _unit(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.unit import read_unit

    return Reading(apps=read_unit(path, text, env))


def _is_unit(path: Path, text: str) -> bool:
    from servertune.check.unit import looks_like_unit

    return looks_like_unit(path, text)


def _unsupported_data(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    """YAML / JSON that is neither Kubernetes manifests nor a compose file: said in one note."""
    del env
    from servertune.check.model import NotSupported

    raise NotSupported(
        f"{path}: {path.suffix[1:].upper()} that is neither Kubernetes manifests nor a compose "
        "file (a kustomize patch, a values file?): not checked"
    )


def _is_data(path: Path, text: str) -> bool:
    del text
    return path.suffix in (".json", ".yaml", ".yml")


def _paste(path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    from servertune.check.paste import read_paste

    return Reading(apps=(read_paste(path, text, env),))


def _is_paste(path: Path, text: str) -> bool:
    from servertune.check.paste import looks_like_paste

    return looks_like_paste(path, text)


def _is_script(path: Path, text: str) -> bool:
    from servertune.check.scripts import looks_like_script

    return looks_like_script(path, text)


def _is_uwsgi(path: Path, text: str) -> bool:
    return path.suffix == ".ini" or any(
        line.strip() == "[uwsgi]" for line in text.splitlines()[:200]
    )


#: Directories nginx configs live in on Debian, Red Hat, Alpine and in the official image.
NGINX_DIRECTORIES = frozenset({"nginx", "sites-available", "sites-enabled", "conf.d", "http.d"})


def _is_nginx(path: Path, text: str) -> bool:
    """Named like an nginx config (`*.conf`, `nginx*`, in an nginx directory), or starting with a
    directive nginx has (crossplane's table of every directive of nginx and its modules)."""
    if path.suffix == ".conf" or "nginx" in path.name or path.parent.name in NGINX_DIRECTORIES:
        return True
    first = next(
        (
            line.split()[0].rstrip(";{")
            for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")
        ),
        "",
    )
    try:
        from crossplane.analyzer import DIRECTIVES
    except ModuleNotFoundError:  # without crossplane only the name can tell
        return False
    return first in DIRECTIVES


#: Modules the readers import from an optional extra, and that extra.
EXTRA_OF_MODULE = {
    "crossplane": "check",
    "yaml": "check",
    "gunicorn": "check",
    "dockerfile": "check",
    "dotenv": "check",
}


def _read_example(reader: Reader, path: Path, text: str, env: Mapping[str, str] | None) -> None:
    """An example copy (`examples.py`) read as its kind, then named as an example: what it
    starts or fronts is not deployed, so none of it joins the launch graph."""
    from servertune.check.model import CheckInputError, NothingToCheck
    from servertune.check.resolve import within_default

    try:
        with within_default(path):
            reader.read(path, text, env)
    except NothingToCheck:
        pass
    except CheckInputError as error:
        raise NothingToCheck(
            f"{path}: an example to copy to {path.stem}, read as {reader.described} "
            f"(not deployed): {error}"
        ) from None
    raise NothingToCheck(
        f"{path}: an example to copy to {path.stem}, read as {reader.described}: not "
        "deployed, so nothing in it is a launch or a front"
    )


def read_with(reader: Reader, path: Path, text: str, env: Mapping[str, str] | None) -> Reading:
    """`reader.read`, with a missing optional extra said in one line naming it, and a value no
    app server runs with refused."""
    from servertune.check.examples import EXAMPLE_KINDS, example_of
    from servertune.check.model import CheckInputError
    from servertune.check.resolve import within_default
    from servertune.check.values import refuse_nonsense

    if reader.kind in EXAMPLE_KINDS and example_of(path) is not None:
        _read_example(reader, path, text, env)
    try:
        with within_default(path):  # the files it names are read inside the run's tree only
            reading = reader.read(path, text, env)
    except ModuleNotFoundError as error:
        module = (error.name or "").split(".")[0]
        extra = EXTRA_OF_MODULE.get(module)
        if extra is None:
            raise
        raise CheckInputError(
            f"{path}: reading {reader.described} needs {module}: pip install 'servertune[{extra}]'"
        ) from None
    # Every reader's servers pass here: one gate for values no server runs with.
    for server in (*reading.apps, *reading.image_apps):
        refuse_nonsense(server)
    return reading


#: In order: the first reader that claims a file reads it.
READERS: Sequence[Reader] = (
    Reader("dockerfile", "a Dockerfile", _is_dockerfile, _dockerfile),
    Reader("procfile", "a Procfile", _is_procfile, _procfile),
    Reader("justfile", "a justfile (just's recipes)", _is_justfile, _justfile),
    Reader("hypercorn", "a Hypercorn config file (TOML)", _is_hypercorn, _hypercorn),
    Reader("caddy", "a Caddyfile", _is_caddy, _caddy),
    Reader("s2i", "OpenShift source-to-image's .s2i/environment", _is_s2i, _s2i),
    Reader("env", "an env file (KEY=value lines)", _is_env, _env),
    Reader(
        "platform",
        "a platform file (fly.toml, render.yaml, app.json, manifest.yml, App Engine app.yaml)",
        _is_platform,
        _platform,
    ),
    Reader(
        "digitalocean",
        "a DigitalOcean App Platform app spec (.do/app.yaml, YAML)",
        _is_digitalocean,
        _digitalocean,
    ),
    Reader("railway", "Railway's config (railway.toml, railway.json)", _is_railway, _railway),
    Reader(
        "copilot", "an AWS Copilot service manifest (copilot/*/manifest.yml)", _is_copilot, _copilot
    ),
    Reader("nomad", "a HashiCorp Nomad job file (*.nomad, *.nomad.hcl, HCL)", _is_nomad, _nomad),
    Reader("ecs", "an AWS ECS task definition (JSON, Terraform)", _is_ecs, _ecs),
    Reader("supervisord", "a supervisord config", _is_supervisord, _supervisord),
    Reader("systemd", "a systemd unit (.service, .socket, .timer)", _is_systemd, _systemd),
    Reader("upstart", "an Upstart job (/etc/init/*.conf)", _is_upstart, _upstart),
    Reader("compose", "a compose file (YAML)", _is_compose, _compose),
    Reader("traefik", "a Traefik config (YAML or TOML)", _is_traefik, _traefik),
    # Before gunicorn, which claims every `.py` file.
    Reader("launcher", "a Python launcher that starts a server", _is_launcher, _launcher),
    Reader("gunicorn", "a gunicorn config file (Python)", _is_python, _gunicorn),
    Reader("script", "a shell script that starts a server", _is_script, _script),
    # Before uWSGI, which claims every `.ini` file.
    Reader("paste", "a PasteDeploy ini file ([app:main], [server:main])", _is_paste, _paste),
    Reader("uwsgi", "a uWSGI ini file", _is_uwsgi, _uwsgi),
    Reader("kubernetes", "Kubernetes manifests (YAML)", _is_manifest, _kubernetes),
    Reader("haproxy", "an HAProxy config", _is_haproxy, _haproxy),
    Reader("unit", "an NGINX Unit config (JSON)", _is_unit, _unit),
    Reader(
        "heroku-nginx",
        "the Heroku nginx buildpack's config (config/nginx.conf.erb, ERB)",
        _is_heroku_nginx,
        _heroku_nginx,
    ),
    # Before nginx, which claims any file in an `nginx/` directory by its place.
    Reader("data", "YAML or JSON check does not read", _is_data, _unsupported_data),
    # Before nginx, which claims every `.conf` by its name (httpd's too).
    Reader("apache", "an Apache httpd config", _is_apache, _apache),
    Reader("nginx", "an nginx config", _is_nginx, _nginx),
)


def reader_for(path: Path, text: str, kind: str | None = None) -> Reader:
    """The reader that claims `path` (the reader of `kind` when given: the user says what the
    file is), or CheckInputError saying why none does."""
    from servertune.check.model import CheckInputError

    if not any(
        line.strip() and not line.lstrip().startswith(("#", ";")) for line in text.splitlines()
    ) and not (kind in (None, "env") and _is_env(path, text)):
        # (An env file of comments only, `.env.example` listing what to set, is read: no
        # variables, loaded or not by what the launch graph shows.)
        raise CheckInputError(
            f"{path}: empty (nothing but blank lines and comments): nothing to check"
        )
    if kind is not None:
        chosen = [reader for reader in READERS if reader.kind == kind]
        if not chosen:
            kinds = ", ".join(reader.kind for reader in READERS)
            raise CheckInputError(f"--kind {kind!r}: not a kind check reads (one of {kinds})")
        return chosen[0]
    for reader in READERS:
        if reader.claims(path, text):
            return reader
    kinds = "; ".join(r.described for r in READERS)
    raise CheckInputError(
        f"{path}: not a file check reads (it reads {kinds}; --kind says which one a file is)"
    )
