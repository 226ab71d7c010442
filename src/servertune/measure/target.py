"""What to request: the method, target, headers and body, and weighted paths (`/get=3`)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from servertune.measure.errors import MeasureError
from servertune.workload_file import MAX_PATHS, TARGET_PATTERN

__all__ = ["Request", "WeightedPath", "parse_weighted_path", "split_target"]

_TARGET = re.compile(TARGET_PATTERN)
_METHOD = re.compile(r"\A[A-Z]{1,16}\Z")
#: Largest weight: weights are relative, so a ratio beyond a million to one is a typo.
MAX_WEIGHT = 1_000_000.0


@dataclass(frozen=True)
class Request:
    """One request as the app will see it."""

    method: str
    path: str
    query: str
    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass(frozen=True)
class WeightedPath:
    """A request target and its share of the traffic, relative to the other paths."""

    path: str
    weight: float = 1.0


def split_target(path: str) -> tuple[str, str]:
    """(path, query) of a request target; MeasureError naming `path` if it is not one."""
    if not _TARGET.match(path):
        raise MeasureError(
            "path",
            f"must start with '/' and hold only visible ASCII (no spaces or control "
            f"characters); got {path!r}",
        )
    parts = urlsplit(path)
    return parts.path or "/", parts.query


def check_method(method: str) -> str:
    """The method upper-cased, or MeasureError if it is not a token such as GET."""
    upper = method.upper()
    if not _METHOD.match(upper):
        raise MeasureError("method", f"must be an HTTP method such as GET; got {method!r}")
    return upper


def parse_weighted_path(text: str) -> WeightedPath:
    """`P` or `P=WEIGHT`: the weight follows the last '='. In a query string each `name=value`
    keeps its own '=', so `/items?id=1` is a path and `/items?id=1=2` that path with weight 2."""
    split_target(text)  # visible ASCII first: nothing else reaches a message or a file
    head, sep, tail = text.rpartition("=")
    last_pair = text.partition("?")[2].rpartition("&")[2]
    if not sep or ("?" in text and last_pair.count("=") < 2):
        return WeightedPath(text)
    try:
        weight = float(tail)
    except ValueError:
        raise MeasureError(
            "path",
            f"weight after '=' must be a positive number; got {tail!r} in {text!r} "
            f"(a path holding '=' takes an explicit weight: {text}=1)",
        ) from None
    if not (math.isfinite(weight) and 0 < weight <= MAX_WEIGHT):
        raise MeasureError(
            "path",
            f"weight must be a number above 0 up to {MAX_WEIGHT:g}; got {tail!r} in {text!r}",
        )
    split_target(head)
    return WeightedPath(head, weight)


def check_paths(paths: list[WeightedPath]) -> list[WeightedPath]:
    """At least one path, at most MAX_PATHS, none twice (a repeat is a weight, not a new path)."""
    if not paths:
        raise MeasureError("path", "give at least one")
    if len(paths) > MAX_PATHS:
        raise MeasureError("path", f"at most {MAX_PATHS} paths; got {len(paths)}")
    seen: set[str] = set()
    for one in paths:
        if one.path in seen:
            raise MeasureError(
                "path",
                f"{one.path!r} given twice; give it once with a weight ({one.path}=2)",
            )
        seen.add(one.path)
    return paths
