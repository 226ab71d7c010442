"""What `bench app` was asked to run: the app, its paths and levels, validated (errors name the flag)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from servertune.bench.harness.report import BenchInputError
from servertune.bench.scenarios.app.user_commands import is_command_file

Interface = Literal["wsgi", "asgi"]

#: The most connections a --concurrency level may open: each is a file descriptor in the load
#: generator and two in nginx, and the default open-file limit is 1024.
MAX_CONCURRENCY = 1000


@dataclass(frozen=True)
class AppSizes:
    """Load seconds, repeats, the levels used (all, or 2 x cores only), and how long to measure."""

    seconds: float
    repeats: int
    all_levels: bool
    measure_requests: int
    measure_seconds: float
    #: Measure only what the verdict still needs (`harness.rounds.AdaptiveRounds`); False
    #: measures every candidate at every level `repeats` times.
    adaptive: bool = False
    #: An ASGI app's open-loop levels' seconds (overload twice that), where they differ from
    #: the closed-loop `seconds`.
    open_seconds: float | None = None


@dataclass(frozen=True)
class EntryPoint:
    """One way the project is served: its interface and callable, measured and planned."""

    interface: Interface
    app: str
    workload: Any
    plan: Any
    #: Each path's median figures from `servertune measure`.
    measured: list[dict[str, float]]


@dataclass(frozen=True)
class AppInput:
    """What `bench app` was asked to run, validated (errors name the flag)."""

    app: str
    paths: tuple[tuple[str, float], ...] = (("/", 1.0),)
    workload: Path | None = None
    against: tuple[Path, ...] = ()
    chdir: Path | None = None
    pythonpath: tuple[Path, ...] = ()
    #: `--static PREFIX=DIR`s, comma-joined: the Workload's `static` field.
    static: str | None = None
    #: `--interface`: None detects it as `servertune measure` does.
    interface: Literal["wsgi", "asgi"] | None = None
    #: `--concurrency`: the closed-loop levels (ascending); empty picks them from the plan.
    concurrency: tuple[int, ...] = ()
    #: `--only`: the candidates to run, by name; empty runs every one.
    only: tuple[str, ...] = ()
    #: `--replay`: the log's arrival times (`logs.arrivals.Arrivals`), played open loop to
    #: every layout after the other levels; None without --replay.
    replay: Any = None
    #: `--keep-log DIR`: each candidate's front writes its access log there (timed): nginx,
    #: or HAProxy where it takes nginx's place.
    keep_log: Path | None = None
    #: A name per --against file: its stem, made unique.
    against_names: tuple[str, ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        from servertune.workload import APP_PATTERN

        if not re.match(APP_PATTERN, self.app):
            raise BenchInputError(
                f"APP: must be module:callable made of Python identifiers; got {self.app!r}"
            )
        if not self.paths:
            raise BenchInputError("--path: give at least one")
        for path in (self.chdir, *self.pythonpath):
            if path is not None and not path.is_dir():
                raise BenchInputError(f"--chdir/--pythonpath: {path} is not a directory")
        # The Workload checks the syntax; a benchmark serves the files, so they must be here
        # (a missing directory ran a whole benchmark whose --static note said only "no file").
        for prefix, _, directory in (e.partition("=") for e in (self.static or "").split(",")):
            if directory and not Path(directory).is_dir():
                raise BenchInputError(
                    f"--static: {directory} is not a directory here (nginx serves {prefix} from it)"
                )
        names: list[str] = []
        for file in self.against:
            if not file.is_file() or (
                file.suffix not in (".py", ".ini") and not is_command_file(file)
            ):
                raise BenchInputError(
                    f"--against: {file} must be an existing gunicorn .py, uWSGI .ini, or a "
                    "script or Procfile that starts uvicorn or granian"
                )
            stem = re.sub(r"[^A-Za-z0-9_-]", "-", file.stem)[:40] or "config"
            name = f"against-{stem}"
            while name in names:
                name += "-2"
            names.append(name)
        object.__setattr__(self, "against_names", tuple(names))
        if self.keep_log is not None:
            from servertune.bench.harness.deployments import SAFE_LOG_PATH
            from servertune.files import links_to_nothing

            if links_to_nothing(self.keep_log):  # resolve() raises on a loop of links
                raise BenchInputError(
                    f"--keep-log: {self.keep_log} is a symbolic link to nothing (a missing "
                    "target, or links in a loop): not a directory to write into"
                )
            where = self.keep_log.resolve()
            if not SAFE_LOG_PATH.match(str(where / "x")):
                raise BenchInputError(
                    f"--keep-log: {str(where)[:200]!r}: nginx is given this path in its config; "
                    "use a directory whose path has only letters, digits and ._/+@=,:-"
                )
            if where.exists() and not where.is_dir():
                raise BenchInputError(f"--keep-log: {where} is not a directory")
            object.__setattr__(self, "keep_log", where)


def parse_path(text: str) -> tuple[str, float]:
    """`/x` or `/x=WEIGHT`, read as `servertune measure --path` reads it (one rule for both)."""
    from servertune.measure.errors import MeasureError
    from servertune.measure.target import parse_weighted_path

    try:
        weighted = parse_weighted_path(text)
    except MeasureError as error:
        raise BenchInputError(f"--path: {error.reason}") from None
    return weighted.path, weighted.weight


def parse_concurrency(text: str) -> tuple[int, ...]:
    """`8,32,128`: distinct whole numbers of connections, 1 to MAX_CONCURRENCY, ascending."""
    values: list[int] = []
    for part in text.split(","):
        word = part.strip()
        shown = repr(word if len(word) <= 20 else word[:20] + "...")
        if re.fullmatch(r"-[0-9]+", word) or re.fullmatch(r"0+", word):
            raise BenchInputError(f"--concurrency: {shown} must be at least 1 connection")
        if not re.fullmatch(r"[0-9]+", word):
            raise BenchInputError(
                f"--concurrency: {shown} is not a whole number of connections "
                "(give them comma-separated, e.g. 8,32,128)"
            )
        if len(word) > 6 or int(word) > MAX_CONCURRENCY:
            raise BenchInputError(
                f"--concurrency: {shown} is more than {MAX_CONCURRENCY} connections "
                "(each is an open file in the load generator and two in nginx)"
            )
        if int(word) in values:
            raise BenchInputError(f"--concurrency: {int(word)} is given twice")
        values.append(int(word))
    return tuple(sorted(values))


def sibling_entry_point(app: str, app_dir: Path) -> tuple[Interface, str] | None:
    """The other entry point of a Django project: (`wsgi`, `PKG.wsgi:application`) for
    `PKG.asgi:application` when the package's wsgi.py calls Django's `get_wsgi_application`
    (`django-admin startproject` writes both files), and the reverse; else None."""
    module, _, attr = app.partition(":")
    package, _, leaf = module.rpartition(".")
    if leaf not in ("asgi", "wsgi"):
        return None
    other: Interface = "wsgi" if leaf == "asgi" else "asgi"
    folder = app_dir.joinpath(*package.split(".")) if package else app_dir
    try:
        text = (folder / f"{other}.py").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if f"get_{other}_application" not in text:
        return None
    return other, f"{package + '.' if package else ''}{other}:{attr}"


def write_regular(path: Path, text: str, flag: str) -> None:
    """`text` written beside `path` and renamed over it: a reader never sees half a file, and
    only a regular file is ever replaced (BenchInputError naming `flag` otherwise)."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise BenchInputError(f"{flag}: {path} exists and is not a regular file")
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text)
        tmp.replace(path)
    except OSError as error:
        tmp.unlink(missing_ok=True)
        raise BenchInputError(f"{flag}: cannot write {path}: {error.strerror}") from None
