"""Which candidates a `bench app` run serves, and through which entry point: the state every
part of the scenario reads (set by `AppBench.setup`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from servertune.bench.harness.open_loop_ceiling import ClientCeiling
from servertune.bench.harness.report import BenchInputError
from servertune.bench.harness.scenario import QuickFull, Run
from servertune.bench.scenarios.app.asgi_layouts import AsgiLayout
from servertune.bench.scenarios.app.inputs import AppInput, AppSizes, EntryPoint, Interface
from servertune.bench.scenarios.app.user_commands import (
    UserCommand,
    is_command_file,
    read_user_command,
)
from servertune.bench.scenarios.app.wsgi_layouts import NAIVE, OURS


class Candidates:
    """The run's candidates and entry points; the attributes `AppBench.setup` fills in."""

    name: ClassVar[str]
    sizes: ClassVar[QuickFull[AppSizes]]
    input: AppInput
    #: "wrk", or "builtin" without it.
    tool: str
    cores: int
    #: The servers' environment (`AppBench._server_env`).
    env: dict[str, str]
    layouts: dict[str, AsgiLayout]
    entries: dict[Interface, EntryPoint]
    #: The entry point in use (`_use`), and its app, workload, plan and per-path figures.
    interface: Interface
    app: str
    workload: Any
    plan: Any
    measured: list[dict[str, float]]
    level_counts: list[int]
    #: The open-loop levels' path: the heaviest by weight (the first of equals).
    open_path: str
    #: The plan each candidate last served with (for the rows' workers and threads).
    served_plans: dict[str, Any]
    #: Each candidate's line to paste (the report's "Reproduce" section, `reproduce.py`).
    commands: dict[str, str]
    #: Each candidate's files as the run wrote them (its server's, its nginx's, HAProxy's).
    files: dict[str, dict[str, str]]
    #: Per --static prefix: the file nginx served before every candidate's load (path,
    #: bytes), or None when its directory has no file to ask for.
    static_served: dict[str, tuple[str, int] | None]
    #: --keep-log: the lines a logging HAProxy dropped, by kept log (None: it did not say).
    dropped_log_lines: dict[str, int | None]
    #: The --against command lines, by candidate name.
    user_commands: dict[str, UserCommand]
    #: --replay: the plan's capacity (req/s), and the pace 1 x plays the log at (1.0: its own;
    #: below 1 when the log's mean rate is past that capacity, `levels.replay_base`).
    replay_capacity_rps: float
    replay_scale: float
    #: An ASGI entry point's open-loop client, calibrated once per run (`open_loop_ceiling`):
    #: no open-loop level offers more than it sends without measuring itself. None: no ASGI.
    client: ClientCeiling | None

    def _reproduce(self, report: Any, configs: list[str]) -> None:
        """The report's Reproduce section: every candidate of `configs` that ran, its line
        and its files, in table order."""
        report.commands = {c: self.commands[c] for c in configs if c in self.commands}
        report.files = {c: self.files[c] for c in configs if c in self.files}

    def _log_path(self, run: Run[AppSizes], config: str) -> Path | None:
        """--keep-log DIR: the file this candidate's nginx logs to (None without it)."""
        if self.input.keep_log is None:
            return None
        return self.input.keep_log / f"{config}-{run.repeat}.access.log"

    @property
    def dual(self) -> bool:
        """Whether both entry points of the project are benched in this run."""
        return len(self.entries) == 2

    def _use(self, interface: Interface) -> None:
        """Serve, measure and summarize through this entry point from now on."""
        entry = self.entries[interface]
        self.interface = interface
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

    def _side_of(self, config: str) -> str:
        """ "ours", "copied" (what the verdict compares against) or "user" (--against on WSGI)."""
        if config in OURS or (config in self.layouts and self.layouts[config].ours):
            return "ours"
        if self.interface_of(config) == "wsgi" and config not in NAIVE:
            return "user"
        return "copied"
