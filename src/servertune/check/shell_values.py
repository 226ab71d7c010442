"""What a launch script's own variables hold where the files say, so a test on them is
decided: a name set once, outside every branch and loop, from the container's environment
with the script's default (`workers=${GUNICORN_WORKERS:-1}`) or to a word, and the numeric
tests (`[ $workers -eq 1 ]`) that compare such a value with a number.

The script's default is the value the files give when no file read sets the variable: the
same reading as a `--workers ${GUNICORN_WORKERS:-1}` on a server's command line."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Collection, Mapping, Sequence

__all__ = ["numeric_test", "own_values", "test_operands"]

#: `NAME=${ENV:-word}` / `${ENV-word}` / `${ENV:=word}`: ENV's value, else the word (`:`
#: also when ENV is empty); the word holds no expansion of its own.
_DEFAULTED = re.compile(r"\A\$\{(?P<env>[A-Za-z_]\w*)(?P<colon>:?)[-=](?P<word>[^}$`]*)\}\Z")
_ASSIGNMENT = re.compile(r"\A(?P<name>[A-Za-z_]\w*)=(?P<value>.*)\Z", re.S)
#: Words that open and close a block whose lines may not run (or run more than once).
_OPENS = frozenset({"if", "case", "for", "while", "until", "select"})
_CLOSES = frozenset({"fi", "esac", "done"})
_DECLARING = frozenset({"export", "readonly", "local", "declare", "typeset"})


def own_values(
    lines: Sequence[tuple[int, Sequence[str]]],
    physical: Sequence[str],
    env: Mapping[str, str],
    once: Collection[str],
) -> dict[str, str]:
    """The script's variables whose value is known where it runs in `env` (the image's ENV
    and the service's environment): each of `once` (names the script and what it sources
    assign a single time) set at the top level (`lines`: first physical line and words of
    each logical line) to a word, or to `${ENV:-word}` with ENV from `env` or, unset there,
    the word; and not read before that line (there it still holds the environment's value)."""
    values: dict[str, str] = {}
    depth = 0
    for first, words in lines:
        head = words[0] if words else ""
        if head in _OPENS:
            depth += 1
        elif head in _CLOSES:
            depth = max(depth - 1, 0)
        if depth or not words:
            continue
        if head in _DECLARING:
            words = [w for w in words[1:] if not w.startswith("-")]
        found = _ASSIGNMENT.match(words[0]) if len(words) == 1 else None
        if found is None or found["name"] not in once:
            continue
        value = _value(found["value"], env)
        name = found["name"]
        used = re.compile(rf"\$\{{?{name}\b")
        if value is not None and not any(used.search(p) for p in physical[: first - 1]):
            values[name] = value
    return values


def _value(text: str, env: Mapping[str, str]) -> str | None:
    """What an assignment's value is in `env`: a word as written, `${ENV:-word}` by ENV's
    value or the word; None for any other expansion (a command's output, two variables)."""
    found = _DEFAULTED.match(text)
    if found is None:
        return None if any(c in text for c in "$`") else text
    value = env.get(found["env"])
    if value is None or (found["colon"] and not value):
        return found["word"]
    return value


_NUMERIC: dict[str, Callable[[int, int], bool]] = {
    "-eq": operator.eq,
    "-ne": operator.ne,
    "-lt": operator.lt,
    "-le": operator.le,
    "-gt": operator.gt,
    "-ge": operator.ge,
}


def numeric_test(words: Sequence[str], known: Mapping[str, str]) -> bool | None:
    """`[ $workers -eq 1 ]` (also `[[ ]]`, `test`, `-ne -lt -le -gt -ge`) with the words of
    `known` at their values: its result when both sides are integers, None otherwise."""
    found = test_operands(words)
    if found is None or len(found[1]) != 3 or found[1][1] not in _NUMERIC:
        return None
    left, op, right = found[1]
    left, right = known.get(left, left), known.get(right, right)
    if not (re.fullmatch(r"-?\d+", left) and re.fullmatch(r"-?\d+", right)):
        return None
    return _NUMERIC[op](int(left), int(right))


def test_operands(words: Sequence[str]) -> tuple[str, list[str]] | None:
    """A test command's closing bracket (`]`, or `]]` for bash's `[[`) and the words between
    its brackets (`test a = b` is `[ a = b ]`); None when the words are not a test."""
    if words[:1] == ["test"]:
        words = ["[", *words[1:], "]"]
    closing = {"[": "]", "[[": "]]"}.get(words[0] if words else "")
    if closing is None or words[-1] != closing:
        return None
    return closing, list(words[1:-1])
