"""CPU per request in milliseconds: the Workload field `measure` writes, the GIL share derived
from it, older files with cpu_fraction, and the admission it gives an await-bound ASGI app."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from typer.testing import CliRunner

from servertune.cli import app
from servertune.sizing import plan_for
from servertune.sizing.defaults import (
    ASGI_SERVER_MS_PER_REQUEST,
    MAX_ADMITTED_PER_PROCESS,
    MIN_CPU_MS_PER_REQUEST,
)
from servertune.sizing.queueing import held_s
from servertune.workload import Workload
from servertune.workload_file import load_workload

from .strategies import workloads

runner = CliRunner()

#: The issue's FastAPI app awaiting 50 ms, on 2 cores: `measure` at concurrency and uvicorn's
#: own CPU per request put it at 0.3 ms (0.07 in process + uvicorn's share).
IO_FLAGS = ["--interface", "asgi", "--service-time-ms", "50", "--cpu-ms", "0.3", "--cores", "2"]
#: What one uvicorn per core served of that app without admission in the issue's run (the copied
#: layouts, 256 connections and the open-loop top rate): 4,293-4,313 req/s.
COPIED_SERVED_RPS = 4313


def test_the_gil_share_is_derived_from_cpu_ms_unrounded() -> None:
    """0.3 ms of a 51.07 ms request is a share of 0.00587..., not 0.01 or 0.02."""
    w = Workload(service_time_ms=51.07, cpu_ms=0.3)
    assert w.cpu_fraction == 0.3 / 51.07
    assert w.cpu_ms_per_request == 0.3
    assert "cpu_fraction" not in w.model_fields_set


def test_cpu_ms_past_the_service_time_is_a_share_of_one() -> None:
    """Threads, or noise at concurrency, can measure more CPU than busy time: the share is 1."""
    assert Workload(service_time_ms=10, cpu_ms=12).cpu_fraction == 1.0


def test_an_old_workload_file_with_cpu_fraction_still_loads(tmp_path: Path) -> None:
    """A file `measure` wrote before cpu_ms (cpu_fraction = 0.3) loads; its CPU per request is
    the share of the service time."""
    path = tmp_path / "w.toml"
    path.write_text("[workload]\nservice_time_ms = 80\ncpu_fraction = 0.3\n", encoding="utf-8")
    w = load_workload(path)
    assert w.cpu_ms is None
    assert w.cpu_ms_per_request == 0.3 * 80


def test_a_flag_replaces_the_file_s_other_cpu_figure(tmp_path: Path) -> None:
    """--cpu-fraction over a file with cpu_ms (or --cpu-ms over cpu_fraction) wins, no conflict."""
    path = tmp_path / "w.toml"
    path.write_text("[workload]\nservice_time_ms = 50\ncpu_ms = 0.3\n", encoding="utf-8")
    assert load_workload(path, {"cpu_fraction": 0.5}).cpu_fraction == 0.5
    path.write_text("[workload]\nservice_time_ms = 50\ncpu_fraction = 0.5\n", encoding="utf-8")
    assert load_workload(path, {"cpu_ms": 1.0}).cpu_fraction == 1.0 / 50


def test_both_cpu_figures_that_disagree_are_one_error_line(tmp_path: Path) -> None:
    """cpu_ms and a cpu_fraction that is not its share: one `error:` line naming cpu_ms, exit 2."""
    path = tmp_path / "w.toml"
    path.write_text("[workload]\ncpu_ms = 5\ncpu_fraction = 0.3\n", encoding="utf-8")
    result = runner.invoke(app, ["gen", "uwsgi", "--workload", str(path)])
    assert result.exit_code == 2
    assert result.output.count("error:") == 1
    assert "cpu_ms" in result.output
    assert "not both" in result.output


def test_a_dumped_workload_validates_again() -> None:
    """model_dump carries cpu_ms and the share derived from it; validating it again is the same."""
    w = Workload(service_time_ms=51.07, cpu_ms=0.3, interface="asgi")
    assert Workload.model_validate(w.model_dump()) == w


def test_cpu_ms_is_not_reported_as_changing_nothing() -> None:
    """gen's unused-field note must not claim --cpu-ms changes nothing in an admission file."""
    result = runner.invoke(app, ["gen", "haproxy-asgi-per-worker", *IO_FLAGS])
    assert result.exit_code == 0, result.output
    assert "--cpu-ms changes nothing" not in result.output


def test_gen_admits_at_least_what_one_uvicorn_per_core_serves_without_it() -> None:
    """50 ms awaited, 0.3 ms of CPU, 2 cores: HAProxy's maxconn and nginx's limit_conn let
    through at least the 4,313 req/s the copied layouts served with no admission, and at least
    the plan's own uvicorn-alone capacity; explain states both numbers."""
    haproxy = runner.invoke(app, ["gen", "haproxy-asgi-per-worker", *IO_FLAGS])
    nginx = runner.invoke(app, ["gen", "nginx-asgi-per-worker", *IO_FLAGS])
    maxconn = [int(m) for m in re.findall(r"check maxconn (\d+)", haproxy.stdout)]
    (limit,) = (
        int(m) for m in re.findall(r"limit_conn servertune_asgi_admission (\d+);", nginx.stdout)
    )
    hold_s = (50 + ASGI_SERVER_MS_PER_REQUEST) / 1000
    assert len(maxconn) == 2
    assert sum(maxconn) / hold_s >= COPIED_SERVED_RPS
    assert limit / hold_s >= COPIED_SERVED_RPS
    plan = plan_for(Workload(interface="asgi", service_time_ms=50, cpu_ms=0.3, cores=2))
    alone = plan.processes * 1000 / plan.loop_ms
    assert sum(maxconn) / hold_s >= alone
    explain = runner.invoke(app, ["explain", *IO_FLAGS])
    text = " ".join(explain.stdout.split())
    assert f"lets through {sum(maxconn) / hold_s:.0f} req/s" in text
    assert (
        f"at least the {alone:.0f} req/s one uvicorn per process serves without admission" in text
    )


@settings(max_examples=200, deadline=None)
@given(workloads())
def test_admission_never_lets_through_less_than_the_servers_serve_alone(w: Workload) -> None:
    """Every ASGI plan without an in-flight limit: HAProxy's and nginx's counts let through at
    least what the same uvicorn processes serve with nothing in front, unless the open-file cap
    on admitted requests applies (the plan warns then)."""
    plan = plan_for(w)
    if w.interface != "asgi" or w.in_flight_limit is not None:
        return
    if plan.admitted_per_process >= MAX_ADMITTED_PER_PROCESS:
        return
    hold_s = held_s(w) + ASGI_SERVER_MS_PER_REQUEST / 1000
    # More processes than cores (a request's work in threads) share the cores' CPU: alone
    # they serve no more than that either.
    cpu_ms = max(w.cpu_ms_per_request, MIN_CPU_MS_PER_REQUEST) + ASGI_SERVER_MS_PER_REQUEST
    alone = plan.processes * 1000 / max(plan.loop_ms, cpu_ms / plan.cores_per_process)
    assert plan.admission_limit / hold_s >= alone * (1 - 1e-9)
    assert plan.processes * plan.in_service_per_process / hold_s >= alone * (1 - 1e-9)
