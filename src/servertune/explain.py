"""`servertune explain`: the plan as a table of numbers and the reason for each."""

from __future__ import annotations

import shutil
import textwrap

from servertune.sizing import Plan

__all__ = ["format_plan"]


def format_plan(plan: Plan, width: int | None = None) -> str:
    """Name, value, unit and reason per row; reasons wrap to the terminal width."""
    width = width or shutil.get_terminal_size((120, 24)).columns
    rows = plan.rows()
    name_w = max(len(r[0]) for r in rows)
    value_w = min(16, max(len(r[1]) for r in rows))
    unit_w = max(len(r[2]) for r in rows)
    reason_w = max(30, width - name_w - value_w - unit_w - 6)
    w = plan.workload
    peak = "unset" if w.peak_rps is None else f"{w.peak_rps:g}"
    summary = (
        f"workload: cores={w.cores} service_time_ms={w.service_time_ms:g} "
        f"cpu_fraction={w.cpu_fraction:g} slow_call_ratio={w.slow_call_ratio:g} "
        f"slow_call_ms={w.slow_call_ms:g} peak_rps={peak} gil={w.gil}"
    )
    lines = [
        summary,
        "",
        f"{'name':{name_w}}  {'value':{value_w}}  {'unit':{unit_w}}  reason",
        f"{'-' * name_w}  {'-' * value_w}  {'-' * unit_w}  {'-' * min(reason_w, 40)}",
    ]
    for name, value, unit, reason in rows:
        wrapped = textwrap.wrap(reason, reason_w) or [""]
        values = textwrap.wrap(value, value_w) or [""]
        for i in range(max(len(wrapped), len(values))):
            lines.append(
                f"{name if i == 0 else '':{name_w}}  {values[i] if i < len(values) else '':{value_w}}  "
                f"{unit if i == 0 else '':{unit_w}}  {wrapped[i] if i < len(wrapped) else ''}".rstrip()
            )
    lines.extend(f"warning: {warning}" for warning in plan.warnings)
    return "\n".join(lines)
