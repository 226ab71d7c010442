"""Jinja templates whose templating is only in values, read as the file they install as.

A deployment is often kept as templates a tool renders when it installs them (an ansible
role's `templates/gunicorn.service.j2`, a salt state's supervisord program): the unit, the
site or the program is all there, and only some values are the deployment's variables
(`ExecStart={{ venv }}/bin/gunicorn -w {{ workers }} app:app`). Such a file is read as its
kind, never evaluated: `{{ x | default(literal) }}` is the literal, any other `{{ x }}` an
unresolved value (`${x}`, read as a variable no file sets: what depends on it is not checked,
said in one `unresolved-variable` note at its line), a `{# #}` comment is dropped, an `{% if
%}` keeps its first branch (said in a note) and a `{% for %}` body is read once.

A template whose structure is templated (a line or a key written by an expression, a
statement other than `if` / `for` / `set`: an include, a macro, a block; a Go template's
`{{ define }}` / `{{ if }}`, consul-template's `.ctmpl`) is read for links only
(`read_links`): every statement dropped and every branch's literal lines kept once, a line
that is only an expression dropped, any other `{{ }}` an unresolved value. What it binds,
starts or passes to joins the launch graph (an nginx site's literal `upstream`), but its
values are not known, so no finding is raised from it (`links_only`). The rendered text keeps
the template's lines, so a reader's file:line names the template's own line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from servertune.check.ansible_vars import ansible_values
from servertune.check.budget import each_within_budget
from servertune.check.helm_templates import chart_values, is_chart_template, read_chart_template
from servertune.check.model import CheckInputError, Location, note
from servertune.check.source import read_text, template_text

__all__ = [
    "SUFFIXES",
    "ValueTemplate",
    "installed_name",
    "links_only",
    "read_in_place",
    "read_links",
    "read_values",
    "readings",
    "say_notes",
]

#: The suffixes a file carries as a template of the file it installs as.
SUFFIXES = (".j2", ".jinja", ".jinja2", ".jnj", ".tmpl", ".template", ".tpl", ".ctmpl")

_TAG = re.compile(
    r"\{#.*?#\}|\{\{-?(?P<expr>.*?)-?\}\}|\{%-?\s*(?P<keyword>\w+)(?P<rest>.*?)-?%\}", re.S
)
_NAME = re.compile(r"[A-Za-z_][\w.]*(?:\[['\"]?\w+['\"]?\])*")
_LITERAL = re.compile(
    r"""\s*('(?P<single>[^'\\]*)'|"(?P<double>[^"\\]*)"|(?P<number>-?\d+(?:\.\d+)?))\s*"""
)
_DEFAULT = re.compile(r"\s*(?:default|d)\s*\((?P<args>.*)\)\s*", re.S)
#: Statements read: the first branch of an `if`, a `for` body once, a `set` dropped.
_READ = frozenset({"if", "elif", "else", "endif", "for", "endfor", "set"})


@dataclass(frozen=True)
class ValueTemplate:
    """A template read as its kind: `text` on the template's lines, the unresolved values each
    at its first line, and the lines of the `if` statements whose first branch was kept."""

    text: str
    unresolved: tuple[tuple[str, int], ...] = ()
    branches: tuple[int, ...] = ()
    #: A Helm chart's template (`helm_templates`), not a Jinja one: its notes say so.
    helm: bool = False
    #: Read for links only (`read_links`): the line of its first templated structure.
    structure: int | None = None
    #: A Helm template's `if` / `with` conditions not judged by its values, each at its line.
    unjudged: tuple[tuple[str, int], ...] = ()
    #: A Helm template's `if` / `with` lines whose branch its chart's values chose.
    judged: tuple[int, ...] = ()


def installed_name(name: str) -> str:
    """A file's name as installed: without its template suffix (`gunicorn.service.j2`)."""
    for suffix in SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def read_values(text: str, given: Mapping[str, str] | None = None) -> ValueTemplate | None:
    """The template `text` read with its values unresolved but those `given` as literals (an
    ansible play's, `ansible_vars`), or None when its structure is templated (what it renders
    to is not guessed)."""
    out = _Layout()
    unresolved: dict[str, int] = {}
    branches: list[int] = []
    stack: list[str] = []  # "keep", "drop" (a later branch of an if), "for"
    for match in _TAG.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        dropping = "drop" in stack
        out.before(match, text, dropping)
        keyword = match["keyword"]
        if keyword is not None:
            if keyword not in _READ or not _statement(keyword, stack, line, branches):
                return None
        elif match["expr"] is not None and not dropping:
            if out.at_line_start() and not _opens_block(text, match.end()):
                return None  # a line (or a key) the expression writes
            if match["expr"].strip().startswith("."):
                return None  # a Go template's field (Helm's `.Values.x`), not Jinja
            out.write(_value(match["expr"], line, unresolved, given or {}))
    if stack:
        return None
    return ValueTemplate(out.rest(text), tuple(unresolved.items()), tuple(branches))


class _Layout:
    """The text a template reads as, kept on the template's lines. Jinja's whitespace control
    (`{%- if x -%}`, `{{- x }}`) strips the blanks beside a tag, line breaks too, so a value
    split over lines for legibility reads as one line (a supervisord `command=` whose
    `{%- if -%}` wraps a prefix: dimagi/commcare-cloud); the breaks it (or a tag, or a stretch
    not written) takes out are written at the end of the line they join, so a reader's
    file:line still names the template's own line."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pending = 0  # line breaks taken out, owed at the end of the current line
        self.tail = ""  # the current line so far
        self.position = 0  # where the text not yet read starts
        self.strip_next = False  # the last tag ends with `-`: the blanks after it go

    def before(self, match: re.Match[str], text: str, dropped: bool) -> None:
        """Read the text up to the tag `match` (only its line breaks when it is `dropped`),
        then the tag itself, which writes nothing here."""
        stretch = text[self.position : match.start()]
        kept = stretch.lstrip() if self.strip_next else stretch
        kept = kept.rstrip() if match.group()[2:3] == "-" else kept
        if dropped:
            kept = ""
        self.pending += stretch.count("\n") - kept.count("\n") + match.group().count("\n")
        self.write(kept)
        self.position = match.end()
        self.strip_next = match.group()[-3:-2] == "-"

    def write(self, written: str) -> None:
        """Add `written`, the breaks owed set after its first line break."""
        if "\n" not in written:
            self.tail += written
        else:
            if self.pending:
                cut = written.index("\n") + 1
                written = written[:cut] + "\n" * self.pending + written[cut:]
                self.pending = 0
            self.tail = written.rsplit("\n", 1)[1]
        self.parts.append(written)

    def at_line_start(self) -> bool:
        """Whether nothing but blanks is written on the current line."""
        return not self.tail.strip()

    def rest(self, text: str) -> str:
        """The whole reading, with the text after the last tag and the breaks still owed."""
        stretch = text[self.position :]
        self.write(stretch.lstrip() if self.strip_next else stretch)
        return "".join(self.parts) + "\n" * self.pending


def _opens_block(text: str, end: int) -> bool:
    """Whether the expression ending at `end` only names the block its line opens (`{{ domain }}
    {`: a Caddy site's address), a value like any other rather than a line it writes."""
    rest = text[end : text.find("\n", end) if "\n" in text[end:] else len(text)]
    return rest.strip() == "{"


def read_in_place(path: Path, text: str) -> ValueTemplate | None:
    """The template `path` read with its values: a Helm chart's manifest template with its
    chart's `values.yaml` (`helm_templates`), any other as Jinja (`read_values`) or, its
    structure templated, for links only (`read_links`)."""
    if not is_chart_template(path):
        given = ansible_values(path)
        return read_values(text, given) or read_links(text, given)
    found = read_chart_template(text, *chart_values(path))
    if found is None:
        return None
    return ValueTemplate(
        found.text,
        found.unresolved,
        found.branches,
        helm=True,
        unjudged=found.unjudged,
        judged=found.judged,
    )


#: A Go template's actions that steer lines (`{{ if }}`, `{{- range }}`, `{{ end }}`) rather
#: than write a value; `define` opens a block whose body is written only where it is used.
_GO_CONTROL = re.compile(r"\s*(?P<word>if|else|end|range|with|define|block)\b")
#: Jinja statements whose body is not written where it stands (a macro, a call's body).
_UNWRITTEN = {"macro": "endmacro", "call": "endcall", "raw": "endraw"}
#: An expression's place in the text read for links, replaced by its value once every line
#: is judged (a line only of expressions is dropped).
_OPEN, _CLOSE = "\x00", "\x01"


def read_links(text: str, given: Mapping[str, str] | None = None) -> ValueTemplate | None:
    """The template `text` read for links only: every statement (Jinja's `{% %}`, a Go
    template's `{{ if }}` / `{{ end }}`) dropped with every branch's literal lines kept once, a
    Go `{{ define }}` body and a Jinja macro dropped, a line that is only expressions dropped
    (it writes a line or a key, unknown) and any other `{{ x }}` an unresolved value but those
    `given` (an ansible role's literals: its socket path is a link). None
    when it holds no structure (`read_values` reads it) or a tag is left open."""
    out = _Layout()
    unresolved: dict[str, int] = {}
    structure: int | None = None
    hidden: list[str] = []  # the closing words of the unwritten bodies open
    go: list[bool] = []  # the Go blocks open, each whether it is a `define`
    for match in _TAG.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        out.before(match, text, bool(hidden or any(go)))
        keyword, expr = match["keyword"], match["expr"]
        control = _GO_CONTROL.match(expr) if expr is not None else None
        if keyword is not None or control is not None:
            structure = line if structure is None else structure
            word = keyword if keyword is not None else control["word"] if control else ""
            if hidden and word == hidden[-1]:
                hidden.pop()
            elif keyword in _UNWRITTEN:
                hidden.append(_UNWRITTEN[keyword])
            elif control is not None and word in ("if", "range", "with", "define", "block"):
                go.append(word == "define")
            elif control is not None and word == "end":
                if not go:
                    return None
                go.pop()
        elif expr is not None and not (hidden or any(go)):
            out.write(_OPEN + _value(expr, line, unresolved, given or {}) + _CLOSE)
    lines = out.rest(text).split("\n")
    first = next((n for n, row in enumerate(lines, 1) if _only_expressions(row)), None)
    if hidden or go or (structure is None and first is None):
        return None
    structure = min(n for n in (structure, first) if n is not None)
    kept = [
        "" if _only_expressions(row) else re.sub(f"[{_OPEN}{_CLOSE}]", "", row) for row in lines
    ]
    return ValueTemplate("\n".join(kept), tuple(unresolved.items()), structure=structure)


def _only_expressions(row: str) -> bool:
    """Whether a line read for links holds expressions and nothing else but blanks."""
    return _OPEN in row and not re.sub(f"{_OPEN}[^{_CLOSE}]*{_CLOSE}", "", row).strip()


def links_only(paths: Sequence[Path]) -> frozenset[str]:
    """Those of `paths` (templates a run reads in place) read for links only, by normalized
    path: no finding is raised from them, their values being unknown."""

    def structured(path: Path) -> bool:
        try:
            own = read_text(path)
        except (OSError, CheckInputError):
            return False
        read = read_in_place(path, template_text(path, own))
        return read is not None and read.structure is not None

    # One over its budget is left out: its reading says so.
    found = each_within_budget(paths, structured)
    return frozenset(os.path.normpath(os.path.abspath(p)) for p, links in found if links)


def _statement(keyword: str, stack: list[str], line: int, branches: list[int]) -> bool:
    """Apply a statement to the stack of open blocks; False when it is malformed."""
    if keyword == "if":
        stack.append("keep")
        if "drop" not in stack[:-1]:
            branches.append(line)
    elif keyword in ("elif", "else"):
        if not stack or stack[-1] not in ("keep", "drop"):
            return False
        stack[-1] = "drop"
    elif keyword == "for":
        stack.append("for")
    elif keyword in ("endif", "endfor"):
        if not stack or (stack[-1] == "for") != (keyword == "endfor"):
            return False
        stack.pop()
    return True


def _value(
    expression: str, line: int, unresolved: dict[str, int], values: Mapping[str, str]
) -> str:
    """What `{{ expression }}` is read as: a literal it is or defaults to, or a name's value
    in `values`, else a variable no file sets, `${name}`, which the shell, systemd, supervisord's programs and an nginx
    template (`nginx_placeholders`) alike read as a value known only where it runs."""
    base, *filters = _split_filters(expression)
    called = re.fullmatch(r"""\s*env\s+"(\w+)"\s*""", base)
    if called is not None:  # the Cloud Foundry nginx buildpack's app variable
        unresolved.setdefault(called[1], line)
        return "${" + called[1] + "}"
    literal = _literal(base)
    if literal is not None:
        return literal
    for step in filters:
        default = _DEFAULT.fullmatch(step)
        if default is not None:
            given = _literal(default["args"].split(",")[0])
            if given is not None:
                return given
    name = _NAME.match(base.strip())
    if name is not None and name.group() == base.strip():
        dotted = re.sub(r"\[['\"]?(\w+)['\"]?\]", r".\1", name.group())
        if dotted in values:
            return values[dotted]
    word = re.sub(r"\W+", "_", name.group() if name else "value").strip("_") or "value"
    unresolved.setdefault(word, line)
    return "${" + word + "}"


def _literal(text: str) -> str | None:
    match = _LITERAL.fullmatch(text)
    if match is None:
        return None
    for group in ("single", "double", "number"):
        if match[group] is not None:
            return match[group]
    return None


def _split_filters(expression: str) -> list[str]:
    """`x | default('a|b') | int` -> its base and filters, a `|` inside quotes kept."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    for char in expression:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "|":
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def readings(paths: Sequence[Path]) -> dict[Path, tuple[str, str]]:
    """Each template of `paths` whose templating is only in values, as (its own text, the text
    read in its place) for `source.reading_as`; one that cannot be read is left out."""

    def read_as(path: Path) -> tuple[str, str] | None:
        try:
            own = read_text(path)
        except (OSError, CheckInputError):
            return None  # the walk read it; gone or changed since: not read as its kind
        read = read_in_place(path, own)
        return None if read is None else (own, read.text)

    # One over its budget is left out: its reading says so.
    return {p: pair for p, pair in each_within_budget(paths, read_as) if pair is not None}


def say_notes(path: Path, text: str) -> None:
    """The notes of a template read as its kind (`text`, as read): its unresolved values and
    its `if` statements whose first branch was kept, each at its line."""
    own = template_text(path, text)
    found = read_in_place(path, own) if own != text else None
    if found is None:
        return
    if found.structure is not None:
        note(
            "template",
            Location(path, found.structure),
            f"{path}:{found.structure}: read for links only: templated structure at line "
            f"{found.structure}; what it binds, starts or passes to was followed, its values "
            "are not known, so nothing in it was checked",
        )
        return
    dot, given, statement = (
        ("", "helm's --set, another values file, the release", "{{ if }}")
        if found.helm
        else ("", _JINJA_GIVEN, "{% if %}")
    )
    if not found.helm and _cf_nginx_buildpack(path, own):
        given = _CF_GIVEN
    if found.unresolved:
        first = found.unresolved[0][1]
        names = ", ".join(
            f"`{{{{ {dot}{name} }}}}` (line {line})" for name, line in found.unresolved
        )
        note(
            "unresolved-variable",
            Location(path, first),
            f"{path}:{first}: {names}: values this template is given where it is installed "
            f"({given}) that the files do not give: read as unknown, what depends on them "
            "was not checked",
        )
    if found.helm:
        _say_conditions(path, found)
    elif found.branches:
        lines = ", ".join(str(line) for line in found.branches)
        note(
            "template",
            Location(path, found.branches[0]),
            f"{path}:{found.branches[0]}: the `{statement}` of this template at line(s) {lines}: "
            "its first branch was read, the others were not",
        )


_JINJA_GIVEN = "an ansible or salt variable"
_CF_GIVEN = (
    "the Cloud Foundry nginx buildpack's, rendered where the app is staged: `{{port}}` its "
    '$PORT, `{{env "NAME"}}` the app\'s variable'
)
#: The Cloud Foundry nginx buildpack's template call of an app variable: `{{env "NAME"}}`.
_CF_ENV = re.compile(r"""\{\{-?\s*env\s+"\w+"\s*-?\}\}""")


def _cf_nginx_buildpack(path: Path, text: str) -> bool:
    """Whether `path` is a config the Cloud Foundry nginx buildpack renders: it uses the
    buildpack's `{{env "NAME"}}`, or its folder's `buildpack.yml` configures the buildpack's
    nginx (`nginx:`), which templates `{{port}}` and `{{env "NAME"}}` into the app's own
    nginx.conf and the files it includes."""
    if _CF_ENV.search(text):
        return True
    try:
        own = read_text(path.parent / "buildpack.yml")
    except (OSError, CheckInputError):
        return False
    return re.search(r"^nginx:", own, re.M) is not None


def renders_nothing(path: Path) -> int | None:
    """The line of the first `if` the chart's values.yaml decided when the Helm template `path`
    renders nothing with those values (its whole body behind a false `{{ if .Values.x.enabled
    }}`); None otherwise, or when it is not a chart's template."""
    if not is_chart_template(path):
        return None
    try:
        found = read_in_place(path, read_text(path))
    except (OSError, CheckInputError):
        return None
    if found is None or not found.judged:
        return None
    lines = (line.split("#", 1)[0].strip() for line in found.text.splitlines())
    return None if any(line and line != "---" for line in lines) else found.judged[0]


def _say_conditions(path: Path, found: ValueTemplate) -> None:
    """A Helm template's `if` / `with` notes: those its chart's values.yaml decided (another
    values file or `--set` may decide otherwise), and those not judged, whose first branch was
    read."""
    if found.judged:
        lines = ", ".join(str(line) for line in found.judged)
        note(
            "template",
            Location(path, found.judged[0]),
            f"{path}:{found.judged[0]}: the `{{{{ if }}}}` of this template at line(s) {lines}: "
            "the branch the chart's values.yaml chooses was read (another values file or "
            "helm's --set may choose another)",
        )
    for condition, line in found.unjudged:
        note(
            "template",
            Location(path, line),
            f"{path}:{line}: not followed: Helm condition `{{{{ {condition} }}}}` not judged: "
            "its first branch was read, the others were not",
        )
