"""uWSGI's socket layout comes from the plan: a socket per worker while a process has threads,
one socket for single-threaded processes (a worker accepts only when idle, so one socket is one
queue), with thunder-lock once enough processes wait on it."""

from __future__ import annotations

import re

import pytest

from servertune.render import render_gunicorn, render_nginx, render_uwsgi
from servertune.sizing import THUNDER_LOCK_MIN_PROCESSES, Forced, make_plan
from servertune.workload import Workload

#: The bench balance request: 100 ms, half of it holding the GIL.
HALF_GIL = {"cores": 2, "service_time_ms": 100.0, "cpu_fraction": 0.5}


def _sockets(ini: str) -> list[str]:
    return re.findall(r"^socket = (.+)$", ini, flags=re.M)


def _upstream_servers(conf: str) -> list[str]:
    return re.findall(r"^\s*server (\S+) max_fails", conf, flags=re.M)


def test_threaded_processes_get_a_socket_each_behind_least_conn() -> None:
    plan = make_plan(Workload(**HALF_GIL))
    assert (plan.processes, plan.threads, plan.socket_layout) == (2, 2, "per-worker")
    assert "takes turns with it on the GIL" in plan.reasons["socket_layout"]
    ini = render_uwsgi(plan)
    assert _sockets(ini) == ["127.0.0.1:8001", "127.0.0.1:8002"]
    assert "map-socket = 0:1" in ini
    assert "map-socket = 1:2" in ini
    assert "thunder-lock" not in ini
    assert _upstream_servers(render_nginx(plan)) == ["127.0.0.1:8001", "127.0.0.1:8002"]


def test_single_threaded_processes_share_one_socket() -> None:
    """Memory for every slot as a process: 6 x 1 on the shared socket, nginx passing to it."""
    plan = make_plan(Workload(**HALF_GIL, memory_per_worker_mb=100, memory_limit_mb=2048))
    assert (plan.processes, plan.threads, plan.socket_layout) == (6, 1, "shared")
    assert "accepts a connection only when it is idle" in plan.reasons["socket_layout"]
    ini = render_uwsgi(plan)
    assert _sockets(ini) == [plan.shared_socket.address]
    assert "map-socket" not in ini
    assert f"listen = {plan.shared_backlog}" in ini
    assert _upstream_servers(render_nginx(plan)) == [plan.shared_socket.endpoint]


@pytest.mark.parametrize("processes", [2, THUNDER_LOCK_MIN_PROCESSES - 1])
def test_few_processes_on_one_socket_wake_together(processes: int) -> None:
    """A CPU-bound app: one thread a process, so the shared socket, without the lock below 5."""
    plan = make_plan(Workload(cores=processes, service_time_ms=50.0, cpu_fraction=1.0))
    assert (plan.processes, plan.threads, plan.socket_layout) == (processes, 1, "shared")
    assert plan.thunder_lock is False
    assert "few enough to wake together" in plan.reasons["thunder_lock"]
    assert "thunder-lock" not in render_uwsgi(plan)


def test_many_processes_on_one_socket_take_turns_in_accept() -> None:
    plan = make_plan(
        Workload(cores=THUNDER_LOCK_MIN_PROCESSES, service_time_ms=50.0, cpu_fraction=1.0)
    )
    assert plan.socket_layout == "shared"
    assert plan.thunder_lock is True
    assert "thunder-lock = true" in render_uwsgi(plan)
    # Asked for per-worker sockets, the lock has nothing to lock.
    per_worker = render_uwsgi(plan, "per-worker")
    assert "thunder-lock" not in per_worker
    assert "map-socket = 4:5" in per_worker


def test_one_process_keeps_its_one_mapped_socket() -> None:
    plan = make_plan(Workload(cores=1, service_time_ms=50.0, cpu_fraction=1.0))
    assert (plan.processes, plan.threads, plan.socket_layout) == (1, 1, "per-worker")
    assert "map-socket = 0:1" in render_uwsgi(plan)


def test_asgi_plans_keep_a_socket_per_event_loop() -> None:
    plan = make_plan(Workload(cores=2, service_time_ms=50.0, cpu_fraction=1.0, interface="asgi"))
    assert plan.socket_layout == "per-worker"
    assert plan.thunder_lock is False


def test_a_named_layout_overrides_the_plans() -> None:
    """Benchmarks render the other layout of the same plan to compare them."""
    plan = make_plan(Workload(**HALF_GIL, memory_per_worker_mb=100, memory_limit_mb=2048))
    ini = render_uwsgi(plan, "per-worker")
    assert len(_sockets(ini)) == 6
    assert "map-socket = 5:6" in ini
    assert len(_upstream_servers(render_nginx(plan, "uwsgi", "per-worker"))) == 6
    # gunicorn's nginx keeps naming its own layout (gen nginx-gunicorn: per-worker gunicorns).
    assert len(_upstream_servers(render_nginx(plan, "gunicorn"))) == 6


def test_a_forced_thread_count_moves_the_layout() -> None:
    """explain's reason follows the numbers the plan ends with, forced or derived."""
    forced = {"threads": Forced(2, "given")}
    plan = make_plan(
        Workload(**HALF_GIL, memory_per_worker_mb=100, memory_limit_mb=2048), forced=forced
    )
    assert (plan.threads, plan.socket_layout) == (2, "per-worker")


def test_gunicorn_gets_the_worker_class_that_accepts_only_when_free() -> None:
    """One thread a process: sync (one queue on the shared socket); threads: gthread."""
    single = make_plan(Workload(**HALF_GIL, memory_per_worker_mb=100, memory_limit_mb=2048))
    assert single.gunicorn_worker_class == "sync"
    assert 'worker_class = "sync"' in render_gunicorn(single)
    assert 'worker_class = "sync"' in render_gunicorn(single, "per-worker")
    threaded = make_plan(Workload(**HALF_GIL))
    assert threaded.gunicorn_worker_class == "gthread"
    assert 'worker_class = "gthread"' in render_gunicorn(threaded)
    asgi = make_plan(Workload(cores=2, service_time_ms=50.0, interface="asgi"))
    assert asgi.gunicorn_worker_class is None
