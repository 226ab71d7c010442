"""The HTML report's charts: matplotlib figures written as inline SVG (the `plot` extra).

Text stays text (`svg.fonttype = none`): the page's reader can select it, the browser draws it in
the page's font size, and a test can measure where each label landed. matplotlib escapes every
string it writes into the SVG (a layout's name, a path), so a chart carries no markup of its own.
Colours are few and told apart by marker and line style too (Okabe and Ito's palette, readable
with the common colour-vision deficiencies): servertune's layouts solid, the copied ones dashed.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

from servertune.bench.harness.plotting import pyplot

__all__ = ["closed_charts", "overload_chart", "replay_chart"]

#: Okabe-Ito: distinguishable with the common colour-vision deficiencies.
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: Chart size (inches at 72 pt each): about a phone's width at 1:1 (the SVG is scaled to its
#: column: about 0.75 x on a 390 px phone, 1 x in a desktop's two-column grid), the legend below.
WIDTH_IN, HEIGHT_IN = 4.8, 4.4
#: Font size (pt) of labels, ticks and legend: 11 pt is about 11 px on a 390 px phone.
FONT_PT = 11


def _style(index: int, ours: bool) -> dict[str, Any]:
    return {
        "color": COLOURS[index % len(COLOURS)],
        "marker": MARKERS[index % len(MARKERS)],
        "linestyle": "-" if ours else "--",
        "linewidth": 2.2 if ours else 1.5,
        "markersize": 6,
    }


def _svg(plt: Any, fig: Any, name: str) -> str:
    """The figure as an `<svg>` element (no XML prolog, no metadata), then closed."""
    buffer = io.StringIO()
    fig.savefig(
        buffer, format="svg", bbox_inches="tight", pad_inches=0.08,
        metadata={"Date": None, "Creator": None, "Format": None, "Type": None},
    )  # fmt: skip
    plt.close(fig)
    text = buffer.getvalue()
    svg = text[text.index("<svg") :]
    # matplotlib escapes every string it writes; this only guards against that ever changing.
    if any(tag in svg.lower() for tag in ("<script", "<foreignobject", "<iframe")):
        raise ValueError("a chart's SVG carries markup it must not")
    # Sized by the page: width 100% of its column, height from the viewBox.
    head, rest = svg.split(">", 1)
    head = head.replace('width="', 'data-width="').replace('height="', 'data-height="')
    return f'{head} class="chart" role="img" aria-label="{name}">{rest}'


def _figure(plt: Any) -> Any:
    import matplotlib

    matplotlib.rcParams.update(
        {
            "svg.fonttype": "none",
            "svg.hashsalt": "servertune-report",
            "font.size": FONT_PT,
            "font.family": "sans-serif",
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    return plt.subplots(figsize=(WIDTH_IN, HEIGHT_IN), layout="constrained")


def _range(row: dict[str, Any], key: str) -> tuple[float, float]:
    """The repeats' range of `key` in a median row: rps_low/rps_high where the summary made
    them (widened to the noise band), else the raw repeats' min and max."""
    if key == "rps" and "rps_low" in row:
        return float(row["rps_low"]), float(row["rps_high"])
    values = [
        float(r[key]) for r in row.get("repeats") or [] if isinstance(r.get(key), int | float)
    ]
    return (min(values), max(values)) if values else (float(row[key]), float(row[key]))


def closed_charts(
    series: dict[str, list[dict[str, Any]]], ours: Sequence[str]
) -> list[tuple[str, str]]:
    """Two charts over the closed-loop levels, a line per layout: req/s with the repeats' range
    (error bars) and p99. `series` maps a layout to its rows (concurrency, rps, rps_low,
    rps_high, p99_ms). Returns (caption, svg) pairs."""
    plt = pyplot()
    charts = []
    for key, label, caption in (
        ("rps", "req/s (successful answers)", "req/s per closed-loop level (bars: the repeats' range)"),
        ("p99_ms", "p99 latency (ms)", "p99 latency per closed-loop level (bars: the repeats' range)"),
    ):  # fmt: skip
        fig, axis = _figure(plt)
        levels: set[int] = set()
        for index, (name, rows) in enumerate(series.items()):
            shown = sorted(
                (r for r in rows if isinstance(r.get(key), int | float) and math.isfinite(r[key])),
                key=lambda r: int(r["concurrency"]),
            )
            if not shown:
                continue
            x = [int(r["concurrency"]) for r in shown]
            y = [float(r[key]) for r in shown]
            levels.update(x)
            style = _style(index, name in ours)
            low, high = zip(*(_range(r, key) for r in shown), strict=True)
            below = [max(0.0, v - lo) for v, lo in zip(y, low, strict=True)]
            above = [max(0.0, hi - v) for v, hi in zip(y, high, strict=True)]
            axis.errorbar(x, y, yerr=[below, above], capsize=3, label=name, **style)
        if len(levels) > 1 and max(levels) / min(levels) > 4:
            axis.set_xscale("log", base=2)
        axis.set_xticks(sorted(levels), [str(n) for n in sorted(levels)])
        axis.minorticks_off()
        axis.set_xlabel("connections (closed loop)")
        axis.set_ylabel(label)
        axis.set_ylim(bottom=0)
        axis.grid(True, alpha=0.3)
        fig.legend(loc="outside lower center", ncol=2, frameon=False, handlelength=2.6)
        charts.append((caption, _svg(plt, fig, caption)))
    return charts


def overload_chart(rows: list[dict[str, Any]], ours: Sequence[str]) -> tuple[str, str]:
    """Under overload, per layout, what became of the offered req/s: answered within 1 s (with
    the repeats' range), answered later, shed with a 503, failed or timed out. Returns
    (caption, svg)."""
    plt = pyplot()
    fig, axis = _figure(plt)
    names = [str(r["config"]) for r in rows]
    good = [float(r.get("good_rps") or 0.0) for r in rows]
    late = [max(0.0, float(r.get("rps") or 0.0) - g) for r, g in zip(rows, good, strict=True)]

    def share(row: dict[str, Any], key: str) -> float:
        sent = float(row.get("requests") or 0)
        return (
            float(row.get("offered_rps") or 0.0) * float(row.get(key) or 0) / sent if sent else 0.0
        )

    shed = [share(r, "refused_503") for r in rows]
    failed = [share(r, "errors") for r in rows]
    y = list(range(len(rows)))
    left = [0.0] * len(rows)
    for values, colour, hatch, label in (
        (good, COLOURS[2], "", "answered within 1 s"),
        (late, COLOURS[4], "", "answered later"),
        (shed, COLOURS[1], "//", "shed (503)"),
        (failed, "#777777", "xx", "failed or timed out"),
    ):
        axis.barh(y, values, left=left, color=colour, hatch=hatch, label=label)
        left = [a + b for a, b in zip(left, values, strict=True)]
    low = [max(0.0, g - float(r.get("good_rps_low", g))) for g, r in zip(good, rows, strict=True)]
    high = [max(0.0, float(r.get("good_rps_high", g)) - g) for g, r in zip(good, rows, strict=True)]
    axis.errorbar(good, y, xerr=[low, high], fmt="none", ecolor="#222222", capsize=3)
    axis.set_yticks(y, [f"{n} *" if n in ours else n for n in names])
    axis.invert_yaxis()
    axis.set_xlabel("req/s offered under overload (* = servertune's)")
    axis.grid(True, axis="x", alpha=0.3)
    fig.legend(loc="outside lower center", ncol=2, frameon=False)
    caption = "overload: what became of the offered requests, per layout (req/s)"
    return caption, _svg(plt, fig, caption)


def replay_chart(rows: list[dict[str, Any]], ours: Sequence[str], level: str) -> tuple[str, str]:
    """One `bench app --replay` level over time: the log's rate as played (steps, grey) and,
    a line per layout, the req/s it answered within 1 s, per log second (`timeline` of each
    row). Returns (caption, svg)."""
    plt = pyplot()
    fig, axis = _figure(plt)
    first = rows[0]["timeline"]
    step = float(first["log_second_s"])
    # Each log second drawn over its whole played span: one more edge, the last value repeated.
    x = [i * step for i in range(len(first["offered_rps"]) + 1)]

    def held(values: list[float]) -> list[float]:
        return [*values, values[-1]]

    axis.step(x, held(first["offered_rps"]), where="post", color="#777777", linewidth=3,
              alpha=0.6, label="the log's rate (played)")  # fmt: skip
    for index, row in enumerate(rows):
        name = str(row["config"])
        style = _style(index, name in ours)
        style.pop("marker")
        axis.step(x, held(row["timeline"]["in_time_rps"]), where="post", label=name, **style)
    axis.set_xlabel(f"seconds played (one log second every {step:g} s)")
    axis.set_ylabel("req/s answered within 1 s")
    axis.set_ylim(bottom=0)
    axis.grid(True, alpha=0.3)
    fig.legend(loc="outside lower center", ncol=2, frameon=False, handlelength=2.6)
    caption = f"{level}: the log's rate over time beside what each layout answered in time"
    return caption, _svg(plt, fig, caption)
