"""A Django project benched through both entry points: each one's report, tagged, led by which
entry point to deploy."""

from __future__ import annotations

from typing import Any

from servertune.bench.harness.report import Report
from servertune.bench.harness.scenario import Results, Run
from servertune.bench.scenarios.app.inputs import AppSizes, Interface
from servertune.bench.scenarios.app.summary_asgi import AsgiSummary
from servertune.bench.scenarios.app.summary_wsgi import WsgiSummary
from servertune.bench.scenarios.app.verdicts import verdict_of


class DualSummary(WsgiSummary, AsgiSummary):
    """Both entry points' reports in one, led by which to deploy."""

    def _summarize_dual(self, run: Run[AppSizes], results: Results) -> Report:
        """Both entry points: each one's rows, verdicts and targets (tagged WSGI or ASGI), led by
        which to deploy: servertune's best layout of each, compared at every closed level."""
        sides: dict[Interface, Report] = {}
        for interface in self.entries:
            self._use(interface)
            sides[interface] = (
                self._summarize_asgi(run, results)
                if interface == "asgi"
                else self._summarize_wsgi(run, results)
            )
        report = Report(scenario=self.name, runs=[], ceiling_rps=sides["wsgi"].ceiling_rps)
        tagged: list[str] = []
        for interface, side in sides.items():
            tag = interface.upper()
            for row in side.runs:
                report.runs.append({"interface": interface, "load": "closed", **row})
            report.ratios.update({f"{tag} {k}": v for k, v in side.ratios.items()})
            for target in side.targets:
                target.name = f"{tag}: {target.name}"
                report.targets.append(target)
            for note in side.notes:
                if note.startswith("verdict "):
                    tagged.append(f"verdict {tag} {note.removeprefix('verdict ')}")
                elif note.startswith("c="):
                    tagged.append(f"verdict {tag} {note}")
                else:
                    tagged.append(f"{tag}: {note}")
            report.versions.update(side.versions)
            report.commands.update(side.commands)
            report.files.update(side.files)
            report.verdicts.extend({**v, "level": f"{tag} {v['level']}"} for v in side.verdicts)
        report.notes = [*self._entry_verdicts(report), *tagged]
        return report

    def _entry_verdicts(self, report: Report) -> list[str]:
        """Which entry point to deploy: at each closed level, servertune's best layout served
        through WSGI against its best through ASGI (req/s, the repeats' spread); one line first
        saying which wins, then one per level. Adds the ratios WSGI / ASGI to `report`."""
        apps = {i: e.app for i, e in self.entries.items()}
        wins: dict[str, list[int]] = {"WSGI": [], "ASGI": [], "none": []}
        lines = []
        for level in self.level_counts:
            best: dict[Interface, dict[str, Any]] = {}
            for interface in self.entries:
                rows = [
                    r for r in report.runs
                    if r["interface"] == interface and r["load"] == "closed"
                    and r.get("concurrency") == level
                    and r["config"] in self._ours_known(interface)
                ]  # fmt: skip
                if rows:
                    best[interface] = max(rows, key=lambda r: r["rps"])
            if len(best) < 2:
                continue  # above where every candidate saturated
            w, a = best["wsgi"], best["asgi"]
            verdict = verdict_of(w, a)
            winner = {"servertune faster": "WSGI", "naive faster": "ASGI"}.get(verdict, "none")
            wins[winner].append(level)
            ratio = round(w["rps"] / a["rps"], 3) if a["rps"] else None
            report.ratios[
                f"entry point: {w['config']} (WSGI) / {a['config']} (ASGI) req/s at c={level}"
            ] = ratio if ratio is not None else float("nan")
            said = "no clear difference" if winner == "none" else f"{winner} faster"
            lines.append(
                f"verdict entry point c={level}: {said}: WSGI {apps['wsgi']} under {w['config']} "
                f"{w['rps']:.1f} req/s ({w['rps_low']:.1f}-{w['rps_high']:.1f}), p99 "
                f"{w['p99_ms']} ms; ASGI {apps['asgi']} under {a['config']} {a['rps']:.1f} req/s "
                f"({a['rps_low']:.1f}-{a['rps_high']:.1f}), p99 {a['p99_ms']} ms; WSGI / ASGI = "
                + (f"{ratio:.2f}x" if ratio is not None else "-")
            )

        def at(levels: list[int]) -> str:
            return ", ".join(f"c={n}" for n in levels)

        if wins["WSGI"] and wins["ASGI"]:
            head = (
                f"it depends on the load: WSGI ({apps['wsgi']}) faster at {at(wins['WSGI'])}, "
                f"ASGI ({apps['asgi']}) at {at(wins['ASGI'])}"
            )
        elif wins["WSGI"] or wins["ASGI"]:
            side = "WSGI" if wins["WSGI"] else "ASGI"
            head = (
                f"deploy the {side} entry point, {apps[side.lower()]} (faster at "  # type: ignore[index]
                f"{at(wins[side])}"
                + (f"; no clear difference at {at(wins['none'])}" if wins["none"] else "")
                + ")"
            )
        else:
            head = (
                f"no clear difference between the entry points ({apps['wsgi']} and "
                f"{apps['asgi']}) at {at(wins['none'])}: the repeats' ranges overlap"
            )
        return [
            (
                f"verdict entry point: {head}; servertune's best layout of each, by req/s at "
                "each closed level"
            ),
            *lines,
        ]
