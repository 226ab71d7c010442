"""PNG plots of latency distributions; needs the `plot` extra (matplotlib), imported on use."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import Report

__all__ = ["plot_distributions", "plot_throughput", "pyplot", "save_figure", "write_png"]


def pyplot() -> Any:
    """matplotlib's pyplot drawing to files only; ImportError naming the extra if missing."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install 'servertune[plot]'") from None
    matplotlib.use("Agg")  # files only: never open a window
    import matplotlib.pyplot as plt

    return plt


def save_figure(plt: Any, fig: Any, report: Report, path: Path) -> None:
    """Title `fig` with the scenario and machine, write it to `path` as a PNG, close it."""
    machine = report.machine
    fig.suptitle(
        f"servertune bench {report.scenario} - {machine.get('cores')} cores, "
        f"Python {machine.get('python')}, {machine.get('date')}"
    )
    fig.tight_layout()
    write_png(fig, path, dpi=110)
    plt.close(fig)


def write_png(fig: Any, path: Path, dpi: int) -> None:
    """Render `fig` as a PNG in memory, then write it through the one atomic writer: a reader
    never sees half a plot, and a FIFO or device at `path` is refused, never replaced."""
    import io

    from servertune.files import write_atomically

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    write_atomically({path.name: buffer.getvalue()}, path.parent)


def plot_distributions(
    report: Report,
    path: Path,
    *,
    panel_key: str,
    panel_title: Callable[[Any], str],
    select: Callable[[dict[str, Any]], bool] = lambda run: True,
) -> None:
    """One panel per value of `panel_key`; in each, latency (ms, log scale) by percentile and
    config, servertune drawn thicker."""
    plt = pyplot()
    runs = [r for r in report.runs if select(r) and r.get("distribution")]
    panels = sorted({r[panel_key] for r in runs}, key=str)
    if not panels:
        raise ValueError("no latency distribution to plot")
    fig, axes = plt.subplots(
        1, len(panels), figsize=(5.5 * len(panels), 4.2), squeeze=False, sharey=True
    )
    for axis, panel in zip(axes[0], panels, strict=True):
        for run in (r for r in runs if r[panel_key] == panel):
            points = run["distribution"]
            axis.plot(
                [p[1] for p in points],
                [p[0] for p in points],
                label=run["config"],
                linewidth=2.5 if run["config"] == "servertune" else 1.2,
            )
        axis.set_xscale("log")
        axis.set_xlabel("latency (ms, log scale)")
        axis.set_title(panel_title(panel))
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize="small")
    axes[0][0].set_ylabel("percentile")
    save_figure(plt, fig, report, path)


def plot_throughput(report: Report, path: Path) -> None:
    """req/s (the band: the repeats' range) and p99 against connections, a line per config;
    servertune's configs drawn thicker."""
    plt = pyplot()
    configs = list(dict.fromkeys(run["config"] for run in report.runs))
    if not configs:
        raise ValueError("no runs to plot")
    fig, (rps_axis, p99_axis) = plt.subplots(1, 2, figsize=(12, 4.4))
    for config in configs:
        runs = sorted(  # closed-loop levels only: an open-loop row has no connection count
            (r for r in report.runs if r["config"] == config and r.get("concurrency") is not None),
            key=lambda r: r["concurrency"],
        )
        x = [r["concurrency"] for r in runs]
        width = 2.5 if config.startswith("servertune") else 1.2
        (line,) = rps_axis.plot(x, [r["rps"] for r in runs], marker="o", linewidth=width,
                                label=config)  # fmt: skip
        if all("rps_low" in r for r in runs):
            rps_axis.fill_between(x, [r["rps_low"] for r in runs], [r["rps_high"] for r in runs],
                                  color=line.get_color(), alpha=0.12)  # fmt: skip
        p99_axis.plot(x, [r["p99_ms"] or float("nan") for r in runs], marker="o",
                      linewidth=width, color=line.get_color(), label=config)  # fmt: skip
    rps_axis.set_ylabel("req/s (successful answers)")
    p99_axis.set_ylabel("p99 latency (ms)")
    for axis in (rps_axis, p99_axis):
        axis.set_xlabel("connections")
        axis.grid(True, alpha=0.3)
    rps_axis.legend(fontsize="small")
    save_figure(plt, fig, report, path)
