"""A baseline: today's findings, recorded so that `check --baseline FILE` fails only on new ones.

A team adopting `check` on a repository with findings records them once
(`check --baseline-write FILE`) and fixes them over time, while every new finding fails the build
at once. An entry is its rule, its file (relative to the baseline's directory, so the file is
read the same from any working directory) and a hash of the written line it points at (or,
failing that, its message), never the line number: a finding moved by an edit above it is still
the same finding; its line and message changed, or the rule fixed, it is not. Entries that match no finding any more are reported as
fixed, so the baseline can be rewritten smaller.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from servertune.check.model import CheckInputError, Finding
from servertune.check.source import read_text

__all__ = ["BASELINE_VERSION", "Baseline", "Entry", "match", "read_baseline", "write_baseline"]

#: The file's format version; a file of another version is refused, not misread.
BASELINE_VERSION = 1


@dataclass(frozen=True)
class Entry:
    """One recorded finding: rule, file, the hash of its line's text; its line and message as
    they were when recorded (for people reading the file and the stale list)."""

    rule: str
    file: str
    fingerprint: str
    line: int
    message: str

    def key(self) -> tuple[str, str, str]:
        """What a finding must share with the entry to be the one recorded."""
        return (self.rule, self.file, self.fingerprint)


@dataclass(frozen=True)
class Baseline:
    """A baseline file read: where it is and its entries."""

    file: Path
    entries: tuple[Entry, ...]


class _Lines:
    """Files' lines, each file read once (a file that cannot be read has none)."""

    def __init__(self) -> None:
        self._files: dict[Path, list[str]] = {}

    def text(self, path: Path, line: int) -> str:
        if path not in self._files:
            try:
                self._files[path] = read_text(path).splitlines()
            except CheckInputError:
                self._files[path] = []
        lines = self._files[path]
        return " ".join(lines[line - 1].split()) if 0 < line <= len(lines) else ""


def _relative(path: Path, root: Path) -> str:
    try:
        return PurePosixPath(Path(os.path.relpath(path.absolute(), root.absolute()))).as_posix()
    except ValueError:  # another drive (Windows)
        return path.as_posix()


def _entry(finding: Finding, root: Path, lines: _Lines) -> Entry:
    text = lines.text(finding.at.file, finding.at.line)
    digest = hashlib.sha256(f"{finding.rule}\0{text}".encode()).hexdigest()[:16]
    file = _relative(finding.at.file, root)
    return Entry(finding.rule, file, digest, finding.at.line, finding.message)


def write_baseline(path: Path, findings: Sequence[Finding]) -> int:
    """Record `findings` in `path` (written whole or not at all, never over a special file);
    the count recorded."""
    lines = _Lines()
    entries = [_entry(f, path.parent, lines) for f in findings]
    document = {
        "servertune-baseline": BASELINE_VERSION,
        "findings": [
            {"rule": e.rule, "file": e.file, "fingerprint": e.fingerprint, "line": e.line,
             "message": e.message}
            for e in entries
        ],
    }  # fmt: skip
    from servertune.files import write_atomically

    write_atomically({path.name: json.dumps(document, indent=2) + "\n"}, path.parent)
    return len(entries)


def read_baseline(path: Path) -> Baseline:
    """The baseline in `path`, or CheckInputError naming the file and what is wrong."""
    text = read_text(path)
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        raise CheckInputError(f"{path}: not a baseline (not JSON: {error})") from None
    if not isinstance(document, dict) or document.get("servertune-baseline") != BASELINE_VERSION:
        raise CheckInputError(
            f"{path}: not a servertune baseline of version {BASELINE_VERSION} "
            "(write one with --baseline-write)"
        )
    raw = document.get("findings")
    if not isinstance(raw, list):
        raise CheckInputError(f"{path}: findings: expected a list")
    entries: list[Entry] = []
    for index, item in enumerate(raw):
        try:
            entries.append(
                Entry(_str(item, "rule"), _str(item, "file"), _str(item, "fingerprint"),
                      _int(item, "line"), _str(item, "message"))
            )  # fmt: skip
        except (TypeError, KeyError) as error:
            raise CheckInputError(f"{path}: findings[{index}]: {error.args[0]}") from None
    return Baseline(path, tuple(entries))


def _str(item: object, key: str) -> str:
    if not isinstance(item, dict) or not isinstance(item.get(key), str):
        raise TypeError(f"{key}: expected a string")
    value: str = item[key]
    return value


def _int(item: object, key: str) -> int:
    if not isinstance(item, dict) or type(item.get(key)) is not int:
        raise TypeError(f"{key}: expected an integer")
    value: int = item[key]
    return value


def match(
    baseline: Baseline, findings: Sequence[Finding]
) -> tuple[list[Finding], list[Finding], list[Entry]]:
    """(findings the baseline records, new findings, entries no finding matches any more).

    A finding matches an entry of its rule and file whose line text is the same; failing that,
    one whose message is the same (a finding about a value the file leaves at its default
    points at line 1, whatever is written there now). Entries are counted: two recorded
    findings of one rule on equal lines excuse two, not three."""
    lines = _Lines()
    left = list(baseline.entries)
    known: list[Finding] = []
    new: list[Finding] = []
    unmatched: list[tuple[Finding, Entry]] = []
    for finding in findings:
        entry = _entry(finding, baseline.file.parent, lines)
        same = next((e for e in left if e.key() == entry.key()), None)
        if same is None:
            unmatched.append((finding, entry))
        else:
            left.remove(same)
            known.append(finding)
    for finding, entry in unmatched:
        same = next(
            (
                e
                for e in left
                if (e.rule, e.file, e.message) == (entry.rule, entry.file, entry.message)
            ),
            None,
        )
        if same is None:
            new.append(finding)
        else:
            left.remove(same)
            known.append(finding)
    return known, new, left
