"""How many cores this process may really use: cgroup quota, CPU affinity, then the host count.

`os.cpu_count()` (and uWSGI's `%k`) count the host's cores, so a container limited to 2 CPUs on a
64-core host would start 129 gunicorn workers (gunicorn#2028). We take the smallest of:
cgroup v2 `cpu.max`, cgroup v1 `cpu.cfs_quota_us / cpu.cfs_period_us`, the affinity mask and the
host count, rounding a fractional quota up like `nproc` and Go's automaxprocs do.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CoreLimits", "read_limits"]


@dataclass(frozen=True)
class CoreLimits:
    """Each source that may limit the cores, None where that source sets no limit."""

    cgroup_v2: float | None
    cgroup_v1: float | None
    affinity: int | None
    host: int

    @property
    def cores(self) -> int:
        """The smallest limit, rounded up, and never below one core."""
        limits = [v for v in (self.cgroup_v2, self.cgroup_v1, self.affinity) if v is not None]
        return max(1, math.ceil(min([*limits, self.host])))

    @property
    def source(self) -> str:
        """Which limit decided, for `servertune explain`."""
        named = {
            "cgroup v2 cpu.max": self.cgroup_v2,
            "cgroup v1 cfs quota": self.cgroup_v1,
            "CPU affinity": self.affinity,
            "os.cpu_count()": self.host,
        }
        return min(((v, k) for k, v in named.items() if v is not None), key=lambda t: t[0])[1]


def _cgroup_paths(proc_self_cgroup: Path) -> tuple[str | None, str | None]:
    """This process's cgroup v2 path and v1 cpu-controller path, from /proc/self/cgroup."""
    v2 = v1 = None
    try:
        lines = proc_self_cgroup.read_text().splitlines()
    except OSError:
        return None, None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            v2 = path
        elif "cpu" in controllers.split(","):
            v1 = path
    return v2, v1


def _walk_up(root: Path, relative: str) -> list[Path]:
    """The cgroup directory and its ancestors up to the mount root: a parent's quota binds too."""
    rel = Path(relative.lstrip("/"))
    dirs = [root / rel]
    while rel != Path("."):
        rel = rel.parent
        dirs.append(root / rel)
    return dirs


def _read_v2(root: Path, relative: str | None) -> float | None:
    limits = []
    for directory in _walk_up(root, relative or "/"):
        try:
            quota, period = (directory / "cpu.max").read_text().split()[:2]
        except (OSError, ValueError):
            continue
        if quota != "max" and int(period) > 0:
            limits.append(int(quota) / int(period))
    return min(limits) if limits else None


def _read_v1(root: Path, relative: str | None) -> float | None:
    limits = []
    for directory in _walk_up(root, relative or "/"):
        try:
            quota = int((directory / "cpu.cfs_quota_us").read_text())
            period = int((directory / "cpu.cfs_period_us").read_text())
        except (OSError, ValueError):
            continue
        if quota > 0 and period > 0:
            limits.append(quota / period)
    return min(limits) if limits else None


def read_limits(
    sys_fs_cgroup: Path = Path("/sys/fs/cgroup"),
    proc_self_cgroup: Path = Path("/proc/self/cgroup"),
) -> CoreLimits:
    """Read every limit; the paths are parameters so tests can point them at fake trees."""
    v2_path, v1_path = _cgroup_paths(proc_self_cgroup)
    cgroup_v2 = (
        _read_v2(sys_fs_cgroup, v2_path)
        if (sys_fs_cgroup / "cgroup.controllers").exists()
        else None
    )
    cgroup_v1 = None
    for name in ("cpu,cpuacct", "cpu", "cpuacct,cpu"):
        if (sys_fs_cgroup / name).is_dir():
            cgroup_v1 = _read_v1(sys_fs_cgroup / name, v1_path)
            break
    try:
        affinity: int | None = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    return CoreLimits(
        cgroup_v2=cgroup_v2, cgroup_v1=cgroup_v1, affinity=affinity, host=os.cpu_count() or 1
    )
