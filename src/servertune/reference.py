"""The workload reference (docs/reference.md), generated from the model's field declarations.

Run `python -m servertune.reference > docs/reference.md`; tests/test_docs.py fails when the
committed page and the model disagree, so the page can never drift from the code.
"""

from __future__ import annotations

from servertune.workload import Workload, describe_allowed

__all__ = ["plan_reference", "workload_reference"]


def _default(name: str) -> str:
    default = Workload.model_fields[name].default
    return "unset" if default is None else f"`{default}`"


def workload_reference() -> str:
    """Markdown: one row per Workload field with its flag, unit, allowed values, default and meaning."""
    lines = [
        "# Workload reference",
        "",
        "Generated from `servertune.workload.Workload` by `python -m servertune.reference`; do not edit.",
        "Every field can be given as a CLI flag or in a TOML file passed with `--workload FILE`",
        "(a flat table or a `[workload]` table); flags win over the file. A file's values are held",
        'to what the flags accept: `cores = 4.0` or `sync_views = "yes"` are refused, not converted.',
        "",
        "Options a target does not use: a field given as a flag that changes nothing in the files",
        "`gen` writes (`gen uwsgi --server-name ...`, `--sync-views` with a WSGI target,",
        "`--ingress-class` with `k8s_layout = 'gateway'`) gets one `note:` line on stderr naming it;",
        "the files are written all the same (the field may be meant for another target).",
        "",
        "| field | flag | unit | allowed | default | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for name, info in Workload.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        flag = "--" + name.replace("_", "-")
        allowed = describe_allowed(name).replace("|", "\\|")
        lines.append(
            f"| `{name}` | `{flag}` | {extra.get('unit', '')} | {allowed} | {_default(name)} | {info.description} |"
        )
    lines += [
        "",
        "Example `workload.toml`:",
        "",
        "```toml",
        "[workload]",
        "cores = 4",
        "service_time_ms = 120",
        "cpu_ms = 48",
        "slow_call_ratio = 0.02",
        "slow_call_ms = 3000",
        'app = "mysite.wsgi:application"',
        'app_dir = "/srv/mysite"',
        "```",
        "",
    ]
    return "\n".join(lines) + plan_reference()


def plan_reference() -> str:
    """Markdown: one row per derived number with its unit, the rule that derives it and where it goes."""
    from servertune.sizing import Machine, Plan, derive

    # The origin of a number does not depend on the workload: derive one plan to read it.
    origin = derive(Workload(cores=2), Machine(cores=2)).origin
    lines = [
        "",
        "# Plan reference",
        "",
        "Every number `servertune explain` prints, in its order, with the rule module",
        "(`servertune/sizing/rules/`) that derives it; `explain only` numbers are bounds and",
        "intermediates that no config prints.",
        "",
        "| number | unit | rule | printed in |",
        "|---|---|---|---|",
    ]
    for name in Plan.derived_names():
        where = "explain only" if Plan.explain_only(name) else "configs and explain"
        lines.append(f"| `{name}` | {Plan.unit(name)} | `{origin[name]}` | {where} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(workload_reference(), end="")
