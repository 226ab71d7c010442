"""`bench app` closes the loop: a plan whose capacity was off writes the workload it measured.

When a servertune row's planned capacity differs from the saturation its server reached without
servertune's admission (`capacity.without_admission`) by more than `CAPACITY_TOLERANCE`, the
number that was off is the one the plan's capacity came from:

- the time one request holds its loop: the capacity is `processes x 1000 / (held ms + the
  server's own ms + nginx's ms)`, every other term a declared constant, and the held ms is
  `cpu_ms`, or `service_time_ms x loop_blocking_fraction` where that is more (a sync call made
  without `await` blocks the loop without CPU); where processes outnumber the cores (a
  request's work in threads: `off_loop_fraction`), each process's time is its CPU over its
  share of the cores (`cores_per_process`), and that is what is solved for;
- or `in_flight_limit`, where the capacity was `processes x in_flight_limit / held s`: the
  sweep's limit, measured in process, was below what the server held at its saturation.

The verdict names whichever the plan used. Solving the formula for the capacity measured (the
app servers' and the front's CPU per answered request on the plan's cores,
`Saturation.judged_rps`) gives the number the run saw; the workload the run planned from, with
that number (and a loop share no larger than the CPU), is written as a workload file, so
`servertune gen --workload FILE` writes the configs for what was just measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.bench.scenarios.app.capacity import CAPACITY_TOLERANCE, Saturation
from servertune.sizing.defaults import (
    ASGI_SERVER_MS_PER_REQUEST,
    GRANIAN_SERVER_MS_PER_REQUEST,
    MIN_CPU_MS_PER_REQUEST,
    NGINX_MS_PER_REQUEST,
)
from servertune.sizing.rules.admission import asgi_hold_s, blocking_ms, on_shared_cores
from servertune.workload import MIN_CPU_MS, Workload

__all__ = ["CORRECTED_NAME", "Correction", "correct", "write_correction"]

#: Other work on the machine, in cores, past which the correction says it shared the gap.
OTHER_WORK_SAID = 0.1
#: The corrected workload's file name, beside --json's file (else in the current directory).
CORRECTED_NAME = "servertune-bench-workload.toml"


@dataclass(frozen=True)
class Correction:
    """The cpu_ms a row's measured saturation implies, against the one the plan used."""

    config: str
    against: str
    #: The ms a request held its loop in the plan, and the ms the saturation implies.
    planned_cpu_ms: float
    measured_cpu_ms: float
    planned_rps: float
    measured_rps: float
    #: Cores other work took during that level (median of its repeats), 0 when not recorded.
    other_cores: float = 0.0
    #: The workload number the planned ms came from, as the verdict names it: `cpu_ms`, or
    #: `loop_blocking_fraction (<service> ms x <share>)` where the loop share gave more.
    off: str = "cpu_ms"
    #: The field corrected: `cpu_ms`, or `in_flight_limit` (then the two numbers above are
    #: requests a process, not ms).
    field: str = "cpu_ms"

    @property
    def unit(self) -> str:
        return "requests a process" if self.field == "in_flight_limit" else "ms a request"

    def said(self, path: Path) -> str:
        """The verdict's line: which number was off, by how much, and where the fix went."""
        return (
            f"capacity off by more than {CAPACITY_TOLERANCE:.0%}: {self.config}'s plan said "
            f"{self.planned_rps:.0f} req/s, {self.against} (no admission) serves "
            f"{self.measured_rps:.0f}; the number that was off is {self.off}, "
            f"{self.planned_cpu_ms:g} {self.unit} planned against {self.measured_cpu_ms:g} "
            "that saturation implies"
            + (
                f" (other work took {self.other_cores:.2f} cores meanwhile: that share is the "
                "machine's, not the app's)"
                if self.other_cores >= OTHER_WORK_SAID
                else ""
            )
            + f"; wrote {path} with it: `servertune gen --workload {path}` gives the configs "
            "for what was measured"
        )


def _server_ms(server: str) -> float:
    return GRANIAN_SERVER_MS_PER_REQUEST if server == "granian" else ASGI_SERVER_MS_PER_REQUEST


def correct(
    sat: Saturation, workload: Workload, processes: int, cores_per_process: float = 1.0
) -> Correction | None:
    """The correction for one judged row, or None: within tolerance, not judged against a
    saturated copied layout, or a saturation no CPU per request explains (above what the
    loops serve at the least cost, the bound was elsewhere)."""
    if sat.against is None or sat.saturated is None or sat.ratio is None:
        return None
    if abs(sat.ratio - 1) <= CAPACITY_TOLERANCE:
        return None
    others = sorted(
        float(r["other_cpu_cores"])
        for r in sat.row.get("repeats", [])
        if r.get("other_cpu_cores") is not None
    )
    # Judged by its CPU per request, the other work's cores are already out of it.
    other = 0.0 if sat.machine_rps is not None else others[len(others) // 2] if others else 0.0
    if (limited := _in_flight_off(sat, workload, processes)) is not None:
        limit, implied = limited
        return Correction(
            sat.config, sat.against, limit, implied, sat.planned_rps, sat.judged_rps, other,
            "in_flight_limit", field="in_flight_limit",
        )  # fmt: skip
    per_process_ms = processes * 1000 / sat.judged_rps - NGINX_MS_PER_REQUEST
    ms = per_process_ms * min(1.0, cores_per_process) - _server_ms(sat.server)
    if ms < max(MIN_CPU_MS, MIN_CPU_MS_PER_REQUEST):
        return None
    planned, off = planned_hold(workload, cores_per_process, _server_ms(sat.server))
    return Correction(
        sat.config, sat.against, round(planned, 3), round(ms, 3),
        sat.planned_rps, sat.judged_rps, other, off,
    )  # fmt: skip


def _in_flight_off(sat: Saturation, workload: Workload, processes: int) -> tuple[int, int] | None:
    """(the plan's in_flight_limit, the one the saturation implies) when the plan's capacity
    was `processes x in_flight_limit / held s` and the server held more at its saturation."""
    limit = workload.in_flight_limit
    if limit is None:
        return None
    hold = asgi_hold_s(workload)
    bound = processes * limit / hold
    if abs(sat.planned_rps - bound) > 1e-6 * bound:
        return None  # the capacity came from the loop's time, not from the limit
    implied = math.ceil(sat.judged_rps * hold / processes - 1e-9)
    return (limit, implied) if implied > limit else None


def planned_hold(
    workload: Workload, cores_per_process: float = 1.0, server_ms: float = 0.0
) -> tuple[float, str]:
    """The ms a request holds its loop in the plan (`admission.blocking_ms`), and the workload
    number it came from: where processes share the cores and their CPU share is the longer
    time (as the plan's capacity takes it), that is `cpu_ms`."""
    held, _ = blocking_ms(workload)
    cpu = workload.cpu_ms_per_request
    lbf = workload.loop_blocking_fraction
    _, shared = on_shared_cores(workload, held + server_ms, server_ms, cores_per_process)
    if lbf is not None and held > cpu and not shared:
        return held, f"loop_blocking_fraction ({workload.service_time_ms:g} ms x {lbf:g})"
    return (cpu if shared else held), "cpu_ms"


def corrected_values(workload: Workload, correction: Correction) -> dict[str, Any]:
    """The workload the run planned from, with the measured cpu_ms (and no larger loop share)."""
    values = {
        name: getattr(workload, name)
        for name in workload.model_fields_set
        if name != "cpu_fraction" and getattr(workload, name) is not None
    }
    if correction.field == "in_flight_limit":
        values["in_flight_limit"] = int(correction.measured_cpu_ms)
        return {k: v for k, v in values.items() if isinstance(v, str | int | float | bool)}
    values["cpu_ms"] = correction.measured_cpu_ms
    share = correction.measured_cpu_ms / workload.service_time_ms
    lbf = workload.loop_blocking_fraction
    if lbf is not None and lbf > share:
        # Rounded down: a share rounded up would hold the loop a hair past the measured cpu_ms.
        values["loop_blocking_fraction"] = math.floor(min(1.0, share) * 1e6) / 1e6
    return {k: v for k, v in values.items() if isinstance(v, str | int | float | bool)}


def write_correction(
    workload: Workload, correction: Correction, directory: Path, command: str
) -> Path:
    """Write the corrected workload file into `directory`; its path."""
    from servertune.files import write_atomically
    from servertune.workload_file import dumps

    text = dumps(
        corrected_values(workload, correction),
        comments=(
            f"written by {command}",
            (
                f"{correction.off}: {correction.planned_cpu_ms:g} {correction.unit} corrected "
                f"to {correction.field} {correction.measured_cpu_ms:g}: {correction.against} "
                "saturated at "
                f"{correction.measured_rps:.0f} req/s without servertune's admission"
            ),
        ),
    )
    (path,) = write_atomically({CORRECTED_NAME: text}, directory)
    return path
