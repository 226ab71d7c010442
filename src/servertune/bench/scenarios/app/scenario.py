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

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from servertune.bench.harness.open_loop_ceiling import ClientCeiling
from servertune.bench.harness.report import BenchAppError, BenchInputError, Report
from servertune.bench.harness.rounds import AdaptiveRounds, Rounds
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.bench.scenarios.app.asgi_layouts import layouts_for
from servertune.bench.scenarios.app.deploy import Deploy
from servertune.bench.scenarios.app.inputs import (
    AppInput,
    AppSizes,
    EntryPoint,
    Interface,
    sibling_entry_point,
)
from servertune.bench.scenarios.app.levels import (
    REPLAY_REPEATS,
    capacity_rps,
    default_levels,
    levels_for,
    replay_base,
    replay_speed,
    replay_trimmed,
)
from servertune.bench.scenarios.app.load import Load
from servertune.bench.scenarios.app.notes import dropped_log_notes
from servertune.bench.scenarios.app.summary_dual import DualSummary
from servertune.bench.scenarios.app.verdicts import NOISE_BAND
from servertune.measure.sweep import DRAIN_SECONDS, SWEEP_SECONDS

if TYPE_CHECKING:
    from servertune.workload import Workload

#: Extra seconds a `servertune measure` process gets beyond its own time limit.
MEASURE_GRACE_S = 15.0


#: The default run starts no config's repeat past this many seconds from its start, so it gives
#: its verdict within 10 minutes: the config in progress (its levels, about 40 s with eleven),
#: and the summary come after. A 200 ms route's default run, whose closed loop never saturates
#: below 512 connections, took 14 min 33 s without it (2026-11-29, docs/benchmarks.md).
DEFAULT_RUN_BUDGET_S = 540.0
#: What `measure` writes that the run's plan takes as written (beside the service time and the
#: CPU per request): the loop's share, the CPU run off the loop, the in-flight limit, the GIL.
MEASURED_AS_IS = ("loop_blocking_fraction", "off_loop_fraction", "in_flight_limit", "gil")


class AppBench(DualSummary, Load, Deploy, BaseScenario[AppSizes]):
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
        # Closed-loop loads of 2 s (wrk takes whole seconds), a third of the thorough run's, so
        # the default ends within 10 minutes; the open-loop levels keep 3 s (6 s overload: its
        # queue must build, and the unloaded p99 needs its few hundred requests). Measured
        # interleaved on /io, 6 repeats each at 4 and 16 connections, 2 layouts (2026-11-26,
        # docs/benchmarks.md): 2 s loads spread no wider than 3 s ones (mean CV 18.7% against
        # 21.0%; beyond +-5% of the median 14 of 24 samples against 16 of 24); the machine's
        # other work, not the load's length, made the spread.
        full=AppSizes(
            seconds=2.0,
            repeats=3,
            all_levels=True,
            measure_requests=200,
            measure_seconds=30.0,
            adaptive=True,
            open_seconds=3.0,
        ),
        thorough=AppSizes(
            seconds=6.0, repeats=3, all_levels=True, measure_requests=200, measure_seconds=30.0
        ),
    )
    has_plot = True
    # A candidate is stopped once its last load is over: what it still holds queued (the
    # copied layouts after overload) has no client waiting, and nothing measured depends on
    # how it stops. Each kind's own grace (1-2 s) made a stop take 1.0-3.6 s per copied
    # layout (--quick, /io, 2026-11-26); servertune's, with a short queue, stop in 0.2-0.3 s.
    stop_grace_s = 0.5

    # --- setup: measure, plan -------------------------------------------------------------

    def setup(self, run: Run[AppSizes]) -> None:
        """Measure every path, mix them by weight, plan; pick the load levels."""
        from servertune.bench.harness.wrk import find_wrk
        from servertune.machine import Machine
        from servertune.sizing import plan_for

        given = run.options.extra.get("app")
        if not isinstance(given, AppInput):
            raise BenchInputError("APP: `servertune bench app` needs the app to serve")
        self.input = given
        if replay_trimmed(run.size, given.replay is not None):
            # --replay's default run: the rounds, the notes and the report all read run.repeats.
            run.repeats = REPLAY_REPEATS * run.options.repeat
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
        self.entries = {}
        for app_name, interface in apps:
            mix, measured = self._measure(run, app_name, interface)
            chosen: Interface = interface or mix.get("interface", "wsgi")
            overrides: dict[str, Any] = {
                "cores": self.cores,
                "service_time_ms": mix["service_time_ms"],
                # CPU per request in ms, as `measure` writes it (the GIL share derives from it).
                **{k: mix[k] for k in ("cpu_ms", "cpu_fraction") if k in mix},
                "interface": chosen,
                **{k: mix[k] for k in MEASURED_AS_IS if k in mix},
                "app": app_name,
                # Where the app is imported from: --chdir, else here (as `servertune measure` does).
                "app_dir": str(app_dir),
                "static": given.static,
            }
            workload = _workload(given.workload, overrides)
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
        self._setup_logs(given)
        self.client = self._calibrate_client(run) if "asgi" in self.entries else None
        #: The plan each candidate last served with (for the rows' workers and threads).
        self.served_plans = {}
        self.commands = {}
        self.files = {}
        #: Per --static prefix: the file nginx served before every candidate's load (path,
        #: bytes), or None when its directory has no file to ask for.
        self.static_served = {}
        self.dropped_log_lines = {}

    def _calibrate_client(self, run: Run[AppSizes]) -> ClientCeiling:
        """The open-loop client's ceiling on these cores, once per run (`open_loop_ceiling`)."""
        from servertune.bench.harness.open_loop_ceiling import calibrate_client

        with run.spent.phase("calibrate the open-loop client"):
            try:
                return calibrate_client(run.stack, run.stack.dir / "calibration", self.cores)
            except RuntimeError as error:
                raise BenchAppError(str(error)) from None

    def _setup_logs(self, given: AppInput) -> None:
        """--replay: the pace 1 x plays the log at; --keep-log: its directory."""
        if given.replay is not None:
            # The slower entry point's capacity: one schedule for every layout of both.
            self.replay_capacity_rps = min(capacity_rps(e.plan, i) for i, e in self.entries.items())
            self.replay_scale = replay_base(given.replay.mean_rps, self.replay_capacity_rps)
        if given.keep_log is not None:
            try:
                given.keep_log.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise BenchInputError(
                    f"--keep-log: cannot make {given.keep_log}: {error.strerror}"
                ) from None

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
        # (and an ASGI app's in-flight sweep after them, bounded by its own budget and drain).
        timeout = (
            len(self.input.paths) * 2 * run.size.measure_seconds
            + SWEEP_SECONDS
            + DRAIN_SECONDS
            + MEASURE_GRACE_S
        )
        run.progress.show(f"measuring {app} on {len(self.input.paths)} path(s)")
        try:
            done = run.stack.run("measure", argv, timeout_s=timeout, env=self.env)
        except ServerError:
            raise BenchAppError(f"measure: {app} did not answer within {timeout:g} s") from None
        if done.returncode != 0:
            raise _measure_error(app, done.returncode, done.stderr)
        measured = read_workload_file(out)
        per_path = [
            {
                "service_time_ms": p.service_time_ms.p50,
                "cpu_ms": p.cpu_ms.p50 if p.cpu_ms else p.cpu_fraction.p50 * p.service_time_ms.p50,
            }
            for p in (measured.measured.paths if measured.measured else ())
        ]
        return measured.values, per_path

    def levels(self, run: Run[AppSizes], config: str) -> list[Level]:
        """--concurrency, else doubling from cores past the plan's ceiling (2 x cores only with
        --quick); an ASGI app's also unloaded and overload (open loop) around them, overload
        left out in --replay's default run (`levels.REPLAY_REPEATS`)."""
        replay = self.input.replay is not None
        return levels_for(
            self.interface_of(config),
            self.level_counts,
            replay=replay,
            overload=not replay_trimmed(run.size, replay),
        )

    def budget_s(self, run: Run[AppSizes]) -> float | None:
        """The default run gives its verdict within 10 minutes: no config starts a repeat past
        DEFAULT_RUN_BUDGET_S. --thorough and --quick measure all they plan."""
        return DEFAULT_RUN_BUDGET_S if run.size.adaptive else None

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
            ranked=lambda level: level.role != "unloaded" and replay_speed(level.role) is None,
            climb=lambda level: level.concurrency is not None,
            value=lambda level, row: float(
                row[
                    "good_rps"
                    if level.role == "overload" or replay_speed(level.role) is not None
                    else "rps"
                ]
            ),
            # The unloaded p99 is the overload target's baseline: measured again with overload.
            paired=lambda level: level.role == "overload",
            # The replay's levels: once, in the first round (not a baseline to re-measure).
            once=lambda level: replay_speed(level.role) is not None,
            max_repeats=run.repeats,
            band=NOISE_BAND,
            thorough_repeats=(self.sizes.thorough or run.size).repeats * run.options.repeat,
        )

    def summarize(self, run: Run[AppSizes], results: Results) -> Report:
        """Medians with the spread of repeats, ratios against the best naive, verdicts; with
        both entry points, each one's report and which of them to deploy."""
        if self.dual:
            report = self._summarize_dual(run, results)
        elif self.interface == "asgi":
            report = self._summarize_asgi(run, results)
        else:
            report = self._summarize_wsgi(run, results)
        report.notes.extend(dropped_log_notes(self.dropped_log_lines))
        return report

    def plot(self, report: Report, path: Path) -> None:
        """req/s (with the repeats' range) and p99 against connections, one line per candidate."""
        from servertune.bench.harness.plotting import plot_throughput

        plot_throughput(report, path)


def _measure_error(app: str, code: int, stderr: bytes) -> Exception:
    """One line from a failed `servertune measure`: bad input (its exit 2: the app cannot be
    imported, or raises on import) or the app's own failure (exit 1: it raised or never answered)."""
    lines = [line for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    last = lines[-1].strip().removeprefix("error: ") if lines else f"exit code {code}"
    if code == 2:
        return BenchInputError(last if last.startswith("APP") else f"APP: {last}")
    return BenchAppError(f"measure: {app} failed: {last}")


def _workload(path: Path | None, overrides: dict[str, Any]) -> Workload:
    """`--workload` with the measured figures over it; one `error:` line naming the flag."""
    from servertune.workload import WorkloadError
    from servertune.workload_file import WorkloadFileError, load_workload

    try:
        return load_workload(
            path,
            overrides,
            flags={"static": "--static", "app_dir": "--chdir"},
            file_label=f"--workload {path}",
        )
    except WorkloadFileError as error:  # the file itself: named by its flag, as in gen
        raise BenchInputError(f"--workload: {error}") from None
    except WorkloadError as error:
        raise BenchInputError(str(error)) from None
