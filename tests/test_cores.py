"""Core detection against fake cgroup trees: v2 quota, v2 'max', v1 quota, and no cgroup at all."""

from __future__ import annotations

import os
from pathlib import Path

from servertune.cores import ROUNDING_RULE, CoreLimits, read_limits, round_cores

AFFINITY = len(os.sched_getaffinity(0))


def _proc(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "proc_self_cgroup"
    path.write_text(text)
    return path


def _v2_tree(tmp_path: Path, cpu_max: str, leaf: str = "app.slice") -> Path:
    root = tmp_path / "cgroup"
    (root / leaf).mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpu memory\n")
    (root / leaf / "cpu.max").write_text(cpu_max + "\n")
    return root


def test_v2_quota_150000_over_100000_rounds_up_to_two(tmp_path: Path) -> None:
    """cpu.max '150000 100000' is 1.5 CPUs: rounded up (ROUNDING_RULE), 2 cores."""
    root = _v2_tree(tmp_path, "150000 100000")
    limits = read_limits(root, _proc(tmp_path, "0::/app.slice\n"))
    assert limits.cgroup_v2 == 1.5
    assert CoreLimits(1.5, None, 64, 64).cores == 2
    assert limits.cores == min(2, AFFINITY)


def test_v2_max_falls_back_to_affinity(tmp_path: Path) -> None:
    """cpu.max 'max 100000' sets no limit: the affinity mask decides."""
    root = _v2_tree(tmp_path, "max 100000")
    limits = read_limits(root, _proc(tmp_path, "0::/app.slice\n"))
    assert limits.cgroup_v2 is None
    assert limits.cores == AFFINITY
    assert limits.source in {"CPU affinity", "os.cpu_count()"}


def test_v2_parent_quota_binds_the_child(tmp_path: Path) -> None:
    """A quota on a parent cgroup limits the child even when the child's own cpu.max is 'max'."""
    root = _v2_tree(tmp_path, "max 100000", leaf="parent/child")
    (root / "parent" / "cpu.max").write_text("100000 100000\n")
    limits = read_limits(root, _proc(tmp_path, "0::/parent/child\n"))
    assert limits.cgroup_v2 == 1.0
    assert limits.cores == 1


def test_v1_cfs_quota(tmp_path: Path) -> None:
    """cgroup v1: cfs_quota_us / cfs_period_us = 250000 / 100000 gives 3 cores (before affinity)."""
    root = tmp_path / "cgroup"
    cpu = root / "cpu,cpuacct" / "docker" / "abc"
    cpu.mkdir(parents=True)
    (cpu / "cpu.cfs_quota_us").write_text("250000\n")
    (cpu / "cpu.cfs_period_us").write_text("100000\n")
    limits = read_limits(
        root, _proc(tmp_path, "4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n")
    )
    assert limits.cgroup_v1 == 2.5
    assert limits.cgroup_v2 is None
    assert CoreLimits(None, 2.5, 8, 8).cores == 3
    assert limits.cores == min(3, AFFINITY)


def test_v1_unlimited_quota_is_ignored(tmp_path: Path) -> None:
    """cgroup v1 quota -1 means unlimited."""
    root = tmp_path / "cgroup"
    cpu = root / "cpu"
    cpu.mkdir(parents=True)
    (cpu / "cpu.cfs_quota_us").write_text("-1\n")
    (cpu / "cpu.cfs_period_us").write_text("100000\n")
    assert read_limits(root, _proc(tmp_path, "3:cpu:/\n")).cgroup_v1 is None


def test_no_cgroup_at_all(tmp_path: Path) -> None:
    """No cgroup filesystem and no /proc/self/cgroup: affinity and the host count decide."""
    limits = read_limits(tmp_path / "nothing", tmp_path / "nothing-either")
    assert limits.cgroup_v1 is None
    assert limits.cgroup_v2 is None
    assert limits.cores == min(AFFINITY, os.cpu_count() or 1)


def test_smallest_limit_wins_and_never_below_one() -> None:
    """The smallest source decides; a tiny quota still gives one core."""
    assert CoreLimits(0.1, None, 8, 16).cores == 1
    assert CoreLimits(None, None, 3, 16).cores == 3
    assert CoreLimits(6.0, 4.0, 8, 16).cores == 4
    assert CoreLimits(6.0, 4.0, 8, 16).source == "cgroup v1 cfs quota"


def test_one_rounding_rule_for_fractional_quotas() -> None:
    """ROUNDING_RULE: up, at least one core; whole limits stay whole despite float noise; the
    source names the fraction and the rule, so `explain` shows how the cores were counted."""
    assert [round_cores(x) for x in (0.1, 0.5, 1.0, 1.5, 2.0, 2.01, 3 * 0.1 * 10)] == [
        1, 1, 1, 2, 2, 3, 3,
    ]  # fmt: skip
    assert CoreLimits(1.5, None, 8, 16).source == f"cgroup v2 cpu.max 1.5, {ROUNDING_RULE}"
    assert CoreLimits(2.0, None, 8, 16).source == "cgroup v2 cpu.max"
    assert ROUNDING_RULE == "rounded up, at least 1"


def test_explain_names_the_rounding_of_a_fractional_quota() -> None:
    """`explain`'s processes row says how a 1.5-core quota became 2 cores."""
    from servertune.explain import format_plan
    from servertune.machine import Machine
    from servertune.sizing import plan_for
    from servertune.workload import Workload

    limits = CoreLimits(1.5, None, 8, 16)
    plan = plan_for(Workload(), Machine(cores=limits.cores, cores_source=limits.source))
    assert plan.processes == 2
    assert f"cgroup v2 cpu.max 1.5, {ROUNDING_RULE}" in plan.reasons["processes"]
    assert "rounded up, at least 1" in format_plan(plan, width=400)
