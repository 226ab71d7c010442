"""Placeholders an installer script fills with sed in the copy it installs: `cp
"${dir}/platform.service" /etc/systemd/system/platform.service` then `sed -i
"s|#BASE_DIR#|${root_dir}|g" /etc/systemd/system/platform.service`, and `cp "${dir}/nginx.conf"
/etc/nginx/sites-available/platform` then `sed -i "s#NGINX_DIR#${root_dir}#g"` on that copy
(CCExtractor/sample-platform's install.sh). The repository file copied holds the placeholder;
the file the server reads holds the replacement. Two placeholders one installer maps to the same
value, or to the same shell variable (`$root_dir` and `${root_dir}` alike), are one text: a
unit's `unix:#BASE_DIR#/x.sock` and a front's `unix:NGINX_DIR/x.sock` are one socket.

Only a literal substitution counts (`nginx_seds`): `sed -i` on the very path a `cp` earlier in
the script wrote, a pattern of letters, digits and `_@{}%#-` (an escaped `\\$` is a literal
dollar), a replacement with no `&` or backslash. The copy's source is the repository file its
path's literal tail names, looked for from the script's folder up to the tree's root.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from servertune.check.model import Location
from servertune.check.nginx_seds import Fill
from servertune.check.shell_lists import logical_lines

__all__ = ["installed_fills"]

#: `s|PATTERN|REPLACEMENT|flags` with any one delimiter; the pattern may escape a dollar.
_SUBSTITUTE = re.compile(
    r"\As(?P<d>[^\w\s\\$])(?P<pat>(?:\\\$|[^\\])*?)(?P=d)(?P<rep>[^\\]*?)(?P=d)[gI0-9]*\Z"
)
#: A pattern sed reads as the literal text it is (after `\$` is read as `$`).
_LITERAL = re.compile(r"\A\$?[A-Za-z0-9_@{}%#-]+\Z")
#: A shell variable written bare or braced: the same value either way.
_VARIABLE = re.compile(r"\$(?:\{(?P<braced>\w+)\}|(?P<bare>\w+))")
#: A leading variable of a path (`${dir}/`, `$TRADITIONAL_DIR/`): the folder it names is not
#: known, the tail after it is.
_TAIL = re.compile(r"\A.*\$(?:\{\w+\}|\w+)/")


def installed_fills(
    scripts: Sequence[tuple[Path, str]], root: Path | None
) -> tuple[tuple[Path, tuple[Fill, ...]], ...]:
    """Each repository file an installer among `scripts` copies and fills with sed, with its
    fills; a placeholder filled with two values is left out (not known)."""
    found: dict[str, dict[str, Fill]] = {}
    unknown: set[tuple[str, str]] = set()
    for script, text in scripts:
        for source, fill in _fills(script, text, root):
            key = os.path.normpath(source.absolute())
            known = found.setdefault(key, {}).setdefault(fill.placeholder, fill)
            if known.value != fill.value:
                unknown.add((key, fill.placeholder))
    return tuple(
        (Path(key), tuple(f for p, f in fills.items() if (key, p) not in unknown))
        for key, fills in found.items()
    )


def _fills(script: Path, text: str, root: Path | None) -> list[tuple[Path, Fill]]:
    """(the repository file, a fill) for each sed of `script` on the copy a `cp` wrote."""
    copied: dict[str, Path | None] = {}
    fills: list[tuple[Path, Fill]] = []
    for number, line in logical_lines(text):
        if "cp" not in line and "sed" not in line:
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        operands = [w for w in words[1:] if not w.startswith("-")]
        if words[:1] == ["cp"] and len(operands) == 2:
            copied[operands[1]] = _source(script, operands[0], root)
            continue
        if words[:1] != ["sed"] or "-i" not in words:
            continue
        target = next((w for w in reversed(operands) if w in copied), None)
        source = copied.get(target) if target is not None else None
        if source is None:
            continue
        at = Location(script, number)
        for word in operands:
            match = _SUBSTITUTE.match(word)
            pattern = match["pat"].replace("\\$", "$") if match else ""
            if match and _LITERAL.match(pattern) and "&" not in match["rep"]:
                value = _same_variable(match["rep"], text)
                fills.append((source, Fill(pattern, value, at)))
    return fills


def _same_variable(value: str, text: str) -> str:
    """`value` with each shell variable written braced (`$root_dir` is `${root_dir}`), or as
    the one command substitution the script assigns it (`PORT="$(_get_env_var "PORT")"`),
    which check reads as one word wherever the script uses the variable (`scripts`)."""

    def one(match: re.Match[str]) -> str:
        name = match["braced"] or match["bare"]
        return _substitution_of(name, text) or "${" + name + "}"

    return _VARIABLE.sub(one, value)


def _substitution_of(name: str, text: str) -> str | None:
    """The command substitution `$(...)` that is the whole value of the script's one
    assignment of `name`; None when it assigns it otherwise, or more than once."""
    starts = [m.end() for m in re.finditer(rf"(?m)^\s*(?:export\s+|local\s+)?{name}=", text)]
    if len(starts) != 1:
        return None
    at = starts[0] + (text[starts[0]] == '"' if starts[0] < len(text) else 0)
    if not text.startswith("$(", at) or text.startswith("$((", at):
        return None
    depth, end = 0, at + 1
    while end < len(text):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0:
            break
        end += 1
    return text[at : end + 1] if depth == 0 else None


def _source(script: Path, written: str, root: Path | None) -> Path | None:
    """The repository file `written` (a `cp` source) names: its literal tail after any
    leading variable, from the script's folder up to `root`; None when none is here."""
    tail = _TAIL.sub("", written)
    if not tail or "$" in tail or tail.startswith("/"):
        return None
    folder = script.parent
    while True:
        candidate = folder / tail
        if candidate.is_file():
            return candidate
        if root is None or folder == root or folder == folder.parent:
            return None
        if not os.path.normpath(folder.absolute()).startswith(os.path.normpath(root.absolute())):
            return None
        folder = folder.parent
