"""The memory limit, read like the CPU limit: cgroup v2 `memory.max` and v1
`memory.limit_in_bytes` in directory trees laid out as the kernel mounts them (the process's
cgroup and its ancestors), the live tree of this machine, and the host's RAM."""

from __future__ import annotations

from pathlib import Path

from servertune.machine import (
    Machine,
    read_memory_limit_mb,
    read_memory_total_mb,
)
from servertune.sizing import make_plan, plan_for
from servertune.workload import Workload

MiB = 1024 * 1024
#: What cgroup v1 writes for "no limit": LONG_MAX rounded down to a 4 KiB page.
V1_UNLIMITED = "9223372036854771712"


def _proc(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "proc_self_cgroup"
    path.write_text(text)
    return path


def _v2_tree(tmp_path: Path, leaf: str, memory_max: str) -> Path:
    """A cgroup2 mount: cgroup.controllers at the root, `memory.max` in every non-root cgroup."""
    root = tmp_path / "cgroup"
    (root / leaf).mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (root / leaf / "memory.max").write_text(memory_max + "\n")
    return root


def _v1_tree(tmp_path: Path, leaf: str, limit: str) -> Path:
    """A cgroup v1 mount: one directory per controller, the memory one with its hierarchy."""
    root = tmp_path / "cgroup"
    for controller in ("cpu,cpuacct", "pids"):
        (root / controller).mkdir(parents=True)
    memory = root / "memory"
    (memory / leaf).mkdir(parents=True)
    (memory / "memory.limit_in_bytes").write_text(V1_UNLIMITED + "\n")
    (memory / leaf / "memory.limit_in_bytes").write_text(limit + "\n")
    return root


def test_v2_memory_max_in_the_process_cgroup(tmp_path: Path) -> None:
    """cgroup v2: `memory.max` 512 MiB in the cgroup /proc/self/cgroup names is 512."""
    root = _v2_tree(tmp_path, "system.slice/app.service", str(512 * MiB))
    proc = _proc(tmp_path, "0::/system.slice/app.service\n")
    assert read_memory_limit_mb(root, proc) == 512


def test_v2_max_is_no_limit(tmp_path: Path) -> None:
    """cgroup v2 writes `max` for no limit: None, not a number."""
    root = _v2_tree(tmp_path, "app.slice", "max")
    assert read_memory_limit_mb(root, _proc(tmp_path, "0::/app.slice\n")) is None


def test_v2_parent_limit_binds_the_child(tmp_path: Path) -> None:
    """A parent's `memory.max` limits a child whose own is `max` (a pod's limit over a container)."""
    root = _v2_tree(tmp_path, "kubepods.slice/pod1/ctr", "max")
    (root / "kubepods.slice" / "pod1" / "memory.max").write_text(f"{1024 * MiB}\n")
    proc = _proc(tmp_path, "0::/kubepods.slice/pod1/ctr\n")
    assert read_memory_limit_mb(root, proc) == 1024


def test_v2_namespace_root_is_the_container(tmp_path: Path) -> None:
    """Inside a cgroup namespace the container is the root (`0::/`): its memory.max counts."""
    root = tmp_path / "cgroup"
    root.mkdir()
    (root / "cgroup.controllers").write_text("memory\n")
    (root / "memory.max").write_text(f"{256 * MiB}\n")
    assert read_memory_limit_mb(root, _proc(tmp_path, "0::/\n")) == 256


def test_v1_memory_limit_in_the_memory_hierarchy(tmp_path: Path) -> None:
    """cgroup v1: the memory controller's own path (not the cpu one's) and its limit."""
    root = _v1_tree(tmp_path, "docker/abc", str(768 * MiB))
    proc = _proc(tmp_path, "4:memory:/docker/abc\n3:cpu,cpuacct:/other\n0::/\n")
    assert read_memory_limit_mb(root, proc) == 768


def test_v1_unlimited_is_none(tmp_path: Path) -> None:
    """cgroup v1's unlimited value (LONG_MAX rounded to a page) is no limit."""
    root = _v1_tree(tmp_path, "docker/abc", V1_UNLIMITED)
    assert read_memory_limit_mb(root, _proc(tmp_path, "4:memory:/docker/abc\n")) is None


def test_v1_path_missing_in_the_mount_falls_back_to_the_root(tmp_path: Path) -> None:
    """Without a cgroup namespace a container sees `/docker/<id>` but its mount root is its own
    cgroup: the walk up ends there and finds the limit."""
    root = tmp_path / "cgroup"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "memory.limit_in_bytes").write_text(f"{300 * MiB}\n")
    proc = _proc(tmp_path, "9:memory:/docker/0123abcd\n")
    assert read_memory_limit_mb(root, proc) == 300


def test_hybrid_the_smaller_of_v1_and_v2(tmp_path: Path) -> None:
    """Both hierarchies mounted (the v2 root without the memory file here): the v1 limit."""
    root = _v1_tree(tmp_path, "job", str(2048 * MiB))
    (root / "cgroup.controllers").write_text("\n")
    proc = _proc(tmp_path, "4:memory:/job\n0::/\n")
    assert read_memory_limit_mb(root, proc) == 2048


def test_no_cgroup_and_garbage_are_no_limit(tmp_path: Path) -> None:
    """No cgroup mount, an unreadable /proc/self/cgroup, or a non-number: None, no error."""
    assert read_memory_limit_mb(tmp_path / "absent", tmp_path / "absent-proc") is None
    root = _v2_tree(tmp_path, "app", "lots")
    assert read_memory_limit_mb(root, _proc(tmp_path, "0::/app\n")) is None
    (tmp_path / "binary").write_bytes(b"\xff\xfe0::/app\n")
    assert read_memory_limit_mb(root, tmp_path / "binary") is None


def test_the_live_cgroup_of_this_machine() -> None:
    """This machine's own tree: the reader agrees with the limit files along this process's
    memory cgroup, read here independently (v1 or v2, whichever is mounted)."""
    root, proc = Path("/sys/fs/cgroup"), Path("/proc/self/cgroup")
    expected: list[int] = []
    for line in proc.read_text().splitlines():
        hierarchy, controllers, path = line.split(":", 2)
        if hierarchy == "0" and controllers == "" and (root / "cgroup.controllers").exists():
            base, name = root, "memory.max"
        elif "memory" in controllers.split(",") and (root / "memory").is_dir():
            base, name = root / "memory", "memory.limit_in_bytes"
        else:
            continue
        parts = [p for p in path.split("/") if p]
        for depth in range(len(parts) + 1):
            limit_file = base.joinpath(*parts[:depth]) / name
            if limit_file.exists():
                text = limit_file.read_text().strip()
                if text.isdigit() and int(text) < 1 << 62:
                    expected.append(int(text) // MiB)
    assert read_memory_limit_mb(root, proc) == (min(expected) if expected else None)
    assert Machine.read().memory_limit_mb == read_memory_limit_mb()


def test_memory_total_from_meminfo(tmp_path: Path) -> None:
    """MemTotal in KiB becomes MiB; an unreadable or odd file is None."""
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24684084 kB\nMemFree:  1 kB\n")
    assert read_memory_total_mb(meminfo) == 24105
    meminfo.write_text("MemFree: 1 kB\n")
    assert read_memory_total_mb(meminfo) is None
    assert read_memory_total_mb(tmp_path / "absent") is None
    live = read_memory_total_mb()
    assert live is not None
    assert live >= 1


def test_auto_cores_budget_the_host_ram_without_a_limit() -> None:
    """cores 'auto' with no limit anywhere: the host's RAM is the budget the processes fit in."""
    machine = Machine(cores=2, memory_total_mb=250)
    plan = plan_for(Workload(cores="auto", memory_per_worker_mb=100), machine)
    assert (plan.processes, plan.threads) == (2, 2)  # 90% of 250 MiB holds 2, not 6
    assert "the host's 250 MiB of RAM" in plan.reasons["processes"]
    roomy = plan_for(Workload(cores="auto", memory_per_worker_mb=35), machine)
    assert (roomy.processes, roomy.threads) == (6, 1)


def test_given_cores_ignore_this_hosts_ram() -> None:
    """A plan for a given core count is for another machine: this host's RAM budgets nothing."""
    machine = Machine(cores=2, memory_total_mb=100_000)
    plan = plan_for(Workload(cores=2, memory_per_worker_mb=50), machine)
    assert (plan.processes, plan.threads) == (2, 2)
    assert plan.machine.memory_total_mb is None
    assert make_plan(Workload(cores=2, memory_per_worker_mb=50)).processes == 2
