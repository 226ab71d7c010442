"""Helm chart templates whose Go-template actions are only in values, read as Kubernetes YAML.

A chart (the folder holding `Chart.yaml`, or `values.yaml` beside `templates/` when the chart
was copied without it) keeps its manifests as `templates/*.yaml`: the Deployment, its
container's `command:` and the Service are all there, and most actions only fill a value
(`image: {{ .Values.image }}`, `- "{{ .Values.workers | default 1 }}"`). Such a template is
read, never evaluated: `.Values.a.b` is the chart's `values.yaml` value (a `default`, `quote`,
`int` applied), a value it does not give (or `.Release`, `include`, a function not read here)
an unresolved value, `$(Values.a.b)`, which the manifest reader leaves out with its flag as the
kubelet's undefined reference; a `{{ $x := ... }}` gives `$x`; an `if` / `with` renders the
branch the values choose when `_judge` decides its condition, else keeps its first branch
(said in a note), a `range` body is read once (a line whose key an action writes
dropped: it exists per item); a whole generated block (`{{ toYaml .Values.resources | nindent
12 }}`) is the values' mapping when it is one, else an empty one (unresolved).

A template whose structure is generated (a line or key an action writes, `define`, `block`)
is not read here: the walk skips it with its one line, as before. The reading keeps the
template's lines, so a finding's file:line names the template's own line.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from servertune.check import memo

__all__ = ["HelmReading", "chart_values", "is_chart_template", "read_chart_template"]

_ACTION = re.compile(r"\{\{-?\s*(?P<body>.*?)\s*-?\}\}", re.S)
_COMMENT = re.compile(r"/\*.*\*/", re.S)
_KEYWORD = re.compile(r"(?P<word>if|else|end|range|with|define|block)\b(?P<rest>.*)", re.S)
_ASSIGN = re.compile(r"(?P<var>\$\w+)\s*:?=\s*(?P<expr>.*)", re.S)
_STRING = re.compile(r'"(?P<double>(?:[^"\\]|\\.)*)"|`(?P<raw>[^`]*)`')
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_FIELD = re.compile(r"\$?(?:\.[A-Za-z_]\w*)+|\$\w*(?:\.[A-Za-z_]\w*)*|\.")
#: A named template rendered in place (`include "x" .`, `template "x" .`).
_NAMED = re.compile(r"(?:include|template)\s")
#: `toYaml X | nindent N` (or `indent N`): a generated block, alone on its line.
_BLOCK = re.compile(
    r"(?:toYaml\s+(?P<arg>\S+)\s*\|\s*|.*\|\s*)n?indent\s+(?P<indent>\d+)\s*\Z", re.S
)


class _Unresolved(Exception):
    """An expression whose value the chart's files do not give."""


@dataclass(frozen=True)
class HelmReading:
    """A chart template read as a manifest: `text` on the template's lines, the unresolved
    values each at its first line, the lines of the `if`s whose first branch was kept (their
    conditions not judged, each with its first line), and those judged by the values."""

    text: str
    unresolved: tuple[tuple[str, int], ...] = ()
    branches: tuple[int, ...] = ()
    unjudged: tuple[tuple[str, int], ...] = ()
    judged: tuple[int, ...] = ()


def _chart_folder(path: Path) -> Path | None:
    """The chart a template belongs to: the folder above its `templates/` holding `Chart.yaml`
    (or `values.yaml`, a chart copied without its `Chart.yaml`)."""
    for parent in path.parents:
        if parent.name == "templates":
            chart = parent.parent
            if (chart / "Chart.yaml").is_file() or (chart / "values.yaml").is_file():
                return chart
    return None


def is_chart_template(path: Path) -> bool:
    """Whether `path` is a manifest template of a Helm chart (`templates/*.yaml`)."""
    return path.suffix in (".yaml", ".yml") and _chart_folder(path) is not None


def chart_values(path: Path) -> tuple[Mapping[str, object], Mapping[str, object]]:
    """The chart's `values.yaml` of the template `path` and its `Chart.yaml` as Helm's `.Chart`
    gives it (`name:` as `Name`); each empty when absent or not a mapping."""
    chart = _chart_folder(path)
    if chart is None:
        return {}, {}
    given = _mapping(chart / "Chart.yaml")
    return _mapping(chart / "values.yaml"), {k[:1].upper() + k[1:]: v for k, v in given.items()}


def _mapping(path: Path) -> dict[str, object]:
    # A chart's values are asked for by each template of the chart and each image line of
    # its manifests: read once a run (nothing changes what it read).
    return memo.recall(memo.run_table("chart mappings"), path, lambda: _loaded(path))


def _loaded(path: Path) -> dict[str, object]:
    import yaml

    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return {str(k): v for k, v in loaded.items()} if isinstance(loaded, dict) else {}


@dataclass
class _State:
    values: Mapping[str, object]
    variables: dict[str, object]
    unresolved: dict[str, int]
    branches: list[int]
    # "keep", "drop" (not rendered), "wait" (not rendered yet: an else may be), "range", "with"
    stack: list[str]
    dots: list[object]
    judged: list[int] = field(default_factory=list)
    unjudged: dict[str, int] = field(default_factory=dict)


def read_chart_template(
    text: str, values: Mapping[str, object], chart: Mapping[str, object] | None = None
) -> HelmReading | None:
    """The chart template `text` read with `values` (its chart's `values.yaml`) and `chart`
    (its `Chart.yaml`, Helm's `.Chart`), or None when its structure is generated or its
    reading is not YAML (what it renders to is not guessed)."""
    objects = {"Values": values, "Chart": chart or {}}
    state = _State(values, {}, {}, [], [], [objects])
    out: list[str] = []
    position = 0
    for match in _ACTION.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        start = text.rfind("\n", 0, match.start()) + 1
        before, after = text[start : match.start()], _rest_of_line(text, match.end())
        dropping = _dropping(state.stack)
        gap = text[position : match.start()]
        out.append("\n" * gap.count("\n") if dropping else gap)
        position = match.end()
        body = _COMMENT.sub("", match["body"]).strip()
        if dropping and _KEYWORD.fullmatch(body) is None:
            filled: str | None = ""  # a later branch: only its statements count
        else:
            filled = _action(body, before, after, line, state)
        if filled is None:
            return None
        out.append(filled + "\n" * match.group().count("\n"))
    if state.stack:
        return None
    out.append(text[position:])
    reading = _placed("".join(out))
    if not _parses(reading):
        return None  # what it renders to hangs on more than its values
    return HelmReading(
        reading,
        tuple(state.unresolved.items()),
        tuple(state.branches),
        tuple(state.unjudged.items()),
        tuple(state.judged),
    )


def _parses(text: str) -> bool:
    import yaml

    try:
        for _ in yaml.safe_load_all(text):
            pass
    except yaml.YAMLError:
        return False
    return True


def _rest_of_line(text: str, at: int) -> str:
    end = text.find("\n", at)
    return text[at : len(text) if end < 0 else end]


#: What stands where an action wrote a key inside a `range` (a key per item): the line is dropped.
_PER_ITEM = "\x00per-item\x00"
#: What stands for a generated block, before it is placed (`_placed`).
_BLOCK_MARK = "\x00block\x00"


def _placed(text: str) -> str:
    """The reading's lines with a per-item key's line dropped, and each generated block
    written where it is a key's whole value (the line before ends in `:`, the line after is
    less indented), else dropped (a block beside sibling keys cannot be written on one line)."""
    lines = text.split("\n")
    previous = ""
    for index, line in enumerate(lines):
        if _PER_ITEM in line:
            lines[index] = ""
        elif _BLOCK_MARK in line:
            # (`nindent 12` gives the column: what stood before the action is trimmed.)
            block = line.partition(_BLOCK_MARK)[2]
            after = next((n for n in lines[index + 1 :] if n.strip()), "")
            alone = _indent(after) < _indent(block) or not after.strip()
            lines[index] = block if previous.endswith(":") and alone else ""
        if lines[index].strip():
            previous = lines[index].split(" #", 1)[0].rstrip()
    return "\n".join(lines)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _action(body: str, before: str, after: str, line: int, state: _State) -> str | None:
    """What one action stands for in the reading ("" for a statement), None when it makes the
    template's structure."""
    if not body:
        return ""  # a comment
    keyword = _KEYWORD.fullmatch(body)
    if keyword is not None:
        return "" if _statement(keyword["word"], keyword["rest"], line, state) else None
    assign = _ASSIGN.fullmatch(body)
    if assign is not None:
        try:
            state.variables[assign["var"]] = _evaluate(assign["expr"], state)
        except _Unresolved:
            state.variables[assign["var"]] = _Unresolved()
        return ""
    alone = not before.strip() and not after.strip()
    block = _BLOCK.search(body)
    if alone and block is not None:
        return _block(body, block["arg"], block["indent"], line, state)
    if alone and before and _NAMED.match(body):
        # A named template's lines indented into place (`{{ include "chart.env" . }}` under
        # `env:`): what it writes is in a `define` not read, so the line is left out as an
        # unresolved block, as when it is indented by `| nindent 12`; one at the margin may
        # be the whole manifest and stays structure.
        _unknown(body, line, state)
        return ""
    if "range" in state.stack and _ACTION.match(before.strip()):
        return ""  # the value of a key an action wrote: its line is dropped
    if alone or (not before.strip("- \t") and after.lstrip().startswith(":")):
        # A line, or a key, the action writes: per item in a `range`, else structure.
        return _PER_ITEM if "range" in state.stack else None
    try:
        value = _evaluate(body, state)
    except _Unresolved:
        return _unknown(body, line, state)
    if isinstance(value, (dict, list)):
        return _unknown(body, line, state)
    return _scalar(value)


def _statement(word: str, rest: str, line: int, state: _State) -> bool:
    """Apply a statement to the open blocks; False when it is one not read (`define`, `block`)
    or malformed. An `if` / `with` whose condition `_judge` decides by the chart's values keeps
    the branch Helm renders with them; one it cannot decide keeps its first branch."""
    stack = state.stack
    if word == "range":
        stack.append("range")
        state.dots.append(_Unresolved())
        return True
    if word in ("if", "with"):
        if _dropping(stack):
            stack.append("drop")  # inside a branch not rendered: not judged, not said
            state.dots.append(_Unresolved())
        else:
            stack.append(_opened(word, rest, line, state))
        return True
    if word == "else":
        if not stack or stack[-1] == "range":
            return False
        if stack[-1] != "wait":
            stack[-1] = "drop"  # a branch was read (or kept unjudged): the others are not
            return True
        state.dots[-1] = state.dots[-2]
        branch = _KEYWORD.fullmatch(rest.strip())
        if branch is None:
            stack[-1] = "keep"
        elif branch["word"] in ("if", "with"):
            stack[-1] = _opened(branch["word"], branch["rest"], line, state, pushed=True)
        else:
            return False
        return True
    if word == "end" and stack:
        stack.pop()
        state.dots.pop()
        return True
    return False


def _dropping(stack: list[str]) -> bool:
    """Whether the text read now is in a branch Helm does not render (or not the one kept)."""
    return "drop" in stack or "wait" in stack


def _opened(word: str, rest: str, line: int, state: _State, *, pushed: bool = False) -> str:
    """The block an `if COND` / `with VALUE` opens (its dot pushed, or set when `pushed`):
    "keep" or "with" when its branch renders, "wait" when it does not (a later `else` may)."""
    judged = _judge(rest, state)
    dot: object = state.dots[-1 if not pushed else -2] if word == "if" else _Unresolved()
    if judged is None:
        state.branches.append(line)
        state.unjudged.setdefault(f"{word} {' '.join(rest.split())}", line)
    else:
        state.judged.append(line)
    if word == "with" and judged is not False:
        with contextlib.suppress(_Unresolved):
            dot = _evaluate(rest, state)
    if pushed:
        state.dots[-1] = dot
    else:
        state.dots.append(dot)
    if judged is False:
        return "wait"
    return "keep" if word == "if" else "with"


def _judge(condition: str, state: _State) -> bool | None:
    """Whether Helm renders the branch of `condition` with the chart's values: a value
    (`.Values.a.b`, `$.Values.x`, a literal, `index .Values "a-b" "c"`), `not`, `empty`, `eq` /
    `ne` of two values, `and` / `or` of such, a parenthesized one; a value is false when it is false, 0, "", nil (a key
    the values do not set) or an empty list or map, true otherwise (Helm's flow-control
    guide, helm.sh/docs/chart_template_guide/control_structures). None when not judged."""
    try:
        value = _condition(condition.strip(), state)
    except _Unresolved:
        return None
    return _truth(value)


def _condition(text: str, state: _State) -> object:
    if len(_split(text, "|")) > 1:
        raise _Unresolved  # a pipeline: not judged
    words = _split(text, " ")
    if not words:
        raise _Unresolved
    head, args = words[0], [_condition_word(w, state) for w in words[1:]]
    if len(words) == 1:
        return _condition_word(head, state)
    if head in ("not", "empty") and len(args) == 1:
        return not _truth(args[0])
    if head in ("eq", "ne") and len(args) == 2:
        return (args[0] == args[1]) == (head == "eq")
    if head == "index" and len(args) > 1 and all(isinstance(a, str) for a in args[1:]):
        return _index(args[0], [str(a) for a in args[1:]])
    if head == "and" and args:
        return next((a for a in args if not _truth(a)), args[-1])
    if head == "or" and args:
        return next((a for a in args if _truth(a)), args[-1])
    raise _Unresolved


def _index(value: object, keys: list[str]) -> object:
    """`index MAP "a" "b"` (a key no identifier names, `"cert-manager"`): None where unset."""
    for key in keys:
        if value is not None and not isinstance(value, dict):
            raise _Unresolved
        value = None if value is None else value.get(key)
    return value


def _condition_word(word: str, state: _State) -> object:
    """A condition's operand: a literal, a parenthesized condition, or a field of the values
    (None where the values do not set it); `.Release`, `.Capabilities`, a `range`'s item or a
    variable not known raise `_Unresolved`."""
    if word.startswith("(") and word.endswith(")"):
        return _condition(word[1:-1].strip(), state)
    if _STRING.fullmatch(word) or _NUMBER.fullmatch(word) or word in ("true", "false"):
        return _operand(word, state)
    if not _FIELD.fullmatch(word) or word == ".":
        raise _Unresolved
    if word.startswith("$"):
        name, _, path = word.partition(".")
        root = state.dots[0] if name == "$" else state.variables.get(name, _Unresolved())
    else:
        root, path = state.dots[-1], word.lstrip(".")
    parts = [p for p in path.split(".") if p]
    if root is state.dots[0] and (not parts or parts[0] not in ("Values", "Chart")):
        raise _Unresolved  # `.Release`, `.Capabilities`: set where the chart is installed
    value = root
    for part in parts:
        if isinstance(value, _Unresolved) or (value is not None and not isinstance(value, dict)):
            raise _Unresolved
        value = None if value is None else value.get(part)
    if isinstance(value, _Unresolved):
        raise _Unresolved
    return value


def _truth(value: object) -> bool:
    """Go template truth, as Helm's `if` reads it: false, 0, "", nil, an empty list or map are
    false."""
    return value not in (None, False, 0, "", [], {})


def _evaluate(expression: str, state: _State) -> object:
    """A pipeline's value: its first command's, each later one given it as its last
    argument; raises `_Unresolved` for what the chart's files do not give."""
    value: object = None
    for index, command in enumerate(_split(expression, "|")):
        words = _split(command.strip(), " ")
        try:
            value = _call(words, state, value if index else None, piped=bool(index))
        except _Unresolved as unknown:
            value = unknown  # a later `default` may still give it
    if isinstance(value, _Unresolved):
        raise value
    return value


def _call(words: list[str], state: _State, given: object, *, piped: bool) -> object:
    head, args = words[0], [*words[1:]]
    if not piped and len(words) == 1:
        return _operand(head, state)
    operands: list[object] = []
    for arg in args:
        try:
            operands.append(_operand(arg, state))
        except _Unresolved:
            operands.append(_Unresolved())
    if piped:
        operands.append(given)
    if head == "default" and len(operands) == 2:
        fallback, value = operands
        if isinstance(value, _Unresolved) or value in (None, "", 0, False, [], {}):
            if isinstance(fallback, _Unresolved):
                raise _Unresolved
            return fallback
        return value
    if any(isinstance(o, _Unresolved) for o in operands) or len(operands) != 1:
        raise _Unresolved
    (value,) = operands
    if head in ("quote", "squote"):
        mark = '"' if head == "quote" else "'"
        return _Quoted(mark + str(_scalar(value)) + mark)
    if head in ("int", "int64", "toString", "trim"):
        return _scalar(value).strip() if head != "int" and head != "int64" else value
    raise _Unresolved


class _Quoted(str):
    """A value `quote` made: written with its quotes."""


def _operand(word: str, state: _State) -> object:
    string = _STRING.fullmatch(word)
    if string is not None:
        return string["double"] if string["double"] is not None else string["raw"]
    if _NUMBER.fullmatch(word):
        return json.loads(word)
    if word in ("true", "false"):
        return word == "true"
    if not _FIELD.fullmatch(word):
        raise _Unresolved  # a function or a parenthesized pipeline not read here
    if word.startswith("$"):
        name, _, path = word.partition(".")
        if name == "$":
            root: object = state.dots[0]
        elif name in state.variables:
            root = state.variables[name]
        else:
            raise _Unresolved
        return _lookup(root, path.split(".") if path else [])
    return _lookup(state.dots[-1], [p for p in word.split(".") if p])


def _lookup(root: object, path: list[str]) -> object:
    value = root
    for part in path:
        if not isinstance(value, dict) or part not in value:
            raise _Unresolved
        value = value[part]
    if isinstance(value, _Unresolved) or value is None:
        raise _Unresolved
    return value


def _scalar(value: object) -> str:
    if isinstance(value, _Quoted):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _block(body: str, arg: str | None, indent: str, line: int, state: _State) -> str:
    """A generated block (`toYaml X | nindent N`, an `include` indented), written on its one
    line in flow style (`{"limits": {...}}`) when it is the values' plain mapping, else left
    out as an unresolved value."""
    try:
        value = None if arg is None else _operand(arg, state)
    except _Unresolved:
        value = None
    if not isinstance(value, dict):
        _unknown(f"toYaml {arg}" if arg else body, line, state)
        return ""
    return _BLOCK_MARK + " " * int(indent) + json.dumps(value)


def _unknown(body: str, line: int, state: _State) -> str:
    """An unresolved value: named for what it reads (`Values.workers`), `$(name)`."""
    field = re.match(r"\$?\.\w+(?:\.\w+)*|\$\w+", body.strip())
    name = field.group() if field else " ".join(body.split())
    state.unresolved.setdefault(name, line)
    # `template "x" .` and `include "x" .` render the same named template: one name for both,
    # so a ConfigMap named with one is the volume that names it with the other (Substra).
    name = re.sub(r"\Atemplate(?=\s)", "include", name)
    return "$(" + (re.sub(r"[^\w.-]+", "_", name.lstrip(".$")).strip("_") or "value") + ")"


def _split(text: str, separator: str) -> list[str]:
    """`text` split at `separator` outside quotes and parentheses (empty parts dropped)."""
    parts: list[str] = []
    current: list[str] = []
    quote, depth = "", 0
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in '"`':
            quote = char
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == separator and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return [p for p in (p.strip() for p in parts) if p]
