"""A benchmark report as one self-contained HTML file: what a reader opens in a browser.

The page is templates/bench-report.html.j2, rendered by an environment of its own that escapes
HTML (the configs' environment does not: they are not HTML): app paths, layout names, command
lines, notes and versions are user input, and none of it may become markup. The charts are
matplotlib's SVG (`report_charts`, the `plot` extra), inlined, so the page needs no network and
no script. The order is what a reader asks first: the answer (which layout, how much better, at
which load, how sure), the charts with the repeats' spread, the table, then how it was measured,
the machine, the versions and the commands that reproduce the run.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import Report

__all__ = ["headline", "render_html", "write_html"]

#: The table's columns, in order (those a report's runs carry): the level is each group's
#: heading, the CPU split has its own table. OPTIONAL ones are hidden on a phone's width.
COLUMNS = (
    ("config", "layout"),
    ("interface", "entry"),
    ("offered_rps", "offered/s"),
    ("rps", "req/s"),
    ("range", "range"),
    ("good_rps", "in 1 s/s"),
    ("p50_ms", "p50 ms"),
    ("p99_ms", "p99 ms"),
    ("errors", "errors"),
    ("refused_503", "503"),
    ("processes", "procs"),
)
OPTIONAL = frozenset({"interface", "offered_rps", "range", "p50_ms", "processes"})
CPU_COLUMNS = (
    ("config", "layout"),
    ("concurrency", "conn."),
    ("app_cpu_ms_per_req", "app CPU ms/req"),
    ("proxy_cpu_ms_per_req", "nginx CPU ms/req"),
    ("load_cpu_ms_per_req", "load CPU ms/req"),
)


@cache
def _environment() -> Any:
    """Jinja2 with HTML autoescape on (and the same templates/ as every emitted file)."""
    import jinja2

    from servertune.templating import template_dir

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(template_dir()),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _num(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


def _is_ours(name: str) -> bool:
    return name.startswith("servertune")


def _level_name(run: dict[str, Any]) -> str:
    if run.get("concurrency") is not None:
        return f"{run['concurrency']} connections"
    return str(run.get("load") or "")


def _sure(verdict: dict[str, Any]) -> str:
    n = verdict.get("repeats", 1)
    if verdict.get("winner"):
        return f"sure: the ranges of {n} repeat(s) do not overlap"
    return f"not sure: the ranges of {n} repeat(s) overlap"


def headline(report: Report) -> list[str]:
    """The answer in a few sentences: which layout, how much better, at which load, how sure
    (from `report.verdicts`; notes for reports without them)."""
    verdicts = report.verdicts
    if not verdicts:
        return [n.removeprefix("verdict ") for n in report.notes if n.startswith("verdict ")][:3]
    wins = [v for v in verdicts if v["winner"] == "servertune"]
    losses = [v for v in verdicts if v["winner"] == "copied"]
    ties = [v for v in verdicts if not v["winner"]]
    lines = []
    # Both entry points of a project (Django's wsgi.py and asgi.py): which to deploy comes first,
    # and the layout named is one of that entry point's.
    entry = next((n for n in report.notes if n.startswith("verdict entry point: ")), None)
    side = ""
    if entry is not None:
        lines.append("Entry point: " + entry.removeprefix("verdict entry point: ") + ".")
        side = next((s for s in ("WSGI", "ASGI") if f"deploy the {s} entry point" in entry), "")
    counts: dict[str, int] = {}
    for v in wins + ties:
        if v["level"].startswith(side):
            counts[v["ours"]] = counts.get(v["ours"], 0) + 1
    best = max(wins, key=lambda v: v["ratio"] or 0.0) if wins and counts else None
    if best is not None:
        choice = max(counts, key=lambda n: (counts[n], n == best["ours"]))
        offered = f" ({best['offered_rps']:.0f} req/s offered)" if best.get("offered_rps") else ""
        who = "it" if best["ours"] == choice else f"servertune's {best['ours']}"
        lines.append(f"Deploy {choice}.")
        lines.append(
            f"At {best['level']}{offered} {who} served {_ratio(best['ratio'])} the "
            f"{best['metric']} of the best other layout, {best['copied']}: "
            f"{_num(best['ours_value'])} against {_num(best['copied_value'])}; {_sure(best)}."
        )
    elif not losses:
        lines.append(
            "No clear difference: at every load the best servertune layout and the best other "
            "layout are within the repeats' ranges of each other."
        )
    if others := [v["level"] for v in wins if v is not best]:
        lines.append("servertune's layouts were also faster at: " + ", ".join(others) + ".")
    if ties:
        lines.append("No clear difference at: " + ", ".join(v["level"] for v in ties) + ".")
    # An overload the load generator could not send names no winner and says why (bench app).
    unmeasured = next((n for n in report.notes if n.startswith(UNMEASURED_OVERLOAD)), None)
    if unmeasured is not None:
        why = unmeasured.removeprefix(UNMEASURED_OVERLOAD).partition(": best servertune")[0]
        lines.append(f"Overload: {why}.")
    for v in losses:
        lines.append(
            f"The other layouts did better at {v['level']}: {v['copied']} "
            f"{_num(v['copied_value'])} {v['metric']} against servertune's {v['ours']} "
            f"{_num(v['ours_value'])} ({_ratio(v['ratio'])}; {_sure(v)})."
        )
    return lines


#: The start of `bench app`'s overload verdict note when the level measured the load generator.
UNMEASURED_OVERLOAD = "verdict overload: overload "


def _ratio(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}x" if value < 10 else f"{value:.0f}x"


def _rows(report: Report) -> list[dict[str, Any]]:
    """The table's rows, grouped by load level (a heading row per level)."""
    rows: list[dict[str, Any]] = []
    last = None
    for run in report.runs:
        level = (run.get("interface"), _level_name(run))
        if level != last:
            rows.append({"heading": " ".join(str(p).upper() if i == 0 else str(p)
                                             for i, p in enumerate(level) if p)})  # fmt: skip
            last = level
        cells = []
        for key, _ in COLUMNS:
            if key == "range":
                low, high = run.get("rps_low"), run.get("rps_high")
                cells.append(f"{_num(low)}-{_num(high)}" if low is not None else "-")
            elif key in ("config", "interface"):
                cells.append(str(run.get(key, "-")))
            else:
                cells.append(_num(run.get(key)))
        rows.append({"cells": cells, "ours": _is_ours(str(run.get("config", "")))})
    return rows


def _columns(report: Report, columns: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    present = {k for run in report.runs for k in run} | {"range"}
    chosen = [(k, t) for k, t in columns if k in present]
    if not any(k == "rps_low" for run in report.runs for k in run):
        chosen = [(k, t) for k, t in chosen if k != "range"]
    return chosen


def _charts(report: Report) -> list[tuple[str, str]]:
    from servertune.bench.harness.report_charts import closed_charts, overload_chart, replay_chart

    names = list(dict.fromkeys(str(r["config"]) for r in report.runs))
    ours = [n for n in names if _is_ours(n)]
    charts: list[tuple[str, str]] = []
    for interface in dict.fromkeys(r.get("interface") for r in report.runs):
        runs = [r for r in report.runs if r.get("interface") == interface]
        closed = {
            n: [r for r in runs if r["config"] == n and r.get("concurrency") is not None]
            for n in names
        }
        closed = {n: rows for n, rows in closed.items() if rows}
        tag = f"{interface.upper()}: " if isinstance(interface, str) else ""
        if closed:
            charts += [(tag + c, svg) for c, svg in closed_charts(closed, ours)]
        over = [r for r in runs if r.get("load") == "overload"]
        if over:
            caption, svg = overload_chart(over, ours)
            charts.append((tag + caption, svg))
        # bench app --replay: each level's rate over time (rows with a `timeline`).
        for level in dict.fromkeys(str(r.get("load")) for r in runs if r.get("timeline")):
            played = [r for r in runs if r.get("load") == level and r.get("timeline")]
            caption, svg = replay_chart(played, ours, level)
            charts.append((tag + caption, svg))
    return charts


def render_html(report: Report, *, command: str = "") -> str:
    """The whole page as one string (needs matplotlib, the `plot` extra, for its charts)."""
    from markupsafe import Markup

    cpu_notes = [n for n in report.notes if "CPU per request" in n or n.startswith("ceiling_rps")]
    others = [
        n for n in report.notes
        if not n.startswith(("verdict ", "c=")) and n not in cpu_notes
    ]  # fmt: skip
    details = [n.removeprefix("verdict ") for n in report.notes if n.startswith(("verdict ", "c="))]
    columns = _columns(report, COLUMNS)
    keep = [i for i, (k, _) in enumerate(COLUMNS) if (k, COLUMNS[i][1]) in columns]
    rows = [
        r if "heading" in r else {**r, "cells": [r["cells"][i] for i in keep]}
        for r in _rows(report)
    ]
    cpu_columns = _columns(report, CPU_COLUMNS)
    cpu_rows = [
        [_num(run.get(k)) if k != "config" else str(run["config"]) for k, _ in cpu_columns]
        for run in report.runs
        if run.get("concurrency") is not None and run.get("app_cpu_ms_per_req") is not None
    ]
    elapsed = report.elapsed_s
    return str(
        _environment()
        .get_template("bench-report.html.j2")
        .render(
            title=f"servertune bench {report.scenario}",
            machine=report.machine,
            took=None if elapsed is None else "{} min {:02d} s".format(*divmod(round(elapsed), 60)),
            headline=headline(report),
            targets=[
                {
                    "name": t.name,
                    "shown": None if t.value is None else f"{t.value:.3g}",
                    "op": t.op,
                    "threshold": f"{t.threshold:g}",
                    "met": t.met,
                }
                for t in report.targets
            ],
            verdicts=report.verdicts,
            charts=[(caption, Markup(svg)) for caption, svg in _charts(report)],
            columns=[title for _, title in columns],
            optional=[i for i, (key, _) in enumerate(columns) if key in OPTIONAL],
            rows=rows,
            cpu_columns=[title for _, title in cpu_columns],
            cpu_rows=cpu_rows,
            cpu_notes=cpu_notes,
            details=details,
            notes=others,
            versions=report.versions,
            command=command,
            commands=report.commands,
            files=report.files,
            num=_num,
        )
    )


def write_html(report: Report, path: Path, *, command: str = "") -> None:
    """Write the page atomically: a reader never sees half a file."""
    from servertune.files import write_atomically

    write_atomically({path.name: render_html(report, command=command)}, path.parent)
