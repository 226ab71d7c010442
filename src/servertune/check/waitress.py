"""waitress: its command line (`waitress-serve`, `python -m waitress`) -> the AppServer it runs.

waitress is one process serving a WSGI app on a pool of threads; its runner is configured only
by its command line (https://docs.pylonsproject.org/projects/waitress/en/latest/runner.html;
the options are the `Adjustments` (https://docs.pylonsproject.org/projects/waitress/en/latest/
arguments.html). Read as Pylons/waitress's `runner.py` and `adjustments.py` read it: Python's
`getopt.getopt` with every adjustment a long option (`--name=VALUE` or `--name VALUE`, a
boolean `--name` / `--no-name`, `--help`, `--call`, `--app=`), a unique prefix of one standing
for it, no short option at all, and the options ending at the first word that is not one (the
app, `module:object`: exactly one). `Adjustments.__init__` then refuses `--listen` beside
`--host`/`--port` and `--unix-socket` beside either. Its defaults (`Adjustments`' class
attributes): listen on 0.0.0.0:8080, 4 threads, `channel_timeout` 120 s (an idle connection is
closed after it, checked every `cleanup_interval` 30 s), `connection_limit` 100, `backlog` 1024.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from servertune.check.argparse_cli import Given
from servertune.check.model import AppServer, CheckInputError, Location, Setting

__all__ = ["WAITRESS_DOCS", "full_option", "paste_words", "waitress_server"]

WAITRESS_DOCS = "https://docs.pylonsproject.org/projects/waitress/en/latest/arguments.html"
#: `Adjustments`' defaults (waitress/adjustments.py): `host = "0.0.0.0"`, `port = 8080`,
#: `threads = 4`, `channel_timeout = 120`, `backlog = 1024`.
DEFAULT_HOST = "0.0.0.0"
DEFAULT_PORT = 8080
DEFAULT_THREADS = 4
DEFAULT_CHANNEL_TIMEOUT_S = 120.0
DEFAULT_BACKLOG = 1024

#: `Adjustments._params` whose cast is `asbool`: `--name` and `--no-name`, no value.
_BOOLEANS = (
    "ipv4",
    "ipv6",
    "log-untrusted-proxy-headers",
    "clear-untrusted-proxy-headers",
    "log-socket-errors",
    "expose-tracebacks",
    "asyncore-use-poll",
)
#: The other `Adjustments._params` (each `--name=VALUE`), with the runner's own `--app=`; the
#: ones cast with `int` are refused at start when not a number.
_VALUED = (
    "host",
    "port",
    "listen",
    "threads",
    "trusted-proxy",
    "trusted-proxy-count",
    "trusted-proxy-headers",
    "url-scheme",
    "url-prefix",
    "backlog",
    "recv-bytes",
    "send-bytes",
    "outbuf-overflow",
    "outbuf-high-watermark",
    "inbuf-overflow",
    "connection-limit",
    "cleanup-interval",
    "channel-timeout",
    "max-request-header-size",
    "max-request-body-size",
    "ident",
    "asyncore-loop-timeout",
    "unix-socket",
    "unix-socket-perms",
    "sockets",
    "channel-request-lookahead",
    "server-name",
    "app",
)
_INTEGERS = frozenset(
    {
        "port",
        "threads",
        "trusted-proxy-count",
        "backlog",
        "recv-bytes",
        "send-bytes",
        "outbuf-overflow",
        "outbuf-high-watermark",
        "inbuf-overflow",
        "connection-limit",
        "cleanup-interval",
        "channel-timeout",
        "max-request-header-size",
        "max-request-body-size",
        "asyncore-loop-timeout",
        "channel-request-lookahead",
    }
)
#: getopt's long options as `Adjustments.parse_args` builds them: `name=` takes a value.
_LONG = (
    "help",
    "call",
    *_BOOLEANS,
    *(f"no-{name}" for name in _BOOLEANS),
    *(f"{name}=" for name in _VALUED),
)


def _refused(at: Location, why: str) -> CheckInputError:
    return CheckInputError(f"{at}: waitress-serve refuses its command line: {why}")


def _long_option(flag: str, at: Location) -> tuple[str, bool]:
    """getopt's `long_has_args`: the option a `--flag` names (exactly, or by a prefix only one
    option has) and whether it takes a value."""
    possible = [o for o in _LONG if o.startswith(flag)]
    if not possible:
        raise _refused(at, f"option --{flag} not recognized")
    if flag in possible:
        return flag, False
    if f"{flag}=" in possible:
        return flag, True
    if len(possible) > 1:
        raise _refused(at, f"option --{flag} not a unique prefix")
    return possible[0].removesuffix("="), possible[0].endswith("=")


def full_option(flag: str) -> str:
    """`flag` (`--thr`) as the option getopt takes it for (`--threads`: a prefix only one of
    waitress's long options has); as written when it is exact, ambiguous, none or not long."""
    if not flag.startswith("--"):
        return flag
    try:
        return "--" + _long_option(flag[2:], Location(Path("-")))[0]
    except CheckInputError:
        return flag


def parse_waitress(
    words: Sequence[tuple[str, Location]],
) -> tuple[dict[str, list[Given]], list[tuple[str, Location]]]:
    """The values each option's words give, in order (`--listen` adds up, any other keeps its
    last as `parse_args` does), and the words after the options; an option waitress does not
    have, a missing or unwanted value, is refused as `getopt` refuses it."""
    given: dict[str, list[Given]] = {}
    index = 0
    while index < len(words) and words[index][0].startswith("-") and words[index][0] != "-":
        text, at = words[index]
        index += 1
        if text == "--":
            break
        if not text.startswith("--"):
            raise _refused(at, f"option {text[:2]} not recognized")
        flag, sep, attached = text[2:].partition("=")
        name, takes = _long_option(flag, at)
        if takes and not sep:
            if index >= len(words):
                raise _refused(at, f"option --{name} requires argument")
            attached, index = words[index][0], index + 1  # getopt takes the next word, any
        elif sep and not takes:
            raise _refused(at, f"option --{name} must not have an argument")
        value: object = True
        if takes:
            value = attached
            if name in _INTEGERS:
                try:
                    value = int(attached)
                except ValueError:
                    raise _refused(at, f"--{name}={attached}: invalid literal for int()") from None
        given.setdefault(name, []).append(
            Given(value, at, f"--{name}={attached}" if takes else text)
        )
    return given, list(words[index:])


def paste_words(keys: Mapping[str, tuple[str, Location]]) -> list[tuple[str, Location]]:
    """A PasteDeploy `[server:main]` section's keys (`use = egg:waitress#main`, read by
    `pserve`) as the runner's options: waitress's `serve_paste(app, global_conf, **kw)` is
    `serve(app, **kw)`, each key an `Adjustments` parameter (`channel_timeout`, cast as the
    runner casts it; a boolean read as `asbool` reads it). A PasteDeploy key of its own (`use`,
    `paste.*`, `set NAME`, `get NAME`) is not waitress's."""
    words: list[tuple[str, Location]] = []
    for key, (value, at) in keys.items():
        if key == "use" or "." in key or " " in key:
            continue
        name = key.replace("_", "-")
        if name in _BOOLEANS:
            true = value.strip().lower() in ("true", "yes", "on", "y", "t", "1")
            words.append((f"--{name}" if true else f"--no-{name}", at))
        else:
            words.append((f"--{name}={value}", at))
    return words


def _last(given: Mapping[str, list[Given]], name: str) -> Given | None:
    found = given.get(name)
    return found[-1] if found else None


def waitress_server(
    file: Path, words: Sequence[tuple[str, Location]], start: Location
) -> AppServer:
    """The waitress a command line starts (its words after `waitress-serve` or `-m
    waitress`). The runner serves exactly one app: a second word after the options (an
    option written after the app is no option to getopt) is refused, as waitress refuses it."""
    given, rest = parse_waitress(words)
    if len(rest) > (0 if "app" in given else 1):
        raise _refused(rest[-1][1], f"Specify one application only (got {rest[-1][0]!r})")
    threads = _last(given, "threads")
    idle = _last(given, "channel-timeout")
    backlog = _last(given, "backlog")
    return AppServer(
        kind="waitress",
        file=file,
        # One process (the runner has no worker count), its requests run on `--threads`.
        workers=Setting(1, start, default=True),
        threads=(
            Setting(DEFAULT_THREADS, start, default=True)
            if threads is None
            else Setting(int(threads.value), threads.at)
        ),
        sockets=_sockets(given, start),
        mapped_sockets=False,
        # `channel_timeout`: a connection with no data either way for that long is closed
        # (waitress/server.py `maintenance`), only while it has no request in progress: its
        # keep-alive idle timeout, not a request timeout.
        keepalive=(
            Setting(DEFAULT_CHANNEL_TIMEOUT_S, start, default=True)
            if idle is None
            else Setting(float(idle.value), idle.at)
        ),
        request_timeout=None,  # no option ends a request that runs long
        graceful_timeout=None,  # no SIGTERM handler: Python's default ends it at once
        max_requests=Setting(0, start, default=True),
        max_requests_jitter=Setting(0, start, default=True),
        backlog=(
            Setting(DEFAULT_BACKLOG, start, default=True)
            if backlog is None
            else Setting(int(backlog.value), backlog.at)
        ),
        interface="wsgi",
        command_line=True,
    )


def _sockets(given: Mapping[str, list[Given]], start: Location) -> tuple[Setting[str], ...]:
    """Where it listens, as `Adjustments.__init__` and `create_server` work it out: a
    `--unix-socket` alone; else `--host`/`--port` (the other one its default); else each
    `--listen` (words split on whitespace, `*` every address, no port 8080); else
    0.0.0.0:8080. `--listen` beside `--host`/`--port`, or a unix socket beside either, is
    refused as waitress refuses it."""
    host, port = _last(given, "host"), _last(given, "port")
    unix, listens = _last(given, "unix-socket"), given.get("listen", [])
    if listens and (host or port):
        raise _refused(
            (host or port or listens[0]).at, "host or port may not be set if listen is set."
        )
    if unix is not None and (host or port or listens):
        raise _refused(unix.at, "unix_socket may not be set if host, port or listen is set")
    if unix is not None:
        return (Setting(f"unix:{unix.value}", unix.at),)
    if host is not None or port is not None:
        name = host.value if host is not None else DEFAULT_HOST
        number = port.value if port is not None else DEFAULT_PORT
        at = port.at if port is not None else host.at if host is not None else start
        return (Setting(_written(str(name), str(number)), at),)
    sockets = []
    for listen in listens:
        for entry in str(listen.value).split():
            name, colon, number = entry.rpartition(":")
            if not colon or "]" in number:
                name, number = entry, str(DEFAULT_PORT)
            sockets.append(Setting(_written(name, number), listen.at))
    if not listens:
        sockets.append(Setting(f"{DEFAULT_HOST}:{DEFAULT_PORT}", start, default=True))
    return tuple(sockets)


def _written(host: str, port: str) -> str:
    """An address as nginx writes it; waitress's `*` (and an empty host) is every address."""
    host = host.strip("[]")
    if host in ("*", ""):
        host = "0.0.0.0"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
