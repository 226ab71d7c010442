"""Findings a team has answered: re-graded or turned off in its settings, ignored by a comment
or an annotation, per file in its settings, or recorded in a baseline.

An ignored finding is counted, never dropped: it moves from the findings (which set the exit
status) to the suppressed ones, with how it was ignored, why and where that is written, and
every report carries it (SARIF as a `suppressions` entry, kind `inSource` for a comment or an
annotation, `external` for settings and a baseline). Ignores that give no reason, and ignores
that match nothing, are findings of their own (`ignore-without-reason`, `unused-ignore`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from servertune.check.catalog import IGNORE_RULES, MISSING_REASON, UNUSED_IGNORE, catalog
from servertune.check.copies import copies_folded
from servertune.check.ignored import BaselineReport, Suppressed, Suppression
from servertune.check.ignores import Ignore, ignores_in
from servertune.check.model import CheckInputError, Finding, Location
from servertune.check.settings import CheckSettings, glob_matches
from servertune.check.source import read_text

if TYPE_CHECKING:
    from servertune.check.audit import CheckResult
    from servertune.check.baseline import Baseline

__all__ = ["suppress"]


def _line_of(path: Path | None, needle: str) -> Location:
    """The settings file's line that names `needle` (line 1 when none does)."""
    if path is None:
        return Location(Path("."), 1)
    try:
        lines = read_text(path).splitlines()
    except CheckInputError:
        lines = []
    for number, line in enumerate(lines, start=1):
        if needle in line:
            return Location(path, number)
    return Location(path, 1)


def _graded(
    findings: Iterable[Finding], settings: CheckSettings
) -> tuple[list[Finding], list[Suppressed]]:
    """`severity` settings: each finding at its rule's level in this repository, or listed as
    ignored when the rule is "off"."""
    levels = settings.get("severity")
    kept: list[Finding] = []
    off: list[Suppressed] = []
    for finding in findings:
        if finding.rule not in levels:
            kept.append(finding)
        elif levels[finding.rule] is None:
            at = _line_of(settings.file, finding.rule)
            reason = f'severity {finding.rule} = "off" in {settings.file}'
            off.append(Suppressed(finding, Suppression("external", "severity", reason, at)))
        else:
            kept.append(dataclasses.replace(finding, severity=levels[finding.rule]))
    return kept, off


def _inline(
    findings: Sequence[Finding], files: Iterable[Path]
) -> tuple[list[Finding], list[Suppressed], list[tuple[Ignore, set[str]]]]:
    """Findings an ignore comment or annotation covers; each ignore with the rules it matched."""
    ignores: list[tuple[Ignore, set[str]]] = []
    for path in dict.fromkeys(files):
        try:
            text = read_text(path)
        except CheckInputError:
            continue
        ignores += [(ignore, set()) for ignore in ignores_in(path, text)]
    kept: list[Finding] = []
    ignored: list[Suppressed] = []
    for finding in findings:
        match = next(((i, used) for i, used in ignores if i.covers(finding.rule, finding.at)), None)
        if match is None:
            kept.append(finding)
            continue
        ignore, used = match
        used.add(finding.rule)
        suppression = Suppression("inSource", ignore.form, ignore.reason, ignore.at)
        ignored.append(Suppressed(finding, suppression))
    return kept, ignored, ignores


def _about_ignores(
    ignores: Sequence[tuple[Ignore, set[str]]], settings: CheckSettings
) -> list[Finding]:
    """`ignore-without-reason` and `unused-ignore` findings for the ignores written."""
    known = catalog()
    off = {rule for rule, level in settings.get("severity").items() if level is None}
    rules = IGNORE_RULES
    found: list[Finding] = []

    def finding(rule: str, ignore: Ignore, message: str, fix: str) -> Finding:
        info = rules[rule]
        return Finding(rule, info.severity, ignore.at, message, fix, info.backing)

    for ignore, used in ignores:
        written = "the annotation" if ignore.form == "annotation" else "the comment"
        if not ignore.reason:
            found.append(finding(
                MISSING_REASON, ignore,
                f"ignore[{', '.join(ignore.rules)}] gives no reason",
                "say why: `rule-id: reason`" if ignore.form == "annotation"
                else "say why after the brackets: `ignore[rule-id] reason`",
            ))  # fmt: skip
        if ignore.malformed:
            found.append(finding(
                UNUSED_IGNORE, ignore, f"ignore names {ignore.malformed}: not a rule id",
                "name rule ids as the report prints them: ignore[rule-id] reason",
            ))  # fmt: skip
        for rule in ignore.rules:
            if rule in used:
                continue
            if rule not in known:
                why = f"{rule} is not a rule id check has"
            elif rule in off:
                why = f"{rule} is off in {settings.file}"
            else:
                why = f"no {rule} finding on lines {ignore.first}-{ignore.last}"
            found.append(finding(
                UNUSED_IGNORE, ignore, f"ignore[{rule}] matches nothing: {why}",
                f"remove {rule} from {written}",
            ))  # fmt: skip
    return found


def _per_file(
    findings: Iterable[Finding], settings: CheckSettings
) -> tuple[list[Finding], list[Suppressed]]:
    """`per-file-ignores`: findings in a file a glob matches, of a rule that glob lists."""
    table = settings.get("per-file-ignores")
    kept: list[Finding] = []
    ignored: list[Suppressed] = []
    for finding in findings:
        glob = next(
            (
                g
                for g, rules in table.items()
                if finding.rule in rules and glob_matches(g, finding.at.file, settings.root)
            ),
            None,
        )
        if glob is None:
            kept.append(finding)
            continue
        reason = f'per-file-ignores "{glob}" in {settings.file}'
        at = _line_of(settings.file, glob)
        ignored.append(Suppressed(finding, Suppression("external", "per-file-ignores", reason, at)))
    return kept, ignored


def suppress(
    result: CheckResult, settings: CheckSettings, baseline: Baseline | None = None
) -> CheckResult:
    """The result with the settings' severities applied and every ignored finding moved to
    `suppressed`, in this order: a rule turned off, an ignore comment or annotation,
    `per-file-ignores`, the baseline; plus the findings about the ignores themselves."""
    findings, suppressed = _graded(result.findings, settings)
    files = [*result.files, *(f.at.file for f in findings)]
    findings, inline, ignores = _inline(findings, files)
    about, about_off = _graded(_about_ignores(ignores, settings), settings)
    findings += about
    findings, per_file = _per_file(findings, settings)
    findings = copies_folded(findings)
    suppressed += inline + about_off + per_file
    report = None
    if baseline is not None:
        from servertune.check.baseline import match

        known, findings, stale = match(baseline, findings)
        reason = f"recorded in the baseline {baseline.file}"
        at = Location(baseline.file, 1)
        suppressed += [
            Suppressed(f, Suppression("external", "baseline", reason, at)) for f in known
        ]
        report = BaselineReport(baseline.file, len(known), tuple(stale))
    order = sorted(findings, key=lambda f: (str(f.at.file), f.at.line, f.rule))
    return dataclasses.replace(
        result,
        findings=tuple(order),
        suppressed=tuple(
            sorted(suppressed, key=lambda s: (str(s.finding.at.file), s.finding.at.line))
        ),
        baseline=report,
    )
