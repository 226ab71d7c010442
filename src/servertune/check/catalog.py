"""Every rule id `check` can report, whichever registry runs it: the config rules
(`check.rules.RULES`), the access-log rules (`check.traffic.TRAFFIC_RULES`) and the rules
about ignore comments themselves (`IGNORE_RULES`, below).

Settings name rule ids (`severity`, `per-file-ignores`), ignore comments name them and SARIF
declares them: all three ask this one table, so a new rule in any registry is known to all.
"""

from __future__ import annotations

from dataclasses import dataclass

from servertune.check.model import Severity

__all__ = ["IGNORE_RULES", "MISSING_REASON", "UNUSED_IGNORE", "RuleInfo", "catalog"]


@dataclass(frozen=True)
class RuleInfo:
    """A rule as settings and reports know it: id, default severity, title, backing."""

    id: str
    severity: Severity
    title: str
    backing: str


_TRAFFIC = "the access log given with --log, as `servertune measure --log` reads it"


MISSING_REASON = "ignore-without-reason"
UNUSED_IGNORE = "unused-ignore"
_BACKING = 'docs/check.md, "Ignoring a finding"'
#: The rules about ignores themselves (`check.ignores`, judged by `check.suppress`).
IGNORE_RULES: dict[str, RuleInfo] = {
    MISSING_REASON: RuleInfo(
        MISSING_REASON,
        Severity.warning,
        "an ignore comment or annotation that gives no reason: say why the finding does not apply",
        _BACKING,
    ),
    UNUSED_IGNORE: RuleInfo(
        UNUSED_IGNORE,
        Severity.info,
        "an ignore that matches no finding (fixed, moved, a rule id mistyped or turned off)",
        f"{_BACKING}; ruff's RUF100 (unused-noqa)",
    ),
}


def catalog() -> dict[str, RuleInfo]:
    """Every rule id check can report, in report order: config rules, traffic rules, ignores."""
    from servertune.check.rules import RULES
    from servertune.check.traffic import TRAFFIC_RULES

    found = {r.id: RuleInfo(r.id, r.severity, r.title, r.backing) for r in RULES.values()}
    for traffic in TRAFFIC_RULES.values():
        found[traffic.id] = RuleInfo(traffic.id, traffic.severity, traffic.title, _TRAFFIC)
    for rule in IGNORE_RULES.values():
        found[rule.id] = rule
    return found
