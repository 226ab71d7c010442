"""Sizing with a memory budget: the concurrency the GIL share asks for as single-threaded
processes while memory holds them, threads only beyond; recycling set by memory growth."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servertune.machine import Machine
from servertune.sizing import (
    GIL_SATURATION,
    MAX_PROCESSES_PER_CORE,
    MAX_THREADS_PER_PROCESS,
    MEMORY_GROWTH_ALLOWANCE,
    MEMORY_HEADROOM_RATIO,
    RECYCLE_MIN_INTERVAL_S,
    make_plan,
)
from servertune.sizing.defaults import WSGI_SERVER_MS_PER_REQUEST
from servertune.sizing.rules.processes import workers_that_fit
from servertune.workload import Workload

#: The bench balance request: 100 ms, half of it holding the GIL (2 threads saturate a core).
HALF_GIL = {"cores": 2, "service_time_ms": 100.0, "cpu_fraction": 0.5}


def test_without_memory_per_worker_one_process_per_core_and_threads() -> None:
    """No memory figures: one process per core, the GIL share as threads; the reason says the
    cores bound it and names what to measure."""
    plan = make_plan(Workload(**HALF_GIL))
    assert (plan.processes, plan.threads) == (2, 2)
    assert "(bound: cores; the GIL share asks for 6 slots" in plan.reasons["processes"]
    assert "given a memory limit with room for 6" in plan.reasons["processes"]


def test_memory_for_every_slot_makes_each_a_process() -> None:
    """Memory for 6 workers of 100 MiB: 6 single-threaded processes (the slots that keep 2
    cores busy 95% of the time), bound by the GIL share."""
    plan = make_plan(Workload(**HALF_GIL, memory_per_worker_mb=100, memory_limit_mb=2048))
    assert (plan.processes, plan.threads) == (6, 1)
    assert "(bound: GIL share)" in plan.reasons["processes"]
    assert "2048 MiB holds 18 of 100 MiB" in plan.reasons["processes"]
    assert plan.cores_per_process == pytest.approx(1 / 3)
    # The same CPU ceiling: the processes share the two cores.
    assert plan.ceiling_rps == pytest.approx(2 / (0.05 + WSGI_SERVER_MS_PER_REQUEST / 1000))
    assert len(plan.sockets) == 6


def test_a_tight_budget_falls_back_to_threads() -> None:
    """Memory for 3 processes of a 6-slot workload: 3 processes, threads for the rest."""
    plan = make_plan(Workload(**HALF_GIL, memory_per_worker_mb=100, memory_limit_mb=340))
    assert plan.processes == 3
    assert plan.threads == 2
    assert "(bound: memory)" in plan.reasons["processes"]
    assert "so threads take the rest" in plan.reasons["processes"]


def test_memory_for_fewer_processes_than_cores() -> None:
    """Memory for one 300 MiB worker on 2 cores: one process, bound by memory, as before, with the
    threads its one GIL keeps busy."""
    plan = make_plan(Workload(**HALF_GIL, memory_per_worker_mb=300, memory_limit_mb=500))
    assert (plan.processes, plan.threads) == (1, 2)
    assert "fewer than the 2 cores (bound: memory)" in plan.reasons["processes"]


def test_asgi_and_free_threaded_plans_keep_one_process_per_core() -> None:
    """An event loop per process, or no GIL to hand off: processes stay one per core."""
    memory = {"memory_per_worker_mb": 50, "memory_limit_mb": 4096}
    asgi = make_plan(Workload(**HALF_GIL, **memory, interface="asgi"))
    assert asgi.processes == 2
    free = make_plan(Workload(**HALF_GIL, **memory, gil="disabled"))
    assert free.processes == 2


def test_processes_per_core_are_capped() -> None:
    """A request holding the GIL 5% of its time wants 19 threads a core: at most
    MAX_PROCESSES_PER_CORE processes a core, threads beyond."""
    plan = make_plan(
        Workload(cores=2, cpu_fraction=0.05, memory_per_worker_mb=10, memory_limit_mb=100_000)
    )
    assert plan.processes == 2 * MAX_PROCESSES_PER_CORE
    assert plan.threads > 1
    assert f"at most {MAX_PROCESSES_PER_CORE} processes a core" in plan.reasons["processes"]


def test_growth_budgets_an_allowance_per_process() -> None:
    """A worker whose memory grows is budgeted at warm + MEMORY_GROWTH_ALLOWANCE: 340 MiB held
    3 workers of 100 MiB, and holds 2 of 125."""
    grows = Workload(
        **HALF_GIL, memory_per_worker_mb=100, memory_limit_mb=340, memory_growth_kb_per_request=1
    )
    assert workers_that_fit(grows) == math.floor(340 * MEMORY_HEADROOM_RATIO / 125)
    plan = make_plan(grows)
    assert plan.processes == 2
    assert "+ 25% for growth until recycling" in plan.reasons["processes"]


def test_growth_sets_max_requests() -> None:
    """100 MiB x 25% / 10 KiB a request = 2560 requests before a worker outgrows its budget."""
    plan = make_plan(
        Workload(
            **HALF_GIL,
            memory_per_worker_mb=100,
            memory_limit_mb=2048,
            memory_growth_kb_per_request=10,
        )
    )
    assert plan.max_requests == math.floor(100 * MEMORY_GROWTH_ALLOWANCE * 1024 / 10)
    assert "(bound: memory growth)" in plan.reasons["max_requests"]
    # 2560 requests at 10 req/s a worker is about 4 min: under the 10 min interval, said so.
    assert RECYCLE_MIN_INTERVAL_S > 2560 / 10
    assert any("must recycle every 2560 requests" in w for w in plan.warnings)


def test_slow_growth_leaves_max_requests_to_the_interval() -> None:
    """Growth that stays inside the allowance until the interval's recycling changes nothing,
    and the reason says how much it grows by then."""
    quiet = make_plan(Workload(**HALF_GIL, memory_per_worker_mb=100, memory_limit_mb=2048))
    slow = make_plan(
        Workload(
            **HALF_GIL,
            memory_per_worker_mb=100,
            memory_limit_mb=2048,
            memory_growth_kb_per_request=0.5,
        )
    )
    assert slow.max_requests == quiet.max_requests
    assert "stays within the 25% allowance" in slow.reasons["max_requests"]
    assert not slow.warnings


def test_no_growth_is_no_allowance() -> None:
    """Growth 0 (measured, none): a process is budgeted at its warm size."""
    zero = Workload(**HALF_GIL, memory_per_worker_mb=100, memory_limit_mb=340)
    assert workers_that_fit(zero.model_copy(update={"memory_growth_kb_per_request": 0.0})) == 3
    assert workers_that_fit(zero) == 3


def test_a_host_ram_budget_names_the_field_when_one_worker_does_not_fit() -> None:
    """No limit, a host too small for one worker: the error names memory_per_worker_mb."""
    from servertune.sizing import PlanError, plan_for

    with pytest.raises(PlanError, match=r"^memory_per_worker_mb: the host's 100 MiB"):
        plan_for(
            Workload(cores="auto", memory_per_worker_mb=500), Machine(cores=2, memory_total_mb=100)
        )


@given(
    cores=st.integers(1, 16),
    cpu_fraction=st.floats(0.02, 1.0),
    worker=st.integers(1, 2000),
    limit=st.integers(1, 64_000),
    growth=st.one_of(st.none(), st.floats(0, 100)),
)
def test_the_layout_never_outgrows_memory_or_the_slots(
    cores: int, cpu_fraction: float, worker: int, limit: int, growth: float | None
) -> None:
    """For every workload that fits one worker: processes never exceed what memory holds nor
    the slots the GIL share asks for, and their threads keep the cores busy."""
    from servertune.sizing import PlanError
    from servertune.sizing.queueing import slots_for

    workload = Workload(
        cores=cores,
        cpu_fraction=cpu_fraction,
        memory_per_worker_mb=worker,
        memory_limit_mb=limit,
        memory_growth_kb_per_request=growth,
    )
    fits = workers_that_fit(workload)
    assert fits is not None
    if fits < 1:
        with pytest.raises(PlanError):
            make_plan(workload)
        return
    plan = make_plan(workload)
    slots = slots_for(cores, cpu_fraction, cores * MAX_PROCESSES_PER_CORE).slots
    assert plan.processes <= fits
    assert plan.processes <= max(cores, slots)
    # Each process's threads stop at what its GIL keeps busy; the slots past them are processes.
    gil = max(1, math.ceil(GIL_SATURATION * plan.cores_per_process / cpu_fraction - 1e-9))
    assert 1 <= plan.cpu_threads <= min(gil, MAX_THREADS_PER_PROCESS)
    servers = min(cores, plan.processes)
    wanted = slots_for(servers, cpu_fraction, plan.processes * MAX_THREADS_PER_PROCESS).slots
    assert plan.cpu_threads in (gil, MAX_THREADS_PER_PROCESS) or (
        plan.processes * plan.cpu_threads >= wanted
    )
    if plan.processes > cores:
        assert plan.ceiling_rps == pytest.approx(
            cores / (0.1 * cpu_fraction + WSGI_SERVER_MS_PER_REQUEST / 1000)
        )
