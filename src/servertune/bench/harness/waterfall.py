"""Waterfall charts: each task's start and end on a timeline, as text and as a PNG.

A published comparison (docs/references.md) reads the execution models off these charts at a glance: a staircase is a serial
run, a column is a parallel one, a gap before the bars is start-up cost, and bars stretched
to the same end are tasks sharing one GIL. Charts of one task share one time scale, so a
shorter total is a shorter picture.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_WIDTH", "Waterfall", "plot_waterfalls", "text_waterfall"]

#: Columns of the text timeline: fits an 80-column terminal with the row labels.
DEFAULT_WIDTH = 60
#: Colour of the bars: that comparison's charts use this blue (AWS console #0972d3).
BAR_COLOR = "#0972d3"


@dataclass(frozen=True)
class Waterfall:
    """One chart: a title and the (start, end) of each task, in seconds from the run's start."""

    title: str
    spans: Sequence[tuple[float, float]]
    wall_s: float


def text_waterfall(chart: Waterfall, scale_s: float, width: int = DEFAULT_WIDTH) -> list[str]:
    """Rows of `#` bars, one per task, over `width` columns spanning `scale_s` seconds."""
    scale_s = max(scale_s, chart.wall_s, 1e-9)
    per_col = scale_s / width
    lines = [f"{chart.title} (total {chart.wall_s:.3f} s)"]
    for index, (start, end) in enumerate(chart.spans, 1):
        first = min(width - 1, int(start / per_col))
        last = max(first + 1, min(width, round(end / per_col)))
        bar = " " * first + "#" * (last - first)
        lines.append(f"{index:>3} |{bar.ljust(width)}|")
    end_col = min(width, round(chart.wall_s / per_col))
    lines.append("    +" + "-" * width + "+")
    lines.append(f"     0{' ' * max(0, end_col - 1)}^ {chart.wall_s:.3f} s"[: width + 20])
    return lines


def plot_waterfalls(
    rows: Sequence[tuple[str, Sequence[Waterfall | None]]],
    columns: Sequence[str],
    path: Path,
    title: str = "",
) -> None:
    """A grid of waterfalls: one row per task, one column per model; None is a skipped cell.

    Needs matplotlib (`pip install 'servertune[plot]'`); imported here so nothing else pays
    for it.
    """
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install 'servertune[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        len(rows),
        len(columns),
        figsize=(2.3 * len(columns), 1.9 * len(rows)),
        squeeze=False,
        sharey=True,
    )
    for r, (task, charts) in enumerate(rows):
        scale = max((c.wall_s for c in charts if c is not None), default=1.0)
        for c, column in enumerate(columns):
            ax = axes[r][c]
            chart = charts[c]
            ax.set_xlim(0, scale * 1.02)
            ax.tick_params(labelsize=7)
            if c == 0:
                ax.set_ylabel(task, fontsize=9)
            if chart is None:
                ax.set_title(f"{column}: skipped", fontsize=8)
                ax.set_xticks([])
                ax.set_yticks([])
                continue
            n = len(chart.spans)
            for i, (start, end) in enumerate(chart.spans):
                # The first task on top, as in a browser's network waterfall.
                ax.broken_barh([(start, max(end - start, scale / 500))], (n - i - 0.8, 0.6),
                               color=BAR_COLOR)  # fmt: skip
            ax.axvline(chart.wall_s, color="#888888", linewidth=0.8, linestyle=":")
            ax.set_ylim(0, n)
            ax.set_yticks([])
            ax.set_title(chart.title, fontsize=8)
            if r == len(rows) - 1:
                ax.set_xlabel("seconds", fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    from servertune.bench.harness.plotting import write_png

    write_png(fig, path, dpi=72)
    plt.close(fig)
