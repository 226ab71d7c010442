"""Bundled benchmarks: each scenario measures a servertune default beside the naive alternative.

A scenario is a module in `servertune.bench.scenarios`; its file name with `_` written `-` is the
name `servertune bench NAME` takes, and its docstring's first line is its summary. Scenario
modules import what they measure inside `run()`, so listing them stays cheap and
`servertune gen` never imports any of them. Each module defines
`run(options: BenchOptions) -> Report` and may define `plot(report: Report, path: Path) -> None`.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from servertune.bench import scenarios as _scenarios
from servertune.bench.report import BenchOptions, Report

__all__ = ["BenchOptions", "Report", "load_scenario", "scenario_names"]


def scenario_names() -> list[str]:
    """Every bundled scenario, by the name the CLI takes."""
    return sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules(_scenarios.__path__))


def load_scenario(name: str) -> ModuleType:
    """Import a scenario's module by its CLI name."""
    if name not in scenario_names():
        raise KeyError(name)
    return importlib.import_module(f"servertune.bench.scenarios.{name.replace('-', '_')}")


def summary(name: str) -> str:
    """A scenario's one-line summary: the first line of its module docstring."""
    doc = load_scenario(name).__doc__ or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""
