"""`bench app` on an ASGI app: servertune's ASGI layouts and the command lines people copy.

The layouts are data: one `AsgiLayout` per line of `LAYOUTS`. servertune's are started from
the files `servertune gen` writes for them (`deploy_asgi` renders them from the plan), each
behind the generated nginx with its admission limit; the copied ones are the commands the
servers' and FastAPI's docs show, behind the same nginx without an admission limit:

* `uvicorn-1-worker`: `uvicorn APP` (one process: uvicorn's default);
* `uvicorn-2n+1`: `uvicorn APP --workers (2 x cores) + 1`, gunicorn's worker rule carried over;
* `fastapi-run-4`: what FastAPI's "Server Workers" page runs, `fastapi run --workers 4`, i.e.
  uvicorn with 4 workers and proxy headers on (never the same as (2 x cores) + 1, an odd number);
* `granian-default`: `granian --interface asgi APP` (one worker: granian's default);
* `gunicorn-uvicorn-2n+1`: `gunicorn -k uvicorn_worker.UvicornWorker -w (2 x cores) + 1 APP`.

Adding a layout (another server's worker class, another doc's advice) is one line of `LAYOUTS`.

Each layout gets an unloaded level (open-loop Poisson arrivals at UNLOADED_FACTOR x the plan's
capacity: a request's latency on its own), the closed-loop levels, and an overload level (open
loop at ASGI_OVERLOAD_FACTOR x capacity). 503s are counted apart from errors: they are the load
nginx shed on purpose; an admitted request's p99 under overload is compared with the layout's
unloaded p99.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.harness.deployments import AsgiServer
from servertune.sizing.defaults import ASGI_OVERLOAD_FACTOR, ASGI_OVERLOAD_P99_TARGET

__all__ = [
    "CLIENT_TIMEOUT_S",
    "GOOD_WITHIN_MS",
    "LAYOUTS",
    "OVERLOAD_FACTOR",
    "QUICK_CLIENT_TIMEOUT_S",
    "UNLOADED_FACTOR",
    "AsgiLayout",
    "Copied",
    "UserCommand",
    "is_command_file",
    "layouts_for",
    "read_user_command",
]

#: Overload: this many times the plan's capacity, open loop (as `bench asgi`).
OVERLOAD_FACTOR = ASGI_OVERLOAD_FACTOR
#: Unloaded: this share of the plan's capacity, open loop.
UNLOADED_FACTOR = 0.1
#: The slowest unloaded rate: enough requests in a short run for a p99.
MIN_UNLOADED_RPS = 20.0
#: An open-loop request not answered within this long counts as a timeout (an error).
CLIENT_TIMEOUT_S = 5.0
#: ... in a --quick smoke run (a timed-out request still counts as one; the run ends sooner).
QUICK_CLIENT_TIMEOUT_S = 1.0
#: Target at overload: admitted p99 within this multiple of the unloaded p99.
MAX_OVERLOAD_P99_RATIO = ASGI_OVERLOAD_P99_TARGET
#: An admitted answer counts as served in time (`good_rps`) within this many ms of its
#: scheduled send: past a second a page feels broken, and under overload an unbounded queue
#: answers most requests only just before the client gives up.
GOOD_WITHIN_MS = 1000.0
#: The workers FastAPI's "Server Workers" page passes to `fastapi run --workers`.
FASTAPI_DOCS_WORKERS = 4


@dataclass(frozen=True)
class Copied:
    """What a copied command line needs: the app, where it lives, the socket, the cores."""

    app: str
    app_dir: str
    host: str
    port: int
    cores: int


def _uvicorn(copied: Copied, *flags: str) -> list[str]:
    return [
        sys.executable, "-m", "uvicorn", copied.app, "--app-dir", copied.app_dir,
        "--host", copied.host, "--port", str(copied.port), "--no-access-log", *flags,
    ]  # fmt: skip


def _granian(copied: Copied) -> list[str]:
    return [
        str(Path(sys.executable).parent / "granian"), "--interface", "asgi", copied.app,
        "--working-dir", copied.app_dir, "--host", copied.host, "--port", str(copied.port),
        "--no-access-log",
    ]  # fmt: skip


def _gunicorn_uvicorn(copied: Copied) -> list[str]:
    return [
        sys.executable, "-m", "gunicorn", "-k", "uvicorn_worker.UvicornWorker",
        "-w", str(docs_workers(copied.cores)), "--bind", f"{copied.host}:{copied.port}",
        "--chdir", copied.app_dir, copied.app,
    ]  # fmt: skip


def docs_workers(cores: int) -> int:
    """gunicorn's docs' rule, (2 x cores) + 1, which people carry over to uvicorn."""
    return 2 * cores + 1


@dataclass(frozen=True)
class AsgiLayout:
    """One candidate: servertune's (rendered from the plan) or a copied command line."""

    name: str
    server: AsgiServer
    #: servertune's file for `server`, one instance per socket when `per_worker`.
    ours: bool = False
    per_worker: bool = False
    #: A copied layout's command line and its worker processes (from the cores).
    command: Callable[[Copied], list[str]] | None = None
    workers: Callable[[int], int] | None = None
    #: Whether the layout is run on a machine with this many cores (a copied advice that
    #: would repeat another row is left out).
    applies: Callable[[int], bool] = lambda cores: True


#: servertune's layouts last, the copied ones first (table order).
LAYOUTS: tuple[AsgiLayout, ...] = (
    AsgiLayout("uvicorn-1-worker", "uvicorn", command=_uvicorn, workers=lambda c: 1),
    AsgiLayout(
        "uvicorn-2n+1",
        "uvicorn",
        workers=docs_workers,
        command=lambda c: _uvicorn(c, "--workers", str(docs_workers(c.cores))),
    ),
    AsgiLayout(
        "fastapi-run-4",
        "uvicorn",
        workers=lambda c: FASTAPI_DOCS_WORKERS,
        command=lambda c: _uvicorn(c, "--workers", str(FASTAPI_DOCS_WORKERS), "--proxy-headers"),
    ),
    AsgiLayout("granian-default", "granian", command=_granian, workers=lambda c: 1),
    AsgiLayout(
        "gunicorn-uvicorn-2n+1", "gunicorn-asgi", command=_gunicorn_uvicorn, workers=docs_workers
    ),
    AsgiLayout("servertune-uvicorn-per-worker", "uvicorn", ours=True, per_worker=True),
    AsgiLayout("servertune-uvicorn", "uvicorn", ours=True),
    AsgiLayout("servertune-granian", "granian", ours=True),
    AsgiLayout("servertune-gunicorn-asgi", "gunicorn-asgi", ours=True),
)


def layouts_for(cores: int) -> tuple[AsgiLayout, ...]:
    """The layouts run on a machine with `cores` cores, in table order."""
    return tuple(layout for layout in LAYOUTS if layout.applies(cores))


def open_loop_rates(capacity_rps: float) -> dict[str, float]:
    """The unloaded and overload arrival rates (req/s) from the plan's capacity."""
    return {
        "unloaded": max(MIN_UNLOADED_RPS, capacity_rps * UNLOADED_FACTOR),
        "overload": capacity_rps * OVERLOAD_FACTOR,
    }


def open_loop_row(result: Any) -> dict[str, Any]:
    """An open-loop result as a run row: admitted answers' req/s and latencies, 503s apart
    from errors (other statuses, failed connections, timeouts), and the share shed."""
    metrics = result.metrics()
    return {
        "offered_rps": metrics["offered_rps"],
        "rps": metrics["rps"],
        "good_rps": round(
            sum(1 for ms in result.ok_latencies_ms if ms <= GOOD_WITHIN_MS) / result.duration_s, 2
        ),
        "p50_ms": metrics["p50_ms"],
        "p90_ms": metrics["p90_ms"],
        "p99_ms": metrics["p99_ms"],
        "max_ms": metrics["max_ms"],
        # How much of the admitted p99 the load generator added itself (it shares the cores).
        "send_lag_p99_ms": metrics["send_lag_p99_ms"],
        "errors": result.errors + result.timeouts,
        "refused_503": result.refused_503,
        "timeouts": result.timeouts,
        "shed": round(result.refused_503 / result.sent, 3) if result.sent else 0.0,
        "requests": result.sent,
    }


def _p99_ratio(loaded: dict[str, Any], unloaded: dict[str, Any], *, digits: int) -> str:
    """A row's p99 over another's, as `1.5x`; `-` where either has none (nothing admitted)."""
    if not (loaded.get("p99_ms") and unloaded.get("p99_ms")):
        return "-"
    return f"{loaded['p99_ms'] / unloaded['p99_ms']:.{digits}f}x"


def overload_notes(rows: dict[str, dict[str, dict[str, Any]]], ours: list[str]) -> list[str]:
    """One line per layout: admitted p99 under overload over its unloaded p99, and the shed."""
    lines = []
    for name, by_load in rows.items():
        over, calm = by_load["overload"], by_load["unloaded"]
        ratio = _p99_ratio(over, calm, digits=1)
        lines.append(
            f"{name}{' (servertune)' if name in ours else ''}: overload admitted p99 "
            f"{over.get('p99_ms')} ms = {ratio} its unloaded p99 {calm.get('p99_ms')} ms (the "
            f"load generator's own send lag: p99 {over.get('send_lag_p99_ms')} ms); "
            f"{over['rps']:.0f} req/s admitted, {over['good_rps']:.0f} of them within "
            f"{GOOD_WITHIN_MS:g} ms, {over['shed']:.0%} shed (503), "
            f"{over['errors']} errors, {over['timeouts']} timed out"
        )
    return lines


def overload_repeats_note(name: str, calm: dict[str, Any], over: dict[str, Any]) -> str:
    """The overload p99 target per repeat, each with its admitted req/s, the load generator's own
    send lag and the CPU other work took meanwhile: on a shared machine a busy minute shows as
    one (the target's median can hide a repeat that met it, or one that did not)."""
    parts = []
    calm_by_repeat = {r.get("repeat"): r for r in calm.get("repeats", [])}
    for loaded in over.get("repeats", []):
        unloaded = calm_by_repeat.get(loaded.get("repeat"))
        if unloaded is None:
            continue
        ratio = _p99_ratio(loaded, unloaded, digits=2)
        parts.append(
            f"{ratio} ({loaded['rps']:.0f} req/s admitted, the load generator's send lag p99 "
            f"{loaded.get('send_lag_p99_ms')} ms, other work {loaded.get('other_cpu_cores')} cores)"
        )
    return (
        f"{name}: admitted p99 at overload / unloaded p99 per repeat: {'; '.join(parts)}; the "
        "load generator and any other work share the cores with the app"
    )


#: A Procfile line: `NAME: COMMAND` (Heroku's format; `web` is the one that gets HTTP).
_PROCFILE_LINE = re.compile(r"\A([A-Za-z0-9_-]+):\s*(.+)\Z")
#: Options that would move the server off the socket the benchmark gives it.
_OTHER_SOCKETS = ("--uds", "--fd")


@dataclass(frozen=True)
class UserCommand:
    """A user's uvicorn or granian command line, read from a script or a Procfile."""

    server: AsgiServer
    args: tuple[str, ...]
    workers: int
    #: Started through gen uvicorn's TCP_NODELAY launcher (`python -c CODE uvicorn ...`).
    nodelay: bool = False

    def argv(self, host: str, port: int) -> list[str]:
        """The command, bound to `host:port` (the last --host/--port wins in both CLIs)."""
        from servertune.targets.asgi_servers import UVICORN_NODELAY_LAUNCHER

        if self.server == "uvicorn" and self.nodelay:
            start = [sys.executable, "-c", UVICORN_NODELAY_LAUNCHER, "uvicorn"]
        elif self.server == "uvicorn":
            start = [sys.executable, "-m", "uvicorn"]
        else:
            start = [str(Path(sys.executable).parent / "granian")]
        return [*start, *self.args, "--host", host, "--port", str(port)]


def is_command_file(path: Path) -> bool:
    """A shell script (.sh, or a `#!` first line) or a Procfile: a command line to read."""
    if path.suffix == ".sh" or path.name == "Procfile" or path.name.startswith("Procfile."):
        return True
    try:
        with path.open("rb") as handle:
            return handle.read(2) == b"#!"
    except OSError:
        return False


def read_user_command(path: Path, port: int) -> UserCommand:
    """The uvicorn or granian command line of a script or a Procfile (its `web` process, else
    its only one), checked by the server's own CLI; `$PORT` is the benchmark's port.
    Raises BenchInputError naming the file."""
    from servertune.bench.harness.report import BenchInputError
    from servertune.check.model import CheckInputError
    from servertune.check.scripts import command_line, read_script

    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BenchInputError(f"--against: cannot read {path}: {error}") from None
    if path.name == "Procfile" or path.name.startswith("Procfile."):
        processes = {
            match.group(1): match.group(2)
            for line in text.splitlines()
            if (match := _PROCFILE_LINE.match(line.strip()))
        }
        if not processes:
            raise BenchInputError(f"--against: {path}: no `NAME: COMMAND` line in this Procfile")
        if "web" not in processes and len(processes) > 1:
            raise BenchInputError(f"--against: {path}: several processes and none named `web`")
        text = processes.get("web") or next(iter(processes.values()))
    text = re.sub(r"\$\{PORT\}|\$PORT\b", str(port), text)
    try:
        server, args = command_line(path, text)
        parsed = read_script(path, text)
    except CheckInputError as error:
        raise BenchInputError(f"--against: {error}") from None
    if parsed.mapped_sockets or "$@" in args:
        raise BenchInputError(
            f"--against: {path}: a per-worker script starts one server per socket; give one "
            "command line"
        )
    if given := [a for a in args if a.split("=")[0] in _OTHER_SOCKETS]:
        raise BenchInputError(
            f"--against: {path}: {given[0]} binds a socket of its own; the benchmark binds "
            "the server to its TCP port (drop it)"
        )
    kind: AsgiServer = "uvicorn" if server == "uvicorn" else "granian"
    return UserCommand(kind, tuple(args), int(parsed.workers.value), parsed.listener_nodelay)
