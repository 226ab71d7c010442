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


def read_memory_limit_mb(sys_fs_cgroup: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The memory limit of this cgroup (v2 `memory.max`, v1 `memory.limit_in_bytes`) in MiB."""
    for name in ("memory.max", "memory/memory.limit_in_bytes"):
        try:
            text = (sys_fs_cgroup / name).read_text().strip()
        except OSError:
            continue
        if text == "max" or not text.isdigit() or int(text) >= _NO_LIMIT_BYTES:
            return None
        return max(1, int(text) // (1024 * 1024))
    return None
