"""A rule: its id, severity, title and backing, and the function that yields its findings.

`@check_rule(...)` turns a function into a `Rule`; the rule runs once it has its line in `RULES`
(`servertune.check.rules`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from servertune.check.model import Finding, Location, Severity
from servertune.check.rules.context import Context


@dataclass(frozen=True)
class Rule:
    """A rule: id, severity, one-line title and what backs it; `check` yields its findings."""

    id: str
    severity: Severity
    title: str
    backing: str
    check: Check

    def finding(
        self,
        at: Location,
        message: str,
        fix: str,
        related: tuple[Location, ...] = (),
        docs: str = "",
    ) -> Finding:
        """A finding of this rule; `docs`: the documentation of the proxy it is about (Caddy's,
        Traefik's defaults), after the rule's own backing."""
        backing = f"{self.backing}; {docs}" if docs else self.backing
        return Finding(self.id, self.severity, at, message, fix, backing, related)


#: What a rule runs: its findings in what was read.
Check = Callable[[Rule, Context], Iterator[Finding]]


def check_rule(
    rule_id: str, severity: Severity, title: str, backing: str
) -> Callable[[Check], Rule]:
    """The decorated function as a `Rule` with this id, severity, title and backing."""

    def make(check: Check) -> Rule:
        return Rule(rule_id, severity, title, backing, check)

    return make
