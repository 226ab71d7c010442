"""Which workload fields the user gave change nothing in the files `gen` writes.

`gen uwsgi --server-name example.com` or `gen gunicorn --sync-views` used to pass in silence: the
option applies to another target (nginx, an ASGI server), and the user believed it was in the
file. What applies where is not declared by hand (it would drift as targets grow): each given
field is dropped in turn and the files rendered again; a field whose absence changes no byte of
them applied to none of them. `gen` then says so on stderr, one `note:` line per field, and
still writes the files (the field may be meant for another target of the same workload file).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from pydantic import ValidationError

from servertune.sizing import Plan, PlanError, plan_for
from servertune.workload import Workload

__all__ = ["unused_fields"]


def unused_fields(
    workload: Workload,
    plan: Plan,
    names: Iterable[str],
    render: Callable[[Plan], dict[str, str]],
    files: Mapping[str, str] | None = None,
) -> list[str]:
    """The fields of `names` (given by the user) whose value changes nothing `render` writes.

    A field given at its default value is skipped: dropping it changes nothing by definition.
    `files` is what `render(plan)` gave, when the caller has it (gen does: not rendered twice).
    """
    files = render(plan) if files is None else files
    unused = []
    for name in names:
        if name not in workload.model_fields_set or getattr(workload, name) == _default(name):
            continue
        values = {k: getattr(workload, k) for k in workload.model_fields_set if k != name}
        try:
            without = plan_for(Workload.model_validate(values), plan.machine)
            # `--cores 2` on a 2-core machine, `--gunicorn-asgi-worker native` where 'auto' takes
            # the native worker: the value the plan resolves is the same, so no news.
            if getattr(without.workload, name) == getattr(plan.workload, name):
                continue
            resolved = getattr(plan, name, None)
            if resolved is not None and getattr(without, name) == resolved:
                continue
            if render(without) == files:
                unused.append(name)
        except (ValidationError, PlanError):
            continue  # the field is needed for the workload to be valid at all: it applies
    return unused


def _default(name: str) -> object:
    return Workload.model_fields[name].default
