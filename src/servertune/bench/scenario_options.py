"""The flags a scenario takes beyond every scenario's common ones, registered per scenario.

`servertune bench SCENARIO` passes every flag it was given (by its name on the command line)
to `scenario_extra()`, which has the scenario's own parser turn them into its `extra` input and
refuses a flag another scenario owns. A scenario with flags of its own is one parser function
and one line in `SCENARIO_FLAGS`; the CLI does not branch on scenario names.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from servertune.bench.harness.report import BenchInputError
from servertune.bench.scenarios.app_options import APP_FLAGS

__all__ = ["SCENARIO_FLAGS", "corpus_extra", "scenario_extra"]

#: scenario -> (its own flags, "module:function" turning them into its `extra` entries).
SCENARIO_FLAGS: dict[str, tuple[tuple[str, ...], str]] = {
    "app": (APP_FLAGS, "servertune.bench.scenarios.app_options:app_extra"),
    "check-speed": (("--corpus",), "servertune.bench.scenario_options:corpus_extra"),
}


def corpus_extra(given: Mapping[str, Any], note: Callable[[str], None]) -> dict[str, object]:
    """`bench check-speed --corpus DIR`: also time one check of the corpus (read in its setup)."""
    corpus: Path | None = given.get("--corpus")
    return {} if corpus is None else {"corpus": str(corpus)}


def scenario_extra(
    scenario: str, given: Mapping[str, Any], note: Callable[[str], None]
) -> dict[str, object]:
    """`scenario`'s `extra` from the flags `given` (a falsy value: not given); BenchInputError
    for a bad value or a flag only another scenario takes."""
    extra: dict[str, object] = {}
    if scenario in SCENARIO_FLAGS:
        module, _, function = SCENARIO_FLAGS[scenario][1].partition(":")
        parse = getattr(importlib.import_module(module), function)
        extra.update(parse(given, note))
    for owner, (flags, _) in SCENARIO_FLAGS.items():
        foreign = [flag for flag in flags if given.get(flag)]
        if owner != scenario and foreign:
            raise BenchInputError(f"{foreign[0]}: only `servertune bench {owner}` takes it")
    return extra
