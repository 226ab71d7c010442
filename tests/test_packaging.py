"""The templates ship: sdist -> wheel built from that sdist -> fresh venv -> `servertune gen` outside the repo."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from .support import REPO


def _run(argv: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, f"{argv}:\n{result.stdout}\n{result.stderr}"
    return result


def test_wheel_built_from_sdist_ships_templates_and_runs(tmp_path: Path) -> None:
    """`python -m build` makes the wheel from the sdist (hatch's force-include trap); installed, it generates configs."""
    dist = tmp_path / "dist"
    _run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(REPO)],
        tmp_path,
    )
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    with tarfile.open(sdist) as archive:
        assert any(name.endswith("/templates/uwsgi.ini.j2") for name in archive.getnames())
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    templates = sorted(p.name for p in (REPO / "templates").iterdir())
    assert (
        sorted(n.rsplit("/", 1)[1] for n in names if n.startswith("servertune/templates/"))
        == templates
    )
    assert "servertune/py.typed" in names

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    result = _run(
        [str(venv / "bin" / "servertune"), "gen", "uwsgi", "--cores", "4"], outside, timeout=60
    )
    assert [line for line in result.stdout.splitlines() if line.startswith("map-socket")] == [
        f"map-socket = {i}:{i + 1}" for i in range(4)
    ]
    located = _run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import servertune.render as r; print(r._template_dir())",
        ],
        outside,
    )
    assert str(venv) in located.stdout
