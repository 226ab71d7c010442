"""`servertune explain`: every derived number with its unit and reason."""

from __future__ import annotations

import typer

from servertune.cli.options import fail, without_pydantic_plugins
from servertune.cli.workload_options import plan_or_fail, with_workload
from servertune.workload import Workload

__all__ = ["explain"]


@with_workload
def explain(ctx: typer.Context, *, workload: Workload) -> None:
    """Print every derived number with its unit and the reason it has."""
    from servertune.explain import format_plan

    typer.echo(format_plan(plan_or_fail(workload)))
    # A workload file `measure --log` wrote says where each of its numbers came from.
    with without_pydantic_plugins():
        from servertune.workload_file import WorkloadFileError, read_workload_file

    source = ctx.params.get("workload_file")
    if source is not None:
        try:
            sources = read_workload_file(source).sources
        except WorkloadFileError as error:
            raise fail(f"--workload: {error}") from None
        if sources:
            typer.echo("\nsources:")
            for name, text in sources.items():
                typer.echo(f"  {name} = {getattr(workload, name)}: {text}")
