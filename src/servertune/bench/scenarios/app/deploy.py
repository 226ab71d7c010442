"""Starting a `bench app` candidate behind nginx: ports proved free first, every path proved to
answer 200 (and every --static file served) before any load."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import BenchAppError, BenchInputError
from servertune.bench.harness.scenario import Run
from servertune.bench.scenarios.app.asgi_layouts import Copied, docs_workers
from servertune.bench.scenarios.app.candidates import Candidates
from servertune.bench.scenarios.app.inputs import AppSizes, write_regular
from servertune.bench.scenarios.app.reproduce import asgi_gen, gen_line
from servertune.bench.scenarios.app.static import static_probe
from servertune.bench.scenarios.app.wsgi_layouts import BY_NAME
from servertune.targets.layout import Backend


class Deploy(Candidates):
    """`start()`: a candidate served behind nginx, proved ready."""

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
        # What the report's Reproduce section shows the candidate ran with (its fronts too).
        self.files.setdefault(config, dict(deployment.files))
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
        # whose log_format `measure --log-conf` reads (HAProxy in nginx's place logs in its own
        # HTTP log format, which `measure --log` knows without a file)
        if self.input.keep_log is not None and "nginx.conf" in deployment.files:
            conf = self.input.keep_log / f"{config}-{run.repeat}.nginx.conf"
            write_regular(conf, deployment.files["nginx.conf"], "--keep-log")
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
        from servertune.bench.harness.ports import free_port, listening_ports
        from servertune.bench.harness.supervision import ServerError
        from servertune.sizing import Forced, plan_for

        layout = self.layouts.get(config)
        front = layout.front if layout is not None else "nginx"
        workload = place(
            self.workload, run.stack, max(self.plan.processes, docs_workers(self.cores)),
            app_dir=self.workload.app_dir,
            **({"lb_listen_port": free_port()} if front == "haproxy-nginx" else {}),
        )  # fmt: skip
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
        if front == "haproxy-nginx":
            ports.add(workload.lb_listen_port)
        if taken := sorted(ports & listening_ports()):
            raise ServerError(f"port(s) {taken} already in use before the start")
        server = layout.server if layout else self.user_commands[config].server
        deployment = deploy_asgi(
            run.stack, f"{config}-{run.repeat}", plan, server, argv=argv,
            per_worker=bool(layout and layout.per_worker), env=self.env,
            cwd=Path(str(self.workload.app_dir)), ready_path=None, front=front,
            access_log=self._log_file(run, config),
        )  # fmt: skip
        if argv is None:  # servertune's layout: its files, as `gen` writes them
            assert layout is not None
            self.commands.setdefault(config, self._gen_command(config, asgi_gen(layout)))
        else:
            self.commands.setdefault(config, shlex.join(argv))
        return plan, deployment

    def _gen_command(self, config: str, targets: Sequence[str]) -> str:
        """The `servertune gen` lines that write a servertune layout's files for this
        workload, into a folder named after the candidate."""
        return gen_line(self.workload, targets, config)

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
        layout = BY_NAME.get(config)
        forced = {}
        if layout is not None and layout.per_core:
            why = "forced by the benchmark: processes = cores, one thread, one shared socket"
            forced = {"processes": Forced(self.cores, why), "threads": Forced(1, why)}
        plan = plan_for(workload, forced=forced)
        ports = {workload.listen_port, *(s.port for s in plan.sockets if s.port is not None)}
        if taken := sorted(ports & listening_ports()):
            raise ServerError(f"port(s) {taken} already in use before the start")
        name = f"{config}-{run.repeat}"
        if layout is not None and layout.rendered is not None:
            self.commands.setdefault(
                config,
                self._gen_command(config, layout.gen)
                if layout.gen
                # a copied layout rendered with forced sizes: its file is in the report
                else shlex.join(
                    [tool_path("uwsgi"), "--ini", "uwsgi.ini"]
                    if layout.rendered == "uwsgi"
                    else [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py"]
                ),
            )
        if layout is not None and layout.rendered == "uwsgi":
            return plan, deploy_uwsgi(
                run.stack, name, plan, layout=layout.layout, env=self.env, ready_path=None,
                access_log=self._log_file(run, config),
            )  # fmt: skip
        if layout is not None and layout.rendered == "gunicorn":
            # (No layout is the plan's uWSGI layout; gunicorn's own target is the shared one.)
            return plan, deploy_gunicorn(
                run.stack, name, plan, layout=layout.layout or "shared", env=self.env,
                ready_path=None,
                access_log=self._log_file(run, config),
            )  # fmt: skip
        bind = plan.shared_socket.endpoint
        chdir = ["--chdir", str(self.workload.app_dir)]
        gunicorn = [sys.executable, "-m", "gunicorn", "--bind", bind, *chdir]
        backend: Backend = "gunicorn"
        if layout is not None and layout.flags is not None:
            argv = [*gunicorn, *layout.flags(self.cores), self.app]
        else:  # the user's own file
            file = self.input.against[self.input.against_names.index(config)].resolve()
            if file.suffix == ".py":
                argv = [*gunicorn[:3], "-c", str(file), "--bind", bind, *chdir, self.app]
            else:
                backend = "uwsgi"
                argv = [tool_path("uwsgi"), "--ini", str(file), "--socket", bind]
        self.commands.setdefault(config, shlex.join(argv))
        # ready_path=None: start() checks every path itself, so a 500 is named, not waited out.
        return plan, deploy_command(
            run.stack,
            name,
            plan,
            backend,
            argv,
            env=self.env,
            ready_path=None,
            access_log=self._log_file(run, config),
        )

    def _log_file(self, run: Run[AppSizes], config: str) -> Path | None:
        """--keep-log DIR: where nginx logs this candidate's requests, `<candidate>-<round>.
        access.log` (a regular file there is replaced; anything else is refused)."""
        log = self._log_path(run, config)
        if log is None:
            return None
        if log.is_symlink() or (log.exists() and not log.is_file()):
            raise BenchInputError(f"--keep-log: {log} exists and is not a regular file")
        log.unlink(missing_ok=True)
        return log


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
