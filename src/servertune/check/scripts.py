"""Shell scripts that start uvicorn or granian (`gen uvicorn`, `uvicorn-per-worker`, `granian`).

A script is read, never run: its lines are split as the shell splits words (`shlex`, with line
continuations joined and comments dropped), the one `uvicorn ...` / `granian ...` command line
is found (after `exec`, `env` and `VAR=value` assignments), and its arguments are handed to
the server's own click command in a child interpreter (`_cli_probe.py`, `make_context()` only),
so options, defaults and the server's environment variables are read exactly as the server
would. A per-worker script (`case "$SERVERTUNE_WORKER" in N) set -- --host H --port P ;;`) is
one single-worker server per `case` arm, each on its own socket. Anything only the shell could
resolve (a `$VAR` in an argument, `"$@"` without such arms) is refused with one line.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from servertune.check.model import AppServer, CheckInputError, Location, Setting

__all__ = ["CLI_EVAL_TIMEOUT_S", "SERVERS", "command_line", "looks_like_script", "read_script"]

#: Importing uvicorn or granian and parsing a few command lines takes well under a second.
CLI_EVAL_TIMEOUT_S = 10.0
#: The servers whose command lines `check` reads, and the package that holds each one's CLI.
SERVERS = {"uvicorn": "uvicorn", "granian": "granian"}
_PROBE = Path(__file__).with_name("_cli_probe.py")
_MARK = "@@servertune-check@@"
_ASSIGNMENT = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*=")
_WORKER_ARM = re.compile(r"\A[0-9]+\)\Z")


def looks_like_script(path: Path, text: str) -> bool:
    """A `.sh` file, or any file starting with `#!`: a shell script, not an nginx config."""
    return path.suffix == ".sh" or text.startswith("#!")


@dataclass(frozen=True)
class _Line:
    """One logical line of the script: its words and the physical lines it spans."""

    words: list[str]
    first: int
    last: int


def _logical_lines(path: Path, text: str) -> list[_Line]:
    lines: list[_Line] = []
    physical = text.splitlines()
    start, parts = 0, list[str]()
    for number, raw in enumerate(physical, start=1):
        if not parts:
            start = number
        # A backslash at the end continues the command (an even run of them is literal).
        trailing = len(raw) - len(raw.rstrip("\\"))
        if trailing % 2 == 1:
            parts.append(raw[:-1])
            continue
        parts.append(raw)
        try:
            words = shlex.split(" ".join(parts), comments=True)
        except ValueError as error:  # an unclosed quote
            raise CheckInputError(
                f"{path}:{start}: cannot split as the shell does: {error}"
            ) from None
        if words:
            lines.append(_Line(words, start, number))
        parts = []
    return lines


def _command(line: _Line) -> tuple[str, list[str]] | None:
    """(server, its arguments) when this line starts uvicorn or granian."""
    words = list(line.words)
    # `VAR=1 exec uvicorn`, `exec env VAR=1 uvicorn`: what runs is the first other word.
    while words and (words[0] in ("exec", "env") or _ASSIGNMENT.match(words[0])):
        words = words[1:]
    if len(words) >= 3 and os.path.basename(words[0]).startswith("python") and words[1] == "-m":
        words = words[2:]  # python -m uvicorn ...
    if words and os.path.basename(words[0]) in SERVERS:
        return os.path.basename(words[0]), words[1:]
    return None


def _arm(line: _Line) -> list[str] | None:
    """The arguments of a per-worker `case` arm: `N) set -- --host H --port P ;;`."""
    words = line.words
    if len(words) < 3 or not _WORKER_ARM.match(words[0]) or words[1:3] != ["set", "--"]:
        return None
    args = list(words[3:])
    if args and args[-1].endswith(";;"):
        args[-1] = args[-1][:-2]
        if not args[-1]:
            args.pop()
    return args


def _parse(
    path: Path, server: str, argvs: list[list[str]], env: Mapping[str, str] | None
) -> list[dict[str, Any]]:
    """Each argument list as the server's own CLI reads it (in a child, with a time limit)."""
    request = json.dumps({"server": server, "argvs": argvs})
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", _PROBE.read_text()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(os.environ if env is None else env),
            start_new_session=True,
        )
    except OSError as error:
        raise CheckInputError(f"{path}: cannot start Python to read it ({error})") from None
    try:
        out, err = process.communicate(request.encode(), timeout=CLI_EVAL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise CheckInputError(
            f"{path}: {server} did not finish reading its command line in {CLI_EVAL_TIMEOUT_S:g} s"
        ) from None
    text = out.decode("utf-8", "replace")
    if process.returncode != 0 or _MARK not in text:
        lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines()]
        reasons = [line for line in lines if line]
        reason = reasons[-1] if reasons else f"exit status {process.returncode}"
        if f"No module named '{SERVERS[server]}'" in reason:
            raise CheckInputError(
                f"{path}: reading it needs {server}, which is not installed here: "
                "pip install 'servertune[asgi-servers]'"
            )
        raise CheckInputError(f"{path}: {server} refuses its command line: {reason[:300]}")
    parsed: list[dict[str, Any]] = json.loads(text.rpartition(_MARK)[2])
    return parsed


def _address(values: Mapping[str, Any]) -> str | None:
    """The socket as nginx writes it: `unix:/path`, `127.0.0.1:8001` or `[::1]:8001`."""
    if values.get("uds"):
        return f"unix:{values['uds']}"
    if values.get("fd") is not None:
        return None  # an inherited descriptor: its address is not in the script
    host = str(values["host"])
    return f"[{host}]:{values['port']}" if ":" in host else f"{host}:{values['port']}"


def command_line(path: Path, text: str) -> tuple[str, list[str]]:
    """The server and the arguments of the script's one uvicorn or granian command line, as
    the shell splits them (`read_script` checks them with the server's own CLI)."""
    commands = [found for line in _logical_lines(path, text) if (found := _command(line))]
    if not commands:
        raise CheckInputError(f"{path}: no uvicorn or granian command line in this script")
    return commands[0]


def read_script(path: Path, text: str, env: Mapping[str, str] | None = None) -> AppServer:
    """The uvicorn or granian server(s) the script starts, as their own CLIs read them."""
    lines = _logical_lines(path, text)
    commands = [(line, found) for line in lines if (found := _command(line)) is not None]
    if not commands:
        raise CheckInputError(f"{path}: no uvicorn or granian command line in this script")
    if len(commands) > 1:
        raise CheckInputError(
            f"{path}:{commands[1][0].first}: a second server command line; check one per script"
        )
    line, (server, args) = commands[0]
    arms = [(arm_line, arm) for arm_line in lines if (arm := _arm(arm_line)) is not None]
    if "$@" in args:
        if not arms:
            raise CheckInputError(
                f'{path}:{line.first}: "$@" passes the caller\'s arguments; check reads the '
                "script, never runs it, so it cannot know them"
            )
        hole = args.index("$@")
        argvs = [args[:hole] + arm + args[hole + 1 :] for _, arm in arms]
    else:
        arms = []
        argvs = [args]
    for argv in argvs:
        for word in argv:
            if "$" in word or "`" in word:
                raise CheckInputError(
                    f"{path}:{line.first}: {word!r} needs the shell to expand it; check reads the "
                    "script, never runs it: write the value"
                )
    parsed = _parse(path, server, argvs, env)
    physical = text.splitlines()

    def at(flag: str, first: int = line.first, last: int = line.last) -> Location:
        for number in range(first, last + 1):
            if re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", physical[number - 1]):
                return Location(path, number)
        return Location(path, first)

    def setting(flag: str, value: Any, kind: type[Any] = float) -> Setting[Any]:
        given = any(w == flag or w.startswith(flag + "=") for w in args)
        return Setting(kind(value), at(flag), default=not given)

    values = parsed[0]
    sockets: list[Setting[str]] = []
    for index, one in enumerate(parsed):
        address = _address(one)
        if address is not None:
            where = at(
                "--uds" if one.get("uds") else "--port",
                *((arms[index][0].first, arms[index][0].last) if arms else (line.first, line.last)),
            )
            sockets.append(Setting(address, where, default=False))
    per_worker = bool(arms)
    workers_given = values.get("workers")
    if per_worker:
        workers = Setting(len(parsed), Location(path, arms[0][0].first), default=False)
    elif workers_given is None:  # uvicorn: $WEB_CONCURRENCY, else 1 (its --help says so)
        concurrency = (os.environ if env is None else env).get("WEB_CONCURRENCY", "")
        workers = Setting(int(concurrency) if concurrency.isdigit() else 1, at("--workers"), True)
    else:
        workers = setting("--workers", workers_given, int)
    if server == "uvicorn":
        interface: Literal["wsgi", "asgi"] = "wsgi" if values.get("interface") == "wsgi" else "asgi"
        jitter = values.get("limit_max_requests_jitter") or 0
        graceful = values.get("timeout_graceful_shutdown")
        return AppServer(
            kind="uvicorn",
            file=path,
            workers=workers,
            threads=Setting(1, at("--workers"), default=True),
            sockets=tuple(sockets),
            mapped_sockets=per_worker,
            keepalive=setting("--timeout-keep-alive", values["timeout_keep_alive"]),
            request_timeout=None,
            graceful_timeout=None
            if graceful is None
            else setting("--timeout-graceful-shutdown", graceful),
            max_requests=setting(
                "--limit-max-requests", values.get("limit_max_requests") or 0, int
            ),
            max_requests_jitter=setting("--limit-max-requests-jitter", jitter, int),
            backlog=setting("--backlog", values["backlog"], int),
            interface=interface,
        )
    # granian: RSGI, like ASGI, runs each worker's requests on an event loop.
    kill = values.get("workers_kill_timeout")
    blocking = values.get("blocking_threads")
    return AppServer(
        kind="granian",
        file=path,
        workers=workers,
        threads=setting("--blocking-threads", blocking if blocking is not None else 1, int),
        sockets=tuple(sockets),
        mapped_sockets=per_worker,
        keepalive=None,  # granian has no idle timeout to set: nothing to order against nginx
        request_timeout=None,
        graceful_timeout=None if kill is None else setting("--workers-kill-timeout", kill),
        max_requests=Setting(0, Location(path, line.first), default=True),
        max_requests_jitter=Setting(0, Location(path, line.first), default=True),
        backlog=setting("--backlog", values["backlog"], int),
        interface="wsgi" if values.get("interface") == "wsgi" else "asgi",
    )
