"""A child cgroup whose CPU quota a benchmark (or a test) sets: the kernel's own throttling,
not a simulation, for what `servertune.live` follows.

It is made under the mount root of whichever hierarchy holds the cpu controller: cgroup v2 when
the root offers `cpu` (enabled in the root's subtree_control), else cgroup v1's cpu mount.
Making one needs root; `ChildCgroup.create()` says so in one line when it cannot.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from pathlib import Path

from servertune.live.cgroup import CgroupReader

__all__ = ["PERIOD_US", "CgroupUnavailable", "ChildCgroup"]

#: The CFS period written with every quota: the kernel's default, 100 ms.
PERIOD_US = 100_000
#: How long removing the cgroup may wait for its last process to leave.
REMOVE_TIMEOUT_S = 10.0


class CgroupUnavailable(RuntimeError):
    """No child cgroup with a cpu controller can be made here: one line saying why."""


class ChildCgroup:
    """A child cgroup with the cpu controller; `with ChildCgroup.create() as cg:` removes it."""

    def __init__(self, version: str, mount: Path, directory: Path) -> None:
        self.version, self.mount, self.directory = version, mount, directory

    @classmethod
    def create(
        cls, sys_fs_cgroup: Path = Path("/sys/fs/cgroup"), prefix: str = "servertune-live"
    ) -> ChildCgroup:
        """A new child cgroup named `prefix-` and a random suffix."""
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        controllers = sys_fs_cgroup / "cgroup.controllers"
        try:
            if controllers.exists() and "cpu" in controllers.read_text().split():
                subtree = sys_fs_cgroup / "cgroup.subtree_control"
                if "cpu" not in subtree.read_text().split():
                    subtree.write_text("+cpu")
                version, mount = "v2", sys_fs_cgroup
            else:
                mount = next(
                    (
                        sys_fs_cgroup / n
                        for n in ("cpu,cpuacct", "cpu", "cpuacct,cpu")
                        if (sys_fs_cgroup / n).is_dir()
                    ),
                    sys_fs_cgroup / "cpu",
                )
                if not (mount / "cpu.cfs_quota_us").exists():
                    raise CgroupUnavailable(
                        f"no cpu controller under {sys_fs_cgroup} (cgroup v2 without 'cpu' in "
                        "cgroup.controllers, and no v1 cpu mount)"
                    )
                version = "v1"
            directory = mount / name
            directory.mkdir()
            quota_file = "cpu.max" if version == "v2" else "cpu.cfs_quota_us"
            if not (directory / quota_file).exists():
                directory.rmdir()
                raise CgroupUnavailable(
                    f"{directory} has no {quota_file}: the cpu controller is not delegated to "
                    "its children here"
                )
        except OSError as exc:
            raise CgroupUnavailable(
                f"cannot make a child cgroup under {sys_fs_cgroup} ({exc.strerror}): run as root"
            ) from None
        return cls(version, mount, directory)

    def __enter__(self) -> ChildCgroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def set_cores(self, cores: float) -> None:
        """Set the quota to `cores` CPUs per period."""
        quota = int(cores * PERIOD_US)
        if self.version == "v2":
            (self.directory / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        else:
            (self.directory / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (self.directory / "cpu.cfs_quota_us").write_text(str(quota))

    def set_weight(self, cores: float) -> None:
        """CPU weight in proportion to `cores` (cgroup v2 `cpu.weight` 100 per core, v1
        `cpu.shares` 1024 per core): what the cgroup gets, beside its siblings, when CPUs are
        contended below its quota."""
        if self.version == "v2":
            (self.directory / "cpu.weight").write_text(str(max(1, min(10_000, round(100 * cores)))))
        else:
            (self.directory / "cpu.shares").write_text(str(max(2, round(1024 * cores))))

    def enter_command(self, command: str) -> list[str]:
        """A shell command line that joins this cgroup, then execs `command` (whose children,
        forked later, are in it too)."""
        return ["sh", "-c", f"echo $$ > {self.directory}/cgroup.procs && exec {command}"]

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.directory / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def reader(self) -> CgroupReader:
        return CgroupReader(self.directory, mount_root=self.mount)

    def remove(self) -> None:
        """Move any process left back to the root, then remove the cgroup."""
        for pid in self.pids():
            with contextlib.suppress(OSError):
                (self.mount / "cgroup.procs").write_text(str(pid))
        deadline = time.monotonic() + REMOVE_TIMEOUT_S
        while True:
            try:
                self.directory.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
