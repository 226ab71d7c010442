"""A rule: its id, kind, severity, title and backing, and the function that yields its findings.

`@check_rule(..., kind=...)` turns a function into a `Rule`; the rule runs once it has its line
in `RULES` (`servertune.check.rules`). The kind is declared once, here, with the rule: a
`fault` (error / warning / info: what the server's or platform's documentation says loses
requests or a graceful stop), `advice` (servertune's plan for a workload, severity `advice`),
or `coverage` (what check could not see, reported as a note).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from servertune.check.model import Finding, Location, RuleKind, Severity
from servertune.check.rules.context import Context


@dataclass(frozen=True)
class Rule:
    """A rule: id, severity, one-line title, what backs it and its kind; `check` yields its
    findings."""

    id: str
    severity: Severity
    title: str
    backing: str
    check: Check
    kind: RuleKind = "fault"

    def finding(
        self,
        at: Location,
        message: str,
        fix: str,
        related: tuple[Location, ...] = (),
        docs: str = "",
        *,
        backing: str | None = None,
    ) -> Finding:
        """A finding of this rule; `backing` when this finding's evidence is narrower than the
        rule's (the one server's documentation, never another server's); `docs`: the
        documentation of the proxy it is about (Caddy's, Traefik's defaults), after it."""
        base = backing or self.backing
        return Finding(
            self.id, self.severity, at, message, fix, f"{base}; {docs}" if docs else base, related
        )


#: What a rule runs: its findings in what was read.
Check = Callable[[Rule, Context], Iterator[Finding]]

#: The severities each kind may have: advice is its own severity, coverage is a note.
_SEVERITIES: dict[RuleKind, frozenset[Severity]] = {
    "fault": frozenset({Severity.error, Severity.warning, Severity.info}),
    "advice": frozenset({Severity.advice}),
    "coverage": frozenset({Severity.info}),
}


def check_rule(
    rule_id: str, severity: Severity, title: str, backing: str, *, kind: RuleKind
) -> Callable[[Check], Rule]:
    """The decorated function as a `Rule` with this id, severity, title, backing and kind."""
    if severity not in _SEVERITIES[kind]:
        raise ValueError(f"rule {rule_id}: a {kind} rule cannot have severity {severity.name}")

    def make(check: Check) -> Rule:
        return Rule(rule_id, severity, title, backing, check, kind)

    return make
