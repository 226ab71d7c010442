"""The ASGI targets really serve: uvicorn, gunicorn's uvicorn worker and granian behind nginx,
started from servertune's files, with the plan's admission answering the excess with 503."""

from __future__ import annotations

import http.client
import math
import os
import re
import stat
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from servertune.bench.apps import install
from servertune.bench.harness.deployments import AsgiServer, deploy_asgi, place
from servertune.bench.harness.ports import listening_ports
from servertune.bench.harness.supervision import Stack
from servertune.render import TARGETS, fitting, render_target
from servertune.sizing import Plan, make_plan
from servertune.sizing.defaults import (
    ASGI_NORMAL_RPS,
    ASGI_OVERLOAD_P99,
    ASGI_OVERLOAD_P99_TARGET,
)
from servertune.targets.asgi_servers import (
    PER_WORKER_FILES,
    prefers_per_worker,
    recommended_per_worker,
)
from servertune.workload import Workload

from .support import nginx_check, running, wait_for

APP = "servertune.bench.apps.asgi_mix:app"
#: A loop-heavy workload: 50 ms of the loop per 100 ms request, so each of the two processes
#: serves 1000 / (50 ms + granian's 0 + nginx's 0.05) = 19.98 req/s at most (granian, the
#: fastest server nginx may front) and admits 19.98 x (100.15 ms held + 50.1 ms of wait) = 3.0009,
#: so 4 requests (Little's law, rounded up); nginx admits 8.
LOOP_HEAVY = Workload(cores=2, interface="asgi", service_time_ms=100, cpu_fraction=0.5, app=APP)
#: A fast path (0.12 ms, nearly all CPU): hundreds admitted per process, a 25 ms queue floor.
FAST_PATH = Workload(cores=2, interface="asgi", service_time_ms=0.12, cpu_fraction=0.96, app=APP)
#: The app's requests wait this long (awaiting): long enough that a burst is all in flight at once,
#: even on a busy 2-core CI machine.
HOLD_MS = 3000


def _get(port: int, path: str = "/") -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def _burst(port: int, size: int) -> list[int]:
    """Statuses of `size` GETs sent at once: every connection is open before any request is sent,
    so no request can arrive after an earlier one was answered (which would free its admission).
    A request a busy machine sent only after the first admitted one was answered (its thread
    held past the whole HOLD_MS) met a freed admission, not the burst: it is left out."""
    connections = [http.client.HTTPConnection("127.0.0.1", port, timeout=30) for _ in range(size)]
    for connection in connections:
        connection.connect()
    ready = threading.Barrier(size)

    def send(connection: http.client.HTTPConnection) -> tuple[float, float, int]:
        ready.wait(timeout=30)
        sent = time.monotonic()
        connection.request("GET", "/")
        response = connection.getresponse()
        response.read()
        return sent, time.monotonic(), response.status

    try:
        with ThreadPoolExecutor(size) as pool:
            answers = list(pool.map(send, connections))
    finally:
        for connection in connections:
            connection.close()
    first_freed = min((done for _, done, status in answers if status == 200), default=math.inf)
    return sorted(status for sent, _, status in answers if sent < first_freed)


def _placed(stack: Stack, workload: Workload) -> Plan:
    """The workload on free ports, serving the bench app copied into the stack's directory."""
    app = install("asgi_mix", stack.dir)
    plan = make_plan(place(workload.model_copy(update={"app": app}), stack, 2))
    assert plan.admission_limit == 8  # 4 a process: the burst below overflows every one
    return plan


#: Each ASGI app-server target: the server it starts, whether one instance per socket, and the
#: line of its file that fixes the processes each instance runs.
LAYOUTS: dict[str, tuple[AsgiServer, bool, str]] = {
    "uvicorn": ("uvicorn", False, "--workers {processes} "),
    "uvicorn-per-worker": ("uvicorn", True, "--workers 1 "),
    "gunicorn-asgi": ("gunicorn-asgi", False, "workers = {processes}\n"),
    "gunicorn-asgi-per-worker": ("gunicorn-asgi", True, "workers = 1\n"),
    "granian": ("granian", False, "--workers {processes} "),
    "granian-per-worker": ("granian", True, "--workers 1 "),
}


def test_every_asgi_server_target_is_started_below() -> None:
    """The burst test covers every ASGI target that starts an app server (all but the proxies':
    nginx's and the load balancer's)."""
    servers = [n for n in fitting("asgi") if not n.startswith(("nginx", "haproxy"))]
    assert sorted(servers) == sorted(LAYOUTS)


def test_every_asgi_layout_has_its_measured_overload_p99() -> None:
    """What `bench asgi` measured is recorded for every ASGI server target, so the headers and
    `explain` can say of each layout whether it meets the overload target."""
    assert set(ASGI_OVERLOAD_P99) == set(LAYOUTS)


@pytest.mark.parametrize("server", list(PER_WORKER_FILES))
def test_shared_socket_file_points_to_a_per_worker_target_that_met_the_overload_target(
    server: str,
) -> None:
    """A one-socket ASGI file for 2+ processes quotes its measured overload p99 beside that of a
    per-worker target whose ratio met the 2 x target, and says to prefer that target (with its
    nginx) when it measured lower."""
    text = render_target(server, make_plan(LOOP_HEAVY))
    recommended = recommended_per_worker(server)
    assert recommended.endswith("-per-worker")
    assert ASGI_OVERLOAD_P99[recommended] <= ASGI_OVERLOAD_P99_TARGET
    assert f"at {ASGI_OVERLOAD_P99[server]:g} x the unloaded p99 with this layout" in text
    assert f"at {ASGI_OVERLOAD_P99[recommended]:g} x with {TARGETS[recommended].filename}" in text
    prefer = f"Prefer the per-worker layout: `servertune gen {recommended}` + `gen nginx-asgi-per-worker`"
    assert (prefer in text) == prefers_per_worker(server, recommended)
    assert "`servertune bench asgi`" in text
    assert "tests/" not in text
    assert "docs/" not in text


def test_a_per_worker_layout_that_missed_is_not_recommended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """If granian's per-worker layout had missed the target, granian.sh would point to the
    per-worker layout that measured best instead of it."""
    monkeypatch.setitem(ASGI_OVERLOAD_P99, "granian-per-worker", ASGI_OVERLOAD_P99_TARGET + 1)
    best = min((t for t, _ in PER_WORKER_FILES.values()), key=ASGI_OVERLOAD_P99.__getitem__)
    assert best != "granian-per-worker"
    assert recommended_per_worker("granian") == best
    assert f"`servertune gen {best}`" in render_target("granian", make_plan(LOOP_HEAVY))


def test_no_preference_when_the_per_worker_layout_measured_no_better(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The header says to prefer the per-worker layout only when it measured better (lower
    overload p99, or more req/s than the noise): with equal numbers it quotes both, prefers neither."""
    for measured in (ASGI_OVERLOAD_P99, ASGI_NORMAL_RPS):
        monkeypatch.setitem(measured, "uvicorn", measured["uvicorn-per-worker"])
    text = render_target("uvicorn", make_plan(LOOP_HEAVY))
    assert "with uvicorn-per-worker.sh behind nginx least_conn" in text
    assert "served 1.00 x this layout's requests per second" in text
    assert "Prefer" not in text


def test_more_throughput_alone_is_reason_to_prefer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A per-worker layout with the same overload p99 but 20% more req/s at normal load is preferred."""
    monkeypatch.setitem(ASGI_OVERLOAD_P99, "uvicorn", ASGI_OVERLOAD_P99["uvicorn-per-worker"])
    monkeypatch.setitem(ASGI_NORMAL_RPS, "uvicorn", ASGI_NORMAL_RPS["uvicorn-per-worker"] / 1.2)
    assert prefers_per_worker("uvicorn", "uvicorn-per-worker")
    assert "Prefer the per-worker layout" in render_target("uvicorn", make_plan(LOOP_HEAVY))


def test_one_process_needs_no_layout_advice() -> None:
    """With one process the shared socket is the per-worker layout: no advice in the header."""
    one = LOOP_HEAVY.model_copy(update={"cores": 1})
    for server in PER_WORKER_FILES:
        assert "servertune bench asgi" not in render_target(server, make_plan(one))


def test_explain_says_which_asgi_layout_meets_the_overload_target() -> None:
    """For an ASGI app `explain` gives every layout's measured overload p99 and whether it meets
    the target: the per-worker ones under `sockets`, the one-socket ones under `shared_socket`."""
    reasons = make_plan(LOOP_HEAVY).reasons
    for target, ratio in ASGI_OVERLOAD_P99.items():
        verdict = "meets" if ratio <= ASGI_OVERLOAD_P99_TARGET else "misses"
        row = "sockets" if target.endswith("-per-worker") else "shared_socket"
        assert f"{target} {ratio:g} ({verdict}; " in reasons[row], (target, reasons[row])
    assert "`servertune bench asgi`" in reasons["sockets"]


@pytest.mark.parametrize("target", list(LAYOUTS))
def test_asgi_server_answers_through_nginx_and_admits_only_the_plan(target: str) -> None:
    """Started from servertune's file behind nginx-asgi.conf (nginx-asgi-per-worker.conf for the
    per-worker layouts), the server answers 200; a burst of admission_limit + 6 slow requests
    gets exactly admission_limit 200s and a quick 503 for the rest."""
    server, per_worker, worker_line = LAYOUTS[target]
    with Stack(label=f"test-{target}") as stack:
        plan = _placed(stack, LOOP_HEAVY)
        deployment = deploy_asgi(
            stack, target, plan, server, per_worker=per_worker,
            env={"SERVERTUNE_BENCH_AWAIT_MS": "0"},
        )  # fmt: skip
        assert len(deployment.app_servers) == (plan.processes if per_worker else 1)
        port = plan.workload.listen_port
        status, body = _get(port)
        assert status == 200
        assert body.startswith("pid ")
        text = deployment.files[TARGETS[target].filename]
        assert worker_line.format(processes=plan.processes) in text
        ports = [p for s in [*deployment.app_servers, deployment.nginx] for p in s.ports]
        stack.stop(deployment.nginx)
        for app_server in deployment.app_servers:
            stack.stop(app_server)

        # The same files, now serving requests that await HOLD_MS: a burst overfills admission.
        plan = _placed(stack, LOOP_HEAVY)
        deployment = deploy_asgi(
            stack, f"{target}-burst", plan, server, per_worker=per_worker,
            env={"SERVERTUNE_BENCH_AWAIT_MS": str(HOLD_MS), "SERVERTUNE_BENCH_BLOCK_MS": "0"},
        )  # fmt: skip
        burst = plan.admission_limit + 6
        statuses = _burst(plan.workload.listen_port, burst)
        shown = " ".join(map(str, statuses))  # short enough that pytest prints it whole
        assert statuses.count(200) == plan.admission_limit, shown
        assert statuses.count(503) == len(statuses) - plan.admission_limit >= 5, shown
        ports += [p for s in [*deployment.app_servers, deployment.nginx] for p in s.ports]
    assert len(ports) == 2 * (len(deployment.app_servers) + 1)
    assert not set(ports) & listening_ports()


def test_granian_serves_a_wsgi_app_with_its_thread_pool(pid_app: Path) -> None:
    """granian.sh for a WSGI app serves it behind nginx with the plan's blocking threads."""
    workload = Workload(cores=2, service_time_ms=80, cpu_fraction=0.25, app="pidapp:application")
    with Stack(label="test-granian-wsgi") as stack:
        plan = make_plan(place(workload, stack, 2, app_dir=str(pid_app)))
        deployment = deploy_asgi(stack, "granian-wsgi", plan, "granian")
        assert f"--blocking-threads {plan.threads}" in deployment.files["granian.sh"]
        status, body = _get(plan.workload.listen_port)
        assert status == 200
        assert body.strip().isdigit()


@pytest.mark.parametrize("target", ["nginx-asgi", "nginx-asgi-snippet"])
def test_nginx_accepts_the_asgi_configs(target: str, tmp_path: Path) -> None:
    """nginx -t passes on nginx-asgi.conf and on its snippet inside an http block (limit_conn_zone
    belongs to the http context)."""
    unix = Workload(cores=3, interface="asgi", socket_dir="/tmp/servertune-check", app=APP)
    for workload in (LOOP_HEAVY, unix):
        conf = tmp_path / TARGETS[target].filename
        conf.write_text(render_target(target, make_plan(workload)))
        if target.endswith("snippet"):
            wrapper = tmp_path / "wrapper.conf"
            wrapper.write_text(
                f"pid nginx.pid;\nerror_log error.log;\nevents {{}}\nhttp {{\n    include {conf.name};\n}}\n"
            )
            conf = wrapper
        checked = nginx_check(conf)
        assert checked.returncode == 0, checked.stderr


def test_gunicorn_accepts_the_asgi_config(tmp_path: Path) -> None:
    """gunicorn --check-config loads gunicorn-asgi.conf.py with uvicorn's worker class."""
    conf = tmp_path / "gunicorn-asgi.conf.py"
    conf.write_text(render_target("gunicorn-asgi", make_plan(LOOP_HEAVY)))
    checked = subprocess.run(
        [sys.executable, "-m", "gunicorn", "--check-config", "-c", str(conf), APP],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr


def test_granian_unix_socket_is_closed_to_other_users(tmp_path: Path) -> None:
    """granian.sh on a unix socket creates it 0660 (granian parses the mode as octal only with a 0)."""
    sockets = tmp_path / "sock"
    sockets.mkdir()
    app = install("asgi_mix", tmp_path)
    workload = Workload(
        cores=1, interface="asgi", socket_dir=str(sockets), app=app, app_dir=str(tmp_path)
    )
    script = tmp_path / "granian.sh"
    script.write_text(render_target("granian", make_plan(workload)))
    path_env = {"PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    with running(["sh", str(script)], tmp_path, env=path_env):
        wait_for(lambda: (sockets / "shared.sock").exists(), what="granian's unix socket")
        assert stat.S_IMODE((sockets / "shared.sock").stat().st_mode) == 0o660


@pytest.mark.parametrize("target", ["uvicorn-per-worker", "granian-per-worker"])
@pytest.mark.parametrize("worker", ["", "2", "x"])
def test_per_worker_script_refuses_a_worker_it_has_no_socket_for(
    target: str, worker: str, tmp_path: Path
) -> None:
    """A per-worker launch script run without SERVERTUNE_WORKER, or with one past its sockets,
    exits 2 with the valid range before starting anything."""
    script = tmp_path / TARGETS[target].filename
    script.write_text(render_target(target, make_plan(LOOP_HEAVY)))
    done = subprocess.run(
        ["/bin/sh", str(script)], env={"PATH": "/nonexistent", "SERVERTUNE_WORKER": worker},
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == "SERVERTUNE_WORKER must be 0 .. 1\n"


def test_gunicorn_asgi_per_worker_config_refuses_a_worker_it_has_no_socket_for(
    tmp_path: Path,
) -> None:
    """gunicorn-asgi-per-worker.conf.py stops with the valid range for a worker past its sockets."""
    conf = tmp_path / "gunicorn-asgi-per-worker.conf.py"
    conf.write_text(render_target("gunicorn-asgi-per-worker", make_plan(LOOP_HEAVY)))
    checked = subprocess.run(
        [sys.executable, "-m", "gunicorn", "--check-config", "-c", str(conf), APP],
        env={**os.environ, "SERVERTUNE_WORKER": "2"},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert checked.returncode != 0
    assert "SERVERTUNE_WORKER must be 0..1, got '2'" in checked.stdout + checked.stderr
    ok = subprocess.run(
        [sys.executable, "-m", "gunicorn", "--check-config", "-c", str(conf), APP],
        env={**os.environ, "SERVERTUNE_WORKER": "1"},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize(
    "target", ["uvicorn-per-worker", "granian-per-worker", "gunicorn-asgi-per-worker"]
)
@pytest.mark.parametrize("workload", [LOOP_HEAVY, FAST_PATH], ids=["loop-heavy", "fast-path"])
def test_per_worker_file_describes_both_fronts_with_their_own_numbers(
    target: str, workload: Workload
) -> None:
    """A per-worker file's header names both fronts servertune writes for it, each with the
    number that front's own file holds: nginx's limit_conn, HAProxy's maxconn and timeout queue."""
    plan = make_plan(workload)
    header = render_target(target, plan).split("\nimport os", 1)[0].split("\ncase ", 1)[0]
    nginx = render_target("nginx-asgi-per-worker", plan)
    haproxy = render_target("haproxy-asgi-per-worker", plan)
    limit = re.search(r"limit_conn servertune_asgi_admission (\d+);", nginx)
    maxconn = set(re.findall(r" maxconn (\d+)", haproxy.split("\nbackend ", 1)[1]))
    queue = re.search(r"timeout queue (\d+)ms", haproxy)
    assert limit
    assert queue
    assert len(maxconn) == 1
    assert "behind nginx" not in header
    assert (
        f"nginx-asgi-per-worker.conf (nginx least_conn) admits {limit.group(1)} requests" in header
    )
    assert f"gives each instance {maxconn.pop()} at" in header
    assert f"waited {queue.group(1)} ms for a free one" in header
