"""`servertune advise`: which execution model fits, and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from servertune.cli.options import fail, without_pydantic_plugins
from servertune.cli.workload_options import plan_or_fail, with_workload
from servertune.workload import Workload

__all__ = ["advise"]


@with_workload
def advise(
    ctx: typer.Context,
    parallel: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--parallel", help="a `bench parallel --json` report to cite", dir_okay=False),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON for machines")] = False,
    *,
    workload: Workload,
) -> None:
    """Which execution model fits: processes x threads, asyncio or sub-interpreters, and why."""
    from servertune.advise import advise as advise_workload
    from servertune.advise import read_parallel

    # The [measured] spread lives beside [workload] in the file `measure --out` wrote.
    with without_pydantic_plugins():
        from servertune.workload_file import WorkloadFileError, read_workload_file

    source = ctx.params.get("workload_file")
    try:
        measured = read_workload_file(source).measured if source is not None else None
    except WorkloadFileError as error:
        raise fail(f"--workload: {error}") from None
    try:
        report = read_parallel(parallel) if parallel is not None else None
    except ValueError as error:
        raise fail(f"--parallel: {error}") from None
    advice = advise_workload(
        workload, measured=measured, parallel=report, plan=plan_or_fail(workload)
    )
    typer.echo(json.dumps(advice.to_json(), indent=2) if as_json else advice.format())
