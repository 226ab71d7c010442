"""The same fault found in copies of one file is one finding: the same rule at the same line of
files with the same name, with the same message and fix (a production and a test supervisord
config, an image's script and the copy a compose file mounts over it). Folded after the
ignores (an ignore of one copy leaves the other reported) and before the baseline (which
records what is reported). The same fault at several lines of one file (five locations of an
nginx server missing the same `proxy_read_timeout`) is one finding too, at its first line."""

from __future__ import annotations

import dataclasses

from servertune.check.model import Finding, Location

__all__ = ["copies_folded", "lines_folded"]


def copies_folded(findings: list[Finding]) -> list[Finding]:
    """One finding for a fault found the same in copies of one file: the same rule at the same
    line of files with the same name (`deploy/supervisor/production/doaj.conf` and
    `.../test/doaj.conf`, an image's script and the copy compose mounts over it), with the same
    message and fix. The first is kept and names the others ("also at"): one fix, one issue.
    The same fault at several lines of one file is folded first (`lines_folded`)."""
    findings = lines_folded(findings)
    kept: dict[tuple[str, str, int, str, str], int] = {}
    folded: list[Finding] = []
    also: dict[int, list[Location]] = {}
    for finding in findings:
        key = (finding.rule, finding.at.file.name, finding.at.line, finding.message, finding.fix)
        if key in kept:
            also.setdefault(kept[key], []).append(finding.at)
            continue
        kept[key] = len(folded)
        folded.append(finding)
    for index, copies in also.items():
        first = folded[index]
        shown = ", ".join(str(at) for at in copies)
        folded[index] = dataclasses.replace(
            first,
            message=f"{first.message} (also at {shown}: a copy of this file with the same line)",
            related=first.related + tuple(copies),
        )
    return folded


def lines_folded(findings: list[Finding]) -> list[Finding]:
    """One finding for a fault found the same at several lines of one file: the same rule,
    message and fix (akvo/akvo-rsr's nginx/default.conf: five locations reading nginx's
    default `proxy_read_timeout` under one gunicorn `--timeout 300`). It is kept at its
    first line and names the others ("also at :70, :87"): one fix, one issue."""
    groups: dict[tuple[str, str, str, str], list[Finding]] = {}
    for finding in findings:
        key = (finding.rule, str(finding.at.file), finding.message, finding.fix)
        groups.setdefault(key, []).append(finding)
    folded: list[Finding] = []
    for finding in findings:
        group = groups[(finding.rule, str(finding.at.file), finding.message, finding.fix)]
        first = min(group, key=lambda one: one.at.line)
        others = sorted({one.at.line for one in group} - {first.at.line})
        if not others:
            folded.append(finding)
            continue
        if finding is not first:
            continue
        places = tuple(Location(first.at.file, line) for line in others)
        folded.append(
            dataclasses.replace(
                first,
                message=f"{first.message} (also at "
                + ", ".join(f":{line}" for line in others)
                + ": the same fault at other lines of this file)",
                related=first.related + tuple(at for at in places if at not in first.related),
            )
        )
    return folded
