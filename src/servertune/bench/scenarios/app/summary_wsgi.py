"""A WSGI app's `bench app` report: per closed level, servertune's best layout against the best
copied one, the targets against gunicorn's (2 x cores) + 1, the ceiling and the CPU split."""

from __future__ import annotations

from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import Level, Results, Run
from servertune.bench.scenarios.app.inputs import AppSizes
from servertune.bench.scenarios.app.notes import (
    busy_note,
    ceiling_note,
    cpu_split_note,
    measured_note,
    verdict_rule_note,
)
from servertune.bench.scenarios.app.replay import ReplaySummary
from servertune.bench.scenarios.app.static import static_note
from servertune.bench.scenarios.app.verdicts import (
    IO_BOUND_CPU_FRACTION,
    IO_BOUND_TARGET,
    NOISE_BAND,
    repeats_said,
    spread,
    verdict_of,
    verdict_record,
)
from servertune.bench.scenarios.app.wsgi_layouts import OURS


class WsgiSummary(ReplaySummary):
    """The report of the WSGI entry point's candidates."""

    def _summarize_wsgi(self, run: Run[AppSizes], results: Results) -> Report:
        """Per closed level: medians with the repeats' spread, the best servertune layout
        against the best naive one in words; the ceiling and CPU split."""
        from servertune.bench.harness.versions import app_version, ran, tool_versions

        runs: list[dict[str, Any]] = []
        report = Report(scenario=self.name, runs=runs)
        notes: list[str] = []
        for level in self.level_counts:
            rows = self._wsgi_rows(run, level, results)
            naive = [c for c in self._naive(run) if c in rows]
            ours = [c for c in self._ours(run) if c in rows]
            if not naive or not ours:
                continue
            runs.extend(rows.values())
            notes.append(self._wsgi_verdict(report, level, rows, ours, naive))
            if level >= 2 * self.cores and (why := self._target(report, rows, level)):
                notes.append(why)
        top = [r for r in runs if r["concurrency"] == max(r["concurrency"] for r in runs)]
        measured = max((r for r in top if r["config"] in OURS), key=lambda r: r["rps"])
        report.ceiling_rps = measured.get("ceiling_rps")
        report.notes = [
            ceiling_note(measured, self.cores, self.plan.ceiling_rps, self.tool),
            cpu_split_note(runs, self.tool),
            *self._wsgi_method_notes(run),
            *notes,
        ]
        if self.static_served:
            report.notes.append(static_note(self.static_served))
        if busy := busy_note(results.all_rows()):
            report.notes.append(busy)
        report.versions = ran(
            {**tool_versions(["uwsgi", "gunicorn", "nginx", self.tool]), **app_version(self.app)}
        )
        self._reproduce(report, self._side_configs(run))
        report.notes.extend(self._replay_notes(run, results, report))
        return report

    def _wsgi_rows(self, run: Run[AppSizes], level: int, results: Results) -> dict[str, Any]:
        """Each candidate's row at `level` connections: medians, the errors summed over the
        repeats, and the spread of req/s."""
        rows = {}
        for config in self._side_configs(run):
            if (config, Level(level)) not in results.samples:
                continue  # above where every candidate saturated, or dropped as behind
            samples = results.rows(config, Level(level))
            row = results.median(config, Level(level))
            for key in ("repeat", "other_cpu_cores", "requests"):  # kept under `repeats`
                row.pop(key, None)
            row["errors"] = sum(s["errors"] for s in samples)
            row["non_2xx"] = sum(s["non_2xx"] for s in samples)
            row["socket_errors"] = sum(s["socket_errors"] for s in samples)
            low, high = spread([s["rps"] for s in samples], self._one_sample_band(run))
            row["rps_low"], row["rps_high"] = round(low, 2), round(high, 2)
            rows[config] = row
        return rows

    @staticmethod
    def _wsgi_verdict(
        report: Report, level: int, rows: dict[str, Any], ours: list[str], naive: list[str]
    ) -> str:
        """The best servertune layout against the best naive one at `level`: each row's ratios
        (to the best naive, to its own ceiling), the verdict (recorded in `report`), its line."""
        best_naive = max(naive, key=lambda c: rows[c]["rps"])
        best_ours = max(ours, key=lambda c: rows[c]["rps"])
        base = rows[best_naive]["rps"]
        for row in rows.values():
            row["x_best_naive"] = round(row["rps"] / base, 2) if base else None
            ceiling = row.get("ceiling_rps")
            row["x_ceiling"] = round(row["rps"] / ceiling, 2) if ceiling else None
        mine, theirs = rows[best_ours], rows[best_naive]
        verdict = verdict_of(mine, theirs)
        report.verdicts.append(
            verdict_record(
                f"c={level}", "req/s", best_ours, mine, best_naive, theirs, "rps", verdict
            )
        )
        report.ratios[f"{best_ours}/{best_naive} req/s at c={level}"] = mine["x_best_naive"] or 0.0
        return (
            f"c={level}: {verdict}: best servertune {best_ours} {mine['rps']:.1f} req/s "
            f"({mine['rps_low']:.1f}-{mine['rps_high']:.1f}), p99 {mine['p99_ms']} ms; best "
            f"naive {best_naive} {theirs['rps']:.1f} req/s "
            f"({theirs['rps_low']:.1f}-{theirs['rps_high']:.1f}), p99 {theirs['p99_ms']} ms"
        )

    def _wsgi_method_notes(self, run: Run[AppSizes]) -> list[str]:
        """How the run measured: the app's figures, the plan, the load, what counts as an
        error, and when a difference counts."""
        plan = self.plan
        return [
            (
                f"measured per path ({measured_note(self.input.paths, self.measured)}); mixed: "
                f"service_time_ms {self.workload.service_time_ms:g}, "
                f"cpu_ms {self.workload.cpu_ms_per_request:.4g} "
                f"(cpu_fraction {self.workload.cpu_fraction:.4g})"
            ),
            (
                f"{self.cores} cores; servertune's plan: {plan.processes} processes x {plan.threads} "
                f"threads; nginx and the load generator share these cores"
            ),
            (
                f"load by {self.tool}; {run.size.seconds:g} s per measurement; medians of "
                f"{repeats_said(run)} interleaved run(s); errors = answers >= 400 + socket errors, summed "
                "over the repeats; rps counts successful answers only"
            ),
            verdict_rule_note(NOISE_BAND),
        ]

    def _target(self, report: Report, rows: dict[str, dict[str, Any]], level: int) -> str | None:
        """The targets against gunicorn's (2 x cores) + 1 rule at this level; for the
        I/O-bound one, a note when the closed loop itself leaves no room for the ratio."""
        ours = max((c for c in OURS if c in rows), key=lambda c: rows[c]["rps"])
        if "gunicorn-2n+1" not in rows:
            return None
        docs = rows["gunicorn-2n+1"]
        if not docs["rps"]:
            return None
        ratio = round(rows[ours]["rps"] / docs["rps"], 3)
        why = None
        if self.workload.cpu_fraction < IO_BOUND_CPU_FRACTION:
            docs_workers = 2 * self.cores + 1
            cap = level / (self.workload.service_time_ms / 1000)
            if level <= docs_workers and docs["rps"] * IO_BOUND_TARGET > cap:
                why = (
                    f"I/O-bound target at c={level}: gunicorn-2n+1's {docs_workers} sync workers "
                    f"already serve all {level} connections, and a closed loop of {level} "
                    f"connections caps every candidate near {level} / "
                    f"{self.workload.service_time_ms:g} ms = {cap:.0f} req/s; gunicorn-2n+1 "
                    f"served {docs['rps']:.0f} ({docs['rps'] / cap:.0%} of that), so no layout "
                    f"can be {IO_BOUND_TARGET:g}x faster at this level"
                )
            report.targets.append(
                Target(
                    f"I/O-bound: best servertune / gunicorn-2n+1 req/s at c={level}",
                    ratio,
                    ">=",
                    IO_BOUND_TARGET,
                )
            )
        else:
            report.targets.append(
                Target(
                    f"CPU-bound: best servertune / gunicorn-2n+1 req/s at c={level}",
                    ratio,
                    ">=",
                    round(1 - NOISE_BAND, 2),
                )
            )
        return why
