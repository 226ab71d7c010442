"""Files a setup script of the repository writes with a here-document.

An installer often writes the start script a service unit runs (mail-in-a-box's
`setup/management.sh`: `cat > $inst_dir/start <<EOF ... exec gunicorn ... EOF`, then
`conf/mailinabox.service`'s `ExecStart=/usr/local/lib/mailinabox/start`). Such a file is the
here-document's text at that absolute path, for every launch that runs the path and finds
it nowhere else (not beside its file, not in an image of the run). `cat > PATH <<EOF`, `cat
<<EOF > PATH` and `tee PATH <<EOF` write it; `>>` and `tee -a` append to a file not known, so
they write nothing here. PATH and, when the delimiter is unquoted, the text have the script's
own plain assignments made before the line expanded (`inst_dir=/usr/local/lib/mailinabox`);
any other `$NAME` stays as written, never guessed. The script is read, never run.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from servertune.check import memo
from servertune.check.commands import (
    WRITTEN_BY_SCRIPTS,
    ConfigFile,
    expand_shell,
    unknown_folder_key,
    without_comments,
)
from servertune.check.scripts import SHELL_SUFFIXES
from servertune.check.template_markers import SHEBANG

__all__ = ["scripts_written", "written_by_scripts", "written_where"]

#: A here-document redirection: `<<EOF`, `<<-EOF`, `<< 'EOF'`, `<<"EOF"`.
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
#: A plain assignment at the start of a line: `inst_dir=/usr/local/lib/mailinabox`.
_ASSIGNMENT = re.compile(r"\A(?:export\s+)?([A-Za-z_]\w*)=(\S*)\s*\Z")
#: The most files one run keeps (a repository of installers writes a few).
_MOST = 200


def written_where(paths: Sequence[Path], wanted: Callable[[str], bool]) -> Iterator[ConfigFile]:
    """The files the scripts among `paths` write with here-documents at a path `wanted` takes
    (a unit folder, nginx's config folder), in order; a script that cannot be read writes
    none."""
    from servertune.check.budget import each_within_budget

    # One over its budget is left out: its own reading says that it overran it.
    for _, written in each_within_budget(paths, _written_by):
        yield from (file for target, file in written.items() if wanted(target))


def _written_by(path: Path) -> dict[str, ConfigFile]:
    """`scripts_written` of the file `path`, none when it cannot be read."""
    # Asked by each file kind a script may write (units, fronts, command lookups): read once.
    return memo.recall(memo.run_table("scripts written"), path, lambda: _read_written(path))


def _read_written(path: Path) -> dict[str, ConfigFile]:
    from servertune.check.source import read_text

    try:
        return scripts_written(path, read_text(path))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}


def scripts_written(path: Path, text: str) -> dict[str, ConfigFile]:
    """The files the script `path` writes with a here-document, by absolute path: each the
    document's text at its own lines of `path` (the lines before it left blank)."""
    if not ("<<" in text or "echo" in text) or not (
        path.suffix in SHELL_SUFFIXES or SHEBANG.match(text)
    ):
        return {}
    lines = text.splitlines()
    known: dict[str, str] = {}
    written: dict[str, ConfigFile] = {}
    index = 0
    while index < len(lines):
        echoed = _echoed(lines, index, known)
        if echoed is not None:
            _write(written, path, index, *echoed[1:])
            index = echoed[0]
            continue
        line = without_comments(lines[index]).strip()
        index += 1
        found = _HEREDOC.search(line)
        if found is None:
            _assign(line, known)
            continue
        strip, quoted, delimiter = found[1] == "-", bool(found[2]), found[3]
        start = index
        while (
            index < len(lines)
            and (lines[index].lstrip("\t") if strip else lines[index]) != delimiter
        ):
            index += 1
        body = [b.lstrip("\t") if strip else b for b in lines[start:index]]
        index += 1
        target = _target(line[: found.start()] + " " + line[found.end() :], known)
        if target is not None:
            document = "\n".join(body) + "\n"
            if not quoted:
                document = _expanded(document, known)
            written[target] = ConfigFile("\n" * start + document, path)
    return written


#: `echo "` opening a double-quoted text (of one line or several).
_ECHO = re.compile(r'\A\s*echo\s+"')
#: What follows the text's closing quote: `> PATH` or `>> PATH`, nothing else.
_REDIRECT = re.compile(r"\s*(>>?)\s*(\S+?)\s*;?\s*(?:#.*)?")
#: The most lines one echoed text spans.
_ECHO_LINES = 500


def _echoed(
    lines: Sequence[str], at: int, known: Mapping[str, str]
) -> tuple[int, str, str, bool] | None:
    """(the index after it, the path, the text, whether it appends) of `echo "TEXT" > PATH`
    (or `>> PATH`) starting at line `at`, TEXT spanning lines; None for any other line or a
    path not known."""
    found = _ECHO.match(lines[at])
    if found is None:
        return None
    rest, parts, index = lines[at][found.end() :], [], at
    while (close := _closing_quote(rest)) is None:
        parts.append(rest)
        index += 1
        if index >= len(lines) or index - at > _ECHO_LINES:
            return None
        rest = lines[index]
    parts.append(rest[:close])
    redirect = _REDIRECT.fullmatch(rest[close + 1 :])
    if redirect is None:
        return None
    path = redirect[2].strip("'\"")
    if "$" in path:
        path = expand_shell(path, known) or ""
    if not path.startswith("/") or "$" in path or "`" in path:
        return None
    text = re.sub(r'\\(["\\])', r"\1", _expanded("\n".join(parts), known))
    return index + 1, posixpath.normpath(path), text + "\n", redirect[1] == ">>"


def _closing_quote(text: str) -> int | None:
    """The index of the first `"` of `text` no backslash escapes; None when none does."""
    escaped = False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            return index
    return None


def _write(
    written: dict[str, ConfigFile], path: Path, start: int, target: str, text: str, append: bool
) -> None:
    """`text`, written at line index `start` of `path`, as `target`'s content (`>`) or after
    it (`>>`: only to a file the same script wrote before, each text kept at its own lines)."""
    if not append:
        written[target] = ConfigFile("\n" * start + text, path)
        return
    before = written.get(target)
    if before is None or before.file != path:
        return  # appended to a file not known here
    padding = "\n" * max(start - before.text.count("\n"), 0)
    written[target] = ConfigFile(before.text + padding + text, path)


def _assign(line: str, known: dict[str, str]) -> None:
    """`NAME=value` (a literal, or one of the names known before) recorded; a name assigned
    from what only the running shell knows is forgotten."""
    found = _ASSIGNMENT.match(line)
    if found is None:
        return
    value = expand_shell(found[2].strip("'\""), known) if "$" in found[2] else found[2]
    if value is None or "`" in value or "$(" in found[2]:
        known.pop(found[1], None)
    else:
        known[found[1]] = value.strip("'\"")


def _target(command: str, known: Mapping[str, str]) -> str | None:
    """The absolute path `cat > PATH` / `cat <<EOF > PATH` / `tee PATH` (before a `;` or
    `|`) writes, its variables known; None for any other command or a path not known."""
    try:
        words = shlex.split(command.split(";")[0].split("|")[-1])
    except ValueError:
        return None
    while words and words[0] == "sudo":
        words = words[1:]
    if words[:1] == ["cat"]:
        after = [w for w in words[1:] if w.startswith(">")]
        if len(after) != 1 or after[0].startswith(">>"):
            return None
        path = after[0][1:] or (words[words.index(after[0]) + 1] if after[0] != words[-1] else "")
    elif words[:1] == ["tee"]:
        operands = _without_redirections(words[1:])
        if len(operands) != 1 or operands[0].startswith("-"):
            return None  # `tee -a` appends; several files, or none
        path = operands[0]
    else:
        return None
    if "$" in path:
        expanded = expand_shell(path, known)
        if expanded is None and unknown_folder_key(Path(), path) is not None:
            return path  # below a folder only the running script knows: `unknown_folder_key`
        path = expanded or ""
    if not path.startswith("/") or "$" in path or "`" in path:
        return None
    return posixpath.normpath(path)


def _without_redirections(words: list[str]) -> list[str]:
    """`words` without their output redirections (`>/dev/null`, `> /dev/null`, `2>&1`)."""
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif re.fullmatch(r"\d*>>?", word):
            skip = True  # its target is the next word
        elif not re.match(r"\d*>", word):
            kept.append(word)
    return kept


def _expanded(text: str, known: Mapping[str, str]) -> str:
    """An unquoted here-document's text with the names known expanded (`$venv`, `${venv}`)
    and `\\$` a literal `$`, as the shell writes it; any other `$NAME` as written."""

    def one(found: re.Match[str]) -> str:
        name = found[1] or found[2]
        return known.get(name, found[0])

    text = re.sub(r"(?<!\\)\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))", one, text)
    return text.replace("\\$", "$").replace("\\`", "`")


@contextmanager
def written_by_scripts(paths: Sequence[Path]) -> Iterator[None]:
    """The files the run's scripts write with here-documents, and those its deploy tools
    install (`deploy_installs`), found by absolute path by any command line's lookup
    (`commands.beside`) while the block runs."""
    from servertune.check.budget import each_within_budget
    from servertune.check.deploy_installs import installed_files

    written: dict[str, ConfigFile] = {}
    for path, found in each_within_budget(paths, _written_by):
        for target, file in found.items():
            # Below a folder only the running script knows: found by that script alone.
            key = unknown_folder_key(path, target) if target.startswith("$") else target
            if key is not None:
                written.setdefault(key, file)  # two writers: the first file read
        if len(written) > _MOST:
            break
    # A file a deploy tool installs there (an ansible `template:` task's src) is the same
    # kind of answer: the repository file at an absolute path of the host.
    for target, file in installed_files(paths).items():
        written.setdefault(target, file)
    hook = WRITTEN_BY_SCRIPTS.set(written.get if written else None)
    try:
        yield
    finally:
        WRITTEN_BY_SCRIPTS.reset(hook)
