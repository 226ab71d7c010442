"""A script's own folder in the container: where `cd "$(dirname "$0")"` moves it.

A script run as an image's ENTRYPOINT or CMD (`/app/docker/entrypoint.sh`) is `$0`, and
`dirname "$0"` its folder there (/app/docker), whatever the image's WORKDIR: a relative path
after the `cd` (`exec ./run_web.sh`) is a file of that folder. The folder is where the image of
the run that holds the script copied it (`images.images_of_run` sets `HELD_AT`); not known
when no image of the run holds the script (read on its own, its relative paths are looked up
beside it already). Else it is the folder of the path the script was run by (`$0` as its caller
wrote it, `INVOKED_AS`): `exec /app/setup/start.sh` runs it from /app/setup, and a Cloud Foundry
`command: ./ckan/setup/start.sh` from ckan/setup below where its caller runs. A script's variable
set to its own folder (`DIR="$(dirname "${BASH_SOURCE[0]}")"`, `$(cd "$(dirname "$0")" && pwd)`)
is that folder too.
"""

from __future__ import annotations

import contextvars
import posixpath
import re
from collections.abc import Callable
from pathlib import Path

__all__ = ["HELD_AT", "INVOKED_AS", "own_folder"]

#: Where the first image of the run that holds a repository file keeps it (None: no image
#: does), set by `images.images_of_run`.
HELD_AT: contextvars.ContextVar[Callable[[Path], str | None] | None] = contextvars.ContextVar(
    "servertune_check_script_held_at", default=None
)

#: The script being read and the word its caller ran it by (`$0`), set by `scripts` as it
#: follows a script another file runs; None for a script given on its own.
INVOKED_AS: contextvars.ContextVar[tuple[Path, str] | None] = contextvars.ContextVar(
    "servertune_check_script_invoked_as", default=None
)

#: `$(dirname "$0")`, `$(dirname $0)`, `` `dirname $0` ``, `${0%/*}` (the quotes removed
#: first), also through `realpath` / `readlink -f`, which name the same folder for a file
#: copied into the image (no link); bash's `${BASH_SOURCE[0]}` names the script as `$0` does
#: when it is run, not sourced; `$(cd "$(dirname "$0")" && pwd)` is the same folder, absolute.
_SELF = r"(?:\$0|\$\{0\}|\$\{BASH_SOURCE(?:\[0\])?\}|\$BASH_SOURCE)"
_DIRNAME = rf"""\$\(\s*dirname\s+(?:{_SELF}|\$\(\s*(?:realpath|readlink\s+-f)\s+{_SELF}\s*\))\s*\)
      | `\s*dirname\s+{_SELF}\s*`
      | \$\{{0%/\*\}}"""
_OWN_FOLDER = re.compile(
    rf"""\A(?:
        {_DIRNAME}
      | \$\(\s*cd\s+(?:{_DIRNAME})\s*(?:&&|;)\s*pwd(?:\s+-P)?\s*\)
    )\Z""",
    re.VERBOSE,
)


def own_folder(script: Path, word: str, *, relative: bool = False) -> str | None:
    """The container folder `word` (a `cd` argument, a variable's value) names when it is the
    script's own folder (`$(dirname "$0")`), None when it is not that or the script's place is
    not known; a folder relative to where its caller runs (`./ckan/setup/start.sh`: ckan/setup)
    only when `relative`."""
    if not _OWN_FOLDER.match(word.replace('"', "")):
        return None
    held = HELD_AT.get()
    where = held(script) if held is not None else None
    if where is not None and where.startswith("/"):
        return posixpath.dirname(posixpath.normpath(where))
    invoked = INVOKED_AS.get()
    if invoked is None or invoked[0] != script or "/" not in invoked[1]:
        return None  # given on its own, or found on the PATH: its folder is not known
    if any(c in invoked[1] for c in "$`*?") or not (relative or invoked[1].startswith("/")):
        return None
    return posixpath.dirname(posixpath.normpath(invoked[1])) or "."
