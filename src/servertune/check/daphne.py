"""Daphne: its command line -> the AppServer it runs.

Daphne (Django Channels' ASGI server) is one process on Twisted's reactor, configured only by
its command line (daphne/cli.py's parser; https://github.com/django/daphne#readme): where it
listens (`-b HOST -p PORT`, `-u PATH`, `--fd N`, `-e ENDPOINT`), `-t/--http-timeout`, the
access log, `--root-path`. Its defaults, from the README and daphne 4.2.3's `cli.py` (checked
with `pip download daphne`: not a dependency of servertune): no address given listens on
127.0.0.1:8000, `-b` alone on port 8000, `-p` alone on 127.0.0.1; no HTTP timeout.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from servertune.check.argparse_cli import Given, Option, last, parse_options
from servertune.check.model import AppServer, CheckInputError, Location, Setting

__all__ = ["daphne_server"]

#: daphne/cli.py's DEFAULT_HOST and DEFAULT_PORT (the README: "defaults to localhost, port 8000").
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
#: Twisted's listen backlog, which daphne's options never change (`reactor.listenTCP(port,
#: factory, backlog=50)`, twisted/internet/posixbase.py; the same for listenUNIX).
TWISTED_BACKLOG = 50

#: Daphne's command line (daphne/cli.py), every option of 4.x and the ones earlier versions'
#: manual pages list (`--ws-protocol`, `--force-sync`), so one it does not have is refused.
OPTIONS = (
    Option("port", ("-p", "--port"), convert=int),
    Option("host", ("-b", "--bind")),
    Option("websocket_timeout", ("--websocket_timeout",), convert=int),
    Option("websocket_connect_timeout", ("--websocket_connect_timeout",), convert=int),
    Option("unix_socket", ("-u", "--unix-socket")),
    Option("file_descriptor", ("--fd",), convert=int),
    Option("socket_strings", ("-e", "--endpoint")),
    Option("verbosity", ("-v", "--verbosity"), convert=int),
    Option("http_timeout", ("-t", "--http-timeout"), convert=int),
    Option("access_log", ("--access-log",)),
    Option("log_fmt", ("--log-fmt",)),
    Option("ping_interval", ("--ping-interval",), convert=int),
    Option("ping_timeout", ("--ping-timeout",), convert=int),
    Option("websocket_max_message_size", ("--websocket-max-message-size",), convert=int),
    Option("websocket_max_frame_size", ("--websocket-max-frame-size",), convert=int),
    Option("application_close_timeout", ("--application-close-timeout",), convert=int),
    Option("root_path", ("--root-path",)),
    Option("proxy_headers", ("--proxy-headers",), takes=0),
    Option("proxy_headers_host", ("--proxy-headers-host",)),
    Option("proxy_headers_port", ("--proxy-headers-port",)),
    Option("server_name", ("-s", "--server-name")),
    Option("no_server_name", ("--no-server-name",), takes=0),
    Option("ws_protocols", ("--ws-protocol",), takes=-1),
    Option("force_sync", ("--force-sync",), takes=0),
)

#: A Twisted endpoint string daphne's `-e` passes on: `tcp:port=8000:interface=0.0.0.0`,
#: `tcp:8000`, `unix:/run/daphne.sock` (`unix:address=/run/daphne.sock`).
_TCP_ENDPOINT = re.compile(r"\Atcp6?:(?:port=)?(?P<port>\d+)(?P<rest>(?::[^:]*)*)\Z")


def daphne_server(file: Path, words: Sequence[tuple[str, Location]], start: Location) -> AppServer:
    """The Daphne a command line starts (its words after `daphne`). With no application
    (`daphne` alone: a compose `command: ["daphne"]` that is an ENTRYPOINT script's argument),
    it is refused as daphne's argparse refuses it: `application` is a required positional."""
    given, positional = parse_options("daphne", words, OPTIONS)
    if not positional:
        raise CheckInputError(
            f"{start}: daphne refuses its command line: no application (a required argument)"
        )
    timeout = last(given, "http_timeout")
    return AppServer(
        kind="daphne",
        file=file,
        # One process, one reactor: daphne has no worker count (Channels' docs run several
        # daphnes behind a balancer for more).
        workers=Setting(1, start, default=True),
        threads=Setting(1, start, default=True),
        sockets=_sockets(given, start),
        mapped_sockets=False,
        # Twisted's HTTP idle timeout (HTTPFactory's 60 s) closes idle connections; daphne's
        # command line has no option for it, so no fix could be written: not read.
        keepalive=None,
        # `--http-timeout`: a request not answered in time gets a 503 and its response is
        # ended (daphne/http_protocol.py `check_timeouts`); none by default.
        request_timeout=None if timeout is None else Setting(float(timeout.value), timeout.at),
        graceful_timeout=None,  # SIGTERM stops Twisted's reactor: no drain time to set
        max_requests=Setting(0, start, default=True),
        max_requests_jitter=Setting(0, start, default=True),
        backlog=Setting(TWISTED_BACKLOG, start, default=True),
        interface="asgi",
        command_line=True,
    )


def _sockets(given: dict[str, list[Given]], start: Location) -> tuple[Setting[str], ...]:
    """Where it listens, as daphne's `run()` fills in the defaults: `-b` and `-p` (either
    alone completed by the default), `-u`, each `-e` endpoint; none at all: 127.0.0.1:8000."""
    host, port = last(given, "host"), last(given, "port")
    unix, fd = last(given, "unix_socket"), last(given, "file_descriptor")
    endpoints = given.get("socket_strings", [])
    sockets: list[Setting[str]] = []
    if host is not None or port is not None:
        name = host.value.strip("[]") if host is not None else DEFAULT_HOST
        number = port.value if port is not None else DEFAULT_PORT
        at = port.at if port is not None else host.at if host is not None else start
        written = f"[{name}]:{number}" if ":" in name else f"{name}:{number}"
        sockets.append(Setting(written, at))
    if unix is not None:
        sockets.append(Setting(f"unix:{unix.value}", unix.at))
    for endpoint in endpoints:
        found = _endpoint(endpoint.value)
        if found is not None:
            sockets.append(Setting(found, endpoint.at))
    if not sockets and unix is None and fd is None and not endpoints:
        sockets.append(Setting(f"{DEFAULT_HOST}:{DEFAULT_PORT}", start, default=True))
    return tuple(sockets)


def _endpoint(text: str) -> str | None:
    """A Twisted server endpoint string as nginx writes its address; None for one that names
    no address here (`fd:`, `ssl:`, `systemd:`)."""
    text = text.replace("\\:", "\0")  # an escaped colon (`interface=\:\:`) is the value's
    if text.startswith("unix:"):
        path = text[5:].split(":")[0].replace("\0", ":")
        return f"unix:{path.removeprefix('address=')}"
    match = _TCP_ENDPOINT.match(text)
    if match is None:
        return None
    interface = next(
        (p[len("interface=") :] for p in match["rest"].split(":") if p.startswith("interface=")),
        "0.0.0.0",  # Twisted listens on every address when no interface is given
    )
    interface = interface.replace("\0", ":")
    port = match["port"]
    return f"[{interface}]:{port}" if ":" in interface else f"{interface}:{port}"
