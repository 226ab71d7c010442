"""Several hosts on a real network: HAProxy -> nginx -> three gunicorn hosts; restarts, kills, cuts.

Six hosts in network namespaces joined by a bridge (servertune.bench.harness.netns), addressed
from 198.18.0.0/24 (RFC 2544's benchmarking range):

    client 198.18.0.100 -> lb 198.18.0.2:80 (HAProxy) -> nginx 198.18.0.3:8080
        -> app1 198.18.0.11:8000, app2 198.18.0.12:8000, app3 198.18.0.13:8000 (gunicorn)

Two configurations, the same events:

* `defaults`: what is commonly copied - HAProxy with Debian's shipped timeouts, nginx with the
  three hosts in an `upstream` with a `keepalive 16` pool and nginx's own defaults otherwise
  (max_fails=1, fail_timeout=10 s, a 60 s connect timeout), gunicorn's gthread worker with the
  plan's workers and threads and gunicorn's defaults otherwise (keep-alive 2 s);
* `servertune`: `gen haproxy` (without `--upstream`: HAProxy in front of nginx), `gen
  nginx-gunicorn --upstream HOST:PORT=CORES,...` and `gen gunicorn` on each host, from one
  workload, unchanged but for the access log's format and HAProxy's log lines.

Events, under closed-loop users on `GET /quick` and `POST /order?id=N` (a fresh id each, written
to a ledger by the app, so a POST run twice shows): `steady`; `add` (app3 joins the upstream
with an nginx reload; full run only); `restart` (a rolling restart of the three hosts: SIGTERM,
wait for the exit, start again; servertune drains each host first - `down` in nginx and a
reload); `kill` (every process of app3 SIGKILLed: the kernel still answers, with resets); `cut`
(app2's link taken down at the switch for 8 s: packets dropped, nothing refused), `slow` (app2's
CPU quota cut to a quarter for 6 s) and `lb-reload` (HAProxy reloaded, SIGUSR2 to its master)
in the full run only. Every app host runs in a cgroup of its own with a CPU quota. Then, in the
full run, `unequal` (hosts of 1, 1 and 2 cores: CPU quotas of 0.1 CPU per core, servertune
weights them 1:1:2, the load on `GET /cpu`) and `chain` (rounds of new-connection POSTs
pausing for about gunicorn's default keep-alive, with a 2 ms user-space delay in front of each app host, so a close crosses
a reused connection as it does between hosts: nginx's 502s pass through HAProxy).

Counted per event: failed GETs, failed and replayed POSTs, requests that waited past the plan's
connect timeout, and the time from the event until nginx last tried the dead host (its access
log's `$upstream_addr`).
"""

from __future__ import annotations

import contextlib
import datetime
import http.client
import itertools
import random
import re
import socket
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.bench.harness.users import KeepAliveUsers

__all__ = ["CONFIGS", "HOSTS", "Hosts", "HostsSizes"]

CONFIGS = ("defaults", "servertune")
HOSTS = {
    "client": "198.18.0.100",
    "lb": "198.18.0.2",
    "nginx": "198.18.0.3",
    "app1": "198.18.0.11",
    "app2": "198.18.0.12",
    "app3": "198.18.0.13",
}
APPS = ("app1", "app2", "app3")
LB_PORT = 80
NGINX_PORT = 8080
APP_PORT = 8000
#: gunicorn's port inside its host when a delay relay holds APP_PORT (the chain event).
INNER_PORT = 8001
#: The bundled app's work: ~5 ms requests, half of it GIL time (as `bench restart`).
SERVICE_TIME_MS = 5.0
CPU_FRACTION = 0.5
#: Cores of each app host in the events: each host runs in a cgroup of its own whose CPU quota
#: (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us`) is its cores x CPU_PER_CORE CPUs of this machine.
HOST_CORES = 1
UNEQUAL_CORES = {"app1": 1, "app2": 1, "app3": 2}
#: CPUs of this machine per declared core. Events: a whole CPU per core (the three hosts may
#: together ask for more than the machine has, as before). Unequal hosts: a tenth of a CPU per
#: core, so the 1 + 1 + 2 cores take 0.4 CPU together and each host's quota, not its neighbours
#: on a shared machine, sets its pace. Measured (2 vCPUs, load average 11-14 from other work):
#: CPU sets overlapping on both CPUs left the "2-core" host 8-11.6% short of its share; quotas
#: of 0.25 CPU per core still let the machine's contention decide (the 2-core host 8-12% over);
#: 0.1 CPU per core: 0.519 and 0.519 for it, every host within 4.4% of its share.
CPU_PER_CORE = {"events": 1.0, "unequal": 0.1}
#: The `slow` event cuts app2's quota to this fraction of its CPU.
SLOW_FRACTION = 0.25
#: The issue's bound: each host's share within 10% of its share of the cores.
SHARE_TOLERANCE = 0.10
GET_USERS = 6
#: Users of the unequal-hosts level, on `GET /cpu` (half of its 5 ms on the CPU): enough to keep
#: every host's quota busy, so each host's answers follow its CPU, and the weights must match it.
UNEQUAL_USERS = 24
POST_USERS = 2
THINK_S = (0.005, 0.02)
CLIENT_TIMEOUT_S = 40.0
MAX_REQUESTS_PER_USER = 50_000
#: gunicorn's own default keep-alive, which the defaults keep (docs.gunicorn.org: keepalive = 2).
GUNICORN_DEFAULT_KEEPALIVE_S = 2.0
#: A round trip between two hosts: how late the chain's relay delivers gunicorn's close.
CHAIN_DELAY_S = 0.002
#: Chain rounds pause from 10 ms before to 30 ms after gunicorn's default keep-alive.
CHAIN_EDGE = (-0.010, 0.030)
#: Counted events (the steady window and the recovery after a kill are the control).
EVENTS = ("add", "restart", "kill", "cut", "slow", "lb-reload")
#: nginx's access log as the bench reads it: when, which hosts were tried, how it went.
LOG_FORMAT = (
    'log_format hosts \'$msec $request_time $status $request_method "$upstream_addr" '
    '"$upstream_status" $request_uri $connection\';\n'
    "    access_log access.log hosts;"
)
SERVERTUNE_ACCESS_LOG = "access_log access.log combined buffer=64k flush=1s;"

DEFAULTS_GUNICORN = """wsgi_app = "{app}"
bind = "{bind}"
workers = {workers}
worker_class = "gthread"
threads = {threads}
"""
DEFAULTS_NGINX = """worker_processes auto;
pid nginx.pid;
error_log error.log warn;

events {{
    worker_connections 768;
}}

http {{
    {log_format}
    client_body_temp_path client_body_temp;
    proxy_temp_path proxy_temp;
    keepalive_timeout 65;

    upstream app {{
{servers}
        keepalive 16;
    }}

    server {{
        listen {listen};

        location / {{
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        }}
    }}
}}
"""
#: /etc/haproxy/haproxy.cfg's defaults as Debian ships them (timeouts in ms), in front of nginx.
DEFAULTS_HAPROXY = """defaults
    mode http
    timeout connect 5000
    timeout client  50000
    timeout server  50000

frontend lb
    bind {listen}
    default_backend nginx

backend nginx
    server nginx {nginx}
"""


@dataclass(frozen=True)
class HostsSizes:
    """Seconds of steady load before the events and after each; which levels run."""

    warm_s: float
    settle_s: float
    cut_s: float
    slow_s: float
    unequal_s: float
    chain_threads: int
    chain_rounds: int
    full: bool
    repeats: int = 1


SIZES = QuickFull(
    quick=HostsSizes(
        warm_s=1.0, settle_s=1.0, cut_s=0, slow_s=0, unequal_s=0, chain_threads=0,
        chain_rounds=0, full=False,
    ),
    full=HostsSizes(
        warm_s=4.0, settle_s=4.0, cut_s=8.0, slow_s=6.0, unequal_s=20.0, chain_threads=16,
        chain_rounds=12, full=True,
    ),
)  # fmt: skip


@dataclass(frozen=True)
class _Sample:
    start: float  # wall clock (nginx logs wall-clock times)
    kind: str  # "get" | "post"
    status: int  # 0: no HTTP answer
    ms: float
    order: str | None
    host: str


def _users(
    net: Any,
    label: str,
    seed: int,
    gets: int = GET_USERS,
    posts: int = POST_USERS,
    get: str = "get",
) -> KeepAliveUsers[_Sample]:
    """Closed-loop users in threads, each on a keep-alive connection from the client host."""
    return KeepAliveUsers(
        [get] * gets + ["post"] * posts, label=label, seed=seed,
        connect=lambda: _connection(net),
        sample=lambda o: _Sample(o.wall, o.kind, o.status, o.ms, o.order, o.served_by),
        think_s=THINK_S, max_requests=MAX_REQUESTS_PER_USER, timeout_s=CLIENT_TIMEOUT_S,
    )  # fmt: skip


def _connection(net: Any, timeout_s: float = CLIENT_TIMEOUT_S) -> http.client.HTTPConnection:
    """An HTTP connection to the load balancer, made from the client host."""
    conn = http.client.HTTPConnection(HOSTS["lb"], LB_PORT, timeout=timeout_s)
    sock = net.connect("client", (HOSTS["lb"], LB_PORT), timeout_s)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn.sock = sock
    return conn


@dataclass
class _Stack:
    """One configuration's servers on the network."""

    config: str
    home: Path
    plan: Any
    apps: dict[str, Any]
    nginx: Any
    lb: Any
    ledger: Path


class Hosts(BaseScenario[HostsSizes]):
    """Both configs through the same events on the same network; count what failed."""

    name = "hosts"
    needs = ("gunicorn",)
    sizes = SIZES

    def setup(self, run: Run[HostsSizes]) -> None:
        """The network (refused in one line without the privilege), the app, the workload."""
        from servertune.bench.apps import install
        from servertune.bench.harness.cgroups import CgroupUnavailable, ChildCgroup
        from servertune.bench.harness.netns import Network
        from servertune.bench.harness.report import BenchInputError
        from servertune.bench.harness.supervision import tool_path

        self.tools = {name: tool_path(name) for name in ("nginx", "haproxy")}
        self.net = run.enter(Network(HOSTS, what="bench hosts"))
        try:
            self.cgroups = {
                host: run.enter(ChildCgroup.create(prefix=f"servertune-bench-hosts-{host}"))
                for host in APPS
            }
        except CgroupUnavailable as exc:
            raise BenchInputError(f"bench hosts: {exc}") from None
        self.app = install("restart", run.stack.dir)
        self.app_dir = run.stack.dir
        self.plans: dict[str, Any] = {}
        self.notes: list[str] = []

    def configs(self, run: Run[HostsSizes]) -> Sequence[str]:
        """The copied defaults, then servertune's."""
        return CONFIGS

    def levels(self, run: Run[HostsSizes], config: str) -> Sequence[Level]:
        """The events on equal hosts; in the full run also unequal hosts and the chain."""
        if not run.size.full:
            return (Level(role="events"),)
        return (Level(role="events"), Level(role="unequal"), Level(role="chain"))

    # --- configs -------------------------------------------------------------------------------

    def workload(
        self, cores: dict[str, int], hosts: Sequence[str], bind: str = "", relay: bool = False
    ) -> Any:
        """The workload a user would describe: this app, these hosts and their cores (with a
        relay in front, gunicorn binds the host's loopback and the relay its address)."""
        from servertune.workload import Workload

        return Workload.model_validate(
            {
                "cores": cores.get(bind, HOST_CORES) if bind else HOST_CORES,
                "service_time_ms": SERVICE_TIME_MS,
                "cpu_fraction": CPU_FRACTION,
                "app": self.app,
                "app_dir": str(self.app_dir),
                "bind_host": HOSTS[bind] if bind and not relay else "127.0.0.1",
                "base_port": INNER_PORT if relay else APP_PORT,
                "listen_host": HOSTS["nginx"],
                "listen_port": NGINX_PORT,
                "lb_listen_host": HOSTS["lb"],
                "lb_listen_port": LB_PORT,
                "upstream": tuple(f"{HOSTS[h]}:{APP_PORT}={cores[h]}" for h in hosts),
            }
        )

    def files(
        self,
        config: str,
        cores: dict[str, int],
        hosts: Sequence[str],
        down: Sequence[int] = (),
        relay: bool = False,
    ) -> tuple[Any, dict[str, str]]:
        """(the plan, {file name: text}): haproxy.cfg, nginx.conf, gunicorn-HOST.conf.py."""
        from servertune.render import render_gunicorn, render_haproxy, render_nginx
        from servertune.sizing import plan_for

        plan = plan_for(self.workload(cores, hosts))
        files: dict[str, str] = {}
        for host in APPS:
            host_plan = plan_for(self.workload(cores, hosts, bind=host, relay=relay))
            if config == "servertune":
                files[f"gunicorn-{host}.conf.py"] = render_gunicorn(host_plan, "shared")
            else:
                files[f"gunicorn-{host}.conf.py"] = DEFAULTS_GUNICORN.format(
                    app=self.app,
                    bind=f"127.0.0.1:{INNER_PORT}" if relay else f"{HOSTS[host]}:{APP_PORT}",
                    workers=host_plan.processes,
                    threads=host_plan.threads,
                )
        if config == "servertune":
            nginx = render_nginx(plan, "gunicorn", "shared", down=down)
            if SERVERTUNE_ACCESS_LOG not in nginx:
                raise RuntimeError("gen nginx's access_log line changed: update the bench")
            files["nginx.conf"] = nginx.replace(SERVERTUNE_ACCESS_LOG, LOG_FORMAT)
            # `gen haproxy` without `--upstream`: HAProxy in front of nginx, which balances.
            files["haproxy.cfg"] = _lb_log(render_haproxy(plan_for(self.workload(cores, ()))))
        else:
            servers = "\n".join(
                f"        server {HOSTS[h]}:{APP_PORT}{' down' if i in down else ''};"
                for i, h in enumerate(hosts)
            )
            files["nginx.conf"] = DEFAULTS_NGINX.format(
                log_format=LOG_FORMAT,
                servers=servers,
                listen=f"{HOSTS['nginx']}:{NGINX_PORT}",
            )
            files["haproxy.cfg"] = _lb_log(
                DEFAULTS_HAPROXY.format(
                    listen=f"{HOSTS['lb']}:{LB_PORT}", nginx=f"{HOSTS['nginx']}:{NGINX_PORT}"
                )
            )
        return plan, files

    # --- servers -------------------------------------------------------------------------------

    def started(self, run: Run[HostsSizes], host: str, *args: Any, **kwargs: Any) -> Any:
        """`Network.start`, the server also listed in the report's record of servers."""
        server = self.net.start(host, *args, **kwargs)
        run.stack.servers.append(server)
        run.stack.events.append((server.name, "started"))
        return server

    def start_app(
        self, run: Run[HostsSizes], stack: _Stack, host: str, *, relay: bool = False
    ) -> Any:
        """gunicorn on `host`, in the host's cgroup (behind a delay relay when `relay`)."""
        from servertune.bench.harness.supervision import tool_path

        conf = stack.home / f"gunicorn-{host}.conf.py"
        argv = [tool_path("gunicorn"), "-c", str(conf)]
        env = {"SERVERTUNE_BENCH_LEDGER": str(stack.ledger), "SERVERTUNE_BENCH_HOST": host}
        name = f"{stack.config}-{run.repeat}-{host}-{len(self.net.servers)}"
        port = INNER_PORT if relay else APP_PORT
        server = self.started(
            run, host, name, "gunicorn", argv, ports=[port], log_dir=stack.home, env=env,
            cwd=self.app_dir, wait=False, cgroup_procs=self.cgroups[host].directory / "cgroup.procs",
        )  # fmt: skip
        if relay:
            relay_argv = [
                sys.executable, "-m", "servertune.bench.harness.delay_relay",
                str(APP_PORT), str(INNER_PORT), str(CHAIN_DELAY_S), HOSTS[host],
            ]  # fmt: skip
            self.started(run, host, f"{name}-relay", "relay", relay_argv, ports=[APP_PORT],
                         log_dir=stack.home)  # fmt: skip
        return server

    def start_stack(
        self,
        run: Run[HostsSizes],
        config: str,
        label: str,
        *,
        cores: dict[str, int] | None = None,
        hosts: Sequence[str] = APPS,
        relay: bool = False,
        cpu_per_core: float = CPU_PER_CORE["events"],
    ) -> _Stack:
        """Write every file; start the three app hosts (each cgroup's quota and weight set to
        its cores x `cpu_per_core`), nginx and HAProxy."""
        cores = cores or dict.fromkeys(APPS, HOST_CORES)
        for host in APPS:
            self.cgroups[host].set_cores(cores[host] * cpu_per_core)
            self.cgroups[host].set_weight(cores[host] * cpu_per_core)
        home = run.stack.dir / f"{config}-{run.repeat}-{label}"
        home.mkdir()
        for temp in ("client_body_temp", "proxy_temp", "uwsgi_temp", "fastcgi_temp", "scgi_temp"):
            (home / temp).mkdir()
        ledger = home / "ledger"
        ledger.mkdir()
        plan, files = self.files(config, cores, hosts, relay=relay)
        if config == "servertune":
            self.plans[label] = plan
        for name, text in files.items():
            (home / name).write_text(text)
        stack = _Stack(config, home, plan, {}, None, None, ledger)
        for host in APPS:
            stack.apps[host] = self.start_app(run, stack, host, relay=relay)
        for host, server in stack.apps.items():
            self.net.wait_listening(host, server)
        nginx_argv = [
            self.tools["nginx"], "-p", f"{home}/", "-c", str(home / "nginx.conf"),
            "-g", "daemon off;",
        ]  # fmt: skip
        stack.nginx = self.started(
            run, "nginx", f"{config}-{run.repeat}-{label}-nginx", "nginx", nginx_argv,
            ports=[NGINX_PORT], log_dir=home, cwd=home,
        )  # fmt: skip
        # Master-worker mode (-W), as systemd's haproxy.service runs it: SIGUSR2 reloads.
        lb_argv = [self.tools["haproxy"], "-W", "-db", "-f", str(home / "haproxy.cfg")]
        stack.lb = self.started(
            run, "lb", f"{config}-{run.repeat}-{label}-haproxy", "haproxy", lb_argv,
            ports=[LB_PORT], log_dir=home, cwd=home,
        )  # fmt: skip
        return stack

    def stop_stack(self, stack: _Stack) -> None:
        """Stop every server of `stack` (HAProxy first, the app hosts last)."""
        for server in (stack.lb, stack.nginx, *stack.apps.values()):
            if server is not None:
                self.net.stop(server, grace_s=2.0)
        for server in self.net.servers:
            if server.kind == "relay":
                self.net.stop(server, grace_s=0.5)

    def reload_lb(self, stack: _Stack, timeout_s: float = 10.0) -> None:
        """Reload HAProxy as `systemctl reload haproxy` does (SIGUSR2 to the master); return once
        a new worker runs (the old one finishes its connections meanwhile)."""
        import signal

        from servertune.bench.harness.stats import group_members
        from servertune.bench.harness.supervision import ServerError

        master = stack.lb.process.pid
        old = set(group_members(stack.lb.pgid)) - {master}
        stack.lb.process.send_signal(signal.SIGUSR2)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if set(group_members(stack.lb.pgid)) - old - {master}:
                return
            time.sleep(0.02)
        raise ServerError(f"{stack.lb.name}: no new worker {timeout_s:g} s after SIGUSR2")

    def reload(self, stack: _Stack, hosts: Sequence[str], down: Sequence[int] = ()) -> None:
        """Rewrite nginx.conf for `hosts` (`down`: indices marked down) and reload it."""
        from servertune.bench.harness.deployments import reload_nginx

        cores = dict.fromkeys(APPS, HOST_CORES)
        _, files = self.files(stack.config, cores, hosts, down)
        reload_nginx(stack.nginx, files["nginx.conf"], 45.0)

    # --- measuring -----------------------------------------------------------------------------

    def measure(
        self, run: Run[HostsSizes], config: str, served: Any, level: Level
    ) -> dict[str, Any]:
        """One level: the events on equal hosts, unequal hosts, or the keep-alive chain."""
        if level.role == "unequal":
            return self.measure_unequal(run, config)
        if level.role == "chain":
            return self.measure_chain(run, config)
        return self.measure_events(run, config)

    def measure_events(self, run: Run[HostsSizes], config: str) -> dict[str, Any]:
        """steady, [add], restart, kill, recover, [cut, slow, lb-reload]: a row per window."""
        from servertune.bench.apps.restart import arrivals

        size = run.size
        first = ("app1", "app2") if size.full else APPS
        stack = self.start_stack(run, config, "events", hosts=first)
        windows: list[tuple[str, float, str]] = []
        try:
            with _users(self.net, f"{config}-{run.repeat}", seed=run.repeat) as load:
                windows.append(("steady", time.time(), ""))
                time.sleep(size.warm_s)
                if size.full:
                    windows.append(("add", time.time(), ""))
                    self.reload(stack, APPS)
                    time.sleep(size.settle_s)
                windows.append(("restart", time.time(), ""))
                for index, host in enumerate(APPS):
                    self.restart_host(run, stack, host, index)
                time.sleep(size.settle_s)
                windows.append(("kill", time.time(), "app3"))
                self.net.kill_host("app3")
                time.sleep(size.settle_s)
                windows.append(("recover", time.time(), ""))
                stack.apps["app3"] = self.start_app(run, stack, "app3")
                self.net.wait_listening("app3", stack.apps["app3"])
                time.sleep(size.settle_s)
                if size.full:
                    windows.append(("cut", time.time(), "app2"))
                    self.net.cut("app2")
                    time.sleep(size.cut_s)
                    # The window runs on until the next event: requests held by the cut end
                    # after the link is back, and count in it.
                    self.net.mend("app2")
                    time.sleep(size.settle_s)
                    windows.append(("slow", time.time(), ""))
                    self.cgroups["app2"].set_cores(HOST_CORES * SLOW_FRACTION)
                    time.sleep(size.slow_s)
                    self.cgroups["app2"].set_cores(HOST_CORES * CPU_PER_CORE["events"])
                    time.sleep(size.settle_s)
                    windows.append(("lb-reload", time.time(), ""))
                    self.reload_lb(stack)
                    time.sleep(size.settle_s)
                windows.append(("end", time.time(), ""))
        finally:
            self.stop_stack(stack)
        tried = _nginx_log(stack.home / "access.log")
        rows = _rows(config, load.samples, windows, arrivals(str(stack.ledger)), tried,
                     _timeout_s(self.plans.get("events")), run.repeat + 1,
                     retried=_lb_retries(stack.lb.log))  # fmt: skip
        return {"config": config, "level": "events", "windows": rows}

    def restart_host(self, run: Run[HostsSizes], stack: _Stack, host: str, index: int) -> None:
        """SIGTERM `host`'s gunicorn, wait for its exit, start it again (servertune drains first)."""
        import signal

        if stack.config == "servertune":
            self.reload(stack, APPS, down=[index])
        server = stack.apps[host]
        server.process.send_signal(signal.SIGTERM)
        with contextlib.suppress(Exception):
            server.process.wait(35)
        self.net.stop(server, grace_s=1.0)
        stack.apps[host] = self.start_app(run, stack, host)
        self.net.wait_listening(host, stack.apps[host])
        if stack.config == "servertune":
            self.reload(stack, APPS)

    def measure_unequal(self, run: Run[HostsSizes], config: str) -> dict[str, Any]:
        """Hosts of 1, 1 and 2 cores (CPU quotas of a quarter CPU per core): each host's share
        of the answers."""
        stack = self.start_stack(
            run, config, "unequal", cores=UNEQUAL_CORES, cpu_per_core=CPU_PER_CORE["unequal"]
        )
        try:
            users = _users(
                self.net,
                f"{config}-u{run.repeat}",
                seed=run.repeat,
                gets=UNEQUAL_USERS,
                posts=0,
                get="cpu",
            )
            with users as load:
                time.sleep(run.size.unequal_s)
        finally:
            self.stop_stack(stack)
        served = [s.host for s in load.samples if s.status == 200]
        total = max(1, len(served))
        cores = sum(UNEQUAL_CORES.values())
        shares = {h: round(served.count(h) / total, 3) for h in APPS}
        deviation = max(
            abs(shares[h] - UNEQUAL_CORES[h] / cores) / (UNEQUAL_CORES[h] / cores) for h in APPS
        )
        return {
            "config": config,
            "level": "unequal",
            "requests": len(load.samples),
            "failed": sum(1 for s in load.samples if s.status != 200),
            "shares": shares,
            "max_share_deviation": round(deviation, 3),
        }

    def measure_chain(self, run: Run[HostsSizes], config: str) -> dict[str, Any]:
        """Rounds of concurrent POSTs on new client connections, pausing for about gunicorn's
        default keep-alive; a 2 ms relay in front of each app host."""
        size = run.size
        stack = self.start_stack(run, config, "chain", relay=True)
        gaps = [
            GUNICORN_DEFAULT_KEEPALIVE_S + random.Random(run.repeat * 1000 + n).uniform(*CHAIN_EDGE)
            for n in range(size.chain_rounds)
        ]
        outcomes: dict[str, int] = {}
        lock = threading.Lock()
        barrier = threading.Barrier(size.chain_threads)

        def worker() -> None:
            for n in range(size.chain_rounds):
                try:
                    barrier.wait(timeout=30)
                except threading.BrokenBarrierError:
                    return
                try:
                    conn = _connection(self.net, 10.0)
                    conn.request("POST", f"/order?id=chain-{config}-{n}", body=b"{}")
                    response = conn.getresponse()
                    response.read()
                    outcome = str(response.status)
                    conn.close()
                except (OSError, http.client.HTTPException) as error:
                    outcome = type(error).__name__
                with lock:
                    outcomes[outcome] = outcomes.get(outcome, 0) + 1
                time.sleep(gaps[n])

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(size.chain_threads)]
        try:
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + size.chain_rounds * (max(gaps) + 30) + 10
            for thread in threads:
                thread.join(timeout=max(0.0, deadline - time.monotonic()))
        finally:
            barrier.abort()
            self.stop_stack(stack)
        requests = sum(outcomes.values())
        return {
            "config": config,
            "level": "chain",
            "requests": requests,
            "502": outcomes.get("502", 0),
            "errors": requests - outcomes.get("200", 0),
            "outcomes": outcomes,
        }

    # --- the report ----------------------------------------------------------------------------

    def summarize(self, run: Run[HostsSizes], results: Results) -> Report:
        """Every event window as a row; targets on servertune's counts; the defaults' beside."""
        from servertune.bench.harness.versions import tool_versions

        events = Level(role="events")
        rows = [w for c in CONFIGS for sample in results.rows(c, events) for w in sample["windows"]]
        report = Report(scenario=self.name, runs=list(rows))
        report.versions = tool_versions(["gunicorn", "nginx", "haproxy"])
        self._event_targets(report, rows)
        if run.size.full:
            self._cut_targets(report, [r for r in rows if r["event"] == "cut"])
            self._unequal_and_chain(report, results)
        report.notes = [*self.notes, *self._method_notes(run)]
        return report

    @staticmethod
    def _event_targets(report: Report, rows: list[dict[str, Any]]) -> None:
        """The events' targets: servertune loses no GET through a restart or a kill (nor in any
        event), replays no POST, drains a rolling restart; each config's failed GETs beside."""

        def total(config: str, key: str, names: Sequence[str]) -> int:
            return sum(int(r[key]) for r in rows if r["config"] == config and r["event"] in names)

        survive = ("restart", "kill")
        report.targets = [
            Target("servertune: failed GETs through restart and kill",
                   total("servertune", "get_failed", survive), "==", 0),
            Target("servertune: failed GETs in every event",
                   total("servertune", "get_failed", EVENTS), "==", 0),
            Target("servertune: replayed POSTs over every event",
                   total("servertune", "post_replayed", EVENTS), "==", 0),
            Target("servertune: failed POSTs through the rolling restart (drained)",
                   total("servertune", "post_failed", ("restart",)), "==", 0),
        ]  # fmt: skip
        report.ratios = {
            f"{c}: failed GETs through restart and kill": float(total(c, "get_failed", survive))
            for c in CONFIGS
        }

    def _cut_targets(self, report: Report, cut: list[dict[str, Any]]) -> None:
        """The cut link's targets: no failed GET, and none slower than two per-try timeouts."""
        ours = [r for r in cut if r["config"] == "servertune"]
        report.targets.append(
            Target(
                "servertune: failed GETs while a link is cut",
                sum(r["get_failed"] for r in ours),
                "==",
                0,
            )
        )
        plan = self.plans.get("events")
        if plan is not None:
            # A GET stuck on the cut link: one try until the per-try timeout, one more.
            bound_ms = 2 * plan.lb_per_try_timeout_s * 1000
            report.targets.append(
                Target(
                    f"servertune: longest GET after the cut, ms (<= 2 x the "
                    f"{plan.lb_per_try_timeout_s} s per-try timeout)",
                    max((r["get_max_ms"] for r in ours), default=0.0),
                    "<=",
                    bound_ms,
                )
            )

    @staticmethod
    def _unequal_and_chain(report: Report, results: Results) -> None:
        """Unequal hosts (servertune's shares follow the cores) and the LB -> nginx -> app chain
        (servertune's without 502s, the defaults' with them): rows and targets."""
        for config in CONFIGS:
            unequal = results.median(config, Level(role="unequal"))
            report.runs.append(unequal)
            chain = results.median(config, Level(role="chain"))
            report.runs.append(chain)
        ours_u = results.rows("servertune", Level(role="unequal"))
        report.targets.append(
            Target("servertune: unequal hosts, worst share off its cores' share",
                   max(r["max_share_deviation"] for r in ours_u), "<=", SHARE_TOLERANCE)
        )  # fmt: skip
        report.targets.append(
            Target("servertune: 502s in the LB -> nginx -> app chain",
                   sum(r["502"] for r in results.rows("servertune", Level(role="chain"))),
                   "==", 0)
        )  # fmt: skip
        report.targets.append(
            Target("defaults: 502s in the chain (measured, not assumed)",
                   sum(r["502"] for r in results.rows("defaults", Level(role="chain"))),
                   ">", 0)
        )  # fmt: skip

    def _method_notes(self, run: Run[HostsSizes]) -> list[str]:
        """How the run loaded the hosts and what its columns count."""
        plan = self.plans.get("events")
        size = run.size
        return [
            (
                f"{GET_USERS} GET users and {POST_USERS} POST users from the client host through "
                f"HAProxy; {size.warm_s:g} s steady, {size.settle_s:g} s after each event"
                + (f", the link cut for {size.cut_s:g} s" if size.full else "")
                + "; a request counts in the window of the last event before its answer (or failure)"
            ),
            (
                "waited_past: requests slower than the plan's connect timeout "
                f"({_timeout_s(plan):g} s); dead_host_s: from the event until nginx last tried "
                "the dead host (its access log's $upstream_addr); lb_retried: requests HAProxy "
                "sent again after a failed try (its log's retries), e.g. on a kept-alive "
                "connection an nginx reload closed"
            ),
            "servertune drains a host before its SIGTERM (down in nginx, reload); defaults do not",
        ]


def _lb_log(cfg: str) -> str:
    """HAProxy's own log (httplog: timers, termination state) to its stdout, the server's log."""
    cfg = "global\n    log stdout format raw local0\n\n" + cfg
    return cfg.replace("defaults\n", "defaults\n    log global\n    option httplog\n", 1)


def _timeout_s(plan: Any) -> float:
    return float(plan.upstream_connect_timeout_s) if plan is not None else 2.0


def _tally(values: Any) -> str:
    """`502x3 0x1`: each value and how often it came, in order of value."""
    counts: dict[int, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return " ".join(f"{value}x{count}" for value, count in sorted(counts.items()))


#: The bench's access log line: $msec $request_time $status $request_method "$upstream_addr" ...
_LOG_LINE = re.compile(r'^(\S+) (\S+) \S+ \S+ "([^"]*)"')


def _nginx_log(path: Path) -> list[tuple[float, str]]:
    """(start of the request, the hosts nginx tried) for each line of the bench's access log."""
    tried = []
    with contextlib.suppress(OSError):
        for line in path.read_text(errors="replace").splitlines():
            match = _LOG_LINE.match(line)
            if match is not None:
                with contextlib.suppress(ValueError):
                    tried.append((float(match[1]) - float(match[2]), match[3]))
    return tried


#: HAProxy's httplog line (`option httplog`, _lb_log): the accept date (local time), the
#: timers Tq/Tw/Tc/Tr/Ta, and the counts actconn/feconn/beconn/srv_conn/retries.
_LB_LINE = re.compile(
    r"\[(\d+/\w+/\d+:\d+:\d+:\d+\.\d+)\] \S+ \S+ (?:-?\d+/){4}\+?(\d+) .* "
    r"(?:\d+/){4}\+?(\d+) \d+/\d+ \""
)


def _lb_retries(path: Path) -> list[float]:
    """When each request HAProxy sent again ended (its log line's retries above 0: a try on a
    connection to nginx failed - closed by a reload, refused, timed out - and it was resent).
    A request whose every try failed on a kept-alive client connection leaves no line at all:
    HAProxy closes that client connection without an answer, for the client to resend."""
    ends = []
    with contextlib.suppress(OSError):
        for line in path.read_text(errors="replace").splitlines():
            match = _LB_LINE.search(line)
            if match is not None and int(match[3]) > 0:
                accepted = datetime.datetime.strptime(match[1], "%d/%b/%Y:%H:%M:%S.%f")
                ends.append(accepted.timestamp() + int(match[2]) / 1000)
    return ends


def _rows(
    config: str,
    samples: list[_Sample],
    windows: list[tuple[str, float, str]],
    counts: dict[str, int],
    tried: list[tuple[float, str]],
    timeout_s: float,
    run: int,
    retried: Sequence[float] = (),
) -> list[dict[str, Any]]:
    """One row per window: what was sent in it and how it went (`retried`: when each request
    HAProxy resent ended)."""
    rows = []
    for (name, start, dead), (_, end, _) in itertools.pairwise(windows):
        # By its end: a request in flight when an event began met that event (a POST on a host
        # killed under it failed because of the kill, not of what came before).
        inside = [s for s in samples if start <= s.start + s.ms / 1000 < end]
        gets = [s for s in inside if s.kind == "get"]
        posts = [s for s in inside if s.kind == "post"]
        row: dict[str, Any] = {
            "config": config,
            "event": name,
            "run": run,
            "get_requests": len(gets),
            "get_failed": sum(1 for s in gets if s.status != 200),
            "post_requests": len(posts),
            "post_failed": sum(1 for s in posts if s.status != 200),
            "post_replayed": sum(1 for s in posts if s.order and counts.get(s.order, 0) > 1),
            "waited_past": sum(1 for s in inside if s.ms > timeout_s * 1000),
            "get_max_ms": round(max((s.ms for s in gets), default=0.0), 1),
            "post_max_ms": round(max((s.ms for s in posts), default=0.0), 1),
            # How the failures failed: HTTP status, or 0 for no answer at all (closed, reset).
            "failed_by": _tally(s.status for s in inside if s.status != 200),
            # Each failed GET: when it started after the event, how long it took, the answer.
            "failed_gets": " ".join(
                f"+{s.start - start:.3f}s/{s.ms:.0f}ms/{s.status}" for s in gets if s.status != 200
            ),
            # Requests HAProxy resent after a failed try: each a race it won for the client.
            "lb_retried": sum(1 for t in retried if start <= t < end),
            "max_ms": round(max((s.ms for s in inside), default=0.0), 1),
        }
        if dead:
            address = f"{HOSTS[dead]}:{APP_PORT}"
            last = max((t for t, hosts in tried if start <= t < end and address in hosts),
                       default=None)  # fmt: skip
            row["dead_host_s"] = None if last is None else round(max(0.0, last - start), 2)
        rows.append(row)
    return rows
