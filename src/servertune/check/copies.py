"""The same fault found in copies of one file is one finding: the same rule at the same line of
files with the same name, with the same message and fix (a production and a test supervisord
config, an image's script and the copy a compose file mounts over it). Folded after the
ignores (an ignore of one copy leaves the other reported) and before the baseline (which
records what is reported)."""

from __future__ import annotations

import dataclasses

from servertune.check.model import Finding, Location

__all__ = ["copies_folded"]


def copies_folded(findings: list[Finding]) -> list[Finding]:
    """One finding for a fault found the same in copies of one file: the same rule at the same
    line of files with the same name (`deploy/supervisor/production/doaj.conf` and
    `.../test/doaj.conf`, an image's script and the copy compose mounts over it), with the same
    message and fix. The first is kept and names the others ("also at"): one fix, one issue."""
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
