"""`bench app --replay`: the access log's arrival profile, scaled to this machine, offered open
loop to every layout (the schedule's numbers live with the other levels', in `levels`); each
layout's verdict on it.

The log's busiest minute (`logs.replay.ArrivalProfile`) keeps its shape; its rates are scaled so
that the log's busiest second arrives at REPLAY_PEAK_FACTOR x the plan's capacity (the req/s the
plan says this machine serves: the ASGI plan's `asgi_capacity_rps`, a WSGI plan's request slots
over the service time, at most its CPU ceiling). The capacity is known before any load runs, so
every layout gets the same schedule (same steps, same seed), whatever order the rounds take; a
measured saturation would be known only after every layout's closed levels ran. At 1 x, the
user's own peak is exactly what servertune's plan says it serves: the seconds around it show
which layouts keep up and which queue or shed, the quieter seconds how each behaves below it.

The window is played in REPLAY_SECONDS (QUICK_REPLAY_SECONDS with --quick), one equal step per
log second, Poisson within each, the paths mixed by the log's route weights: bounded in count
(`open_loop.MAX_REQUESTS`) and time (the steps plus the client's timeout).
"""

from __future__ import annotations

import math
from typing import Any

from servertune.bench.harness.report import Report
from servertune.bench.harness.scenario import Results, Run
from servertune.bench.scenarios.app.candidates import Candidates
from servertune.bench.scenarios.app.inputs import AppSizes
from servertune.bench.scenarios.app.levels import (
    REPLAY_LEVEL,
    REPLAY_PEAK_FACTOR,
    replay_seconds,
)
from servertune.bench.scenarios.app.load import GOOD_WITHIN_MS
from servertune.bench.scenarios.app.verdicts import spread, verdict_of, verdict_record


class ReplaySummary(Candidates):
    """The replay's rows and verdict in a side's report."""

    def _replay_notes(self, run: Run[AppSizes], results: Results, report: Report) -> list[str]:
        """Each layout's replay row (answers within GOOD_WITHIN_MS, p99, errors, shed) added to
        `report`, servertune's best against the best copied one; the lines for the notes."""
        profile = self.input.replay
        if profile is None:
            return []
        rows: dict[str, dict[str, Any]] = {}
        for config in self._side_configs(run):
            if (config, REPLAY_LEVEL) not in results.samples:
                continue
            samples = results.rows(config, REPLAY_LEVEL)
            row = results.median(config, REPLAY_LEVEL)
            for key in ("repeat", "other_cpu_cores"):
                row.pop(key, None)
            for key in ("errors", "refused_503", "timeouts", "requests", "in_time_count"):
                row[key] = sum(int(s.get(key) or 0) for s in samples)
            row["in_time"] = (
                round(row["in_time_count"] / row["requests"], 3) if row["requests"] else 0.0
            )
            low, high = spread([s["good_rps"] for s in samples])
            row["good_rps_low"], row["good_rps_high"] = round(low, 2), round(high, 2)
            rows[config] = row
        if not rows:
            return []
        report.runs.extend(rows.values())
        within = f"{GOOD_WITHIN_MS / 1000:g} s"
        lines = [
            (
                f"replay: {profile.describe()}, played in {replay_seconds(run.size):g} s (one step "
                f"per log second, Poisson within it), its busiest second at {REPLAY_PEAK_FACTOR:g} x "
                f"the plan's capacity ({self.replay_peak_rps:.1f} req/s, scale {self.replay_scale:.3g} "
                "x the log's rates); the same arrivals (seed) for every layout"
            )
        ]
        for config, row in rows.items():
            lines.append(
                f"replay {config}: {row['in_time']:.1%} of {row['requests']} requests answered "
                f"within {within}, p99 {row['p99_ms']} ms, {row['errors']} errors, "
                f"{row['refused_503']} shed (503)"
            )
        ours = [c for c in rows if self._side_of(c) == "ours"]
        copied = [c for c in rows if self._side_of(c) == "copied"]
        if ours and copied:
            key = "good_rps"
            best_ours = max(ours, key=lambda c: rows[c][key])
            best_copied = max(copied, key=lambda c: rows[c][key])
            mine, theirs = rows[best_ours], rows[best_copied]
            verdict = verdict_of(
                {"rps_low": mine[f"{key}_low"], "rps_high": mine[f"{key}_high"]},
                {"rps_low": theirs[f"{key}_low"], "rps_high": theirs[f"{key}_high"]},
            ).replace("naive", "copied")
            report.verdicts.append(
                verdict_record(
                    "replay", f"req/s within {within}", best_ours, mine, best_copied, theirs,
                    key, verdict,
                )
            )  # fmt: skip
            ratio = mine[key] / theirs[key] if theirs[key] else math.inf
            report.ratios[f"{best_ours}/{best_copied} req/s within {within} at replay"] = (
                round(ratio, 2) if math.isfinite(ratio) else 0.0
            )
            lines.append(
                f"verdict replay: {verdict}: best servertune {best_ours} {mine[key]:.1f} req/s "
                f"within {within} ({mine['in_time']:.1%} of the requests); best copied "
                f"{best_copied} {theirs[key]:.1f} ({theirs['in_time']:.1%})"
            )
        return lines
