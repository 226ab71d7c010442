"""Your app under servertune's layouts and the ones people copy from docs: measure, plan, serve, compare.

`servertune bench app APP --path /x=3 --path /y=1` measures the app on each path (in a
`servertune measure` process of its own, so an app that hangs or crashes cannot take the
harness with it), mixes the paths by weight into one workload, plans it, and serves the app
under every candidate behind the same generated nginx:

* servertune's: `servertune-uwsgi` (one socket per worker + nginx least_conn),
  `servertune-gunicorn` (one single-worker gunicorn per socket) and `servertune-gthread`
  (gunicorn gthread on one socket), each exactly as `servertune gen` renders them;
* what people run today: `gunicorn-default` (`gunicorn APP`: 1 sync worker),
  `gunicorn-2n+1` (its docs' `(2 x cores) + 1` sync workers), `gunicorn-gthread-4` (gthread,
  `--threads 4` on that worker count) and `uwsgi-shared` (`processes = cores`, one thread, one
  shared socket);
* `--against FILE`: the user's own gunicorn.conf.py or uwsgi.ini, bound to the shared socket.

Before each candidate the harness proves its ports are free and the app answers 200 on every
path; after it, that every process of the candidate is gone. Load is wrk with a Lua script
spreading requests over the paths by weight (or the built-in client, its connections split by
weight), at cores, 2 x cores, the plan's request slots and 4 x cores connections, with repeats
interleaved. Answers >= 400 and socket errors are counted, never hidden in the throughput:
req/s counts successful answers only.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from servertune.bench.harness.report import BenchAppError, BenchInputError, Report, Target
from servertune.bench.harness.rounds import AdaptiveRounds, Rounds, band_range
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.bench.scenarios.app_asgi import (
    is_command_file,
    layouts_for,
    open_loop_rates,
    read_user_command,
)
from servertune.targets.layout import Backend, Layout

__all__ = [
    "CPU_KEYS",
    "NAIVE",
    "OURS",
    "AppBench",
    "AppInput",
    "AppSizes",
    "EntryPoint",
    "cpu_per_request",
    "default_levels",
    "parse_concurrency",
    "parse_path",
    "sibling_entry_point",
]

Interface = Literal["wsgi", "asgi"]

#: servertune's candidates, and the layouts people copy from docs (table order: naive first).
OURS = ("servertune-uwsgi", "servertune-gunicorn", "servertune-gthread")
NAIVE = ("gunicorn-default", "gunicorn-2n+1", "gunicorn-gthread-4", "uwsgi-shared")
#: The threads of the docs' gthread candidate.
NAIVE_GTHREADS = 4
#: A spread narrower than this fraction of the median is widened to it before two candidates'
#: spreads are compared: bench balance measured run-to-run differences of about 5% in medians
#: on a shared 2-core machine, so a single run (or repeats that happen to agree) is not trusted
#: more closely than that.
NOISE_BAND = 0.05
#: The I/O-bound target: servertune's best >= 1.2x gunicorn's 2n+1 at >= 2 x cores.
IO_BOUND_TARGET = 1.2
#: Below this measured cpu_fraction the app counts as I/O-bound for that target.
IO_BOUND_CPU_FRACTION = 0.5
#: The CPU figures of a run row (`cpu_per_request`), in table order.
CPU_KEYS = (
    "app_cpu_ms_per_req",
    "proxy_cpu_ms_per_req",
    "load_cpu_ms_per_req",
    "ceiling_rps",
    "app_ceiling_rps",
)
#: Extra seconds a `servertune measure` process gets beyond its own time limit.
MEASURE_GRACE_S = 15.0
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


def default_levels(cores: int, ceiling: int) -> list[int]:
    """Connections doubling from `cores` to the first level past the plan's `ceiling` (its
    request slots, or the requests nginx admits): the curve has no hole up to where the plan
    stops admitting."""
    levels = [max(1, cores)]
    while levels[-1] <= ceiling and levels[-1] * 2 <= MAX_CONCURRENCY:
        levels.append(levels[-1] * 2)
    return levels


def _lua_string(text: str) -> str:
    """A Lua string literal for a request target (visible ASCII: only \\ and " need escaping)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def wrk_lua(paths: tuple[tuple[str, float], ...]) -> str:
    """A wrk request() choosing each path with its weight's share of the requests."""
    total = sum(w for _, w in paths)
    cumulative, entries = 0.0, []
    for path, weight in paths:
        cumulative += weight / total
        entries.append(f"{{{min(cumulative, 1.0):.6f}, {_lua_string(path)}}}")
    return (
        f"local paths = {{{', '.join(entries)}}}\n"
        "request = function()\n"
        "  local r = math.random()\n"
        "  for _, p in ipairs(paths) do\n"
        "    if r <= p[1] then return wrk.format('GET', p[2]) end\n"
        "  end\n"
        "  return wrk.format('GET', paths[#paths][2])\n"
        "end\n"
    )


def split_connections(paths: tuple[tuple[str, float], ...], connections: int) -> list[int]:
    """Connections per path for the built-in client, by weight (largest remainder, >= 1 each)."""
    total = sum(w for _, w in paths)
    exact = [connections * w / total for _, w in paths]
    counts = [max(1, math.floor(x)) for x in exact]
    order = sorted(range(len(paths)), key=lambda i: exact[i] - math.floor(exact[i]), reverse=True)
    for i in order:
        if sum(counts) >= connections:
            break
        counts[i] += 1
    return counts


class AppBench(BaseScenario[AppSizes]):
    """Measure the app, plan it, and serve it under every candidate behind the same nginx."""

    name = "app"
    needs = ("gunicorn", "uwsgi")
    sizes = QuickFull(
        # Adaptive with one repeat: the same measurements as a fixed run, through the default
        # run's rounds (so the quick tests drive them with real servers).
        quick=AppSizes(
            seconds=1.0,
            repeats=1,
            all_levels=False,
            measure_requests=20,
            measure_seconds=5.0,
            adaptive=True,
        ),
        # 3 s per load, half the thorough run's, so the default fits about 10 minutes. Its
        # repeats spread wider (on /io below saturation: beyond +-5% in 8 of 24 layout-levels,
        # against 0 of 18 at 6 s on a quieter day; docs/benchmarks.md): wider ranges make the
        # verdict read "no clear difference" sooner; they do not hide noise.
        full=AppSizes(
            seconds=3.0,
            repeats=3,
            all_levels=True,
            measure_requests=200,
            measure_seconds=30.0,
            adaptive=True,
        ),
        thorough=AppSizes(
            seconds=6.0, repeats=3, all_levels=True, measure_requests=200, measure_seconds=30.0
        ),
    )
    has_plot = True

    # --- setup: measure, plan -------------------------------------------------------------

    def setup(self, run: Run[AppSizes]) -> None:
        """Measure every path, mix them by weight, plan; pick the load levels."""
        from servertune.bench.harness.wrk import find_wrk
        from servertune.machine import Machine
        from servertune.sizing import plan_for
        from servertune.workload import WorkloadError, load_workload

        given = run.options.extra.get("app")
        if not isinstance(given, AppInput):
            raise BenchInputError("APP: `servertune bench app` needs the app to serve")
        self.input = given
        self.tool = "wrk" if find_wrk() else "builtin"
        self.cores = Machine.read().cores
        self.env = self._server_env()
        app_dir = (given.chdir or Path.cwd()).resolve()
        self.layouts = {layout.name: layout for layout in layouts_for(self.cores)}
        # A Django project's asgi.py beside its wsgi.py: both entry points, unless --interface
        # pins one. The given one's interface is then the other's opposite.
        sibling = None if given.interface else sibling_entry_point(given.app, app_dir)
        apps: list[tuple[str, Interface | None]] = []
        if sibling is not None:
            other: Interface = "asgi" if sibling[0] == "wsgi" else "wsgi"
            both: list[tuple[str, Interface]] = [(given.app, other), (sibling[1], sibling[0])]
            apps = [(a, i) for a, i in both if self._side_chosen(i)]
        if not apps:
            apps = [(given.app, given.interface)]
        self.entries: dict[Interface, EntryPoint] = {}
        for app_name, interface in apps:
            mix, measured = self._measure(run, app_name, interface)
            chosen: Interface = interface or mix.get("interface", "wsgi")
            overrides: dict[str, Any] = {
                "cores": self.cores,
                "service_time_ms": mix["service_time_ms"],
                "cpu_fraction": mix["cpu_fraction"],
                "interface": chosen,
                **{k: mix[k] for k in ("loop_blocking_fraction", "gil") if k in mix},
                "app": app_name,
                # Where the app is imported from: --chdir, else here (as `servertune measure` does).
                "app_dir": str(app_dir),
                "static": given.static,
            }
            try:
                workload = load_workload(
                    given.workload, overrides, flags={"static": "--static", "app_dir": "--chdir"}
                )
            except WorkloadError as error:
                raise BenchInputError(str(error)) from None
            self.entries[chosen] = EntryPoint(
                chosen, app_name, workload, plan_for(workload), measured
            )
        self._use(next(iter(self.entries)))
        ceiling = max(
            (e.plan.admission_limit if i == "asgi" else None) or e.plan.processes * e.plan.threads
            for i, e in self.entries.items()
        )
        if given.concurrency:
            self.level_counts = list(given.concurrency)
        elif run.size.all_levels:
            self.level_counts = default_levels(self.cores, ceiling)
        else:
            self.level_counts = [2 * self.cores]
        self._setup_against()
        #: The open-loop levels' path: the heaviest by weight (the first of equals).
        self.open_path = max(given.paths, key=lambda p: p[1])[0]
        #: The plan each candidate last served with (for the rows' workers and threads).
        self.served_plans: dict[str, Any] = {}
        #: Each candidate's server command line (for the report's "reproduce" section).
        self.commands: dict[str, str] = {}
        #: Per --static prefix: the file nginx served before every candidate's load (path,
        #: bytes), or None when its directory has no file to ask for.
        self.static_served: dict[str, tuple[str, int] | None] = {}

    @property
    def dual(self) -> bool:
        """Whether both entry points of the project are benched in this run."""
        return len(self.entries) == 2

    def _use(self, interface: Interface) -> None:
        """Serve, measure and summarize through this entry point from now on."""
        entry = self.entries[interface]
        self.interface: Interface = interface
        self.app = entry.app
        self.workload = entry.workload
        self.plan = entry.plan
        self.measured = entry.measured

    def _side_chosen(self, interface: Interface) -> bool:
        """Whether --only (if given) names a candidate served through this interface."""
        if not self.input.only:
            return True
        names = self._known(interface)
        return any(n in names for n in self.input.only)

    def _known(self, interface: Interface) -> list[str]:
        """Every candidate of one interface, --only aside, in table order."""
        commands = [n for n, f in zip(self.input.against_names, self.input.against, strict=True)
                    if is_command_file(f)]  # fmt: skip
        files = [n for n in self.input.against_names if n not in commands]
        if interface == "asgi":
            copied = [n for n, layout in self.layouts.items() if not layout.ours]
            ours = [n for n, layout in self.layouts.items() if layout.ours]
            return [*copied, *commands, *ours]
        return [*NAIVE, *files, *OURS]

    def interface_of(self, config: str) -> Interface:
        """The entry point `config` serves (its server's interface)."""
        if len(self.entries) == 1:
            return next(iter(self.entries))
        return "asgi" if config in self._known("asgi") else "wsgi"

    def _setup_against(self) -> None:
        """Each --against command line read and checked, and every --against file fitting an
        entry point benched; --only's names known and on both sides of a comparison."""
        self.user_commands = {}
        for name, file in zip(self.input.against_names, self.input.against, strict=True):
            if not is_command_file(file):
                if "wsgi" not in self.entries:
                    raise BenchInputError(
                        f"--against: {file} configures a WSGI server; {self.input.app} is an "
                        "ASGI app (give its uvicorn or granian command line, or --interface wsgi)"
                    )
                continue
            if "asgi" not in self.entries:
                raise BenchInputError(
                    f"--against: {file} starts uvicorn or granian; {self.input.app} is a WSGI app "
                    "(give a gunicorn .py or uWSGI .ini, or --interface asgi)"
                )
            self.user_commands[name] = read_user_command(file, port=8000)
        if self.input.only:
            known = self.configs_known()
            if unknown := [n for n in self.input.only if n not in known]:
                raise BenchInputError(
                    f"--only: no candidate {unknown[0]!r} for this app; one of {', '.join(known)}"
                )
            chosen = set(self.input.only)
            for interface in self.entries:
                ours = set(self._ours_known(interface))
                side = chosen & set(self._known(interface))
                if not side & ours or not side - ours:
                    raise BenchInputError(
                        "--only: name at least one of servertune's candidates and one other"
                        + (f" served through {interface.upper()}" if self.dual else "")
                        + ", to compare them"
                    )

    def _ours_known(self, interface: Interface) -> list[str]:
        if interface == "asgi":
            return [n for n, layout in self.layouts.items() if layout.ours]
        return list(OURS)

    def configs_known(self) -> list[str]:
        """Every candidate this app can run, --only aside: each entry point's in turn."""
        return [n for interface in self.entries for n in self._known(interface)]

    def _server_env(self) -> dict[str, str]:
        """PYTHONPATH for --pythonpath; uWSGI told about a virtualenv the harness runs in."""
        env: dict[str, str] = {}
        extra = [str(p.resolve()) for p in self.input.pythonpath]
        if extra:
            env["PYTHONPATH"] = os.pathsep.join([*extra, os.environ.get("PYTHONPATH", "")])
        if sys.prefix != sys.base_prefix:
            # Read by uWSGI as its `virtualenv` option: the app's packages live there.
            env["UWSGI_VIRTUALENV"] = sys.prefix
        return env

    def _measure(
        self, run: Run[AppSizes], app: str, interface: Interface | None
    ) -> tuple[dict[str, Any], list[dict[str, float]]]:
        """`servertune measure APP --path P=W ...` in a process of its own, bounded in time:
        the weighted mix's workload values, and each path's median figures."""
        from servertune.bench.harness.supervision import ServerError
        from servertune.workload_file import read_workload_file

        out = run.stack.dir / "measured.toml"
        argv = [sys.executable, "-m", "servertune", "measure", app]
        for path, weight in self.input.paths:
            argv += ["--path", f"{path}={weight:g}"]
        argv += [
            "--requests", str(run.size.measure_requests),
            "--max-seconds", str(run.size.measure_seconds),
            "--app-dir", str((self.input.chdir or Path.cwd()).resolve()),
            "--out", str(out),
        ]  # fmt: skip
        if interface:
            argv += ["--interface", interface]
        # measure interrupts a request at twice its time budget; this bounds the whole process.
        timeout = len(self.input.paths) * 2 * run.size.measure_seconds + MEASURE_GRACE_S
        run.progress.show(f"measuring {app} on {len(self.input.paths)} path(s)")
        try:
            done = run.stack.run("measure", argv, timeout_s=timeout, env=self.env)
        except ServerError:
            raise BenchAppError(f"measure: {app} did not answer within {timeout:g} s") from None
        if done.returncode != 0:
            raise _measure_error(app, done.returncode, done.stderr)
        measured = read_workload_file(out)
        per_path = [
            {"service_time_ms": p.service_time_ms.p50, "cpu_fraction": p.cpu_fraction.p50}
            for p in (measured.measured.paths if measured.measured else ())
        ]
        return measured.values, per_path

    # --- candidates ---------------------------------------------------------------------------

    def configs(self, run: Run[AppSizes]) -> list[str]:
        """The naive candidates, the user's own, then servertune's (those --only names)."""
        every = self.configs_known()
        return [n for n in every if n in self.input.only] if self.input.only else every

    def _side_configs(self, run: Run[AppSizes]) -> list[str]:
        """The candidates served through the entry point in use."""
        return [c for c in self.configs(run) if self.interface_of(c) == self.interface]

    def _naive(self, run: Run[AppSizes]) -> list[str]:
        return [c for c in self.configs(run) if c in NAIVE]

    def _ours(self, run: Run[AppSizes]) -> list[str]:
        return [c for c in self.configs(run) if c in OURS]

    def levels(self, run: Run[AppSizes], config: str) -> list[Level]:
        """--concurrency, else doubling from cores past the plan's ceiling (2 x cores only with
        --quick); an ASGI app's also unloaded and overload (open loop) around them."""
        closed = [Level(n) for n in self.level_counts]
        if self.interface_of(config) == "asgi":
            return [Level(role="unloaded"), *closed, Level(role="overload")]
        return closed

    def rounds(self, run: Run[AppSizes], order: list[tuple[str, list[Level]]]) -> Rounds:
        """The default run: only what the verdict still needs (`AdaptiveRounds`): the climb
        stops where every candidate has saturated, candidates clearly behind are dropped after
        the first round, a level is repeated until its verdict is settled. --thorough and
        --quick: every candidate at every level, every repeat."""
        if not run.size.adaptive:
            return super().rounds(run, order)
        return AdaptiveRounds(
            list(order),
            side={c: (self.interface_of(c), self._side_of(c)) for c, _ in order},
            ranked=lambda level: level.role != "unloaded",
            climb=lambda level: level.concurrency is not None,
            value=lambda level, row: float(row["good_rps" if level.role == "overload" else "rps"]),
            # The unloaded p99 is the overload target's baseline: measured again with overload.
            paired=lambda level: level.role == "overload",
            max_repeats=run.repeats,
            band=NOISE_BAND,
        )

    def _side_of(self, config: str) -> str:
        """ "ours", "copied" (what the verdict compares against) or "user" (--against on WSGI)."""
        if config in OURS or (config in self.layouts and self.layouts[config].ours):
            return "ours"
        if self.interface_of(config) == "wsgi" and config not in NAIVE:
            return "user"
        return "copied"

    def start(self, run: Run[AppSizes], config: str) -> Any:
        """Prove the ports free, start the candidate behind nginx, prove 200 on every path."""
        from servertune.bench.harness.deployments import wait_answer
        from servertune.bench.harness.ports import listening_ports
        from servertune.bench.harness.supervision import ServerError

        self._use(self.interface_of(config))
        try:
            if self.interface == "asgi":
                plan, deployment = self._deploy_asgi(run, config)
            else:
                plan, deployment = self._deploy(run, config)
        except ServerError as error:
            raise BenchAppError(f"candidate {config}: {_first_line(error)}") from None
        self.served_plans[config] = plan
        for path, _ in self.input.paths:
            try:
                status = wait_answer(deployment.url, path)
            except ServerError as error:
                raise BenchAppError(f"candidate {config}: {_first_line(error)}") from None
            if status != 200:
                raise BenchAppError(
                    f"candidate {config}: GET {path} answered HTTP {status}, not 200 "
                    "(the app failed: see its own log)"
                )
        self._prove_static(config, deployment.url)
        assert deployment.nginx.ports[0] in listening_ports()
        return deployment

    def _prove_static(self, config: str, url: str) -> None:
        """GET one file under each --static prefix through nginx: its exact bytes, or an error.
        The app servers never see these prefixes (nginx answers them from the directory)."""
        from servertune.bench.harness.deployments import http_get
        from servertune.bench.harness.supervision import READY_TIMEOUT_S

        for prefix, directory in self.workload.static_dirs:
            probe = static_probe(Path(directory))
            if probe is None:
                self.static_served.setdefault(prefix, None)
                continue
            path = prefix + probe.name
            try:
                status, body = http_get(url, path, READY_TIMEOUT_S)
            except OSError as error:
                raise BenchAppError(f"candidate {config}: --static GET {path}: {error}") from None
            if status != 200 or body != probe.read_bytes():
                raise BenchAppError(
                    f"candidate {config}: --static GET {path} answered HTTP {status}, not the "
                    f"{probe.stat().st_size} bytes of {probe} (nginx did not serve it; its workers "
                    "must be able to read the directory)"
                )
            self.static_served[prefix] = (path, len(body))

    def _deploy_asgi(self, run: Run[AppSizes], config: str) -> tuple[Any, Any]:
        """servertune's ASGI file for the layout, a copied command line or the user's, behind
        nginx (the copied ones and the user's without an admission limit)."""
        from servertune.bench.harness.deployments import deploy_asgi, place
        from servertune.bench.harness.ports import listening_ports
        from servertune.bench.harness.supervision import ServerError
        from servertune.bench.scenarios.app_asgi import Copied, docs_workers
        from servertune.sizing import Forced, plan_for

        workload = place(
            self.workload, run.stack, max(self.plan.processes, docs_workers(self.cores)),
            app_dir=self.workload.app_dir,
        )  # fmt: skip
        layout = self.layouts.get(config)
        argv: list[str] | None = None
        if layout is not None and layout.ours:
            plan = plan_for(workload)
        else:
            user = self.user_commands.get(config)
            workers = (
                user.workers if user else layout.workers(self.cores)  # type: ignore[union-attr,misc]
            )
            why = "forced by the benchmark: the command line's workers, no admission limit"
            plan = plan_for(
                workload,
                forced={"processes": Forced(workers, why), "admission_limit": Forced(None, why)},
            )
            port = plan.shared_socket.port
            assert port is not None
            copied = Copied(self.app, str(self.workload.app_dir), "127.0.0.1", port, self.cores)
            argv = user.argv("127.0.0.1", port) if user else layout.command(copied)  # type: ignore[union-attr,misc]
        ports = {workload.listen_port, *(s.port for s in plan.sockets if s.port is not None)}
        if taken := sorted(ports & listening_ports()):
            raise ServerError(f"port(s) {taken} already in use before the start")
        server = layout.server if layout else self.user_commands[config].server
        deployment = deploy_asgi(
            run.stack, f"{config}-{run.repeat}", plan, server, argv=argv,
            per_worker=bool(layout and layout.per_worker), env=self.env,
            cwd=Path(str(self.workload.app_dir)), ready_path=None,
        )  # fmt: skip
        self.commands.setdefault(config, (argv and shlex.join(argv)) or self._gen_command(layout))
        return plan, deployment

    def _gen_command(self, layout: Any) -> str:
        """The `servertune gen` lines that write a servertune layout's files for this workload."""
        w = self.workload
        target = {"gunicorn-asgi": "gunicorn-asgi"}.get(layout.server, layout.server)
        suffix = "-per-worker" if layout.per_worker else ""
        flags = [
            "--cores", str(w.cores), "--interface", "asgi",
            "--service-time-ms", f"{w.service_time_ms:g}", "--cpu-fraction", f"{w.cpu_fraction:g}",
            *(["--loop-blocking-fraction", f"{w.loop_blocking_fraction:g}"]
              if w.loop_blocking_fraction is not None else []),
            "--app", w.app, "--app-dir", str(w.app_dir),
        ]  # fmt: skip
        return " && ".join(
            shlex.join(["servertune", "gen", name, *flags])
            for name in (f"{target}{suffix}", f"nginx-asgi{suffix}")
        )

    def _deploy(self, run: Run[AppSizes], config: str) -> tuple[Any, Any]:
        from servertune.bench.harness.deployments import (
            deploy_command,
            deploy_gunicorn,
            deploy_uwsgi,
            place,
        )
        from servertune.bench.harness.ports import listening_ports
        from servertune.bench.harness.supervision import ServerError, tool_path
        from servertune.sizing import Forced, plan_for

        # place() would point app_dir at the stack's directory (where bundled apps live).
        workload = place(
            self.workload, run.stack, max(self.plan.processes, 2), app_dir=self.workload.app_dir
        )
        forced = {}
        if config == "uwsgi-shared":
            why = "forced by the benchmark: processes = cores, one thread, one shared socket"
            forced = {"processes": Forced(self.cores, why), "threads": Forced(1, why)}
        plan = plan_for(workload, forced=forced)
        ports = {workload.listen_port, *(s.port for s in plan.sockets if s.port is not None)}
        if taken := sorted(ports & listening_ports()):
            raise ServerError(f"port(s) {taken} already in use before the start")
        name = f"{config}-{run.repeat}"
        if config == "servertune-uwsgi":
            return plan, deploy_uwsgi(
                run.stack, name, plan, layout="per-worker", env=self.env, ready_path=None
            )
        if config == "uwsgi-shared":
            return plan, deploy_uwsgi(
                run.stack, name, plan, layout="shared", env=self.env, ready_path=None
            )
        if config in ("servertune-gunicorn", "servertune-gthread"):
            layout: Layout = "per-worker" if config == "servertune-gunicorn" else "shared"
            return plan, deploy_gunicorn(
                run.stack, name, plan, layout=layout, env=self.env, ready_path=None
            )
        bind = plan.shared_socket.endpoint
        chdir = ["--chdir", str(self.workload.app_dir)]
        gunicorn = [sys.executable, "-m", "gunicorn", "--bind", bind, *chdir]
        app = self.app
        docs_workers = str(2 * self.cores + 1)
        argv = {
            "gunicorn-default": [*gunicorn, app],
            "gunicorn-2n+1": [*gunicorn, "--workers", docs_workers, app],
            "gunicorn-gthread-4": [
                *gunicorn, "--workers", docs_workers, "--worker-class", "gthread",
                "--threads", str(NAIVE_GTHREADS), app,
            ],
        }.get(config)  # fmt: skip
        backend: Backend = "gunicorn"
        if argv is None:  # the user's own file
            file = self.input.against[self.input.against_names.index(config)].resolve()
            if file.suffix == ".py":
                argv = [*gunicorn[:3], "-c", str(file), "--bind", bind, *chdir, app]
            else:
                backend = "uwsgi"
                argv = [tool_path("uwsgi"), "--ini", str(file), "--socket", bind]
        self.commands.setdefault(config, shlex.join(argv))
        # ready_path=None: start() checks every path itself, so a 500 is named, not waited out.
        return plan, deploy_command(
            run.stack, name, plan, backend, argv, env=self.env, ready_path=None
        )

    # --- load ------------------------------------------------------------------------------

    def measure(self, run: Run[AppSizes], config: str, served: Any, level: Level) -> dict[str, Any]:
        """Load through nginx at `level` connections, the paths mixed by weight (an ASGI app's
        unloaded and overload levels: open-loop arrivals on its heaviest path)."""
        from servertune.bench.harness.client import Users, run_builtin
        from servertune.bench.harness.load import LoadResult
        from servertune.bench.harness.stats import CpuWatch
        from servertune.bench.harness.wrk import REFUSED_LUA, run_wrk

        self._use(self.interface_of(config))
        # Every load starts on an idle app, not behind what the last level left queued (as in
        # bench balance: a few hundred ms in the next level's p99 otherwise).
        served.wait_idle()
        if level.concurrency is None:
            return self._measure_open(run, config, served, level.role)
        paths = self.input.paths
        result: LoadResult
        parts = {"app": served.app_cpu_seconds, "proxy": served.nginx.cpu_seconds}
        with CpuWatch(served.cpu_seconds, parts) as watch:
            if self.tool == "wrk":
                result = run_wrk(
                    served.url,
                    connections=level.concurrency,
                    duration_s=run.size.seconds,
                    lua=(REFUSED_LUA if self.interface == "asgi" else "") + wrk_lua(paths),
                )
            else:
                counts = split_connections(paths, level.concurrency)
                groups = [Users(p, n) for (p, _), n in zip(paths, counts, strict=True)]
                parts = run_builtin(served.url, groups, duration_s=run.size.seconds)
                result = _merge(list(parts.values()), level.concurrency, run.size.seconds)
        good = max(0, result.requests - result.non_2xx) if self.tool == "wrk" else result.requests
        plan = self.served_plans[config]
        metrics = result.metrics()
        row: dict[str, Any] = {
            "config": config,
            "concurrency": level.concurrency,
            "rps": round(good / max(result.duration_s, 1e-9), 2),
            "p50_ms": metrics["p50_ms"],
            "p90_ms": metrics["p90_ms"],
            "p99_ms": metrics["p99_ms"],
            "max_ms": metrics["max_ms"],
            "errors": result.non_2xx + result.socket_errors,
            "non_2xx": result.non_2xx,
            "socket_errors": result.socket_errors,
            "requests": result.requests,
            "repeat": run.repeat,
            "processes": self._processes(config, plan),
            **cpu_per_request(
                self.cores,
                result.requests,
                app_s=watch.part_seconds["app"],
                proxy_s=watch.part_seconds["proxy"],
                load_s=watch.load_seconds,
            ),
            "other_cpu_cores": round(watch.other_cores, 2),
        }
        if self.interface == "asgi":
            # 503s are the load nginx sheds on purpose: counted apart from the errors.
            refused = result.refused_503 or 0
            row["load"] = "closed"
            row["refused_503"] = refused
            row["shed"] = round(refused / result.requests, 3) if result.requests else 0.0
            row["errors"] = row["errors"] - refused
            row["non_2xx"] = row["non_2xx"] - refused
        return row

    def _measure_open(
        self, run: Run[AppSizes], config: str, served: Any, role: str
    ) -> dict[str, Any]:
        """Open-loop Poisson arrivals on the heaviest path at the role's rate (a share or a
        multiple of the plan's capacity)."""
        from servertune.bench.harness.open_loop import run_open_loop
        from servertune.bench.harness.stats import CpuWatch
        from servertune.bench.scenarios.app_asgi import (
            CLIENT_TIMEOUT_S,
            QUICK_CLIENT_TIMEOUT_S,
            open_loop_rates,
            open_loop_row,
        )

        path = self.open_path
        rate = open_loop_rates(float(self.plan.asgi_capacity_rps or 0))[role]
        # Full runs: overload twice as long (its queue must build); quick: both half as long.
        if run.size.all_levels:
            seconds = run.size.seconds * (2 if role == "overload" else 1)
        else:  # a smoke run: at 4 x capacity half a second is hundreds of requests
            seconds = run.size.seconds * 0.5
        parts = {"app": served.app_cpu_seconds, "proxy": served.nginx.cpu_seconds}
        with CpuWatch(served.cpu_seconds, parts) as watch:
            result = run_open_loop(
                served.url.rstrip("/") + path, rate=rate, duration_s=seconds,
                timeout_s=CLIENT_TIMEOUT_S if run.size.all_levels else QUICK_CLIENT_TIMEOUT_S,
            )  # fmt: skip
        return {
            "config": config,
            "load": role,
            "concurrency": None,
            **open_loop_row(result),
            "repeat": run.repeat,
            "processes": self._processes(config, self.served_plans[config]),
            **cpu_per_request(
                self.cores, result.ok,
                app_s=watch.part_seconds["app"], proxy_s=watch.part_seconds["proxy"],
                load_s=watch.load_seconds,
            ),
            "other_cpu_cores": round(watch.other_cores, 2),
        }  # fmt: skip

    def _processes(self, config: str, plan: Any) -> int | None:
        """Worker processes the candidate runs (None: set by the user's file)."""
        if self.interface == "asgi":
            return int(plan.processes)
        if config.startswith("against-"):
            return None
        if config == "gunicorn-default":
            return 1
        return 2 * self.cores + 1 if config.startswith("gunicorn-") else int(plan.processes)

    # --- report ------------------------------------------------------------------------------

    def summarize(self, run: Run[AppSizes], results: Results) -> Report:
        """Medians with the spread of repeats, ratios against the best naive, verdicts; with
        both entry points, each one's report and which of them to deploy."""
        if self.dual:
            return self._summarize_dual(run, results)
        if self.interface == "asgi":
            return self._summarize_asgi(run, results)
        return self._summarize_wsgi(run, results)

    def _summarize_dual(self, run: Run[AppSizes], results: Results) -> Report:
        """Both entry points: each one's rows, verdicts and targets (tagged WSGI or ASGI), led by
        which to deploy: servertune's best layout of each, compared at every closed level."""
        sides: dict[Interface, Report] = {}
        for interface in self.entries:
            self._use(interface)
            sides[interface] = (
                self._summarize_asgi(run, results)
                if interface == "asgi"
                else self._summarize_wsgi(run, results)
            )
        report = Report(scenario=self.name, runs=[], ceiling_rps=sides["wsgi"].ceiling_rps)
        tagged: list[str] = []
        for interface, side in sides.items():
            tag = interface.upper()
            for row in side.runs:
                report.runs.append({"interface": interface, "load": "closed", **row})
            report.ratios.update({f"{tag} {k}": v for k, v in side.ratios.items()})
            for target in side.targets:
                target.name = f"{tag}: {target.name}"
                report.targets.append(target)
            for note in side.notes:
                if note.startswith("verdict "):
                    tagged.append(f"verdict {tag} {note.removeprefix('verdict ')}")
                elif note.startswith("c="):
                    tagged.append(f"verdict {tag} {note}")
                else:
                    tagged.append(f"{tag}: {note}")
            report.versions.update(side.versions)
            report.commands.update(side.commands)
            report.verdicts.extend({**v, "level": f"{tag} {v['level']}"} for v in side.verdicts)
        report.notes = [*self._entry_verdicts(report), *tagged]
        return report

    def _entry_verdicts(self, report: Report) -> list[str]:
        """Which entry point to deploy: at each closed level, servertune's best layout served
        through WSGI against its best through ASGI (req/s, the repeats' spread); one line first
        saying which wins, then one per level. Adds the ratios WSGI / ASGI to `report`."""
        apps = {i: e.app for i, e in self.entries.items()}
        wins: dict[str, list[int]] = {"WSGI": [], "ASGI": [], "none": []}
        lines = []
        for level in self.level_counts:
            best: dict[Interface, dict[str, Any]] = {}
            for interface in self.entries:
                rows = [
                    r for r in report.runs
                    if r["interface"] == interface and r["load"] == "closed"
                    and r.get("concurrency") == level
                    and r["config"] in self._ours_known(interface)
                ]  # fmt: skip
                if rows:
                    best[interface] = max(rows, key=lambda r: r["rps"])
            if len(best) < 2:
                continue  # above where every candidate saturated
            w, a = best["wsgi"], best["asgi"]
            verdict = verdict_of(w, a)
            winner = {"servertune faster": "WSGI", "naive faster": "ASGI"}.get(verdict, "none")
            wins[winner].append(level)
            ratio = round(w["rps"] / a["rps"], 3) if a["rps"] else None
            report.ratios[
                f"entry point: {w['config']} (WSGI) / {a['config']} (ASGI) req/s at c={level}"
            ] = ratio if ratio is not None else float("nan")
            said = "no clear difference" if winner == "none" else f"{winner} faster"
            lines.append(
                f"verdict entry point c={level}: {said}: WSGI {apps['wsgi']} under {w['config']} "
                f"{w['rps']:.1f} req/s ({w['rps_low']:.1f}-{w['rps_high']:.1f}), p99 "
                f"{w['p99_ms']} ms; ASGI {apps['asgi']} under {a['config']} {a['rps']:.1f} req/s "
                f"({a['rps_low']:.1f}-{a['rps_high']:.1f}), p99 {a['p99_ms']} ms; WSGI / ASGI = "
                + (f"{ratio:.2f}x" if ratio is not None else "-")
            )

        def at(levels: list[int]) -> str:
            return ", ".join(f"c={n}" for n in levels)

        if wins["WSGI"] and wins["ASGI"]:
            head = (
                f"it depends on the load: WSGI ({apps['wsgi']}) faster at {at(wins['WSGI'])}, "
                f"ASGI ({apps['asgi']}) at {at(wins['ASGI'])}"
            )
        elif wins["WSGI"] or wins["ASGI"]:
            side = "WSGI" if wins["WSGI"] else "ASGI"
            head = (
                f"deploy the {side} entry point, {apps[side.lower()]} (faster at "  # type: ignore[index]
                f"{at(wins[side])}"
                + (f"; no clear difference at {at(wins['none'])}" if wins["none"] else "")
                + ")"
            )
        else:
            head = (
                f"no clear difference between the entry points ({apps['wsgi']} and "
                f"{apps['asgi']}) at {at(wins['none'])}: the repeats' ranges overlap"
            )
        return [
            (
                f"verdict entry point: {head}; servertune's best layout of each, by req/s at "
                "each closed level"
            ),
            *lines,
        ]

    def _summarize_wsgi(self, run: Run[AppSizes], results: Results) -> Report:
        """Per closed level: medians with the repeats' spread, the best servertune layout
        against the best naive one in words; the ceiling and CPU split."""
        from servertune.bench.harness.versions import dist_version, tool_versions

        runs: list[dict[str, Any]] = []
        report = Report(scenario=self.name, runs=runs)
        notes: list[str] = []
        for level in self.level_counts:
            rows = {}
            for config in self._side_configs(run):
                if (config, Level(level)) not in results.samples:
                    continue  # above where every candidate saturated, or dropped as behind
                samples = results.rows(config, Level(level))
                row = results.median(config, Level(level))
                for key in ("repeat", "other_cpu_cores", "requests"):  # kept under `repeats`
                    row.pop(key, None)
                row["errors"] = sum(s["errors"] for s in samples)
                row["non_2xx"] = sum(s["non_2xx"] for s in samples)
                row["socket_errors"] = sum(s["socket_errors"] for s in samples)
                low, high = spread([s["rps"] for s in samples])
                row["rps_low"], row["rps_high"] = round(low, 2), round(high, 2)
                rows[config] = row
            if not any(c in rows for c in self._naive(run)) or not any(
                c in rows for c in self._ours(run)
            ):
                continue
            best_naive = max(
                (c for c in self._naive(run) if c in rows), key=lambda c: rows[c]["rps"]
            )
            best_ours = max((c for c in self._ours(run) if c in rows), key=lambda c: rows[c]["rps"])
            base = rows[best_naive]["rps"]
            for row in rows.values():
                row["x_best_naive"] = round(row["rps"] / base, 2) if base else None
                ceiling = row.get("ceiling_rps")
                row["x_ceiling"] = round(row["rps"] / ceiling, 2) if ceiling else None
                runs.append(row)
            ours, theirs = rows[best_ours], rows[best_naive]
            verdict = verdict_of(ours, theirs)
            report.verdicts.append(
                verdict_record(
                    f"c={level}", "req/s", best_ours, ours, best_naive, theirs, "rps", verdict
                )
            )
            report.ratios[f"{best_ours}/{best_naive} req/s at c={level}"] = (
                ours["x_best_naive"] or 0.0
            )
            notes.append(
                f"c={level}: {verdict}: best servertune {best_ours} {ours['rps']:.1f} req/s "
                f"({ours['rps_low']:.1f}-{ours['rps_high']:.1f}), p99 {ours['p99_ms']} ms; best "
                f"naive {best_naive} {theirs['rps']:.1f} req/s "
                f"({theirs['rps_low']:.1f}-{theirs['rps_high']:.1f}), p99 {theirs['p99_ms']} ms"
            )
            if level >= 2 * self.cores and (why := self._target(report, rows, level)):
                notes.append(why)
        # `measure` lists each path only for a mix; one path is the mix itself.
        mixed = (
            ", ".join(
                f"{p} x{w:g}: {m['service_time_ms']:.2f} ms, cpu {m['cpu_fraction']:.2f}"
                for (p, w), m in zip(self.input.paths, self.measured, strict=False)
            )
            or self.input.paths[0][0]
        )
        plan = self.plan
        top = [r for r in runs if r["concurrency"] == max(r["concurrency"] for r in runs)]
        measured = max((r for r in top if r["config"] in OURS), key=lambda r: r["rps"])
        report.ceiling_rps = measured.get("ceiling_rps")
        report.notes = [
            ceiling_note(measured, self.cores, plan.ceiling_rps, self.tool),
            cpu_split_note(runs, self.tool),
            (
                f"measured per path ({mixed}); mixed: service_time_ms {self.workload.service_time_ms:g}, "
                f"cpu_fraction {self.workload.cpu_fraction:g}"
            ),
            (
                f"{self.cores} cores; servertune's plan: {plan.processes} processes x {plan.threads} "
                f"threads; nginx and the load generator share these cores"
            ),
            (
                f"load by {self.tool}; {run.size.seconds:g} s per measurement; medians of "
                f"{_repeats_said(run)} interleaved run(s); errors = answers >= 400 + socket errors, summed "
                "over the repeats; rps counts successful answers only"
            ),
            (
                f"verdict: a difference counts when the repeats' ranges of req/s (min-max, widened to "
                f"at least +-{NOISE_BAND:.0%} of the median) do not overlap; otherwise "
                "'no clear difference'"
            ),
            *notes,
        ]
        if self.static_served:
            report.notes.append(static_note(self.static_served))
        busiest = max((float(s["other_cpu_cores"]) for s in results.all_rows()), default=0.0)
        if busiest > 0.25:
            report.notes.append(
                f"other work on this machine used up to {busiest:.2f} cores during a measurement: "
                "the numbers are noisy"
            )
        report.versions = {
            **tool_versions(["uwsgi", "gunicorn", "nginx", self.tool]),
            self.app.split(":")[0].split(".")[0]: dist_version(
                self.app.split(":")[0].split(".")[0]
            ),
        }
        side = self._side_configs(run)
        report.commands = {c: line for c, line in self.commands.items() if c in side}
        return report

    def _summarize_asgi(self, run: Run[AppSizes], results: Results) -> Report:
        """Per level (unloaded, closed, overload): medians with the repeats' spread, the best
        servertune layout against the best copied one in words; overload's targets."""
        from servertune.bench.harness.versions import app_stack, dist_version, tool_versions
        from servertune.bench.scenarios.app_asgi import (
            GOOD_WITHIN_MS,
            MAX_OVERLOAD_P99_RATIO,
            overload_notes,
            overload_repeats_note,
        )

        configs = self._side_configs(run)
        ours = [c for c in configs if c in self.layouts and self.layouts[c].ours]
        copied = [c for c in configs if c not in ours]
        runs: list[dict[str, Any]] = []
        report = Report(scenario=self.name, runs=runs)
        verdicts: list[str] = []
        by_load: dict[str, dict[str, dict[str, Any]]] = {c: {} for c in configs}
        for level in self.levels(run, configs[0]):
            rows = {}
            for config in configs:
                if (config, level) not in results.samples:
                    continue  # above where every candidate saturated, or dropped as behind
                samples = results.rows(config, level)
                row = results.median(config, level)
                for key in ("repeat", "other_cpu_cores"):  # kept under `repeats`
                    row.pop(key, None)
                for key in ("errors", "refused_503", "timeouts", "requests"):
                    row[key] = sum(int(s.get(key) or 0) for s in samples)
                low, high = spread([s["rps"] for s in samples])
                row["rps_low"], row["rps_high"] = round(low, 2), round(high, 2)
                if level.role == "overload":
                    low, high = spread([s["good_rps"] for s in samples])
                    row["good_rps_low"], row["good_rps_high"] = round(low, 2), round(high, 2)
                rows[config] = row
                by_load[config][level.role or f"c={level.concurrency}"] = row
            # Under overload what counts is the answers in time: an unbounded queue answers
            # many requests only just before the client gives up.
            key = "good_rps" if level.role == "overload" else "rps"
            here_copied = [c for c in copied if c in rows]
            here_ours = [c for c in ours if c in rows]
            if not here_copied or not here_ours:
                continue
            if level.role == "unloaded":  # every layout serves the offered rate: compare tails
                best_copied = min(here_copied, key=lambda c: rows[c]["p99_ms"] or math.inf)
                best_ours = min(here_ours, key=lambda c: rows[c]["p99_ms"] or math.inf)
            else:
                best_copied = max(here_copied, key=lambda c: rows[c][key])
                best_ours = max(here_ours, key=lambda c: rows[c][key])
            base = rows[best_copied]["rps"]
            for row in rows.values():
                row["x_best_naive"] = round(row["rps"] / base, 2) if base else None
                runs.append(row)
            mine, theirs = rows[best_ours], rows[best_copied]
            named = level.role or f"c={level.concurrency}"
            report.ratios[f"{best_ours}/{best_copied} req/s at {named}"] = (
                mine["x_best_naive"] or 0.0
            )
            verdict = verdict_of(
                {"rps_low": mine[f"{key}_low"], "rps_high": mine[f"{key}_high"]},
                {"rps_low": theirs[f"{key}_low"], "rps_high": theirs[f"{key}_high"]},
            ).replace("naive", "copied")
            what_short = (
                f"req/s within {GOOD_WITHIN_MS / 1000:g} s" if key == "good_rps" else "req/s"
            )
            if level.role != "unloaded":
                report.verdicts.append(
                    verdict_record(
                        named, what_short, best_ours, mine, best_copied, theirs, key, verdict
                    )
                )
            if level.role == "unloaded":
                verdict = "the latency of a request on its own (no winner is named here)"
            what = f"req/s within {GOOD_WITHIN_MS:g} ms" if key == "good_rps" else "req/s"
            verdicts.append(
                f"{named}: {verdict}: best servertune {best_ours} {mine[key]:.1f} {what} "
                f"({mine[f'{key}_low']:.1f}-{mine[f'{key}_high']:.1f}), p99 {mine['p99_ms']} ms, "
                f"{mine['errors']} errors, {mine['refused_503']} shed (503); best copied "
                f"{best_copied} {theirs[key]:.1f} {what} "
                f"({theirs[f'{key}_low']:.1f}-{theirs[f'{key}_high']:.1f}), p99 "
                f"{theirs['p99_ms']} ms, {theirs['errors']} errors, {theirs['refused_503']} "
                "shed (503)"
            )
        over = {c: by_load[c]["overload"] for c in configs}
        best_ours = max(ours, key=lambda c: over[c]["good_rps"])
        best_copied = max(copied, key=lambda c: over[c]["good_rps"])
        ratio = (
            round(over[best_ours]["good_rps"] / over[best_copied]["good_rps"], 3)
            if over[best_copied]["good_rps"]
            else None
        )
        report.ratios[f"{best_ours}/{best_copied} good_rps at overload"] = ratio or float("nan")
        io_bound = self.workload.cpu_fraction < IO_BOUND_CPU_FRACTION
        report.targets.append(
            Target(
                f"{'I/O' if io_bound else 'CPU'}-bound: best servertune ({best_ours}) / best "
                f"copied ({best_copied}) req/s answered within {GOOD_WITHIN_MS:g} ms at overload",
                ratio,
                ">=",
                IO_BOUND_TARGET if io_bound else round(1 - NOISE_BAND, 2),
            )
        )
        calm = by_load[best_ours]["unloaded"]["p99_ms"]
        report.targets.append(
            Target(
                f"{best_ours}: admitted p99 at overload / its unloaded p99",
                round(over[best_ours]["p99_ms"] / calm, 3)
                if over[best_ours]["p99_ms"] and calm
                else None,
                "<=",
                MAX_OVERLOAD_P99_RATIO,
            )
        )
        report.targets.append(
            Target(
                f"{best_ours}: errors at overload besides the counted 503s",
                float(over[best_ours]["errors"]),
                "==",
                0.0,
            )
        )
        plan = self.plan
        rates = ", ".join(
            f"{role} {rate:.0f} req/s"
            for role, rate in open_loop_rates(float(plan.asgi_capacity_rps or 0)).items()
        )
        mixed = (
            ", ".join(
                f"{p} x{w:g}: {m['service_time_ms']:.2f} ms, cpu {m['cpu_fraction']:.2f}"
                for (p, w), m in zip(self.input.paths, self.measured, strict=False)
            )
            or self.input.paths[0][0]
        )
        report.notes = [
            *[f"verdict {line}" for line in verdicts],
            *overload_notes({c: by_load[c] for c in configs}, ours),
            overload_repeats_note(best_ours, by_load[best_ours]["unloaded"], over[best_ours]),
            cpu_split_note([r for r in runs if r.get("load") == "closed"], self.tool),
            (
                f"measured per path ({mixed}); mixed: service_time_ms "
                f"{self.workload.service_time_ms:g}, cpu_fraction {self.workload.cpu_fraction:g} "
                f"({'I/O' if io_bound else 'CPU'}-bound)"
            ),
            (
                f"{self.cores} cores; ASGI; servertune's plan: {plan.processes} processes, "
                f"capacity {plan.asgi_capacity_rps:.0f} req/s, nginx admits "
                f"{plan.admission_limit}; the copied layouts sit behind the same nginx without "
                "an admission limit"
            ),
            (
                f"unloaded and overload: open-loop Poisson arrivals on {self.open_path} "
                f"({rates}; {UNLOADED_FACTOR_TEXT}), latencies of admitted (2xx) answers from "
                f"their scheduled send; closed: {self.tool} at {', '.join(map(str, self.level_counts))} "
                f"connections; {run.size.seconds:g} s per measurement (overload twice that); "
                f"medians of {_repeats_said(run)} interleaved run(s)"
            ),
            (
                "errors = answers >= 400 other than 503, failed connections and timeouts (summed "
                "over the repeats); refused_503 = requests nginx shed on purpose, counted apart; "
                "rps counts successful answers only"
            ),
            (
                f"verdict: a difference counts when the repeats' ranges of req/s (min-max, widened to "
                f"at least +-{NOISE_BAND:.0%} of the median) do not overlap; otherwise "
                "'no clear difference'"
            ),
        ]
        busiest = max((float(s["other_cpu_cores"]) for s in results.all_rows()), default=0.0)
        if busiest > 0.25:
            report.notes.append(
                f"other work on this machine used up to {busiest:.2f} cores during a measurement: "
                "the numbers are noisy"
            )
        module = self.app.split(":")[0].split(".")[0]
        # The servers the candidates ran, and the app's own stack only (what its module
        # imports: FastAPI and Starlette for a FastAPI app, not a Django installed beside it).
        servers = {self.layouts[c].server if c in self.layouts else self.user_commands[c].server
                   for c in configs}  # fmt: skip
        dists = {"uvicorn": ("uvicorn",), "gunicorn-asgi": ("gunicorn", "uvicorn-worker"),
                 "granian": ("granian",)}  # fmt: skip
        report.versions = {
            **tool_versions(["nginx", self.tool]),
            **{d: dist_version(d) for s in sorted(servers) for d in dists.get(s, (s,))},
            **{d: dist_version(d) for d in app_stack(self.app, Path(str(self.workload.app_dir)))},
        }
        if dist_version(module) != "not installed":  # an app from PyPI, not a local module
            report.versions[module] = dist_version(module)
        other = sibling_entry_point(self.app, Path(str(self.workload.app_dir)))
        if other and not self.dual:
            report.notes.append(
                f"this project also has {other[1]} (its {other[0].upper()} entry point): "
                "without --interface (and with --only naming candidates of both) `servertune "
                "bench app` benches both in one run, to compare which to deploy"
            )
        report.commands = {c: line for c, line in self.commands.items() if c in configs}
        return report

    def _target(self, report: Report, rows: dict[str, dict[str, Any]], level: int) -> str | None:
        """The targets against gunicorn's (2 x cores) + 1 rule at this level; for the
        I/O-bound one, a note when the closed loop itself leaves no room for the ratio."""
        ours = max((c for c in OURS if c in rows), key=lambda c: rows[c]["rps"])
        if "gunicorn-2n+1" not in rows:
            return None
        docs = rows["gunicorn-2n+1"]
        if not docs["rps"]:
            return None
        ratio = round(rows[ours]["rps"] / docs["rps"], 3)
        why = None
        if self.workload.cpu_fraction < IO_BOUND_CPU_FRACTION:
            docs_workers = 2 * self.cores + 1
            cap = level / (self.workload.service_time_ms / 1000)
            if level <= docs_workers and docs["rps"] * IO_BOUND_TARGET > cap:
                why = (
                    f"I/O-bound target at c={level}: gunicorn-2n+1's {docs_workers} sync workers "
                    f"already serve all {level} connections, and a closed loop of {level} "
                    f"connections caps every candidate near {level} / "
                    f"{self.workload.service_time_ms:g} ms = {cap:.0f} req/s; gunicorn-2n+1 "
                    f"served {docs['rps']:.0f} ({docs['rps'] / cap:.0%} of that), so no layout "
                    f"can be {IO_BOUND_TARGET:g}x faster at this level"
                )
            report.targets.append(
                Target(
                    f"I/O-bound: best servertune / gunicorn-2n+1 req/s at c={level}",
                    ratio,
                    ">=",
                    IO_BOUND_TARGET,
                )
            )
        else:
            report.targets.append(
                Target(
                    f"CPU-bound: best servertune / gunicorn-2n+1 req/s at c={level}",
                    ratio,
                    ">=",
                    round(1 - NOISE_BAND, 2),
                )
            )
        return why

    def plot(self, report: Report, path: Path) -> None:
        """req/s (with the repeats' range) and p99 against connections, one line per candidate."""
        from servertune.bench.harness.plotting import plot_throughput

        plot_throughput(report, path)


#: Largest file `static_probe` asks nginx for: enough to prove the alias, quick to compare.
STATIC_PROBE_MAX_BYTES = 1 << 20
#: File names the probe requests as they are (no URL escaping needed).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9._-]+")


def static_probe(directory: Path) -> Path | None:
    """The first (by name) plain, readable file of at most STATIC_PROBE_MAX_BYTES directly in
    `directory`, or None."""
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return None
    for entry in entries:
        if (
            _PLAIN_NAME.fullmatch(entry.name)
            and entry.is_file()
            and not entry.is_symlink()
            and entry.stat().st_size <= STATIC_PROBE_MAX_BYTES
            and os.access(entry, os.R_OK)
        ):
            return entry
    return None


def static_note(served: dict[str, tuple[str, int] | None]) -> str:
    """What the --static check proved, in one line."""
    parts = [
        f"GET {got[0]} answered by nginx with the file's {got[1]} bytes"
        if got
        else f"{prefix}: no plain file of <= {STATIC_PROBE_MAX_BYTES >> 20} MiB in its directory to ask for"
        for prefix, got in served.items()
    ]
    return (
        f"--static, checked before every candidate's load: {'; '.join(parts)} (the app servers "
        "never see these prefixes)"
    )


def ceiling_note(row: dict[str, Any], cores: int, model_rps: float, tool: str) -> str:
    """Which ceiling `ceiling_rps` is, measured on `row` (servertune's best at the highest load),
    next to the one without nginx and the load generator and the plan's model."""
    if row.get("ceiling_rps") is None:
        return "ceiling: not measured (no request was answered at the highest load)"
    app, proxy, load = (row[k] for k in CPU_KEYS[:3])
    return (
        f"ceiling_rps {row['ceiling_rps']:.1f} req/s is measured with nginx and {tool} on these "
        f"{cores} cores: {cores} / ({app:.3f} app + {proxy:.3f} nginx + {load:.3f} {tool}) ms of "
        f"CPU per request ({row['config']} at c={row['concurrency']}); with nginx and the load on "
        f"other machines it would be {row['app_ceiling_rps']:.1f} req/s ({cores} / the app's "
        f"CPU alone); the plan's model says {model_rps:.1f}. The verdicts compare candidates "
        "with each other; x_ceiling is each row's req/s over its own on-host ceiling_rps, the "
        "one these runs can reach"
    )


def cpu_split_note(runs: list[dict[str, Any]], tool: str) -> str:
    """How much of the CPU per request nginx and the load generator took, over every row."""
    from servertune.bench.harness.stats import median

    shares: dict[str, list[float]] = {"proxy": [], "load": []}
    for row in runs:
        app, proxy, load = (row.get(k) for k in CPU_KEYS[:3])
        if app is None or proxy is None or load is None or app + proxy + load <= 0:
            continue
        shares["proxy"].append(proxy / (app + proxy + load))
        shares["load"].append(load / (app + proxy + load))
    if not shares["proxy"]:
        return "CPU per request: not measured"
    proxy, load = shares["proxy"], shares["load"]
    return (
        f"of the CPU per request (app + nginx + {tool}), nginx took {median(proxy):.0%} "
        f"({min(proxy):.0%}-{max(proxy):.0%}) and {tool} {median(load):.0%} "
        f"({min(load):.0%}-{max(load):.0%}): median (range) over every candidate and level"
    )


def cpu_per_request(
    cores: int, requests: int, *, app_s: float, proxy_s: float, load_s: float
) -> dict[str, float | None]:
    """CPU ms per request of each part (app servers, nginx, the load generator) and the two
    ceilings they give: `cores` over all three (everything on this host, as measured) and over
    the app's alone (nginx and the load generator on other machines). None without requests."""
    if requests <= 0:
        return dict.fromkeys(CPU_KEYS)
    app, proxy, load = (1000 * s / requests for s in (app_s, proxy_s, load_s))
    total = app + proxy + load
    return {
        "app_cpu_ms_per_req": round(app, 3),
        "proxy_cpu_ms_per_req": round(proxy, 3),
        "load_cpu_ms_per_req": round(load, 3),
        "ceiling_rps": round(1000 * cores / total, 1) if total > 0 else None,
        "app_ceiling_rps": round(1000 * cores / app, 1) if app > 0 else None,
    }


def spread(values: list[float]) -> tuple[float, float]:
    """The repeats' min-max, widened to at least +-NOISE_BAND of their median."""
    return band_range(values, NOISE_BAND)


def _repeats_said(run: Run[AppSizes]) -> str:
    """How many repeats each median has: all of them, or up to them in the adaptive run."""
    return f"up to {run.repeats}" if run.size.adaptive and run.repeats > 1 else str(run.repeats)


def verdict_record(
    level: str,
    metric: str,
    ours: str,
    mine: dict[str, Any],
    copied: str,
    theirs: dict[str, Any],
    key: str,
    verdict: str,
) -> dict[str, Any]:
    """One level's verdict as data (the report's headline reads it)."""
    winner = {"servertune faster": "servertune", "naive faster": "copied"}.get(
        verdict.replace("copied faster", "naive faster")
    )
    return {
        "level": level,
        "metric": metric,
        "ours": ours,
        "ours_value": mine[key],
        "ours_range": [mine[f"{key}_low"], mine[f"{key}_high"]],
        "copied": copied,
        "copied_value": theirs[key],
        "copied_range": [theirs[f"{key}_low"], theirs[f"{key}_high"]],
        "ratio": round(mine[key] / theirs[key], 2) if theirs[key] else None,
        "winner": winner,
        "repeats": min(len(mine.get("repeats") or [1]), len(theirs.get("repeats") or [1])),
        "offered_rps": mine.get("offered_rps"),
        "p99_ms": [mine.get("p99_ms"), theirs.get("p99_ms")],
    }


def verdict_of(ours: dict[str, Any], theirs: dict[str, Any]) -> str:
    """ "servertune faster", "naive faster" or "no clear difference", from the rows' spreads."""
    if ours["rps_low"] > theirs["rps_high"]:
        return "servertune faster"
    if theirs["rps_low"] > ours["rps_high"]:
        return "naive faster"
    return "no clear difference"


def _merge(parts: list[Any], connections: int, seconds: float) -> Any:
    """One LoadResult from the built-in client's per-path results."""
    from servertune.bench.harness.load import LoadResult
    from servertune.bench.harness.stats import percentile, percentile_curve

    latencies = [v for part in parts for v in part.latencies_ms]
    errors = sum(p.errors for p in parts)
    non_2xx = sum(p.non_2xx for p in parts)
    if not latencies:
        nan = math.nan
        return LoadResult("builtin", connections, seconds, 0, errors, 0.0, nan, nan, nan, nan,
                          non_2xx=non_2xx, socket_errors=errors - non_2xx)  # fmt: skip
    return LoadResult(
        tool="builtin",
        connections=connections,
        duration_s=seconds,
        requests=len(latencies),
        errors=errors,
        rps=len(latencies) / seconds,
        p50_ms=percentile(latencies, 50),
        p90_ms=percentile(latencies, 90),
        p99_ms=percentile(latencies, 99),
        max_ms=max(latencies),
        distribution=tuple(percentile_curve(latencies)),
        non_2xx=non_2xx,
        socket_errors=errors - non_2xx,
    )


#: How the unloaded rate is chosen, for the notes.
UNLOADED_FACTOR_TEXT = "unloaded: a tenth of the plan's capacity; overload: 4 x it"


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


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _measure_error(app: str, code: int, stderr: bytes) -> Exception:
    """One line from a failed `servertune measure`: bad input (its exit 2: the app cannot be
    imported, or raises on import) or the app's own failure (exit 1: it raised or never answered)."""
    lines = [line for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    last = lines[-1].strip().removeprefix("error: ") if lines else f"exit code {code}"
    if code == 2:
        return BenchInputError(last if last.startswith("APP") else f"APP: {last}")
    return BenchAppError(f"measure: {app} failed: {last}")
