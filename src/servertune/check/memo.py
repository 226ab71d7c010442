"""What a run of `check` works out once: the answers it would otherwise work out again for
every file of a walk.

A folder walk reads each file once, but linking asks the same questions many times: every
command word of every script is looked for in every image that copies the script, and a
compose file's YAML is parsed by each reader that looks at it. Those answers depend only on
the files (which do not change while check runs) and on what the run confines reading to, so
each is kept for the run in progress (`one_run`) and nowhere else: a library caller's later
run, with other files, starts afresh.

An answer worked out while coverage notes were recorded (a COPY that names a file outside the
tree) records the same notes again each time it is recalled, in the same order, so the output
does not depend on which file asked first.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar, cast

from servertune.check.model import Note, collect_notes, note

__all__ = ["Table", "in_run", "one_run", "recall", "run_table"]

T = TypeVar("T")

#: Answers by their question, each with the notes working it out recorded.
Table = dict[Hashable, tuple[object, tuple[Note, ...]]]

#: The run's tables, by name; None outside a run (nothing is kept).
_TABLES: contextvars.ContextVar[dict[str, Table] | None] = contextvars.ContextVar(
    "servertune_check_memo", default=None
)


@contextmanager
def one_run() -> Iterator[None]:
    """Keep what the block works out (`run_table`) until it ends."""
    token = _TABLES.set({})
    try:
        yield
    finally:
        _TABLES.reset(token)


def in_run() -> bool:
    """Whether a run is in progress: answers are kept only then."""
    return _TABLES.get() is not None


def run_table(name: str) -> Table | None:
    """The run's table `name` (made on first use), None outside a run."""
    tables = _TABLES.get()
    return None if tables is None else tables.setdefault(name, {})


def recall(table: Table | None, key: Hashable, compute: Callable[[], T]) -> T:
    """`compute()`, worked out once per `key` in `table` (every time when `table` is None),
    with the notes it records recorded again at each recall. An error is not kept: it is
    raised again by working it out again."""
    if table is None:
        return compute()
    kept = table.get(key)
    if kept is not None:
        _record(kept[1])
        return cast(T, kept[0])
    recorded: list[Note] = []
    try:
        with collect_notes() as recorded:
            value = compute()
    finally:
        _record(recorded)
    table[key] = (value, tuple(recorded))
    return value


def _record(notes: Sequence[Note]) -> None:
    """Record `notes` again in the run's notes, in their order."""
    for one in notes:
        note(one.kind, one.at, one.message, one.fix)
