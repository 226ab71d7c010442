"""`servertune explain`: the plan as a table of numbers and the reason for each."""

from __future__ import annotations

import shutil
import sys
import textwrap

from servertune.sizing import Plan

__all__ = ["PIPED_WIDTH", "format_plan"]

#: The width of `explain` written to a pipe or file (the docs, a CI log): fixed, so the same plan
#: reads the same everywhere. It used to follow $COLUMNS there too, and the docs test's 100
#: squeezed the reasons into a 30-character column.
PIPED_WIDTH = 120


def format_plan(plan: Plan, width: int | None = None) -> str:
    """Name, value, unit and reason per row; reasons wrap to the terminal's width, or to
    PIPED_WIDTH when stdout is not a terminal."""
    if width is None:
        tty = sys.stdout.isatty()
        width = shutil.get_terminal_size((PIPED_WIDTH, 24)).columns if tty else PIPED_WIDTH
    rows = plan.rows()
    name_w = max(len(r[0]) for r in rows)
    value_w = min(16, max(len(r[1]) for r in rows))
    unit_w = max(len(r[2]) for r in rows)
    reason_w = max(30, width - name_w - value_w - unit_w - 6)
    w = plan.workload
    peak = "unset" if w.peak_rps is None else f"{w.peak_rps:g}"
    summary = (
        f"workload: cores={w.cores} service_time_ms={w.service_time_ms:g} "
        f"cpu_ms={w.cpu_ms_per_request:.4g} "
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
