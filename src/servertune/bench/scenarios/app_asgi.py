"""Where `bench app`'s ASGI names were imported from before `bench app` became a package: they
live in `servertune.bench.scenarios.app.asgi_layouts`, `.user_commands`, `.levels`, `.load`,
`.verdicts` and `.notes` now, and stay importable from here."""

from __future__ import annotations

from servertune.bench.scenarios.app.asgi_layouts import (
    FASTAPI_DOCS_WORKERS,
    LAYOUTS,
    AsgiLayout,
    Copied,
    docs_workers,
    layouts_for,
)
from servertune.bench.scenarios.app.levels import (
    CLIENT_TIMEOUT_S,
    MIN_UNLOADED_RPS,
    OVERLOAD_FACTOR,
    QUICK_CLIENT_TIMEOUT_S,
    UNLOADED_FACTOR,
    open_loop_rates,
)
from servertune.bench.scenarios.app.load import GOOD_WITHIN_MS, open_loop_row
from servertune.bench.scenarios.app.notes import overload_notes, overload_repeats_note
from servertune.bench.scenarios.app.user_commands import (
    UserCommand,
    is_command_file,
    read_user_command,
)
from servertune.bench.scenarios.app.verdicts import MAX_OVERLOAD_P99_RATIO

__all__ = [
    "CLIENT_TIMEOUT_S",
    "FASTAPI_DOCS_WORKERS",
    "GOOD_WITHIN_MS",
    "LAYOUTS",
    "MAX_OVERLOAD_P99_RATIO",
    "MIN_UNLOADED_RPS",
    "OVERLOAD_FACTOR",
    "QUICK_CLIENT_TIMEOUT_S",
    "UNLOADED_FACTOR",
    "AsgiLayout",
    "Copied",
    "UserCommand",
    "docs_workers",
    "is_command_file",
    "layouts_for",
    "open_loop_rates",
    "open_loop_row",
    "overload_notes",
    "overload_repeats_note",
    "read_user_command",
]
