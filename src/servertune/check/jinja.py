"""Jinja templates rendered where the container starts, read as the file they render to.

A server is often started with a config that only exists once the container runs: the
repository holds `supervisord.conf.jnj` and the entrypoint runs `supervisord -c
/app/conf/supervisord.conf`, which a boot script renders from it. When a command names a
config path that is not among the files while the image holds that name plus a template
suffix (`.jnj`, `.j2`, `.jinja`, `.tpl`), the template is read as the file it renders to.

It is rendered here, never run: a small evaluator of Jinja's statement subset (`if` / `elif`
/ `else` with names, literals, `not`, `==`, `!=`, `and`, `or`, `is defined`; `for` over a
name; `set`; `{{ name }}` and `{{ name | default('x') }}`; whitespace control; comments;
`raw`). A name the files do not give behaves as Jinja's default `Undefined` (false, renders
empty; `a.b` and `a['b']` on it stop the render, as they do in Jinja), and each one used is said in an
`unresolved-variable` note at its line. Anything else (a call, another filter, a macro, an
`include`) leaves the file unread, as before: what it renders to is never guessed.

The rendered text is laid out on the template's lines (each rendered line on the template
line that wrote most of it, blank lines between), so a reader's file:line names the
template's own line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from servertune.check.commands import ConfigFile, FindConfig
from servertune.check.model import Location, collect_notes, note
from servertune.check.source import template_text

__all__ = [
    "MAX_TEMPLATE_CHARS",
    "TEMPLATE_SUFFIXES",
    "NotRendered",
    "Rendered",
    "read_rendered",
    "render",
    "with_templates",
]

#: The suffixes a config is kept under as a Jinja template of itself, rendered at start.
TEMPLATE_SUFFIXES = (".jnj", ".j2", ".jinja", ".tpl")

#: Bounds of what is evaluated: a template larger, or nested deeper, is not rendered here.
MAX_TEMPLATE_CHARS = 2 * 1024 * 1024
_MAX_NESTING = 64
_MAX_EXPRESSION_DEPTH = 32
_MAX_TAGS = 20_000


class NotRendered(Exception):
    """The template uses what this evaluator does not evaluate (or is malformed): `line`, why."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class Rendered:
    """A template rendered: `text` laid out on the template's lines; `flat` as Jinja writes
    it; the names used that the files do not give, each at its first line; the `for` loops
    whose body was left out (they iterate an undefined name)."""

    text: str
    flat: str
    undefined: tuple[tuple[str, int], ...] = ()
    omitted_loops: tuple[tuple[str, int], ...] = ()


# -- values ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Undefined:
    """Jinja's Undefined for `name`: false, renders empty, equal only to another Undefined
    (`strict`: its StrictUndefined, which stops the render wherever it is used but in `is
    defined` and `default`)."""

    name: str
    strict: bool = False


class _StrictUse(Exception):
    """A StrictUndefined used as a value: the render stops there."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _checked(value: _Value) -> _Value:
    if isinstance(value, _Undefined) and value.strict:
        raise _StrictUse(value.name)
    return value


_Value: TypeAlias = str | int | float | bool | _Undefined | None


def _truthy(value: _Value) -> bool:
    return False if isinstance(_checked(value), _Undefined) else bool(value)


def _text(value: _Value) -> str:
    if isinstance(_checked(value), _Undefined):
        return ""
    return str(value)


def _equal(left: _Value, right: _Value) -> bool:
    _checked(left)
    _checked(right)
    if isinstance(left, _Undefined) or isinstance(right, _Undefined):
        return isinstance(left, _Undefined) and isinstance(right, _Undefined)
    return left == right


# -- lexing ----------------------------------------------------------------------------------

#: An expression's tokens: strings, numbers, names, operators and punctuation.
_TOKEN = re.compile(
    r"""\s*(?:
      (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    | (?P<number>\d+(?:\.\d+)?)
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>==|!=|[|()\[\].,=])
    )""",
    re.X | re.S,
)
_SPACE = re.compile(r"\s*")
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t"}


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str


@dataclass
class _Tag:
    """One `{{ }}` or `{% %}` tag: its kind, its tokens, and its line."""

    kind: str  # "output" or "statement"
    tokens: list[_Tok]
    line: int


@dataclass
class _Data:
    """Template text (whitespace control applied), starting at `offset` in the template."""

    text: str
    offset: int


def _line_of(starts: list[int], offset: int) -> int:
    """The 1-based line of `offset`, by bisection over the lines' start offsets."""
    low, high = 0, len(starts) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if starts[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    return low + 1


def _tag_tokens(text: str, start: int, closer: str, line: int) -> tuple[list[_Tok], int, bool]:
    """The tokens of a tag whose body starts at `start`, up to its closer (`}}` or `%}`,
    `-` before it for whitespace control): (tokens, the offset after the closer, strip
    after)."""
    tokens: list[_Tok] = []
    position = start
    while True:
        at = _SPACE.match(text, position).end()  # type: ignore[union-attr]
        if text.startswith("-" + closer, at) or text.startswith("+" + closer, at):
            return tokens, at + 1 + len(closer), text[at] == "-"
        if text.startswith(closer, at):
            return tokens, at + len(closer), False
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            if at >= len(text):
                raise NotRendered(line, "a tag that is never closed")
            raise NotRendered(line, f"{text[at : at + 20]!r} is not evaluated here")
        kind = match.lastgroup or ""
        tokens.append(_Tok(kind, match[kind]))
        position = match.end()
        if len(tokens) > 256:
            raise NotRendered(line, "an expression longer than is evaluated here")


def _lex(text: str) -> list[_Data | _Tag]:
    """The template as data and tags, Jinja's whitespace control applied to the data."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    items: list[_Data | _Tag] = []
    position = 0
    strip_next = False
    opener = re.compile(r"\{([{%#])")
    while True:
        match = opener.search(text, position)
        end = match.start() if match else len(text)
        data = text[position:end]
        offset = position
        if strip_next:
            kept = data.lstrip()
            offset += len(data) - len(kept)
            data = kept
            strip_next = False
        if match is None:
            items.append(_Data(data, offset))
            return items
        body = match.end()
        if text.startswith("-", body):
            data = data.rstrip()
            body += 1
        elif text.startswith("+", body):
            body += 1
        items.append(_Data(data, offset))
        line = _line_of(starts, match.start())
        if len(items) > 2 * _MAX_TAGS:
            raise NotRendered(line, f"more than {_MAX_TAGS} tags")
        kind = match[1]
        if kind == "#":
            close = text.find("#}", body)
            if close < 0:
                raise NotRendered(line, "a comment that is never closed")
            strip_next = text[close - 1 : close] == "-" and close > body
            position = close + 2
            continue
        closer = "}}" if kind == "{" else "%}"
        tokens, position, strip_next = _tag_tokens(text, body, closer, line)
        if kind == "%" and [t.text for t in tokens] == ["raw"]:
            end_raw = re.compile(r"\{%(-?)\s*endraw\s*([-+]?)%\}").search(text, position)
            if end_raw is None:
                raise NotRendered(line, "a raw block that is never closed")
            raw = text[position : end_raw.start()]
            raw_offset = position
            if strip_next:
                kept = raw.lstrip()
                raw_offset += len(raw) - len(kept)
                raw = kept
            if end_raw[1]:
                raw = raw.rstrip()
            items.append(_Data(raw, raw_offset))
            position, strip_next = end_raw.end(), end_raw[2] == "-"
            continue
        items.append(_Tag("output" if kind == "{" else "statement", tokens, line))


# -- expressions -----------------------------------------------------------------------------


@dataclass
class _Scope:
    variables: dict[str, _Value]
    undefined: dict[str, int] = field(default_factory=dict)
    strict: bool = False


class _Expression:
    """A recursive-descent reader of one tag's tokens (Jinja's precedence: `or`, `and`,
    `not`, comparisons and tests, filters, then names, literals and subscripts)."""

    def __init__(self, tokens: list[_Tok], line: int, scope: _Scope) -> None:
        self.tokens, self.line, self.scope = tokens, line, scope
        self.index = 0
        self.depth = 0

    def fail(self, why: str) -> NotRendered:
        return NotRendered(self.line, why)

    def peek(self, offset: int = 0) -> _Tok | None:
        index = self.index + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def take(self, text: str | None = None) -> _Tok:
        token = self.peek()
        if token is None or (text is not None and token.text != text):
            raise self.fail(f"expected {text or 'an expression'}")
        self.index += 1
        return token

    def at(self, text: str) -> bool:
        token = self.peek()
        return token is not None and token.text == text and token.kind in ("name", "op")

    def done(self) -> None:
        if self.peek() is not None:
            raise self.fail(f"{self.peek().text!r} is not evaluated here")  # type: ignore[union-attr]

    def expression(self) -> _Value:
        self.depth += 1
        if self.depth > _MAX_EXPRESSION_DEPTH:
            raise self.fail("an expression nested deeper than is evaluated here")
        try:
            value = self.conjunction()
            while self.at("or"):
                self.take()
                right = self.conjunction()
                value = value if _truthy(value) else right
            return value
        finally:
            self.depth -= 1

    def conjunction(self) -> _Value:
        value = self.negation()
        while self.at("and"):
            self.take()
            right = self.negation()
            value = right if _truthy(value) else value
        return value

    def negation(self) -> _Value:
        if self.at("not"):
            self.take()
            return not _truthy(self.negation())
        return self.comparison()

    def comparison(self) -> _Value:
        value = self.filtered()
        if self.at("==") or self.at("!="):
            operator = self.take().text
            right = self.filtered()
            same = _equal(value, right)
            return same if operator == "==" else not same
        if self.at("is"):
            self.take()
            negate = self.at("not")
            if negate:
                self.take()
            test = self.take().text
            if test not in ("defined", "undefined"):
                raise self.fail(f"the test `{test}` is not evaluated here")
            defined = not isinstance(value, _Undefined)
            result = defined if test == "defined" else not defined
            return not result if negate else result
        return value

    def filtered(self) -> _Value:
        value = self.primary()
        while self.at("|"):
            self.take()
            name = self.take().text
            if name not in ("default", "d"):
                raise self.fail(f"the filter `{name}` is not evaluated here")
            args: list[_Value] = []
            if self.at("("):
                self.take()
                while not self.at(")"):
                    args.append(self.literal())
                    if not self.at(")"):
                        self.take(",")
                self.take(")")
            if not 1 <= len(args) <= 2:
                raise self.fail("`default` takes a value (and whether to replace false ones)")
            replace_false = len(args) == 2 and _truthy(args[1])
            if isinstance(value, _Undefined) or (replace_false and not _truthy(value)):
                value = args[0]
        return value

    def literal(self) -> _Value:
        token = self.take()
        if token.kind == "string":
            return _unquoted(token.text, self.line)
        if token.kind == "number":
            return float(token.text) if "." in token.text else int(token.text)
        if token.kind == "name" and token.text in _CONSTANTS:
            return _CONSTANTS[token.text]
        raise self.fail(f"{token.text!r} is not a literal")

    def primary(self) -> _Value:
        token = self.peek()
        if token is None:
            raise self.fail("an empty expression")
        if token.text == "(" and token.kind == "op":
            self.take()
            value = self.expression()
            self.take(")")
            return value
        if token.kind != "name" or token.text in _CONSTANTS:
            return self.literal()
        if token.text in _KEYWORDS:
            raise self.fail(f"`{token.text}` is not evaluated here")
        self.take()
        value = self.scope.variables.get(token.text, _Undefined(token.text, self.scope.strict))
        if isinstance(value, _Undefined):
            self.scope.undefined.setdefault(token.text, self.line)
        while self.at(".") or self.at("["):
            if self.take().text == ".":
                self.take()
            else:
                self.literal()
                self.take("]")
            if isinstance(_checked(value), _Undefined):
                # Jinja's default Undefined stops the render here; a renderer that passes
                # `config` gives it a value the files do not (quay's `config['x']['autostart']`
                # decides whether a program starts): unknown, never empty.
                raise self.fail(
                    f"`{token.text}` is not given by the files, and an item of it is its "
                    "renderer's value"
                )
            raise self.fail(f"`{token.text}` is a value here; an item of it is not evaluated")
        if self.at("("):
            raise self.fail(f"`{token.text}(...)`: a call is not evaluated here")
        return value


_CONSTANTS: dict[str, _Value] = {
    "true": True,
    "True": True,
    "false": False,
    "False": False,
    "none": None,
    "None": None,
}
_KEYWORDS = frozenset({"and", "or", "not", "is", "in", "if", "else", "for", "recursive"})


def _unquoted(literal: str, line: int) -> str:
    body = literal[1:-1]
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            following = body[index + 1 : index + 2]
            if following not in _ESCAPES:
                raise NotRendered(line, f"the escape \\{following} is not evaluated here")
            out.append(_ESCAPES[following])
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


# -- statements ------------------------------------------------------------------------------


@dataclass
class _Block:
    """An `if` or `for` being read: whether its current arm renders, and whether one did."""

    kind: str
    line: int
    rendering: bool
    taken: bool = False
    #: A `for`: the loop's names (defined as undefined in its body), and whether it iterates.
    names: tuple[str, ...] = ()
    iterates: bool = False
    #: Its `else` was met: another `elif` or `else` is Jinja's syntax error.
    ended: bool = False


@dataclass(frozen=True)
class _Piece:
    """Output: `text`, from template offset `offset` (data) or written at `line` (a value)."""

    text: str
    offset: int | None
    line: int


def _pieces(
    items: list[_Data | _Tag], scope: _Scope, omitted: list[tuple[str, int]]
) -> Iterator[_Piece]:
    """The output of the template's items, its statements evaluated."""
    stack: list[_Block] = []

    def rendering() -> bool:
        return all(b.rendering for b in stack)

    for item in items:
        if isinstance(item, _Data):
            if item.text and rendering():
                yield _Piece(item.text, item.offset, 0)
            continue
        try:
            yield from _tag_output(item, stack, scope, omitted)
        except _StrictUse as used:
            raise NotRendered(
                item.line,
                f"`{used.name}` is not given by the files, and an undefined name stops this "
                "render (no --undefined)",
            ) from None
    if stack:
        raise NotRendered(stack[-1].line, f"`{stack[-1].kind}` is never closed")


def _tag_output(
    item: _Tag, stack: list[_Block], scope: _Scope, omitted: list[tuple[str, int]]
) -> Iterator[_Piece]:
    """The output of one tag (a statement's is none: it steers the data after it)."""

    if item.kind == "statement":
        _statement(item, stack, scope, omitted)
        return
    if not all(b.rendering for b in stack):
        return
    reader = _Expression(item.tokens, item.line, scope)
    value = reader.expression()
    reader.done()
    written = _text(value)
    if "\n" in written:
        raise NotRendered(item.line, "a value of several lines")
    if written:
        yield _Piece(written, None, item.line)


def _statement(
    tag: _Tag,
    stack: list[_Block],
    scope: _Scope,
    omitted: list[tuple[str, int]],
) -> None:
    """One `{% %}` tag: opens, switches or closes a block, or sets a name."""
    words = tag.tokens
    if not words or words[0].kind != "name":
        raise NotRendered(tag.line, "an empty statement")
    keyword = words[0].text
    active = all(b.rendering for b in stack)
    if keyword in ("if", "for", "set") and len(stack) >= _MAX_NESTING:
        raise NotRendered(tag.line, f"blocks nested deeper than {_MAX_NESTING}")
    if keyword == "if":
        decided = active and _truthy(_evaluate(words[1:], tag.line, scope))
        stack.append(_Block("if", tag.line, decided, decided))
    elif keyword in ("elif", "else") and stack and stack[-1].kind == "if":
        block = stack[-1]
        if block.ended:
            raise NotRendered(tag.line, f"`{keyword}` after the `else` of its `if`")
        block.ended = keyword == "else"
        stack.pop()
        outer = all(b.rendering for b in stack)
        stack.append(block)
        if keyword == "else":
            _no_more(words[1:], tag.line)
            block.rendering = outer and not block.taken
        else:
            take = outer and not block.taken and _truthy(_evaluate(words[1:], tag.line, scope))
            block.rendering = take
        block.taken = block.taken or block.rendering
    elif keyword == "else" and stack and stack[-1].kind == "for":
        _no_more(words[1:], tag.line)
        block = stack[-1]
        block.rendering = not block.iterates and block.taken
        block.kind = "for-else"
    elif keyword == "for":
        names, iterable = _loop(words[1:], tag.line)
        value = scope.variables.get(iterable, _Undefined(iterable, scope.strict))
        if active:
            _checked(value)
        if not isinstance(value, _Undefined):
            raise NotRendered(tag.line, f"`for` over `{iterable}`, a value here, is not evaluated")
        if active:
            scope.undefined.setdefault(iterable, tag.line)
            omitted.append((iterable, tag.line))
        # An undefined iterates as empty: the body is left out, an `else` renders.
        stack.append(_Block("for", tag.line, False, active, names))
    elif keyword in ("endif", "endfor"):
        _no_more(words[1:], tag.line)
        opened = "if" if keyword == "endif" else "for"
        if not stack or stack[-1].kind.partition("-")[0] != opened:
            raise NotRendered(tag.line, f"`{keyword}` closes no `{opened}`")
        stack.pop()
    elif keyword == "set":
        if len(words) < 4 or words[1].kind != "name" or words[2].text != "=":
            raise NotRendered(tag.line, "a `set` other than `set name = value`")
        if active:
            scope.variables[words[1].text] = _evaluate(words[3:], tag.line, scope)
    else:
        raise NotRendered(tag.line, f"the statement `{keyword}` is not evaluated here")


def _evaluate(tokens: list[_Tok], line: int, scope: _Scope) -> _Value:
    reader = _Expression(tokens, line, scope)
    value = reader.expression()
    reader.done()
    return value


def _no_more(tokens: list[_Tok], line: int) -> None:
    if tokens:
        raise NotRendered(line, f"{tokens[0].text!r} is not evaluated here")


def _loop(tokens: list[_Tok], line: int) -> tuple[tuple[str, ...], str]:
    """`for a in b` / `for a, b in c`: the loop's names and the name iterated."""
    texts = [t.text for t in tokens]
    if "in" not in texts:
        raise NotRendered(line, "a `for` without `in`")
    split = texts.index("in")
    names = tuple(t for t in texts[:split] if t != ",")
    rest = tokens[split + 1 :]
    if not names or len(rest) != 1 or rest[0].kind != "name":
        raise NotRendered(line, "a `for` over something other than a name")
    return names, rest[0].text


# -- rendering -------------------------------------------------------------------------------


def render(
    text: str, variables: Mapping[str, str] | None = None, *, strict: bool = False
) -> Rendered:
    """`text` rendered with `variables` (the values the files give; every other name is
    undefined, or with `strict` stops the render where it is used, as StrictUndefined does),
    laid out on the template's lines. Raises NotRendered."""
    if len(text) > MAX_TEMPLATE_CHARS:
        raise NotRendered(1, f"larger than {MAX_TEMPLATE_CHARS} characters")
    # Jinja's default: one newline at the end of the template is dropped.
    body = text[:-1] if text.endswith("\n") else text
    scope = _Scope(dict(variables or {}), strict=strict)
    omitted: list[tuple[str, int]] = []
    pieces = list(_pieces(_lex(body), scope, omitted))
    starts = [0] + [m.end() for m in re.finditer("\n", body)]
    flat = "".join(p.text for p in pieces)
    return Rendered(
        _laid_out(pieces, starts),
        flat,
        tuple(scope.undefined.items()),
        tuple(omitted),
    )


def _laid_out(pieces: list[_Piece], starts: list[int]) -> str:
    """The rendered lines, each on the template line that wrote most of its characters (a
    line continued by a trailing backslash is followed at once by the next)."""
    lines: list[tuple[str, int]] = []
    text: list[str] = []
    weight: dict[int, int] = {}

    def close(ending: int) -> None:
        nonlocal text, weight
        written = "".join(text)
        home = max(weight, key=lambda n: (weight[n], -n)) if weight else ending
        if lines:
            previous_text, previous = lines[-1]
            floor = previous + 1
            home = floor if previous_text.endswith("\\") else max(home, floor)
        lines.append((written, home))
        text, weight = [], {}

    ending = 1
    for piece in pieces:
        cursor = piece.offset
        for index, part in enumerate(piece.text.split("\n")):
            if index:
                close(piece.line if cursor is None else _line_of(starts, cursor - 1))
            line = piece.line if cursor is None else _line_of(starts, cursor)
            if part:
                text.append(part)
                weight[line] = weight.get(line, 0) + len(part.strip())
                ending = line
            if cursor is not None:
                cursor += len(part) + 1
    if text:
        close(ending)
    out: list[str] = []
    for written, home in lines:
        out.extend([""] * (home - len(out) - 1))
        out.append(written)
    return "\n".join(out) + "\n"


# -- the hook --------------------------------------------------------------------------------


def with_templates(find_config: FindConfig) -> FindConfig:
    """`find_config` that, for a path not among the files, reads the template the image holds
    beside it under that name plus a template suffix, rendered (`render`)."""
    if getattr(find_config, "_renders_templates", False):
        return find_config

    def find(wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        found = find_config(wanted, at)
        if found is not None or not wanted or "\n" in wanted or len(wanted) > 4096:
            return found
        if wanted.endswith(TEMPLATE_SUFFIXES) or wanted.endswith("/"):
            return None
        for suffix in TEMPLATE_SUFFIXES:
            # A probe for a name the files may not hold: what looking says (a path outside
            # the tree, `run.sh.jnj` in file mode) is not the user's reference, so not said.
            with collect_notes():
                template = find_config(wanted + suffix, at)
            if template is not None:
                return read_rendered(template, wanted, at)
        return None

    find._renders_templates = True  # type: ignore[attr-defined]
    return find


def read_rendered(
    template: ConfigFile,
    wanted: str,
    at: Location | None,
    variables: Mapping[str, str] | None = None,
    strict: bool = False,
) -> ConfigFile | None:
    """The template as the file `wanted` it renders to (with `variables`, the values the files
    give the renderer), its undefined names noted; None (and a note saying why) when it is not
    evaluated here."""
    where = f"{at}: " if at is not None else ""
    try:
        # The template itself, not a walk's reading of it as its kind (`value_templates`).
        rendered = render(template_text(template.file, template.text), variables, strict=strict)
    except NotRendered as why:
        note(
            "template",
            Location(template.file, template.first_line + why.line - 1),
            f"{template.file}:{template.first_line + why.line - 1}: {where}{wanted} is rendered "
            f"from this Jinja template where the container starts; {why.reason}, so what it "
            "renders to was not read",
        )
        return None
    omitted = {name for name, _ in rendered.omitted_loops}
    for name, line in rendered.undefined:
        at_line = Location(template.file, template.first_line + line - 1)
        loop = "; the `for` over it renders no item" if name in omitted else ""
        note(
            "unresolved-variable",
            at_line,
            f"{at_line}: `{name}`: this Jinja template is rendered into {wanted} where the "
            "container starts, with a value the files do not give (the renderer's); read as "
            f"Jinja's undefined (false, renders empty, or its `default` where one is given){loop}",
        )
    return ConfigFile(rendered.text, template.file, template.first_line)
