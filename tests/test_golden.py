"""Rendered configs equal the reviewed golden files, byte for byte.

Regenerate on purpose after a reviewed change: `SERVERTUNE_REGEN_GOLDEN=1 python -m pytest tests/test_golden.py`,
then read the diff (`git diff tests/golden`) before committing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from servertune.render import TARGETS, TargetError, render_target
from servertune.sizing import Machine, make_plan
from servertune.workload import Workload

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.stem for p in (GOLDEN / "cases").glob("*.json"))
REGENERATE = os.environ.get("SERVERTUNE_REGEN_GOLDEN") == "1"
#: somaxconn is part of the input, fixed here so golden files do not depend on the machine.
MACHINE = Machine(cores=1, somaxconn=4096)


def test_there_are_golden_cases() -> None:
    """The golden directory is not empty (a glob that matches nothing would pass every test)."""
    assert len(CASES) >= 4


def _case(case: str) -> Workload:
    return Workload.model_validate(json.loads((GOLDEN / "cases" / f"{case}.json").read_text()))


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("case", CASES)
def test_rendered_config_matches_golden_file(case: str, target: str) -> None:
    """`servertune gen TARGET` for a named workload renders exactly the committed golden file,
    or refuses a workload whose app (WSGI or ASGI) the target cannot serve, with no file."""
    workload = _case(case)
    plan = make_plan(workload, MACHINE)
    expected = GOLDEN / target / f"{case}.txt"
    if workload.interface not in TARGETS[target].interfaces:
        with pytest.raises(TargetError, match=r"^interface: "):
            render_target(target, plan)
        assert not expected.exists(), f"{expected} pins a config servertune refuses to render"
        return
    rendered = render_target(target, plan)
    if REGENERATE:
        expected.parent.mkdir(exist_ok=True)
        expected.write_text(rendered)
    assert expected.exists(), f"missing {expected}: regenerate with SERVERTUNE_REGEN_GOLDEN=1"
    assert rendered == expected.read_text()


def test_golden_cases_cover_both_interfaces() -> None:
    """Some golden case is a WSGI app and some an ASGI app, so every target is pinned by a file."""
    assert {_case(case).interface for case in CASES} == {"wsgi", "asgi"}
