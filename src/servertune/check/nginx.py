"""nginx configs, parsed by crossplane (NGINX Inc.'s parser), includes followed safely.

crossplane tokenises and checks the syntax exactly as nginx's own lexer does (quotes, escapes,
braces, argument counts); servertune only walks the tree it returns. Includes are resolved here
rather than by crossplane, so that a file is refused when it is too big, not UTF-8 or part of
an include cycle, before it is parsed, and one outside the tree check reads (`..`, a symlink
pointing elsewhere: `servertune.check.resolve`) is never opened, a coverage note naming it. Relative include paths are resolved against nginx's configuration prefix, as nginx
does: the main file's directory (`nginx -c DIR/nginx.conf`), or, for a server file in
`conf.d/` / `sites-available/`, the directory above it, where its nginx.conf is.
"""

from __future__ import annotations

import contextvars
import fnmatch
import glob
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from servertune.check import resolve
from servertune.check.model import (
    CheckInputError,
    Location,
    NginxConfig,
    PassTarget,
    Setting,
    Upstream,
    note,
)
from servertune.check.nginx_placeholders import holds_placeholder, masked, unmasked
from servertune.check.nginx_variables import nginx_variable
from servertune.check.source import read_text, template_text
from servertune.check.tree_tails import unique_by_tail

if TYPE_CHECKING:
    from servertune.check.commands import ConfigFile, FindConfig

__all__ = [
    "NGINX_DEFAULTS",
    "mounts_of_run",
    "parse_duration",
    "read_nginx",
    "read_nginx_text",
    "read_started_nginx",
]

#: nginx's documented defaults (nginx.org/en/docs): http keepalive_timeout 75s, the upstream
#: pool's keepalive_timeout 60s, proxy_read_timeout / uwsgi_read_timeout 60s.
NGINX_DEFAULTS = {
    "keepalive_timeout": 75.0,
    "upstream_keepalive_timeout": 60.0,
    "read_timeout": 60.0,
}
#: An include tree deeper than this is a mistake (nginx's own examples nest two or three levels).
MAX_INCLUDE_DEPTH = 16
_UNITS = {
    "ms": 0.001,
    "s": 1,
    "m": 60,
    "h": 3600,
    "d": 86400,
    "w": 604800,
    "M": 2592000,
    "y": 31536000,
}
_DURATION = re.compile(r"(\d+)(ms|s|m|h|d|w|M|y)?")


def parse_duration(text: str) -> float | None:
    """nginx's time syntax (`65`, `65s`, `1m30s`, `500ms`) in seconds, None when not a time."""
    total, position = 0.0, 0
    for match in _DURATION.finditer(text):
        if match.start() != position:
            return None
        total += int(match.group(1)) * _UNITS[match.group(2) or "s"]
        position = match.end()
    return total if position == len(text) and text else None


@dataclass
class _Node:
    directive: str
    args: list[str]
    at: Location
    block: list[_Node] | None = None
    #: The `include` lines that bring it into the file read, the nearest first (a snippet's
    #: line included by a site included by nginx.conf: the site's line, then nginx.conf's).
    via: tuple[Location, ...] = ()


@dataclass
class _Tree:
    main_dir: Path
    files: list[Path] = field(default_factory=list)
    cache: dict[Path, list[dict[str, Any]]] = field(default_factory=dict)
    #: For a config read where a container starts nginx with it (`read_started_nginx`): how
    #: the run finds a container path, and the container folder relative includes name.
    find: FindConfig | None = None
    inside: str = ""
    #: Every container path `find` knows, for an include's glob (`conf.d/*.conf`).
    held: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Token:
    text: str
    line: int
    #: `;`, `{` or `}` unquoted: what ends a statement or opens/closes a block.
    punctuation: bool


def _tokens(path: Path) -> list[_Token] | None:
    """crossplane's tokens of `path`, comments dropped; None when its braces do not balance
    (the parse then says where)."""
    import crossplane
    from crossplane.errors import NgxParserSyntaxError

    try:
        return [
            _Token(token, line, not quoted and token in (";", "{", "}"))
            for token, line, quoted in crossplane.lex(str(path))
            if quoted or not token.startswith("#")
        ]
    except NgxParserSyntaxError:
        return None


def _heads(tokens: list[_Token]) -> list[_Token]:
    """The first word of each statement: the directive's name, where nginx expects one."""
    return [
        token
        for token, previous in zip(tokens, [None, *tokens], strict=False)
        if not token.punctuation and (previous is None or previous.punctuation)
    ]


def _refuse_what_is_not_nginx(path: Path) -> None:
    """A file read as nginx (named `redis.conf`, `supervisord.conf`; or by `--kind`) in which no
    statement starts with a directive nginx or one of its modules has (crossplane's table) is
    not an nginx config: said so, rather than reported as an nginx syntax error."""
    from crossplane.analyzer import DIRECTIVES

    heads = _heads(_tokens(path) or [])
    if heads and not any(head.text in DIRECTIVES for head in heads):
        raise CheckInputError(
            f"{path}: read as an nginx config, but it is not one: no statement "
            f"starts with a directive nginx knows (line {heads[0].line} starts with "
            f"{heads[0].text!r})"
        )


def _refuse_what_nginx_refuses(path: Path) -> None:
    """What crossplane lets through and `nginx -t` refuses: a `}` right after a directive's
    words (`listen 80 }`, its `;` missing), a `{` with no directive before it, a lone `;`.

    crossplane checks a directive's terminator only in contexts its table knows, so inside a
    site snippet's top-level `server {}` (the http context of the file that includes it) a
    missing `;` passed as if nothing were wrong; nginx's own lexer refuses it everywhere, with
    these words.
    """
    after_a_word = False  # a file starts where a statement may start
    statement: list[str] = []
    for token in _tokens(path) or ():
        # `;` and `{` end a directive's words; `}` closes a block after a statement ended.
        # A statement that is one envsubst placeholder (`${SCHEMAS_INCLUDE}` on its own line,
        # rendered to whole directives where the container starts) is not a missing `;`.
        placeholder = len(statement) == 1 and bool(_PLACEHOLDER.match(statement[0].strip()))
        if token.punctuation and after_a_word == (token.text == "}") and not placeholder:
            raise CheckInputError(
                f'{path}:{token.line}: nginx syntax error: unexpected "{token.text}"'
            )
        after_a_word = not token.punctuation
        statement = [] if token.punctuation else [*statement, token.text]


def _parse_file(path: Path, tree: _Tree) -> list[dict[str, Any]]:
    real = path.resolve()
    if real in tree.cache:
        return tree.cache[real]
    text = read_text(path)  # size, binary, UTF-8: refused before crossplane reads it
    # A template read as its kind (`value_templates`): its reading, not the file, is parsed.
    if (
        masked(text) is not None or template_text(path, text) != text
    ):  # `listen {PORT};`: a script fills it in before nginx starts
        found = _parse_text(text, 1)
        if found is None:
            raise CheckInputError(f"{path}:1: nginx syntax error: its braces do not balance")
        tree.cache[real] = found
        tree.files.append(path)
        return found
    import crossplane

    payload = crossplane.parse(
        str(path), single=True, catch_errors=False, check_ctx=False, comments=False
    )
    if payload["errors"]:
        error = payload["errors"][0]
        message = re.sub(r" in \S+:\d+$", "", str(error["error"])) or (
            "unexpected end of file (a directive without its ';' or a block without its '}')"
        )
        raise CheckInputError(f"{path}:{error.get('line') or 1}: nginx syntax error: {message}")
    _refuse_what_nginx_refuses(path)
    parsed: list[dict[str, Any]] = payload["config"][0]["parsed"]
    tree.cache[real] = parsed
    tree.files.append(path)
    return parsed


def _unmask(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Parsed statements of a masked text, their words as the file writes them."""
    return [
        {
            **item,
            "directive": unmasked(item["directive"]),
            "args": [unmasked(a) for a in item["args"]],
            **({"block": _unmask(item["block"])} if "block" in item else {}),
        }
        for item in items
    ]


#: A template placeholder that is a whole word: `${NAME}` (envsubst renders it at start).
_PLACEHOLDER = re.compile(r"\A\$\{[A-Za-z_][A-Za-z0-9_]*\}\Z")

#: Directives the rules read numbers (or a listening address) from; none takes an nginx variable.
#: The directives `_duration` reads as nginx times (the first argument of each).
_TIMES = frozenset(
    {
        "proxy_read_timeout",
        "uwsgi_read_timeout",
        "proxy_send_timeout",
        "uwsgi_send_timeout",
        "keepalive_timeout",
    }
)
_NUMERIC = frozenset(
    {
        "proxy_read_timeout",
        "uwsgi_read_timeout",
        "proxy_send_timeout",
        "uwsgi_send_timeout",
        "keepalive_timeout",
        "keepalive",
        "worker_connections",
        "worker_processes",
        "client_max_body_size",
        "listen",
    }
)


def _build(
    path: Path, tree: _Tree, stack: tuple[Path, ...], items: list[dict[str, Any]] | None = None
) -> list[_Node]:
    if items is None:
        real = path.resolve()
        if real in stack:
            chain = " -> ".join(str(p) for p in (*stack, real))
            raise CheckInputError(f"{path}: include cycle: {chain}")
        if len(stack) > MAX_INCLUDE_DEPTH:
            raise CheckInputError(f"{path}: includes nested deeper than {MAX_INCLUDE_DEPTH} levels")
        stack = (*stack, real)
        items = _parse_file(path, tree)
    nodes: list[_Node] = []
    for item in items:
        at = Location(path, int(item.get("line", 1)))
        if _PLACEHOLDER.match(item["directive"].strip()):
            note(
                "unresolved-variable",
                at,
                f"{at}: {item['directive'].strip()}: a template placeholder for whole directives "
                "(envsubst), known only where nginx starts; what it renders to was not checked",
            )
            continue
        held = [p for p in map(holds_placeholder, item["args"]) if p is not None]
        if item["directive"] in _NUMERIC and held:
            # These directives (and `listen`) take no nginx variables: `${PROXY_READ_TIMEOUT}`
            # is a template placeholder (the official image's envsubst of /etc/nginx/templates),
            # `{PORT}` or `@PORT@` one a start script's sed fills, known only where the
            # container starts. Left out, so its default or inherited value stands.
            written = " ".join(item["args"])[:60]
            how = "envsubst" if held[0].startswith("$") else "a start script fills it"
            note(
                "unresolved-variable",
                at,
                f"{at}: {item['directive']} {written}: a template placeholder ({how}), "
                "known only where nginx starts; read as if the line were absent",
            )
            continue
        if item["directive"] in _TIMES and item["args"] and parse_duration(item["args"][0]) is None:
            # Not a time (`APP_TIMEOUT_SECONDSs`, a bare word a start script's `sed -i`
            # replaces): what nginx runs with is known only where it starts; one line of one
            # file, never the end of the walk.
            note(
                "unresolved-variable",
                at,
                f"{at}: {item['directive']} {item['args'][0][:60]}: not an nginx time as "
                "written (a placeholder a start script fills?), known only where nginx "
                "starts; read as if the line were absent",
            )
            continue
        if item["directive"] == "include" and item["args"]:
            nodes.extend(_included_at(_include(item["args"][0], at, tree, stack), at))
            continue
        block = item.get("block")
        nodes.append(
            _Node(
                item["directive"],
                list(item["args"]),
                at,
                None if block is None else _build(path, tree, stack, block),
            )
        )
    return nodes


def _included_at(nodes: list[_Node], at: Location) -> list[_Node]:
    """`nodes`, read from a file the `include` at `at` names, each (and each in their blocks)
    carrying that line after the includes nearer to it."""
    for node in _every(nodes):
        node.via = (*node.via, at)
    return nodes


def _prefix(path: Path) -> Path:
    """The directory nginx resolves the file's relative includes against: its configuration
    prefix (the main nginx.conf's directory, `/etc/nginx/` in the packages and the official
    image), not the directory of the file that says `include` (ngx_conf_file.c resolves every
    relative name with ngx_conf_full_name against cycle->conf_prefix). A site file in
    `sites-available/` or `conf.d/` is included from the nginx.conf one directory up."""
    if (
        path.parent.name in resolve.NGINX_SERVER_DIRECTORIES
        and (path.parent.parent / "nginx.conf").is_file()
    ):
        return path.parent.parent
    if path.parent.name in resolve.NGINX_SERVER_DIRECTORIES and path.name != "nginx.conf":
        return path.parent.parent
    return path.parent


#: The official nginx image renders each `*.template` file under /etc/nginx/templates into
#: /etc/nginx/conf.d, its path kept and the suffix dropped, with envsubst, when the container
#: starts (its /docker-entrypoint.d/20-envsubst-on-templates.sh: NGINX_ENVSUBST_TEMPLATE_DIR,
#: NGINX_ENVSUBST_TEMPLATE_SUFFIX and NGINX_ENVSUBST_OUTPUT_DIR by default).
TEMPLATE_DIR = PurePosixPath("/etc/nginx/templates")
TEMPLATE_SUFFIX = ".template"
OUTPUT_DIR = PurePosixPath("/etc/nginx/conf.d")
#: Files listed from one mounted folder, at most (a repository's config folder holds a few).
_MAX_MOUNTED_FILES = 2000

#: The repository files the compose services of the run mount, by their path in the
#: container (several when two services mount different files there): set by mounts_of_run.
_MOUNTED: contextvars.ContextVar[dict[PurePosixPath, tuple[Path, ...]] | None] = (
    contextvars.ContextVar("servertune_check_nginx_mounted", default=None)
)


@contextmanager
def mounts_of_run(paths: Sequence[Path]) -> Iterator[None]:
    """While the block runs, an absolute `include` that names a container path a compose
    file of `paths` bind-mounts (or renders there from /etc/nginx/templates) reads that file."""
    token = _MOUNTED.set(_container_files(paths))
    try:
        yield
    finally:
        _MOUNTED.reset(token)


def _container_files(paths: Sequence[Path]) -> dict[PurePosixPath, tuple[Path, ...]]:
    """Each container path every compose service of `paths` bind-mounts a repository file
    at, with the official image's template rendering applied."""
    try:
        from servertune.check.compose import _mounts, defaulted, services_nodes
    except ModuleNotFoundError:  # no YAML parser: compose files are refused, with the extra
        return {}
    found: dict[PurePosixPath, list[Path]] = {}

    def add(inside: PurePosixPath, host: Path) -> None:
        found.setdefault(inside, [])
        if host not in found[inside]:
            found[inside].append(host)
        if inside.is_relative_to(TEMPLATE_DIR) and inside.name.endswith(TEMPLATE_SUFFIX):
            rendered = OUTPUT_DIR / inside.relative_to(TEMPLATE_DIR)
            add(rendered.with_name(rendered.name.removesuffix(TEMPLATE_SUFFIX)), host)

    for path, services in services_nodes(paths):
        for _, service in services.items() if services is not None else []:
            for written, inside, _ in _mounts(service, path):
                host = defaulted(written, path)
                if host is None or not resolve.inside(host, path):
                    continue
                if host.is_file():
                    add(inside, host)
                elif host.is_dir():
                    for count, file in enumerate(p for p in host.rglob("*") if p.is_file()):
                        if count >= _MAX_MOUNTED_FILES:
                            break
                        relative = PurePosixPath(file.relative_to(host).as_posix())
                        add(inside / relative, file)
    return {inside: tuple(hosts) for inside, hosts in found.items()}


def _mounted(pattern: str) -> list[Path] | None:
    """The repository files an absolute include names through the run's mounts (a glob
    matches every mounted file it names), each mounted there by one file only; None when the
    mounts do not say (or two files are mounted at one path: which one is not known)."""
    mounted = _MOUNTED.get() or {}
    if glob.has_magic(pattern):
        names = sorted(p for p in mounted if fnmatch.fnmatchcase(str(p), pattern))
    else:
        names = [PurePosixPath(os.path.normpath(pattern))]
    hosts = [mounted.get(name, ()) for name in names]
    if not hosts or any(len(h) != 1 for h in hosts):
        return None
    return [h[0] for h in hosts]


def _copied(config: Path, pattern: str) -> list[Path]:
    """The repository files an absolute include names in the first image of the run that
    copies `config` by name or folder and copies files there (a glob matches each); [] when
    none does."""
    from servertune.check.images import images_copying

    wanted = os.path.normpath(pattern)
    folder = os.path.dirname(wanted)
    while glob.has_magic(folder):
        folder = os.path.dirname(folder)
    if folder in ("", "/"):
        return []
    for image in images_copying(config):
        # fnmatch of a path with no wildcard is equality.
        held = [
            *image.held_under(folder),
            *_rendered_templates(image.held_under(str(TEMPLATE_DIR))),
        ]
        found = [f for inside, f in held if fnmatch.fnmatchcase(inside, wanted)]
        if found:
            return found
    return []


def _rendered_templates(held: Sequence[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """The files the image's nginx entrypoint renders from the templates it holds (`COPY
    *.conf.template /etc/nginx/templates/`), each at its path under /etc/nginx/conf.d."""
    found = []
    for inside, file in held:
        path = PurePosixPath(inside)
        if path.is_relative_to(TEMPLATE_DIR) and path.name.endswith(TEMPLATE_SUFFIX):
            rendered = OUTPUT_DIR / path.relative_to(TEMPLATE_DIR)
            found.append(
                (str(rendered.with_name(rendered.name.removesuffix(TEMPLATE_SUFFIX))), file)
            )
    return found


def _held_matches(pattern: str, tree: _Tree) -> list[str]:
    """The container paths `tree` holds that an include's glob names, in nginx's order
    (glob(3) sorts them); `*` stays within one folder, as glob's does."""
    inside = os.path.normpath(os.path.join(tree.inside, pattern))
    depth = inside.count("/")
    return sorted(p for p in tree.held if p.count("/") == depth and fnmatch.fnmatchcase(p, inside))


def _include(pattern: str, at: Location, tree: _Tree, stack: tuple[Path, ...]) -> list[_Node]:
    if tree.find is not None and glob.has_magic(pattern) and _held_matches(pattern, tree):
        # `include /etc/nginx/conf.d/*.conf;` over the files the container holds there
        # (each key of a ConfigMap mounted by subPath: DjangoBlog's deploy/k8s).
        held = [tree.find(inside, at) for inside in _held_matches(pattern, tree)]
        return [
            node for found in held if found is not None for node in _build_made(found, tree, stack)
        ]
    if tree.find is not None and not glob.has_magic(pattern):
        # The file the container holds at that path (a template beside it rendered), the
        # relative name against the container folder of the config nginx was started with.
        inside = os.path.normpath(os.path.join(tree.inside, pattern))
        found = tree.find(inside, at)
        if found is not None and _made_key(found) in stack:
            chain = " -> ".join(str(p) for p in (*stack, _made_key(found)))
            raise CheckInputError(f"{at}: include cycle: {chain}")
        if found is not None:
            return _build_made(found, tree, stack)
    full = pattern if pattern.startswith("/") else str(tree.main_dir / pattern)
    if pattern.startswith("/") and not resolve.inside(Path(pattern), at.file) and stack:
        # A file the start script of the container holding this config writes there before
        # it starts nginx (`echo "server $HOST:$PORT;" > /run/app/upstream`): what it made.
        made = _made_at_start(pattern, at, stack)
        if made is not None:
            return [node for found in made for node in _build_made(found, tree, stack)]
    if pattern.startswith("/") and not resolve.inside(Path(pattern), at.file):
        # A file a compose service mounts there (or renders there from the image's
        # templates folder) is the one nginx reads.
        mounted = _mounted(pattern)
        if mounted is not None:
            return [
                node
                for target in mounted
                if resolve.admit(target, pattern, at, "include") is not None
                for node in _build(target, tree, stack)
            ]
        # A file the image holding this config copies there (`COPY setup/default.conf
        # /etc/nginx/conf.d/` beside `COPY setup/nginx.conf /etc/nginx/nginx.conf`).
        copied = _copied(stack[0] if stack else at.file, pattern)
        if copied:
            return [node for target in copied for node in _build(target, tree, stack)]
        # The repository's own copy of the deployed file, kept below a folder mirroring the
        # host's root (`deploy/common/etc/nginx/snippets/x.conf`, MIT-LCP/physionet-build).
        kept = None if glob.has_magic(pattern) else unique_by_tail(pattern, at.file)
        if kept is not None and resolve.admit(kept, pattern, at, "include") is not None:
            return _build(kept, tree, stack)
        # `include /etc/nginx/mime.types;` in a copy checked elsewhere: the server's own file,
        # not this tree's. Reported (include-not-found), never read from this machine.
        return [_Node("#missing-include", [pattern], at)]
    # Listing a folder outside the tree is reading it too: globbed inside it only.
    matches = (
        resolve.glob_inside(full, pattern, at, "include") if glob.has_magic(full) else [Path(full)]
    )
    nodes: list[_Node] = []
    for target in matches:
        if not target.exists() and not target.is_symlink() and not glob.has_magic(full):
            # A file the start script of the container that starts nginx with this config
            # makes beside it (`cd /app/nginx && ln -sf locations.conf http_locations.conf`).
            made = _made_at_start(pattern, at, stack)
            if made is not None:
                nodes += [node for found in made for node in _build_made(found, tree, stack)]
                continue
            # A site file checked on its own often includes `proxy_params` from /etc/nginx:
            # nginx would find it, so the rest of the file is still worth checking. Named as
            # written (one note however many server blocks include it).
            nodes.append(_Node("#missing-include", [pattern], at))
            continue
        if resolve.admit(target, pattern, at, "include") is None:
            continue
        nodes.extend(_build(target, tree, stack))
    return nodes


def _made_at_start(pattern: str, at: Location, stack: tuple[Path, ...]) -> list[ConfigFile] | None:
    """What the include reads from the files the start of the container holding the
    config (`front_start.made_for`) made; None when none made it."""
    if not stack:
        return None
    from servertune.check.front_start import made_for

    return made_for(stack[0], pattern, at)


def _build_made(found: ConfigFile, tree: _Tree, stack: tuple[Path, ...]) -> list[_Node]:
    """The nodes of a file a start script made: a repository file copied or linked as it
    is, else its text (rendered, or written by `echo`), each at its line there."""
    if len(stack) > MAX_INCLUDE_DEPTH:
        return []  # a written file that includes itself: nginx refuses it where it starts
    try:
        own = read_text(found.file)
    except (CheckInputError, OSError):
        return []
    if found.first_line == 1 and own == found.text:
        return _build(found.file, tree, stack)
    items = _parse_text(found.text, found.first_line)
    if items is None:
        note(
            "not-followed",
            Location(found.file, found.first_line),
            f"{found.file}:{found.first_line}: not followed: what it writes for nginx to "
            "include does not parse as nginx's config; what it sets was not checked",
        )
        return []
    from servertune.check.scripts import looks_like_script

    if not looks_like_script(found.file, own) and found.file not in tree.files:
        tree.files.append(found.file)  # a config file of the repository, rendered
    return _build(found.file, tree, (*stack, _made_key(found)), items)


def _made_key(found: ConfigFile) -> Path:
    """What stands for a made file in the include stack: its file, or the part of it the
    text starts at (two ConfigMap keys of one manifest are two files to nginx)."""
    real = found.file.resolve()
    return real if found.first_line == 1 else real.with_name(f"{real.name}:{found.first_line}")


def _parse_text(text: str, first_line: int) -> list[dict[str, Any]] | None:
    """crossplane's tokens of `text` (its first line `first_line` of its file) as the
    statements and blocks its parser makes; None when they do not close."""
    import io

    from crossplane.errors import NgxParserSyntaxError
    from crossplane.lexer import _balance_braces, _lex_file_object

    filled = masked(text)  # `listen {PORT};`: lexed as one word, put back after
    try:
        tokens = list(_balance_braces(_lex_file_object(io.StringIO(filled or text))))
    except NgxParserSyntaxError:
        return None
    position = 0

    def block() -> list[dict[str, Any]] | None:
        nonlocal position
        items: list[dict[str, Any]] = []
        words: list[tuple[str, int]] = []
        while position < len(tokens):
            token, line, quoted = tokens[position]
            position += 1
            if not quoted and token.startswith("#"):
                continue
            if quoted or token not in (";", "{", "}"):
                words.append((token, line + first_line - 1))
            elif token == "}":
                return items if not words else None
            elif not words:
                return None
            else:
                item: dict[str, Any] = {
                    "directive": words[0][0],
                    "line": words[0][1],
                    "args": [w for w, _ in words[1:]],
                }
                if token == "{":
                    inner = block()
                    if inner is None:
                        return None
                    item["block"] = inner
                items.append(item)
                words = []
        return items if not words else None

    parsed = block()
    if parsed is None or position < len(tokens):
        return None
    return parsed if filled is None else _unmask(parsed)


def _duration(node: _Node) -> float:
    value = parse_duration(node.args[0]) if node.args else None
    if value is None:
        raise CheckInputError(f"{node.at}: {node.directive}: not an nginx time: {node.args[:1]}")
    return value


def _setting(nodes: list[_Node], name: str, inherited: Setting[float]) -> Setting[float]:
    found = [n for n in nodes if n.directive == name]
    return Setting(_duration(found[-1]), found[-1].at) if found else inherited


def _root(nodes: list[_Node], inherited: str) -> str:
    """The last `root` of `nodes` (a block's own), else `inherited` (its enclosing block's)."""
    found = [n for n in nodes if n.directive == "root" and n.args]
    return found[-1].args[0] if found else inherited


def _pass_target(value: str) -> str:
    """`http://backend/path` -> `backend`; `unix:/x.sock` stays; a scheme and URI are dropped.
    `unix:////tmp/x.sock` is the socket /tmp/x.sock (the kernel reads `//` as `/`), not a
    scheme `unix://` before an empty host."""
    if not value.startswith("unix:"):
        value = re.sub(r"\A[a-z]+://", "", value)
    if value.startswith("unix:"):
        return value.split(":", 2)[0] + ":" + value.split(":", 2)[1]
    return value.split("/", 1)[0]


def _listen_address(value: str) -> str:
    """`listen 80` and `listen *:80` are every address of port 80; others stay as written."""
    if value.isdigit():
        return f"*:{value}"
    if value.startswith("[") and value.endswith("]"):  # `listen [::]` (port 80)
        return f"{value}:80"
    if value.startswith("unix:") or ":" in value:
        return value
    return f"{value}:80"  # `listen 127.0.0.1` or `listen localhost`


def _every(nodes: list[_Node]) -> list[_Node]:
    found: list[_Node] = []
    for node in nodes:
        found.append(node)
        if node.block is not None:
            found.extend(_every(node.block))
    return found


#: Directives that define a variable of the config's own, and which argument names it.
_DEFINING = {
    "set": 0, "map": 1, "split_clients": 1, "perl_set": 0, "js_set": 0,
    "set_by_lua": 0, "set_by_lua_block": 0, "set_by_lua_file": 0,
}  # fmt: skip
_VARIABLE = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)
_CAPTURE = re.compile(r"\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>")


def _defined_variables(nodes: list[_Node]) -> frozenset[str]:
    """The variables the config defines (`set $backend ...;`, `map ... $name`, `geo`, a
    regex's named capture) with nginx's own: a pass that names only these is nginx's."""
    found: set[str] = set()
    for node in _every(nodes):
        index = _DEFINING.get(node.directive)
        if node.directive == "geo" and node.args:
            index = len(node.args[:2]) - 1
        if index is not None and len(node.args) > index and node.args[index].startswith("$"):
            found.add(node.args[index][1:])
        found.update(m[1] for arg in node.args for m in _CAPTURE.finditer(arg))
    return frozenset(found)


def _computed(value: str, defined: frozenset[str]) -> bool:
    """`value` names a variable the config defines that no `set` gave a literal value
    (`set_by_lua_block $port { ... }`, a `map`): nginx computes it where it runs."""
    return any((m["braced"] or m["bare"]) in defined for m in _VARIABLE.finditer(value))


def _template_names(value: str, defined: frozenset[str]) -> list[str]:
    """The names `value` holds that neither nginx nor the config defines (`$BACKEND_ADDR`,
    `${BACKEND}`): a template's, which envsubst renders where the container starts."""
    names = [m["braced"] or m["bare"] for m in _VARIABLE.finditer(value)]
    return [n for n in names if n not in defined and not nginx_variable(n)]


def _walk_locations(
    passes: list[PassTarget],
    block: list[_Node],
    proxy: Setting[float],
    uwsgi: Setting[float],
    http11: bool,
    sends: tuple[Setting[float], Setting[float]],
    where: str = "",
    templated: list[PassTarget] | None = None,
    nginx_names: frozenset[str] = frozenset(),
    root: str = "",
) -> None:
    """Append to `passes` each `proxy_pass` / `uwsgi_pass` of `block` and the locations in it,
    with the read and send timeouts, HTTP version and `root` it inherits where it is written; to
    `templated` each whose target names a variable nginx does not define (`nginx_names`, its
    own and the config's): a template's, rendered where the container starts."""
    inherited = (proxy, uwsgi)
    proxy = _setting(block, "proxy_read_timeout", proxy)
    uwsgi = _setting(block, "uwsgi_read_timeout", uwsgi)
    sends = (
        _setting(block, "proxy_send_timeout", sends[0]),
        _setting(block, "uwsgi_send_timeout", sends[1]),
    )
    versions = [n for n in block if n.directive == "proxy_http_version" and n.args]
    http11 = versions[-1].args[0] == "1.1" if versions else http11
    root = _root(block, root)
    handler = _content_handler(block)
    for node in block:
        if node.directive in ("proxy_pass", "uwsgi_pass") and node.args and node is handler:
            http = node.directive == "proxy_pass"
            found = PassTarget(
                "http" if http else "uwsgi",
                _pass_target(node.args[0]),
                node.at,
                proxy if http else uwsgi,
                http11 and http,
                where,
                sends[0] if http else sends[1],
                root=root,
                included_from=node.via,
                own_read_timeout=(proxy if http else uwsgi) is not inherited[0 if http else 1],
            )
            if "$" not in node.args[0]:
                passes.append(found)
            elif templated is not None and _template_names(node.args[0], nginx_names):
                templated.append(found)
            elif templated is not None and _computed(node.args[0], nginx_names):
                templated.append(replace(found, computed=True))
        elif node.block is not None and node.directive in ("location", "if", "limit_except"):
            inner = " ".join(node.args) if node.directive == "location" else where
            _walk_locations(
                passes, node.block, proxy, uwsgi, http11, sends, inner, templated, nginx_names, root
            )


def _content_handler(block: list[_Node]) -> _Node | None:
    """The pass that answers a block's requests: the last of its passing directives. Each
    (`uwsgi_pass`, `proxy_pass`, `fastcgi_pass`...) sets the location's one content handler
    (`clcf->handler` of ngx_http_core_module) as nginx reads it, and each module refuses only a
    second pass of its own ("is duplicate"), so `uwsgi_pass app; proxy_pass http://app;` in
    one location speaks HTTP: the uwsgi_pass is overwritten. Seen in Cloud-CV/Fabrik."""
    passing = [n for n in block if n.directive in _PASSING and n.args]
    return passing[-1] if passing else None


def _with_set_values(nodes: list[_Node], sets: dict[str, str]) -> list[_Node]:
    """`nodes` with each `proxy_pass` / `uwsgi_pass` as nginx evaluates it: a variable that a
    `set` of its block (or of an enclosing one) gives a value replaced by that value (`set
    $upstream http://api:8000;` then `proxy_pass $upstream;`, the Docker resolver pattern),
    and a URI holding variables dropped after the address (`http://api:8000/$1`): the
    upstream it passes to is the same whatever the request."""
    sets = {**sets, **{n.args[0][1:]: n.args[1] for n in nodes if _sets_a_value(n)}}
    sets |= {n.args[1][1:]: v for n in nodes if (v := _constant_map(n)) is not None}
    found: list[_Node] = []
    for node in nodes:
        if node.directive in ("proxy_pass", "uwsgi_pass") and node.args and "$" in node.args[0]:
            value = _address_of(_VARIABLE.sub(lambda m: _set_value(m, sets), node.args[0]))
            node = replace(node, args=[value, *node.args[1:]])
        elif node.block is not None:
            node = replace(node, block=_with_set_values(node.block, sets))
        found.append(node)
    return found


def _sets_a_value(node: _Node) -> bool:
    """`set $name value;`: a variable the config gives a value of its own."""
    return node.directive == "set" and len(node.args) == 2 and node.args[0].startswith("$")


def _constant_map(node: _Node) -> str | None:
    """The one value of a `map` whose source holds no variable (`map "" $backend { default
    http://gateway:4444; }`, seen in IBM/mcp-context-forge): nginx matches the same string on
    every request, so the variable is the entry of that key, else the default; None for any
    other map, or one with regular-expression keys or an include (not known here)."""
    if node.directive != "map" or node.block is None or len(node.args) != 2:
        return None
    source, name = node.args
    if "$" in source or not name.startswith("$"):
        return None
    entries: dict[str, str] = {}
    for entry in node.block:
        if entry.directive in ("include", "hostnames") or entry.directive.startswith("~"):
            return None
        if len(entry.args) == 1:
            entries[entry.directive] = entry.args[0]
    value = entries.get(source, entries.get("default"))
    return value if value is not None and "$" not in value else None


def _set_value(match: re.Match[str], sets: dict[str, str]) -> str:
    return sets.get(match["braced"] or match["bare"], match[0])


def _address_of(value: str) -> str:
    """`scheme://host:port` of a pass whose URI holds variables: after a `/`
    (`http://api:8000/$1`), or one of nginx's own variables right after the address
    (`http://api:8000$request_uri`, the pattern with `resolver 127.0.0.11`); the value as
    written otherwise (a URI without variables is dropped when it is read)."""
    scheme, sep, rest = value.partition("://")
    if not sep or rest.startswith("unix:"):
        return value
    address, slash, uri = rest.partition("/")
    if "$" not in address:
        return f"{scheme}://{address}" if slash and "$" in uri else value
    written, _, variable = address.partition("$")
    name = _NAME_AFTER_DOLLAR.match(variable)
    if written and name is not None and (nginx_variable(name[1]) or name[1].isdigit()):
        return f"{scheme}://{written}"
    return value


_NAME_AFTER_DOLLAR = re.compile(r"\{?([A-Za-z0-9_]+)")


def _upstream(node: _Node, block: list[_Node]) -> Upstream:
    """An `upstream NAME { ... }` block: its servers and its pool of idle connections."""
    pool = [n for n in block if n.directive == "keepalive"]
    return Upstream(
        name=node.args[0],
        at=node.at,
        servers=tuple(
            # crossplane keeps `${BACKEND} fail_timeout=0` (a template placeholder) one word.
            Setting(n.args[0].split()[0], n.at)
            for n in block
            if n.directive == "server" and n.args and n.args[0].strip()
        ),
        keepalive=Setting(int(pool[-1].args[0]), pool[-1].at) if pool else None,
        keepalive_timeout=_setting(
            block,
            "keepalive_timeout",
            Setting(NGINX_DEFAULTS["upstream_keepalive_timeout"], node.at, default=True),
        ),
    )


def read_nginx(path: Path, text: str) -> NginxConfig:
    """The chain-relevant numbers of an nginx config and everything it includes."""
    del text  # read again (with its includes) by the walk; the caller already validated it
    _refuse_what_is_not_nginx(path)
    prefix = _prefix(path)
    tree = _Tree(main_dir=prefix)
    return _summarised(path, tree, _build(path, tree, ()))


def read_nginx_text(path: Path, text: str) -> NginxConfig:
    """The config at `path` as `text` says it (a template's reading of it, `heroku_nginx`), its
    includes found beside it as `read_nginx` finds them."""
    tree = _Tree(main_dir=_prefix(path))
    items = _parse_text(text, 1)
    if items is None:
        raise CheckInputError(
            f"{path}:1: nginx syntax error: a statement without its ';' or a block without its '}}'"
        )
    tree.files.append(path)
    return _summarised(path, tree, _build(path, tree, (path.resolve(),), items))


def read_started_nginx(
    config: ConfigFile, inside: str, find: FindConfig, held: Sequence[str] = ()
) -> NginxConfig:
    """The nginx config a container starts nginx with (`nginx -c inside`), found by the run
    as `config` (a template rendered, `check.jinja`): its includes are the files the container
    holds there, a relative name against the folder of `inside` (nginx's prefix is the `-c`
    file's folder), each found by `find` (so a template beside it is read rendered too); a
    glob over the container paths `held` lists, when it gives them."""
    tree = _Tree(
        main_dir=config.file.parent,
        find=find,
        inside=os.path.dirname(inside),
        held=tuple(held),
    )
    items = _parse_text(config.text, config.first_line)
    if items is None:
        raise CheckInputError(
            f"{config.file}:{config.first_line}: {inside} as it renders does not parse as "
            "nginx's config"
        )
    tree.files.append(config.file)
    return _summarised(config.file, tree, _build(config.file, tree, (_made_key(config),), items))


def _summarised(path: Path, tree: _Tree, nodes: list[_Node]) -> NginxConfig:
    """The numbers the rules read from the parsed config whose main file is `path`."""
    nodes = _with_set_values(nodes, {})
    http = [n for n in nodes if n.directive == "http" and n.block is not None]
    # A file with no `http` block is a site snippet: its top level is the http context.
    contexts = [n.block for n in http if n.block is not None] or [nodes]

    keepalives: list[Setting[float]] = []
    upstreams: dict[str, Upstream] = {}
    passes: list[PassTarget] = []
    templated: list[PassTarget] = []
    defined = _defined_variables(nodes)
    backlogs: list[Setting[int]] = []
    listens: list[Setting[str]] = []
    missing = [n for n in _every(nodes) if n.directive == "#missing-include"]
    proxying: set[Location] = set()
    default_read = Setting(NGINX_DEFAULTS["read_timeout"], Location(path), default=True)
    default_keepalive = Setting(NGINX_DEFAULTS["keepalive_timeout"], Location(path), default=True)

    for context in contexts:
        http_keepalive = _setting(context, "keepalive_timeout", default_keepalive)
        for node in context:
            if node.directive == "upstream" and node.block is not None and node.args:
                upstreams[node.args[0]] = _upstream(node, node.block)
            elif node.directive == "server" and node.block is not None:
                keepalive = _setting(node.block, "keepalive_timeout", http_keepalive)
                if keepalive.default:
                    keepalive = Setting(keepalive.value, node.at, default=True)
                keepalives.append(keepalive)
                if any(n.directive in _PASSING for n in _every(node.block)):
                    proxying.add(keepalive.at)
                for listen in (n for n in node.block if n.directive == "listen"):
                    if listen.args:
                        listens.append(Setting(_listen_address(listen.args[0]), listen.at))
                    for arg in listen.args[1:]:
                        if arg.startswith("backlog=") and arg[8:].isdigit():
                            backlogs.append(Setting(int(arg[8:]), listen.at))
                versions = [n for n in context if n.directive == "proxy_http_version" and n.args]
                _walk_locations(
                    passes,
                    node.block,
                    _setting(context, "proxy_read_timeout", default_read),
                    _setting(context, "uwsgi_read_timeout", default_read),
                    bool(versions) and versions[-1].args[0] == "1.1",
                    (
                        _setting(context, "proxy_send_timeout", default_read),
                        _setting(context, "uwsgi_send_timeout", default_read),
                    ),
                    templated=templated,
                    nginx_names=defined,
                    root=_root(context, ""),
                )
    snippet = _location_snippet(nodes, http)
    if snippet:
        _walk_locations(
            passes,
            nodes,
            default_read,
            default_read,
            False,
            (default_read, default_read),
            templated=templated,
            nginx_names=defined,
        )
    return NginxConfig(
        file=path,
        files=tuple(tree.files),
        keepalive_timeouts=tuple(keepalives),
        upstreams=upstreams,
        passes=tuple(passes),
        templated_passes=tuple(templated),
        listen_backlogs=tuple(backlogs),
        listens=tuple(listens),
        missing_includes=tuple(Setting(n.args[0], n.at) for n in missing),
        worker_connections=_worker_connections(nodes, path),
        worker_processes=_worker_processes(nodes, path),
        static_keepalives=tuple(k.at for k in keepalives if k.at not in proxying),
        snippet=snippet,
        main=bool(http),
    )


def _location_snippet(nodes: list[_Node], http: list[_Node]) -> bool:
    """A file of `location` blocks or of a location's own lines (`proxy_pass` with its
    headers), and no `server` or `http` block: a snippet a site includes (`include
    snippets/app_proxy.conf;`) whose passes are that site's, read alone too where the site is
    not read (a templated site, a script writing it), as mail-in-a-box's
    conf/nginx-primaryonly.conf and tournesol's gunicorn_proxy.conf are."""
    if http or any(n.directive == "server" for n in nodes):
        return False
    return any(n.directive in ("location", "proxy_pass", "uwsgi_pass") for n in nodes)


#: The directives that pass a request on to another server (the rest serve files or answer).
_PASSING = frozenset(
    {"proxy_pass", "uwsgi_pass", "fastcgi_pass", "grpc_pass", "scgi_pass", "memcached_pass"}
)


#: nginx's compiled-in defaults: https://nginx.org/en/docs/ngx_core_module.html
NGINX_DEFAULT_WORKER_CONNECTIONS = 512


def _worker_connections(nodes: list[_Node], path: Path) -> Setting[int] | None:
    """`events { worker_connections N; }`; the default where an events block leaves it out;
    None where there is no events block (a site file: set in the main config)."""
    events = [n for n in nodes if n.directive == "events" and n.block is not None]
    if not events:
        return None
    found = [n for e in events for n in e.block or [] if n.directive == "worker_connections"]
    if found and found[-1].args and found[-1].args[0].isdigit():
        return Setting(int(found[-1].args[0]), found[-1].at)
    return Setting(NGINX_DEFAULT_WORKER_CONNECTIONS, events[-1].at, default=True)


def _worker_processes(nodes: list[_Node], path: Path) -> Setting[int] | None:
    """`worker_processes N` (1 by default); None for `auto`, one per core."""
    found = [n for n in nodes if n.directive == "worker_processes" and n.args]
    if not found:
        return Setting(1, Location(path), default=True)
    value = found[-1].args[0]
    return Setting(int(value), found[-1].at) if value.isdigit() else None
