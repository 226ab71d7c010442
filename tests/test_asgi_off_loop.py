"""ASGI requests that run work in threads besides the loop's (`off_loop_fraction`): two
processes a core, memory permitting, and a capacity bound by the cores they share."""

from __future__ import annotations

import pytest

from servertune.sizing import make_plan
from servertune.sizing.defaults import (
    ASGI_SERVER_MS_PER_REQUEST,
    ASGI_THREADED_PROCESSES_PER_CORE,
    MEMORY_HEADROOM_RATIO,
    NGINX_MS_PER_REQUEST,
)
from servertune.workload import Workload

#: What `measure` wrote for a Django 5.2 async view awaiting 20 ms (docs/benchmarks.md).
DJANGO = {
    "cores": 2,
    "interface": "asgi",
    "service_time_ms": 24.1,
    "cpu_ms": 0.8,
    "loop_blocking_fraction": 0.0345,
    "memory_per_worker_mb": 51,
}


def test_requests_in_threads_get_two_processes_a_core() -> None:
    """off_loop_fraction 0.3: four processes on two cores, each with half a core, and the
    reason names the measured share and the memory it takes."""
    plan = make_plan(Workload(**DJANGO, off_loop_fraction=0.3))
    assert ASGI_THREADED_PROCESSES_PER_CORE == 2
    assert plan.processes == 4
    assert plan.cores_per_process == 0.5
    reason = plan.reasons["processes"]
    assert "off_loop_fraction 0.3" in reason
    assert "4 x 51 MiB = 204 MiB" in reason


def test_capacity_is_the_cores_cpu_when_processes_share_them() -> None:
    """Four processes on two cores serve what the cores' CPU allows, not four loops' worth:
    each process's time per request is its CPU over its half core, above its loop time."""
    plan = make_plan(Workload(**DJANGO, off_loop_fraction=0.3))
    per_request_ms = (0.8 + ASGI_SERVER_MS_PER_REQUEST) / 0.5
    assert plan.loop_ms is not None
    assert plan.loop_ms < per_request_ms
    assert plan.asgi_capacity_rps == pytest.approx(
        4 * 1000 / (per_request_ms + NGINX_MS_PER_REQUEST)
    )
    one_a_core = make_plan(Workload(**DJANGO))
    assert one_a_core.processes == 2
    assert one_a_core.asgi_capacity_rps is not None
    # The same cores: the same CPU-bound capacity within the server's own share.
    assert plan.asgi_capacity_rps == pytest.approx(one_a_core.asgi_capacity_rps, rel=0.15)
    assert "more processes than cores share them" in plan.reasons["asgi_capacity_rps"]


def test_per_process_counts_follow_the_per_process_capacity() -> None:
    """Admission is per process: with twice the processes each admits about half as many."""
    four = make_plan(Workload(**DJANGO, off_loop_fraction=0.3))
    two = make_plan(Workload(**DJANGO))
    assert four.admitted_per_process is not None
    assert two.admitted_per_process is not None
    assert four.admission_limit is not None
    assert two.admission_limit is not None
    assert four.admitted_per_process < two.admitted_per_process
    assert four.admission_limit == pytest.approx(two.admission_limit, rel=0.2)


def test_a_memory_limit_that_holds_fewer_bounds_them() -> None:
    """A memory limit holding three such processes (with headroom) gives three, bound: memory."""
    limit = int(3.5 * 51 / MEMORY_HEADROOM_RATIO)
    plan = make_plan(Workload(**DJANGO, off_loop_fraction=0.3, memory_limit_mb=limit))
    assert plan.processes == 3
    assert "bound: memory" in plan.reasons["processes"]


@pytest.mark.parametrize(
    "changes",
    [
        {"off_loop_fraction": 0.0},  # all on the loop: one a core, as before
        {"off_loop_fraction": 0.3, "interface": "wsgi"},  # no loop: the WSGI rules decide
        {"off_loop_fraction": 0.3, "gil": "disabled"},  # no GIL to hand between threads
    ],
)
def test_one_process_a_core_otherwise(changes: dict[str, object]) -> None:
    """Without work off the loop, without a loop, or without a GIL, the processes are what
    they were: one a core for the ASGI cases."""
    values = {**DJANGO, **changes}
    if values["interface"] == "wsgi":
        values.pop("loop_blocking_fraction")
    plan = make_plan(Workload(**values))  # type: ignore[arg-type]
    baseline = {**values, "off_loop_fraction": 0.0}
    assert plan.processes == make_plan(Workload(**baseline)).processes  # type: ignore[arg-type]
    assert "off_loop_fraction" not in plan.reasons["processes"]
