"""servertune.live's parts without a server: the cgroup reader on directories of the kernel's
files (v1 and v2), the hysteresis rule fed readings by hand, and the plan's sizing per limit."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from servertune.cores import ROUNDING_RULE
from servertune.live import CgroupReader, CpuLimit, Follower, workers_for
from servertune.live.cgroup import count_cpu_list
from servertune.live.supervise import SuperviseError, server_of, workers_of
from servertune.machine import Machine
from servertune.sizing import MEMORY_HEADROOM_RATIO
from servertune.workload import Workload

HOST = 64


def _limit(quota: float | None, cpus: int | None = None) -> CpuLimit:
    return CpuLimit(quota=quota, cpus=cpus, host=HOST)


def test_reader_v2_files_quota_and_cpuset(tmp_path: Path) -> None:
    """cgroup v2: cpu.max in cores ('max' = none) and the CPUs of cpuset.cpus.effective."""
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    (tmp_path / "cpuset.cpus.effective").write_text("0-3,6\n")
    reading = CgroupReader(tmp_path).read()
    assert (reading.quota, reading.cpus) == (1.5, 5)
    assert reading.cores == 2
    (tmp_path / "cpu.max").write_text("max 100000\n")
    (tmp_path / "cpuset.cpus.effective").write_text("2\n")
    assert CgroupReader(tmp_path).read().quota is None
    assert CgroupReader(tmp_path).read().cores == 1


def test_reader_v1_files_and_ancestors(tmp_path: Path) -> None:
    """cgroup v1: cfs_quota_us / cfs_period_us (-1 = none), cpuset.effective_cpus; a parent's
    quota binds the child when the reader is given the mount root."""
    child = tmp_path / "kubepods" / "pod"
    child.mkdir(parents=True)
    (child / "cpu.cfs_quota_us").write_text("-1\n")
    (child / "cpu.cfs_period_us").write_text("100000\n")
    (child / "cpuset.effective_cpus").write_text("0-7\n")
    (tmp_path / "kubepods" / "cpu.cfs_quota_us").write_text("300000\n")
    (tmp_path / "kubepods" / "cpu.cfs_period_us").write_text("100000\n")
    assert CgroupReader(child).read().quota is None
    walked = CgroupReader(child, mount_root=tmp_path).read()
    assert (walked.quota, walked.cpus) == (3.0, 8)
    assert walked.cores == min(3, os.cpu_count() or 1)


def test_reader_of_a_directory_without_files_sees_no_limit(tmp_path: Path) -> None:
    """Files that vanish (a cgroup removed) read as no limit, never as an error."""
    reading = CgroupReader(tmp_path / "gone").read()
    assert (reading.quota, reading.cpus) == (None, None)


@pytest.mark.parametrize(
    ("text", "count"),
    [("0", 1), ("0-1", 2), ("0-3,8-9,12", 7), ("", None), ("3-1", None), ("x", None)],
)
def test_cpu_list(text: str, count: int | None) -> None:
    """The kernel's cpu list format: ranges and singles, comma-separated."""
    assert count_cpu_list(text) == count


def test_limit_takes_the_tightest_and_rounds_by_the_one_rule() -> None:
    """The limit is the smallest of quota, cpuset and host; cores follow ROUNDING_RULE."""
    assert ROUNDING_RULE.startswith("rounded up")
    assert _limit(2.5, 2).limit == 2
    assert _limit(1.5, 4).cores == 2
    assert _limit(0.2).cores == 1
    assert _limit(None).cores == HOST


def _follower(window: float = 10.0) -> Follower:
    return Follower(lambda lim: lim.cores, _limit(2), workers=2, window_s=window)


def test_follower_moves_only_after_the_window() -> None:
    """A new limit starts a pending change; it commits at the first reading a window later."""
    f = _follower()
    assert f.observe(0.0, _limit(1)) is None
    assert f.observe(9.9, _limit(1)) is None
    change = f.observe(10.0, _limit(1))
    assert change is not None
    assert (change.old_workers, change.new_workers) == (2, 1)
    assert str(change) == "CPU limit 2 -> 1 cores (quota 2 -> quota 1): workers 2 -> 1"
    assert f.workers == 1
    assert f.observe(11.0, _limit(1)) is None


def test_follower_ignores_a_limit_flapping_faster_than_the_window() -> None:
    """Back at the current count cancels the pending change; another count restarts it."""
    f = _follower()
    for second in range(100):
        assert f.observe(float(second), _limit(1 if second % 4 < 2 else 2)) is None
    assert f.workers == 2
    f.observe(100.0, _limit(1))
    assert f.observe(105.0, _limit(3)) is None  # another count: the window starts again
    assert f.observe(110.0, _limit(3)) is None
    assert f.observe(115.0, _limit(3)) is not None


def test_follower_quota_change_within_the_same_count_is_no_change() -> None:
    """1.6 and 2 cores both round to 2 workers: nothing to do, nothing logged."""
    f = _follower(window=0.0)
    assert f.observe(0.0, _limit(1.6)) is None
    assert f.workers == 2


def test_workers_for_is_the_plans_count() -> None:
    """The worker count is the plan's processes for the new cores, memory rule included."""
    machine = Machine(cores=8, memory_limit_mb=1000)
    assert workers_for(Workload(), machine, _limit(3)) == 3
    # The memory limit holds fewer workers than 6 cores: the plan's memory rule still binds.
    heavy = Workload(memory_per_worker_mb=200)
    fits = math.floor(1000 * MEMORY_HEADROOM_RATIO / 200)
    assert fits < 6
    assert workers_for(heavy, machine, _limit(6)) == fits
    # 2 cores and room for 4 single-threaded workers: 4 of the plan's 6 slots as processes
    # (bound: memory), threads for the rest.
    assert workers_for(heavy, machine, _limit(1.5)) == 4
    assert (
        workers_for(Workload(interface="asgi", memory_per_worker_mb=200), machine, _limit(1.5)) == 2
    )


def test_supervisor_reads_the_command() -> None:
    """uvicorn by name or `python -m`; --workers or WEB_CONCURRENCY; other servers refused."""
    assert server_of(["/venv/bin/uvicorn", "app:app"]) == "uvicorn"
    assert server_of(["python3", "-m", "uvicorn", "app:app"]) == "uvicorn"
    assert workers_of(["uvicorn", "app:app", "--workers", "3"], {}) == 3
    assert workers_of(["uvicorn", "app:app", "--workers=4"], {}) == 4
    assert workers_of(["uvicorn", "app:app"], {"WEB_CONCURRENCY": "2"}) == 2
    for command in (["gunicorn", "app:app"], ["granian", "app:app"], ["hypercorn", "a:b"], []):
        with pytest.raises(SuperviseError):
            server_of(command)
    with pytest.raises(SuperviseError, match="--workers: 'two'"):
        workers_of(["uvicorn", "--workers", "two"], {})
