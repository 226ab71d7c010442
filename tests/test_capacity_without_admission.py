"""`bench app` judges a plan's capacity against the same server without servertune's
admission (its copied layouts in the same run), and says when a "copied faster" verdict came
from servertune's own 503s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from servertune.bench.scenarios.app.capacity import (
    references,
    saturation,
    saturation_note,
    saturation_target,
    without_admission,
)
from servertune.bench.scenarios.app.correction import correct, corrected_values, write_correction
from servertune.bench.scenarios.app.verdicts import shed_cause
from servertune.cli import app
from servertune.sizing import plan_for
from servertune.workload import Workload
from servertune.workload_file import load_workload


def _closed(concurrency: int, rps: float, refused: int = 0) -> dict[str, Any]:
    return {"concurrency": concurrency, "rps": rps, "refused_503": refused, "requests": 1000}


def test_a_plan_stopped_by_its_own_admission_is_judged_against_the_copied_server() -> None:
    """The issue's run: the plan said 1,737 req/s, servertune's uvicorn behind its admission
    shed at 256 connections having served 1,800 (1.04 x: 'met' against itself), while uvicorn
    copied with no admission served 4,300 and stopped growing: judged against 4,300, the plan
    is 0.40 x and the target fails."""
    ours = saturation(
        "servertune-uvicorn-haproxy", "uvicorn", 1737.0,
        [_closed(128, 1700.0), _closed(256, 1800.0, refused=226107)],
    )  # fmt: skip
    assert ours.saturated is not None
    assert saturation_target(ours).met
    copied = saturation(
        "uvicorn-2n+1", "uvicorn", 1737.0, [_closed(128, 2500.0), _closed(256, 4300.0)]
    )
    flat = saturation(
        "uvicorn-1-worker", "uvicorn", 1737.0, [_closed(128, 2400.0), _closed(256, 2500.0)]
    )
    judged = without_admission(ours, [flat, copied])
    assert judged.against == "uvicorn-2n+1"
    assert judged.measured_rps == 4300.0
    assert judged.planned_rps == 1737.0
    target = saturation_target(judged)
    assert "uvicorn-2n+1 (the same server without servertune's admission)" in target.name
    assert "0.40" in target.name


def test_the_best_copied_layout_that_only_floors_leaves_the_target_unjudged() -> None:
    """A copied layout still growing at its top level is a floor, as a row's own would be."""
    ours = saturation("servertune-uvicorn", "uvicorn", 5000.0, [_closed(64, 1000.0, refused=5)])
    growing = saturation(
        "uvicorn-2n+1", "uvicorn", 5000.0, [_closed(32, 600.0), _closed(64, 1200.0)]
    )
    judged = without_admission(ours, [growing])
    assert judged.saturated is None
    assert saturation_target(judged).value is None


def test_without_a_copied_layout_of_the_server_the_row_is_judged_against_itself_and_says_so() -> (
    None
):
    """--only with no copied granian: the granian row's own saturation, named as such."""
    ours = saturation(
        "servertune-granian", "granian", 900.0, [_closed(32, 850.0), _closed(64, 880.0)]
    )
    judged = without_admission(ours, [])
    assert judged.against is None
    note = saturation_note(judged, 2, "wrk", "nginx")
    assert "by servertune-granian itself" in note
    assert "behind its own admission" in note


def test_copied_faster_because_of_servertune_s_503s_says_so() -> None:
    """A level servertune lost while its admission shed what the copied layout answered says
    that cause; one where neither shed says nothing more."""
    said = shed_cause({"refused_503": 226107}, {"refused_503": 0})
    assert "caused by servertune's own admission" in said
    assert "226107" in said
    assert shed_cause({"refused_503": 0}, {"refused_503": 0}) == ""


def test_a_capacity_off_by_more_than_20_percent_writes_the_workload_it_measured(
    tmp_path: Path,
) -> None:
    """The plan (cpu_ms 1.0: 1,737 req/s) against uvicorn copied saturating at 4,300 req/s:
    the verdict names cpu_ms as the number that was off, writes the corrected workload, and
    `gen --workload` on it plans 4,300 req/s."""
    workload = Workload(cores=2, interface="asgi", service_time_ms=51.07, cpu_ms=1.0, app="m:app")
    plan = plan_for(workload)
    ours = saturation(
        "servertune-uvicorn-haproxy", "uvicorn", float(plan.asgi_capacity_rps),
        [_closed(128, 1700.0), _closed(256, 1800.0, refused=226107)],
    )  # fmt: skip
    copied = saturation(
        "uvicorn-2n+1", "uvicorn", float(plan.asgi_capacity_rps),
        [_closed(128, 4100.0), _closed(256, 4300.0)],
    )  # fmt: skip
    busy = saturation(
        "uvicorn-2n+1", "uvicorn", float(plan.asgi_capacity_rps),
        [_closed(128, 4100.0), {**_closed(256, 4300.0), "repeats": [{"other_cpu_cores": 0.9}]}],
    )  # fmt: skip
    busy_fix = correct(without_admission(ours, [busy]), workload, plan.processes)
    assert busy_fix is not None
    assert "other work took 0.90 cores meanwhile" in busy_fix.said(tmp_path / "w.toml")
    fix = correct(without_admission(ours, [copied]), workload, plan.processes)
    assert fix is not None
    path = write_correction(workload, fix, tmp_path, "servertune bench app m:app")
    said = fix.said(path)
    assert "the number that was off is cpu_ms, 1 ms a request planned" in said
    assert "other work" not in said  # none recorded here
    assert str(path) in said
    result = CliRunner().invoke(app, ["explain", "--workload", str(path)])
    assert result.exit_code == 0, result.output
    corrected = plan_for(load_workload(path))
    assert corrected.asgi_capacity_rps == pytest.approx(4300.0, rel=0.001)


def test_a_loop_share_the_plan_sized_from_is_the_number_named_off() -> None:
    """As on a Django view measured while other work held the cores: cpu_ms 0.774 but a loop
    share of 0.1132 of 24.91 ms (2.82 ms a request), which the plan sized from (664 req/s),
    against uvicorn copied at 1,938: the verdict names loop_blocking_fraction and its ms, not
    cpu_ms, and the corrected file lowers the share with the CPU."""
    workload = Workload(cores=2, interface="asgi", service_time_ms=24.91, cpu_ms=0.774,
                        loop_blocking_fraction=0.1132, app="m:app")  # fmt: skip
    plan = plan_for(workload)
    ours = saturation(
        "servertune-uvicorn-haproxy", "uvicorn", float(plan.asgi_capacity_rps),
        [_closed(64, 550.0), _closed(128, 553.0, refused=6284)],
    )  # fmt: skip
    copied = saturation(
        "uvicorn-2n+1", "uvicorn", float(plan.asgi_capacity_rps),
        [_closed(64, 1800.0), _closed(128, 1938.0)],
    )  # fmt: skip
    fix = correct(without_admission(ours, [copied]), workload, plan.processes)
    assert fix is not None
    said = fix.said(Path("w.toml"))
    assert "off is loop_blocking_fraction (24.91 ms x 0.1132), 2.82 ms a request planned" in said
    values = corrected_values(workload, fix)
    assert values["cpu_ms"] == fix.measured_cpu_ms
    assert values["loop_blocking_fraction"] <= fix.measured_cpu_ms / 24.91


def test_a_capacity_within_20_percent_writes_nothing() -> None:
    """Within tolerance, or judged against itself, there is nothing to correct."""
    workload = Workload(cores=2, interface="asgi", service_time_ms=50, cpu_ms=0.3)
    ours = saturation("servertune-uvicorn", "uvicorn", 4000.0, [_closed(32, 600), _closed(64, 650)])
    close = saturation("uvicorn-2n+1", "uvicorn", 4000.0, [_closed(128, 3600), _closed(256, 3700)])
    assert correct(without_admission(ours, [close]), workload, 2) is None
    assert correct(without_admission(ours, []), workload, 2) is None


def _costed(concurrency: int, rps: float, app_ms: float, proxy_ms: float) -> dict[str, Any]:
    return {**_closed(concurrency, rps), "app_cpu_ms_per_req": app_ms,
            "proxy_cpu_ms_per_req": proxy_ms, "load_cpu_ms_per_req": 0.018}  # fmt: skip


def test_capacity_is_judged_by_what_the_server_costs_on_the_plan_s_cores_not_beside_wrk() -> None:
    """As on FastAPI `/io` (2026-11-29): uvicorn copied with 4 processes answered 3,467 req/s at
    512 connections while wrk and other work shared the 2 cores; 0.263 ms of app-server CPU and
    0.035 ms of nginx per answered request give 2,000 / 0.298 = 6,711 req/s on the plan's 2
    cores. The plan's 7,905 is judged against that (1.18, met), not against 3,467 (2.28)."""
    ours = saturation(
        "servertune-uvicorn", "uvicorn", 7905.0,
        [_costed(256, 4412.0, 0.211, 0.042), _costed(512, 6733.0, 0.202, 0.041)], 51.8, cores=2,
    )  # fmt: skip
    copied = saturation(
        "fastapi-run-4", "uvicorn", 7905.0,
        [_costed(256, 3300.0, 0.27, 0.04), _costed(512, 3467.0, 0.263, 0.035)], 94.3, cores=2,
    )  # fmt: skip
    judged = without_admission(ours, [copied])
    assert judged.machine_rps == pytest.approx(2000 / 0.298)
    assert judged.ratio == pytest.approx(7905 / (2000 / 0.298))
    target = saturation_target(judged)
    assert target.met
    assert "on the plan's 2 cores" in target.name
    assert "answered 3467 req/s beside the load generator" in target.name
    # Without the cores (or the CPU) it falls back to the raw saturation, and fails.
    raw = without_admission(ours, [saturation(
        "fastapi-run-4", "uvicorn", 7905.0, [_closed(256, 3300.0), _closed(512, 3467.0)], 94.3,
    )])  # fmt: skip
    assert raw.machine_rps is None
    assert saturation_target(raw).met is False


def test_a_correction_by_cpu_per_request_names_the_cpu_ms_the_server_paid() -> None:
    """A plan whose cpu_ms was 1.0 against a copied uvicorn paying 0.45 ms of app-server and
    0.05 ms of nginx CPU per answered request: the corrected cpu_ms is 0.45 + 0.05 - uvicorn's
    own 0.14 - nginx's 0.05 = 0.31, and the other work's cores are not blamed (they are out of
    a CPU per request)."""
    workload = Workload(cores=2, interface="asgi", service_time_ms=51.07, cpu_ms=1.0, app="m:app")
    plan = plan_for(workload)
    ours = saturation(
        "servertune-uvicorn", "uvicorn", float(plan.asgi_capacity_rps),
        [_costed(128, 1700.0, 1.1, 0.05), _costed(256, 1750.0, 1.1, 0.05)], 51.0, cores=2,
    )  # fmt: skip
    busy = {**_costed(256, 2600.0, 0.45, 0.05), "repeats": [{"other_cpu_cores": 0.9}]}
    copied = saturation(
        "uvicorn-2n+1", "uvicorn", float(plan.asgi_capacity_rps),
        [_costed(128, 2500.0, 0.46, 0.05), busy], 51.0, cores=2,
    )  # fmt: skip
    fix = correct(without_admission(ours, [copied]), workload, plan.processes)
    assert fix is not None
    assert fix.measured_cpu_ms == pytest.approx(0.31, abs=0.001)
    assert fix.other_cores == 0.0
    assert fix.measured_rps == pytest.approx(2000 / 0.5)


#: A Django async view as `measure` wrote it (docs/benchmarks.md, "Django's threads"): its
#: requests run work in threads, so the plan runs 4 processes on the 2 cores.
DJANGO = {"cores": 2, "interface": "asgi", "service_time_ms": 24.2, "cpu_ms": 0.922,
          "loop_blocking_fraction": 0.0345, "off_loop_fraction": 0.27, "app": "m:app"}  # fmt: skip


def test_a_correction_with_processes_sharing_the_cores_solves_for_their_cpu(
    tmp_path: Path,
) -> None:
    """Four processes on two cores, each on half a core, planned at cpu_ms 1.4 (measured beside
    other work; its loop share, 24.2 ms x 0.0616 = 1.49 ms, is longer, but on half a core the
    CPU is the longer time): a copied uvicorn paying 0.984 ms of app-server and 0.062 ms of
    nginx CPU per answered request serves 2,000 / 1.046 req/s on the cores; the verdict names
    cpu_ms, the corrected cpu_ms is that time over the four processes' half cores, less
    uvicorn's own (0.88 ms, not the 1.9 ms four whole loops would imply), and the file it
    writes plans that capacity."""
    workload = Workload(**{**DJANGO, "cpu_ms": 1.4, "loop_blocking_fraction": 0.0616})  # type: ignore[arg-type]
    plan = plan_for(workload)
    assert plan.processes == 4
    ours = saturation(
        "servertune-uvicorn-haproxy", "uvicorn", float(plan.asgi_capacity_rps),
        [_costed(32, 600.0, 1.0, 0.05), _costed(64, 620.0, 1.0, 0.05)], 24.0, cores=2,
    )  # fmt: skip
    copied = saturation(
        "uvicorn-2n+1", "uvicorn", float(plan.asgi_capacity_rps),
        [_costed(32, 600.0, 0.99, 0.062), _costed(64, 637.0, 0.984, 0.062)], 65.0, cores=2,
    )  # fmt: skip
    fix = correct(
        without_admission(ours, [copied]), workload, plan.processes, plan.cores_per_process
    )
    assert fix is not None
    judged = 2000 / 1.046
    assert fix.measured_rps == pytest.approx(judged)
    assert fix.measured_cpu_ms == pytest.approx((4000 / judged - 0.05) * 0.5 - 0.14, abs=0.001)
    assert "the number that was off is cpu_ms, 1.4 ms a request planned" in fix.said(tmp_path)
    path = write_correction(workload, fix, tmp_path, "servertune bench app m:app")
    assert plan_for(load_workload(path)).asgi_capacity_rps == pytest.approx(judged, rel=0.01)


def test_an_in_flight_limit_the_capacity_came_from_is_the_number_named_off(
    tmp_path: Path,
) -> None:
    """The in-process sweep found the loop's cost climbing past 8 in flight (a busy machine), so
    the plan's capacity was 4 x 8 / the held time; a copied layout saturating at 2,235 req/s
    on the cores held 14 a process: the verdict names in_flight_limit, in requests, and the
    file it writes raises the limit and keeps cpu_ms."""
    workload = Workload(**DJANGO, in_flight_limit=8)  # type: ignore[arg-type]
    plan = plan_for(workload)
    hold_s = (24.2 + 0.14) / 1000
    assert plan.asgi_capacity_rps == pytest.approx(4 * 8 / hold_s)
    ours = saturation(
        "servertune-granian-haproxy", "granian", float(plan.asgi_capacity_rps),
        [_costed(32, 900.0, 0.9, 0.04), _costed(64, 950.0, 0.9, 0.04)], 24.0, cores=2,
    )  # fmt: skip
    copied = saturation(
        "granian-default", "granian", float(plan.asgi_capacity_rps),
        [_costed(32, 420.0, 0.86, 0.035), _costed(64, 428.0, 0.86, 0.035)], 53.0, cores=2,
    )  # fmt: skip
    fix = correct(
        without_admission(ours, [copied]), workload, plan.processes, plan.cores_per_process
    )
    assert fix is not None
    assert fix.field == "in_flight_limit"
    implied = -(-(2000 / 0.895) * hold_s // 4)
    said = fix.said(tmp_path / "w.toml")
    assert f"off is in_flight_limit, 8 requests a process planned against {implied:g}" in said
    values = corrected_values(workload, fix)
    assert values["in_flight_limit"] == implied
    assert values["cpu_ms"] == workload.cpu_ms
    path = write_correction(workload, fix, tmp_path, "servertune bench app m:app")
    assert load_workload(path).in_flight_limit == implied


def test_copied_layouts_that_never_saturate_give_way_to_one_process_that_did() -> None:
    """As on FastAPI `/cpu` (3 ms of CPU, 2026-11-29): uvicorn's `--workers` layouts answered
    174-179 req/s at 2-8 connections (each answer held 40 ms by the client's delayed ACK), still
    growing, a floor; one uvicorn process saturated at 304 req/s, 3.28 ms of app-server and
    nginx CPU per answered request, 609 req/s on the plan's 2 cores. The plan's 612 is judged
    against that (1.00, met), not left unjudged; a floor of the many above what the one process
    gives keeps the floor."""
    plan = 612.0
    ours = saturation(
        "servertune-uvicorn", "uvicorn", plan,
        [_costed(4, 560.0, 3.2, 0.05), {**_costed(8, 572.0, 3.2, 0.05), "refused_503": 39246}],
        cores=2,
    )  # fmt: skip
    held = [
        saturation(
            name,
            "uvicorn",
            plan,
            [
                _costed(2, rps / 3, 3.4, 0.1),
                _costed(4, rps / 2, 3.4, 0.1),
                _costed(8, rps, 3.4, 0.1),
            ],
            cores=2,
        )
        for name, rps in (("uvicorn-2n+1", 174.0), ("fastapi-run-4", 179.0))
    ]
    assert all(h.saturated is None for h in held)
    alone = saturation(
        "uvicorn-1-worker", "uvicorn", plan,
        [_costed(2, 298.0, 3.234, 0.05), _costed(4, 304.0, 3.234, 0.05)], cores=2,
    )  # fmt: skip
    assert alone.saturated is not None
    judged = without_admission(ours, references(held, [alone, *held]))
    assert judged.against == "uvicorn-1-worker"
    assert judged.ratio == pytest.approx(612 / (2000 / 3.284))
    assert saturation_target(judged).met
    # Where a floor of the many is above the one process's capacity, the floor stands.
    cheap = [
        saturation(
            "uvicorn-2n+1",
            "uvicorn",
            plan,
            [_costed(4, 170.0, 2.0, 0.1), _costed(8, 179.0 * 2, 2.0, 0.1)],
            cores=2,
        )
    ]
    assert cheap[0].saturated is None
    assert references(cheap, [alone, *cheap]) == cheap
