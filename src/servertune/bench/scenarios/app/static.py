"""`--static`: the file nginx is asked for under each prefix, and what that proved."""

from __future__ import annotations

import os
import re
from pathlib import Path

#: Largest file `static_probe` asks nginx for: enough to prove the alias, quick to compare.
STATIC_PROBE_MAX_BYTES = 1 << 20
#: File names the probe requests as they are (no URL escaping needed).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9._-]+")


def static_probe(directory: Path) -> Path | None:
    """The first (by name) plain, readable file of at most STATIC_PROBE_MAX_BYTES directly in
    `directory`, or None."""
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return None
    for entry in entries:
        if (
            _PLAIN_NAME.fullmatch(entry.name)
            and entry.is_file()
            and not entry.is_symlink()
            and entry.stat().st_size <= STATIC_PROBE_MAX_BYTES
            and os.access(entry, os.R_OK)
        ):
            return entry
    return None


def static_note(served: dict[str, tuple[str, int] | None]) -> str:
    """What the --static check proved, in one line."""
    parts = [
        f"GET {got[0]} answered by nginx with the file's {got[1]} bytes"
        if got
        else f"{prefix}: no plain file of <= {STATIC_PROBE_MAX_BYTES >> 20} MiB in its directory to ask for"
        for prefix, got in served.items()
    ]
    return (
        f"--static, checked before every candidate's load: {'; '.join(parts)} (the app servers "
        "never see these prefixes)"
    )
