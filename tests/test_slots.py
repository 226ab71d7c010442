"""Request slots with headroom: the finite-source (machine-repairman) queue behind the slot
count, checked against values computed by hand, and the plans it gives."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servertune.machine import Machine
from servertune.sizing import GIL_SATURATION, SLOT_UTILISATION, make_plan
from servertune.sizing.queueing import core_utilisation, slots_for
from servertune.workload import Workload


def exact_utilisation(slots: int, cores: int, r: Fraction) -> Fraction:
    """The textbook sum, in exact fractions: p_n ~ C(N, n) r^n up to s, N!/((N-n)! s! s^(n-s)) r^n
    above; U = sum(min(n, s) p_n) / s."""
    weights = []
    for n in range(slots + 1):
        if n <= cores:
            weights.append(math.comb(slots, n) * r**n)
        else:
            ways = Fraction(math.factorial(slots), math.factorial(slots - n))
            weights.append(ways / (math.factorial(cores) * cores ** (n - cores)) * r**n)
    busy = sum(min(n, cores) * w for n, w in enumerate(weights))
    return busy / (cores * sum(weights))


@pytest.mark.parametrize(
    ("slots", "cores", "expected"),
    [
        # cpu_fraction 0.5 (r = 1), worked by hand: 2 cores, 4 slots: weights 1, 4, 6, 6, 3
        # (sum 20), cores busy 4 + 12 + 12 + 6 = 34 of 40 core-states.
        (4, 2, Fraction(34, 40)),
        # 5 slots: 1, 5, 10, 15, 15, 7.5 (sum 53.5), busy 100 of 107.
        (5, 2, Fraction(100, 107)),
        # 6 slots: 1, 6, 15, 30, 45, 45, 22.5 (sum 164.5), busy 321 of 329.
        (6, 2, Fraction(321, 329)),
        # One core: U = 1 - p0, with p0 = 1 / sum N!/(N-n)!: 2 threads 4/5, 3 15/16, 4 64/65.
        (2, 1, Fraction(4, 5)),
        (3, 1, Fraction(15, 16)),
        (4, 1, Fraction(64, 65)),
    ],
)
def test_utilisation_matches_hand_computed_values(
    slots: int, cores: int, expected: Fraction
) -> None:
    """The half-GIL app of bench balance: 4 slots on 2 cores keep them 85% busy, not 95%."""
    assert exact_utilisation(slots, cores, Fraction(1)) == expected
    assert core_utilisation(slots, cores, 0.5) == pytest.approx(float(expected), rel=1e-12)


@given(
    st.integers(1, 40),
    st.integers(1, 8),
    st.fractions(min_value=Fraction(1, 50), max_value=Fraction(49, 50), max_denominator=50),
)
def test_log_space_sum_agrees_with_the_exact_one(slots: int, cores: int, f: Fraction) -> None:
    """The log-space sum the plan uses equals the exact rational sum."""
    exact = exact_utilisation(slots, cores, f / (1 - f))
    assert core_utilisation(slots, cores, float(f)) == pytest.approx(float(exact), rel=1e-9)


def test_utilisation_limits() -> None:
    """No waiting: every slot wants a core all the time; no slots: idle cores; thousands of
    slots do not overflow and saturate the cores."""
    assert core_utilisation(3, 2, 1.0) == 1.0
    assert core_utilisation(1, 2, 1.0) == 0.5
    assert core_utilisation(0, 2, 0.5) == 0.0
    assert core_utilisation(5000, 64, 0.2) == pytest.approx(1.0)


@given(st.integers(1, 64), st.floats(0.01, 1.0, allow_nan=False), st.integers(1, 4096))
def test_slots_are_the_fewest_that_reach_the_target(cores: int, f: float, cap: int) -> None:
    """At least the perfect-interleaving floor, at most the cap; the count reaches
    SLOT_UTILISATION unless capped, and one slot fewer (above the floor) would not."""
    found = slots_for(cores, f, cap)
    floor = min(cap, cores * max(1, math.ceil(GIL_SATURATION / f - 1e-9)))
    assert found.floor == floor
    assert floor <= found.slots <= cap
    if found.capped:
        assert found.slots == cap
        assert core_utilisation(cap, cores, f) < SLOT_UTILISATION
        return
    assert found.utilisation >= SLOT_UTILISATION
    if found.slots > floor:
        assert core_utilisation(found.slots - 1, cores, f) < SLOT_UTILISATION


@pytest.mark.parametrize(
    ("cpu_fraction", "cores", "layout"),
    [
        # Pure CPU: one thread a core, as before.
        (1.0, 1, (1, 1)),
        (1.0, 2, (2, 1)),
        (1.0, 8, (8, 1)),
        (0.9, 2, (2, 2)),
        # Half the time on the GIL: the 6 slots of 2 cores would be 2 x 3, but a process's
        # threads past ceil(0.95 / f) queue for its one GIL: 2 x 2.
        (0.5, 1, (1, 2)),
        (0.5, 2, (2, 2)),
        (0.5, 4, (4, 2)),
        (0.2, 2, (2, 5)),
        (0.05, 2, (2, 19)),
        (0.05, 8, (8, 19)),
    ],
)
def test_plans_without_memory_figures(
    cpu_fraction: float, cores: int, layout: tuple[int, int]
) -> None:
    """One process per core and the GIL's count of threads: the finite-source queue's extra
    slots are taken as processes, which need the memory figures."""
    plan = make_plan(Workload(cores=cores, cpu_fraction=cpu_fraction), Machine(cores=cores))
    assert (plan.processes, plan.threads) == layout
    assert plan.cpu_threads == max(1, math.ceil(GIL_SATURATION / cpu_fraction - 1e-9))


@pytest.mark.parametrize(
    ("limit_mb", "layout"),
    # 38 MiB a worker with 10% headroom: room for all 6 slots, for 3, for 2.
    [(4000, (6, 1)), (127, (3, 2)), (90, (2, 2))],
)
def test_memory_turns_the_extra_slots_into_processes(
    limit_mb: int, layout: tuple[int, int]
) -> None:
    """With the memory for them the 6 slots of 2 cores at cpu_fraction 0.5 are 6 single-threaded
    processes; with less, threads fill each process up to the GIL's count, never past it."""
    workload = Workload(
        cores=2, cpu_fraction=0.5, memory_per_worker_mb=38, memory_limit_mb=limit_mb
    )
    plan = make_plan(workload, Machine(cores=2))
    assert (plan.processes, plan.threads) == layout


def test_explain_gives_the_utilisation_behind_the_count() -> None:
    """The reason names both numbers: what the slots reach and what the floor would."""
    plan = make_plan(Workload(cores=2, cpu_fraction=0.5), Machine(cores=2))
    reason = plan.reasons["cpu_threads"]
    assert "6 slots keep 2 cores busy 97.6% of the time" in reason
    assert "4, the count if CPU and waits interleaved perfectly" in reason
    assert "reach 85.0%" in reason


def test_a_capped_slot_count_says_the_workload_asks_for_more() -> None:
    """cpu_fraction 0.05 on 4 cores wants 83 slots, past 4 processes a core: the processes
    reason says "more than 16", not that 16 is what the workload asks for."""
    plan = make_plan(Workload(cores=4, cpu_fraction=0.05), Machine(cores=4))
    assert "the GIL share asks for more than 16 slots" in plan.reasons["processes"]
    assert "16 of them would be processes" in plan.reasons["processes"]
    assert (plan.processes, plan.cpu_threads) == (4, 19)


@pytest.mark.parametrize("cpu_fraction", [0.016, 0.0155, 0.015064])
def test_the_gils_count_under_the_cap_is_no_cap(cpu_fraction: float) -> None:
    """Near the cap the finite-source slots can ask for more threads than a process may have
    while the GIL's own count (ceil(0.95 / f): 60, 62, 64) is within it: the threads are that
    count, with no "capped" warning and nothing added beyond the reason's count."""
    plan = make_plan(Workload(cores=2, cpu_fraction=cpu_fraction), Machine(cores=2))
    assert plan.threads == plan.cpu_threads == math.ceil(0.95 / cpu_fraction - 1e-9)
    assert not plan.warnings
