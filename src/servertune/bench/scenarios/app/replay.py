"""`bench app --replay`: the access log's own arrival times offered open loop to every layout at
1 x, 2 x and 4 x the log's pace (`levels.REPLAY_SPEEDS`); each layout's verdict on each, and the
log's rate over time beside what each layout answered in time.

The log's busiest REPLAY_LOG_SECONDS (`logs.arrivals`: the times to the millisecond where the
log has them) keep their gaps: at 1 x they are played as logged, at 2 x and 4 x every gap is
halved and quartered, so a burst of twenty requests within 100 ms stays a burst, twice and four
times as tight. The log's own pace rather than a rate fitted to the machine: the question is the
traffic the user has, and that traffic grown. Only when the log's mean rate is past the plan's
capacity on this machine (a log of a fleet) is 1 x slowed to that capacity (`levels.replay_base`,
said in the notes). Every layout gets the same arrivals and paths (one seed). Each level is
bounded in count (`open_loop.MAX_REQUESTS`, `logs.arrivals.MAX_ARRIVALS`) and time (its played
seconds plus the client's timeout). The default run measures every level once and an ASGI app
without its overload level (`levels.REPLAY_REPEATS`: within 10 minutes); --thorough keeps both.
A level whose mean rate is past what the calibrated open-loop client sends here is said to be
not measurable, not judged.
"""

from __future__ import annotations

import math
from typing import Any

from servertune.bench.harness.report import Report
from servertune.bench.harness.scenario import Results, Run
from servertune.bench.scenarios.app.candidates import Candidates
from servertune.bench.scenarios.app.inputs import AppSizes
from servertune.bench.scenarios.app.levels import (
    REPLAY_LEVELS,
    replay_log_seconds,
    replay_speed,
    replay_trimmed,
)
from servertune.bench.scenarios.app.load import GOOD_WITHIN_MS
from servertune.bench.scenarios.app.verdicts import (
    NOISE_BAND,
    ONE_SAMPLE_BAND,
    spread,
    verdict_of,
    verdict_record,
)

#: Log seconds shown per line of the rate-over-time notes (the JSON rows hold every one).
TIMELINE_SHOWN_S = 20


class ReplaySummary(Candidates):
    """The replay's rows, rate over time and verdicts in a side's report."""

    def _replay_notes(self, run: Run[AppSizes], results: Results, report: Report) -> list[str]:
        """Each layout's row at each replay level (answers within GOOD_WITHIN_MS, p99, errors,
        shed, the rate over time) added to `report`, servertune's best against the best copied
        one per level; the lines for the notes."""
        arrivals = self.input.replay
        if arrivals is None:
            return []
        played = arrivals.head(replay_log_seconds(run.size))
        base = (
            "the log's own pace"
            if self.replay_scale == 1.0
            else (
                f"{self.replay_scale:.3g} x the log's pace: its mean rate "
                f"{played.mean_rps:.1f} req/s is past the plan's capacity on this machine "
                f"({self.replay_capacity_rps:.1f} req/s), so 1 x is slowed to that capacity"
            )
        )
        lines = [
            (
                f"replay: the arrival times of {played.describe()}; played at 1 x, 2 x and 4 x "
                f"{base} (every gap divided by it), the paths drawn by weight; the same "
                "arrivals for every layout"
            )
        ]
        if replay_trimmed(run.size, replay=True):
            lines.append(
                "the default run with --replay measures every level once (--thorough: "
                f"{(self.sizes.thorough or run.size).repeats} times, and an ASGI app's overload "
                "level): a closed level's one req/s is widened to "
                f"+-{ONE_SAMPLE_BAND:.0%} before two are called apart (the run-to-run move of one "
                "load on a shared machine); a replay level's answers within 1 s of the same "
                f"schedule to +-{NOISE_BAND:.0%}"
            )
        for level in REPLAY_LEVELS:
            lines += self._level_notes(level, results, report, run)
        return lines

    def _one_sample_band(self, run: Run[AppSizes]) -> float:
        """How far a closed level's single req/s is widened: ONE_SAMPLE_BAND in --replay's
        default run (each level once), else NOISE_BAND (a run of one repeat asked for)."""
        trimmed = replay_trimmed(run.size, self.input.replay is not None)
        return ONE_SAMPLE_BAND if trimmed else NOISE_BAND

    def _level_notes(
        self, level: Any, results: Results, report: Report, run: Run[AppSizes]
    ) -> list[str]:
        """One replay level's rows, timeline lines and verdict."""
        rows: dict[str, dict[str, Any]] = {}
        for config in self._side_configs(run):
            if (config, level) not in results.samples:
                continue
            samples = results.rows(config, level)
            row = results.median(config, level)
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
        speed = replay_speed(level.role)
        within = f"{GOOD_WITHIN_MS / 1000:g} s"
        first = next(iter(rows.values()))
        timeline = first["timeline"]
        lines = [
            f"{level.role} ({speed:g} x, {first['offered_rps']} req/s mean, one log second every "
            f"{timeline['log_second_s']:g} s) log req/s over time: "
            + _series(timeline["offered_rps"])
        ]
        for config, row in rows.items():
            lines.append(
                f"{level.role} {config}: {row['in_time']:.1%} of {row['requests']} requests "
                f"answered within {within}, p99 {row['p99_ms']} ms, {row['errors']} errors, "
                f"{row['refused_503']} shed (503); answered in time, req/s over time: "
                + _series(row["timeline"]["in_time_rps"])
            )
        ours = [c for c in rows if self._side_of(c) == "ours"]
        copied = [c for c in rows if self._side_of(c) == "copied"]
        if ours and copied and (why := self._unsendable(first["offered_rps"])):
            # The level measured the client, not the layouts: no winner is named.
            lines.append(f"verdict {level.role}: {why}")
        elif ours and copied:
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
                    level.role, f"req/s within {within}", best_ours, mine, best_copied, theirs,
                    key, verdict,
                )
            )  # fmt: skip
            ratio = mine[key] / theirs[key] if theirs[key] else math.inf
            report.ratios[f"{best_ours}/{best_copied} req/s within {within} at {level.role}"] = (
                round(ratio, 2) if math.isfinite(ratio) else 0.0
            )
            lines.append(
                f"verdict {level.role}: {verdict}: best servertune {best_ours} {mine[key]:.1f} "
                f"req/s within {within} ({mine['in_time']:.1%} of the requests); best copied "
                f"{best_copied} {theirs[key]:.1f} ({theirs['in_time']:.1%})"
            )
        return lines

    def _unsendable(self, offered_rps: float) -> str | None:
        """Why a replay level's mean rate is past what the calibrated open-loop client sends on
        these cores (an ASGI run calibrates it; None: within it, or not calibrated)."""
        client = self.client
        if client is None or offered_rps <= client.rps:
            return None
        return (
            f"not measurable here: it offers {offered_rps:g} req/s mean, past the "
            f"{client.rps:.0f} req/s the open-loop client sends on these cores (each row's "
            "send_lag_p99_ms shows how late it sent)"
        )


def _series(values: list[float]) -> str:
    """The first TIMELINE_SHOWN_S values, space-separated (and how many more there are)."""
    shown = " ".join(f"{v:g}" for v in values[:TIMELINE_SHOWN_S])
    more = len(values) - TIMELINE_SHOWN_S
    return shown + (f" (+{more} more in the JSON)" if more > 0 else "")
