"""An ASGI app's `bench app` report: per level (unloaded, closed, overload) servertune's best
layout against the best copied one, and overload's targets."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import Level, Results, Run
from servertune.bench.scenarios.app.capacity import (
    Saturation,
    planned_rps,
    references,
    saturation,
    saturation_note,
    saturation_target,
    without_admission,
)
from servertune.bench.scenarios.app.correction import Correction, correct, write_correction
from servertune.bench.scenarios.app.inputs import AppSizes, sibling_entry_point
from servertune.bench.scenarios.app.levels import (
    UNLOADED_FACTOR_TEXT,
    UNLOADED_TEXT,
    levels_for,
    open_loop_rates,
    overload_unmeasurable,
    replay_trimmed,
)
from servertune.bench.scenarios.app.load import GOOD_WITHIN_MS
from servertune.bench.scenarios.app.notes import (
    busy_note,
    client_note,
    cpu_split_note,
    measured_note,
    overload_notes,
    overload_repeats_note,
    p99_rule_note,
    verdict_rule_note,
)
from servertune.bench.scenarios.app.replay import ReplaySummary
from servertune.bench.scenarios.app.verdicts import (
    IO_BOUND_CPU_FRACTION,
    IO_BOUND_TARGET,
    MAX_OVERLOAD_P99_RATIO,
    NOISE_BAND,
    P99_NOISE_BAND,
    client_lag_unmeasurable,
    p99_spread,
    p99_verdict,
    repeats_said,
    shed_cause,
    spread,
    verdict_of,
    verdict_record,
)


class AsgiSummary(ReplaySummary):
    """The report of the ASGI entry point's candidates."""

    def _summarize_asgi(self, run: Run[AppSizes], results: Results) -> Report:
        """Per level (unloaded, closed, overload): medians with the repeats' spread, the best
        servertune layout against the best copied one in words; overload's targets."""
        configs = self._side_configs(run)
        ours = [c for c in configs if c in self.layouts and self.layouts[c].ours]
        copied = [c for c in configs if c not in ours]
        runs: list[dict[str, Any]] = []
        report = Report(scenario=self.name, runs=runs)
        verdicts: list[str] = []
        by_load: dict[str, dict[str, dict[str, Any]]] = {c: {} for c in configs}
        for level in levels_for("asgi", self.level_counts):
            rows = self._asgi_rows(configs, level, results, self._one_sample_band(run))
            for config, row in rows.items():
                by_load[config][level.role or f"c={level.concurrency}"] = row
            here_copied = [c for c in copied if c in rows]
            here_ours = [c for c in ours if c in rows]
            if here_copied and here_ours:
                runs.extend(rows.values())
                verdicts.append(
                    self._asgi_verdict(
                        report, level, rows, here_ours, here_copied,
                        self._unmeasurable() if level.role == "overload" else None,
                    )
                )  # fmt: skip
        # No overload level in --replay's default run (`levels.REPLAY_REPEATS`): no targets.
        over = {c: by_load[c]["overload"] for c in configs if "overload" in by_load[c]}
        overload: list[str] = []
        if over:
            best_ours = max((c for c in ours if c in over), key=lambda c: over[c]["good_rps"])
            best_copied = max((c for c in copied if c in over), key=lambda c: over[c]["good_rps"])
            self._overload_targets(report, best_ours, best_copied, by_load)
            overload = [
                *overload_notes({c: by_load[c] for c in configs if c in over}, ours),
                overload_repeats_note(best_ours, by_load[best_ours]["unloaded"], over[best_ours]),
            ]
        capacity, corrections = self._capacity_targets(report, ours, by_load)
        if corrections:
            # One file: the row furthest off names the number, the others say the same.
            worst = max(corrections, key=lambda c: abs(c.planned_rps / c.measured_rps - 1))
            given = run.options.extra.get("json_file")
            where = Path(str(given)).resolve().parent if given else Path.cwd()
            command = str(run.options.extra.get("command", "servertune bench app"))
            written = write_correction(self.workload, worst, where, command)
            verdicts.append(worst.said(written))
        report.notes = [
            *[f"verdict {line}" for line in verdicts],
            *overload[:-1],
            *capacity,
            *overload[-1:],
            cpu_split_note([r for r in runs if r.get("load") == "closed"], self.tool),
            *self._asgi_method_notes(run),
        ]
        if busy := busy_note(results.all_rows()):
            report.notes.append(busy)
        report.versions = self._asgi_versions(configs)
        other = sibling_entry_point(self.app, Path(str(self.workload.app_dir)))
        if other and not self.dual:
            report.notes.append(
                f"this project also has {other[1]} (its {other[0].upper()} entry point): "
                "without --interface (and with --only naming candidates of both) `servertune "
                "bench app` benches both in one run, to compare which to deploy"
            )
        self._reproduce(report, configs)
        report.notes.extend(self._replay_notes(run, results, report))
        return report

    @staticmethod
    def _asgi_rows(
        configs: list[str], level: Level, results: Results, one_sample_band: float = NOISE_BAND
    ) -> dict[str, Any]:
        """Each candidate's row at `level`: medians, the errors, 503s, timeouts and requests
        summed over the repeats, and the spread of req/s (and at overload of good_rps; a
        closed level's single value widened to `one_sample_band`)."""
        rows = {}
        for config in configs:
            if (config, level) not in results.samples:
                continue  # above where every candidate saturated, or dropped as behind
            samples = results.rows(config, level)
            row = results.median(config, level)
            for key in ("repeat", "other_cpu_cores"):  # kept under `repeats`
                row.pop(key, None)
            for key in ("errors", "refused_503", "timeouts", "timeouts_unsent", "requests"):
                row[key] = sum(int(s.get(key) or 0) for s in samples)
            band = one_sample_band if level.concurrency is not None else NOISE_BAND
            low, high = spread([s["rps"] for s in samples], band)
            row["rps_low"], row["rps_high"] = round(low, 2), round(high, 2)
            if p99s := [float(s["p99_ms"]) for s in samples if s.get("p99_ms") is not None]:
                low, high = p99_spread(p99s)
                row["p99_ms_low"], row["p99_ms_high"] = round(low, 3), round(high, 3)
            if level.role == "overload":
                low, high = spread([s["good_rps"] for s in samples])
                row["good_rps_low"], row["good_rps_high"] = round(low, 2), round(high, 2)
            rows[config] = row
        return rows

    @staticmethod
    def _asgi_verdict(
        report: Report,
        level: Level,
        rows: dict[str, Any],
        ours: list[str],
        copied: list[str],
        unmeasurable: str | None = None,
    ) -> str:
        """Servertune's best layout against the best copied one at `level`: each row's ratio to
        the best copied, the verdict (recorded in `report`), and its line for the notes."""
        # Under overload what counts is the answers in time: an unbounded queue answers
        # many requests only just before the client gives up.
        key = "good_rps" if level.role == "overload" else "rps"
        if level.role == "unloaded":  # every layout serves the offered rate: compare tails
            best_copied = min(copied, key=lambda c: rows[c]["p99_ms"] or math.inf)
            best_ours = min(ours, key=lambda c: rows[c]["p99_ms"] or math.inf)
        else:
            best_copied = max(copied, key=lambda c: rows[c][key])
            best_ours = max(ours, key=lambda c: rows[c][key])
        base = rows[best_copied]["rps"]
        for row in rows.values():
            row["x_best_naive"] = round(row["rps"] / base, 2) if base else None
        mine, theirs = rows[best_ours], rows[best_copied]
        named = level.role or f"c={level.concurrency}"
        report.ratios[f"{best_ours}/{best_copied} req/s at {named}"] = mine["x_best_naive"] or 0.0
        verdict = verdict_of(
            {"rps_low": mine[f"{key}_low"], "rps_high": mine[f"{key}_high"]},
            {"rps_low": theirs[f"{key}_low"], "rps_high": theirs[f"{key}_high"]},
        ).replace("naive", "copied")
        if level.role == "unloaded":
            verdict = "the latency of a request on its own (no winner is named here)"
        elif unmeasurable:  # the level measured the load generator: no winner either
            verdict = f"overload {unmeasurable}"
        else:
            what_short = (
                f"req/s within {GOOD_WITHIN_MS / 1000:g} s" if key == "good_rps" else "req/s"
            )
            report.verdicts.append(
                verdict_record(
                    named, what_short, best_ours, mine, best_copied, theirs, key, verdict
                )
            )
        what = f"req/s within {GOOD_WITHIN_MS:g} ms" if key == "good_rps" else "req/s"
        if verdict == "copied faster":
            verdict += shed_cause(mine, theirs)
        return (
            f"{named}: {verdict}: best servertune {best_ours} {mine[key]:.1f} {what} "
            f"({mine[f'{key}_low']:.1f}-{mine[f'{key}_high']:.1f}), p99 {_p99_said(mine, theirs)}, "
            f"{mine['errors']} errors, {mine['refused_503']} shed (503); best copied "
            f"{best_copied} {theirs[key]:.1f} {what} "
            f"({theirs[f'{key}_low']:.1f}-{theirs[f'{key}_high']:.1f}), p99 "
            f"{_p99_range(theirs)}, {theirs['errors']} errors, {theirs['refused_503']} "
            "shed (503)"
        )

    def _overload_targets(
        self,
        report: Report,
        best_ours: str,
        best_copied: str,
        by_load: dict[str, dict[str, dict[str, Any]]],
    ) -> None:
        """Overload's ratio and targets: servertune's best answers more requests in time than
        the best copied layout, keeps its admitted p99 near its unloaded one, and errs nowhere
        beyond the 503s it sheds."""
        over = {c: by_load[c]["overload"] for c in (best_ours, best_copied)}
        ratio = (
            round(over[best_ours]["good_rps"] / over[best_copied]["good_rps"], 3)
            if over[best_copied]["good_rps"]
            else None
        )
        report.ratios[f"{best_ours}/{best_copied} good_rps at overload"] = ratio or float("nan")
        io_bound = self.workload.cpu_fraction < IO_BOUND_CPU_FRACTION
        calm = by_load[best_ours]["unloaded"]["p99_ms"]
        level_why = self._unmeasurable()
        lag_why = client_lag_unmeasurable(over[best_ours], calm)
        why = level_why or lag_why
        report.targets.append(
            Target(
                f"{'I/O' if io_bound else 'CPU'}-bound: best servertune ({best_ours}) / best "
                f"copied ({best_copied}) req/s answered within {GOOD_WITHIN_MS:g} ms at overload"
                + (f": {level_why}" if level_why else ""),
                None if level_why else ratio,
                ">=",
                IO_BOUND_TARGET if io_bound else round(1 - NOISE_BAND, 2),
            )
        )
        p99_ratio = over[best_ours]["p99_ms"] / calm if over[best_ours]["p99_ms"] and calm else None
        report.targets.append(
            Target(
                f"{best_ours}: admitted p99 at overload / its unloaded p99"
                + (f": {why}" if why else ""),
                None if why or p99_ratio is None else round(p99_ratio, 3),
                "<=",
                MAX_OVERLOAD_P99_RATIO,
            )
        )
        report.targets.append(
            Target(
                f"{best_ours}: errors at overload besides the counted 503s"
                + (f": {why}" if why else ""),
                None if why else float(over[best_ours]["errors"]),
                "==",
                0.0,
            )
        )

    def _capacity_targets(
        self, report: Report, ours: list[str], by_load: dict[str, dict[str, dict[str, Any]]]
    ) -> tuple[list[str], list[Correction]]:
        """Per servertune row, the plan's capacity for its server against the saturation it
        measured (a target each, `capacity.saturation_target`), and the notes that split the
        CPU per answered request at that level."""
        fronts = {"nginx": "nginx", "haproxy": "HAProxy", "haproxy-nginx": "HAProxy + nginx"}
        notes = []
        corrections = []

        def measured(config: str) -> Saturation | None:
            closed = [row for key, row in by_load[config].items() if key.startswith("c=")]
            if not closed:
                return None
            layout = self.layouts[config]
            return saturation(
                config, layout.server, planned_rps(self.plan, layout.server), closed,
                by_load[config].get("unloaded", {}).get("p50_ms"),
                # A loop uses a core at most: the plan's processes bound it below the cores.
                min(self.cores, int(self.plan.processes)),
            )  # fmt: skip

        copied = [c for c in by_load if c in self.layouts and not self.layouts[c].ours]
        for config in ours:
            own = measured(config)
            if own is None:
                continue
            # The same server, with at least the plan's processes: one process on 2 cores
            # (uvicorn's default) saturates at a core, which says nothing of a 2-core plan's
            # req/s. Its CPU per answered request, though, is the server's cost per request
            # with nothing in front, so where no copied layout runs as many processes (granian's
            # default is one) it is the capacity judged, and it beats the row's own behind its
            # admission.
            same = [
                (one, self._workers(c) >= int(self.plan.processes))
                for c in copied
                if self.layouts[c].server == own.server and (one := measured(c)) is not None
            ]
            many = [one for one, enough in same if enough]
            few = [one for one, _ in same if one.machine_rps is not None]
            sat = without_admission(own, references(many, few))
            # The CPU split is of the row judged: a copied layout sits behind plain nginx.
            front = "nginx" if sat.against else self.layouts[config].front
            report.targets.append(saturation_target(sat))
            notes.append(saturation_note(sat, self.cores, self.tool, fronts[front]))
            fix = correct(
                sat, self.workload, int(self.plan.processes), float(self.plan.cores_per_process)
            )
            if fix is not None:
                corrections.append(fix)
        return notes, corrections

    def _workers(self, config: str) -> int:
        """The processes a layout runs on this machine (0: not known)."""
        workers = self.layouts[config].workers
        return workers(self.cores) if workers is not None else 0

    def _unmeasurable(self) -> str | None:
        """Why this run's overload level cannot overload the layouts (the calibrated client
        sends too little next to the plan's capacity), or None."""
        client_rps = self.client.rps if self.client else None
        return overload_unmeasurable(float(self.plan.asgi_capacity_rps or 0), client_rps)

    def _asgi_method_notes(self, run: Run[AppSizes]) -> list[str]:
        """How the run measured: the app's figures, the plan, the load at each level, what
        counts as an error, and when a difference counts."""
        plan = self.plan
        io_bound = self.workload.cpu_fraction < IO_BOUND_CPU_FRACTION
        client_rps = self.client.rps if self.client else None
        trimmed = replay_trimmed(run.size, self.input.replay is not None)
        rates = ", ".join(
            f"{role} {rate:.0f} req/s"
            for role, rate in open_loop_rates(
                float(plan.asgi_capacity_rps or 0), client_rps
            ).items()
            if not (trimmed and role == "overload")
        )
        open_levels = (
            "unloaded (no overload level in --replay's default run: the replay's 2 x and 4 x "
            "ask it of the log's own traffic; --thorough measures it)"
            if trimmed
            else "unloaded and overload"
        )
        return [
            (
                f"measured per path ({measured_note(self.input.paths, self.measured)}); mixed: "
                f"service_time_ms {self.workload.service_time_ms:g}, cpu_ms "
                f"{self.workload.cpu_ms_per_request:.4g} (cpu_fraction "
                f"{self.workload.cpu_fraction:.4g}, {'I/O' if io_bound else 'CPU'}-bound)"
            ),
            (
                f"{self.cores} cores; ASGI; servertune's plan: {plan.processes} processes, "
                f"capacity {plan.asgi_capacity_rps:.0f} req/s, nginx admits "
                f"{plan.admission_limit}; the copied layouts sit behind the same nginx without "
                "an admission limit"
            ),
            (
                f"{open_levels}: open-loop Poisson arrivals on {self.open_path} "
                f"({rates}; {UNLOADED_TEXT if trimmed else UNLOADED_FACTOR_TEXT}"
                f"{', at most what the client sends' if self.client else ''}), latencies of "
                "admitted (2xx) answers from "
                f"their scheduled send; closed: {self.tool} at {', '.join(map(str, self.level_counts))} "
                f"connections; {_seconds_said(run.size, overload=not trimmed)}; "
                f"medians of {repeats_said(run)} interleaved run(s)"
            ),
            (
                "errors = answers >= 400 other than 503, failed connections and timeouts (summed "
                "over the repeats); refused_503 = requests nginx shed on purpose, counted apart; "
                "rps counts successful answers only"
            ),
            verdict_rule_note(NOISE_BAND),
            p99_rule_note(P99_NOISE_BAND),
            *(
                [
                    self.client.said()
                    if trimmed
                    else client_note(self.client, float(plan.asgi_capacity_rps or 0))
                ]
                if self.client
                else []
            ),
        ]

    def _asgi_versions(self, configs: list[str]) -> dict[str, str]:
        """The versions of nginx, the load generator, the servers the candidates ran, and the
        app's own stack only (what its module imports: FastAPI and Starlette for a FastAPI app,
        not a Django installed beside it)."""
        from servertune.bench.harness.versions import (
            app_stack,
            app_version,
            dist_version,
            ran,
            tool_versions,
        )

        servers = {self.layouts[c].server if c in self.layouts else self.user_commands[c].server
                   for c in configs}  # fmt: skip
        dists = {"uvicorn": ("uvicorn",), "gunicorn-asgi": ("gunicorn", "uvicorn-worker"),
                 "granian": ("granian",)}  # fmt: skip
        versions = {
            **tool_versions(["nginx", self.tool]),
            **{d: dist_version(d) for s in sorted(servers) for d in dists.get(s, (s,))},
            **{d: dist_version(d) for d in app_stack(self.app, Path(str(self.workload.app_dir)))},
        }
        return ran({**versions, **app_version(self.app)})


def _p99_range(row: dict[str, Any]) -> str:
    """A row's p99 with its repeats' spread, `3.2 ms (2.4-4.0)`."""
    if "p99_ms_low" not in row or row.get("p99_ms") is None:
        return f"{row.get('p99_ms')} ms"
    return f"{row['p99_ms']} ms ({row['p99_ms_low']:g}-{row['p99_ms_high']:g})"


def _p99_said(mine: dict[str, Any], theirs: dict[str, Any]) -> str:
    """servertune's p99 with its spread, its ratio to the copied one and whether the two
    spreads are apart (`p99_verdict`): a 1-2 s load's p99 is one stall on a shared machine."""
    verdict = p99_verdict(mine, theirs)
    if not (mine.get("p99_ms") and theirs.get("p99_ms") and verdict):
        return _p99_range(mine)
    ratio = mine["p99_ms"] / theirs["p99_ms"]
    return f"{_p99_range(mine)}, {ratio:.2f} x the copied p99, {verdict}"


def _seconds_said(size: AppSizes, *, overload: bool = True) -> str:
    """How long each measurement ran, as the notes say it (`overload`: the run had that level)."""
    if size.open_seconds is None or size.open_seconds == size.seconds:
        return f"{size.seconds:g} s per measurement" + (
            " (overload twice that)" if overload else ""
        )
    return f"{size.seconds:g} s per closed-loop measurement, {size.open_seconds:g} s unloaded" + (
        f", {2 * size.open_seconds:g} s overload" if overload else ""
    )
