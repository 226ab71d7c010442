"""A script's own folder in the container: where `cd "$(dirname "$0")"` moves it.

A script run as an image's ENTRYPOINT or CMD (`/app/docker/entrypoint.sh`) is `$0`, and
`dirname "$0"` its folder there (/app/docker), whatever the image's WORKDIR: a relative path
after the `cd` (`exec ./run_web.sh`) is a file of that folder. The folder is where the image of
the run that holds the script copied it (`images.images_of_run` sets `HELD_AT`); not known
when no image of the run holds the script (read on its own, its relative paths are looked up
beside it already).
"""

from __future__ import annotations

import contextvars
import posixpath
import re
from collections.abc import Callable
from pathlib import Path

__all__ = ["HELD_AT", "own_folder"]

#: Where the first image of the run that holds a repository file keeps it (None: no image
#: does), set by `images.images_of_run`.
HELD_AT: contextvars.ContextVar[Callable[[Path], str | None] | None] = contextvars.ContextVar(
    "servertune_check_script_held_at", default=None
)

#: `$(dirname "$0")`, `$(dirname $0)`, `` `dirname $0` ``, `${0%/*}` (the quotes removed
#: first), also through `realpath` / `readlink -f`, which name the same folder for a file
#: copied into the image (no link).
_OWN_FOLDER = re.compile(
    r"""\A(?:
        \$\(\s*dirname\s+(?P<a>\$0|\$\{0\}|\$\(\s*(?:realpath|readlink\s+-f)\s+(?:\$0|\$\{0\})\s*\))\s*\)
      | `\s*dirname\s+(?:\$0|\$\{0\})\s*`
      | \$\{0%/\*\}
    )\Z""",
    re.VERBOSE,
)


def own_folder(script: Path, word: str) -> str | None:
    """The container folder `word` (a `cd` argument) names when it is the script's own folder
    (`$(dirname "$0")`), None when it is not that or the script's place is not known."""
    if not _OWN_FOLDER.match(word.replace('"', "")):
        return None
    held = HELD_AT.get()
    where = held(script) if held is not None else None
    if where is None or not where.startswith("/"):
        return None
    return posixpath.dirname(posixpath.normpath(where))
