"""A Caddyfile, cut the way Caddy's own lexer cuts it, reduced to what the chain needs.

Caddy's documentation (https://caddyserver.com/docs/caddyfile/concepts) is the grammar followed
here: tokens are separated by whitespace; `"..."` (with `\\"`) and backticks group a token; `#`
at the start of a token comments out the rest of the line; a `\\` ending a line continues it; a
`{` ending a line opens a block that a `}` on its own line closes. The first block with no
address is the global options; `(name) { ... }` is a snippet that `import name` pastes; every
other top-level block (or, with no braces, the whole file after its first line) is a site.
`{$VAR}` / `{$VAR:default}` are replaced when the file is loaded and `{env.VAR}` when a request
is served: both come from Caddy's environment, unknown here unless `--env-file` gives it, and a
value that needs one is a coverage note, never a refusal.

Each `reverse_proxy` becomes a `Balancer`: its upstreams, how long its `http` transport keeps
an idle connection to them (`keepalive`, 2 minutes by default), and the shortest time it waits
for their answer (`response_header_timeout`, `read_timeout`, or the global `servers { timeouts
{ write } }`, which ends the response to the client; none of them is set by default).
Caddy v1's `proxy FROM TO...` is read as a front passing to its upstreams, its times not judged.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from servertune.check.commands import written_as_script
from servertune.check.durations import parse_go_duration
from servertune.check.model import Balancer, CheckInputError, Location, Setting, note

__all__ = [
    "CADDY_DOCS",
    "CADDY_PROXY_DOCS",
    "CADDY_V1_DOCS",
    "DEFAULT_KEEPALIVE_S",
    "looks_like_caddyfile",
    "read_caddyfile",
]

#: The reverse_proxy directive's reference, which documents its `http` transport's defaults.
CADDY_PROXY_DOCS = (
    "https://caddyserver.com/docs/caddyfile/directives/reverse_proxy#the-http-transport"
)
#: reverse_proxy's `http` transport: "keepalive is either off or a duration value that specifies
#: how long to keep connections open (timeout). Default: 2m." (CADDY_PROXY_DOCS). Its
#: `response_header_timeout`, `read_timeout`, `write_timeout`: "Default: No timeout".
DEFAULT_KEEPALIVE_S = 120.0
#: Caddy's global `servers { timeouts { write } }` has no default (no timeout): Caddy's global
#: options.
CADDY_OPTIONS_DOCS = "https://caddyserver.com/docs/caddyfile/options#timeouts"
#: What a finding about a Caddy front cites for these defaults.
CADDY_DOCS = (
    "Caddy's reverse_proxy http transport: keepalive 2m, response_header_timeout and "
    f"read_timeout none by default ({CADDY_PROXY_DOCS}); servers timeouts write: none by "
    f"default ({CADDY_OPTIONS_DOCS})"
)
#: Caddy v1's proxy directive: "keepalive is the maximum number of idle connections to keep
#: open to the backend ... set to 0 to disable keepalives"; it documents no idle time and no
#: default wait for the backend's answer, so a v1 front is linked but its times are not judged.
CADDY_V1_DOCS = (
    "Caddy v1's proxy directive (https://caddyserver.com/v1/docs/proxy): keepalive counts idle "
    "connections; no idle time nor answer wait documented, none judged"
)
#: How deep `import` may nest before the file is refused (Caddy itself refuses a cycle).
MAX_IMPORT_DEPTH = 10
#: What the transport's waits for the upstream's answer are called, in the order a fix names them.
_UPSTREAM_WAITS = ("response_header_timeout", "read_timeout")

_ENV = re.compile(r"\{\$([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}|\{env\.([A-Za-z_][A-Za-z0-9_]*)\}")
_CADDYFILE_NAME = re.compile(r"\A(Caddyfile([.-][\w.-]+)?|[\w.-]+\.caddyfile)\Z", re.I)


def looks_like_caddyfile(path: Path, text: str) -> bool:
    """A Caddyfile by its name: `Caddyfile`, `Caddyfile.prod`, `site.caddyfile`; never a script
    so named (`Caddyfile.sh`, a `#!` line: `commands.written_as_script`)."""
    return bool(_CADDYFILE_NAME.match(path.name)) and not written_as_script(path, text)


@dataclass(frozen=True)
class _Token:
    text: str
    at: Location
    quoted: bool = False


@dataclass
class _Directive:
    name: _Token
    args: list[_Token]
    block: list[_Directive] | None = None

    @property
    def at(self) -> Location:
        return self.name.at


#: A heredoc's opening (Caddy 2.7+: `respond <<HTML`, its lines, then `HTML` alone on a line,
#: which may carry the directive's next tokens: `HTML 200`).
_HEREDOC = re.compile(r"<<([A-Za-z0-9_-]+)[ \t]*\n")


def _tokens(path: Path, text: str) -> list[list[_Token]]:
    """The file's lines of tokens, as Caddy's lexer cuts them."""
    lines: list[list[_Token]] = []
    current: list[_Token] = []
    line_no, i, n = 1, 0, len(text)
    word: list[str] | None = None
    start = 1
    quoted = False

    def flush() -> None:
        nonlocal word, quoted
        if word is not None:
            current.append(_Token("".join(word), Location(path, start), quoted))
            word, quoted = None, False

    while i < n:
        char = text[i]
        if char == "\n":
            flush()
            if current:
                lines.append(current)
                current = []
            line_no += 1
            i += 1
            continue
        if char == "\\" and i + 1 < n and text[i + 1] == "\n" and word is None:
            line_no += 1  # a continued line: the next line's tokens join this one's
            i += 2
            continue
        if char in " \t\r":
            flush()
            i += 1
            continue
        if char == "#" and word is None:
            while i < n and text[i] != "\n":
                i += 1
            continue
        heredoc = _HEREDOC.match(text, i) if char == "<" and word is None else None
        if heredoc is not None:
            marker = re.compile(rf"^[ \t]*{re.escape(heredoc.group(1))}(?=[ \t]|$)", re.M)
            end = marker.search(text, heredoc.end())
            if end is None:
                raise CheckInputError(
                    f"{path}:{line_no}: heredoc {heredoc.group(1)} is never closed"
                )
            current.append(_Token("heredoc", Location(path, line_no), quoted=True))
            line_no += text.count("\n", i, end.end())
            i = end.end()  # the closing line's other tokens stay on the directive's line
            continue
        if char in '"`' and word is None:
            close = char
            word, quoted, start = [], True, line_no
            i += 1
            while True:
                if i >= n:
                    raise CheckInputError(f"{path}:{start}: unterminated {close} quote")
                char = text[i]
                if close == '"' and char == "\\" and i + 1 < n and text[i + 1] in '"\\':
                    word.append(text[i + 1])
                    i += 2
                    continue
                if char == close:
                    i += 1
                    break
                if char == "\n":
                    line_no += 1
                word.append(char)
                i += 1
            continue
        if word is None:
            word, start = [], line_no
        word.append(char)
        i += 1
    flush()
    if current:
        lines.append(current)
    return lines


def _is(token: _Token, brace: str) -> bool:
    return token.text == brace and not token.quoted


def _parse(lines: list[list[_Token]], path: Path) -> list[_Directive]:
    """Lines of tokens into directives with their blocks."""
    position = 0

    def block(depth: int) -> list[_Directive]:
        nonlocal position
        found: list[_Directive] = []
        while position < len(lines):
            line = lines[position]
            position += 1
            if _is(line[0], "}"):
                if depth == 0:
                    raise CheckInputError(f"{line[0].at}: `}}` closes no block")
                if len(line) > 1:
                    raise CheckInputError(f"{line[1].at}: text after `}}` on its line")
                return found
            if depth > 100:
                raise CheckInputError(f"{line[0].at}: blocks nested more than 100 deep")
            opens = _is(line[-1], "{")
            words = line[:-1] if opens else line
            if any(_is(t, "{") or _is(t, "}") for t in words):
                brace = next(t for t in words if _is(t, "{") or _is(t, "}"))
                raise CheckInputError(
                    f"{brace.at}: `{brace.text}` in the middle of a line (a block's braces end "
                    "the line that opens it and stand alone on the line that closes it)"
                )
            if not words:  # `{` alone: the global options (at the top) or an unnamed block
                words = [_Token("", line[-1].at)]
            directive = _Directive(words[0], words[1:])
            if opens:
                directive.block = block(depth + 1)
            found.append(directive)
        if depth > 0:
            raise CheckInputError(f"{path}: a `{{` is never closed (the file ends inside a block)")
        return found

    return block(0)


def _load(
    path: Path, text: str, depth: int, snippets: dict[str, _Directive], read: list[Path]
) -> list[_Directive]:
    """The file's top-level directives, its snippets recorded, its file imports pasted in
    (each imported file added to `read`)."""
    if depth > MAX_IMPORT_DEPTH:
        raise CheckInputError(
            f"{path}: imports nested more than {MAX_IMPORT_DEPTH} deep (a cycle?)"
        )
    directives = _parse(_tokens(path, text), path)
    for d in directives:
        if d.name.text.startswith("(") and d.name.text.endswith(")") and d.block is not None:
            snippets[d.name.text[1:-1]] = d
    return _expand_imports(directives, path, depth, snippets, read)


def _expand_imports(
    directives: list[_Directive],
    path: Path,
    depth: int,
    snippets: dict[str, _Directive],
    read: list[Path],
) -> list[_Directive]:
    out: list[_Directive] = []
    for d in directives:
        if d.name.text == "import" and d.args:
            out.extend(_imported(d, path, depth, snippets, read))
            continue
        if d.block is not None and not d.name.text.startswith("("):
            d.block = _expand_imports(d.block, path, depth, snippets, read)
        out.append(d)
    return out


def _imported(
    d: _Directive, path: Path, depth: int, snippets: dict[str, _Directive], read: list[Path]
) -> list[_Directive]:
    """What `import NAME|FILE` pastes: a snippet's directives, or the directives of the files
    a path (or glob) names, each asked of check's resolver first."""
    from servertune.check.resolve import admit, glob_inside

    name = d.args[0].text
    if depth > MAX_IMPORT_DEPTH:
        raise CheckInputError(
            f"{d.at}: imports nested more than {MAX_IMPORT_DEPTH} deep (a cycle?)"
        )
    if name in snippets:
        body = snippets[name].block or []
        return _expand_imports(_copy(body), path, depth + 1, snippets, read)
    if _ENV.search(name) or "{" in name:
        note("unresolved-variable", d.at, f"import {name!r}: a path known only when Caddy runs")
        return []
    target = Path(name) if Path(name).is_absolute() else path.parent / name
    if any(ch in name for ch in "*?["):
        files = [f for f in glob_inside(str(target), name, d.at, "import") if f.is_file()]
    else:
        if not target.is_file():
            note(
                "include-not-found", d.at, f"import {name!r}: not here, its directives not checked"
            )
            return []
        admitted = admit(target, name, d.at, "import")
        files = [admitted] if admitted is not None else []
    found: list[_Directive] = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CheckInputError(f"{d.at}: import {name!r}: cannot be read ({error})") from None
        read.append(file)
        found.extend(_load(file, text, depth + 1, snippets, read))
    return found


def _copy(body: list[_Directive]) -> list[_Directive]:
    """A snippet pasted twice is two copies (its blocks' imports are expanded in place)."""
    return [
        _Directive(d.name, list(d.args), None if d.block is None else _copy(d.block)) for d in body
    ]


class _Values:
    """Placeholders of Caddy's environment, replaced from `env` or said unknown."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def resolve(self, token: _Token, what: str) -> str | None:
        """The token's text with its environment placeholders replaced; None (and a note)
        when one has no value here."""
        missing: list[str] = []

        def value(match: re.Match[str]) -> str:
            name = match.group(1) or match.group(3)
            if name in self.env:
                return self.env[name]
            if match.group(2) is not None:
                return match.group(2)
            missing.append(match.group(0))
            return ""

        text = _ENV.sub(value, token.text)
        if missing:
            note(
                "unresolved-variable",
                token.at,
                f"{what} {token.text!r}: {', '.join(missing)} is Caddy's environment, not known "
                "here (--env-file gives it)",
            )
            return None
        return text


def _duration(directive: _Directive, values: _Values) -> Setting[float] | None:
    """A directive's one duration argument, in seconds (None when it needs the environment)."""
    if len(directive.args) != 1:
        raise CheckInputError(f"{directive.at}: {directive.name.text} takes one duration")
    text = values.resolve(directive.args[0], directive.name.text)
    if text is None:
        return None
    seconds = parse_go_duration(text, days=True)
    if seconds is None or seconds < 0:
        raise CheckInputError(
            f"{directive.at}: {directive.name.text} {directive.args[0].text!r} is not a duration "
            "(Caddy's durations: 30s, 1m30s, 2h, 1d)"
        )
    return Setting(seconds, directive.at)


def _address(token: _Token, values: _Values) -> Setting[str] | None:
    """An upstream as nginx and the app servers write addresses (`web:8000`, `unix:/x.sock`);
    None (with a note) when it is a placeholder."""
    text = values.resolve(token, "upstream")
    if text is None:
        return None
    if "{" in text:
        note(
            "unresolved-variable",
            token.at,
            f"upstream {text!r}: a placeholder Caddy fills per request",
        )
        return None
    for scheme in ("unix+h2c/", "unix/"):  # `unix//run/app.sock`: the scheme, then the path
        if text.startswith(scheme):
            return Setting("unix:" + text[len(scheme) :], token.at)
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "http", text
    host = rest.split("/", 1)[0]
    if host.startswith(":"):
        host = "localhost" + host  # Go dials `:8000` on the local system
    elif not re.search(r":[0-9]+\Z", host):
        host += ":443" if scheme == "https" else ":80"
    return Setting(host, token.at)


@dataclass
class _Servers:
    """The global `servers { timeouts { ... } }` Caddy applies to every site."""

    write: Setting[float] | None = None


def _global(directives: list[_Directive], values: _Values) -> _Servers:
    servers = _Servers()
    for d in directives:
        if d.name.text != "servers" or d.block is None:
            continue
        for sub in d.block:
            if sub.name.text != "timeouts" or sub.block is None:
                continue
            for timeout in sub.block:
                if timeout.name.text not in ("read_body", "read_header", "write", "idle"):
                    raise CheckInputError(
                        f"{timeout.at}: servers timeouts has no {timeout.name.text!r} (read_body, "
                        "read_header, write, idle)"
                    )
                seconds = _duration(timeout, values)
                if (
                    timeout.name.text == "write"
                    and seconds is not None
                    and seconds.value > 0
                    and (servers.write is None or seconds.value < servers.write.value)
                ):
                    servers.write = seconds
    return servers


def _proxies(directives: list[_Directive]) -> Iterator[_Directive]:
    """Every `reverse_proxy` in a site, at any depth (`handle`, `route`, `handle_path`), and
    Caddy v1's `proxy /PATH ...` (a directive v2 does not have; a plugin's `proxy UPSTREAM`,
    caddy-l4's, names no base path first)."""
    for d in directives:
        if d.name.text == "reverse_proxy" or (_v1_proxy(d) and d.args[0].text.startswith("/")):
            yield d
        elif d.block is not None:
            yield from _proxies(d.block)


def _v1_balancer(proxy: _Directive, site: str, values: _Values) -> Balancer:
    """Caddy v1's `proxy FROM TO... { upstream TO; keepalive N; ... }`: a front passing to
    its upstreams. Its `keepalive` counts idle connections (0 turns reuse off) and its docs
    give no idle time nor wait for the answer, so none is judged (CADDY_V1_DOCS)."""
    upstreams = list(proxy.args[1:])
    idle_source = "Caddy v1's proxy: its documentation gives no idle time, none judged"
    for sub in proxy.block or []:
        if sub.name.text == "upstream":
            upstreams.extend(sub.args)
        elif sub.name.text == "keepalive" and [a.text for a in sub.args] == ["0"]:
            idle_source = "Caddy v1's proxy `keepalive 0`"
    addresses: list[Setting[str]] = []
    for upstream in upstreams:
        text = values.resolve(upstream, "upstream")
        if text is not None and text.startswith("unix:"):  # v1 writes a socket `unix:/x.sock`
            addresses.append(Setting(text, upstream.at))
        elif text is not None:
            address = _address(_Token(text, upstream.at, upstream.quoted), values)
            if address is not None:
                addresses.append(address)
    return Balancer(
        kind="caddy",
        file=proxy.at.file,
        name=site,
        at=proxy.at,
        servers=tuple(addresses),
        idle=None,
        idle_source=idle_source,
        server_timeout=None,
        server_timeout_directive="",
        label=f"Caddy v1 proxy {proxy.args[0].text} in `{site}`",
        docs=CADDY_V1_DOCS,
    )


def _v1_proxy(directive: _Directive) -> bool:
    return directive.name.text == "proxy" and bool(directive.args)


def _balancer(proxy: _Directive, site: str, servers: _Servers, values: _Values) -> Balancer:
    if _v1_proxy(proxy):
        return _v1_balancer(proxy, site, values)
    args = list(proxy.args)
    matcher = ""
    if args and (args[0].text.startswith(("@", "/")) or args[0].text == "*"):
        matcher = args.pop(0).text
    upstreams = list(args)
    idle: Setting[float] | None = Setting(DEFAULT_KEEPALIVE_S, proxy.at, default=True)
    idle_source = "reverse_proxy's http transport `keepalive` (Caddy's default 2m)"
    waits: list[tuple[str, Setting[float]]] = []
    known_idle = True
    for sub in proxy.block or []:
        if sub.name.text == "to":
            upstreams.extend(sub.args)
        elif sub.name.text == "transport" and sub.args and sub.args[0].text == "http":
            for option in sub.block or []:
                name = option.name.text
                if name == "keepalive":
                    if option.args and option.args[0].text == "off" and len(option.args) == 1:
                        idle, idle_source = None, "reverse_proxy's http transport `keepalive off`"
                        continue
                    seconds = _duration(option, values)
                    if seconds is None:
                        known_idle = False
                        continue
                    idle = Setting(math.inf if seconds.value == 0 else seconds.value, option.at)
                    idle_source = "reverse_proxy's http transport `keepalive`"
                elif name in _UPSTREAM_WAITS:
                    seconds = _duration(option, values)
                    if seconds is not None and seconds.value > 0:
                        waits.append((name, seconds))
    if servers.write is not None:
        waits.append(("servers timeouts write", servers.write))
    addresses = [a for a in (_address(u, values) for u in upstreams) if a is not None]
    shortest = min(waits, key=lambda w: w[1].value) if waits else None
    where = f" {matcher}" if matcher else ""
    return Balancer(
        kind="caddy",
        file=proxy.at.file,
        name=site,
        at=proxy.at,
        servers=tuple(addresses),
        idle=idle if known_idle else None,
        idle_source=idle_source,
        server_timeout=None if shortest is None else shortest[1],
        server_timeout_directive="" if shortest is None else shortest[0],
        label=f"Caddy reverse_proxy{where} in `{site}`",
        docs=CADDY_DOCS,
    )


def read_caddyfile(
    path: Path, text: str, env: Mapping[str, str] | None = None
) -> tuple[tuple[Balancer, ...], tuple[Path, ...]]:
    """Every `reverse_proxy` of the Caddyfile (its imports pasted in), and the files read."""
    values = _Values(env or {})
    snippets: dict[str, _Directive] = {}
    read: list[Path] = []
    directives = _load(path, text, 0, snippets, read)
    if not directives:
        return (), ()
    servers = _Servers()
    sites: list[tuple[str, list[_Directive]]] = []
    if directives[0].name.text == "" and directives[0].block is not None:
        servers = _global(directives[0].block, values)
        directives = directives[1:]
    directives = [d for d in directives if not d.name.text.startswith("(")]  # snippets
    blocks = [d for d in directives if d.block is not None]
    if directives and directives[0].block is None:
        # One site written without braces: its address line, then its directives.
        first = directives[0]
        sites.append((" ".join([first.name.text, *(a.text for a in first.args)]), directives[1:]))
    else:
        for d in blocks:
            address = " ".join([d.name.text, *(a.text for a in d.args)]).rstrip(",")
            sites.append((address, d.block or []))
    balancers = tuple(
        _balancer(proxy, site, servers, values) for site, body in sites for proxy in _proxies(body)
    )
    return balancers, tuple(dict.fromkeys(f for f in read if f != path))
