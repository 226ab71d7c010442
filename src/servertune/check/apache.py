"""An Apache httpd config read as a front: where each `ProxyPass` sends requests, how long
mod_proxy keeps an idle connection to that backend, and how long it waits for its answer.

The grammar followed is httpd's own (https://httpd.apache.org/docs/2.4/configuring.html): one
directive per line, a `\\` ending a line continues it, a `#` starting a line comments it out,
`<Section args>` ... `</Section>` nests, names are case-insensitive, `"..."` groups a word, and
`${NAME}` is a `Define`d name (or httpd's environment: unknown here, a coverage note).

Each backend a `ProxyPass` (or `ProxyPassMatch`, `RewriteRule ... [P]`) reaches becomes a
`Balancer`, one per `BalancerMember` of a `balancer://` it names:
- its idle time: mod_proxy pools backend connections and reuses them until the worker's `ttl`
  (no default: a pooled connection is kept until the backend closes it); `disablereuse=On`,
  `enablereuse=Off`, `SetEnv proxy-nokeepalive` or a `RewriteRule [P]` (the default worker,
  "without handling of persistent connections") keep none;
- its wait for the answer: the worker's `timeout=`, else `ProxyTimeout`, else the server's
  `Timeout` (60 s by default).
`keepalive=On` on a worker is TCP keep-alive probes (SO_KEEPALIVE), not an idle limit: it
changes neither. `mod_wsgi` (`WSGIDaemonProcess`) runs the app inside httpd: a coverage note.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from servertune.check.model import (
    Balancer,
    CheckInputError,
    Location,
    NotSupported,
    Setting,
    note,
)

__all__ = ["APACHE_DOCS", "DEFAULT_TIMEOUT_S", "looks_like_apache", "read_apache"]

_MOD_PROXY = "https://httpd.apache.org/docs/2.4/mod/mod_proxy.html"
#: core `Timeout`: "Default: Timeout 60" (https://httpd.apache.org/docs/2.4/mod/core.html#timeout);
#: `ProxyTimeout`: "Default: Value of Timeout"; a ProxyPass worker's `timeout`: "Default:
#: ProxyTimeout" (_MOD_PROXY#proxytimeout, #proxypass).
DEFAULT_TIMEOUT_S = 60.0
#: What a finding about an Apache front cites for these defaults.
APACHE_DOCS = (
    "Apache httpd: Timeout 60 s by default (https://httpd.apache.org/docs/2.4/mod/core.html#timeout), "
    f"ProxyTimeout defaults to Timeout ({_MOD_PROXY}#proxytimeout); a ProxyPass worker pools its "
    "connections and keeps them with no `ttl` by default, `timeout` defaults to ProxyTimeout "
    f"({_MOD_PROXY}#proxypass); the backend closing a pooled connection as httpd sends on it "
    "is the race mod_proxy_http's proxy-initial-not-pooled names "
    "(https://httpd.apache.org/docs/2.4/mod/mod_proxy_http.html#env)"
)

#: Directives and sections only httpd has (nginx's are lower-case words ending in `;`).
_SIGNATURE = re.compile(
    r"^[ \t]*(<(VirtualHost|IfModule|Location|LocationMatch|Directory|Proxy)\b"
    r"|(ProxyPass|ProxyPassMatch|ProxyPassReverse|BalancerMember|WSGIDaemonProcess|"
    r"WSGIScriptAlias|LoadModule|ServerRoot|DocumentRoot)[ \t])",
    re.I | re.M,
)
_SECTION = re.compile(r"\A<(/?)([A-Za-z]+)\s*(.*?)\s*>\Z", re.S)
_DEFINED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_:.-]*)\}")
#: Schemes mod_proxy speaks HTTP with; others (fcgi, ajp, scgi, uwsgi) reach servers check
#: does not read as an HTTP backend.
_HTTP_SCHEMES = frozenset({"http", "https", "ws", "wss", "h2", "h2c"})


def looks_like_apache(path: Path, text: str) -> bool:
    """An httpd config by its content: an httpd section (`<VirtualHost>`, `<IfModule>`) or
    directive (`ProxyPass`, `LoadModule`) starting a line."""
    del path
    return bool(_SIGNATURE.search(text))


@dataclass
class _Directive:
    name: str  # lower-cased
    args: list[str]
    at: Location


@dataclass
class _Scope:
    """A server (the main one, or a `<VirtualHost>`): the directives that set its waits."""

    label: str
    settings: dict[str, _Directive] = field(default_factory=dict)
    nokeepalive: bool = False


@dataclass
class _Pass:
    url: str
    params: dict[str, str]
    at: Location
    scope: _Scope
    path: str
    #: From a `RewriteRule [P]`: the default worker, which pools nothing.
    rewrite: bool = False


def _words(line: str, at: Location) -> list[str]:
    """A directive line's words as httpd's `ap_getword_conf` cuts them (quotes group)."""
    words: list[str] = []
    i, n = 0, len(line)
    while i < n:
        if line[i] in " \t":
            i += 1
            continue
        if line[i] in "\"'":
            quote, start = line[i], i + 1
            end = line.find(quote, start)
            while end > 0 and line[end - 1] == "\\":
                end = line.find(quote, end + 1)
            if end < 0:
                raise CheckInputError(f"{at}: unterminated {quote} quote")
            words.append(line[start:end].replace("\\" + quote, quote))
            i = end + 1
            continue
        start = i
        while i < n and line[i] not in " \t":
            i += 1
        words.append(line[start:i])
    return words


def _lines(path: Path, text: str) -> list[tuple[str, Location]]:
    """Logical lines (continuations joined), comments and blank lines left out."""
    found: list[tuple[str, Location]] = []
    pending: list[str] = []
    first = 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            first = number
        if raw.endswith("\\"):
            pending.append(raw[:-1])
            continue
        line = " ".join([*pending, raw]).strip()
        pending = []
        if line and not line.startswith("#"):
            found.append((line, Location(path, first)))
    if pending:
        line = " ".join(pending).strip()
        if line and not line.startswith("#"):
            found.append((line, Location(path, first)))
    return found


class _Reader:
    def __init__(self, path: Path, env: Mapping[str, str]) -> None:
        self.path = path
        self.env = dict(env)
        self.main = _Scope("the main server")
        self.passes: list[_Pass] = []
        #: Each `balancer://NAME`'s members: (url, params, where).
        self.members: dict[str, list[tuple[str, dict[str, str], Location]]] = {}
        self.wsgi: list[_Directive] = []

    def expand(self, word: str, at: Location) -> str | None:
        """`${NAME}` replaced from the `Define`s read so far, then the environment; None (and a
        note) when one has no value here."""
        missing: list[str] = []

        def value(match: re.Match[str]) -> str:
            if match.group(1) in self.env:
                return self.env[match.group(1)]
            missing.append(match.group(0))
            return ""

        expanded = _DEFINED.sub(value, word)
        if missing:
            note(
                "unresolved-variable",
                at,
                f"{word!r}: {', '.join(missing)} is a Define or httpd's environment, not known "
                "here (--env-file gives it)",
            )
            return None
        return expanded

    def read(self, text: str) -> None:
        stack: list[tuple[str, str]] = []  # (section name, its argument)
        scope = self.main
        for line, at in _lines(self.path, text):
            section = _SECTION.match(line) if line.startswith("<") else None
            if section is not None:
                closing, name, argument = (
                    section.group(1),
                    section.group(2).lower(),
                    section.group(3),
                )
                if closing:
                    if not stack or stack[-1][0] != name:
                        raise CheckInputError(f"{at}: </{section.group(2)}> closes no open section")
                    stack.pop()
                    if name == "virtualhost":
                        scope = self.main
                    continue
                if name == "virtualhost":
                    scope = _Scope(f"<VirtualHost {argument}>")
                stack.append((name, argument.strip("\"'")))
                continue
            words = _words(line, at)
            self.directive(_Directive(words[0].lower(), words[1:], at), stack, scope)
        if stack:
            raise CheckInputError(f"{self.path}: <{stack[-1][0]}> is never closed")

    def directive(self, d: _Directive, stack: list[tuple[str, str]], scope: _Scope) -> None:
        if d.name == "define" and d.args:
            if len(d.args) > 1:
                self.env[d.args[0]] = d.args[1]
            return
        if d.name in ("timeout", "proxytimeout", "keepalivetimeout") and d.args:
            scope.settings[d.name] = d
            return
        if d.name == "setenv" and d.args and d.args[0].lower() == "proxy-nokeepalive":
            scope.nokeepalive = True
            return
        if d.name in ("include", "includeoptional") and d.args:
            note(
                "include-not-found",
                d.at,
                f"{d.name.capitalize()} {d.args[0]}: httpd resolves it from its ServerRoot, "
                "not from this file: its directives not checked",
            )
            return
        if d.name == "wsgidaemonprocess":
            self.wsgi.append(d)
            return
        sections = [name for name, _ in stack]
        if d.name == "balancermember" and "proxy" in sections:
            target = next(arg for name, arg in reversed(stack) if name == "proxy")
            if d.args:
                url, params = _url_and_params(d.args)
                self.members.setdefault(target.lower().rstrip("/"), []).append((url, params, d.at))
            return
        if d.name in ("proxypass", "proxypassmatch") and d.args:
            location = next(
                (arg for name, arg in reversed(stack) if name in ("location", "locationmatch")),
                None,
            )
            args = list(d.args)
            path = location if location is not None else args.pop(0)
            if location is not None and args and not _is_target(args[0]) and len(args) > 1:
                args.pop(0)  # a path given inside <Location> all the same
            if not args or args[0] == "!":
                return  # an exclusion: `ProxyPass /static !`
            url, params = _url_and_params(args)
            self.passes.append(_Pass(url, params, d.at, scope, path))
            return
        if d.name == "rewriterule" and len(d.args) >= 3:
            flags = d.args[2].strip("[]").split(",")
            if any(f.strip().lower() in ("p", "proxy") for f in flags):
                self.passes.append(_Pass(d.args[1], {}, d.at, scope, d.args[0], rewrite=True))


def _is_target(word: str) -> bool:
    return word == "!" or "://" in word or word.lower().startswith("unix:")


def _url_and_params(args: list[str]) -> tuple[str, dict[str, str]]:
    params: dict[str, str] = {}
    for word in args[1:]:
        key, eq, value = word.partition("=")
        if eq:
            params[key.lower()] = value
    return args[0], params


def _address(url: str) -> str | None:
    """The backend as nginx and the app servers write addresses (`127.0.0.1:8001`,
    `unix:/run/app.sock`); None for a scheme that is not HTTP, or a host known only per
    request (`$1`, `%{...}`)."""
    if url.lower().startswith("unix:"):
        socket, _, _ = url[5:].partition("|")
        return "unix:" + socket
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in _HTTP_SCHEMES:
        return None
    host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    if not host or "$" in host or "%" in host:
        return None
    if not re.search(r":[0-9]+\Z", host):
        host += ":443" if scheme.lower() in ("https", "wss", "h2") else ":80"
    return host


def _seconds(value: str, what: str, at: Location) -> float:
    """A whole number of seconds as httpd's `atoi` reads it (`ProxyTimeout`, a worker's
    `timeout=` and `ttl=`); refused below 1, as httpd refuses it."""
    match = re.match(r"\s*([0-9]+)", value)
    if match is None or int(match.group(1)) < 1:
        raise CheckInputError(
            f"{at}: {what} {value!r}: httpd takes a whole number of seconds, at least 1"
        )
    return float(match.group(1))


def _timeout(value: str, what: str, at: Location) -> float:
    """core `Timeout`: seconds, or with httpd's units (`ms`, `s`, `mi`, `h`)."""
    match = re.fullmatch(r"\s*([0-9]+)\s*(ms|s|mi|h)?\s*", value, re.I)
    if match is None:
        raise CheckInputError(f"{at}: {what} {value!r}: not a time httpd reads (60, 90s, 500ms)")
    scale = {"ms": 0.001, "s": 1.0, "mi": 60.0, "h": 3600.0}[(match.group(2) or "s").lower()]
    return int(match.group(1)) * scale


def _setting(scope: _Scope, main: _Scope, name: str) -> _Directive | None:
    return scope.settings.get(name) or main.settings.get(name)


def _balancer(
    reader: _Reader,
    passing: _Pass,
    server: str,
    params: dict[str, str],
    at: Location,
    member: str,
) -> Balancer:
    scope = passing.scope
    idle: Setting[float] | None
    reuse_off = params.get("disablereuse", "").lower() == "on" or (
        params.get("enablereuse", "").lower() == "off"
    )
    if passing.rewrite:
        idle, source = None, "RewriteRule [P]: the default worker, which pools no connection"
    elif reuse_off:
        idle, source = None, "disablereuse=On: a new backend connection per request"
    elif scope.nokeepalive or reader.main.nokeepalive:
        idle, source = (
            None,
            "SetEnv proxy-nokeepalive: the backend connection closed after each request",
        )
    elif "ttl" in params:
        idle = Setting(_seconds(params["ttl"], "ttl", at), at)
        source = "the worker's `ttl`"
    else:
        idle = Setting(math.inf, at, default=True)
        source = "no `ttl` on the worker: mod_proxy reuses a pooled connection until the backend closes it"
    directive, fix = "ProxyTimeout", "ProxyTimeout {}"
    if "timeout" in params:
        wait = Setting(_seconds(params["timeout"], "timeout", at), at)
        directive, fix = (
            "timeout=",
            f"timeout={{}} on this {'BalancerMember' if member else 'ProxyPass'} line",
        )
    elif (proxy := _setting(scope, reader.main, "proxytimeout")) is not None:
        wait = Setting(_seconds(proxy.args[0], "ProxyTimeout", proxy.at), proxy.at)
    elif (core := _setting(scope, reader.main, "timeout")) is not None:
        wait = Setting(_timeout(core.args[0], "Timeout", core.at), core.at)
        directive = "ProxyTimeout (from Timeout)"
    else:
        wait = Setting(DEFAULT_TIMEOUT_S, passing.at, default=True)
        directive = "ProxyTimeout (default: Timeout 60)"
    where = f"{passing.path} " if passing.path else ""
    return Balancer(
        kind="apache",
        file=passing.at.file,
        name=scope.label,
        at=passing.at,
        servers=(Setting(server, at),),
        idle=idle,
        idle_source=source,
        server_timeout=wait,
        server_timeout_directive=directive,
        server_timeout_fix=fix,
        label=f"Apache ProxyPass {where}in {scope.label}" + (f" ({member})" if member else ""),
        docs=APACHE_DOCS,
    )


def read_apache(
    path: Path, text: str, env: Mapping[str, str] | None = None
) -> tuple[Balancer, ...]:
    """A `Balancer` for each HTTP backend the config's `ProxyPass`es (and `RewriteRule [P]`)
    reach; NotSupported for a config that only runs its app inside httpd (mod_wsgi)."""
    reader = _Reader(path, env or {})
    reader.read(text)
    balancers: list[Balancer] = []
    for passing in reader.passes:
        url = reader.expand(passing.url, passing.at)
        if url is None:
            continue
        if url.lower().startswith("balancer://"):
            name = url.lower().split("/", 3)[2] if url.count("/") >= 2 else ""
            for member_url, params, at in reader.members.get(f"balancer://{name}", []):
                expanded = reader.expand(member_url, at)
                address = _address(expanded) if expanded is not None else None
                if address is not None:
                    balancers.append(
                        _balancer(reader, passing, address, params, at, f"member {expanded}")
                    )
            continue
        address = _address(url)
        if address is not None:
            balancers.append(_balancer(reader, passing, address, passing.params, passing.at, ""))
    for wsgi in reader.wsgi:
        sizing = " ".join(a for a in wsgi.args[1:] if a.split("=")[0] in ("processes", "threads"))
        message = (
            f"{wsgi.at}: mod_wsgi daemon {wsgi.args[0] if wsgi.args else ''} "
            f"({sizing or 'processes=1 threads=15, its defaults'}) runs the app inside httpd: "
            "check does not size mod_wsgi"
        )
        if balancers:
            note("not-supported", wsgi.at, message)
        else:
            raise NotSupported(message)
    return tuple(balancers)
