"""What a launch script's own variables hold where the files say, so a test on them is
decided: a name set once, outside every branch and loop, from the container's environment
with the script's default (`workers=${GUNICORN_WORKERS:-1}`) or to a word, and the numeric
tests (`[ $workers -eq 1 ]`) that compare such a value with a number; and the value of a
list of tests joined by `&&`, `||` and `!` (`condition_value`), in three-valued logic.

The script's default is the value the files give when no file read sets the variable: the
same reading as a `--workers ${GUNICORN_WORKERS:-1}` on a server's command line."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Collection, Mapping, Sequence

__all__ = ["condition_value", "numeric_test", "own_values", "test_operands"]

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


#: A test's value: True, False, or None when the files do not decide it.
Tested = bool | None


def condition_value(words: Sequence[str], primitive: Callable[[list[str]], Tested]) -> Tested:
    """The value of an `if`/`elif` condition: test commands (`[ ]`, `[[ ]]`, `test`) joined
    by `&&` and `||` (equal precedence, left to right, as the shell runs them), each maybe
    after `!`; inside `[[ ]]` also `&&`, `||` and `!` (`&&` first), inside `[ ]` `-a` and
    `-o`. `primitive` gives the value of one bracketed comparison. In Kleene's three-valued
    logic: `false && x` is false and `true || x` true whatever x is; otherwise undecided
    (None) when an operand is. Any other command, `;`, a pipe or a group is undecided."""
    if any(w in (";", "|", "&", "|&", "(", ")") for w in words):
        return None
    value: Tested = None
    joining = ""
    for index, command in enumerate(_split_at(list(words), ("&&", "||"), outside=True)):
        if index % 2:
            joining = command[0]
            continue
        found = _negated(command, lambda c: _one_test(c, primitive))
        value = found if not index else _joined(joining, value, found)
    return value


def _split_at(words: list[str], operators: Sequence[str], *, outside: bool) -> list[list[str]]:
    """`words` cut at each operator (kept as a one-word part between the operands); with
    `outside`, not at those inside `[[ ]]`."""
    parts: list[list[str]] = [[]]
    inside = False
    for word in words:
        if outside and word in ("[[", "]]"):
            inside = word == "[["
        if word in operators and not inside and parts[-1]:
            parts += [[word], []]
        else:
            parts[-1].append(word)
    return parts


def _joined(operator_: str, left: Tested, right: Tested) -> Tested:
    """Kleene's `and` (`&&`, `-a`) and `or` (`||`, `-o`)."""
    if operator_ in ("&&", "-a"):
        if left is False or right is False:
            return False
        return True if left and right else None
    if left is True or right is True:
        return True
    return False if left is False and right is False else None


def _negated(words: list[str], value: Callable[[list[str]], Tested]) -> Tested:
    """The value of `words` after its leading `!`s (each one flips a decided value)."""
    flips = 0
    while words[:1] == ["!"]:
        words, flips = words[1:], flips + 1
    found = value(words) if words else None
    return found if found is None or not flips % 2 else not found


def _one_test(words: list[str], primitive: Callable[[list[str]], Tested]) -> Tested:
    """One test command: its operands joined inside the brackets (`[[ a && b || c ]]`, `[ a
    -a b ]`), each comparison's value from `primitive`; None when it is no test command."""
    found = test_operands(words)
    if found is None or not found[1] or any(w in ("(", ")", "\\(", "\\)") for w in found[1]):
        return None
    closing, inner = found
    ors, ands = ("||", "&&") if closing == "]]" else ("-o", "-a")
    opening = "[[" if closing == "]]" else "["

    def comparison(operands: list[str]) -> Tested:
        return primitive([opening, *operands, closing])

    def conjunction(operands: list[str]) -> Tested:
        value: Tested = True
        for part in _split_at(operands, (ands,), outside=False)[::2]:
            value = _joined("&&", value, _negated(part, comparison))
        return value

    value: Tested = False
    for part in _split_at(inner, (ors,), outside=False)[::2]:
        value = _joined("||", value, conjunction(part))
    return value
