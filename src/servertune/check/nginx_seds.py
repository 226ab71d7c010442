"""Placeholders a front's start script fills with sed before nginx reads the file:
`server __BACKEND__:6666;` in the config an image copies to /etc/nginx/nginx.conf, and
`sed -i "s|__BACKEND__|${BACKEND_HOST}|" /etc/nginx/nginx.conf` in the script its CMD (or
ENTRYPOINT) runs (szurubooru/szurubooru's client image). The placeholder is read as the
replacement the script writes, so a `${BACKEND_HOST}` in it renders with the container's
environment like an envsubst template's (`chain._render`); a replacement holding a value not
known there stays unknown, never guessed.

Only a literal substitution counts: `sed -i` (in place) on the very container path where the
image holds the front, a pattern of letters, digits and `_@{}%-` (no regular expression), and
a replacement with no `&` or backslash (sed's own references).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from servertune.check.dockerfile import Image
from servertune.check.model import CheckInputError, Location
from servertune.check.shell_lists import logical_lines

__all__ = ["Fill", "sed_fills"]

#: `s|PATTERN|REPLACEMENT|flags` with any one delimiter.
_SUBSTITUTE = re.compile(
    r"\As(?P<d>[^\w\s\\])(?P<pat>[^\\]*?)(?P=d)(?P<rep>[^\\]*?)(?P=d)[gI0-9]*\Z"
)
#: A pattern sed reads as the literal text it is.
_LITERAL = re.compile(r"\A[A-Za-z0-9_@{}%-]+\Z")


@dataclass(frozen=True)
class Fill:
    """The start script's line `at` replaces `placeholder` with `value` (as written there)."""

    placeholder: str
    value: str
    at: Location


def _start_script(image: Image) -> tuple[str, Location] | None:
    """The script the image's ENTRYPOINT (else CMD) runs, with its text; None when not here."""
    words = image.entrypoint or image.cmd
    shell = image.entrypoint_shell if image.entrypoint else image.cmd_shell
    if not words or shell:
        return None
    first = words[0].text
    if first in ("sh", "bash", "/bin/sh", "/bin/bash") and len(words) > 1:
        first = words[1].text
    try:
        script = image.find(first)
    except (OSError, CheckInputError):
        return None
    return None if script is None else (script.text, Location(script.file, script.first_line))


def sed_fills(image: Image, held: str) -> list[Fill]:
    """The literal substitutions `image`'s start script makes in place in the file it holds
    at the container path `held`."""
    found = _start_script(image)
    if found is None:
        return []
    text, where = found
    fills: list[Fill] = []
    for number, line in logical_lines(text):
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        if len(words) < 3 or words[0] != "sed" or "-i" not in words or held not in words:
            continue
        at = Location(where.file, where.line + number - 1)
        for word in words[1:]:
            match = _SUBSTITUTE.match(word)
            if match and _LITERAL.match(match["pat"]) and "&" not in match["rep"]:
                fills.append(Fill(match["pat"], match["rep"], at))
    return fills
