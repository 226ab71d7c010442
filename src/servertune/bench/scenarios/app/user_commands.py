"""`--against` command lines: a user's uvicorn or granian command, read from a script or a
Procfile and checked by the server's own CLI."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from servertune.bench.harness.deployments import AsgiServer

#: A Procfile line: `NAME: COMMAND` (Heroku's format; `web` is the one that gets HTTP).
_PROCFILE_LINE = re.compile(r"\A([A-Za-z0-9_-]+):\s*(.+)\Z")
#: Options that would move the server off the socket the benchmark gives it.
_OTHER_SOCKETS = ("--uds", "--fd")


@dataclass(frozen=True)
class UserCommand:
    """A user's uvicorn or granian command line, read from a script or a Procfile."""

    server: AsgiServer
    args: tuple[str, ...]
    workers: int
    #: Started through gen uvicorn's TCP_NODELAY launcher (`python -c CODE uvicorn ...`).
    nodelay: bool = False

    def argv(self, host: str, port: int) -> list[str]:
        """The command, bound to `host:port` (the last --host/--port wins in both CLIs)."""
        from servertune.targets.asgi_servers import UVICORN_NODELAY_LAUNCHER

        if self.server == "uvicorn" and self.nodelay:
            start = [sys.executable, "-c", UVICORN_NODELAY_LAUNCHER, "uvicorn"]
        elif self.server == "uvicorn":
            start = [sys.executable, "-m", "uvicorn"]
        else:
            start = [str(Path(sys.executable).parent / "granian")]
        return [*start, *self.args, "--host", host, "--port", str(port)]


def is_command_file(path: Path) -> bool:
    """A shell script (.sh, or a `#!` first line) or a Procfile: a command line to read."""
    if path.suffix == ".sh" or path.name == "Procfile" or path.name.startswith("Procfile."):
        return True
    try:
        with path.open("rb") as handle:
            return handle.read(2) == b"#!"
    except OSError:
        return False


def read_user_command(path: Path, port: int) -> UserCommand:
    """The uvicorn or granian command line of a script or a Procfile (its `web` process, else
    its only one), checked by the server's own CLI; `$PORT` is the benchmark's port.
    Raises BenchInputError naming the file."""
    from servertune.bench.harness.report import BenchInputError
    from servertune.check.model import CheckInputError
    from servertune.check.scripts import command_line, read_script

    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BenchInputError(f"--against: cannot read {path}: {error}") from None
    if path.name == "Procfile" or path.name.startswith("Procfile."):
        processes = {
            match.group(1): match.group(2)
            for line in text.splitlines()
            if (match := _PROCFILE_LINE.match(line.strip()))
        }
        if not processes:
            raise BenchInputError(f"--against: {path}: no `NAME: COMMAND` line in this Procfile")
        if "web" not in processes and len(processes) > 1:
            raise BenchInputError(f"--against: {path}: several processes and none named `web`")
        text = processes.get("web") or next(iter(processes.values()))
    text = re.sub(r"\$\{PORT\}|\$PORT\b", str(port), text)
    try:
        server, args = command_line(path, text)
        parsed = read_script(path, text)
    except CheckInputError as error:
        raise BenchInputError(f"--against: {error}") from None
    if parsed.mapped_sockets or "$@" in args:
        raise BenchInputError(
            f"--against: {path}: a per-worker script starts one server per socket; give one "
            "command line"
        )
    if given := [a for a in args if a.split("=")[0] in _OTHER_SOCKETS]:
        raise BenchInputError(
            f"--against: {path}: {given[0]} binds a socket of its own; the benchmark binds "
            "the server to its TCP port (drop it)"
        )
    kind: AsgiServer = "uvicorn" if server == "uvicorn" else "granian"
    return UserCommand(kind, tuple(args), int(parsed.workers.value), parsed.listener_nodelay)
