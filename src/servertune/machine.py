"""The facts of the machine a plan is for, read once at the edge and passed in.

The sizing rules never touch /proc or /sys: `Machine.read()` does, once per process, and a
`Machine` built by hand (tests, golden files, a plan for another host) makes a plan depend on
its inputs only.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_SOMAXCONN",
    "Machine",
    "free_threaded_build",
    "read_gil_enabled",
    "read_gunicorn_asgi_worker",
    "read_memory_limit_mb",
    "read_memory_total_mb",
    "read_somaxconn",
]

#: Assumed when /proc/sys/net/core/somaxconn cannot be read (the Linux default since 5.4).
DEFAULT_SOMAXCONN = 4096
#: cgroup v2 writes this instead of a number when no memory limit is set; v1 writes a huge one.
_NO_LIMIT_BYTES = 1 << 62


class Machine(BaseModel):
    """Cores (with the source that decided them), the listen-queue cap, the memory limit,
    whether the Python running servertune has the GIL on, and whether its gunicorn has the
    native ASGI worker."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cores: int = Field(ge=1, le=1024, description="cores this process may use")
    cores_source: str = Field(
        default="given", max_length=80, description="which limit decided `cores`"
    )
    somaxconn: int = Field(
        default=DEFAULT_SOMAXCONN, ge=1, description="the kernel's cap on any listen backlog"
    )
    memory_limit_mb: int | None = Field(
        default=None, ge=1, description="the cgroup's memory limit, None when unlimited"
    )
    memory_total_mb: int | None = Field(
        default=None,
        ge=1,
        description="the host's RAM (/proc/meminfo MemTotal): the memory budget where no cgroup "
        "limit and no memory_limit_mb is set; None when not read (a machine described by hand)",
    )
    gil_enabled: bool | None = Field(
        default=None,
        description="whether the Python running servertune has the GIL on "
        "(sys._is_gil_enabled()); None when not read (a machine described by hand)",
    )
    gunicorn_asgi_worker: bool | None = Field(
        default=None,
        description="whether the installed gunicorn has its native 'asgi' worker (in "
        "gunicorn.workers.SUPPORTED_WORKERS); False when gunicorn is not installed, None when "
        "not read (a machine described by hand)",
    )

    @classmethod
    def read(cls) -> Machine:
        """This machine, read once per process (cgroups, affinity, somaxconn, memory.max)."""
        return _read_once()


@cache
def _read_once() -> Machine:
    from servertune.cores import read_limits

    limits = read_limits()
    return Machine(
        cores=limits.cores,
        cores_source=limits.source,
        somaxconn=read_somaxconn(),
        memory_limit_mb=read_memory_limit_mb(),
        memory_total_mb=read_memory_total_mb(),
        gil_enabled=read_gil_enabled(),
        gunicorn_asgi_worker=read_gunicorn_asgi_worker(),
    )


def free_threaded_build() -> bool:
    """Whether this Python is a free-threaded build (python3.13t+), whatever the GIL's state."""
    import sysconfig

    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def read_gil_enabled() -> bool:
    """Whether this Python has the GIL on now: always on a default build; on a free-threaded
    build (3.13t+) unless PYTHON_GIL=1 or an extension without free-threading support turned it on."""
    check = getattr(sys, "_is_gil_enabled", None)
    return True if check is None else bool(check())


def read_gunicorn_asgi_worker() -> bool:
    """Whether the gunicorn importable here registers the native `asgi` worker class (gunicorn
    24.0 added it as a beta, 25.1 made it stable); False when gunicorn is not installed.

    Reads gunicorn's own registry of worker names (`gunicorn.workers.SUPPORTED_WORKERS`, what
    `-k asgi` is looked up in), never the version number: the registry is what gunicorn obeys.
    """
    try:
        from gunicorn.workers import SUPPORTED_WORKERS  # type: ignore[import-untyped]
    except ImportError:
        return False
    return "asgi" in SUPPORTED_WORKERS


def read_somaxconn(path: str = "/proc/sys/net/core/somaxconn") -> int:
    """The kernel's listen-queue cap, or DEFAULT_SOMAXCONN where it cannot be read."""
    try:
        with open(path) as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return DEFAULT_SOMAXCONN


def read_memory_limit_mb(
    sys_fs_cgroup: Path = Path("/sys/fs/cgroup"),
    proc_self_cgroup: Path = Path("/proc/self/cgroup"),
) -> int | None:
    """The memory limit of this process's cgroup in MiB, None when unlimited.

    Read like the CPU limit (`servertune.cores.read_limits`): the cgroup named in
    /proc/self/cgroup and each of its ancestors up to the mount root, since a parent's limit
    binds its children too; cgroup v2 `memory.max` (when the unified hierarchy is mounted
    there) and v1 `memory/memory.limit_in_bytes`, the smallest wins. Without a cgroup
    namespace a container's /proc/self/cgroup names a path (`/docker/<id>`) that its own
    mount does not have; the walk then ends at the mount root, which is its cgroup.
    """
    from servertune.cores import _walk_up, cgroup_paths

    v2_path, v1_path = cgroup_paths(proc_self_cgroup, "memory")
    found: list[int] = []
    if (sys_fs_cgroup / "cgroup.controllers").exists():
        found += _limits(_walk_up(sys_fs_cgroup, v2_path or "/"), "memory.max")
    if (sys_fs_cgroup / "memory").is_dir():
        found += _limits(
            _walk_up(sys_fs_cgroup / "memory", v1_path or "/"), "memory.limit_in_bytes"
        )
    return max(1, min(found) // (1024 * 1024)) if found else None


def _limits(directories: list[Path], name: str) -> list[int]:
    """The byte limits set in `name` in these directories: v2 writes `max` and v1 a number
    near 2**63 for "no limit"; a directory without the file (not that deep here) is skipped."""
    limits = []
    for directory in directories:
        try:
            text = (directory / name).read_text().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text.isdigit() and int(text) < _NO_LIMIT_BYTES:
            limits.append(int(text))
    return limits


def read_memory_total_mb(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """The host's RAM in MiB (MemTotal), None where /proc/meminfo cannot be read."""
    try:
        lines = meminfo.read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        name, _, rest = line.partition(":")
        words = rest.split()
        if name == "MemTotal" and words and words[0].isdigit():
            return max(1, int(words[0]) // 1024)
    return None
