"""The sizing engine: invariants over all valid workloads, and the seeds' worked examples."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from servertune.machine import Machine
from servertune.sizing import (
    ADMISSION_FLOOR_LOOP_MS,
    ADMISSION_MIN_WAIT_MS,
    ASGI_OVERLOAD_P99_TARGET,
    ASGI_SERVER_MS_PER_REQUEST,
    GIL_SATURATION,
    MAX_ADMITTED_PER_PROCESS,
    MAX_PROCESSES_PER_CORE,
    MAX_REQUESTS_CAP,
    MAX_THREADS_PER_PROCESS,
    Forced,
    Plan,
    PlanError,
    make_plan,
    plan_for,
    poisson_quantile,
)
from servertune.sizing.defaults import MIN_CPU_MS_PER_REQUEST, WSGI_SERVER_MS_PER_REQUEST
from servertune.sizing.plan import Socket
from servertune.sizing.queueing import held_s
from servertune.workload import MIN_SERVICE_TIME_MS, Workload

from .strategies import workloads


@given(workloads(), st.integers(128, 65535))
def test_invariants_hold_for_every_workload(workload: Workload, somaxconn: int) -> None:
    """threads >= 1, one socket per process, backlog <= somaxconn, timeouts ordered across layers."""
    plan = make_plan(workload, Machine(cores=1, somaxconn=somaxconn))
    cores_each = max(1, math.floor(plan.cores_per_process))
    assert plan.threads in range(1, MAX_THREADS_PER_PROCESS * cores_each + 1)
    # More processes than cores only where memory holds a process per GIL-share slot.
    assert plan.processes in range(1, workload.cores * MAX_PROCESSES_PER_CORE + 1)
    assert len(plan.sockets) == plan.processes
    assert len({s.address for s in plan.sockets}) == plan.processes
    assert plan.backlog <= somaxconn
    assert plan.shared_backlog <= somaxconn
    assert workload.lb_idle_timeout_s < plan.nginx_keepalive_timeout_s
    assert plan.upstream_keepalive_timeout_s < plan.gunicorn_keepalive_s
    assert workload.slow_call_ms / 1000 < plan.request_timeout_s < plan.nginx_read_timeout_s
    # Under the GIL a process computes on one core; without it, on its share of the cores.
    computing = min(plan.processes, workload.cores) if workload.gil == "enabled" else workload.cores
    # The CPU per request in ms (cpu_ms, or the share of the service time), even past it, and a
    # WSGI server's own share.
    server_ms = WSGI_SERVER_MS_PER_REQUEST if workload.interface == "wsgi" else 0.0
    per_request_ms = max(workload.cpu_ms_per_request, MIN_CPU_MS_PER_REQUEST) + server_ms
    assert plan.ceiling_rps == pytest.approx(computing / (per_request_ms / 1000))
    assert set(plan.reasons) == set(plan.units)


@given(workloads())
def test_every_number_has_a_reason(workload: Workload) -> None:
    """Every derived field of the Plan is explained (nothing but the workload and the bookkeeping)."""
    plan = make_plan(workload)
    bookkeeping = {"workload", "machine", "reasons", "warnings"}
    assert set(Plan.fields()) - bookkeeping == set(plan.reasons) == set(Plan.derived_names())
    assert list(plan.reasons) == Plan.derived_names(), "reasons come in display (field) order"
    assert all(len(reason) > 15 for reason in plan.reasons.values())


@given(st.floats(1, 10_000), st.integers(1, 32))
def test_cpu_fraction_one_without_slow_calls_gives_one_thread(
    service_ms: float, cores: int
) -> None:
    """A request that holds the GIL the whole time gains nothing from a second thread."""
    plan = make_plan(Workload(cores=cores, service_time_ms=service_ms, cpu_fraction=1.0))
    assert plan.threads == 1


@given(st.floats(0.01, 1.0, allow_nan=False))
# 0.015064: 64 threads are exactly what the GIL needs (63 x f < 0.95 <= 64 x f), not a cap.
@example(0.015064)
def test_cpu_threads_saturate_the_gil(fraction: float) -> None:
    """cpu_threads x cpu_fraction keeps the GIL busy GIL_SATURATION of the time; one fewer would
    not: the finite-source queue's headroom is taken as processes, never as threads."""
    plan = make_plan(Workload(cores=2, cpu_fraction=fraction))
    if MAX_THREADS_PER_PROCESS * fraction < GIL_SATURATION:  # more wanted than a process may have
        assert plan.cpu_threads == MAX_THREADS_PER_PROCESS
        assert MAX_THREADS_PER_PROCESS * fraction < GIL_SATURATION
        assert any("capped at" in w for w in plan.warnings)
        return
    assert plan.cpu_threads * fraction >= GIL_SATURATION - 1e-6
    assert plan.cpu_threads == 1 or (plan.cpu_threads - 1) * fraction < GIL_SATURATION


@pytest.mark.parametrize(
    ("fraction", "threads"),
    [(1.0, 1), (0.99, 1), (0.96, 1), (0.5, 2), (0.48, 2), (0.45, 3), (0.25, 4)],
)
def test_measurement_noise_does_not_add_a_thread(fraction: float, threads: int) -> None:
    """A Django page measured at cpu_fraction 0.99 holds the GIL throughout: one thread, not two."""
    assert make_plan(Workload(cores=1, cpu_fraction=fraction)).cpu_threads == threads


@settings(max_examples=200)
@given(
    workloads(),
    st.sampled_from([0.0, 0.001, 0.01, 0.1, 0.5]),
    st.sampled_from([0.001, 0.01, 0.1, 0.5]),
    st.floats(1.0, 10.0),
)
def test_more_slow_calls_never_give_fewer_threads(
    workload: Workload, ratio: float, extra_ratio: float, longer: float
) -> None:
    """Raising slow_call_ratio or slow_call_ms never lowers the thread count."""
    base = make_plan(workload.model_copy(update={"slow_call_ratio": ratio}))
    more = make_plan(workload.model_copy(update={"slow_call_ratio": min(1.0, ratio + extra_ratio)}))
    longer_calls = workload.model_copy(
        update={
            "slow_call_ratio": ratio,
            "slow_call_ms": min(600_000, workload.slow_call_ms * longer),
        }
    )
    assert more.threads >= base.threads
    assert make_plan(longer_calls).threads >= base.threads


@given(workloads())
def test_any_slow_call_reserves_at_least_one_thread(workload: Workload) -> None:
    """With slow calls, a quick request always finds a thread that no slow call holds (seed 001)."""
    plan = make_plan(workload.model_copy(update={"slow_call_ratio": 0.001}))
    assert plan.slow_call_threads >= 1
    assert plan.threads >= min(MAX_THREADS_PER_PROCESS, plan.cpu_threads + 1)


def test_seed_000_half_gil_gives_two_threads_per_core() -> None:
    """Seed 000: 50% of the request holds the GIL => 2 threads per process, one process per core
    (the finite-source queue's 10 slots would be processes, given the memory for them)."""
    plan = make_plan(Workload(cores=4, service_time_ms=100, cpu_fraction=0.5))
    assert (plan.processes, plan.threads) == (4, 2)
    assert plan.ceiling_rps == pytest.approx(4 / (0.050 + WSGI_SERVER_MS_PER_REQUEST / 1000))
    assert [s.address for s in plan.sockets] == [f"127.0.0.1:{8001 + i}" for i in range(4)]


def test_seed_001_slow_endpoint_gets_headroom() -> None:
    """Seed 001: a 30 s call on a CPU-bound quick app still leaves a free thread per worker."""
    plan = make_plan(
        Workload(
            cores=2, service_time_ms=5, cpu_fraction=1.0, slow_call_ratio=0.001, slow_call_ms=30_000
        )
    )
    assert plan.cpu_threads == 1
    assert plan.threads >= 2
    assert plan.request_timeout_s > 30


def test_memory_limit_caps_processes_and_sets_rss_limit() -> None:
    """900 MiB x 0.9 holds 4 workers of 200 MiB: 4 processes even with 8 cores."""
    plan = make_plan(Workload(cores=8, memory_per_worker_mb=200, memory_limit_mb=900))
    assert plan.processes == 4
    assert plan.reload_on_rss_mb == math.floor(900 * 0.9 / 4)


def test_memory_for_no_worker_is_a_plan_error() -> None:
    """A memory limit below one worker is refused with a line naming the field."""
    with pytest.raises(PlanError, match=r"^memory_limit_mb: "):
        make_plan(Workload(cores=2, memory_per_worker_mb=500, memory_limit_mb=100))


def test_ports_past_65535_are_a_plan_error() -> None:
    """Consecutive per-worker ports must fit below 65536."""
    with pytest.raises(PlanError, match=r"^base_port: "):
        make_plan(Workload(cores=1024, base_port=65000))


def test_backlog_is_capped_by_somaxconn() -> None:
    """A high peak rate asks for a deep backlog, capped at the kernel's somaxconn."""
    plan = make_plan(
        Workload(cores=1, cpu_fraction=0.01, service_time_ms=1, peak_rps=100_000),
        Machine(cores=1, somaxconn=512),
    )
    assert plan.backlog == 512


def test_peak_above_ceiling_warns() -> None:
    """A peak rate above the CPU ceiling is flagged: no thread count can serve it."""
    plan = make_plan(Workload(cores=1, service_time_ms=100, cpu_fraction=1.0, peak_rps=50))
    assert any("above the ceiling" in w for w in plan.warnings)


@pytest.mark.parametrize(
    ("mean", "q", "expected"),
    [
        (0.0, 0.999, 0),
        (0.001, 0.999, 0),
        (0.01, 0.999, 1),
        (1.0, 0.5, 1),
        (2.0, 0.999, 8),
        (1000.0, 0.5, 1000),
    ],
)
def test_poisson_quantile_matches_known_values(mean: float, q: float, expected: int) -> None:
    """The Poisson quantile agrees with tabulated values, including large means (no underflow)."""
    assert poisson_quantile(mean, q) == expected


@given(st.floats(0, 5000), st.floats(0, 5000), st.sampled_from([None, 64]))
def test_poisson_quantile_is_monotone(a: float, b: float, cap: int | None) -> None:
    """A larger mean never gives a smaller quantile, capped or not."""
    low, high = sorted((a, b))
    assert poisson_quantile(low, 0.999, cap) <= poisson_quantile(high, 0.999, cap)


def test_poisson_quantile_cap_bounds_the_answer() -> None:
    """With a cap the answer is min(quantile, cap), even for a huge mean."""
    assert poisson_quantile(1e6, 0.999, cap=64) == 64
    assert poisson_quantile(2.0, 0.999, cap=64) == 8


def test_auto_cores_reason_names_the_deciding_limit() -> None:
    """With cores='auto' the processes reason says which limit decided (cgroup, affinity or host)."""
    plan = plan_for(Workload(cores="auto"))
    assert plan.workload.cores == plan.processes
    assert "'auto': " in plan.reasons["processes"]
    assert any(
        src in plan.reasons["processes"] for src in ("cgroup", "CPU affinity", "os.cpu_count()")
    )


def test_socket_paths_longer_than_the_kernel_allows_are_a_plan_error() -> None:
    """A socket_dir so long that worker-N.sock exceeds 107 bytes is refused before nginx sees it."""
    with pytest.raises(PlanError, match=r"^socket_dir: .* at most 107"):
        make_plan(Workload(cores=2, socket_dir="/" + "d" * 100))
    assert make_plan(Workload(cores=2, socket_dir="/" + "d" * 80)).sockets[0].kind == "unix"


@pytest.mark.parametrize(
    ("updates", "message"),
    [
        ({"listen_port": 8001, "base_port": 8001}, r"^listen_port: 8001 .* worker socket 0's port"),
        (
            {"listen_port": 8002, "base_port": 8001, "cores": 4},
            r"^listen_port: 8002 .* worker socket 1's port .*base_port",
        ),
        (
            {"listen_port": 8003, "base_port": 8001, "cores": 4, "listen_host": "0.0.0.0"},
            r"^listen_port: 8003 on 0\.0\.0\.0 .* worker socket 2",
        ),
    ],
)
def test_nginx_and_the_app_server_never_share_a_port(
    updates: dict[str, object], message: str
) -> None:
    """A listen port inside the per-worker port block (same or wildcard host) is a PlanError naming both fields."""
    with pytest.raises(PlanError, match=message):
        make_plan(Workload.model_validate({"cores": 2, **updates}))


def test_ports_on_different_hosts_or_unix_sockets_do_not_collide() -> None:
    """The same port number on another loopback address, or with unix sockets, is fine."""
    make_plan(Workload(cores=2, listen_port=8001, base_port=8001, listen_host="127.0.0.2"))
    make_plan(Workload(cores=2, listen_port=8001, base_port=8001, socket_dir="/run/app"))


def test_the_last_port_may_be_65535() -> None:
    """base_port + workers may end exactly at 65535 (the old check refused one port early)."""
    assert make_plan(Workload(cores=536, base_port=65000)).sockets[-1].port == 65535


def test_forced_numbers_carry_their_own_reason_and_move_what_depends_on_them() -> None:
    """A benchmark's baseline forces threads; the reason says so and derived numbers follow."""
    base = make_plan(Workload(cores=2))
    forced = make_plan(
        Workload(cores=2), forced={"threads": Forced(16, "forced by the benchmark: threads-only")}
    )
    assert forced.threads == 16
    assert forced.reasons["threads"].startswith("forced by the benchmark: threads-only")
    assert forced.upstream_keepalive_connections == 2 * 16 != base.upstream_keepalive_connections
    with pytest.raises(PlanError, match=r"^forced: nonsense"):
        make_plan(Workload(cores=2), forced={"nonsense": Forced(1, "x")})


def test_a_forced_value_is_validated_and_a_plan_is_a_frozen_value() -> None:
    """A forced value comes from outside the rules, so it is checked against its field's type
    (a Pydantic error naming the field); a plan compares by its values and cannot be changed."""
    with pytest.raises(ValidationError, match=r"(?s)for Plan\nlb_reuse\n.*valid string"):
        make_plan(Workload(cores=2), forced={"lb_reuse": Forced(3, "x")})
    coerced = make_plan(Workload(cores=2), forced={"cores_per_process": Forced(1, "x")})
    assert type(coerced.cores_per_process) is float
    plan = make_plan(Workload(cores=2))
    assert plan == make_plan(Workload(cores=2)) != coerced
    with pytest.raises(AttributeError, match="frozen"):
        plan.threads = 3
    with pytest.raises(TypeError, match=r"missing \['processes'"):
        Plan(**{name: getattr(plan, name) for name in Plan.fields() if name != "processes"})


def test_auto_cores_need_the_machine() -> None:
    """make_plan is pure: 'auto' cores without a Machine is refused; plan_for reads the machine."""
    with pytest.raises(PlanError, match=r"^cores: 'auto'"):
        make_plan(Workload(cores="auto"))
    machine = Machine(
        cores=3, cores_source="cgroup v2 cpu.max", somaxconn=1000, memory_limit_mb=900
    )
    plan = plan_for(Workload(cores="auto", memory_per_worker_mb=400), machine)
    assert plan.processes == 2  # 90% of the cgroup's 900 MiB holds two 400 MiB workers
    assert (
        "'auto': cgroup v2 cpu.max" in plan.reasons["processes"]
        or "fewer than the 3" in plan.reasons["processes"]
    )
    assert plan.somaxconn == 1000


@given(workloads())
@settings(max_examples=200, deadline=None)
def test_asgi_admission_and_server_bounds_are_ordered(workload: Workload) -> None:
    """For every ASGI workload: at least one request admitted per process, at most the cap; uvicorn's
    and granian's connection bounds never below nginx's admission; keep-alive closes nginx-first."""
    plan = make_plan(workload)
    if workload.interface == "wsgi":
        assert plan.admission_limit is None
        assert plan.limit_concurrency is None
        return
    assert plan.admitted_per_process is not None
    assert plan.admission_limit is not None
    assert plan.limit_concurrency is not None
    assert plan.asgi_keepalive_s is not None
    assert 1 <= plan.admitted_per_process <= MAX_ADMITTED_PER_PROCESS
    assert plan.admission_limit == plan.processes * plan.admitted_per_process
    assert plan.limit_concurrency >= plan.admission_limit
    assert plan.granian_backpressure >= plan.admission_limit
    assert plan.granian_blocking_threads == 1
    assert plan.upstream_keepalive_connections == plan.admission_limit
    assert plan.asgi_keepalive_s > plan.upstream_keepalive_timeout_s
    assert (plan.executor_threads is not None) == workload.sync_views
    assert (plan.asgi_max_requests is None) == (plan.processes == 1)
    # Each server its own capacity: granian's loops do no HTTP work, so they serve at least
    # uvicorn's; nginx fronts either, so it admits for the faster, for held + the wait budget.
    assert plan.asgi_capacity_rps is not None
    assert plan.granian_capacity_rps is not None
    assert plan.admission_wait_ms is not None
    assert plan.granian_capacity_rps >= plan.asgi_capacity_rps
    held_ms = held_s(workload) * 1000 + ASGI_SERVER_MS_PER_REQUEST
    # Held + wait is the overload target's 2 x the held time; a path that holds its loop under
    # a millisecond waits at least the noise floor, one that holds it longer has no floor.
    assert plan.loop_ms is not None
    floor = ADMISSION_MIN_WAIT_MS if plan.loop_ms < ADMISSION_FLOOR_LOOP_MS else 0.0
    assert plan.admission_wait_ms == pytest.approx(
        max((ASGI_OVERLOAD_P99_TARGET - 1) * held_ms, floor)
    )
    fastest = plan.granian_capacity_rps / plan.processes
    admitted = math.ceil(fastest * (held_ms + plan.admission_wait_ms) / 1000 - 1e-9)
    assert plan.admitted_per_process == max(1, min(admitted, MAX_ADMITTED_PER_PROCESS))
    # HAProxy in front: one server line (nginx) or one per host, and a queue of the same wait.
    assert plan.lb_server_maxconn is not None
    assert plan.lb_queue_timeout_ms == math.ceil(plan.admission_wait_ms)
    if not plan.upstream_hosts:
        assert plan.lb_server_maxconn == (plan.admission_limit,)
    # HAProxy in nginx's place queues the wait itself: each app server takes only what its loop
    # serves in the time a request is held (the wait floor for a sub-floor path), never more
    # than nginx would admit, and its idle pool no more than that.
    window_ms = max(held_ms, floor)
    serving = max(1, math.ceil(fastest * window_ms / 1000 - 1e-9))
    assert plan.in_service_per_process == min(serving, plan.admitted_per_process)
    assert plan.lb_server_pool == plan.in_service_per_process
    assert plan.limit_concurrency > 3 * plan.in_service_per_process


def test_a_cpu_bound_route_queues_two_or_three_a_loop_and_a_bare_route_keeps_its_floor() -> None:
    """The 3.2 ms CPU route of the overload runs (2 cores): its loop time is past a millisecond,
    so it waits only its own held time and nginx admits 3 a loop (not the 9 the 25 ms floor
    gave), HAProxy serves 2 at once and queues 4 ms; the bare route (0.2 ms of loop time) keeps
    the 25 ms floor, 126 a loop, so a closed-loop client's connections are not refused."""
    cpu = make_plan(Workload(cores=2, interface="asgi", service_time_ms=3.2, cpu_ms=3.09))
    held_ms = 3.2 + ASGI_SERVER_MS_PER_REQUEST
    assert cpu.loop_ms is not None
    assert cpu.loop_ms >= ADMISSION_FLOOR_LOOP_MS
    assert cpu.admission_wait_ms == pytest.approx(held_ms)
    assert cpu.admitted_per_process == 3
    assert cpu.admission_limit == 6
    assert (cpu.in_service_per_process, cpu.lb_queue_timeout_ms) == (2, 4)
    # The admitted queue on a loop at overload: 3 x 3.23 ms, under 2 x held + one request.
    assert (
        cpu.admitted_per_process * cpu.loop_ms <= ASGI_OVERLOAD_P99_TARGET * held_ms + cpu.loop_ms
    )
    assert "max(1 x the 3.3 ms a request is held, 0 ms)" in cpu.reasons["admission_wait_ms"]
    assert "no floor for a loop time of 3.23 ms" in cpu.reasons["admission_wait_ms"]
    bare = make_plan(Workload(cores=2, interface="asgi", service_time_ms=0.08, cpu_ms=0.061))
    assert bare.loop_ms is not None
    assert bare.loop_ms < ADMISSION_FLOOR_LOOP_MS
    assert bare.admission_wait_ms == ADMISSION_MIN_WAIT_MS == 25.0
    assert (bare.admitted_per_process, bare.admission_limit) == (126, 252)
    assert bare.in_service_per_process == 125
    assert "at least 25 ms for a loop time of 0.20 ms" in bare.reasons["admission_wait_ms"]


def test_haproxy_in_nginx_place_takes_the_wait_in_its_queue_not_on_the_loop() -> None:
    """A 52.6 ms path (the recipe app's /io): nginx admits 32 a process (capacity x held + wait,
    within in_flight_limit 32); HAProxy, which queues, gives each process 24 at once: the same
    capacity, with the wait spent where `timeout queue` bounds it."""
    w = Workload(cores=2, interface="asgi", service_time_ms=52.58, cpu_fraction=0.04,
                 loop_blocking_fraction=0.04, in_flight_limit=32)  # fmt: skip
    plan = make_plan(w)
    assert plan.admitted_per_process == 32
    assert plan.in_service_per_process == 24
    assert plan.in_service_per_process < plan.admitted_per_process
    assert "HAProxy's queue" in plan.reasons["in_service_per_process"]


def test_a_fast_workers_recycling_waits_ten_minutes_at_the_ceiling() -> None:
    """A worker serving hundreds of req/s recycles after ten minutes' worth of them, not 5000."""
    fast = make_plan(Workload(cores=2, service_time_ms=25.7, cpu_fraction=0.03))
    per_worker_rps = fast.ceiling_rps / fast.processes
    assert fast.max_requests == math.ceil(per_worker_rps * 600)
    assert fast.max_requests / per_worker_rps >= 600
    assert fast.max_requests_jitter == math.ceil(fast.max_requests * 0.1)


def test_a_slow_worker_keeps_the_leak_bound_of_5000_requests() -> None:
    """At 2 req/s a worker, ten minutes is 1200 requests: the 5000 floor bounds leaks instead."""
    slow = make_plan(Workload(cores=2, service_time_ms=500, cpu_fraction=1.0))
    assert slow.max_requests == 5000
    assert "5000 requests" in slow.reasons["max_requests"]


@given(workloads())
@settings(max_examples=100, deadline=None)
def test_no_plan_recycles_a_worker_more_often_than_every_ten_minutes(workload: Workload) -> None:
    """At the plan's own ceiling rate, a worker reaches max_requests in no less than 600 s."""
    plan = make_plan(workload)
    assert plan.max_requests >= 5000
    if plan.max_requests < MAX_REQUESTS_CAP:
        assert plan.max_requests * plan.processes / plan.ceiling_rps >= 600 - 1e-6


@settings(max_examples=200, deadline=None)
@given(
    # The model's own floor (MIN_SERVICE_TIME_MS: 1e-300 ms is refused as input since issue 33).
    service_time_ms=st.sampled_from([MIN_SERVICE_TIME_MS, 0.5, 600_000.0]),
    cpu_fraction=st.sampled_from([1e-300, 1e-9, 0.001, 0.5, 1.0]),
    cores=st.sampled_from([1, 2, 1024]),
    slow_call_ratio=st.sampled_from([0.0, 1.0]),
    slow_call_ms=st.sampled_from([1e-300, 1.0, 120_000.0]),
    interface=st.sampled_from(["wsgi", "asgi"]),
    gil=st.sampled_from(["enabled", "disabled"]),
)
def test_extreme_inputs_derive_only_numbers_a_server_accepts(**fields: Any) -> None:
    """Inputs valid one by one but extreme together (10 us of service time, a GIL share of
    1e-300, 1024 cores) still derive finite numbers that fit the servers' 32-bit settings: each
    rule bounds what it derives (max_requests, the ceiling, the loop time, the threads)."""
    plan = plan_for(Workload(**fields))
    for name in plan.derived_names():
        value = plan.value(name)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, bool) or not isinstance(item, int | float):
                continue
            assert math.isfinite(item), name
            assert abs(item) < 2**31, (name, item)
    assert plan.max_requests <= MAX_REQUESTS_CAP


@given(workloads(), st.integers(1, 64), st.booleans())
def test_a_plan_needs_no_validation(workload: Workload, cores: int, unix: bool) -> None:
    """make_plan builds the Plan unvalidated (cold start): validating it would change nothing.

    Every value a rule derives already has its field's type (a float field a float, a tuple a
    tuple), so Pydantic validating them against the declared field types (`Plan.validated`,
    which make_plan uses for forced values) gives back the same values of the same types,
    sockets too.
    """
    if unix:
        workload = workload.model_copy(update={"socket_dir": "/run/app"})
    plan = make_plan(workload, Machine(cores=cores))
    values = {name: getattr(plan, name) for name in Plan.fields()}
    validated = Plan.validated(values, Plan.fields())
    for name in Plan.fields():
        ours, theirs = values[name], validated[name]
        assert (type(ours), repr(ours)) == (type(theirs), repr(theirs)), name
    for ours in (*plan.sockets, plan.shared_socket):
        theirs = Socket.model_validate(ours.model_dump())
        assert (repr(ours), hash(ours)) == (repr(theirs), hash(theirs))
