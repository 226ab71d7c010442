"""The shape of `servertune.check.rules`: every rule registered once.

A rule module's function that `@check_rule` made a rule but `RULES` does not list would never
run, and a second rule with an id already listed would silently replace the first: both are
caught here, not by a missing finding in some later report. (No import circle and no long
function anywhere in src/, check/ included: tests/test_meta.py.)
"""

from __future__ import annotations

import importlib
import pkgutil

import servertune.check.rules
from servertune.check.rules import RULES, Rule


def test_every_rule_a_rule_module_defines_is_registered_once() -> None:
    """Each `Rule` at the top level of a rules/ module is in RULES, under its own id."""
    defined: list[Rule] = []
    for info in pkgutil.iter_modules(servertune.check.rules.__path__):
        module = importlib.import_module(f"servertune.check.rules.{info.name}")
        defined += [v for v in vars(module).values() if isinstance(v, Rule)]
    assert len({r.id for r in defined}) == len(defined), "two rules share an id"
    assert sorted(r.id for r in defined) == sorted(RULES)
    assert all(RULES[r.id] is r for r in defined)
