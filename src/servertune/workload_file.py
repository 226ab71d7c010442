"""The workload file: the TOML `gen --workload` reads and `measure --out` writes, owned here.

A workload file holds the Workload fields, either flat at the top or under `[workload]`, and
optionally a `[measured]` table: the spread behind numbers `servertune measure` estimated, which
`advise` cites and `gen` does not need. Reading and writing both live in this module, so the
format is declared once: `Measured` is its typed `[measured]` table, `read_workload_file` the
only reader, and `dumps` the only writer.

Errors name the file and the field (`w.toml: [measured] requests: ...`), never a CLI flag: the
CLI says which flag named the file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from servertune.inputfile import InputFileError, read_text
from servertune.workload import Workload, WorkloadError, build_workload

__all__ = [
    "MAX_PATHS",
    "MAX_WORKLOAD_FILE_BYTES",
    "SPREADS",
    "TARGET_PATTERN",
    "Measured",
    "MeasuredPath",
    "Spread",
    "WorkloadFile",
    "WorkloadFileError",
    "dumps",
    "load_workload",
    "measured_warnings",
    "read_workload_file",
]

#: Largest workload file read: a measured mix of MAX_PATHS paths is about 40 KiB, so anything
#: bigger is not a workload file, and reading it whole would only cost memory.
MAX_WORKLOAD_FILE_BYTES = 256 * 1024
#: Most paths one measurement mixes: each costs a measured run, and a mix of more is better
#: described by its heaviest paths.
MAX_PATHS = 32
#: The tables a workload file may hold.
TABLES = ("workload", "measured", "sources")
#: Longest `[sources]` entry: a sentence naming where one number came from.
MAX_SOURCE_CHARS = 500
#: The per-request numbers a measurement summarizes as a spread, in the order they are written.
SPREADS = ("service_time_ms", "wall_ms", "cpu_ms", "runqueue_ms", "cpu_fraction")
#: Decimals written per number: ratios carry a fourth (threads = ceil(1/cpu_fraction) turns on
#: the second), milliseconds three (microseconds; the clocks are not finer than that).
_DIGITS = {"cpu_fraction": 4, "raw_cpu_fraction": 4}
_DEFAULT_DIGITS = 3

#: A request target as it appears on an HTTP request line: visible ASCII, no spaces or controls.
TARGET_PATTERN = r"\A/[!-~]*\Z"
Target = Annotated[str, StringConstraints(pattern=TARGET_PATTERN, max_length=2048)]
Method = Annotated[str, StringConstraints(pattern=r"\A[A-Z]{1,16}\Z")]


class WorkloadFileError(WorkloadError):
    """A workload file cannot be read or has the wrong shape: one line naming the file."""


class _Table(BaseModel):
    # defer_build: the validators are built when a file with `[measured]` is first read, not
    # when the CLI imports this module (bench cold-start: `gen` with flags reads no file).
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        allow_inf_nan=False,
        regex_engine="python-re",
        defer_build=True,
    )


class Spread(_Table):
    """p10, p50, p90 (and mean) of one per-request number."""

    p10: float
    p50: float
    p90: float
    mean: float | None = None


class _Figures(_Table):
    """What one measured run reports; only what `advise` cites is required, so a spread taken
    elsewhere (an APM's percentiles) can be written by hand."""

    requests: int = Field(ge=1, description="requests measured")
    raw_cpu_fraction: float | None = Field(
        default=None, ge=0, le=1, description="CPU time / wall time, core waits included"
    )
    service_time_ms: Spread = Field(description="busy time per request (ms)")
    wall_ms: Spread | None = Field(default=None, description="wall time per request (ms)")
    cpu_ms: Spread | None = Field(default=None, description="CPU time per request (ms)")
    runqueue_ms: Spread | None = Field(
        default=None, description="time waiting for a core per request (ms)"
    )
    cpu_fraction: Spread = Field(description="CPU time / busy time per request")


class MeasuredPath(_Figures):
    """One path of a measured mix, with its weight."""

    path: Target
    weight: float = Field(default=1.0, gt=0, le=1_000_000)


class Measured(_Figures):
    """The `[measured]` table: the spread behind the workload's service_time_ms and cpu_fraction.

    For one path, `path` names it. For a weighted mix, `path` is absent, the figures describe the
    mix, and `paths` holds each path's own figures and weight.
    """

    interface: Literal["wsgi", "asgi"] | None = None
    #: `sys._is_gil_enabled()` while the app was measured (None: not recorded).
    gil_enabled: bool | None = None
    method: Method = "GET"
    path: Target | None = None
    paths: tuple[MeasuredPath, ...] = Field(default=(), max_length=MAX_PATHS)


@dataclass(frozen=True)
class WorkloadFile:
    """A workload file as read: its workload values (validated by `Workload`) and `[measured]`."""

    path: Path
    values: dict[str, Any] = field(default_factory=dict)
    measured: Measured | None = None
    #: `[sources]`: where each workload number came from, in words (`measure --log` writes it,
    #: `explain` prints it); ignored by `gen`.
    sources: dict[str, str] = field(default_factory=dict)


def read_workload_file(path: Path) -> WorkloadFile:
    """Read and check the shape of a workload file; WorkloadFileError names the file and why."""
    try:
        text = read_text(path, max_bytes=MAX_WORKLOAD_FILE_BYTES, what="workload file")
    except InputFileError as error:
        raise WorkloadFileError(str(error)) from None
    import tomllib  # only a command given --workload reads TOML (bench cold-start)

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise WorkloadFileError(f"{path} is not valid TOML: {error}") from None
    except RecursionError:  # tomllib recurses per nested array or table
        raise WorkloadFileError(f"{path} nests too deeply to be a workload file") from None
    if not data:
        raise WorkloadFileError(
            f"{path} holds no workload fields (write them flat or under [workload])"
        )
    if "workload" in data:
        values = data["workload"]
        if not isinstance(values, dict):
            raise WorkloadFileError(f"{path}: [workload] must be a table")
        for key in data:
            if key not in TABLES:
                raise WorkloadFileError(f"{path}: {_what(key, data[key])}")
    else:  # the flat form: workload fields at the top
        values = {k: v for k, v in data.items() if k not in ("measured", "sources")}
        for key, value in values.items():
            if isinstance(value, dict) or (
                isinstance(value, list) and value and isinstance(value[0], dict)
            ):
                raise WorkloadFileError(f"{path}: {_what(key, value)}")
    table = data.get("measured")
    measured = None
    if table is not None:
        if not isinstance(table, dict):
            raise WorkloadFileError(f"{path}: [measured] must be a table")
        try:
            measured = Measured.model_validate(table)
        except ValidationError as error:
            raise WorkloadFileError(f"{path}: [measured] {_one_line(error)}") from None
    sources = _sources(path, data.get("sources", {}))
    return WorkloadFile(path=path, values=values, measured=measured, sources=sources)


def _sources(path: Path, table: object) -> dict[str, str]:
    """The `[sources]` table: a Workload field name to a line of text."""
    if not isinstance(table, dict):
        raise WorkloadFileError(f"{path}: [sources] must be a table")
    for key, value in table.items():
        if key not in Workload.model_fields:
            raise WorkloadFileError(f"{path}: [sources] {key}: not a workload field")
        if not isinstance(value, str) or len(value) > MAX_SOURCE_CHARS:
            raise WorkloadFileError(
                f"{path}: [sources] {key}: must be text of at most {MAX_SOURCE_CHARS} characters"
            )
    return dict(table)


def _what(key: str, value: object) -> str:
    known = ", ".join(f"[{t}]" for t in TABLES)
    if isinstance(value, dict | list):
        return f"unknown table [{key}] (known: {known})"
    return f"key {key!r} outside [workload] (a file with [workload] keeps every field in it)"


def _one_line(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "table"
    if first["type"] == "extra_forbidden":
        return f"{where}: unknown field"
    shown = repr(first.get("input"))
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{where}: {first['msg']}; got {shown}"


def load_workload(
    path: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    flags: Mapping[str, str] | None = None,
    file_label: str | None = None,
) -> Workload:
    """Read a workload file (if any), apply `overrides` (None values skipped), and validate.

    `flags` maps a field to the label its errors carry (the CLI passes the flag that set it);
    with `file_label`, a field that came from the file is labelled `name (file_label)`.
    """
    values: dict[str, Any] = {}
    labels: dict[str, str] = {}
    if path is not None:
        values.update(read_workload_file(path).values)
        if file_label is not None:
            labels.update({name: f"{name} ({file_label})" for name in values})
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    for one, other in (("cpu_ms", "cpu_fraction"), ("cpu_fraction", "cpu_ms")):
        if one in given and other not in given:
            values.pop(other, None)  # one CPU figure: the flag's replaces the file's
    values.update(given)
    for name in given:
        labels.pop(name, None)
    labels.update(flags or {})
    return build_workload(values, labels or None)


def measured_warnings(measured: Measured | None, workload: Workload) -> list[str]:
    """What the `[measured]` table says against the workload that will be planned.

    The numbers `measure` wrote were taken with the GIL as it was then: a workload set to
    `gil = "disabled"` afterwards plans a free-threaded run from a measurement that had the GIL on.
    """
    if measured is None or workload.gil != "disabled" or measured.gil_enabled is not True:
        return []
    return [
        (
            'gil = "disabled", but the GIL was on while `measure` ran the app ([measured] '
            "gil_enabled = true): its cpu_fraction and service time were taken with the GIL; "
            "measure again on the free-threaded build the app will run on"
        )
    ]


# --- Writing -------------------------------------------------------------------------------------


def dumps(
    values: Mapping[str, Any],
    measured: Measured | None = None,
    comments: Sequence[str] = (),
    sources: Mapping[str, str] | None = None,
) -> str:
    """A workload file: `comments` as `#` lines, `[workload]` with `values`, then `[measured]`
    and `[sources]` (where each number came from).

    The values are validated as a Workload first, so the file written is one `gen` accepts.
    """
    build_workload(values)
    lines = [f"# {_comment(line)}" for line in comments]
    if lines:
        lines.append("")
    lines.append("[workload]")
    lines.extend(f"{name} = {_toml_value(value)}" for name, value in values.items())
    if measured is not None:
        lines += [
            "",
            "# The spread behind the estimate (read by `servertune advise`; ignored by `gen`).",
            "[measured]",
        ]
        lines.extend(_table_lines(measured, ("interface", "gil_enabled", "method", "path")))
        for one in measured.paths:
            lines += ["", "[[measured.paths]]"]
            lines.extend(_table_lines(one, ("path", "weight")))
    if sources:
        lines += [
            "",
            "# Where each number came from (printed by `servertune explain`).",
            "[sources]",
        ]
        lines.extend(f"{name} = {_toml_value(_comment(text))}" for name, text in sources.items())
    return "\n".join(lines) + "\n"


def _table_lines(table: _Figures, first: Sequence[str]) -> list[str]:
    lines = []
    for name in (*first, "requests", "raw_cpu_fraction"):
        value = getattr(table, name)
        if value is not None:
            lines.append(f"{name} = {_toml_value(_rounded(name, value))}")
    for name in SPREADS:
        spread: Spread | None = getattr(table, name)
        if spread is None:
            continue
        cells = ", ".join(
            f"{key} = {_rounded(name, value)!r}"
            for key, value in spread.model_dump().items()
            if value is not None
        )
        lines.append(f"{name} = {{ {cells} }}")
    return lines


def _rounded(name: str, value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value) and name != "weight":
        return round(value, _DIGITS.get(name, _DEFAULT_DIGITS))
    return value


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        # JSON string escaping (ASCII only) is valid TOML basic-string escaping.
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value)
    raise TypeError(f"cannot write {type(value).__name__} to a workload file")


def _comment(text: str) -> str:
    # A comment ends at a newline: any control character would start a line of TOML.
    return "".join(ch if ch.isprintable() else "?" for ch in text)
