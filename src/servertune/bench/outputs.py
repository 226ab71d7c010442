"""Where a finished `bench` run's results go beside the table: JSON, a PNG plot, an HTML report.

The checks that need no run (a writable path, the plot extra installed) happen before the run in
the CLI; this writes them once the report exists and says each file it wrote.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from servertune.bench.harness.report import Report
from servertune.bench.harness.scenario import Scenario

__all__ = ["require_plotting", "write_outputs"]


def require_plotting(scenario: Scenario, plot_file: Path | None, report_file: Path | None) -> None:
    """The report's charts are matplotlib's too: a missing extra is said before the run, not
    after it (BenchInputError naming the flag and the extra)."""
    if (plot_file is not None and scenario.has_plot) or report_file is not None:
        from servertune.bench.harness.needs import require

        require("--plot" if plot_file is not None else "--report", ("matplotlib",))


def write_outputs(
    report: Report,
    scenario: Scenario,
    files: dict[str, Path | None],
    command: str,
    note: Callable[[str], None],
) -> None:
    """Write `files["--json"]`, `["--plot"]`, `["--report"]` where given; OSError as raised."""
    json_file, plot_file, report_file = (
        files.get(flag) for flag in ("--json", "--plot", "--report")
    )
    if json_file is not None:
        report.write_json(json_file)
        note(f"wrote {json_file}")
    if plot_file is not None:
        if not scenario.has_plot:
            note(f"note: scenario {scenario.name} has no plot")
        else:
            scenario.plot(report, plot_file)
            note(f"wrote {plot_file}")
    if report_file is not None:
        from servertune.bench.harness.html_report import write_html

        write_html(report, report_file, command=command)
        note(f"wrote {report_file}")
