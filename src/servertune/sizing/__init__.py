"""Workload + Machine -> Plan: every derived number with the reason it has.

No I/O happens here: the machine's facts come in as a `Machine` (`Machine.read()` at the edge).
`plan_for()` is the one entry point the CLI, the benchmarks and `servertune.asgi` use.

The model, in short (docs/sizing.md has the full derivation and sources):

* One process per core: under the GIL a process can use at most one core.
* Request slots that keep the cores busy: the fewest whose utilisation in the finite-source
  (machine-repairman) queue reaches `SLOT_UTILISATION`, never fewer than Goetz's
  `1 + wait/compute` a core. A request holding the GIL half the time needs 6 slots on 2 cores
  (97.6%), not the 4 perfect interleaving would (85%); they are single-threaded processes
  while memory holds them, threads beyond (bench `balance`).
* Headroom for threads parked on slow calls: by Little's law a process receiving `x` req/s of
  which a share `r` waits `S` seconds keeps `x*r*S` threads busy on average. We reserve the
  `SLOW_CALL_QUANTILE` of a Poisson with that mean, and at least one thread whenever slow calls
  exist, so one slow call never makes quick requests queue (bench `hol`).
* One socket per worker, balanced by nginx `least_conn` (bench `balance`), so a busy worker is
  not handed a request a free one could take.
* Timeouts ordered across layers: LB idle < nginx keep-alive; slow call < harakiri < nginx read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from servertune.machine import DEFAULT_SOMAXCONN, Machine, read_somaxconn
from servertune.sizing.defaults import *  # noqa: F403 - the tuned defaults are part of the API
from servertune.sizing.defaults import __all__ as _defaults
from servertune.sizing.plan import Derivation, Forced, Plan, PlanError, Socket
from servertune.sizing.queueing import poisson_quantile
from servertune.sizing.rules import RULES
from servertune.workload import Workload

__all__ = [
    "derive",
    *_defaults,
    "DEFAULT_SOMAXCONN",
    "Forced",
    "Machine",
    "Plan",
    "PlanError",
    "Socket",
    "make_plan",
    "plan_for",
    "poisson_quantile",
    "read_somaxconn",
]


def resolve(workload: Workload, machine: Machine) -> tuple[Workload, Machine]:
    """The workload with `cores` and (for 'auto') the memory limit taken from the machine.

    A given core count means "plan for that machine", so only 'auto' borrows this machine's
    memory limit; the machine the plan describes is then this one, or one with those cores.
    """
    if workload.cores == "auto":
        memory = workload.memory_limit_mb or machine.memory_limit_mb
        resolved = workload.model_copy(update={"cores": machine.cores, "memory_limit_mb": memory})
        return resolved, machine.model_copy(
            update={"cores_source": f"'auto': {machine.cores_source}"}
        )
    assert isinstance(workload.cores, int)
    # A plan for a given core count is for a machine with those cores: this one's memory limit
    # and RAM say nothing about it (its somaxconn is kept: a Linux default is the better guess).
    return workload, machine.model_copy(
        update={
            "cores": workload.cores,
            "cores_source": "given",
            "memory_limit_mb": None,
            "memory_total_mb": None,
        }
    )


def derive(
    workload: Workload, machine: Machine, forced: Mapping[str, Forced] | None = None
) -> Derivation:
    """Run every rule in order on a resolved workload; the Derivation holds what each put."""
    derivation = Derivation(forced)
    for rule in RULES:
        derivation.rule = rule.__module__.rpartition(".")[2]
        rule(workload, machine, derivation)
    missing = [name for name in Plan.derived_names() if name not in derivation.values]
    if missing:
        raise RuntimeError(f"no rule derives {', '.join(missing)}")
    return derivation


def make_plan(
    workload: Workload,
    machine: Machine | None = None,
    *,
    forced: Mapping[str, Forced] | None = None,
) -> Plan:
    """Derive the plan: run every rule in order. Pure: `machine` defaults to an assumed one.

    Without a machine, `cores` must be a number (it is the machine) and somaxconn is Linux's
    default; `plan_for` passes the real one.
    """
    if machine is None:
        if workload.cores == "auto":
            raise PlanError("cores: 'auto' needs the machine's facts: use plan_for()")
        assert isinstance(workload.cores, int)
        machine = Machine(cores=workload.cores)
    w, m = resolve(workload, machine)
    derivation = derive(w, m, forced)
    values: dict[str, Any] = {
        "workload": w,
        "machine": m,
        "reasons": {name: derivation.reasons[name] for name in Plan.derived_names()},
        "warnings": tuple(derivation.warnings),
        **derivation.values,
    }
    # The rules' own values already have their fields' types, so they are not validated again
    # (see Plan); a forced value comes from outside the rules and is.
    return Plan(**(Plan.validated(values, forced) if forced else values))


def plan_for(
    workload: Workload,
    machine: Machine | None = None,
    *,
    forced: Mapping[str, Forced] | None = None,
) -> Plan:
    """The plan for `workload` on `machine` (this one, read once, unless given)."""
    return make_plan(workload, machine or Machine.read(), forced=forced)
