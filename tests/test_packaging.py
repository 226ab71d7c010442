"""The templates ship: sdist -> wheel built from that sdist -> fresh venv -> `servertune gen` outside the repo."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from .support import REPO

#: The interpreters servertune supports; pyenv installs them side by side on the project's machines.
PYTHONS = ["3.11", "3.12", "3.13"]


def _interpreter(version: str) -> Path | None:
    if sys.version.startswith(version + "."):
        return Path(sys.executable)
    found = sorted((Path.home() / ".pyenv" / "versions").glob(f"{version}.*/bin/python"))
    if found:
        return found[-1]
    on_path = shutil.which(f"python{version}")
    return Path(on_path) if on_path else None


def _run(argv: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, f"{argv}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sdist, and the wheel `python -m build` makes from that sdist (its default)."""
    dist = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(REPO)], dist)
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    return sdist, wheel


def test_sdist_and_wheel_carry_the_templates(built: tuple[Path, Path]) -> None:
    """The sdist keeps templates/ at its root; the wheel built from it has them as servertune/templates."""
    sdist, wheel = built
    with tarfile.open(sdist) as archive:
        assert any(name.endswith("/templates/uwsgi.ini.j2") for name in archive.getnames())
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    templates = sorted(p.name for p in (REPO / "templates").iterdir())
    shipped = sorted(n.rsplit("/", 1)[1] for n in names if n.startswith("servertune/templates/"))
    assert shipped == templates
    assert "servertune/py.typed" in names


@pytest.mark.parametrize("version", PYTHONS)
def test_installed_wheel_generates_outside_the_repo(
    built: tuple[Path, Path], version: str, tmp_path: Path
) -> None:
    """In a fresh venv of each supported Python, `servertune gen uwsgi --cores 4` works from another directory."""
    python = _interpreter(version)
    if python is None:
        pytest.fail(
            f"Python {version} is not installed: servertune supports 3.11-3.13 and the project's "
            "machines provide them with pyenv, so this proof must run"
        )
    _, wheel = built
    venv = tmp_path / "venv"
    _run([str(python), "-m", "venv", str(venv)], tmp_path)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    result = _run(
        [str(venv / "bin" / "servertune"), "gen", "uwsgi", "--cores", "4"], outside, timeout=60
    )
    maps = [line for line in result.stdout.splitlines() if line.startswith("map-socket")]
    assert maps == [f"map-socket = {i}:{i + 1}" for i in range(4)]
    located = _run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import servertune.templating as t; print(t.template_dir())",
        ],
        outside,
    )
    assert str(venv) in located.stdout
