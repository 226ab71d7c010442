"""The GIL as a plan input (`gil`): which case the plan sized for, and what bounds threads in each.

No free-threaded Python runs these tests: the disabled case is a pure function of the Workload,
derived, not measured here (docs/sizing.md says so).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from servertune.cli import app
from servertune.explain import format_plan
from servertune.machine import Machine
from servertune.measure.result import Measurement, Sample, gil_note
from servertune.sizing import GIL_SATURATION, MAX_THREADS_PER_PROCESS, make_plan
from servertune.sizing.defaults import ASGI_SERVER_MS_PER_REQUEST, WSGI_SERVER_MS_PER_REQUEST
from servertune.workload import Workload
from servertune.workload_file import dumps, measured_warnings, read_workload_file

runner = CliRunner()

#: 4 cores, but memory for only 2 workers of 500 MiB: the case where the GIL decides the ceiling.
MEMORY_BOUND = {"cores": 4, "memory_per_worker_mb": 500, "memory_limit_mb": 1200}


def test_the_gil_is_enabled_unless_the_workload_says_otherwise() -> None:
    """A workload that does not mention the GIL is planned for a Python that has one."""
    assert Workload().gil == "enabled"
    plan = make_plan(Workload(cores=2), Machine(cores=2))
    assert plan.cores_per_process == 1.0
    assert plan.reasons["cores_per_process"].startswith("gil = 'enabled'")


def test_with_one_process_per_core_the_bound_moves_but_the_count_stays() -> None:
    """Without the GIL one process per core still has one core's worth of CPU: the same
    ceil(0.95 / cpu_fraction) threads, now bounded by the core rather than the GIL."""
    on = make_plan(Workload(cores=4, cpu_fraction=0.25), Machine(cores=4))
    off = make_plan(Workload(cores=4, cpu_fraction=0.25, gil="disabled"), Machine(cores=4))
    ceiling = pytest.approx(4 / (0.025 + WSGI_SERVER_MS_PER_REQUEST / 1000))
    assert (on.processes, on.cpu_threads, on.ceiling_rps) == (4, 4, ceiling)
    assert (off.processes, off.cpu_threads, off.ceiling_rps) == (4, 4, ceiling)
    assert "GIL" in on.reasons["cpu_threads"]
    assert "cores" in off.reasons["cpu_threads"]


def test_without_the_gil_fewer_processes_than_cores_still_use_every_core() -> None:
    """Memory for 2 workers on 4 cores: under the GIL the plan computes on 2 cores (ceiling
    2 / 50 ms = 40 req/s, 2 threads each); without it each process's threads cover its 2 cores
    (ceil(0.95 x 2 / 0.5) = 4 threads) and the ceiling is 4 cores / 50 ms = 80 req/s."""
    on = make_plan(Workload(**MEMORY_BOUND), Machine(cores=4))
    off = make_plan(Workload(**MEMORY_BOUND, gil="disabled"), Machine(cores=4))
    per_request_s = 0.050 + WSGI_SERVER_MS_PER_REQUEST / 1000
    assert (on.processes, on.cores_per_process, on.cpu_threads) == (2, 1, 2)
    assert on.ceiling_rps == pytest.approx(2 / per_request_s)
    assert (off.processes, off.cores_per_process, off.cpu_threads) == (2, 2, 4)
    assert off.ceiling_rps == pytest.approx(4 / per_request_s)
    assert off.threads == off.cpu_threads + off.slow_call_threads


@given(
    st.integers(1, 64),
    st.floats(0.01, 1.0, allow_nan=False),
    st.integers(50, 4000),
    st.integers(1, 64),
)
def test_without_the_gil_cpu_threads_saturate_the_process_cores(
    cores: int, fraction: float, per_worker: int, workers: int
) -> None:
    """cpu_threads x cpu_fraction keeps the process's cores busy GIL_SATURATION of the time;
    one fewer would not."""
    workload = Workload(
        cores=cores,
        cpu_fraction=fraction,
        memory_per_worker_mb=per_worker,
        memory_limit_mb=math.ceil(per_worker * workers / 0.9),
        gil="disabled",
    )
    plan = make_plan(workload, Machine(cores=cores))
    busy = GIL_SATURATION * plan.cores_per_process
    assert plan.cores_per_process == cores / plan.processes
    cap = MAX_THREADS_PER_PROCESS * max(1, math.floor(plan.cores_per_process))
    if plan.cpu_threads == cap:  # more wanted than a process may have: capped, with a warning
        assert cap * fraction < busy
        return
    assert plan.cpu_threads * fraction >= busy - 1e-6
    assert plan.cpu_threads == 1 or (plan.cpu_threads - 1) * fraction < busy + 1e-9
    assert plan.threads <= MAX_THREADS_PER_PROCESS * math.floor(plan.cores_per_process)


def test_the_thread_cap_grows_with_the_cores_a_process_computes_on() -> None:
    """One worker on 8 cores without the GIL may run 64 threads per core (8 x 64 = 512): the
    cap bounds per-thread costs, and those are paid per core; under the GIL it stays at 64."""
    fields = {"cores": 8, "memory_per_worker_mb": 1000, "memory_limit_mb": 1200}
    slow = {"slow_call_ratio": 0.5, "slow_call_ms": 60_000, "peak_rps": 100}
    off = make_plan(Workload(**fields, **slow, gil="disabled"), Machine(cores=8))
    on = make_plan(Workload(**fields, **slow), Machine(cores=8))
    assert off.processes == on.processes == 1
    assert (on.threads, off.threads) == (MAX_THREADS_PER_PROCESS, 8 * MAX_THREADS_PER_PROCESS)


def test_explain_says_which_case_the_plan_sized_for() -> None:
    """`explain` names the GIL state in its summary line and in the reasons, in both cases."""
    for gil in ("enabled", "disabled"):
        text = format_plan(make_plan(Workload(cores=2, gil=gil), Machine(cores=2)), width=200)
        assert f"gil={gil}" in text.splitlines()[0]
        assert f"gil = '{gil}'" in text


def test_asgi_cpu_off_the_loop_holds_no_gil_when_there_is_none() -> None:
    """ASGI with sync views on 4 cores, 2 workers: CPU run off the loop (cpu_fraction 0.6) holds
    the process's GIL under it (loop 60 ms of 100); without it, it takes 0.6 / 2 cores = 0.3 of
    the process, below the 0.4 the loop is blocked, so the loop decides (40 ms); the ASGI
    server's own work per request comes on top of either."""
    fields = {**MEMORY_BOUND, "interface": "asgi", "sync_views": True, "cpu_fraction": 0.6}
    on = make_plan(Workload(**fields, loop_blocking_fraction=0.4), Machine(cores=4))
    off = make_plan(
        Workload(**fields, loop_blocking_fraction=0.4, gil="disabled"), Machine(cores=4)
    )
    assert on.loop_ms == pytest.approx(60.0 + ASGI_SERVER_MS_PER_REQUEST)
    assert off.loop_ms == pytest.approx(40.0 + ASGI_SERVER_MS_PER_REQUEST)
    assert "needs no GIL" in off.reasons["loop_ms"]


def test_a_disabled_gil_on_an_interpreter_with_one_warns() -> None:
    """gil = 'disabled' read on a Python whose GIL is on: the plan warns it is for another build."""
    disabled = Workload(cores=2, gil="disabled")
    warned = make_plan(disabled, Machine(cores=2, gil_enabled=True)).warnings
    assert any("has the GIL on" in w and "free-threaded" in w for w in warned)
    assert make_plan(disabled, Machine(cores=2, gil_enabled=False)).warnings == ()
    assert make_plan(Workload(cores=2), Machine(cores=2, gil_enabled=True)).warnings == ()


def test_this_machine_reports_the_gil_of_the_python_running_servertune() -> None:
    """Machine.read() records sys._is_gil_enabled() (True where the build has no such switch)."""
    import sys

    assert Machine.read().gil_enabled is getattr(sys, "_is_gil_enabled", lambda: True)()


def _measurement(gil_enabled: bool, free_threaded: bool = False) -> Measurement:
    sample = Sample(wall_s=0.02, cpu_s=0.01, runqueue_s=0.0, status=200)
    return Measurement(
        app="tests.measure_apps:pure_cpu",
        interface="wsgi",
        method="GET",
        path="/",
        samples=(sample,) * 5,
        warmup=0,
        gil_enabled=gil_enabled,
        free_threaded=free_threaded,
        date="2026-01-01 00:00:00",
    )


@pytest.mark.parametrize(("gil_enabled", "written"), [(True, "enabled"), (False, "disabled")])
def test_measure_writes_the_gil_it_saw(tmp_path: Path, gil_enabled: bool, written: str) -> None:
    """The workload file `measure` writes plans for the GIL the app ran with, and [measured]
    keeps the observation."""
    path = tmp_path / "w.toml"
    path.write_text(_measurement(gil_enabled).to_toml(), encoding="utf-8")
    read = read_workload_file(path)
    assert read.values["gil"] == written
    assert read.measured is not None
    assert read.measured.gil_enabled is gil_enabled


def test_measure_says_when_an_extension_turned_the_gil_back_on() -> None:
    """On a free-threaded build that ran with the GIL on, the note names the likely causes."""
    assert "extension module" in gil_note(True, free_threaded=True)
    assert "extension" not in gil_note(True, free_threaded=False)
    assert 'gil = "disabled"' in gil_note(False, free_threaded=True)
    assert gil_note(True, False) in _measurement(True).notes()


def test_planning_without_the_gil_from_a_run_with_it_warns(tmp_path: Path) -> None:
    """A workload file measured with the GIL on, then set to gil = 'disabled', gets a warning
    from every planning command; the same file left as measured gets none."""
    measured = _measurement(True).measured()
    assert measured_warnings(measured, Workload(gil="disabled"))
    assert measured_warnings(measured, Workload()) == []
    assert measured_warnings(_measurement(False).measured(), Workload(gil="disabled")) == []

    path = tmp_path / "w.toml"
    path.write_text(dumps({"cores": 2, "gil": "disabled"}, measured), encoding="utf-8")
    result = runner.invoke(app, ["plan", "--workload", str(path)])
    assert result.exit_code == 0, result.stderr
    assert "[measured] gil_enabled = true" in result.stderr
    result = runner.invoke(app, ["plan", "--workload", str(path), "--gil", "enabled"])
    assert "[measured]" not in result.stderr


def test_the_gil_flag_is_declared_with_the_other_workload_fields() -> None:
    """--gil takes 'enabled' or 'disabled'; anything else is one error line naming the flag."""
    ok = runner.invoke(app, ["plan", "--cores", "2", "--gil", "disabled"])
    assert ok.exit_code == 0, ok.stderr
    bad = runner.invoke(app, ["plan", "--cores", "2", "--gil", "off"])
    assert bad.exit_code == 2
    assert bad.stderr == "error: gil (--gil): must be 'enabled' or 'disabled'; got 'off'\n"


def test_advise_says_which_case_its_thread_counts_are_for() -> None:
    """`advise` on a free-threaded workload with fewer processes than cores fills each process's
    cores (2 / 0.5 = 4 threads) and says it is derived; under the GIL it fills one core."""
    from servertune.advise import advise

    off = advise(Workload(**MEMORY_BOUND, gil="disabled"))
    on = advise(Workload(**MEMORY_BOUND))
    threads = next(f for f in off.fits if f.model == "processes x threads")
    assert any("2/0.5 = 4.0 threads" in r and "derived" in r for r in threads.reasons)
    threads = next(f for f in on.fits if f.model == "processes x threads")
    assert any("1/0.5 = 2.0 threads" in r and "GIL" in r for r in threads.reasons)


def test_a_mix_says_the_gil_once_and_writes_it_for_the_mix(tmp_path: Path) -> None:
    """A mix of paths notes the GIL once (it is the process's, not a path's), and if any path
    ran with it on, the mix's workload is planned with it on."""
    from dataclasses import replace

    from servertune.measure.result import Mix

    off = _measurement(False, free_threaded=True)
    on = replace(_measurement(True, free_threaded=True), path="/other")
    mix = Mix(((off, 1.0), (on, 3.0)))
    assert sum("GIL" in line for line in mix.table().splitlines()) == 1
    assert mix.workload_values()["gil"] == "enabled"
    assert mix.measured().gil_enabled is True
    assert Mix(((off, 1.0), (replace(off, path="/x"), 1.0))).workload_values()["gil"] == "disabled"
