"""A benchmark report as one self-contained HTML file: what a reader opens in a browser.

No network: the curves are inline SVG drawn here, the style is one inline `<style>` (system
fonts, no CDN, no script). The order is what a reader asks first: the verdict per level in
words, then the table, the throughput and p99 curves per configuration, the CPU split, the
machine, the versions, and the commands that reproduce the run. Every value taken from the
report (app paths, command lines, notes) goes through `html.escape`: they are user input.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import Report

__all__ = ["render_html", "svg_curves", "write_html"]

#: The table's columns, in order (those a report's runs carry).
COLUMNS = (
    ("config", "layout"),
    ("interface", "entry"),
    ("load", "load"),
    ("concurrency", "conn."),
    ("offered_rps", "offered/s"),
    ("rps", "req/s"),
    ("good_rps", "in time/s"),
    ("rps_low", "low"),
    ("rps_high", "high"),
    ("p50_ms", "p50 ms"),
    ("p99_ms", "p99 ms"),
    ("errors", "errors"),
    ("refused_503", "503"),
    ("shed", "shed"),
    ("processes", "procs"),
    ("x_best_naive", "x best copied"),
    ("app_cpu_ms_per_req", "app CPU ms"),
    ("proxy_cpu_ms_per_req", "nginx CPU ms"),
    ("load_cpu_ms_per_req", "load CPU ms"),
)
#: One colour per configuration (servertune's drawn solid, the others dashed).
PALETTE = (
    "#1b6ac9", "#d1495b", "#2e933c", "#edae49", "#6f4a8e",
    "#00798c", "#8d6a9f", "#c16200", "#3d3b30", "#a1674a",
)  # fmt: skip
WIDTH, HEIGHT, PAD = 360, 220, 40

_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1d1f;
background:#fff}
main{max-width:60rem;margin:0 auto;padding:1rem}
h1{font-size:1.35rem;margin:.2rem 0 .6rem}h2{font-size:1.1rem;margin:1.4rem 0 .4rem}
ul.verdicts{padding-left:1.1rem}ul.verdicts li{margin:.3rem 0}
.met{color:#1e7b34;font-weight:600}.unmet{color:#b3261e;font-weight:600}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;font-size:.82rem;white-space:nowrap}
th,td{border-bottom:1px solid #ddd;padding:.25rem .45rem;text-align:right}
th:first-child,td:first-child,th:nth-child(2),td:nth-child(2),th:nth-child(3),td:nth-child(3){text-align:left}
tr.ours td:first-child{font-weight:600}
.charts{display:flex;flex-wrap:wrap;gap:1rem}
figure{margin:0;flex:1 1 20rem;max-width:100%}figure svg{width:100%;height:auto}
figcaption{font-size:.85rem;color:#555}
code,pre{font:.8rem/1.4 ui-monospace,Menlo,Consolas,monospace}
pre{background:#f5f5f7;padding:.6rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.15rem .8rem;font-size:.85rem}
dt{color:#555}dd{margin:0;word-break:break-word}
.legend{font-size:.8rem;display:flex;flex-wrap:wrap;gap:.3rem .9rem;padding:0;list-style:none}
.legend span{display:inline-block;width:1.2rem;height:.2rem;vertical-align:middle;margin-right:.3rem}
@media (max-width:40rem){main{padding:.6rem}body{font-size:14px}}
"""


def _e(value: Any) -> str:
    """Any value as escaped text (quotes included: it may land in an attribute)."""
    return html.escape("-" if value is None else str(value), quote=True)


def _num(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    return _e(value)


def _colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def svg_curves(
    series: dict[str, list[tuple[float, float]]], *, y_label: str, x_label: str, ours: set[str]
) -> str:
    """A line per series (x ascending) on log2-spaced x when x spans more than 4x, as inline
    SVG with axes and tick labels; servertune's series solid, the others dashed."""
    points = [p for values in series.values() for p in values if math.isfinite(p[1])]
    if not points:
        return "<p>no data</p>"
    xs = sorted({x for x, _ in points})
    log = xs[0] > 0 and xs[-1] / xs[0] > 4

    def fx(x: float) -> float:
        lo, hi = (math.log2(xs[0]), math.log2(xs[-1])) if log else (xs[0], xs[-1])
        v = math.log2(x) if log else x
        return PAD + (WIDTH - PAD - 10) * ((v - lo) / (hi - lo) if hi > lo else 0.5)

    top = max(y for _, y in points) * 1.1 or 1.0

    def fy(y: float) -> float:
        return HEIGHT - PAD + 10 - (HEIGHT - PAD) * (y / top)

    parts = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT + 10}" '
            f'role="img" aria-label="{_e(y_label)} by {_e(x_label)}">'
        ),
        f'<line x1="{PAD}" y1="{fy(0):.1f}" x2="{WIDTH - 10}" y2="{fy(0):.1f}" stroke="#888"/>',
        f'<line x1="{PAD}" y1="10" x2="{PAD}" y2="{fy(0):.1f}" stroke="#888"/>',
    ]
    for x in xs:
        parts.append(
            f'<text x="{fx(x):.1f}" y="{fy(0) + 13:.1f}" font-size="9" text-anchor="middle">'
            f"{_e(f'{x:g}')}</text>"
        )
    for i in range(5):
        y = top * i / 4
        parts.append(
            f'<text x="{PAD - 4}" y="{fy(y) + 3:.1f}" font-size="9" text-anchor="end">'
            f"{_e(f'{y:.3g}')}</text>"
            f'<line x1="{PAD}" y1="{fy(y):.1f}" x2="{WIDTH - 10}" y2="{fy(y):.1f}" '
            'stroke="#eee"/>'
        )
    parts.append(
        f'<text x="{(PAD + WIDTH) / 2:.0f}" y="{HEIGHT + 8}" font-size="10" '
        f'text-anchor="middle">{_e(x_label)}</text>'
        f'<text x="10" y="{HEIGHT / 2:.0f}" font-size="10" text-anchor="middle" '
        f'transform="rotate(-90 10 {HEIGHT / 2:.0f})">{_e(y_label)}</text>'
    )
    for index, (name, values) in enumerate(series.items()):
        shown = [(x, y) for x, y in sorted(values) if math.isfinite(y)]
        if not shown:
            continue
        path = " ".join(f"{fx(x):.1f},{fy(y):.1f}" for x, y in shown)
        dash = "" if name in ours else ' stroke-dasharray="5 3"'
        parts.append(
            f'<polyline fill="none" stroke="{_colour(index)}" stroke-width="2"{dash} '
            f'points="{path}"><title>{_e(name)}</title></polyline>'
        )
        for x, y in shown:
            parts.append(
                f'<circle cx="{fx(x):.1f}" cy="{fy(y):.1f}" r="2.5" fill="{_colour(index)}"/>'
            )
    parts.append("</svg>")
    return "".join(parts)


def _is_ours(name: str) -> bool:
    return name.startswith("servertune")


def _verdicts(report: Report) -> str:
    lines = [n.removeprefix("verdict ") for n in report.notes if n.startswith("verdict ")]
    if not lines:  # WSGI reports: "c=N: verdict: ..."
        lines = [n for n in report.notes if n.startswith("c=")]
    items = [f"<li>{_e(line)}</li>" for line in lines]
    for target in report.targets:
        css, word = (
            ("met", "met") if target.met else ("unmet", "not met" if target.met is False else "-")
        )
        shown = "-" if target.value is None else f"{target.value:.3g}"
        items.append(
            f"<li>target {_e(target.name)}: {_e(shown)} {_e(target.op)} "
            f'{_e(f"{target.threshold:g}")} <span class="{css}">{_e(word)}</span></li>'
        )
    return f'<ul class="verdicts">{"".join(items)}</ul>'


def _table(report: Report) -> str:
    columns = [(k, t) for k, t in COLUMNS if any(k in run for run in report.runs)]
    head = "".join(f"<th>{_e(title)}</th>" for _, title in columns)
    rows = []
    for run in report.runs:
        css = ' class="ours"' if _is_ours(str(run.get("config", ""))) else ""
        cells = "".join(
            f"<td>{_e(run.get(k)) if k in ('config', 'interface', 'load') else _num(run.get(k))}</td>"
            for k, _ in columns
        )
        rows.append(f"<tr{css}>{cells}</tr>")
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _charts(report: Report) -> str:
    closed = [r for r in report.runs if r.get("concurrency") is not None]
    names = list(dict.fromkeys(str(r["config"]) for r in report.runs))
    ours = {n for n in names if _is_ours(n)}
    figures = []
    for key, label in (("rps", "req/s"), ("p99_ms", "p99 ms")):
        series = {
            n: [
                (float(r["concurrency"]), float(r[key]))
                for r in closed
                if r["config"] == n and r.get(key) is not None
            ]
            for n in names
        }
        figures.append(
            f"<figure>{svg_curves(series, y_label=label, x_label='connections', ours=ours)}"
            f"<figcaption>{_e(label)} by connections (closed loop)</figcaption></figure>"
        )
    open_rows = {r.get("load") for r in report.runs} & {"unloaded", "overload"}
    if open_rows:
        bars = {
            n: [
                (1.0 if r["load"] == "unloaded" else 2.0, float(r["p99_ms"]))
                for r in report.runs
                if r["config"] == n and r.get("load") in open_rows and r.get("p99_ms") is not None
            ]
            for n in names
        }
        figures.append(
            f"<figure>{svg_curves(bars, y_label='admitted p99 ms', x_label='1 = unloaded, 2 = overload', ours=ours)}"
            "<figcaption>admitted p99: unloaded, then overload (open loop)</figcaption></figure>"
        )
    legend = "".join(
        f'<li><span style="background:{_colour(i)}"></span>{_e(n)}</li>'
        for i, n in enumerate(names)
    )
    return f'<ul class="legend">{legend}</ul><div class="charts">{"".join(figures)}</div>'


def _cpu(report: Report) -> str:
    lines = [n for n in report.notes if "CPU per request" in n or n.startswith("ceiling_rps")]
    return "".join(f"<p>{_e(line)}</p>" for line in lines) or "<p>not measured</p>"


def _dl(values: dict[str, Any]) -> str:
    return (
        "<dl>" + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in values.items()) + "</dl>"
    )


def render_html(report: Report, *, command: str = "") -> str:
    """The whole page as one string."""
    others = [
        n
        for n in report.notes
        if not n.startswith(("verdict ", "c="))
        and "CPU per request" not in n
        and not n.startswith("ceiling_rps")
    ]
    commands = "".join(
        f"<dt>{_e(name)}</dt><dd><code>{_e(line)}</code></dd>"
        for name, line in report.commands.items()
    )
    title = f"servertune bench {report.scenario}"
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width,initial-scale=1">',
            f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body><main>",
            f"<h1>{_e(title)}</h1>",
            (
                f"<p>{_e(report.machine.get('date'))} on {_e(report.machine.get('cores'))} "
                f"cores ({_e(report.machine.get('cpu'))})</p>"
            ),
            "<h2>Verdict</h2>",
            _verdicts(report),
            "<h2>Results</h2>",
            _table(report),
            "<h2>Curves</h2>",
            _charts(report),
            "<h2>CPU split</h2>",
            _cpu(report),
            "<h2>How it was measured</h2>",
            "".join(f"<p>{_e(n)}</p>" for n in others),
            "<h2>Machine</h2>",
            _dl(report.machine),
            "<h2>Versions</h2>",
            _dl(report.versions),
            "<h2>Reproduce</h2>",
            f"<pre>{_e(command)}</pre>" if command else "",
            f"<dl>{commands}</dl>" if commands else "",
            "</main></body></html>\n",
        ]
    )


def write_html(report: Report, path: Path, *, command: str = "") -> None:
    """Write the page atomically: a reader never sees half a file."""
    from servertune.files import write_atomically

    write_atomically({path.name: render_html(report, command=command)}, path.parent)
