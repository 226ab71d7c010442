"""uvicorn's and granian's own command-line parsers (their click commands' `make_context()`),
run on argument lists in a child interpreter with a time limit (`_cli_probe.py`), so options,
defaults and `UVICORN_*` / `GRANIAN_*` variables are read exactly as the server reads them.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from servertune.check import memo
from servertune.check.model import CheckInputError

__all__ = ["CLI_EVAL_CPU_S", "CLI_EVAL_TIMEOUT_S", "SERVERS", "parse_command_lines"]

#: CPU seconds the child may use: importing uvicorn or granian and parsing a few command lines
#: takes well under one, so only a parse that runs away reaches it. CPU time, not wall time: on
#: a busy machine (a load of 9 on 2 cores) the same child waited more than 10 s for a core, and
#: whether a file is read must not depend on the machine running check.
CLI_EVAL_CPU_S = 10
#: Wall seconds before the child is killed: only one that blocks (it reads nothing but its
#: stdin) gets there.
CLI_EVAL_TIMEOUT_S = 300.0
#: The servers whose command lines `check` reads, and the package that holds each one's CLI.
SERVERS = {"uvicorn": "uvicorn", "granian": "granian"}
_PROBE = Path(__file__).with_name("_cli_probe.py")
_MARK = "@@servertune-check@@"


def parse_command_lines(
    path: Path, server: str, argvs: list[list[str]], env: Mapping[str, str] | None
) -> list[dict[str, Any]]:
    """Each argument list as the server's own CLI reads it (in a child, with a time limit),
    once per run for the same command lines (a launch is reached from several files); an
    error is raised again for each file, naming it."""
    request = json.dumps({"server": server, "argvs": argvs, "cpu_limit_s": CLI_EVAL_CPU_S})
    key = (request, None if env is None else tuple(sorted(env.items())))
    parsed = memo.recall(
        memo.run_table("cli"), key, lambda: _parsed_in_child(path, server, request, env)
    )
    return copy.deepcopy(parsed)  # the caller's to change


def _parsed_in_child(
    path: Path, server: str, request: str, env: Mapping[str, str] | None
) -> list[dict[str, Any]]:
    try:
        process = subprocess.Popen(
            [sys.executable, "-B", "-c", _PROBE.read_text()],
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
    if process.returncode in (-signal.SIGXCPU, -signal.SIGKILL) and _MARK not in text:
        raise CheckInputError(
            f"{path}: {server} used more than {CLI_EVAL_CPU_S} s of CPU reading its command line"
        )
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
