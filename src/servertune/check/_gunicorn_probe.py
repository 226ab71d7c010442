"""Run by `servertune check` in a child interpreter: load a gunicorn config as gunicorn does.

This file is passed to `python -c`, so it imports nothing from servertune. It loads the file
with gunicorn's own `Application.load_config()` (the config file, then GUNICORN_CMD_ARGS, exactly
gunicorn's order) three times: as is, then with the CPU count patched to two different values,
to learn whether `workers` follows the host's CPU count. It prints one JSON line after a marker.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
from typing import Any

MARK = "@@servertune-check@@"
NAMES = (
    "workers",
    "threads",
    "bind",
    "keepalive",
    "timeout",
    "graceful_timeout",
    "max_requests",
    "max_requests_jitter",
    "backlog",
    "preload_app",
    "reload",
    "daemon",
)
#: Set by `check` to the name of a variable that numbers a config's instances (servertune's
#: per-worker config, started once per socket with SERVERTUNE_WORKER=0, 1, ...): the file is then
#: loaded for 0, 1, ... until it refuses the number, and every instance's bind is reported.
INSTANCES_VARIABLE = "SERVERTUNE_CHECK_INSTANCES"
#: The parent stops the probe after its own timeout (`GUNICORN_EVAL_TIMEOUT_S` in
#: check/gunicorn.py), but when the parent is killed first nothing would: a config that loops
#: would spin on. So the probe ends itself after this many seconds of wall time (SIGALRM) or
#: of CPU (RLIMIT_CPU: SIGXCPU), which `SERVERTUNE_CHECK_PROBE_LIMIT_S` may lower.
OWN_LIMIT_S = 30
#: More instances than this are not a per-worker layout (Workload.cores is at most 1024).
MAX_INSTANCES = 1024
#: The gunicorn settings the file itself defines (a file defining none is not a config).
SET_IN_FILE: list[str] = []
#: Two CPU counts: if `workers` differs between them, the file computes it from the CPU count,
#: and what it computes on these typical nodes (16 and 64 cores) is what a finding shows. The
#: one probe set of every Python config check evaluates (gunicorn's here and in `gunicorn`,
#: Hypercorn's in `hypercorn`): declared in this module, which imports nothing of servertune.
PROBE_CPUS = (16, 64)


def _lenient_host_checks() -> None:
    """Accept `chdir`, `user` and `group` as written: they name the production host's
    directories and accounts, which the machine running the check need not have."""
    from gunicorn import config  # type: ignore[import-untyped]

    for name in ("Chdir", "User", "Group"):
        setting = getattr(config, name, None)
        if setting is not None:
            setting.validator = staticmethod(lambda value: value)


def load(path: str, cpus: int | None = None, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """gunicorn's view of the settings, with the CPU count patched to `cpus` when given."""
    # Imported here: check.gunicorn and check.hypercorn import this module for NAMES and PROBE_CPUS alone.
    import multiprocessing

    from gunicorn.app.base import Application  # type: ignore[import-untyped]

    class Probe(Application):  # type: ignore[misc]
        def init(self, parser: Any, opts: Any, args: Any) -> None:
            return None

        def chdir(self) -> None:
            # The app is never imported, and the config is often checked on another machine
            # than the one with the app's directory: gunicorn's chdir would only fail here.
            return None

        def load(self) -> None:
            raise RuntimeError("servertune check never loads the application")

        def load_config_from_file(self, filename: str) -> Any:
            namespace = super().load_config_from_file(filename)
            SET_IN_FILE[:] = sorted(k for k in namespace if k in self.cfg.settings)
            return namespace

    saved = (os.cpu_count, multiprocessing.cpu_count, getattr(os, "sched_getaffinity", None))
    saved_process = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if cpus is not None:
        count = cpus
        os.cpu_count = lambda: count
        multiprocessing.cpu_count = lambda: count
        os.sched_getaffinity = lambda pid: set(range(count))
        if saved_process is not None:
            setattr(os, "process_cpu_count", lambda: count)  # noqa: B010 - absent before 3.13
    try:
        sys.argv = ["gunicorn", "-c", path, *extra]
        cfg = Probe().cfg
    finally:
        os.cpu_count, multiprocessing.cpu_count = saved[0], saved[1]
        if saved[2] is not None:
            os.sched_getaffinity = saved[2]
        if saved_process is not None:
            setattr(os, "process_cpu_count", saved_process)  # noqa: B010
    values: dict[str, Any] = {name: cfg.settings[name].get() for name in NAMES}
    values["worker_class"] = cfg.worker_class_str
    values["worker_class_names"] = worker_class_names(cfg.settings["worker_class"].get())
    return values


def worker_class_names(uri: Any) -> list[str]:
    """`module.Class` of the worker class and every class it derives from, so a subclass of
    uvicorn's worker is known for one. gunicorn's own workers are named, never imported: some
    (gevent, eventlet) patch the interpreter on import."""
    if isinstance(uri, str):
        if "." not in uri or uri.startswith("gunicorn."):
            return [uri]
        from gunicorn import util

        try:
            uri = util.load_class(uri)
        except Exception:  # not importable here: its name is all there is to go by
            return [uri]
    mro = getattr(uri, "__mro__", ())
    return [f"{c.__module__}.{c.__qualname__}" for c in mro if c is not object]


def main() -> None:
    """Load the file named by argv[1] (with the options after it) and print the settings as JSON after the marker."""
    asked = os.environ.get("SERVERTUNE_CHECK_PROBE_LIMIT_S", "")
    limit = min(int(asked), OWN_LIMIT_S) if asked.isdigit() and int(asked) > 0 else OWN_LIMIT_S
    signal.alarm(limit)
    resource.setrlimit(resource.RLIMIT_CPU, (limit, limit))
    path = os.path.abspath(sys.argv[1])
    # The rest: a command line's own options (`gunicorn -w 9 app:app` in a manifest), parsed by
    # gunicorn's argument parser after the file, as gunicorn does.
    extra = tuple(sys.argv[2:])
    _lenient_host_checks()
    here = os.getcwd()
    binds: list[str] = []
    instances = 1
    numbered = os.environ.pop(INSTANCES_VARIABLE, "")
    if numbered:
        for index in range(MAX_INSTANCES):
            os.environ[numbered] = str(index)
            try:
                one = load(path, extra=extra)
            except SystemExit:
                if index == 0:
                    raise
                break
            finally:
                os.chdir(here)
            binds += [str(b) for b in one["bind"]]
            instances = index + 1
        os.environ[numbered] = "0"
    values = load(path, extra=extra)
    os.chdir(here)
    probes = []
    for cpus in PROBE_CPUS:
        probes.append(load(path, cpus, extra)["workers"])
        os.chdir(here)
    values["workers_follow_cpu_count"] = probes[0] != probes[1]
    values["workers_on_nodes"] = list(zip(PROBE_CPUS, probes, strict=True))
    values["bind"] = binds or [str(b) for b in values["bind"]]
    values["instances"] = instances
    values["set_in_file"] = list(SET_IN_FILE)
    sys.stdout.write("\n" + MARK + json.dumps(values, default=str) + "\n")


if __name__ == "__main__":
    main()
