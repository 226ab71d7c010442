"""PasteDeploy `.ini` files (Pyramid, Pylons, TurboGears): the application's config, and the
server that serves it when a `[server:main]` section names one.

A PasteDeploy file declares the WSGI application (`[app:main]`, `[pipeline:main]`,
`[composite:main]`, `[filter:...]`) and may declare a server runner (`[server:main]` with
`use = egg:gunicorn#main`, `egg:waitress#main`, ...). Which of the two a server reads depends on
how it is started (gunicorn's docs, "Paste Deployment":
https://docs.gunicorn.org/en/stable/run.html#paste-deployment):

* `pserve FILE` (or `gearbox serve`) runs the server section: with `use = egg:gunicorn#main`,
  gunicorn's `gunicorn.app.pasterapp.serve` takes the section's keys as its settings (`host`
  and `port` joined into `bind`, `config` a gunicorn config file loaded first, every other key
  `cfg.set(key.lower(), value)`); this module reads that section as that gunicorn.
* `gunicorn --paste FILE` loads only the application (and the file's logging sections) from it:
  "using alternate server blocks is not supported. Use the command line arguments to control
  server configuration instead" (https://docs.gunicorn.org/en/stable/settings.html#paste). The
  server section's settings are then not gunicorn's.

With `use = egg:waitress#main`, `pserve` runs waitress's `serve_paste`, which serves with the
section's keys as `waitress.serve`'s arguments (https://docs.pylonsproject.org/projects/
waitress/en/stable/usage.html, "PasteDeploy"): `host`/`port`, `listen`, `threads`,
`channel_timeout`... read as the runner's same-named options (`waitress.paste_words`).

A file with no server section, or one that runs a server check does not read, is the
application's config: read, and said in one coverage line, never refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from servertune.check.commands import (
    FindConfig,
    Word,
    beside,
    expand_known,
    program_name,
    read_command,
    server_command,
)
from servertune.check.model import (
    SERVERS_READ,
    AppServer,
    CheckInputError,
    Location,
    NothingToCheck,
    Setting,
)

__all__ = ["gunicorn_flags", "looks_like_paste", "pserve_served", "read_paste", "setting_words"]

#: PasteDeploy's section kinds (`paste.deploy.loadwsgi`): `[app:NAME]`, `[server:NAME]`...
_SECTION = re.compile(
    r"^\[(?P<kind>app|server|pipeline|composite|filter|filter-app):(?P<name>[^\]]+)\]\s*$"
)
_HEADER = re.compile(r"^\[(?P<name>[^\]]+)\]\s*$")
_KEY = re.compile(r"^(?P<key>[^=:\s][^=:]*?)\s*[=:]\s*(?P<value>.*)$")
#: ConfigParser's interpolation as PasteDeploy uses it: `%(here)s`, `%(http_port)s`.
_INTERPOLATION = re.compile(r"%\((?P<name>[^)]+)\)s")
#: The `use =` values that run gunicorn's paste server runner (its `paste.server_runner`
#: entry point `main = gunicorn.app.pasterapp:serve`).
_GUNICORN_RUNNERS = frozenset(
    {"egg:gunicorn", "egg:gunicorn#main", "call:gunicorn.app.pasterapp:serve"}
)
#: The `use =` values that run waitress's (its `paste.server_runner` entry point `main =
#: waitress:serve_paste`).
_WAITRESS_RUNNERS = frozenset({"egg:waitress", "egg:waitress#main", "call:waitress:serve_paste"})
#: The suffixes a template of an ini is named with (`app.ini.template`, `app.ini.in`).
_TEMPLATE_SUFFIXES = frozenset({".template", ".in", ".j2", ".jinja", ".jinja2", ".tpl", ".tmpl"})
#: Booleans as PasteDeploy's `asbool` and gunicorn's `validate_bool` read them.
_TRUE = frozenset({"true", "yes", "on", "y", "t", "1"})


def looks_like_paste(path: Path, text: str) -> bool:
    """An ini file with a PasteDeploy section (`[app:main]`, `[server:main]`,
    `[pipeline:main]`...) and no `[uwsgi]` one (uWSGI's `--ini-paste` reads that section). Not
    a template of one (`prod.ini.template`, `.ini.in`, `.ini.j2`): what it renders to, and who
    serves that, is not here."""
    if path.suffix in _TEMPLATE_SUFFIXES and ".ini" in path.suffixes[:-1]:
        return False
    lines = [line.strip() for line in text.splitlines()]
    return any(_SECTION.match(line) for line in lines) and "[uwsgi]" not in lines


@dataclass
class _Section:
    kind: str
    name: str
    line: int
    #: key (lower case) -> (value, line); a continued value joined with spaces.
    keys: dict[str, tuple[str, int]] = field(default_factory=dict)


def _sections(path: Path, text: str) -> list[_Section]:
    """The file's sections in order, `[DEFAULT]` and other sections included (kind "")."""
    sections: list[_Section] = []
    last: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        header = _HEADER.match(stripped) if not raw[:1].isspace() else None
        if header is not None:
            paste = _SECTION.match(stripped)
            kind, name = (paste["kind"], paste["name"]) if paste else ("", header["name"])
            sections.append(_Section(kind, name.strip(), number))
            last = None
            continue
        if raw[:1].isspace() and last is not None and sections:
            value, at = sections[-1].keys[last]
            sections[-1].keys[last] = (f"{value} {stripped}".strip(), at)
            continue
        key = _KEY.match(stripped)
        if key is None or not sections:
            raise CheckInputError(f"{path}:{number}: not an ini line (KEY = VALUE, [section])")
        last = key["key"].strip().lower()
        sections[-1].keys[last] = (key["value"].strip(), number)
    return sections


def _interpolated(value: str, known: Mapping[str, str]) -> str | None:
    """`value` with its `%(name)s` filled from `known`; None when one is not known here
    (a variable `pserve FILE name=value` passes)."""
    missing = False

    def one(match: re.Match[str]) -> str:
        nonlocal missing
        found = known.get(match["name"])
        missing = missing or found is None
        return found or ""

    filled = _INTERPOLATION.sub(one, value.replace("%%", "\0")).replace("\0", "%")
    return None if missing else filled


def read_paste(
    path: Path,
    text: str,
    env: Mapping[str, str] | None = None,
    variables: Mapping[str, str] | None = None,
) -> AppServer:
    """The gunicorn a `[server:main]` section with `use = egg:gunicorn#main` runs under
    `pserve FILE`, with the section's settings (`%(name)s` filled from `variables` too, the
    `name=value` words `pserve` passes); NothingToCheck for the application's config (no
    server section, or a server check does not read)."""
    sections = _sections(path, text)
    servers = [s for s in sections if s.kind == "server"]
    apps = ", ".join(f"[{s.kind}:{s.name}]" for s in sections if s.kind and s.kind != "server")
    if not servers:
        raise NothingToCheck(
            f"{path}: a PasteDeploy application config ({apps or 'no app section'}): it starts "
            "no server of its own; the server that loads it (`gunicorn --paste`) takes its "
            "settings from its command line and config file"
        )
    server = next((s for s in servers if s.name == "main"), servers[0])
    use = server.keys.get("use", ("", server.line))[0]
    if use not in _GUNICORN_RUNNERS | _WAITRESS_RUNNERS:
        raise NothingToCheck(
            f"{path}:{server.line}: [server:{server.name}] runs {use or 'no server (no use =)'}"
            f": not a server check reads ({SERVERS_READ}), so how it serves "
            "is not checked"
        )
    defaults = next((s.keys for s in sections if not s.kind and s.name == "DEFAULT"), {})
    known = {"here": str(path.parent), "__file__": str(path)}
    known.update({k: v for k, (v, _) in defaults.items() if "%(" not in v})
    known.update(variables or {})
    if use in _WAITRESS_RUNNERS:
        return _waitress(path, server, known)
    return _gunicorn(path, server, known, env)


#: pserve's options that take a value (`pyramid.scripts.pserve`: `-n/--app-name`,
#: `-s/--server`, `--server-name`, `--reload-interval`): the word after is no config.
_PSERVE_VALUED = frozenset({"-n", "--app-name", "-s", "--server", "--server-name"})
_PSERVE_VALUED |= {"--reload-interval"}


def pserve_served(
    words: Sequence[Word], env: Mapping[str, str] | None, find_config: FindConfig
) -> AppServer | None:
    """`pserve FILE [name=value ...]` (Pyramid's runner, behind any wrapper): the server its
    `[server:main]` section names (`use = egg:gunicorn#main`, `egg:waitress#main`), read as
    `read_paste` reads it, with the `name=value` words filling `%(name)s`, and reloading
    under `--reload`; None when FILE is not here or names no server check reads."""
    names = [program_name(w.text) for w in words]
    if "pserve" not in names:
        return None
    args = list(words[names.index("pserve") + 1 :])
    uri: Word | None = None
    variables: dict[str, str] = {}
    reload: Word | None = None
    skip = False
    for word in args:
        if skip:
            skip = False
        elif word.text in _PSERVE_VALUED:
            skip = True
        elif word.text == "--reload":
            reload = word
        elif word.text.startswith("-"):
            continue
        elif uri is None:
            uri = word
        elif "=" in word.text:
            name, _, value = word.text.partition("=")
            variables[name] = value
    if uri is None:
        return None
    # `production.ini#main` names the app section: the server section is `main` either way.
    wanted = uri.text.split("#", 1)[0].removeprefix("config:")
    if "$" in wanted and env:
        # `pserve "$CONF/app.ini"`: the shell expands the image's ENV first, as it does for
        # `uwsgi --ini $C` (Magpie); a name only the running container knows stays as written.
        wanted = expand_known(wanted, env)
    config = find_config(wanted, uri.at)
    if config is None:
        return None
    try:
        app = read_paste(config.file, config.text, env, variables)
    except NothingToCheck:
        return None
    if reload is not None and app.reloads is None:
        app = replace(app, reloads=Setting(True, reload.at))
    return app


def _waitress(path: Path, server: _Section, known: Mapping[str, str]) -> AppServer:
    """The section as waitress's `serve_paste` serves it (`waitress.paste_words`); a key whose
    `%(name)s` is not known here is left out, in an `unresolved-variable` note."""
    from servertune.check.model import note
    from servertune.check.waitress import paste_words, waitress_server

    keys: dict[str, tuple[str, Location]] = {}
    for key, (raw, line) in server.keys.items():
        value = _interpolated(raw, known)
        where = Location(path, line)
        if value is None:
            note(
                "unresolved-variable",
                where,
                f"{where}: {key} = {raw}: known only where pserve runs (its name=value "
                "arguments); waitress was read without it",
            )
            continue
        keys[key] = (value, where)
    return waitress_server(path, paste_words(keys), Location(path, server.line))


def gunicorn_flags() -> dict[str, tuple[str, str]]:
    """Each gunicorn setting that has a command-line option: its name -> (option, argparse
    action), from gunicorn's own declarations."""
    from gunicorn.config import KNOWN_SETTINGS  # type: ignore[import-untyped]

    return {s.name: (s.cli[-1], s.action or "") for s in KNOWN_SETTINGS if s.cli}


def setting_words(
    flags: Mapping[str, tuple[str, str]], name: str, value: object, at: Location
) -> list[Word]:
    """The command-line words that set gunicorn's setting `name` to `value` as `cfg.set(name,
    value)` would (a list of binds: one `--bind` each; a boolean: its flag when true); none
    for a name gunicorn has no option for."""
    flag, action = flags.get(name.lower(), ("", ""))
    if not flag or value is None:
        return []
    if action == "store_true":
        true = value if isinstance(value, bool) else str(value).strip().lower() in _TRUE
        return [Word(flag, at)] if true else []
    if action == "store_false":
        return []
    values = value if isinstance(value, list | tuple) else [value]
    return [word for one in values for word in (Word(flag, at), Word(str(one), at))]


def _gunicorn(
    path: Path, server: _Section, known: Mapping[str, str], env: Mapping[str, str] | None
) -> AppServer:
    """The section as gunicorn's `pasterapp.serve` sets it: each key a setting (spelled as the
    command-line option of the same setting, at the key's line), `host` and `port` one bind."""
    flags = gunicorn_flags()
    keys = {k: v for k, v in server.keys.items() if k != "use"}
    at = Location(path, server.line)
    words = [Word("gunicorn", at)]
    unknown: list[Setting[str]] = []
    host, port = keys.pop("host", None), keys.pop("port", None)
    if host is not None:
        # gunicorn's serve(): `host:port` when both are set, else each host of `host`; a port
        # without a host is dropped (gunicorn binds its default address).
        binds = [f"{host[0]}:{port[0]}"] if port is not None else host[0].split(",")
        for index, bind in enumerate(binds):
            keys[f"\0bind{index}"] = (bind, host[1])
    for key, (raw, line) in keys.items():
        name = "bind" if key.startswith("\0bind") else key
        where = Location(path, line)
        value = _interpolated(raw, known)
        if value is None and name in flags:
            unknown.append(Setting(f"{flags[name][0]} {raw}", where))
        else:
            words += setting_words(flags, name, value, where)
    command = server_command(words)
    if command is None:  # never: the first word is gunicorn
        raise CheckInputError(f"{path}:{server.line}: no gunicorn command line")
    return read_command(
        path, command, dict(env or {}), find_config=beside(path), unknown=tuple(unknown)
    )
