"""Inline ignores: `# servertune: ignore[rule-id] reason` in each file kind's own comment syntax,
and the `servertune.io/ignore` annotation on a Kubernetes object.

As ruff's `# noqa: B006` (crates/ruff_linter/src/noqa.rs) and hadolint's `# hadolint
ignore=DL3008` (Pragma.hs), a comment names the rules it silences; unlike them, it must also
say why, and the reason travels with the ignored finding into every report. A comment on a line
of its own covers the line or block that follows (an nginx `{ }` block, a YAML mapping, an ini
section, an HAProxy section, a Dockerfile instruction with its continuation lines); a trailing
comment, where the syntax has one, covers its own line (and the block it opens). Comments are
found in the file's text: nothing is run or imported.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servertune.check.model import Location

__all__ = [
    "ANNOTATION",
    "Ignore",
    "Syntax",
    "ignores_in",
    "syntax_for",
]

#: The annotation a Kubernetes object carries (as kube-score's `kube-score/ignore`).
ANNOTATION = "servertune.io/ignore"
#: `servertune: ignore[rule-a, rule-b] reason`; the reason may follow a `:` or a dash.
_DIRECTIVE = re.compile(r"servertune:\s*ignore(?:\[(?P<rules>[^\]]*)\])?(?P<reason>.*)$")
_RULE_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass(frozen=True)
class Ignore:
    """One ignore: the rules it names, why, where it is written and the lines it covers."""

    rules: tuple[str, ...]
    reason: str
    at: Location
    first: int
    last: int
    #: "comment", or "annotation" (a Kubernetes object's).
    form: str = "comment"
    #: What was written in the brackets that is not a rule id's spelling (`ignore[Shared]`).
    malformed: str = ""

    def covers(self, rule: str, at: Location) -> bool:
        """It names `rule` and covers the line `at` points at."""
        return rule in self.rules and at.file == self.at.file and self.first <= at.line <= self.last


#: A block's last line (0-based), given the file's lines and its first line.
Block = Callable[[list[str], int], int]


@dataclass(frozen=True)
class Syntax:
    """A file kind's comments: their markers, whether one may trail code, what a block is."""

    name: str
    markers: tuple[str, ...]
    trailing: bool
    block: Block


def _continued(lines: list[str], i: int) -> int:
    """The line and its backslash continuations (shell, Dockerfile, Procfile)."""
    while i + 1 < len(lines) and lines[i].rstrip().endswith("\\"):
        i += 1
    return i


def _braces(lines: list[str], i: int) -> int:
    """An nginx statement: up to its `;`, or its `{ ... }` block, however many lines."""
    depth = 0
    for j in range(i, len(lines)):
        code = lines[j].split("#", 1)[0]
        for char in code:
            depth += (char == "{") - (char == "}")
            if depth == 0 and char in ";}":
                return j
    return len(lines) - 1


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _indented(lines: list[str], i: int) -> int:
    """The line and every line indented deeper after it (a YAML mapping, a Python block)."""
    last = i
    for j in range(i + 1, len(lines)):
        stripped = lines[j].strip()
        if not stripped or stripped.startswith("#"):
            continue
        if _indent(lines[j]) <= _indent(lines[i]):
            break
        last = j
    return last


def _sections(opens: Callable[[str], bool]) -> Block:
    """A section header's block: up to the next header (ini `[x]`, HAProxy `backend x`)."""

    def block(lines: list[str], i: int) -> int:
        if not opens(lines[i]):
            return i
        for j in range(i + 1, len(lines)):
            if opens(lines[j]):
                return j - 1
        return len(lines) - 1

    return block


#: HAProxy's section keywords (configuration.txt, "3. Global parameters" and "4. Proxies").
_HAPROXY_SECTIONS = frozenset(
    [
        "global",
        "defaults",
        "frontend",
        "backend",
        "listen",
        "peers",
        "resolvers",
        "userlist",
        "mailers",
        "program",
        "http-errors",
        "ring",
        "cache",
        "fcgi-app",
        "crt-store",
        "traces",
    ]
)


def _haproxy_section(line: str) -> bool:
    words = line.split()
    return bool(words) and not line[:1].isspace() and words[0] in _HAPROXY_SECTIONS


def _ini_section(line: str) -> bool:
    return line.strip().startswith("[") and line.strip().endswith("]")


def _one(lines: list[str], i: int) -> int:
    del lines
    return i


_HASH = ("#",)
#: Each reader kind's comment syntax. uWSGI takes `#` and `;` only at the start of a line (a
#: value keeps a trailing `; x`); supervisord strips a trailing ` ;`; a Dockerfile's `#` is a
#: comment only at the start of a line (elsewhere it is part of the instruction).
SYNTAXES: dict[str, Syntax] = {
    "dockerfile": Syntax("Dockerfile", _HASH, False, _continued),
    "procfile": Syntax("Procfile", _HASH, True, _one),
    "supervisord": Syntax("ini", ("#", ";"), True, _sections(_ini_section)),
    "compose": Syntax("YAML", _HASH, True, _indented),
    "gunicorn": Syntax("Python", _HASH, True, _indented),
    "script": Syntax("shell", _HASH, True, _continued),
    "uwsgi": Syntax("ini", ("#", ";"), False, _sections(_ini_section)),
    "kubernetes": Syntax("YAML", _HASH, True, _indented),
    "haproxy": Syntax("HAProxy", _HASH, True, _sections(_haproxy_section)),
    "nginx": Syntax("nginx", _HASH, True, _braces),
    "env": Syntax("env file", _HASH, True, _one),
}


def syntax_for(path: Path, text: str) -> Syntax:
    """The comment syntax of the file: its reader's kind's, an env file's for a file no reader
    claims (`.env`, `prod.env`: the env files check reads along the way)."""
    from servertune.check.model import CheckInputError
    from servertune.check.readers import reader_for

    try:
        kind = reader_for(path, text).kind
    except CheckInputError:
        kind = "env"
    return SYNTAXES.get(kind, SYNTAXES["env"])


def _comment(line: str, syntax: Syntax) -> tuple[str, bool] | None:
    """The comment's text on the line, and whether it trails code; None without one."""
    stripped = line.lstrip()
    for marker in syntax.markers:
        if stripped.startswith(marker):
            return stripped[len(marker) :], False
    if syntax.trailing:
        found = re.search(r"\s(" + "|".join(map(re.escape, syntax.markers)) + r")", line)
        if found is not None:
            return line[found.end() :], True
    return None


def _parsed(body: str) -> tuple[tuple[str, ...], str, str] | None:
    """(rule ids, reason, what is not a rule id) of a directive; None when it is not one."""
    directive = _DIRECTIVE.search(body)
    if directive is None:
        return None
    written = [r.strip() for r in (directive.group("rules") or "").split(",") if r.strip()]
    rules = tuple(r for r in written if _RULE_ID.fullmatch(r))
    malformed = ", ".join(r for r in written if not _RULE_ID.fullmatch(r))
    if directive.group("rules") is None:
        malformed = "no [rule-id]"
    reason = _printable(directive.group("reason").strip().lstrip(":-—").strip())
    return rules, reason, malformed


def _printable(text: str) -> str:
    """The reason with control characters escaped as Python writes them: a reason travels into
    terminals, SARIF viewers and CI logs, where an escape sequence must not recolour or rewrite
    lines."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _is_code(line: str, syntax: Syntax) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(syntax.markers)


def ignores_in(path: Path, text: str) -> list[Ignore]:
    """Every inline ignore of the file, in its own comment syntax (and a manifest's annotations)."""
    syntax = syntax_for(path, text)
    lines = text.splitlines()
    found: list[Ignore] = []
    seen_code = False
    for i, line in enumerate(lines):
        comment = _comment(line, syntax)
        parsed = None if comment is None else _parsed(comment[0])
        if parsed is None or comment is None:
            seen_code = seen_code or _is_code(line, syntax)
            continue
        rules, reason, malformed = parsed
        if comment[1]:  # trailing: its own line (and the block that line opens)
            first, last = i, syntax.block(lines, i)
            seen_code = True
        else:
            target = next((j for j in range(i + 1, len(lines)) if _is_code(lines[j], syntax)), None)
            if target is None:
                first = last = i
            else:
                first, last = target, syntax.block(lines, target)
            if not seen_code:
                # Before any code: also line 1, where check points at a value the file
                # does not write (a default).
                first = 0
        found.append(
            Ignore(rules, reason, Location(path, i + 1), first + 1, last + 1, "comment", malformed)
        )
    if syntax is SYNTAXES["kubernetes"]:
        found += _annotations(path, text)
    return found


def _annotations(path: Path, text: str) -> list[Ignore]:
    """`servertune.io/ignore` annotations: each covers its object's document. The value holds
    one `rule-id: reason` per line (several ids: `rule-a, rule-b: reason`)."""
    try:
        import yaml
    except ImportError:
        return []  # the reader said which extra it needs
    try:
        documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return []  # the reader said why it could not read the file
    found: list[Ignore] = []
    for document in documents:
        if document is None:
            continue
        first, last = document.start_mark.line + 1, document.end_mark.line + 1
        for key, value in _annotation_values(document):
            block = value.style in ("|", ">")
            for offset, entry in enumerate(str(value.value).splitlines()):
                if not entry.strip():
                    continue
                names, _, reason = entry.partition(":")
                written = [n.strip() for n in names.split(",") if n.strip()]
                rules = tuple(n for n in written if _RULE_ID.fullmatch(n))
                malformed = ", ".join(n for n in written if not _RULE_ID.fullmatch(n))
                line = key.start_mark.line + 1 + (offset + 1 if block else 0)
                found.append(
                    Ignore(rules, _printable(reason.strip()), Location(path, line), first, last,
                           "annotation", malformed)
                )  # fmt: skip
    return found


def _annotation_values(node: Any) -> list[tuple[Any, Any]]:
    """Every (key node, scalar value node) of a `servertune.io/ignore` annotation under `node`."""
    import yaml

    found: list[tuple[Any, Any]] = []
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == "annotations" and isinstance(value, yaml.MappingNode):
                found += [
                    (k, v)
                    for k, v in value.value
                    if k.value == ANNOTATION and isinstance(v, yaml.ScalarNode)
                ]
            else:
                found += _annotation_values(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            found += _annotation_values(item)
    return found
