"""The workload options `gen`, `explain`, `plan` and `advise` share: `--workload FILE` and one
option per Workload field, generated from the model's fields (name, description, unit, range), so
`--help`, validation errors and docs/reference.md all say the same thing."""

from __future__ import annotations

import contextvars
import functools
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional, TypeVar

import typer
from typer.models import ArgumentInfo, ParameterInfo

from servertune.cli.options import fail, without_pydantic_plugins

with without_pydantic_plugins():
    from servertune.sizing import Plan, PlanError, plan_for
    from servertune.workload import (
        Workload,
        WorkloadError,
        build_workload,
        describe_allowed,
        describe_kind,
    )

__all__ = ["FLAGS", "field_sources", "plan_or_fail", "with_flag", "with_workload"]

F = TypeVar("F", bound=Callable[..., Any])

#: CLI flag of each workload field, e.g. service_time_ms -> --service-time-ms.
FLAGS: dict[str, str] = {name: "--" + name.replace("_", "-") for name in Workload.model_fields}


def _option_help(name: str) -> str:
    info = Workload.model_fields[name]
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    default = info.default
    shown_default = "unset" if default is None else str(default)
    # Parentheses, not brackets: typer's rich help would read "[...]" as markup and drop it.
    return f"{info.description} ({extra.get('unit', '')}; {describe_allowed(name)}; default {shown_default})"


def with_workload(func: F) -> F:
    """Add --workload FILE and one option per Workload field; pass the validated `workload`."""
    extra_params = [
        inspect.Parameter(
            "workload_file",
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option(
                None,
                "--workload",
                help="TOML file with workload fields (flags win)",
                dir_okay=False,
            ),
            annotation=Optional[Path],  # noqa: UP045 - typer reads this at run time
        )
    ]
    for name, info in Workload.model_fields.items():
        if info.annotation is bool:  # a switch: --sync-views / --no-sync-views, no value
            option = typer.Option(
                None,
                f"{FLAGS[name]}/--no-{FLAGS[name][2:]}",
                help=_option_help(name),
                show_default=False,
                rich_help_panel="Workload",
            )
            annotation: Any = Optional[bool]  # noqa: UP045 - typer reads this at run time
        else:
            option = typer.Option(
                None,
                FLAGS[name],
                metavar=f"<{describe_kind(name)}>",
                help=_option_help(name),
                show_default=False,
                rich_help_panel="Workload",
            )
            annotation = Optional[str]  # noqa: UP045 - validated by the Workload model
        extra_params.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation
            )
        )

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        path = kwargs.pop("workload_file")
        # A field whose option this run did not build (`narrowed`) was not given: None.
        overrides = {name: kwargs.pop(name, None) for name in Workload.model_fields}
        given = {name: FLAGS[name] for name, value in overrides.items() if value is not None}
        # Where each field came from, for errors the plan raises later: a min/max conflict in
        # the file is reported against the file's field, not a flag the user never gave.
        in_file = dict.fromkeys(Workload.model_fields, f"--workload {path}") if path else {}
        _FIELD_SOURCES.set({**FLAGS, **in_file, **given})
        flags = {n: f"{n} ({f})" for n, f in given.items()}
        if path is None:
            # Flags alone: what `load_workload` does without a file, without importing the
            # workload-file models (bench cold-start).
            values = {n: v for n, v in overrides.items() if v is not None}
            try:
                workload = build_workload(values, flags or None)
            except WorkloadError as error:
                raise fail(str(error)) from None
        else:
            workload = _from_file(path, overrides, flags)
        return func(*args, workload=workload, **kwargs)

    # Resolve the string annotations (PEP 563) so typer sees the Annotated[..., Option] metadata.
    hints = typing.get_type_hints(func, include_extras=True)
    own = [
        p.replace(annotation=hints.get(p.name, p.annotation))
        for p in inspect.signature(func).parameters.values()
        if p.name != "workload"
    ]
    signature = inspect.Signature([*own, *extra_params])
    wrapper.__signature__ = signature  # type: ignore[attr-defined]
    own_flags = _option_flags(own) | {"--workload"}
    wrapper.narrowed = lambda args: _narrowed(wrapper, signature, own_flags, args)  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


#: Every flag of a workload field (a switch's `--no-` form too), and the field it sets.
_FIELD_OF_FLAG: dict[str, str] = {
    **{flag: name for name, flag in FLAGS.items()},
    **{
        f"--no-{flag[2:]}": name
        for name, flag in FLAGS.items()
        if Workload.model_fields[name].annotation is bool
    },
}


def _option_flags(params: list[inspect.Parameter]) -> set[str]:
    """Flags Typer surely gives a command's own options: the declared ones (`--out`,
    `--json/--no-json`), else `--name`. One it may add beyond these only keeps every option."""
    flags: set[str] = set()
    for param in params:
        infos = [*typing.get_args(param.annotation)[1:], param.default]
        info = next((i for i in infos if isinstance(i, ParameterInfo)), None)
        if isinstance(info, ArgumentInfo) or (
            info is None and param.default is inspect.Parameter.empty
        ):
            continue
        decls = getattr(info, "param_decls", None) or ()
        named = [part.strip() for decl in decls for part in decl.split("/")]
        flags.update(named or [f"--{param.name.replace('_', '-')}"])
    return flags


def _narrowed(
    command: Callable[..., Any],
    signature: inspect.Signature,
    own_flags: set[str],
    args: list[str],
) -> Callable[..., Any]:
    """`command` declaring only the workload options `args` names, for a run that parses `args`.

    Typer turns every declared option into a click option and runs each through its parser on
    every run, given or not: 44 workload options, about 4 ms of `servertune gen`'s cold start
    (bench cold-start). An option `args` does not name parses to None, which is what the command
    gets for it either way. Click's parser treats each word of `args` by whether it is a
    declared option, and every option word of `args` stays declared, so the parse is the same.
    Anything else (help, a word Typer may answer with suggestions, no arguments) keeps every
    option, so help and errors are unchanged (tests/test_cli_narrowed.py compares them).
    """
    words = {arg.split("=", 1)[0] for arg in args if arg.startswith("-")}
    if not args or not words <= own_flags | _FIELD_OF_FLAG.keys():
        return command
    named = {_FIELD_OF_FLAG[word] for word in words if word in _FIELD_OF_FLAG}
    kept = [p for p in signature.parameters.values() if p.name not in FLAGS or p.name in named]

    @functools.wraps(command)
    def narrowed(*a: Any, **kw: Any) -> Any:
        return command(*a, **kw)

    narrowed.__signature__ = signature.replace(parameters=kept)  # type: ignore[attr-defined]
    return narrowed


#: Each workload field's source in this command: its flag, or `--workload FILE` for a field the
#: file may have set (set by `with_workload`; flags alone by default).
_FIELD_SOURCES: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar(
    "_FIELD_SOURCES", default=FLAGS
)


def _from_file(path: Path, overrides: dict[str, Any], flags: dict[str, str]) -> Workload:
    """`--workload FILE` with the flags over it; its [measured] table's warnings on stderr."""
    with without_pydantic_plugins():
        from servertune.workload_file import (
            WorkloadFileError,
            load_workload,
            measured_warnings,
            read_workload_file,
        )
    try:
        workload = load_workload(path, overrides, flags=flags, file_label=f"--workload {path}")
    except WorkloadFileError as error:
        raise fail(f"--workload: {error}") from None
    except WorkloadError as error:
        raise fail(str(error)) from None
    # The file read cleanly just above; its [measured] table may contradict the workload.
    for warning in measured_warnings(read_workload_file(path).measured, workload):
        typer.echo(f"warning: {warning}", err=True)
    return workload


def field_sources() -> dict[str, str]:
    """Each workload field's source in this command (see `_FIELD_SOURCES`)."""
    return _FIELD_SOURCES.get()


def with_flag(message: str) -> str:
    """A library message that starts with a workload field, with its flag (or file) beside it."""
    field, sep, rest = message.partition(": ")
    sources = _FIELD_SOURCES.get()
    return (
        f"{field} ({sources.get(field, FLAGS.get(field))}): {rest}"
        if sep and field in FLAGS
        else message
    )


def plan_or_fail(workload: Workload) -> Plan:
    """The plan for `workload`, its warnings on stderr; a PlanError is one `error:` line."""
    try:
        plan = plan_for(workload)
    except PlanError as error:
        raise fail(with_flag(str(error))) from None
    for warning in plan.warnings:
        typer.echo(f"warning: {warning}", err=True)
    return plan
