"""uvicorn's and granian's own parsers read a command line in a child bounded by CPU time,
not by wall time: a busy machine makes the child wait, and whether a file is read must not
depend on the machine running check; a parse that runs away is still stopped."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check import asgi_cli
from servertune.check.model import CheckInputError


def test_a_command_line_is_read_by_the_servers_own_parser(tmp_path: Path) -> None:
    """`--workers 3 --port 9000` come back as uvicorn reads them."""
    (parsed,) = asgi_cli.parse_command_lines(
        tmp_path / "start.sh", "uvicorn", [["app:app", "--workers", "3", "--port", "9000"]], {}
    )
    assert (parsed["workers"], parsed["port"]) == (3, 9000)


def test_a_child_over_its_cpu_time_is_one_line_naming_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no CPU second allowed, the child is stopped by the kernel (RLIMIT_CPU), and the
    reading says so in one line; the wall-clock limit is far above it."""
    monkeypatch.setattr(asgi_cli, "CLI_EVAL_CPU_S", 0)
    with pytest.raises(CheckInputError, match=r"start\.sh: uvicorn used more than 0 s of CPU"):
        asgi_cli.parse_command_lines(tmp_path / "start.sh", "uvicorn", [["app:app"]], {})
    assert asgi_cli.CLI_EVAL_TIMEOUT_S >= 60
