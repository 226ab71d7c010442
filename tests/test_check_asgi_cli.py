"""uvicorn's and granian's own parsers read a command line in a child bounded by CPU time,
not by wall time: a busy machine makes the child wait, and whether a file is read must not
depend on the machine running check; a parse that runs away is still stopped."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from servertune.check import asgi_cli
from servertune.check.model import CheckInputError
from tests.folder_support import check_folder, write


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


def test_one_child_reads_every_launch_of_a_run_each_in_its_own_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder of uvicorn and granian launches, each script setting the server's variable to
    its own value, is read by one child for the whole run: each launch is read with its own
    environment (no value leaks into the next), a refused command line names its own file
    (and the child goes on reading the others), and the run ends its child."""
    root = write(
        tmp_path / "repo",
        {
            "a.sh": "#!/bin/sh\nexport UVICORN_PORT=8001\nexec uvicorn app:app\n",
            "b.sh": "#!/bin/sh\nexport UVICORN_PORT=8002\nexec uvicorn app:app\n",
            "bad-a.sh": "#!/bin/sh\nexec uvicorn app:app --workers many\n",
            "c.sh": "#!/bin/sh\nexport GRANIAN_WORKERS=3\nexec granian --interface asgi app:app\n",
            "d.sh": "#!/bin/sh\nexport GRANIAN_WORKERS=5\nexec granian --interface asgi app:app\n",
            "bad-b.sh": "#!/bin/sh\nexec granian --interface asgi --workers many app:app\n",
            "e.sh": "#!/bin/sh\nexec uvicorn app:app\n",
        },
    )
    started: list[subprocess.Popen[bytes]] = []
    popen = subprocess.Popen

    def counted(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        started.append(popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(asgi_cli.subprocess, "Popen", counted)
    result = check_folder(root)
    read = {a.file.name: a for a in result.apps}
    assert {n: [s.value for s in read[n].sockets] for n in ("a.sh", "b.sh", "e.sh")} == {
        "a.sh": ["127.0.0.1:8001"],
        "b.sh": ["127.0.0.1:8002"],
        "e.sh": ["127.0.0.1:8000"],
    }
    assert (read["c.sh"].workers.value, read["d.sh"].workers.value) == (3, 5)
    errors = {e.file.name: e.message for e in result.errors}
    assert sorted(errors) == ["bad-a.sh", "bad-b.sh"]
    assert "bad-a.sh: uvicorn refuses its command line" in errors["bad-a.sh"]
    assert "bad-b.sh: granian refuses its command line" in errors["bad-b.sh"]
    assert len(started) == 1
    assert started[0].poll() is not None


def test_a_run_reads_on_after_its_child_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a run, a reading whose child the kernel stops (over its CPU time) is an error naming
    that reading's file, and the run's next reading is answered by a new child."""
    with asgi_cli.child_of_run():
        monkeypatch.setattr(asgi_cli, "CLI_EVAL_CPU_S", 0)
        with pytest.raises(CheckInputError, match=r"one\.sh: uvicorn used more than 0 s of CPU"):
            asgi_cli.parse_command_lines(tmp_path / "one.sh", "uvicorn", [["app:app"]], {})
        monkeypatch.setattr(asgi_cli, "CLI_EVAL_CPU_S", 10)
        (parsed,) = asgi_cli.parse_command_lines(
            tmp_path / "two.sh", "uvicorn", [["app:app", "--port", "9001"]], {}
        )
    assert parsed["port"] == 9001
