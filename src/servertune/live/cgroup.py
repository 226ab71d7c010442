"""The CPU limit of one cgroup, read as often as asked: its quota and its cpuset.

A running container's limit can change under it (Kubernetes in-place pod resize rewrites the
container cgroup's `cpu.max`), so unlike `servertune.cores`, which reads once, this reader is
built once and read on every tick. It takes the cgroup's directory, so a test points it at a
child cgroup it made or at a directory holding the same files:

* cgroup v2: `cpu.max` ("max 100000" or "150000 100000") and `cpuset.cpus.effective`;
* cgroup v1: `cpu.cfs_quota_us` / `cpu.cfs_period_us` and `cpuset.effective_cpus`
  (`cpuset.cpus` where the kernel has no effective file).

Quotas are read with `servertune.cores`' readers (the directory and its ancestors: a parent's
quota binds too) and turned into whole cores by its `ROUNDING_RULE`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from servertune.cores import cgroup_paths, read_cfs_quota, read_cpu_max, round_cores

__all__ = ["CgroupReader", "CpuLimit", "count_cpu_list"]

#: The cpuset files, v2 first: the effective set already accounts for the ancestors' sets.
_CPUSET_FILES = ("cpuset.cpus.effective", "cpuset.effective_cpus", "cpuset.cpus")
#: Where cgroup v1 mounts the cpu controller, by the names distributions give it.
_V1_CPU_MOUNTS = ("cpu,cpuacct", "cpu", "cpuacct,cpu")


def count_cpu_list(text: str) -> int | None:
    """CPUs in a kernel cpu list ("0-3,6"), None when empty or unreadable."""
    count = 0
    for part in text.strip().split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        try:
            low, high = int(first), int(last or first)
        except ValueError:
            return None
        if high < low:
            return None
        count += high - low + 1
    return count or None


@dataclass(frozen=True)
class CpuLimit:
    """One reading: the quota in cores (None: no quota), the cpuset's CPUs (None: not read)."""

    quota: float | None
    cpus: int | None
    host: int

    @property
    def limit(self) -> float:
        """The tightest of quota, cpuset and host, in (possibly fractional) cores."""
        return min(v for v in (self.quota, self.cpus, self.host) if v is not None)

    @property
    def cores(self) -> int:
        """Whole cores by `servertune.cores.ROUNDING_RULE`."""
        return round_cores(self.limit)

    def __str__(self) -> str:
        quota = "no quota" if self.quota is None else f"quota {self.quota:g}"
        cpus = "" if self.cpus is None else f", cpuset {self.cpus}"
        return f"{quota}{cpus}"


class CgroupReader:
    """Reads the CPU limit of one cgroup: `cpu_dir` (quota files) and `cpuset_dir` (cpuset
    files; the same directory on cgroup v2 and in a directory of files)."""

    def __init__(
        self,
        cpu_dir: Path,
        cpuset_dir: Path | None = None,
        *,
        mount_root: Path | None = None,
    ) -> None:
        self.cpu_dir = Path(cpu_dir)
        self.cpuset_dir = Path(cpuset_dir) if cpuset_dir is not None else self.cpu_dir
        # The ancestors up to this root are read too; by default only the directory itself.
        self._root = Path(mount_root) if mount_root is not None else self.cpu_dir
        self._relative = str(self.cpu_dir.relative_to(self._root))

    @classmethod
    def of_this_process(
        cls,
        sys_fs_cgroup: Path = Path("/sys/fs/cgroup"),
        proc_self_cgroup: Path = Path("/proc/self/cgroup"),
    ) -> CgroupReader:
        """The cgroup this process runs in (v2 unified, else the v1 cpu and cpuset mounts)."""
        v2_path, v1_path = cgroup_paths(proc_self_cgroup)
        if (sys_fs_cgroup / "cgroup.controllers").exists():
            directory = sys_fs_cgroup / (v2_path or "/").lstrip("/")
            return cls(directory, mount_root=sys_fs_cgroup)
        cpu_root = next(
            (sys_fs_cgroup / n for n in _V1_CPU_MOUNTS if (sys_fs_cgroup / n).is_dir()),
            sys_fs_cgroup,
        )
        cpu_dir = cpu_root / (v1_path or "/").lstrip("/")
        cpuset_dir = sys_fs_cgroup / "cpuset" / _v1_cpuset_path(proc_self_cgroup).lstrip("/")
        return cls(cpu_dir, cpuset_dir, mount_root=cpu_root)

    def read(self) -> CpuLimit:
        """The limit now; a file that vanished or is unreadable counts as no limit."""
        quotas = [
            q
            for q in (
                read_cpu_max(self._root, self._relative),
                read_cfs_quota(self._root, self._relative),
            )
            if q is not None
        ]
        return CpuLimit(
            quota=min(quotas) if quotas else None,
            cpus=self._cpuset(),
            host=os.cpu_count() or 1,
        )

    def _cpuset(self) -> int | None:
        for name in _CPUSET_FILES:
            try:
                text = (self.cpuset_dir / name).read_text()
            except OSError:
                continue
            return count_cpu_list(text)
        return None


def _v1_cpuset_path(proc_self_cgroup: Path) -> str:
    try:
        lines = proc_self_cgroup.read_text().splitlines()
    except OSError:
        return "/"
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3 and "cpuset" in parts[1].split(","):
            return parts[2]
    return "/"
