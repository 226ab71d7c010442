"""haproxy.cfg, read the way HAProxy's own parser cuts it, reduced to what the chain needs.

HAProxy's configuration manual (configuration.txt, sections 2 and 4) is the grammar followed here:

* a statement is one line up to an unprotected `#`; words are separated by unprotected spaces
  or tabs; a backslash escapes the next character (`\\ `, `\\#`, `\\\\`, `\\'`, `\\"`, and `\\n`,
  `\\r`, `\\t`, `\\xNN`), double quotes group a word and expand `$VAR`, `${VAR}` and
  `${VAR-default}` from the environment, single quotes group a word with nothing expanded;
* a section starts with one of its keywords (`global`, `defaults`, `frontend`, `backend`,
  `listen`, and the others HAProxy has, whose contents this reader skips) and runs to the next;
* a `defaults` section resets every setting and presets them for the proxies after it; a proxy
  takes the last `defaults` before it, or the one it names with `from NAME`;
* a time is milliseconds unless a unit follows: `us`, `ms`, `s`, `m`, `h`, `d` (section 2.5).

Each `backend` and `listen` section becomes a `Balancer`: the servers it sends to and how long
it may keep an idle connection to them open. In HTTP mode a connection to a server stays
attached to its client's session while that client is idle (`timeout http-keep-alive`, else
`http-request`, else `client`), and with `http-reuse` (on unless `never`) it is then kept in the
server's pool, which HAProxy thins only every `pool-purge-delay` (5 s by default): the longer of
the two is the idle time nginx must outlast. `option http-server-close` or `httpclose` keep no
idle connection to a server. In TCP mode (HAProxy's default `mode`) the client's connection is
the server's: it closes after `timeout tunnel`, else the shorter of `timeout client` and
`timeout server`.

Not read (refused with one line rather than guessed): `.if` conditional blocks.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from servertune.check.model import Balancer, CheckInputError, Location, Setting

__all__ = ["DEFAULT_POOL_PURGE_S", "looks_like_haproxy", "parse_time", "read_haproxy", "words"]

#: HAProxy's documented defaults for what the reader uses (an unset timeout never expires).
DEFAULT_POOL_PURGE_S = 5.0
DEFAULT_MODE = "tcp"
DEFAULT_REUSE = "safe"
#: Keywords that start a section (configuration.txt, sections 3 and 4, HAProxy 2.6 to 3.x).
PROXY_SECTIONS = frozenset({"defaults", "frontend", "backend", "listen"})
OTHER_SECTIONS = frozenset(
    {
        "global", "userlist", "peers", "resolvers", "mailers", "program", "http-errors",
        "ring", "cache", "fcgi-app", "log-forward", "crt-store", "traces", "acme",
    }
)  # fmt: skip
_TIME = re.compile(r"\A([0-9]+)(us|ms|s|m|h|d)?\Z")
_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_VARIABLE = re.compile(r"\$(\{([A-Za-z_.][A-Za-z0-9_]*)(-[^}]*)?\}|([A-Za-z_][A-Za-z0-9_]*))")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}


def parse_time(text: str) -> float | None:
    """HAProxy's time syntax (`60s`, `500`, `1m`, `250ms`) in seconds; None when not a time."""
    match = _TIME.match(text)
    if match is None:
        return None
    return int(match.group(1)) * _UNITS[match.group(2) or "ms"]


def _expand(text: str, env: Mapping[str, str], at: Location) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(2) or match.group(4)
        default = match.group(3)
        if name in env:
            return env[name]
        if default is not None:
            return default[1:]
        raise CheckInputError(f"{at}: ${name} is not set in the environment check was given")

    return _VARIABLE.sub(value, text)


def words(line: str, at: Location, env: Mapping[str, str]) -> list[str]:
    """One line cut into words as HAProxy does: quotes, escapes, comments, variables."""
    found: list[str] = []
    word: list[str] | None = None
    i, quote = 0, ""
    while i < len(line):
        char = line[i]
        if quote == "'":
            if char == "'":
                quote = ""
            else:
                assert word is not None
                word.append(char)
            i += 1
            continue
        if char == "\\" and i + 1 < len(line):
            nxt = line[i + 1]
            if word is None:
                word = []
            if nxt == "x" and re.match(r"[0-9A-Fa-f]{2}", line[i + 2 : i + 4]):
                word.append(chr(int(line[i + 2 : i + 4], 16)))
                i += 4
                continue
            word.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        if quote == '"':
            if char == '"':
                quote = ""
                i += 1
                continue
            if char == "$":
                match = _VARIABLE.match(line, i)
                if match is not None:
                    assert word is not None
                    word.append(_expand(match.group(0), env, at))
                    i = match.end()
                    continue
            assert word is not None
            word.append(char)
            i += 1
            continue
        if char in " \t":
            if word is not None:
                found.append("".join(word))
                word = None
        elif char == "#":
            break
        elif char in "'\"":
            quote = char
            if word is None:
                word = []
        else:
            if word is None:
                word = []
            word.append(char)
        i += 1
    if quote:
        raise CheckInputError(f"{at}: unterminated {quote} quote")
    if word is not None:
        found.append("".join(word))
    return found


@dataclass
class _Section:
    kind: str
    name: str
    at: Location
    #: keyword -> (arguments, where), the last one written (a `defaults` section's are copied).
    settings: dict[str, tuple[list[str], Location]] = field(default_factory=dict)
    servers: list[tuple[list[str], Location]] = field(default_factory=list)
    backends: list[str] = field(default_factory=list)


def _key(args: list[str]) -> str:
    """The setting a statement writes: `timeout server`, `option http-server-close`, `mode`."""
    if args[0] in ("timeout", "option") and len(args) > 1:
        return f"{args[0]} {args[1]}"
    if args[0] == "no" and len(args) > 2 and args[1] == "option":
        return f"option {args[2]}"
    if args[:2] == ["http-request", "set-timeout"] and len(args) == 4:
        # Unconditional only: one with `if` / `unless` sets the time for some requests.
        return f"http-request set-timeout {args[2]}"
    return args[0]


def _sections(path: Path, text: str, env: Mapping[str, str]) -> list[_Section]:
    """Every proxy section (defaults resolved into them), in file order."""
    sections: list[_Section] = []
    seen = False
    defaults: dict[str, _Section] = {}
    last_defaults: _Section | None = None
    current: _Section | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        at = Location(path, number)
        args = words(line, at, env)
        if not args:
            continue
        keyword = args[0]
        if keyword.startswith(".") and keyword in (".if", ".elif", ".else", ".endif"):
            raise CheckInputError(
                f"{at}: {keyword}: conditional blocks depend on how HAProxy is started; check "
                "the config as it expands (`haproxy -cc` evaluates a condition)"
            )
        if keyword in PROXY_SECTIONS:
            seen = True
            name = args[1] if len(args) > 1 and args[1] != "from" else ""
            parent_name = args[args.index("from") + 1] if "from" in args[:-1] else None
            parent = last_defaults
            if parent_name is not None:
                if parent_name not in defaults:
                    raise CheckInputError(
                        f"{at}: {keyword} {name}: no defaults section {parent_name!r}"
                    )
                parent = defaults[parent_name]
            current = _Section(keyword, name, at)
            if parent is not None:
                current.settings = dict(parent.settings)
                current.servers = [s for s in parent.servers if s[0][0] == "default-server"]
            if keyword == "defaults":
                last_defaults = current
                if name:
                    defaults[name] = current
            else:
                sections.append(current)
            continue
        if keyword in OTHER_SECTIONS:
            seen, current = True, None
            continue
        if current is None:
            continue
        if keyword in ("server", "default-server"):
            if keyword == "default-server":
                current.servers = [s for s in current.servers if s[0][0] != "default-server"]
            current.servers.append((args, at))
        elif keyword in ("default_backend", "use_backend") and len(args) > 1:
            current.backends.append(args[1])
        else:
            if keyword == "timeout":
                _checked_time(args, at)
            current.settings[_key(args)] = (args, at)
    if not seen:
        raise CheckInputError(
            f"{path}: no HAProxy section (global, defaults, frontend, backend, listen)"
        )
    return sections


def _checked_time(args: list[str], at: Location) -> float:
    """The seconds of a `timeout EVENT TIME` statement, or one line saying what is wrong."""
    if len(args) != 3:
        shown = " ".join(args)
        raise CheckInputError(f"{at}: {shown!r}: a timeout takes an event and one time")
    seconds = parse_time(args[2])
    if seconds is None:
        raise CheckInputError(f"{at}: timeout {args[1]}: not an HAProxy time: {args[2]!r}")
    return seconds


def _time(section: _Section, key: str) -> Setting[float] | None:
    """A `timeout EVENT` setting of a section (its own or inherited), None when unset."""
    if key not in section.settings:
        return None
    args, at = section.settings[key]
    return Setting(_checked_time(args, at), at)


def _client_idle(section: _Section) -> Setting[float] | None:
    """How long HAProxy waits for a client's next request (None: forever)."""
    for key in ("timeout http-keep-alive", "timeout http-request", "timeout client"):
        found = _time(section, key)
        if found is not None:
            return found
    return None


def _option_on(section: _Section, name: str) -> bool:
    found = section.settings.get(f"option {name}")
    return found is not None and found[0][0] != "no"


def _address(args: list[str], at: Location) -> Setting[str] | None:
    """A `server NAME ADDRESS` address as nginx and the app servers write theirs."""
    if len(args) < 3:
        return None
    address = args[2]
    for prefix in ("ipv4@", "ipv6@", "tcp@", "tcp4@", "tcp6@"):
        address = address.removeprefix(prefix)
    if address.startswith("unix@"):
        return Setting("unix:" + address[5:], at)
    if address.count(":") > 1 and not address.startswith("["):
        host, _, port = address.rpartition(":")
        address = f"[{host}]:{port}"
    return Setting(address, at)


def _purge(section: _Section) -> Setting[float]:
    """The servers' `pool-purge-delay` (on `server` or `default-server`; 5 s by default)."""
    found: Setting[float] = Setting(DEFAULT_POOL_PURGE_S, section.at, default=True)
    for args, at in section.servers:
        if "pool-purge-delay" in args[:-1]:
            text = args[args.index("pool-purge-delay") + 1]
            seconds = parse_time(text)
            if seconds is None:
                raise CheckInputError(f"{at}: pool-purge-delay: not an HAProxy time: {text!r}")
            if seconds >= found.value or found.default:
                found = Setting(seconds, at)
    return found


def _never(at: Location) -> Setting[float]:
    """An idle limit nobody set: HAProxy then never closes the connection for idleness."""
    return Setting(math.inf, at, default=True)


def _longest(at: Location, *settings: Setting[float] | None) -> Setting[float]:
    """The longest of some idle limits; an unset one (None) never expires."""
    if any(s is None for s in settings):
        return _never(at)
    return max((s for s in settings if s is not None), key=lambda s: s.value)


def _word(section: _Section, key: str, default: str) -> str:
    args = section.settings.get(key, ([key, default], section.at))[0]
    return args[1] if len(args) > 1 else default


def _maxconn(args: list[str], at: Location) -> Setting[int] | None:
    """A `server` / `default-server` line's `maxconn N` (section 5.2), None when it has none."""
    if "maxconn" not in args[:-1]:
        return None
    text = args[args.index("maxconn") + 1]
    if not (text.isascii() and text.isdigit()) or len(text) > 9:
        raise CheckInputError(f"{at}: maxconn: not a number of connections: {text!r}")
    return Setting(int(text), at)


def _pool(args: list[str], at: Location) -> Setting[int] | None:
    """A `server` / `default-server` line's `pool-max-conn N` (section 5.2; -1: unbounded),
    None when it has none."""
    if "pool-max-conn" not in args[:-1]:
        return None
    text = args[args.index("pool-max-conn") + 1]
    digits = "1" if text == "-1" else text
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 9:
        raise CheckInputError(f"{at}: pool-max-conn: not a number of connections: {text!r}")
    return Setting(int(text), at)


@dataclass(frozen=True)
class _Server:
    address: Setting[str]
    #: Its `maxconn`; None: no limit (none written, or 0).
    maxconn: Setting[int] | None
    #: Its `pool-max-conn`; None: unbounded (none written, or -1).
    pool: Setting[int] | None


def _servers(section: _Section) -> list[_Server]:
    """Each `server`'s address, `maxconn` and `pool-max-conn`: its own, else the
    `default-server` line's before it (a maxconn of 0 is HAProxy's "no limit", a pool of -1
    is unbounded)."""
    found: list[_Server] = []
    default_limit: Setting[int] | None = None
    default_pool: Setting[int] | None = None
    for args, at in section.servers:
        own_limit, own_pool = _maxconn(args, at), _pool(args, at)
        if args[0] == "default-server":
            default_limit, default_pool = own_limit, own_pool
            continue
        address = _address(args, at)
        if address is None:
            continue
        limit = own_limit if own_limit is not None else default_limit
        pool = own_pool if own_pool is not None else default_pool
        found.append(
            _Server(
                address,
                None if limit is None or limit.value == 0 else limit,
                None if pool is None or pool.value < 0 else pool,
            )
        )
    return found


def _server_timeout(section: _Section) -> tuple[Setting[float] | None, str]:
    """How long it waits for a server's answer, and the statement that says so: an
    unconditional `http-request set-timeout server T` (section 4.4) replaces `timeout server`
    for every request of the backend."""
    found = section.settings.get("http-request set-timeout server")
    seconds = None if found is None else parse_time(found[0][3])
    if found is not None and seconds is not None:
        return Setting(seconds, found[1]), "http-request set-timeout server"
    return _time(section, "timeout server"), "timeout server"


def _balancer(section: _Section, fronts: list[_Section]) -> Balancer:
    """A backend (or listen) section with the frontends that route to it."""
    servers = _servers(section)
    # The client side is the frontends' (a listen section's own); with none found, the
    # backend's own inherited settings are what HAProxy would use.
    clients = fronts or [section]
    reuse = _word(section, "http-reuse", DEFAULT_REUSE)
    idle: Setting[float] | None
    keeps = "session" if reuse == "never" else reuse
    if _word(section, "mode", DEFAULT_MODE) != "http":
        keeps = "closed"
        tunnel = _time(section, "timeout tunnel")
        if tunnel is not None:
            idle, how = (
                tunnel,
                "`timeout tunnel` (TCP mode: the client's connection is the server's)",
            )
        else:
            limits = [_time(c, "timeout client") for c in clients] + [
                _time(section, "timeout server")
            ]
            present = [t for t in limits if t is not None]
            idle = min(present, key=lambda t: t.value) if present else _never(section.at)
            how = "the shorter of `timeout client` and `timeout server` (TCP mode)"
    elif any(
        _option_on(s, o) for s in (section, *clients) for o in ("http-server-close", "httpclose")
    ):
        idle, how = None, "`option http-server-close` / `httpclose`: no idle connection to a server"
        keeps = "closed"
    else:
        client_idle = _longest(section.at, *(_client_idle(c) for c in clients))
        if reuse == "never":
            idle = client_idle
            how = "the client's keep-alive (`timeout http-keep-alive`, else `http-request`, else `client`)"
        else:
            idle = _longest(section.at, client_idle, _purge(section))
            how = (
                "the longer of the client's keep-alive (`timeout http-keep-alive`, else "
                f"`http-request`, else `client`) and `pool-purge-delay` (http-reuse {reuse})"
            )
    server_timeout, server_timeout_directive = _server_timeout(section)
    return Balancer(
        kind="haproxy",
        file=section.at.file,
        name=section.name,
        at=section.at,
        servers=tuple(s.address for s in servers),
        idle=idle,
        idle_source=how,
        server_timeout=server_timeout,
        server_timeout_directive=server_timeout_directive,
        maxconns=tuple(s.maxconn for s in servers),
        keeps=keeps,
        pools=tuple(s.pool for s in servers),
    )


def looks_like_haproxy(path: Path, text: str) -> bool:
    """`haproxy*.cfg`, or a file whose first statement opens an HAProxy section (`global`,
    `defaults`, `frontend`, `backend`, `listen NAME`) with no nginx `;` or `{` on its line."""
    if "haproxy" in path.name and path.suffix in (".cfg", ""):
        return True
    for line in text.splitlines()[:200]:
        statement = line.split("#", 1)[0]
        first = statement.split()
        if first:
            sections = PROXY_SECTIONS | OTHER_SECTIONS
            return first[0] in sections and not any(c in statement for c in ";{}")
    return False


def read_haproxy(
    path: Path, text: str, env: Mapping[str, str] | None = None
) -> tuple[Balancer, ...]:
    """Every backend (and listen section) of an HAProxy config, as a `Balancer`."""
    environ = os.environ if env is None else env
    sections = _sections(path, text, environ)
    balancers = []
    for section in sections:
        if section.kind not in ("backend", "listen"):
            continue
        fronts = [
            s
            for s in sections
            if s.kind in ("frontend", "listen") and s is not section and section.name in s.backends
        ]
        if section.kind == "listen":
            fronts = [section, *fronts]
        balancers.append(_balancer(section, fronts))
    return tuple(balancers)
