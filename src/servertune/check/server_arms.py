"""Which value of a variable no file sets picks a script's other server branch.

A launch script may start one of several server programs by a variable the deployment sets
(ynput/ayon-backend's start.sh: `SERVER_TYPE=${AYON_SERVER_TYPE:-gunicorn}`, then `if [
$SERVER_TYPE = "gunicorn" ]; then exec gunicorn ...; elif [ $SERVER_TYPE = "granian" ]; then
exec granian ...`). Where no file read sets it, check reads the branch that runs when it is
unset as the launch it is; each other branch that starts another server program is a launch
the user picks by setting the variable, shown with that condition (`AYON_SERVER_TYPE=granian`).
This module reads the condition from a branch's head as written; it is decided only for a test
that compares the variable with a literal word (`[ "$V" = word ]`, `[[ $V == word ]]`) or a
`case "$V" in` arm of literal patterns, never for `-z`/`-n`, globs or an `else`.
"""

from __future__ import annotations

import re
from collections.abc import Collection

#: `if [ "$NAME" = "word" ]` / `elif [[ ${NAME} == word ]]` / `if test $NAME = word`.
_EQUALITY = re.compile(
    r"\A(?:el)?if\s+(?:\[\[?|test)\s+\"?\$\{?(?P<name>[A-Za-z_]\w*)\}?\"?\s+==?\s+"
    r"(?P<q>[\"']?)(?P<word>[\w.:/@+-]+)(?P=q)\s*(?:\]\]?)?\s*;?\Z"
)
#: The word of `case "$NAME" in` / `case ${NAME} in`.
_CASE_WORD = re.compile(r"\A\"?\$\{?(?P<name>[A-Za-z_]\w*)\}?\"?\Z")
#: One literal pattern of a `case` arm (no glob).
_LITERAL = re.compile(r"\A[\w.:/@+-]+\Z")


def branch_value(head: str, case_word: str | None) -> tuple[str, str] | None:
    """(the variable, the value) that takes the branch whose head is `head`: an `if`/`elif`
    test as written (`elif [ $SERVER_TYPE = "granian" ]`), or a `case` arm's patterns
    (`granian)`, `"granian"|"gr")`) with `case_word` the word its `case` compares; None for
    any other test."""
    if case_word is None:
        found = _EQUALITY.match(head.strip())
        return (found["name"], found["word"]) if found else None
    word = _CASE_WORD.match(case_word)
    patterns = [p.strip("\"'") for p in head.lstrip("(").removesuffix(")").split("|")]
    if word is None or not all(_LITERAL.match(p) for p in patterns):
        return None
    return word["name"], "|".join(patterns)


def condition(name: str, value: str, text: str, unset: Collection[str]) -> str | None:
    """`NAME=value` for a variable in `unset` (no file read sets it), named as the deployment
    sets it: a name the script sets once from another's value with a default
    (`SERVER_TYPE=${AYON_SERVER_TYPE:-gunicorn}`) by that other name; None when `name` is
    set somewhere."""
    if name not in unset:
        return None
    assigned = re.findall(
        rf"^[ \t]*(?:export[ \t]+)?{re.escape(name)}=(.*)$", text, flags=re.MULTILINE
    )
    if not assigned:
        return f"{name}={value}"
    source = re.fullmatch(r"[\"']?\$\{([A-Za-z_]\w*):?-[^}$`]*\}[\"']?\s*", assigned[0])
    if len(assigned) != 1 or source is None or source[1] not in unset:
        return None
    return f"{source[1]}={value}"
