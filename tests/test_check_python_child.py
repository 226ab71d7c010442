"""A Python launcher that starts the server as its child (`subprocess.run`, `os.system`)
keeps Python as the process the container signals: the same fault as a shell entrypoint
without `exec` (`entrypoint-without-exec`), at the launcher's line, fixed by `os.execvp`.
Not when it replaces itself (`os.execvp`) or handles SIGTERM itself (`signal.signal`).
Fixture: tests/data/repos/chain-python-child, one image per case."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.discover import discover
from servertune.check.model import Location
from servertune.machine import Machine

ROOT = Path(__file__).parent / "data" / "repos" / "chain-python-child"
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def _findings(*files: str) -> list[tuple[str, Location, str]]:
    paths = [ROOT / f for f in files] if files else list(discover(ROOT).files)
    result = check_files(paths, machine=MACHINE)
    return [
        (f.rule, f.at, f.fix) for f in result.findings if f.rule.startswith("entrypoint-without")
    ]


def test_subprocess_child_of_the_image_command_is_a_warning_at_the_call() -> None:
    """`CMD ["python", "/app/launch.py"]` and `subprocess.run(command, check=True)` on line
    7: the warning is at that line, its fix the same command through `os.execvp`; the images
    whose launcher execs or forwards SIGTERM have none."""
    assert _findings() == [
        (
            "entrypoint-without-exec",
            Location(ROOT / "child" / "launch.py", 7),
            "os.execvp(command[0], command)",
        )
    ]


def test_python_child_says_python_not_a_shell_stays_pid_1() -> None:
    """The message names Python and the call, not a shell and `exec`."""
    result = check_files([ROOT / "child" / "Dockerfile"], machine=MACHINE)
    (finding,) = [f for f in result.findings if f.rule == "entrypoint-without-exec"]
    assert "the Python launcher runs gunicorn as its child" in finding.message
    assert "'subprocess.run(command, check=True)'" in finding.message
    assert "shell" not in finding.message
