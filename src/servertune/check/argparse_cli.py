"""A server's command line read as its argparse parser reads it, each value with the word it was
written in: Hypercorn's and Daphne's CLIs are argparse parsers built inside their `main()`,
which starts the server, so (unlike uvicorn's and granian's click commands) they cannot be
asked to parse alone; their documented option tables are declared in their own modules
(`check/hypercorn.py`, `check/daphne.py`) and read here with argparse's rules: `--flag value`,
`--flag=value`, `-fVALUE`, a long flag shortened to a prefix only it has, `--` ending the
options, and an option the server does not have refused as the server refuses it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from servertune.check.model import CheckInputError, Location

__all__ = ["Given", "Option", "last", "parse_options"]


@dataclass(frozen=True)
class Option:
    """One argparse option: where argparse stores it, its flags, how many words it takes
    (0: `store_true`, 1: one value, -1: argparse's `nargs="*"`), and the value's type."""

    dest: str
    flags: tuple[str, ...]
    takes: int = 1
    convert: Callable[[str], Any] = str


@dataclass(frozen=True)
class Given:
    """A value the command line gives an option, with where it was written and how."""

    value: Any
    at: Location
    #: The option as written, with its value (`--keep-alive 65`), for a message.
    written: str


def _looks_like_option(text: str) -> bool:
    """argparse's test: a word starting with `-` is an option, unless it is a lone `-` or a
    negative number (no option of these servers looks like one)."""
    if not text.startswith("-") or text == "-":
        return False
    try:
        float(text)
    except ValueError:
        return True
    return False


def _option_of(flag: str, table: Mapping[str, Option]) -> Option | None:
    """The option a flag names: exactly, or (a long flag) by a prefix only one flag has."""
    if flag in table:
        return table[flag]
    if not flag.startswith("--"):
        return None
    matches = {table[f] for f in table if f.startswith(flag) and f.startswith("--")}
    return matches.pop() if len(matches) == 1 else None


def parse_options(
    server: str, words: Sequence[tuple[str, Location]], options: Sequence[Option]
) -> tuple[dict[str, list[Given]], list[tuple[str, Location]]]:
    """The values each option's words give (in order; a single-value option keeps its last,
    as argparse does) and the positional words; an option the server does not have, a flag
    missing its value or a value of the wrong type is refused as the server refuses it."""
    table = {flag: option for option in options for flag in option.flags}
    given: dict[str, list[Given]] = {}
    positional: list[tuple[str, Location]] = []
    index = 0
    while index < len(words):
        text, at = words[index]
        index += 1
        if text == "--":
            positional.extend(words[index:])
            break
        if not _looks_like_option(text):
            positional.append((text, at))
            continue
        flag, sep, attached = text.partition("=") if text.startswith("--") else (text, "", "")
        option = _option_of(flag, table)
        if option is None and not text.startswith("--") and len(text) > 2:
            option = table.get(text[:2])  # `-w4`, `-b0.0.0.0:8000`
            flag, sep, attached = text[:2], "=", text[2:]
        if option is None:
            raise CheckInputError(
                f"{at}: {server} refuses its command line: unrecognized arguments: {text}"
            )
        values: list[str] = []
        if sep:
            values = [attached]
        elif option.takes == 1:
            if index >= len(words) or _looks_like_option(words[index][0]):
                raise CheckInputError(
                    f"{at}: {server} refuses its command line: argument {flag}: expected one "
                    "argument"
                )
            values, index = [words[index][0]], index + 1
        elif option.takes < 0:
            while index < len(words) and not _looks_like_option(words[index][0]):
                values.append(words[index][0])
                index += 1
        given.setdefault(option.dest, []).append(_given(server, flag, option, values, at))
    return given, positional


def _given(server: str, flag: str, option: Option, values: list[str], at: Location) -> Given:
    """One option's value as its type reads it (True for a flag that takes none)."""
    if option.takes == 0:
        return Given(True, at, flag)
    try:
        converted = [option.convert(v) for v in values]
    except ValueError:
        raise CheckInputError(
            f"{at}: {server} refuses its command line: argument {flag}: invalid "
            f"{getattr(option.convert, '__name__', 'value')} value: {' '.join(values)!r}"
        ) from None
    value = converted[0] if option.takes == 1 else converted
    return Given(value, at, f"{flag} {' '.join(values)}".strip())


def last(given: Mapping[str, list[Given]], dest: str) -> Given | None:
    """The value argparse keeps for a single-value option: the last one given."""
    found = given.get(dest)
    return found[-1] if found else None
