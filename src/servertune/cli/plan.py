"""`servertune plan`: the plan's numbers, or JSON with units and reasons."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from servertune.cli.workload_options import plan_or_fail, with_workload
from servertune.workload import Workload

__all__ = ["plan"]


@with_workload
def plan(
    as_json: Annotated[bool, typer.Option("--json", help="print JSON for machines")] = False,
    *,
    workload: Workload,
) -> None:
    """Print the plan (the numbers only, or --json with units and reasons)."""
    result = plan_or_fail(workload)
    if as_json:
        typer.echo(json.dumps(result.to_json(), indent=2))
    else:
        for name, value, unit, _ in result.rows():
            typer.echo(f"{name} = {value}" + (f"  # {unit}" if unit else ""))
