"""An ignored finding as every report carries it: the finding, how it was ignored (SARIF's
suppression kind, and which ignore), the reason given and where the ignore is written; and what
a `--baseline` run matched. `check.suppress` makes them; `check.output` writes them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from servertune.check.model import Finding, Location

if TYPE_CHECKING:
    from servertune.check.baseline import Entry

__all__ = ["BaselineReport", "Suppressed", "Suppression"]


@dataclass(frozen=True)
class Suppression:
    """How a finding was ignored: SARIF's kind, the reason given, where the ignore is written."""

    kind: Literal["inSource", "external"]
    #: "comment", "annotation", "severity", "per-file-ignores" or "baseline".
    by: str
    reason: str
    at: Location


@dataclass(frozen=True)
class Suppressed:
    """A finding and how it was ignored."""

    finding: Finding
    suppression: Suppression


@dataclass(frozen=True)
class BaselineReport:
    """A `--baseline` run: the file, how many of its entries matched, and the stale ones."""

    file: Path
    matched: int
    stale: tuple[Entry, ...]
