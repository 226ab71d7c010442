"""Bundled benchmarks: each scenario measures a servertune default beside the naive alternative.

The architecture (docs/architecture.md): `harness/` holds what every benchmark shares (ports,
server supervision, deployments from a plan, load generators, stats, the report, progress,
plots), `apps/` the synthetic apps the servers run, and `scenarios/` one module per benchmark,
each implementing the `Scenario` protocol and run by `run_scenario()`. Scenario modules import
what they measure inside their methods, so listing them stays cheap and `servertune gen` never
imports any of them.
"""

from __future__ import annotations

import importlib

from servertune.bench.harness.report import BenchOptions, Report
from servertune.bench.harness.runner import run_scenario
from servertune.bench.harness.scenario import Scenario
from servertune.bench.scenarios import SCENARIOS

__all__ = [
    "BenchOptions",
    "Report",
    "Scenario",
    "load_scenario",
    "run_scenario",
    "scenario_names",
    "summary",
]


def scenario_names() -> list[str]:
    """Every bundled scenario, by the name the CLI takes."""
    return sorted(SCENARIOS)


def load_scenario(name: str) -> Scenario:
    """A fresh instance of the scenario registered as `name` (KeyError if there is none)."""
    module_name, _, class_name = SCENARIOS[name].partition(":")
    scenario: Scenario = getattr(importlib.import_module(module_name), class_name)()
    return scenario


def summary(name: str) -> str:
    """A scenario's one-line summary."""
    return load_scenario(name).summary
