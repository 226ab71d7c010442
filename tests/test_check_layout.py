"""The shape of `servertune.check.rules`: every rule registered once.

A rule module's function that `@check_rule` made a rule but `RULES` does not list would never
run, and a second rule with an id already listed would silently replace the first: both are
caught here, not by a missing finding in some later report. (No import circle and no long
function anywhere in src/, check/ included: tests/test_meta.py.)
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import servertune.check.rules
from servertune.check.audit import COVERAGE_RULES
from servertune.check.model import Severity
from servertune.check.rules import RULES, Rule, check_rule


def test_every_rule_a_rule_module_defines_is_registered_once() -> None:
    """Each `Rule` at the top level of a rules/ module is in RULES, under its own id."""
    defined: list[Rule] = []
    for info in pkgutil.iter_modules(servertune.check.rules.__path__):
        module = importlib.import_module(f"servertune.check.rules.{info.name}")
        defined += [v for v in vars(module).values() if isinstance(v, Rule)]
    assert len({r.id for r in defined}) == len(defined), "two rules share an id"
    assert sorted(r.id for r in defined) == sorted(RULES)
    assert all(RULES[r.id] is r for r in defined)


def test_every_rule_declares_a_kind_its_severity_agrees_with() -> None:
    """A fault is graded error/warning/info, advice is always severity advice, coverage is
    info (a note): the kind declared with each rule, and no advice graded as a fault."""
    allowed = {
        "fault": {Severity.error, Severity.warning, Severity.info},
        "advice": {Severity.advice},
        "coverage": {Severity.info},
    }
    assert {r.kind for r in RULES.values()} == set(allowed)
    for rule in RULES.values():
        assert rule.severity in allowed[rule.kind], rule.id


def test_a_rule_declared_with_a_severity_its_kind_forbids_is_refused() -> None:
    """`check_rule(..., kind="advice")` with warning fails where it is declared."""
    with pytest.raises(ValueError, match="advice rule cannot have severity warning"):
        check_rule("x", Severity.warning, "t", "b", kind="advice")


def test_coverage_rules_are_the_rules_of_kind_coverage() -> None:
    """The coverage notes come from the rules that declare it, not from a list kept apart."""
    assert {r.id for r in RULES.values() if r.kind == "coverage"} == COVERAGE_RULES
    assert {"include-not-found", "unresolved-variable", "config-not-found"} == COVERAGE_RULES
