"""A folder -> the files `servertune check` reads in it, told by name and content.

Discovery is apart from reading (as ruff's resolver is): one walk honours `.gitignore` files
(each at its own level, with git's own pattern rules through `pathspec`) and skips the trees no
one deploys from (virtualenvs, `node_modules`, `site-packages`, build output, VCS folders), then
each file that *could* be a deployment file by its name is offered to the readers' registry.

A found file no reader claims is skipped and named in the coverage summary (the same file named
on the command line is an error: the user said to read it). Source code, documentation and data
are not candidates at all: a `views.py` is not a gunicorn config because it is Python, so a `.py`
file is a candidate only when its name says gunicorn; YAML only when it is a compose file or has
Kubernetes' `apiVersion:` and `kind:`; a `.conf` only when it is an nginx or supervisord config
by its place or its content. A template (Jinja `{{ }}` / `{% %}`, a Helm chart's manifests) is
skipped with one line naming its first template line: what it renders to is not in the
repository.

The root is a value passed in, never the process's working directory looked up inside.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from servertune.check.budget import OverBudget, over_budget, within_budget
from servertune.check.commands import is_dockerfile
from servertune.check.compose_v1 import COMPOSE_V1, legacy_v1
from servertune.check.envfile import env_named
from servertune.check.heroku_nginx import is_buildpack_config
from servertune.check.justfile import looks_like_justfile
from servertune.check.model import CheckInputError
from servertune.check.nomad import looks_like_nomad_job, nomad_template_line
from servertune.check.readers import NGINX_DIRECTORIES
from servertune.check.template_markers import (
    SHEBANG,
    percent_line,
    placeholder_line,
    template_line,
)
from servertune.check.vendored import VENDORED_DIRECTORIES, named_in_vendored

__all__ = ["NAMED_LIKE_READ", "SKIPPED_DIRECTORIES", "Discovery", "discover", "template_line"]

#: Folders no deployment is read from: dependencies, virtualenvs, caches, build output, VCS data.
#: (A folder holding `pyvenv.cfg` is a virtualenv whatever its name.)
SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "bower_components",
        ".venv",
        "venv",
        "site-packages",
        "dist-packages",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
        "build",
        "dist",
        "_build",
        "htmlcov",
        ".next",
        ".terraform",
        "vendor",
        "third_party",
    }
)

#: Files larger than this are not deployment files (the readers' own bound refuses them when
#: named); a walk does not even open them.
_MAX_CANDIDATE_BYTES = 2 * 1024 * 1024

#: nginx blocks and proxy directives: content that is an nginx config whatever the name.
_NGINX_CONTENT = re.compile(
    r"^\s*(server|http|upstream|events|location\s[^{]*)\s*\{|^\s*(proxy_pass|uwsgi_pass)\s", re.M
)


#: Names a shell script that starts the app is given without a suffix.
_SCRIPT_NAMES = re.compile(
    r"\A(docker-)?(entrypoint|start|run|boot|serve|server|launch|cmd|web)([-_.].*)?\Z", re.I
)


@dataclass(frozen=True)
class Discovery:
    """What a walk of one folder found."""

    root: Path
    #: The files to read, in walk order (each claimed by a reader).
    files: tuple[Path, ...]
    #: Files that look like deployment files by name but that no reader claims.
    unclaimed: tuple[Path, ...] = ()
    #: Templates skipped, each with its first template line (1-based).
    templates: tuple[tuple[Path, int], ...] = ()
    #: Files and folders left out by `.gitignore` or by being vendored / generated trees.
    ignored: int = 0
    #: Those of `unclaimed` holding nothing but blank lines and comments (an nginx.conf
    #: commented out): empty, not of an unknown kind.
    empty: tuple[Path, ...] = ()
    #: Why each of `unclaimed` is worth naming (one of `UNREAD_REASONS`, or its time budget
    #: overrun: `check.budget.over_budget`); a file missing here is named like a kind check reads.
    reasons: tuple[tuple[Path, str], ...] = ()
    #: Those of `templates` whose templating is only in values, which a run reads as their
    #: kind unless an image of the run holds them (`check.jinja` renders those where the
    #: container starts); each one read is no longer skipped.
    in_place: tuple[Path, ...] = ()
    #: Files opened that are neither read nor worth naming (an app's data, another tool's
    #: config): one a launch follows all the same (a runit service's script) counts as read.
    passed: tuple[Path, ...] = ()


def _ignore_spec(directory: Path) -> object | None:
    """The directory's own `.gitignore`, compiled with git's pattern rules; None without one."""
    gitignore = directory / ".gitignore"
    try:
        lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(specs: Sequence[tuple[Path, object]], path: Path, is_dir: bool) -> bool:
    """Whether a `.gitignore` of an enclosing folder ignores `path` (later, deeper files win,
    as git reads them)."""
    import pathspec

    verdict = False
    for base, spec in specs:
        assert isinstance(spec, pathspec.GitIgnoreSpec)
        relative = path.relative_to(base).as_posix() + ("/" if is_dir else "")
        result = spec.check_file(relative)
        if result.include is not None:
            verdict = result.include
    return verdict


#: Output folders a build tool names so, which a project also names its image build folders
#: (`build/web/Dockerfile`): one holding a Dockerfile near its top is the project's own.
_OUTPUT_DIRECTORIES = frozenset({"build", "dist", "_build"})


def _skipped_directory(path: Path) -> bool:
    """Whether the walk leaves out the folder `path`: dependencies, virtualenvs (a
    `pyvenv.cfg` whatever the name), caches, VCS data, and build output unless it holds a
    Dockerfile within two levels (build output never does; a `docker build` folder does)."""
    if path.name in _OUTPUT_DIRECTORIES:
        return not _holds_dockerfile(path, depth=2)
    return path.name in SKIPPED_DIRECTORIES or (path / "pyvenv.cfg").exists()


def _holds_dockerfile(folder: Path, depth: int) -> bool:
    """Whether `folder` or its subfolders down to `depth` levels hold a Dockerfile-family
    file, looking at a bounded number of entries (a real build output can be huge)."""
    try:
        with os.scandir(folder) as scan:
            entries = [e for _, e in zip(range(_PEEK_ENTRIES), scan, strict=False)]
    except OSError:
        return False
    for entry in entries:
        if entry.is_file(follow_symlinks=False) and is_dockerfile(Path(entry.path)):
            return True
    return depth > 1 and any(
        _holds_dockerfile(Path(e.path), depth - 1)
        for e in entries
        if e.is_dir(follow_symlinks=False) and e.name not in SKIPPED_DIRECTORIES
    )


#: Entries of a build folder looked at for a Dockerfile.
_PEEK_ENTRIES = 200


def _walk(
    root: Path, exclude: Sequence[str], vendored: list[Path] | None = None
) -> Iterator[Path | int]:
    """Every file under `root` not ignored, in a stable order; an int for each ignored entry.
    The vendored folders left out are added to `vendored` (when given)."""
    import pathspec

    excluded = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None
    stack: list[tuple[Path, list[tuple[Path, object]]]] = [(root, [])]
    while stack:
        directory, inherited = stack.pop()
        spec = _ignore_spec(directory)
        specs = [*inherited, (directory, spec)] if spec is not None else inherited
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        folders: list[Path] = []
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file(follow_symlinks=False)
            except OSError:
                continue
            if not (is_dir or is_file):
                continue  # symlinks, sockets, devices: a walk does not follow them
            relative = path.relative_to(root).as_posix() + ("/" if is_dir else "")
            if (
                (is_dir and _skipped_directory(path))
                or _ignored(specs, path, is_dir)
                or (excluded is not None and excluded.match_file(relative))
            ):
                if vendored is not None and is_dir and path.name in VENDORED_DIRECTORIES:
                    vendored.append(path)
                yield 1
                continue
            if is_dir:
                folders.append(path)
            else:
                yield path
        stack.extend((folder, specs) for folder in reversed(folders))


#: Documentation, data and sources of other languages: never a deployment file, whatever the
#: name says (`docs/gunicorn-behind-nginx.md`, `uwsgi-notes.txt`).
_NOT_CONFIG_SUFFIXES = frozenset(
    {".md", ".rst", ".txt", ".html", ".json", ".lock", ".png", ".svg", ".js", ".ts", ".go"}
    | {".dockerignore"}  # BuildKit's `Dockerfile.dockerignore`: build-context patterns
)

#: Suffixes a deployment file is kept under as a template or an example of itself
#: (`default.conf.template`, `nginx.conf.tpl`, `site.conf.sample`, `uwsgi.ini.example`).
_COPY_SUFFIXES = (
    ".template",
    ".tpl",
    ".tmpl",
    ".sample",
    ".example",
    ".dist",
    ".j2",
    ".jinja",
    ".jnj",
)
#: Suffixes of an example copy: of a file with no suffix of its own too (`sysvinit.example`).
_EXAMPLE_OF_PLAIN = (".example", ".sample", ".dist")
#: Jinja's suffixes, which an ansible role's `templates/` files carry.
_JINJA_SUFFIXES = (".j2", ".jinja", ".jinja2")


def _in_templates(path: Path) -> bool:
    """Whether `path` is in an ansible role's `templates/` folder or one below it."""
    return any(folder.name == "templates" for folder in list(path.parents)[:3])


#: Suffixes naming the stage a copy of a deployment file is for (`app.conf.template.prod`,
#: `nginx.conf.production`): the name before them tells the kind.
_STAGE_SUFFIXES = (".prod", ".production", ".dev", ".development", ".staging", ".local")


_SHEBANG = SHEBANG


#: How the names of the kinds told by name alone begin and end (lower-cased): Dockerfile and
#: Containerfile families (and `api.docker`, a Dockerfile by its first instruction), Procfiles,
#: Caddyfiles.
_KIND_PREFIXES = ("dockerfile", "containerfile", "procfile", "caddyfile")
_KIND_SUFFIXES = (".dockerfile", ".containerfile", ".docker", ".caddyfile", ".just")


#: Application platforms' files told by name (`servertune.check.platforms`; a Cloud Foundry
#: manifest is YAML, told by its content).
_PLATFORM_NAMES = frozenset(
    {"app.json", "heroku.yml", "heroku.yaml", "render.yaml", "render.yml", "railway.json"}
)


def _candidate(path: Path) -> bool:
    """Whether the name alone makes the file worth opening: a kind check reads is named so
    (or so before a template's suffix), an executable without a suffix (an s6 `run`, a
    `docker-entrypoint`), a `.py` in a folder named for gunicorn."""
    name = path.name.lower()
    suffix = path.suffix.lower()
    if env_named(path):  # `env.oss.gh.example`, `x.env.default`: an env file's, by name
        return True
    if suffix in _COPY_SUFFIXES + _STAGE_SUFFIXES and path.stem and "." in path.stem:
        return _candidate(path.with_name(path.stem)) or suffix == ".template"
    if suffix in _JINJA_SUFFIXES and "." not in path.stem and _in_templates(path):
        # An ansible role's template of a file with no suffix (`templates/supervisor/app.j2`,
        # a supervisord program installed as /etc/supervisor/conf.d/app): the content
        # decides, as for the file itself.
        return True
    if suffix in _EXAMPLE_OF_PLAIN:
        # An example of a file named without a suffix (`conf/sysvinit.example`, a SysV init
        # script to copy to /etc/init.d): the content decides, as for the file itself.
        return _candidate(path.with_name(path.stem))
    if path.parent.name.lower() in NGINX_DIRECTORIES and suffix not in _NOT_CONFIG_SUFFIXES:
        # Whatever its name (`nginx/default.tpl`, `sites-available/shop`): its content decides
        # (`_claims`).
        return True
    if suffix == ".py":  # Python is a gunicorn config only when named or placed for it
        return (
            _launcher_named(path)
            or "gunicorn" in name
            or any("gunicorn" in p.name.lower() for p in path.parents)
            or "conf" in path.stem.lower()  # `config.py`, `wsgi_conf.py`: by its settings
        )
    if name in _PLATFORM_NAMES or (name.startswith("fly") and suffix == ".toml"):
        return True
    if suffix == ".json" and ("unit" in name or path.parent.name.lower() == "docker-entrypoint.d"):
        # An NGINX Unit config (`nginx-unit.json`; the unit image applies the JSON files of
        # /docker-entrypoint.d/): its content decides (`_claims`).
        return True
    if suffix in (".nomad", ".hcl"):
        # A Nomad job file (`api.nomad`, `deploy/web.nomad.hcl`): its `job "x" {` decides.
        return True
    if suffix == ".tf" or (
        suffix == ".json" and re.search(r"task|ecs|container", f"{path.parent.name}/{name}".lower())
    ):
        # Terraform, an ECS task definition's JSON (`task-definition.json`, or a container
        # array under `task-definitions/`): the content decides (`_claims`:
        # `aws_ecs_task_definition`, `containerDefinitions`, a list of containers).
        return True
    if suffix in _NOT_CONFIG_SUFFIXES:
        return False
    if not suffix:
        # An executable or a script copied without its mode bits (an s6 `run`,
        # `docker-entrypoint`), or a config a Dockerfile copies to where its server reads it
        # (`COPY conf /etc/nginx/conf.d/default.conf`): the content decides (`_claims`).
        return True
    if name.startswith(_KIND_PREFIXES) or name.endswith(_KIND_SUFFIXES):
        return True
    if "traefik" in name and suffix in (".toml", ".yaml", ".yml"):
        return True
    if suffix == ".toml":
        # A Traefik file provider's dynamic config is named for its routes
        # (`rules/local_backend.toml`, mlco2/codecarbon): its `[http.routers]` decides
        # (`_claims`, which keeps only the TOML kinds check reads).
        return True
    if suffix in (".service", ".socket", ".timer"):
        # A systemd unit; `_claims` keeps those with their unit's section ([Service], ...).
        return True
    if suffix in (".yaml", ".yml", ".sh", ".bash", ".envsh", ".ini", ".conf", ".cfg", ".template"):
        return True
    if "gunicorn" in name or "uwsgi" in name or "supervisor" in name:
        return True
    if any(server in name for server in _UNREAD_SERVERS):
        return True  # `hypercorn.toml` (read), `waitress.ini`: else named in the coverage summary
    return bool(_SCRIPT_NAMES.match(path.name)) or "nginx" in name or "haproxy" in name


#: The readers of TOML files: Traefik's configs, Hypercorn's, fly.toml.
_TOML_KINDS = frozenset({"traefik", "hypercorn", "platform", "railway"})


def _claims(path: Path, text: str) -> bool:
    """Whether the file, opened, is of a kind check reads (the content decides what the name
    only suggested: YAML that is compose or Kubernetes, a `.conf` that is nginx or supervisord,
    a script with a shebang)."""
    from servertune.check.readers import reader_for

    suffix = path.suffix.lower()
    try:
        reader = reader_for(path, text)
    except CheckInputError:
        return False
    if suffix == ".toml" and reader.kind not in _TOML_KINDS:
        return False  # `pyproject.toml`, `Cargo.toml`: another tool's
    if reader.kind == "compose" and legacy_v1(text):
        return False  # named in the coverage summary by `_unread_reason`
    if reader.kind == "compose" and not re.search(r"compose", path.name, re.I):
        # By content: a top-level `services:` that maps names (render.com's is a list), or
        # compose's volumes and networks alone (an overlay given with `-f`), or `include:`s.
        from servertune.check.compose import declares_only_resources, includes_only

        return (
            bool(
                re.search(r"^services:[ \t]*(#.*)?\n(?:[ \t]*(#.*)?\n)*[ \t]+[\w.-]+:", text, re.M)
            )
            or declares_only_resources(text)
            or includes_only(text)
        )
    if reader.kind == "data":
        return False  # YAML / JSON that is neither compose nor Kubernetes: not a deployment file
    if reader.kind == "gunicorn" and path.suffix == ".py":
        # A config assigns a setting at its top level (or is gunicorn's default file name,
        # which may set only logging); a test or an app module named for gunicorn does not.
        # One not named for gunicorn (`wsgi/config.py`) assigns several of its settings.
        settings = {m[1] for m in _GUNICORN_SETTING.finditer(text)}
        if "gunicorn" not in str(path).lower():
            return len(settings) >= _UNNAMED_SETTINGS
        return bool(settings) or path.name in _GUNICORN_NAMES
    if reader.kind == "uwsgi":  # `.ini` is also pytest's, tox's, alembic's, mypy's
        return any(line.strip() == "[uwsgi]" for line in text.splitlines())
    if reader.kind == "nginx":
        # By content only: `.conf` is every daemon's suffix, and a file in `nginx/` may be notes.
        return bool(_NGINX_CONTENT.search(text)) or _starts_with_nginx_directive(text)
    if reader.kind == "systemd":
        # `.service` is also a name of other tools' files (a D-Bus service, an Avahi one): a
        # unit that starts something has a [Service] section (systemd.service(5)).
        from servertune.check.systemd_sockets import looks_like_unit

        return bool(_SERVICE_SECTION.search(text)) or looks_like_unit(path, text)
    from servertune.check.scripts import SHELL_SUFFIXES

    if reader.kind == "script" and suffix not in SHELL_SUFFIXES:
        return bool(_SHEBANG.match(text))
    return True


#: A systemd unit's `[Service]` section header.
_SERVICE_SECTION = re.compile(r"^[ \t]*\[Service\][ \t]*$", re.M)

#: A top-level assignment of a gunicorn setting (the ones nearly every config sets).
_GUNICORN_SETTING = re.compile(
    r"^(bind|workers|worker_class|threads|timeout|graceful_timeout|keepalive|wsgi_app|"
    r"max_requests|accesslog|errorlog|loglevel|logconfig_dict|preload_app|backlog)\s*=",
    re.M,
)
#: How many gunicorn settings a Python file not named for gunicorn assigns at its top level
#: to be read as its config (`bind`, `workers` and `timeout`; an app's `config.py` may set one).
_UNNAMED_SETTINGS = 3
#: The names gunicorn's docs and images give its config file.
_GUNICORN_NAMES = frozenset({"gunicorn.conf.py", "gunicorn_conf.py", "gunicorn_config.py"})


def _starts_with_nginx_directive(text: str) -> bool:
    """The first statement is a directive of nginx or its modules (crossplane's table), ending
    in `;` or opening a block: `mime.types`, `proxy_params`, an included snippet; and every
    other statement at the top level starts with a word shaped as a directive's name (a
    newer or third-party module's, `http2 on;`, is not in the table). nginx's `if` takes a
    parenthesized condition: rsyslog's `if $programname contains 'x' then {` and its
    `template(name=...)` (a `.conf` too) are not nginx."""
    from crossplane.analyzer import DIRECTIVES

    depth, first, ended = 0, True, True
    for line in text.splitlines():
        statement = line.split("#", 1)[0].strip()
        if not statement:
            continue
        if depth == 0 and ended:
            word = statement.split()[0].rstrip(";{")
            if word == "if" and not _NGINX_IF.match(statement):
                return False
            if first and not (word in DIRECTIVES and statement.endswith((";", "{", "}"))):
                return False
            if not _DIRECTIVE_NAME.fullmatch(word):  # a module's directive not in the table
                return False
            first = False
        depth = max(depth + statement.count("{") - statement.count("}"), 0)
        ended = statement.endswith((";", "{", "}"))
    return not first


#: nginx's `if (condition) {`.
_NGINX_IF = re.compile(r"if\s*\(")
#: A directive's name as nginx's parser reads one: letters, digits and `_`.
_DIRECTIVE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def discover(root: Path, exclude: Sequence[str] = ()) -> Discovery:
    """The files to read in the folder `root` (and those skipped, for the coverage summary).
    `exclude` is more gitignore-style patterns, relative to `root`. Each file is told within
    its time budget (`check.budget`): one that overruns it is skipped and named, not a hang."""
    found = _Found()
    ignored = 0
    vendored: list[Path] = []
    walked = _walk(root, exclude, vendored)
    for item in _then_named_vendored(root, walked, vendored, found.files):
        if isinstance(item, int):
            ignored += item
            continue
        if not (_candidate(item) or _deployment_script(root, item)):
            continue
        try:
            with within_budget():
                _sort(root, item, found)
        except OverBudget:
            found.forget(item)
            found.unclaimed.append(item)
            found.reasons.append((item, over_budget()))
    return Discovery(
        root,
        tuple(found.files),
        tuple(found.unclaimed),
        tuple(found.templates),
        ignored,
        tuple(found.empty),
        tuple(found.reasons),
        tuple(found.in_place),
        tuple(found.passed),
    )


@dataclass
class _Found:
    """A walk's files so far, by where each goes (`Discovery`'s fields)."""

    files: list[Path] = field(default_factory=list)
    unclaimed: list[Path] = field(default_factory=list)
    templates: list[tuple[Path, int]] = field(default_factory=list)
    empty: list[Path] = field(default_factory=list)
    reasons: list[tuple[Path, str]] = field(default_factory=list)
    in_place: list[Path] = field(default_factory=list)
    passed: list[Path] = field(default_factory=list)

    def forget(self, item: Path) -> None:
        """`item` out of every list (its telling was cut short, maybe half recorded)."""
        for paths in (self.files, self.unclaimed, self.empty, self.in_place, self.passed):
            paths[:] = [p for p in paths if p != item]
        self.templates[:] = [t for t in self.templates if t[0] != item]
        self.reasons[:] = [r for r in self.reasons if r[0] != item]


def _sort(root: Path, item: Path, found: _Found) -> None:
    """`item` told by its size, its name and its text, into `found`."""
    from servertune.check.source import read_text

    try:
        if item.stat().st_size > _MAX_CANDIDATE_BYTES:
            found.unclaimed.append(item)
            return
        text = read_text(item)
    except (OSError, CheckInputError):
        found.unclaimed.append(item)  # binary, not UTF-8: not a config; named, not read
        return
    line = template_line(text, dockerfile=is_dockerfile(item, text))
    if line is None and item.suffix.lower() in (".yml", ".yaml"):
        line = placeholder_line(text)  # whole YAML lines a script renders in
    percent = False
    if line is None and item.suffix.lower() in (".tpl", ".tmpl"):
        line = percent_line(text)  # `%name` / `%{name}` a script's `%` substitution fills
        percent = line is not None  # no value of its kind: never read in place
    if line is not None and is_buildpack_config(item):
        line = None  # its ERB is read as unknown values (`heroku_nginx`), not skipped
    if line is not None and looks_like_nomad_job(item, text):
        line = nomad_template_line(text)  # its `template` blocks' data Nomad renders
    if line is not None and looks_like_justfile(item, text):
        line = None  # `{{ name }}` is just's own interpolation (`justfile`), not Jinja
    if line is not None and _candidate_kind_known(item, text):
        found.templates.append((item, line))
        if not percent and _read_in_place(item, text):
            found.in_place.append(item)
    elif _claims(item, text):
        found.files.append(item)
    elif (reason := _unread_reason(root, item, text)) is not None:
        found.unclaimed.append(item)
        found.reasons.append((item, reason))
        if not any(
            line.strip() and not line.lstrip().startswith(("#", ";")) for line in text.splitlines()
        ):
            found.empty.append(item)
    else:
        found.passed.append(item)


def _then_named_vendored(
    root: Path, walked: Iterator[Path | int], vendored: list[Path], files: list[Path]
) -> Iterator[Path | int]:
    """`walked`, then the files of the vendored folders it left out that the Dockerfiles and
    compose files among `files` (filled while `walked` is read) copy or mount: the run's own
    build names them, so they are the project's (`vendored.named_in_vendored`)."""
    yield from walked
    yield from named_in_vendored(root, vendored, list(files))


def _deployment_script(root: Path, path: Path) -> bool:
    """A script by its shebang in a deployment folder (`docker/`, `deploy/`), whatever its
    name: a runit service's `web.finish`, an `rc.local`, which a launch may run."""
    parts = [p.lower() for p in path.relative_to(root).parts[:-1]]
    if path.suffix.lower() in _NOT_CONFIG_SUFFIXES or not any(
        _DEPLOYMENT_FOLDER.search(p) for p in parts
    ):
        return False
    try:
        with path.open("rb") as opened:
            return opened.read(2) == b"#!"
    except OSError:
        return False


def _read_in_place(path: Path, text: str) -> bool:
    """Whether the template `path` may be read as its kind: its templating is only in Jinja
    values (`check.value_templates`; no ERB or Go template left) and what it reads as is a
    config or script whose values a deployment tool fills (`_IN_PLACE_KINDS`), claimed; or
    it is a Helm chart's manifest whose actions are only in values (`check.helm_templates`)."""
    from servertune.check.ansible_vars import is_play_template
    from servertune.check.helm_templates import is_chart_template
    from servertune.check.readers import reader_for
    from servertune.check.value_templates import read_in_place

    found = read_in_place(path, text)
    if found is None or template_line(found.text) is not None:
        return False
    try:
        kind = reader_for(path, found.text).kind
    except CheckInputError:
        return False
    helm = kind == "kubernetes" and is_chart_template(path)  # a chart's manifest (`helm_templates`)
    # A compose file an ansible play renders on its host (`templates/docker-compose.yaml`
    # beside the play's tasks) is that host's deployment, not a scaffold another project fills.
    played = kind == "compose" and is_play_template(path)
    return (kind in _IN_PLACE_KINDS or helm or played) and _claims(path, found.text)


#: The kinds a template is read as in place: a unit, a site (nginx, Caddy, HAProxy, Traefik), a
#: program, a server's config or a script, which an ansible or salt role installs; a Dockerfile, compose file or manifest
#: written from a template is another project's scaffold or a chart (not read as values),
#: but a compose file an ansible play renders (`_read_in_place`).
_IN_PLACE_KINDS = frozenset(
    {
        "systemd",
        "nginx",
        "supervisord",
        "uwsgi",
        "gunicorn",
        "script",
        "caddy",
        "haproxy",
        "traefik",
        "apache",
    }
)


def _candidate_kind_known(path: Path, text: str) -> bool:
    """A template worth a line: one a reader would have claimed, as named or as named before
    its template suffix (Jinja-rendered manifests, `k8s/app.deploy.yaml.j2`), or a deployment
    file by name (a Helm chart's `deployment.yaml`, a Jinja `nginx.conf.j2`) or by its folder
    (`nginx/http-base.conf.jnj`, whose Jinja a reader cannot parse)."""
    return (
        _named_for_check(path)
        or path.parent.name.lower() in NGINX_DIRECTORIES
        or _claims(path, text)
        # `app.deploy.yaml.j2`: what the name says before the template's suffix
        or (
            path.suffix.lower() in _COPY_SUFFIXES + _JINJA_SUFFIXES
            and "." in path.stem
            and _claims(path.with_name(path.stem), text)
        )
    )


def _named_for_check(path: Path) -> bool:
    """Named as a file kind check reads (so skipping it is worth saying), not merely a YAML,
    `.ini` or `.conf` of some other tool."""
    name = path.name.lower()
    return bool(
        name.startswith(_KIND_PREFIXES)
        or name.endswith(_KIND_SUFFIXES)
        or any(
            word in name
            for word in ("gunicorn", "uwsgi", "nginx", "haproxy", "supervisor", "traefik")
        )
        or "compose" in name
        or _SCRIPT_NAMES.match(path.name)
        or _unread_kind(path)
    )


#: Servers named in a file's name whose file no reader may claim (a Hypercorn config in Python,
#: a `daphne.conf`, waitress'): a skipped one is named, as the file that says how the app is
#: served. A `hypercorn*.toml` is read (`check/hypercorn.py`).
_UNREAD_SERVERS = ("hypercorn", "daphne", "waitress")


def _unread_kind(path: Path) -> bool:
    """A deployment file of a kind no reader reads, worth naming when the walk skips it: an
    unread server's config, an application platform's spec (DigitalOcean App Platform's
    `.do/app.yaml`, an App Engine `app.yaml` with no `entrypoint:`) or a Helm chart's values (`values*.yaml` beside
    the chart's `templates/` or `Chart.yaml`)."""
    name = path.name.lower()
    if any(server in name for server in _UNREAD_SERVERS):
        return True
    if path.suffix.lower() not in (".yaml", ".yml"):
        return False
    stem = path.stem.lower()
    return (
        path.parent.name.lower() == ".do"
        or stem == "app"
        or (
            stem.startswith("values")
            and ((path.parent / "templates").is_dir() or (path.parent / "Chart.yaml").is_file())
        )
    )


#: Why a skipped file is named in the coverage summary: named like a kind check reads; a
#: deployment file of a kind it does not read (an unread server's config, a platform's spec, a
#: config of the app); a launcher script it could not read as one.
NAMED_LIKE_READ = "named like a kind check reads"
_UNREAD_CONFIG = "configs of the app or of servers check does not read"
_UNREAD_LAUNCHER = "launcher scripts that start no server check reads"
UNREAD_REASONS = (NAMED_LIKE_READ, _UNREAD_CONFIG, _UNREAD_LAUNCHER, COMPOSE_V1)


def _unread_reason(root: Path, path: Path, text: str) -> str | None:
    """Why the skipped file `path` is worth naming, or None for a file no one would take for a
    deployment file (the app's sources and data, another tool's config, tests and docs)."""
    if _named_for_check(path) and re.search(r"compose", path.name, re.I) and legacy_v1(text):
        return COMPOSE_V1
    if _named_for_check(path) and not _launcher_named(path):
        return NAMED_LIKE_READ if not _unread_kind(path) else _UNREAD_CONFIG
    parts = [p.lower() for p in path.relative_to(root).parts]
    if any(p.startswith(".") or p in _NOT_DEPLOYMENT_FOLDERS for p in parts):
        return None  # a tool's dotfile, CI (`.github/`), a test's fixture, the docs
    if _launcher_named(path):
        return _UNREAD_LAUNCHER
    suffix = path.suffix.lower()
    if parts[-1] in _TOOL_CONFIGS or suffix not in (".ini", ".conf", ".cfg", ".yaml", ".yml"):
        return None
    if suffix in (".ini", ".conf", ".cfg"):
        # Every daemon's suffix (`zope.conf`, an `.ini` without a [uwsgi] section): its
        # settings say how something runs, and none of them was checked.
        return _UNREAD_CONFIG
    # YAML is also data: a config when it sits in a deployment or config folder (`deploy/`,
    # `docker/`, `konf/`) or sets a server's address or processes (`server:`, `port:`).
    placed = any(_DEPLOYMENT_FOLDER.search(p) for p in parts[:-1])
    return _UNREAD_CONFIG if placed or _SERVER_KEY.search(text) else None


#: Folders of tests, docs and translations: their files are fixtures, examples and data.
_NOT_DEPLOYMENT_FOLDERS = frozenset(
    {"test", "tests", "testing", "fixtures", "docs", "doc", "locale", "locales", "i18n"}
)

#: Configs of development tools (linters, test runners, migrations, docs, CI, packaging) by
#: their fixed names: never how the app is served.
_TOOL_CONFIGS = frozenset(
    {
        "setup.cfg",
        "tox.ini",
        "pytest.ini",
        "mypy.ini",
        "alembic.ini",
        "babel.cfg",
        "pylintrc.cfg",
        "mkdocs.yml",
        "mkdocs.yaml",
        "codecov.yml",
        "codecov.yaml",
        "environment.yml",
        "environment.yaml",
        "crowdin.yml",
        "crowdin.yaml",
        "meta.yaml",
        "action.yml",
        "action.yaml",
        "openapi.yml",
        "openapi.yaml",
        "swagger.yml",
        "swagger.yaml",
        "appveyor.yml",
        "azure-pipelines.yml",
        "bitbucket-pipelines.yml",
        "readthedocs.yml",
        "readthedocs.yaml",
    }
)

#: A folder name (a word of it) that says deployment or configuration: `deploy`, `docker`,
#: `k8s`, `helm`, `ops`, `infra`, `etc`, `conf`, `config`, `konf`, `settings`.
_DEPLOYMENT_FOLDER = re.compile(
    r"(\A|[-_.])(deploy\w*|docker|k8s|kube\w*|helm|ansible|\w*ops|infra\w*|etc|hosting|"
    r"provision\w*|server\w*|\w*conf\w*|konf\w*|cfg|settings?)(\Z|[-_.])"
)

#: A key of a server's settings (its address, its processes) at the top of a YAML mapping or one
#: level in (`server:` / `port: 8000` / `workers: 4`).
_SERVER_KEY = re.compile(
    r"^[ \t]{0,4}(server|host|port|bind|listen|workers|processes|threads)[ \t]*:", re.M
)

#: A Python launcher's names (`entrypoint.py`, `docker-entrypoint.py`, `start_app.py`, `run.py`).
_LAUNCHER_NAME = re.compile(
    r"\A(docker[-_])?(entrypoint|start|run|boot|launch)([-_.].*)?\.py\Z", re.I
)


def _launcher_named(path: Path) -> bool:
    """A `.py` named as a launcher, outside any package (a package's `run.py` is a module of the
    app) and not a test runner (`run_tests.py`)."""
    return (
        bool(_LAUNCHER_NAME.match(path.name))
        and "test" not in path.name.lower()
        and not (path.parent / "__init__.py").is_file()
    )
