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

__all__ = ["HELD_AT", "INVOKED_AS", "computed_folder", "own_folder", "real_path"]

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
      | \$\(\s*cd\s+(?:{_DIRNAME})\s*(?:\|\|\s*exit(?:\s+\d+)?\s*)?(?:&&|;)\s*pwd(?:\s+-P)?\s*\)
    )(?P<below>/[^$`]*)?\Z""",
    re.VERBOSE,
)


def own_folder(script: Path, word: str, *, relative: bool = False) -> str | None:
    """The container folder `word` (a `cd` argument, a variable's value) names when it is the
    script's own folder (`$(dirname "$0")`), None when it is not that or the script's place is
    not known; a folder relative to where its caller runs (`./ckan/setup/start.sh`: ckan/setup)
    only when `relative`."""
    matched = _OWN_FOLDER.match(word.replace('"', ""))
    if matched is None:
        return None
    folder = _folder(script, relative=relative)
    if folder is None or not matched["below"]:
        return folder
    # `cd "$(dirname "$0")/.."`: the folder above the script's (a repository's root).
    return posixpath.normpath(posixpath.join(folder, matched["below"].lstrip("/")))


#: `$(realpath -m "PATH")`, `$(readlink -f PATH)` of a path written out (its variables done).
_REALPATH = re.compile(
    r"""\A\$\(\s*(?:realpath(?:\s+-[emsLPq]+)*|readlink\s+-[fem]+)\s+("?)([^"$`()\s]+)\1\s*\)\Z"""
)


def real_path(value: str) -> str:
    """`value` (a variable's, its own variables expanded) with `$(realpath PATH)` done: the
    path itself, `..` and `.` resolved (`ROOT_DIR=$(realpath "${script_dir}/..")`; no link is
    known here, so none is followed); `value` as it is otherwise."""
    matched = _REALPATH.match(value)
    return value if matched is None else posixpath.normpath(matched[2])


#: The innermost `$(dirname WORD)`, `$(realpath WORD)`, `$(readlink -f WORD)`: WORD holds no
#: command substitution (quotes removed first).
_INNER = re.compile(
    r"\$\(\s*(dirname|realpath(?:\s+-[emsLPq]+)*|readlink\s+-[fem]+)\s+([^$`()\s]*(?:\$\{?\w+\}?[^$`()\s]*)*)\s*\)"
)


def computed_folder(value: str, expand: Callable[[str], str | None]) -> str | None:
    """`value` with its `$(dirname WORD)` / `$(realpath WORD)` / `$(readlink -f WORD)` done,
    innermost first, each WORD's variables expanded by `expand` (`ROOT_DIR=$(dirname
    "$(dirname "$BASE_DIR")")` with BASE_DIR the script's folder: two folders above it); None
    when `value` holds none, or a WORD or what is left is not a path known here. The dirname of
    a folder written only with `.` and `..` (the script's own folder read from its checkout,
    `.`) is the folder above it, as the absolute folder it stands for has one."""
    text = value.replace('"', "")
    if _INNER.search(text) is None:
        return None
    while (found := _INNER.search(text)) is not None:
        word = expand(found[2]) if "$" in found[2] else found[2]
        if not word or any(c in word for c in "$`*?"):
            return None
        path = posixpath.normpath(word)
        if found[1] == "dirname":
            upward = all(part in (".", "..") for part in path.split("/"))
            path = (
                posixpath.normpath(posixpath.join(path, ".."))
                if upward
                else posixpath.dirname(path) or "."
            )
        text = text[: found.start()] + path + text[found.end() :]
    rest = expand(text) if "$" in text else text
    return None if rest is None or any(c in rest for c in "$`") else rest


def _folder(script: Path, *, relative: bool) -> str | None:
    """`own_folder` of the script itself."""
    held = HELD_AT.get()
    where = held(script) if held is not None else None
    if where is not None and where.startswith("/"):
        return posixpath.dirname(posixpath.normpath(where))
    invoked = INVOKED_AS.get()
    if invoked is None and relative:
        # Given on its own (run from the repository's checkout): its relative paths are looked
        # up beside it, so its own folder is `.` there (`ROOT=$(dirname "$0")/..`).
        return "."
    if invoked is None or invoked[0] != script or "/" not in invoked[1]:
        return None  # given on its own, or found on the PATH: its folder is not known
    if any(c in invoked[1] for c in "$`*?") or not (relative or invoked[1].startswith("/")):
        return None
    return posixpath.dirname(posixpath.normpath(invoked[1])) or "."
