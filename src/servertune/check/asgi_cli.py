"""uvicorn's and granian's own command-line parsers (their click commands' `make_context()`),
run on argument lists in a child interpreter with a time limit (`_cli_probe.py`), so options,
defaults and `UVICORN_*` / `GRANIAN_*` variables are read exactly as the server reads them.

A `check` run (`child_of_run`) keeps one child for all its command lines, each read in its own
environment: starting an interpreter and importing a server costs more than every parse of a
repository's launches together.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from servertune.check import memo
from servertune.check.budget import OverBudget
from servertune.check.model import CheckInputError

__all__ = [
    "CLI_EVAL_CPU_S",
    "CLI_EVAL_TIMEOUT_S",
    "SERVERS",
    "child_of_run",
    "parse_command_lines",
]

#: CPU seconds one request may use in the child: importing uvicorn or granian and parsing a
#: few command lines takes well under one, so only a parse that runs away reaches it. CPU
#: time, not wall time: on a busy machine (a load of 9 on 2 cores) the same child waited more
#: than 10 s for a core, and whether a file is read must not depend on the machine running check.
CLI_EVAL_CPU_S = 10
#: Wall seconds one request may take before the child is killed: only one that blocks (it
#: reads nothing but its stdin) gets there.
CLI_EVAL_TIMEOUT_S = 300.0
#: The servers whose command lines `check` reads, and the package that holds each one's CLI.
SERVERS = {"uvicorn": "uvicorn", "granian": "granian"}
_PROBE = Path(__file__).with_name("_cli_probe.py")
_MARK = b"@@servertune-check@@"
#: The child interpreter's own environment: nothing of a file's or this shell's that could
#: load code into it (`PYTHONPATH`, `LD_PRELOAD`); each request brings the server's.
_START_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}

#: The run's child while one is open (`child_of_run`), None outside a run.
_RUN_CHILD: contextvars.ContextVar[list[_Child] | None] = contextvars.ContextVar(
    "servertune_check_cli_child", default=None
)


def parse_command_lines(
    path: Path, server: str, argvs: list[list[str]], env: Mapping[str, str] | None
) -> list[dict[str, Any]]:
    """Each argument list as the server's own CLI reads it (in a child, with a time limit),
    once per run for the same command lines (a launch is reached from several files); an
    error is raised again for each file, naming it. `env` None: this process's environment."""
    request = {"server": server, "argvs": argvs, "cpu_limit_s": CLI_EVAL_CPU_S}
    variables = dict(os.environ if env is None else env)
    key = (json.dumps(request), tuple(sorted(variables.items())))
    line = json.dumps({**request, "env": variables}).encode() + b"\n"
    parsed = memo.recall(memo.run_table("cli"), key, lambda: _parsed(path, server, line))
    return copy.deepcopy(parsed)  # the caller's to change


@contextlib.contextmanager
def child_of_run() -> Iterator[None]:
    """Read every command line of the block in one child (started when first needed), ended
    with the block; outside such a block each reading starts a child of its own."""
    held: list[_Child] = []
    token = _RUN_CHILD.set(held)
    try:
        yield
    finally:
        _RUN_CHILD.reset(token)
        for child in held:
            child.close()


class _Child:
    """A `_cli_probe.py` interpreter: one request a line on its stdin, one reply a line."""

    def __init__(self, path: Path) -> None:
        # A file, not a pipe: a child's chatter on stderr never blocks it. Closed by `close`.
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-B", "-c", _PROBE.read_text()],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr,
                env=_START_ENV,
                start_new_session=True,
            )
        except OSError as error:
            self.stderr.close()
            raise CheckInputError(f"{path}: cannot start Python to read it ({error})") from None
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.stdout: IO[bytes] = self.process.stdout

    def ask(self, line: bytes, timeout: float) -> dict[str, Any] | None:
        """The reply to `line`, None when the child ended without one;
        subprocess.TimeoutExpired after `timeout` wall seconds."""
        try:
            self.stdin.write(line)
            self.stdin.flush()
        except BrokenPipeError:
            return None
        deadline = time.monotonic() + timeout
        out = self.stdout.fileno()
        received = b""
        with selectors.DefaultSelector() as selector:
            selector.register(out, selectors.EVENT_READ)
            # Anything a server's import prints comes before the marker; the reply is the rest
            # of the marker's line.
            while _MARK not in received or not received.rpartition(_MARK)[2].endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(self.process.args, timeout)
                if not selector.select(left):
                    continue
                chunk = os.read(out, 1 << 16)
                if not chunk:
                    return None
                received += chunk
        reply: dict[str, Any] = json.loads(received.rpartition(_MARK)[2])
        return reply

    def ended(self) -> tuple[int, str]:
        """After `ask` found it ended: its exit status and the last line it wrote to stderr."""
        status = self.process.wait()
        self.stderr.seek(0)
        lines = self.stderr.read().decode("utf-8", "replace").splitlines()
        reasons = [line.strip() for line in lines if line.strip()]
        return status, reasons[-1] if reasons else f"exit status {status}"

    def close(self) -> None:
        """End the child (its stdin closed: it leaves its loop), killed if it lingers."""
        with contextlib.suppress(OSError):
            self.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
        self.stdout.close()
        self.stderr.close()

    def kill(self) -> None:
        """Its whole session killed, and waited for."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def _parsed(path: Path, server: str, line: bytes) -> list[dict[str, Any]]:
    """The reply of the run's child (or of a child of this reading alone, outside a run)."""
    held = _RUN_CHILD.get()
    if held is None:
        child = _Child(path)
        try:
            return _asked(child, path, server, line)
        finally:
            child.close()
    if not held:
        held.append(_Child(path))
    try:
        return _asked(held[0], path, server, line)
    except OverBudget:
        # Cut short mid-question (a file's time budget): its late reply would answer the
        # next question, so the run's next reading starts another child.
        held[0].kill()
        held.pop().close()
        raise
    except CheckInputError:
        if held[0].process.poll() is not None:  # ended: the run's next reading starts another
            held.pop().close()
        raise


def _asked(child: _Child, path: Path, server: str, line: bytes) -> list[dict[str, Any]]:
    """The values of each list of `line`, or a CheckInputError naming `path`."""
    try:
        reply = child.ask(line, CLI_EVAL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        child.kill()
        raise CheckInputError(
            f"{path}: {server} did not finish reading its command line in {CLI_EVAL_TIMEOUT_S:g} s"
        ) from None
    if reply is None:
        status, reason = child.ended()
        if status in (-signal.SIGXCPU, -signal.SIGKILL):
            raise CheckInputError(
                f"{path}: {server} used more than {CLI_EVAL_CPU_S} s of CPU reading its command line"
            )
    else:
        reason = str(reply.get("refused", ""))
        if not reason:
            parsed: list[dict[str, Any]] = reply["parsed"]
            return parsed
    if f"No module named '{SERVERS[server]}'" in reason:
        raise CheckInputError(
            f"{path}: reading it needs {server}, which is not installed here: "
            "pip install 'servertune[asgi-servers]'"
        )
    raise CheckInputError(f"{path}: {server} refuses its command line: {reason[:300]}")
