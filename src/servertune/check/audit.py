"""Read every file, link the chain and run the rules: what `servertune check` does, as a library."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from servertune.check import memo
from servertune.check.ansible_vars import is_play_template
from servertune.check.asgi_cli import child_of_run
from servertune.check.balancers import LoadBalancer
from servertune.check.budget import (
    OVER_BUDGET_FIX,
    OverBudget,
    each_within_budget,
    file_within_budget,
    linking_within_budget,
    not_linked,
    over_budget,
    overran_files,
)
from servertune.check.chain import (
    BalancerLink,
    HeldBalancer,
    KubeService,
    Link,
    Service,
    Stacks,
    Unjoined,
    link,
    link_balancers,
)
from servertune.check.dependencies import packaging_declarations
from servertune.check.deployed_fronts import deployed_siblings_first
from servertune.check.discover import NAMED_LIKE_READ, Discovery
from servertune.check.dockerfile import Image, building_from
from servertune.check.emperor import vassals_started
from servertune.check.environments import environments_differ
from servertune.check.graph import chain_files, one_reading_each
from servertune.check.ingress import kube_services
from servertune.check.installer_seds import installed_fills
from servertune.check.model import (
    DEVELOPMENT_SERVER_DEPLOYED,
    FRONT_PORT_MISSED,
    IGNORED_BY_PLATFORM,
    AppServer,
    CheckInputError,
    Finding,
    Location,
    NginxConfig,
    Note,
    NothingToCheck,
    NotSupported,
    Severity,
    collect_notes,
    evaluating_for,
    note,
    note_nothing_to_check,
)
from servertune.check.namespaces import (
    apart_notes,
    host_balancer_servers_first,
    host_servers_first,
    in_front_namespace,
)
from servertune.check.nearest_servers import nearest_servers_first
from servertune.check.port_fronts import joined_by_port, sidecar_joins, unknown_bind_joins
from servertune.check.readers import Reading, env_loads_of, read_with, reader_for
from servertune.check.resolve import confined_to, default_root
from servertune.check.rules import RULES, Context, run_rules
from servertune.check.rules.workers import DECLARED_LIMIT
from servertune.check.scripts import looks_like_script
from servertune.check.source import read_text, reading_as
from servertune.check.together import started_fronts, started_together
from servertune.check.unchosen_arms import unchosen_arm_notes
from servertune.check.unfollowed import reading_one_file
from servertune.check.unreached import unreached_servers
from servertune.check.unstarted import unstarted_capped
from servertune.check.value_templates import (
    installed_name,
    links_only,
    readings,
    renders_nothing,
    say_notes,
)
from servertune.machine import Machine
from servertune.sizing import Plan, plan_for
from servertune.workload import Workload

if TYPE_CHECKING:
    from servertune.check.ignored import BaselineReport, Suppressed
    from servertune.check.images import Build
    from servertune.logs.traffic import Traffic

__all__ = [
    "COVERAGE_RULES",
    "CheckResult",
    "FileError",
    "check_files",
    "config_kind",
    "plan_for_check",
    "read_config",
    "read_file",
]


#: Rules that say what check could not see rather than what is wrong (each declares
#: `kind="coverage"`): their results are coverage notes, printed apart and never changing
#: the exit status.
COVERAGE_RULES = frozenset(rule.id for rule in RULES.values() if rule.kind == "coverage")


@dataclass(frozen=True)
class FileError:
    """A file check could not read: the one-line reason (naming the file, and its line where
    there is one). The other files are still read and checked."""

    file: Path
    line: int | None
    message: str


def _file_error(path: Path, error: CheckInputError) -> FileError:
    message = str(error)
    line = None
    head, sep, _ = message.partition(": ")
    if sep and head.rpartition(":")[2].isdigit():
        line = int(head.rpartition(":")[2])
    return FileError(path, line, message)


@dataclass(frozen=True)
class CheckResult:
    """What was read (with its includes), how it links up, and what the rules found."""

    files: tuple[Path, ...]
    apps: tuple[AppServer, ...]
    nginx: tuple[NginxConfig, ...]
    links: tuple[Link, ...]
    findings: tuple[Finding, ...]
    lb: LoadBalancer | None
    plan: Plan | None
    #: Load balancer configs read (HAProxy backends) and what each one sends to.
    balancer_links: tuple[BalancerLink, ...] = ()
    #: Coverage: what was not followed or not known, and why (never a finding).
    notes: tuple[Note, ...] = ()
    #: Files that could not be read (exit 2), each with its one-line reason.
    errors: tuple[FileError, ...] = ()
    #: The core count the rules judged by, and where it came from.
    cores: tuple[int, str] | None = None
    #: Findings ignored (settings, an ignore comment or annotation, a baseline), with how and
    #: why: counted in every report, never in the exit status (`check.suppress`).
    suppressed: tuple[Suppressed, ...] = ()
    #: The `--baseline` run's matched and stale entries.
    baseline: BaselineReport | None = None
    #: Env files read, each with the files that load it (none: nothing found here loads it).
    env_files: tuple[tuple[Path, tuple[Path, ...]], ...] = ()
    #: Folders walked: what was found in each and what was skipped (the coverage summary).
    discovered: tuple[Discovery, ...] = ()

    def worst(self) -> Severity | None:
        """The highest severity found, None when clean."""
        return max((f.severity for f in self.findings), default=None)


def plan_for_check(workload: Workload, machine: Machine | None = None) -> Plan:
    """The plan `--workload` compares against: the one `servertune gen` would render."""
    return plan_for(workload, machine)


def config_kind(path: Path, text: str) -> str:
    """The kind of the reader that claims the file ('gunicorn', 'uwsgi', 'script', 'nginx', ...)."""
    return reader_for(path, text).kind


def read_file(path: Path, env: Mapping[str, str] | None = None, kind: str | None = None) -> Reading:
    """Everything one file contributes, read by the reader that claims it (or by the reader of
    `kind`, one of READERS' kinds, when the caller says what the file is)."""
    text = read_text(path)
    return read_with(reader_for(path, text, kind), path, text, env)


def read_config(path: Path, env: Mapping[str, str] | None = None) -> AppServer | NginxConfig:
    """One config file that holds exactly one app server or nginx site."""
    reading = read_file(path, env)
    found: tuple[AppServer | NginxConfig, ...] = (*reading.apps, *reading.nginx)
    if len(found) != 1:
        raise CheckInputError(f"{path}: holds {len(found)} server configs, not one")
    return found[0]


def _once(apps: Sequence[AppServer]) -> list[AppServer]:
    """Each server once. A server read twice (a Dockerfile given beside the compose file that
    builds it; a gunicorn.conf.py beside the Procfile that names it) is the same process: keep
    the reading that knows its container, or the first. A launch of its own that runs the
    same config (a Procfile's process beside an image's CMD) is another process."""

    def key(app: AppServer) -> tuple[object, ...]:
        # Where its command or config sets the workers; a dev compose file's `--reload` run
        # of an image is not the image's own run (which rollouts stop), so both are kept.
        return (app.kind, app.workers.at, app.reloads is not None)

    def started_apart(app: AppServer, other: AppServer) -> bool:
        # Two images (or scripts) each running the config with their own command (kitchenowl's
        # two Dockerfiles, `--ini wsgi.ini:web` and `wsgi.ini`): two processes, when neither
        # file that starts one is in the other's chain.
        if _other_lines(app, other):
            return True  # two entries of one Procfile, each run by honcho (superdesk's capi)
        # A script nothing here starts begins its own chain: it is a file that starts one.
        first, then = _start(app), _start(other)
        return first != then and first not in chain_files(other) and then not in chain_files(app)

    def launched_apart(app: AppServer, boxed: AppServer) -> bool:
        # A reading that starts at a file of its own (a Procfile's `web`, which Heroku or
        # Dokku runs as the app's launch) is another launch than a container's that runs
        # the same config, when neither start is in the other's chain (opensafely-core/
        # job-server: Procfile `web` and the image's CMD). One whose file the container's
        # chain goes through (a gunicorn.conf.py, a Dockerfile read alone) is that one.
        first, then = _start(app), _start(boxed)
        return first != then and first not in chain_files(boxed) and then not in chain_files(app)

    boxed: dict[tuple[object, ...], list[AppServer]] = {}
    for app in apps:
        if app.container is not None:
            boxed.setdefault(key(app), []).append(app)
    kept: list[AppServer] = []
    seen: dict[tuple[object, ...], list[AppServer]] = {}
    started = {f for a in apps if a.launched_by for f in chain_files(a)}
    for app in apps:
        # A script read on its own that a launch here runs: that launch, read where it runs
        # (its `cd fec` from the Procfile's folder finds what the script alone does not). A
        # config read alone may hold programs that launch does not start: kept.
        # A Python file (a launcher embedding gunicorn, a gunicorn config) starts one server,
        # the one the launch through it starts, even where that launch reloads (watchmedo).
        alone = not app.launched_by and app.container is None and app.file in started
        if alone and (app.file.suffix == ".py" or looks_like_script(app.file, read_text(app.file))):
            continue
        same = seen.get(key(app), [])
        if app.container is None and (
            any(not launched_apart(app, one) for one in boxed.get(key(app), []))
            or any(not started_apart(app, one) for one in same)
        ):
            continue
        seen.setdefault(key(app), []).append(app)
        kept.append(app)
    return kept


def _other_lines(app: AppServer, other: AppServer) -> bool:
    """Whether the two launches go through a file at other lines only (a Procfile's `rest:`
    and `capi:`, a supervisord file's two programs): other entries, so other processes."""
    lines: dict[Path, set[int]] = {}
    for at in app.launched_by:
        lines.setdefault(at.file, set()).add(at.line)
    theirs: dict[Path, set[int]] = {}
    for at in other.launched_by:
        theirs.setdefault(at.file, set()).add(at.line)
    return any(lines[f].isdisjoint(theirs[f]) for f in lines.keys() & theirs.keys())


def _start(app: AppServer) -> Path:
    """The file whose line starts the server: the first of its launch chain, or the file read
    on its own (nothing here runs it: a script that runs a config is a start of its own; a
    config alone is in the chain of any launch that runs it, so never apart from it)."""
    return app.launched_by[0].file if app.launched_by else app.file


def _published(
    reading: Reading, paths: Sequence[Path], images: Sequence[Image], env: Mapping[str, str] | None
) -> AppServer | None:
    """The server of the stage the compose builds tagging an image from the run's one
    Dockerfile target (`images.published_stage`: `target: main_image`), the image a
    deployment runs under a name the files do not complete (`_run_images`); None when they
    target none, and the Dockerfile's last stage stands (mozilla-ai/lumigator's chart ran its
    final `dev_image` stage's `uvicorn --reload`)."""
    from servertune.check.dockerfile import read_dockerfile
    from servertune.check.images import images_of_run, published_stage

    if len(reading.image_containers) != 1 or len(reading.image_apps) != 1:
        return None
    dockerfile = _start(reading.image_apps[0])
    builds = _builds(paths)
    stage = published_stage(dockerfile, builds)
    if stage is None:
        return None
    try:
        with collect_notes(), images_of_run(images, builds):  # its own reading said its notes
            text = read_text(dockerfile)
            return read_dockerfile(dockerfile, text, _env_for(dockerfile, "dockerfile", env), stage)
    except (CheckInputError, OSError):
        return None


def _one_each(
    reading: Reading, notes: list[Note], published: AppServer | None = None
) -> list[AppServer]:
    """Every app server once (`graph.one_reading_each`), a uWSGI emperor's vassals in its
    place (`emperor`)."""
    return one_reading_each(vassals_started(_run_images(reading, published), notes), notes)


def _run_images(reading: Reading, published: AppServer | None = None) -> list[AppServer]:
    """Every app server, with the one Kubernetes container that sets no command (and runs no
    proxy, database or sidecar image) bound to the server its image's CMD starts, when the run
    gives exactly one Dockerfile that starts one (with several of either, which container runs
    which image is not in these files); each followed by the servers its launch starts beside
    it (`together`)."""
    apps = list(reading.apps)
    if len(reading.image_containers) != 1 or len(reading.image_apps) != 1:
        return started_together(apps)  # which container runs which image is not in these files
    (image,) = reading.image_apps
    if image.container is not None:
        return started_together(apps)
    run = published or image  # the stage compose builds the image from, else its last
    bound = [dataclasses.replace(run, container=box) for box in reading.image_containers]
    return started_together([a for a in apps if a is not image] + bound)


def check_files(
    paths: Sequence[Path],
    *,
    lb: LoadBalancer | None = None,
    machine: Machine | None = None,
    plan: Plan | None = None,
    env: Mapping[str, str] | None = None,
    rss_mb: float | None = None,
    kind: str | None = None,
    traffic: Traffic | None = None,
    root: Path | None = None,
    discovered: Sequence[Discovery] = (),
) -> CheckResult:
    """Read every file, link the chain and run every rule.

    `machine` defaults to this one (its cgroup's cores and somaxconn); with a `plan`, the plan's
    machine is used instead. `env` is the environment the app server configs are evaluated in
    (default: this process's for a config read on its own; a container's own variables for a
    Dockerfile, compose file or manifest, which `env` adds to). `rss_mb` is one worker's
    resident memory (default: the plan's workload's `memory_per_worker_mb`, when it has one).
    `kind` reads every file with that reader instead of the one that claims it. `traffic`
    (an access log read by servertune.logs) adds the findings only traffic shows. `root` is
    the tree the files may name other files in (default: the files' common folder); a file
    named outside it is a coverage note, never read (`servertune.check.resolve`).
    """
    machine = machine or Machine.read()
    with _one_run(paths, root, discovered) as paths:
        reading, errors, notes, machine, where = _read_for_cores(paths, env, kind, machine, plan)
        # How each nginx template is rendered, while a build context may be up to the root.
        stacks = _rendered_fronts(_stacks(paths).rendering(reading.nginx), reading.nginx, paths)
        stacks = dataclasses.replace(stacks, named=not discovered)  # no folder walked
        published = _published(reading, paths, stacks.images, env)
        packaging = packaging_declarations(paths, root)
        late = overran_files()  # over their budget in a pass after their reading, too
    # Cores someone named (the workload, --cores, a Machine the caller built, a CPU limit in
    # the files), not the checker's own: a worker count is judged against them.
    cores_named = plan is not None or not where.startswith("this machine")
    apps, nginx = _once(_one_each(reading, notes, published)), list(reading.nginx)
    links, fronts = _linked_in_budget(reading, apps, stacks, notes, root or default_root(paths))
    rss_mb, rss_source = _rss(rss_mb, plan)
    context = Context(
        apps,
        nginx,
        links,
        lb,
        machine,
        plan,
        rss_mb=rss_mb,
        rss_source=rss_source,
        balancer_links=fronts,
        cores_named=cores_named,
        walked=bool(discovered),
        packaging=packaging,
        ignored=_taken(notes, IGNORED_BY_PLATFORM),
        development_servers=_taken(notes, DEVELOPMENT_SERVER_DEPLOYED),
        ports_missed=_taken(notes, FRONT_PORT_MISSED),
    )
    files = _files_read(reading, apps, paths, errors, notes)
    findings = _known(_findings(context, notes, traffic, paths), discovered)
    walks = _templates_read(discovered, files, apps)
    notes += _walk_notes(walks, notes) + unreached_servers(files, apps, notes, walks)
    files = _over_budget_late(late, files, notes, errors, walked=bool(discovered))
    return CheckResult(
        files=tuple(dict.fromkeys(files)),
        apps=tuple(apps),
        nginx=tuple(nginx),
        links=tuple(links),
        findings=tuple(findings),
        lb=lb,
        plan=plan,
        balancer_links=tuple(fronts),
        notes=_deduplicated(notes),
        errors=tuple(errors),
        cores=((plan.machine if plan is not None else machine).cores, where),
        env_files=_env_files(reading, apps),
        discovered=tuple(walks),
    )


def _files_read(
    reading: Reading,
    apps: Sequence[AppServer],
    paths: Sequence[Path],
    errors: Sequence[FileError],
    notes: Sequence[Note],
) -> list[Path]:
    """The files read: those the servers and fronts were read from, and each file given but
    those not read (an error, a file over its budget)."""
    files = (
        [b.file for b in reading.balancers]
        + [p for n in reading.nginx for p in n.files]
        + [a.file for a in apps]
        + list(reading.files)
    )
    failed = {e.file for e in errors} | {n.at.file for n in notes if n.fix == OVER_BUDGET_FIX}
    files += [p for p in paths if p not in failed]  # a file that brought nothing still counts
    return files


def _linked_in_budget(
    reading: Reading, apps: list[AppServer], stacks: Stacks, notes: list[Note], where: Path
) -> tuple[list[Link], list[BalancerLink]]:
    """`_linked` within the linking's budget (`LINK_BUDGET_S`): over it, no link and one note
    at the tree read (`where`), so the run ends as one that found none, never a hang. Every
    pass the linking starts is bounded by it (a file's own budget does not nest in it)."""
    try:
        # A run of the memo's own (the reading's is over, its confinement with it): linking
        # asks for a service's build target stage once per front file it looks for.
        with memo.one_run(), linking_within_budget():
            return _linked(reading, apps, stacks, notes)
    except OverBudget:
        notes.append(Note("not-followed", Location(where), not_linked(), OVER_BUDGET_FIX))
        return [], []


def _over_budget_late(
    late: Sequence[Path],
    files: list[Path],
    notes: list[Note],
    errors: list[FileError],
    *,
    walked: bool,
) -> list[Path]:
    """`files` less those over their budget; each over it after its reading (`late`, or a
    `not-read` note of a pass after the run) named once as one over it in its reading is: a
    `not-read` note in a walk, an error when the user named it."""
    over = [*late, *(n.at.file for n in notes if n.kind == "not-read" and n.fix == OVER_BUDGET_FIX)]
    if not walked:
        notes[:] = [n for n in notes if not (n.kind == "not-read" and n.fix == OVER_BUDGET_FIX)]
    said = {os.path.normpath(e.file) for e in errors}
    said |= {_path(n) for n in notes if n.kind == "not-read" and n.fix == OVER_BUDGET_FIX}
    named = dict.fromkeys(os.path.normpath(p) for p in over)
    for name in named:
        if name in said:
            continue
        said.add(name)
        message = f"{name}: {over_budget()}"
        if walked:
            notes.append(Note("not-read", Location(Path(name)), message, OVER_BUDGET_FIX))
        else:
            errors.append(FileError(Path(name), None, message))
    return [f for f in files if os.path.normpath(f) not in named]


def _linked(
    reading: Reading, apps: list[AppServer], stacks: Stacks, notes: list[Note]
) -> tuple[list[Link], list[BalancerLink]]:
    """The nginx passes and the balancers' servers joined to what listens there, with a note
    (added to `notes`) for each host nothing read answers to."""
    nginx = list(reading.nginx)
    unjoined: list[Unjoined] = []
    with collect_notes() as said:
        found = link(nginx, apps, stacks, unjoined)
        # A local address reaches the front's own container only (`namespaces`).
        apart = [
            k for k in found if not in_front_namespace(k.nginx, k.server.value, k.app, stacks, apps)
        ]
        away = {id(k) for k in apart}
        links = [
            k
            for k in found
            if id(k) not in away
            and not environments_differ((k.nginx.files or (k.nginx.file,))[0], k.app)
        ]
        # A proxy image's loopback: the one server of an image no container here runs.
        links += sidecar_joins(apart, links, stacks, apps)
        # A service's one server of unknown bind: joined when the front names one port of it.
        links = unknown_bind_joins(links)
        apart_notes(apart, links)
        # Of servers one local address reaches, those of the front's own setup (`nearest_servers`).
        links = nearest_servers_first(host_servers_first(links, stacks), stacks)
        links = deployed_siblings_first(links, stacks)
        # A Traefik service is read through its static config and on its own: once.
        held: list[HeldBalancer] = []
        balancers = list(dict.fromkeys(reading.balancers))
        fronts = link_balancers(balancers, nginx, apps, stacks, held)
        fronts = host_balancer_servers_first(fronts, stacks)
        # A host nothing read answers to: joined by its port where only one server is there.
        fronted = [*(k.app for k in links), *(f.app for f in fronts if f.app is not None)]
        by_port, balancer_ports = joined_by_port(unjoined, fronted, held)
        links += by_port
        fronts += balancer_ports
    notes += said
    return links, fronts


#: Whether the run in progress reads the files of a folder walk (else files the user named).
_WALKED: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "servertune_check_walked", default=False
)


@contextlib.contextmanager
def _walking(walked: bool) -> Iterator[None]:
    """The block run as a folder walk's reading (`walked`) or as files the user named."""
    token = _WALKED.set(walked)
    try:
        yield
    finally:
        _WALKED.reset(token)


@contextlib.contextmanager
def _one_run(
    paths: Sequence[Path], root: Path | None, discovered: Sequence[Discovery] = ()
) -> Iterator[list[Path]]:
    """A run's setting: the tree it may read (`root`, else the files' common folder), its
    memo of answers, its one child reading uvicorn's and granian's command lines, the build
    contexts its compose files give its Dockerfiles, and the templates its walks found that
    it reads as their kind (`_in_place`); gives the files to read, those templates added."""
    with (
        confined_to(root if root is not None else default_root(paths)),
        memo.one_run(),
        child_of_run(),
        building_from(_build_contexts(paths)),
        _walking(bool(discovered)),
    ):
        read_as = readings(_in_place(paths, discovered))
        with reading_as(read_as):
            yield [*paths, *(p for p in read_as if p not in paths)]


def _in_place(paths: Sequence[Path], discovered: Sequence[Discovery]) -> list[Path]:
    """The templates the walks found whose templating is only in values, but those an image
    of the run holds under a template suffix to render where the container starts
    (`_rendered_at_start`): a command reads that one as what it renders to (`check.jinja`,
    `runtime_files`) when it names it, and it stays skipped when none does."""
    from servertune.check.images import read_images
    from servertune.check.jinja import TEMPLATE_SUFFIXES

    found = [p for walk in discovered for p in walk.in_place]
    suffixed = [p for p in found if p.name.endswith(TEMPLATE_SUFFIXES)]
    if not suffixed:
        return found
    images = read_images(paths)

    def text_of(path: Path) -> str | None:
        try:
            return read_text(path)
        except (OSError, CheckInputError):
            return None  # its reader says why, once

    # One over its budget is left out: its reading says so.
    texts = [t for _, t in each_within_budget(paths, text_of) if t is not None]
    # One read for links only (its structure templated) is held only when an image copies it
    # by name or folder: check.jinja renders no structure it cannot evaluate, and a file
    # merely naming what it renders to (`--output-file /etc/nginx/nginx.conf` of a generator
    # run at start; openstack/skyline-apiserver) leaves it unread otherwise.
    structured = links_only(suffixed)
    held = {
        p
        for p in suffixed
        if _rendered_at_start(p, images, texts, os.path.normpath(os.path.abspath(p)) in structured)
    }
    return [p for p in found if p not in held]


def _rendered_at_start(
    template: Path, images: Sequence[Image], texts: Sequence[str], structured: bool = False
) -> bool:
    """Whether an image copies `template` by its name or folder (`COPY conf/ /srv/conf/`), or
    copies it with its whole build context (`COPY . /app`, which carries every file, another
    setup's role too) and a file of the run names it or what it renders to (`j2 app.ini.j2`,
    `supervisord -c /app/supervisord.conf`)."""
    if any(i.holds(template, whole_context=False) is not None for i in images):
        return True
    if structured or not any(i.holds(template) is not None for i in images):
        return False
    if is_play_template(template):
        # An ansible role's template that an image carries only with its whole context (the
        # role in the repository `COPY . /app` copies) is rendered by the play on its hosts;
        # a file naming what it installs as (`rm /etc/nginx/sites-enabled/default`) says
        # nothing of a render at start (dfirtrack/dfirtrack).
        return False
    names = {template.name, installed_name(template.name)}
    return any(
        re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", text)
        for name in names
        for text in texts
    )


def _build_contexts(paths: Sequence[Path]) -> dict[Path, Path]:
    """Each Dockerfile the run's compose files build with one context, with that context (a
    Dockerfile read on its own is built from there: `dockerfile.building_from`); none without
    the YAML parser (a compose file's reading names the extra, once)."""
    try:
        from servertune.check.compose import build_contexts
    except ModuleNotFoundError:
        return {}
    return {f: next(iter(c)) for f, c in build_contexts(paths).items() if len(c) == 1}


def _stacks(paths: Sequence[Path]) -> Stacks:
    """The compose services of the compose files given, whether or not they start a server:
    which stack each front belongs to (`chain.Stacks`)."""
    from servertune.check.images import images_of_run, read_images

    services: list[Service] = []
    kube: list[KubeService] = []
    overlays: list[tuple[Path, Path]] = []
    includes: list[tuple[Path, Path]] = []
    written_from: dict[Path, Path] = {}  # each folder mounts are written from: its first file
    scripts: list[tuple[Path, str]] = []
    images = read_images(paths)

    def gather(path: Path) -> None:
        nonlocal services, kube, overlays, includes, scripts
        try:
            text = read_text(path)
            kind = reader_for(path, text).kind
            if kind == "compose":
                from servertune.check.compose import included_files, services_of

                # The images of the run: a service's `image:` is the Dockerfile its reading
                # links it to.
                with images_of_run(images, _builds(paths)):
                    services += services_of(path, text)
                overlays += _overlay_of(path, text)
                includes += [(path, f) for f in included_files(path, text)]
                includes += _written_from(path, text, written_from)
            elif kind == "kubernetes":
                kube += kube_services(path, text)
            elif kind == "script" and "sed" in text:
                scripts.append((path, text))
        except (CheckInputError, OSError, ModuleNotFoundError):
            return  # its reading says why (a missing extra too, in one line)

    each_within_budget(paths, gather)  # one over its budget is named by the run, once
    from servertune.check.front_start import renders_of_run

    # Which templates each nginx service's start renders: the one its command names.
    with images_of_run(images, _builds(paths)):
        renders = renders_of_run(paths) if services else ()
    # What an installer's sed writes in the copies it installs (`installer_seds`).
    root = Path(os.path.commonpath([p.absolute().parent for p in paths])) if paths else None
    installed = installed_fills(scripts, root)
    return Stacks(
        tuple(services),
        images,
        tuple(kube),
        overlays=tuple(overlays),
        includes=tuple(includes),
        renders=renders,
        installed=installed,
    )


def _rendered_fronts(stacks: Stacks, nginx: Sequence[NginxConfig], paths: Sequence[Path]) -> Stacks:
    """`stacks` with, for each front (an nginx config's first file) that the command of an
    image holding it renders with envsubst in the passes of a loop over words (`for app in
    WEB ADMIN; do ... envsubst <site.template >$app.conf; done`), the environment of each
    pass: each rendered file is a front of its own, whose `${NAME}` placeholders are that
    pass's values (`Stacks.each_pass`)."""
    from servertune.check.dockerfile import container_words
    from servertune.check.images import images_of_run
    from servertune.check.scripts import files_made_by_loops

    found: list[tuple[Path, tuple[tuple[tuple[str, str], ...], ...]]] = []
    with images_of_run(stacks.images, _builds(paths)):
        for config in nginx:
            files = config.files or (config.file,)
            targets = [p.target for p in (*config.passes, *getattr(config, "templated_passes", ()))]
            targets += [s.value for u in config.upstreams.values() for s in u.servers]
            if not any("${" in t for t in targets):
                continue
            outside = stacks.front_environment(files)
            passes: list[tuple[tuple[str, str], ...]] = []
            for image in stacks.images:
                held = image.holds(files[0], whole_context=False)
                if held is None:
                    continue
                words = container_words(
                    image, image.entrypoint, image.entrypoint_shell, image.cmd, image.cmd_shell
                )
                env = {**image.env, **outside}
                made = files_made_by_loops(
                    image.path, [*words[0], *words[1]], env, image.env_at, image.find
                )
                passes += [
                    tuple(sorted({**env, **dict(m.environment)}.items()))
                    for m in made
                    if m.rendered and m.source == os.path.normpath(held)
                ]
            if passes:
                found.append((files[0], tuple(dict.fromkeys(passes))))
    return dataclasses.replace(stacks, front_passes=tuple(found)) if found else stacks


def _written_from(path: Path, text: str, seen: dict[Path, Path]) -> list[tuple[Path, Path]]:
    """[(path, the first compose file read whose mounts are written from the same folder
    above)] when the mounts of `path` (read: `text`) are written from a folder above it
    (`overlay.mounts_project`): both are fragments `docker compose -f` gives together from
    that folder, one project (bird-house/birdhouse-deploy's components); `seen` keeps the
    first file of each folder."""
    from servertune.check.overlay import mounts_project, services_in

    services = services_in(path, text)
    folder = mounts_project(path, services) if services is not None else None
    if folder is None:
        return []
    first = seen.setdefault(folder, path)
    return [(path, first)] if first != path else []


def _overlay_of(path: Path, text: str) -> list[tuple[Path, Path]]:
    """[(path, its base)] when the compose file `path` (read: `text`) is a labelled overlay,
    else []."""
    from servertune.check.overlay import base_of, services_in

    services = services_in(path, text)
    base = base_of(path, services) if services is not None else None
    return [(path, base)] if base is not None else []


def _templates_read(
    discovered: Sequence[Discovery], files: Sequence[Path], apps: Sequence[AppServer]
) -> list[Discovery]:
    """Each walk without the templates a chain read as the file they render to where the
    container starts (`check.jinja`): those were read, not skipped; one the run read as its
    kind (`_in_place`) counts among the files read."""
    read = {os.path.normpath(p) for p in [*files, *(f for a in apps for f in chain_files(a))]}
    return [
        dataclasses.replace(
            walk,
            # A file the walk skipped that a chain read (a template rendered where the
            # container starts, a launcher script a chain ran: `CMD ["python",
            # "entrypoint.py"]`, a runit service's script) moves to the files read.
            files=tuple(
                dict.fromkeys(
                    [
                        *walk.files,
                        *(
                            p
                            for p in (
                                *(t[0] for t in walk.templates),
                                *walk.unclaimed,
                                *walk.passed,
                            )
                            if os.path.normpath(p) in read
                        ),
                    ]
                )
            ),
            templates=tuple(t for t in walk.templates if os.path.normpath(t[0]) not in read),
            unclaimed=tuple(p for p in walk.unclaimed if os.path.normpath(p) not in read),
        )
        for walk in discovered
    ]


def _walk_notes(discovered: Sequence[Discovery], said: Sequence[Note] = ()) -> list[Note]:
    """What each folder walk skipped, said once: templates at their first template line (but
    one a chain tried to render, whose `template` note in `said` already says why it was not
    read), and the files named like a kind check reads that no reader claims, in one note per
    folder."""
    notes: list[Note] = []
    tried = {os.path.normpath(n.at.file) for n in said if n.kind == "template"}
    for walk in discovered:
        for path, line in walk.templates:
            if os.path.normpath(path) in tried:
                continue
            if (judged := renders_nothing(Path(path))) is not None:
                notes.append(
                    Note(
                        "template",
                        Location(path, judged),
                        f"{path}:{judged}: a Helm template that renders nothing with its chart's "
                        f"values.yaml (the `{{{{ if }}}}` at line {judged} is false there): not "
                        "deployed unless another values file or helm's --set turns it on",
                    )
                )
                continue
            notes.append(
                Note(
                    "template",
                    Location(path, line),
                    f"{path}:{line}: a template (Jinja / Helm / ERB / `%`-placeholders): what it renders to is not in "
                    "the repository, so it was not read",
                    "check the rendered file (helm template, the Jinja render) instead",
                )
            )
        if walk.unclaimed:
            notes.append(_not_read_note(walk))
    return notes


def _not_read_note(walk: Discovery) -> Note:
    """One note naming what a walk skipped, by reason: the files named like a kind check reads
    (an empty one, `nginx.conf` all commented out, says so: it is of a kind read), then a count
    and the first few names of each kind check does not read."""
    why = dict(walk.reasons)
    by_reason: dict[str, list[Path]] = {}
    for path in walk.unclaimed:
        by_reason.setdefault(why.get(path, NAMED_LIKE_READ), []).append(path)
    named = by_reason.pop(NAMED_LIKE_READ, [])
    parts: list[str] = []
    if named:
        shown = ", ".join(
            f"{p} (empty: only comments)" if p in walk.empty else str(p) for p in named[:8]
        )
        more = f" and {len(named) - 8} more" if len(named) > 8 else ""
        parts.append(
            f"{len(named)} file(s) found in {walk.root} {NAMED_LIKE_READ} that no reader "
            f"claims: {shown}{more}"
        )
    if by_reason:
        kinds = "; ".join(
            f"{reason} ({len(paths)}): {', '.join(str(p) for p in paths[:3])}"
            + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
            for reason, paths in by_reason.items()
        )
        parts.append(("also " if named else f"found in {walk.root}, not read: ") + kinds)
    return Note(
        "not-read",
        Location(named[0] if named else walk.unclaimed[0]),
        "; ".join(parts),
        "name one with --kind to read it as that kind",
    )


def _env_files(
    reading: Reading, apps: Sequence[AppServer]
) -> tuple[tuple[Path, tuple[Path, ...]], ...]:
    """Each env file read, with the files that load it: a compose file whose `env_file` (or
    `.env`) it is."""
    del apps
    loaded_by: dict[Path, list[Path]] = {}
    for path in reading.env_files:
        loaded_by.setdefault(path, [])
    for loader, path in reading.env_loads:
        loaded_by.setdefault(path, []).append(loader)
    return tuple((path, tuple(dict.fromkeys(by))) for path, by in loaded_by.items())


def _read_for_cores(
    paths: Sequence[Path],
    env: Mapping[str, str] | None,
    kind: str | None,
    machine: Machine,
    plan: Plan | None,
) -> tuple[Reading, list[FileError], list[Note], Machine, str]:
    """Every file read with CPU-count expressions evaluated for the cores the user named
    (--cores, the workload's machine); else for the CPU limit the deployment files declare;
    else for this machine's: the reading, its errors and notes, the machine judged and where
    its cores came from, which the report says."""
    judged = plan.machine if plan is not None else machine
    # Named by the user: `--cores`, or `cores` in the settings file (`cores in pyproject.toml`).
    named = plan is not None or machine.cores_source.startswith(("--cores", "cores in "))
    where = "the workload's machine" if plan is not None else judged.cores_source
    # This machine's cores (cgroup and affinity included) until the files name a limit, so
    # the count evaluated is the count the summary reports.
    with collect_notes() as notes, evaluating_for(judged.cores):
        reading, errors = _read_all(paths, env, kind)
    if not named:
        limits = [
            a.container.cpu_limit
            for a in reading.apps
            if a.container is not None and a.container.cpu_limit is not None
        ]
        if limits:
            limit = max(limits, key=lambda s: s.value)
            cores = max(1, math.ceil(limit.value))
            where = f"{DECLARED_LIMIT} {limit.at}"
            machine = machine.model_copy(update={"cores": cores, "cores_source": where})
            if cores != judged.cores:  # the same count reads the same: read once
                with collect_notes() as notes, evaluating_for(cores):
                    reading, errors = _read_all(paths, env, kind)
        else:
            where = (
                "the machine given"  # a library caller's own Machine: named, not probed
                if machine.cores_source == "given"
                else f"this machine ({machine.cores_source})"
            )
    return reading, errors, notes, machine, where


def _rss(rss_mb: float | None, plan: Plan | None) -> tuple[float | None, str]:
    """One worker's resident memory and where it came from: `--rss-mb`, else the plan's
    workload's `memory_per_worker_mb`."""
    if rss_mb is None and plan is not None and plan.workload.memory_per_worker_mb is not None:
        return float(plan.workload.memory_per_worker_mb), "memory_per_worker_mb"
    return rss_mb, "--rss-mb"


def _taken(notes: list[Note], kind: str) -> tuple[Note, ...]:
    """The notes of `kind` (`IGNORED_BY_PLATFORM`, `DEVELOPMENT_SERVER_DEPLOYED`), each once,
    taken out of `notes`: a rule's findings, not coverage."""
    found = tuple(dict.fromkeys(n for n in notes if n.kind == kind))
    notes[:] = [n for n in notes if n.kind != kind]
    return found


def _known(findings: Sequence[Finding], discovered: Sequence[Discovery]) -> list[Finding]:
    """`findings` but those at or involving a template read for links only
    (`value_templates.read_links`): its values are not known, so nothing is judged by them."""
    unknown = links_only([p for walk in discovered for p in walk.in_place])
    return [
        f
        for f in findings
        if not any(
            os.path.normpath(os.path.abspath(at.file)) in unknown for at in (f.at, *f.related)
        )
    ]


def _findings(
    context: Context, notes: list[Note], traffic: Traffic | None, paths: Sequence[Path]
) -> list[Finding]:
    """Every rule's findings, each once; the coverage rules' findings become `notes`, with
    the entrypoints' server arms no file here chooses (`unchosen_arms`)."""
    notes += unchosen_arm_notes(context.apps)
    findings: list[Finding] = []
    # One script read through two paths (`docker/run.sh` and `docker/../docker/run.sh`, a
    # Dockerfile's COPY resolved from another directory) is one line to change.
    seen: set[tuple[str, str, int]] = set()
    for finding in run_rules(context):
        where = (finding.rule, os.path.normpath(finding.at.file), finding.at.line)
        if finding.rule in COVERAGE_RULES:
            notes.append(Note(finding.rule, finding.at, finding.message, finding.fix))
        elif where in seen:
            continue
        elif finding not in findings:
            seen.add(where)
            # The same finding once: five `location`s inheriting one http-level
            # proxy_read_timeout in front of one app are one line to change, not five.
            findings.append(finding)
    if traffic is not None:  # the log's rules import the log reader: only when given one
        from servertune.check.traffic import one_fix_per_line, traffic_findings

        findings = one_fix_per_line([*findings, *traffic_findings(context, traffic)])
        findings.sort(key=lambda f: (str(f.at.file), f.at.line, f.rule))
    if context.walked:  # a file the user names is theirs to judge, started or not
        findings = unstarted_capped(findings, [*context.apps, *context.set_aside], notes, paths)
    return findings


def _read_all(
    paths: Sequence[Path], env: Mapping[str, str] | None, kind: str | None
) -> tuple[Reading, list[FileError]]:
    """Every file's reading; a file that cannot be read is an error of its own and the rest are
    still read (as linters do: one template must not hide the other files' findings)."""
    from servertune.check.build_targets import built_by_compose
    from servertune.check.config_maps import config_maps_of_run
    from servertune.check.front_start import fronts_of_run
    from servertune.check.images import images_of_run, read_images
    from servertune.check.model import collect_refused
    from servertune.check.nginx import mounts_of_run, read_started_nginx
    from servertune.check.supervisord import NGINX_READER
    from servertune.check.written_files import written_by_scripts
    from servertune.check.written_fronts import written_fronts
    from servertune.check.written_units import written_units

    # Entered in order: a front's start is read with the images of the run set.
    token = NGINX_READER.set(read_started_nginx)  # a supervisord program's nginx
    try:
        # The images too are built from the contexts the build commands give.
        with collect_refused() as refused, built_by_compose(paths):
            images = read_images(paths)
            with (
                images_of_run(images, _builds(paths)),
                mounts_of_run(paths),
                fronts_of_run(paths, images),
                config_maps_of_run(paths),
                written_by_scripts(paths),
            ):
                reading, errors = _read_each(paths, env, kind)
                reading = dataclasses.replace(reading, apps=_scripts_in_images(reading.apps))
                reading += Reading(nginx=written_fronts(paths), apps=written_units(paths))
    finally:
        NGINX_READER.reset(token)
    for at, message in dict.fromkeys(refused):  # once, however many readings met the line
        errors.append(FileError(at.file, at.line, f"{at}: {message}"))
    # The fronts a launch starts from rendered templates (a supervisord program's nginx).
    return reading + Reading(nginx=tuple(started_fronts(reading.apps))), errors


def _scripts_in_images(apps: Sequence[AppServer]) -> tuple[AppServer, ...]:
    """Each app, `script_in_image` when an image of the run copies the script that runs it
    without `exec` (what could make that shell a container's PID 1)."""
    from servertune.check.images import image_holding

    return tuple(
        dataclasses.replace(app, script_in_image=True)
        if app.without_exec is not None and image_holding(app.without_exec.at.file) is not None
        else app
        for app in apps
    )


def _builds(paths: Sequence[Path]) -> tuple[Build, ...]:
    """The images the run's compose files build and tag (none without the YAML parser: a
    compose file's reading names the extra, once)."""
    try:
        from servertune.check.compose import read_builds
    except ModuleNotFoundError:
        return ()
    return read_builds(paths)


def _read_each(
    paths: Sequence[Path], env: Mapping[str, str] | None, kind: str | None
) -> tuple[Reading, list[FileError]]:
    """Each file's reading, within its time budget (`check.budget`): one that overruns it is
    a `not-read` note in a folder walk and an error when named (the user said to read it),
    and the other files are still read."""
    reading = Reading()
    errors: list[FileError] = []
    for path in paths:
        try:
            with file_within_budget(path):
                text = read_text(path)
                say_notes(path, text)  # a template read as its kind: what it left unknown
                reader = reader_for(path, text, kind)
                with reading_one_file():
                    one = read_with(reader, path, text, _env_for(path, reader.kind, env))
        except OverBudget:
            # A backstop against input nobody foresaw (a regex backtracking on it), not a hang.
            if _WALKED.get():
                note("not-read", Location(path), f"{path}: {over_budget()}", OVER_BUDGET_FIX)
            else:
                errors.append(FileError(path, None, f"{path}: {over_budget()}"))
            continue
        except NothingToCheck as nothing:
            # A link not followed is said once however many files reach it.
            note_nothing_to_check(path, nothing)
            reading += env_loads_of(path, text, reader.kind)
            continue
        except NotSupported as unsupported:
            note("not-supported", Location(path), str(unsupported))
            continue
        except CheckInputError as error:
            errors.append(_file_error(path, error))
            continue
        if reader.kind == "env":
            one = Reading(files=one.files, env_files=(path,))
        elif not one.apps and not one.nginx and not one.balancers:
            note(
                "starts-no-server",
                Location(path),
                f"{path}: read as {reader.described}; it starts no app server and holds no "
                "proxy in front of one (nginx, HAProxy, a Caddy reverse_proxy, a Traefik service)",
            )
        reading += one
    return reading, errors


#: Kinds that set their server's environment themselves (an image's ENV, a service's).
_OWN_ENVIRONMENT = frozenset({"dockerfile", "compose", "kubernetes", "env"})


def _env_for(path: Path, kind: str, env: Mapping[str, str] | None) -> Mapping[str, str] | None:
    """The environment a file is read in: an image of the run that copies it runs it under
    its `ENV` (then `--env-file`'s values); else `env` as given."""
    from servertune.check.images import env_of_image

    if kind in _OWN_ENVIRONMENT:
        return env
    held = env_of_image(path)
    return env if held is None else {**held, **(env or {})}


def _path(one: Note) -> str:
    return os.path.normpath(one.at.file)


def _says_nothing_started(one: Note) -> bool:
    """A `starts-no-server` note that says the file starts nothing (not one that says why it
    is not deployed: an example copy, a kustomize patch)."""
    return one.kind == "starts-no-server" and (
        "starts no " in one.message or "no service starts" in one.message
    )


def _deduplicated(notes: Sequence[Note]) -> tuple[Note, ...]:
    """Each note once: the same thing not followed at several lines (one include in every
    server block) is one note at its first line, counting the others."""
    first: dict[tuple[str, Path, str], Note] = {}
    more: dict[tuple[str, Path, str], int] = {}
    seen: set[Note] = set()
    # One link not followed at one line, read with a Dockerfile's variables and without
    # (a script read alone): one note, the one that names the most (the fewest `$` left).
    at_line: dict[Location, Note] = {}
    for one in notes:
        if one.kind == "not-followed":
            kept = at_line.get(one.at)
            if kept is None or one.message.count("$") < kept.message.count("$"):
                at_line[one.at] = one
    notes = [n for n in notes if n.kind != "not-followed" or at_line[n.at] is n]
    # "Starts no server" is said of a file only when every link in it was followed: one
    # that stopped at a link (an image no Dockerfile here is known to build, an extends file
    # not here) says where instead, in its not-followed note (clowder2's compose files).
    stopped = {_path(n) for n in notes if n.kind == "not-followed"}
    notes = [n for n in notes if not (_says_nothing_started(n) and _path(n) in stopped)]
    for one in sorted(notes, key=lambda n: (str(n.at.file), n.at.line)):
        if one in seen:
            continue  # the same line noted twice (a COPY looked through for two files)
        seen.add(one)
        key = (one.kind, one.at.file, one.message)
        if key in first:
            if one.at != first[key].at:  # the same line reached twice is one line
                more[key] = more.get(key, 0) + 1
        else:
            first[key] = one
    return tuple(
        Note(n.kind, n.at, n.message + (f" (and {more[k]} more lines)" if k in more else ""), n.fix)
        for k, n in first.items()
    )
