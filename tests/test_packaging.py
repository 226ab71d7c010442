"""The templates ship: sdist -> wheel built from that sdist -> fresh venv -> `servertune gen` outside the repo."""

from __future__ import annotations

import os
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
    built: tuple[Path, Path], version: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """In a fresh venv of each supported Python, `servertune gen uwsgi --cores 4` works from another directory."""
    python = _interpreter(version)
    if python is None:
        pytest.fail(
            f"Python {version} is not installed: servertune supports 3.11-3.13 and the project's "
            "machines provide them with pyenv, so this proof must run"
        )
    if python == Path(sys.executable):
        # The base install is that very venv (this Python, the wheel, nothing else): one
        # install serves both, as pip's resolving and installing is most of either's time.
        venv = request.getfixturevalue("base_venv").parent
    else:
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


@pytest.fixture(scope="module")
def base_venv(built: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with only the base install (`pip install servertune`, no extras): its bin dir."""
    _, wheel = built
    venv = tmp_path_factory.mktemp("base") / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], venv.parent)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], venv.parent)
    return venv / "bin"


def _base_environment(bin_dir: Path) -> dict[str, str]:
    """This environment without the dev venv: its commands (uwsgi, gunicorn) are not on PATH,
    and nothing of the checkout is importable."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str(bin_dir), "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin"])
    return env


#: Each command that needs an optional extra, and the extra its one error line names.
NEEDS_AN_EXTRA = [
    (["check", "nginx.conf"], "check"),
    (["check", "deploy.yaml"], "check"),
    (["check", "gunicorn.conf.py"], "check"),
    (["check", "uvicorn.sh"], "asgi-servers"),
    (["check", "granian.sh"], "asgi-servers"),
    (["bench", "balance", "--quick"], "servers"),
    (["bench", "hol", "--quick"], "servers"),
    (["bench", "restart", "--quick"], "servers"),
    (["bench", "app", "app:application", "--path", "/", "--quick"], "servers"),
    (["bench", "asgi", "--quick"], "asgi-servers,servers"),
    (["bench", "granian-threads", "--quick"], "asgi-servers"),
    (["bench", "keepalive-chain", "--quick"], "servers,check"),
    (["bench", "check-speed", "--quick"], "check"),
    (["bench", "method-cache", "--quick"], "bench"),
    (["bench", "sync-to-async", "--quick"], "asgi-servers,bench"),
    (["bench", "idle-race", "--quick"], "requests,httpx,urllib3"),
    (["bench", "async-clients", "--quick"], "httpx,aiohttp"),
    (["bench", "aws", "--quick"], "aws,aiohttp"),
    (["bench", "parallel", "--quick", "--plot", "parallel.png"], "plot"),
]


@pytest.mark.parametrize(
    ("argv", "extra"), NEEDS_AN_EXTRA, ids=lambda v: " ".join(v) if isinstance(v, list) else v
)
def test_a_base_install_names_the_extra_each_command_needs(
    base_venv: Path, tmp_path: Path, argv: list[str], extra: str
) -> None:
    """With no extras installed, a command that needs one says which, in one `error:` line,
    before starting anything: no traceback, no server that exits before listening."""
    (tmp_path / "nginx.conf").write_text("events {}\nhttp { server { listen 8080; } }\n")
    (tmp_path / "deploy.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: w\n")
    (tmp_path / "gunicorn.conf.py").write_text("workers = 3\n")
    for server in ("uvicorn", "granian"):
        (tmp_path / f"{server}.sh").write_text(f"#!/bin/sh\nexec {server} --workers 2 app:app\n")
    (tmp_path / "app.py").write_text("def application(environ, start_response):\n    return []\n")
    result = subprocess.run(
        [str(base_venv / "servertune"), *argv, "--no-progress"] if argv[0] == "bench"
        else [str(base_venv / "servertune"), *argv],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
        env=_base_environment(base_venv),
    )  # fmt: skip
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert f"pip install 'servertune[{extra}]'" in lines[0]


@pytest.mark.parametrize(
    "argv",
    [["gen", "all", "--cores", "2"], ["explain", "--cores", "2"], ["advise", "--cores", "2"]],
)
def test_a_base_install_runs_the_main_commands(base_venv: Path, argv: list[str]) -> None:
    """gen, explain and advise need nothing beyond the base install."""
    result = _run([str(base_venv / "servertune"), *argv], base_venv, timeout=60)
    assert result.stdout
