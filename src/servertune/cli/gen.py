"""`servertune gen TARGET`: render config files from the plan."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from servertune.cli.options import fail, without_pydantic_plugins
from servertune.cli.workload_options import (
    FLAGS,
    field_sources,
    plan_or_fail,
    with_flag,
    with_workload,
)
from servertune.files import links_to_nothing
from servertune.sizing import Plan, PlanError
from servertune.workload import Workload

with without_pydantic_plugins():
    from servertune.render import TARGETS, fitting, render_target, unused_fields, write_atomically

__all__ = ["gen"]

GenTarget = enum.Enum("GenTarget", {name: name for name in [*TARGETS, "all"]}, type=str)  # type: ignore[misc]


@with_workload
def gen(
    target: Annotated[GenTarget, typer.Argument(help="what to generate; 'all' is every file")],
    out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--out",
            help="write into this directory (atomically) instead of stdout",
            file_okay=False,
        ),
    ] = None,
    *,
    workload: Workload,
) -> None:
    """Generate config files: uwsgi, nginx, gunicorn, ... or all of them."""
    plan = plan_or_fail(workload)
    # `all` is every file that can serve this app; a named target that cannot is refused.
    names = fitting(workload.interface) if target.value == "all" else [target.value]

    def render(plan: Plan) -> dict[str, str]:
        return {TARGETS[name].filename: render_target(name, plan) for name in names}

    try:
        files = render(plan)
    except PlanError as error:
        raise fail(with_flag(str(error))) from None
    # One consistent behaviour for an option the chosen files do not use: a `note:` on stderr
    # (docs/reference.md, "Options a target does not use"); the files are written all the same.
    given = [n for n, source in field_sources().items() if source == FLAGS.get(n)]
    for name in unused_fields(workload, plan, given, render, files):
        typer.echo(
            f"note: {FLAGS[name]} changes nothing in {', '.join(files)}; it applies to other targets",
            err=True,
        )
    if out is None:
        for filename, text in files.items():
            if len(files) > 1:
                sys.stdout.write(f"# ==> {filename} <==\n")
            sys.stdout.write(text)
        return
    try:
        written = write_atomically(files, out)
    except OSError as error:
        where = Path(error.filename or out)
        if links_to_nothing(where):
            # mkdir says "File exists" for a link that leads nowhere: say what it is.
            raise fail(
                f"--out: {where} is a symbolic link to nothing (a missing target, or links in a "
                "loop): not a directory to write into"
            ) from None
        raise fail(f"--out: cannot write to {where}: {error.strerror}") from None
    for path in written:
        typer.echo(f"wrote {path}", err=True)
