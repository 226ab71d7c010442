"""Flags valid one by one but nonsense together, empty values and a full disk: one `error:`
line naming the flag and the reason, exit 2, nothing written and no traceback."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from servertune.sizing import MAX_REQUESTS_CAP
from servertune.workload import MIN_SERVICE_TIME_MS


def servertune(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m servertune ARGV...`, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "servertune", *argv],
        capture_output=True, text=True, timeout=60, check=False, cwd=cwd,
    )  # fmt: skip


def assert_one_error(result: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 2, nothing on stdout, one `error:` line with every word, no traceback."""
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert result.stderr.startswith("error: "), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["--upstream", "127.0.0.1:8000"],
        ["--upstream", "localhost:8000"],
        ["--listen-host", "0.0.0.0", "--upstream", "10.0.0.9:8001,127.0.0.1:8000=2"],
        ["--listen-port", "9000", "--upstream", "[::1]:9000", "--listen-host", "::1"],
    ],
)
def test_an_upstream_that_is_nginx_itself_is_refused(argv: list[str]) -> None:
    """nginx proxying to its own listen address would loop every request back to itself."""
    assert_one_error(servertune("gen", "nginx", *argv), "--upstream", "nginx's own listen address")


def test_an_upstream_elsewhere_on_the_same_port_is_fine() -> None:
    """Another host on nginx's port is an ordinary app host."""
    result = servertune("gen", "nginx", "--upstream", "10.0.0.1:8000")
    assert result.returncode == 0, result.stderr
    assert "server 10.0.0.1:8000" in result.stdout


def test_a_duplicate_upstream_says_duplicate() -> None:
    """The same host twice (weights aside) is named as listed twice, not as a format error."""
    assert_one_error(
        servertune("gen", "nginx", "--upstream", "10.0.0.1:80,10.0.0.1:80=2"),
        "--upstream", "10.0.0.1:80 is listed twice",
    )  # fmt: skip


def test_upstream_hosts_with_the_ingress_layout_are_refused_not_dropped() -> None:
    """The ingress layout has no nginx in the pod: upstream hosts would silently vanish."""
    assert_one_error(
        servertune("gen", "kubernetes", "--k8s-layout", "ingress", "--upstream", "a.example:80"),
        "--upstream", "k8s_layout 'ingress'",
    )  # fmt: skip


@pytest.mark.parametrize("argv", [["--out", ""], ["--out="]])
def test_an_empty_out_is_refused_and_nothing_is_written(argv: list[str], tmp_path: Path) -> None:
    """An empty --out is not the current directory."""
    assert_one_error(servertune("gen", "all", *argv, cwd=tmp_path), "--out: empty value")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("target", ["uwsgi", "all"])
def test_a_full_disk_is_one_error_line(target: str) -> None:
    """Output to a full device (/dev/full) ends with one line, not an OSError traceback."""
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "servertune", "gen", target, "--cores", "4"],
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == "error: cannot write the output: No space left on device\n"


def test_a_vanishing_service_time_still_writes_a_count_uwsgi_runs_with() -> None:
    """The shortest service time the model takes (1e-300 ms is refused since issue 33):
    max-requests stays a bounded count, not a 300-digit number."""
    result = servertune(
        "gen", "uwsgi", "--cores", "4", "--service-time-ms", str(MIN_SERVICE_TIME_MS)
    )
    assert result.returncode == 0, result.stderr
    counts = [int(n) for n in re.findall(r"^max-requests = (\d+)$", result.stdout, re.M)]
    assert counts
    assert all(5000 <= n <= MAX_REQUESTS_CAP for n in counts)


def test_out_on_a_device_that_fills_leaves_nothing(tmp_path: Path) -> None:
    """`gen all --out` where the files no longer fit (the kernel's file-size limit, which a
    test can set where mounting a full filesystem needs root) is one line, and neither a file
    nor the directories it made are left."""
    import resource

    def small_files_only() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))

    result = subprocess.run(
        [sys.executable, "-m", "servertune", "gen", "all", "--cores", "4", "--out", "new/out"],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
        preexec_fn=small_files_only,
    )  # fmt: skip
    assert_one_error(result, "--out", "new/out", "File too large")
    assert list(tmp_path.iterdir()) == []
