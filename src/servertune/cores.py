"""How many cores this process may really use: cgroup quota, CPU affinity, then the host count.

`os.cpu_count()` (and uWSGI's `%k`) count the host's cores, so a container limited to 2 CPUs on a
64-core host would start 129 gunicorn workers (gunicorn#2028). We take the smallest of:
cgroup v2 `cpu.max`, cgroup v1 `cpu.cfs_quota_us / cpu.cfs_period_us`, the affinity mask and the
host count, and turn a fractional quota into whole cores by `ROUNDING_RULE` (`round_cores`),
the one rule `explain`, the Kubernetes CPU-limit messages, `check` and `servertune.live` share.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "ROUNDING_RULE",
    "CoreLimits",
    "cgroup_paths",
    "read_cfs_quota",
    "read_cpu_max",
    "read_limits",
    "round_cores",
]

#: How a fractional CPU quota becomes a number of cores (and so of processes): rounded up, at
#: least 1. Python has no cgroup-aware CPU count to follow (cpython#149452, open) and projects
#: differ: Go's runtime rounds its cgroup GOMAXPROCS up (golang/go#76835 asks for floor), .NET
#: rounds up (dotnet/coreclr#23747), Uber's automaxprocs rounds down. Up, because a process
#: computes on at most one core under the GIL: 2 processes under a 1.5-core quota use all of
#: it (throttled for part of each period), 1 process leaves half a paid-for core idle. Give a
#: whole number of cores to avoid the throttling altogether.
ROUNDING_RULE = "rounded up, at least 1"


def round_cores(limit: float) -> int:
    """Whole cores for a CPU limit by `ROUNDING_RULE`: 1.5 -> 2, 0.5 -> 1, 2.0 -> 2."""
    return max(1, math.ceil(limit - 1e-9))


# A NamedTuple, not a frozen dataclass: every `servertune` run creates this class, and a
# dataclass execs its generated methods at creation, ~0.5 ms more each (bench cold-start).
class CoreLimits(NamedTuple):
    """Each source that may limit the cores, None where that source sets no limit."""

    cgroup_v2: float | None
    cgroup_v1: float | None
    affinity: int | None
    host: int

    @property
    def cores(self) -> int:
        """The smallest limit, whole by `ROUNDING_RULE`."""
        limits = [v for v in (self.cgroup_v2, self.cgroup_v1, self.affinity) if v is not None]
        return round_cores(min([*limits, self.host]))

    @property
    def source(self) -> str:
        """Which limit decided, for `servertune explain`."""
        named = {
            "cgroup v2 cpu.max": self.cgroup_v2,
            "cgroup v1 cfs quota": self.cgroup_v1,
            "CPU affinity": self.affinity,
            "os.cpu_count()": self.host,
        }
        value, name = min(((v, k) for k, v in named.items() if v is not None), key=lambda t: t[0])
        if float(value).is_integer():
            return name
        return f"{name} {value:g}, {ROUNDING_RULE}"


def cgroup_paths(proc_self_cgroup: Path, controller: str = "cpu") -> tuple[str | None, str | None]:
    """This process's cgroup v2 path and v1 path of `controller`, from /proc/self/cgroup."""
    v2 = v1 = None
    try:
        lines = proc_self_cgroup.read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return None, None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            v2 = path
        elif controller in controllers.split(","):
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


def read_cpu_max(root: Path, relative: str | None = None) -> float | None:
    """cgroup v2: the smallest `cpu.max` quota in cores of `root/relative` and its ancestors."""
    limits = []
    for directory in _walk_up(root, relative or "/"):
        try:
            quota, period = (directory / "cpu.max").read_text().split()[:2]
        except (OSError, ValueError):
            continue
        if quota != "max" and int(period) > 0:
            limits.append(int(quota) / int(period))
    return min(limits) if limits else None


def read_cfs_quota(root: Path, relative: str | None = None) -> float | None:
    """cgroup v1: the smallest `cpu.cfs_quota_us / cpu.cfs_period_us` in cores, walking up."""
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
    v2_path, v1_path = cgroup_paths(proc_self_cgroup)
    cgroup_v2 = (
        read_cpu_max(sys_fs_cgroup, v2_path)
        if (sys_fs_cgroup / "cgroup.controllers").exists()
        else None
    )
    cgroup_v1 = None
    for name in ("cpu,cpuacct", "cpu", "cpuacct,cpu"):
        if (sys_fs_cgroup / name).is_dir():
            cgroup_v1 = read_cfs_quota(sys_fs_cgroup / name, v1_path)
            break
    try:
        affinity: int | None = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    return CoreLimits(
        cgroup_v2=cgroup_v2, cgroup_v1=cgroup_v1, affinity=affinity, host=os.cpu_count() or 1
    )
