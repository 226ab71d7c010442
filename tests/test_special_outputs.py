"""Writing never replaces anything but a regular file: a FIFO, a socket, a device node (or a
symlink to one) at an output path is one `error:` line, exit 2, and stays what it was."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from servertune.files import SpecialFileError, write_atomically

REPO = Path(__file__).resolve().parents[1]


def servertune(*argv: str) -> subprocess.CompletedProcess[str]:
    """`python -m servertune ARGV...`, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "servertune", *argv],
        capture_output=True, text=True, timeout=60, check=False, cwd=REPO,
    )  # fmt: skip


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _device(path: Path) -> None:
    # The same device numbers as /dev/full (1, 7), made in a temporary directory: /dev/full
    # itself is never touched. Only root may create a device node, and the suite runs as root.
    os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 7))


def _socket(path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))  # the socket file stays after the socket is closed


def _link_to_fifo(path: Path) -> None:
    os.mkfifo(path.with_name("real-fifo"))
    path.symlink_to(path.with_name("real-fifo"))


MAKERS: dict[str, Callable[[Path], None]] = {
    "fifo": _fifo,
    "device": _device,
    "socket": _socket,
    "symlink-to-fifo": _link_to_fifo,
}


@pytest.fixture(params=list(MAKERS))
def special(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, int]:
    """A special file of each kind in a temporary directory, with its mode (st_mode) before."""
    if request.param == "device" and os.geteuid() != 0:
        pytest.fail("creating a device node needs root; the suite runs as root (.ci/run)")
    path = tmp_path / "out.toml"
    MAKERS[request.param](path)
    return path, os.stat(path).st_mode


def _assert_untouched(path: Path, mode: int) -> None:
    assert os.stat(path).st_mode == mode
    assert not stat.S_ISREG(os.stat(path).st_mode)


def _assert_one_error(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, result
    assert result.stderr.startswith("error: "), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


def test_measure_out_never_replaces_a_special_file(special: tuple[Path, int]) -> None:
    """`measure --out` at a FIFO/device/socket is refused before the app is even imported."""
    path, mode = special
    result = servertune(
        "measure", "tests.measure_apps:pure_cpu", "--requests", "2", "--out", str(path)
    )
    _assert_one_error(result, "--out", "only a regular file is ever replaced")
    _assert_untouched(path, mode)


def test_gen_out_dir_never_replaces_a_special_file(tmp_path: Path) -> None:
    """`gen all --out DIR` with a FIFO named like one of its files writes none of them."""
    os.mkfifo(tmp_path / "nginx-gunicorn.conf")
    result = servertune("gen", "all", "--out", str(tmp_path))
    _assert_one_error(result, "--out", "a FIFO is in the way")
    assert stat.S_ISFIFO(os.stat(tmp_path / "nginx-gunicorn.conf").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nginx-gunicorn.conf"]


@pytest.mark.parametrize("flag", ["--json", "--plot", "--report"])
def test_bench_outputs_are_refused_before_the_run(flag: str, tmp_path: Path) -> None:
    """bench's --json/--plot/--report at a FIFO: refused before minutes of load, not after."""
    suffix = {"--json": ".json", "--plot": ".png", "--report": ".html"}[flag]
    path = tmp_path / f"out{suffix}"
    os.mkfifo(path)
    result = servertune("bench", "restart", "--quick", flag, str(path))
    _assert_one_error(result, flag, "a FIFO is in the way")
    assert stat.S_ISFIFO(os.stat(path).st_mode)


def test_the_shared_writer_refuses_a_special_file(special: tuple[Path, int]) -> None:
    """Every writer (configs, workload files, JSON, HTML, PNG) goes through write_atomically."""
    path, mode = special
    with pytest.raises(SpecialFileError, match="only a regular file is ever replaced"):
        write_atomically({"other.txt": "x", path.name: b"\x89PNG"}, path.parent)
    _assert_untouched(path, mode)
    assert not (path.parent / "other.txt").exists()


def test_the_shared_writer_still_replaces_regular_files_and_links_to_them(tmp_path: Path) -> None:
    """A regular file, and a symlink to one, are replaced as before; bytes are written as is."""
    (tmp_path / "a.png").write_bytes(b"old")
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "b.txt").symlink_to(tmp_path / "real.txt")
    write_atomically({"a.png": b"\x89PNG\r\n", "b.txt": "new\n"}, tmp_path)
    assert (tmp_path / "a.png").read_bytes() == b"\x89PNG\r\n"
    assert (tmp_path / "b.txt").read_text() == "new\n"
