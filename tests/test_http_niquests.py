"""Run the niquests checks in their own venv, .venv-niquests, from the main test suite.

niquests brings urllib3-future, whose .pth file replaces `urllib3` for every package in the
environment (requests included), so it cannot share the main venv. A session fixture creates
.venv-niquests at the repository root when it is missing (git-ignored), then the checks in
tests/niquests_env/ run under its interpreter and this test fails if they fail.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv-niquests"
CHECKS = ROOT / "tests" / "niquests_env" / "niquests_checks.py"
#: Creating the venv downloads niquests and its dependencies: generous, but bounded.
INSTALL_TIMEOUT = 900
RUN_TIMEOUT = 300


def _python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def _ready(python: Path) -> bool:
    if not python.exists():
        return False
    probe = subprocess.run(
        [str(python), "-c", "import niquests, pytest, servertune.http"],
        capture_output=True,
        timeout=60,
        cwd=ROOT,
    )
    return probe.returncode == 0


@pytest.fixture(scope="session")
def niquests_python() -> Path:
    """The interpreter of .venv-niquests, created with `.[niquests]` and pytest if missing."""
    python = _python(VENV)
    if not _ready(python):
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=120)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "-e", f"{ROOT}[niquests]", "pytest"],
            check=True,
            timeout=INSTALL_TIMEOUT,
            cwd=ROOT,
        )
        # urllib3-future puts itself in place of urllib3 on the interpreter's first start:
        # do that now, not in the middle of the checks.
        subprocess.run([str(python), "-c", "import urllib3"], check=True, timeout=120)
    return python


def test_niquests_checks_pass_in_their_own_venv(niquests_python: Path) -> None:
    """Every check in tests/niquests_env/niquests_checks.py passes under .venv-niquests."""
    result = subprocess.run(
        # pyproject's addopts ask for pytest-xdist, which this venv does not have: run serially.
        [
            str(niquests_python),
            "-m",
            "pytest",
            str(CHECKS),
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=-ra --strict-markers",
        ],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout
    assert " failed" not in result.stdout
    assert " skipped" not in result.stdout
