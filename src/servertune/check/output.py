"""Findings as text for people, JSON for scripts, SARIF 2.1.0 for code-scanning UIs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from servertune import __version__
from servertune.check.audit import CheckResult
from servertune.check.catalog import catalog
from servertune.check.graph import Launch, describe, launch_json, launches
from servertune.check.ignored import Suppressed
from servertune.check.model import Finding, Location, Note, Severity
from servertune.check.rules import RULES
from servertune.check.unstarted import unused_launches

__all__ = ["FORMATS", "format_json", "format_sarif", "format_text"]

#: SARIF's result levels for our severities.
_SARIF_LEVEL = {
    Severity.error: "error",
    Severity.warning: "warning",
    Severity.info: "note",
    Severity.advice: "note",
}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def format_text(result: CheckResult) -> str:
    """One block per fault (file:line, severity, rule, what, fix, why), then servertune's
    advice in a section of its own, then the coverage notes and a summary line."""
    lines: list[str] = []
    faults = [f for f in result.findings if f.severity > Severity.advice]
    advice = [f for f in result.findings if f.severity == Severity.advice]
    for f in faults:
        lines.extend(_block(f))
    if advice:
        lines.append(
            "advice (servertune's plan, not a fault; the exit status ignores it unless "
            "--fail-on advice):"
        )
        for f in advice:
            lines.extend(_block(f))
    if result.discovered:  # a folder walked: what was found and how it links
        lines += _graph_text(result)
    # A folder's launch graph shows the development launches; a run on files lists them here.
    notes = [n for n in result.notes if not (result.discovered and n.kind == "development-launch")]
    if notes:
        lines.append("not checked (coverage, not findings; the exit status ignores them):")
        lines.extend(f"  {n.at}: [{n.kind}] {_without_file(n)}" for n in notes)
    lines += _ignored_text(result)
    files = _plural(len(result.files), "file")
    if result.cores is not None and result.apps:
        # Which cores the CPU-count rules judged by, and why (a finding must not
        # silently depend on the machine that runs check).
        files += f", judged for {_plural(result.cores[0], 'core')} ({result.cores[1]})"
    counted = f" and {_plural(len(advice), 'piece')} of advice" if advice else ""
    if faults:
        counts = ", ".join(
            _plural(sum(f.severity == s for f in faults), s.name)
            for s in sorted(Severity, reverse=True)
            if any(f.severity == s for f in faults)
        )
        lines.append(f"{_plural(len(faults), 'finding')} ({counts}){counted} in {files}")
    elif not result.apps and not result.nginx and not result.balancer_links:
        lines.append(f"no server to check in {files} (see the notes above)")
    else:
        lines.append(f"no findings{counted} in {files}")
    if result.suppressed:
        lines[-1] += f"; {_plural(len(result.suppressed), 'finding')} ignored (listed above)"
    return "\n".join(lines)


def _block(f: Finding) -> list[str]:
    """A finding as its lines: where, severity, rule and what; then fix, see and why."""
    lines = [f"{f.at}: {f.severity.name} [{f.rule}] {f.message}", f"    fix: {f.fix}"]
    lines.extend(f"    see: {other}" for other in f.related)
    lines.append(f"    why: {f.backing}")
    return lines


def _ignored_text(result: CheckResult) -> list[str]:
    """The ignored findings, each with the line that ignores it and why; the baseline's stale
    entries."""
    lines: list[str] = []
    if result.suppressed:
        lines.append("ignored (counted here, not in the exit status):")
        for s in result.suppressed:
            f, how = s.finding, s.suppression
            lines.append(
                f"  {f.at}: {f.severity.name} [{f.rule}] by {how.at} ({how.by}): {how.reason or '(no reason given)'}"
            )
    if result.baseline is not None and result.baseline.stale:
        lines.append(
            f"fixed since {result.baseline.file} was written (rewrite it with --baseline-write):"
        )
        lines.extend(f"  {e.file}:{e.line}: [{e.rule}] {e.message}" for e in result.baseline.stale)
    return lines


def _launches(result: CheckResult) -> list[Launch]:
    """The launch graph; in a walked folder, each server config nothing followed here starts
    said as unused or not followed, instead of as a launch of its own."""
    found = launches(result.apps, result.links, result.balancer_links)
    if not result.discovered:
        return found
    return unused_launches(found, result.apps, result.notes, result.files)


def _no_server(result: CheckResult) -> str:
    """The launch graph's line when no launch was linked: none found, or none followed."""
    stopped = sum(n.kind == "not-followed" for n in result.notes)
    if not stopped:
        return "  no app server found"
    return (
        f"  no app server linked: {stopped} launch step(s) not followed (the not-followed "
        "notes below say where each stopped and why)"
    )


def _graph_text(result: CheckResult) -> list[str]:
    """What starts each server and what fronts it; which env files are loaded; what each walk
    read and skipped."""
    lines = ["how the servers start (launch graph):"]
    lines += [f"  {describe(one)}" for one in _launches(result)] or [_no_server(result)]
    lines += [f"  {n.message}" for n in result.notes if n.kind == "development-launch"]
    for path, loaders in result.env_files:
        by = ", ".join(str(p) for p in loaders) or "nothing found here"
        lines.append(f"  env file {path}: loaded by {by}")
    for walk in result.discovered:
        lines.append(f"  {_coverage_line(walk, result)}")
    return lines


def _read_by(walk: Any, result: CheckResult) -> list[Path]:
    """The files a walk read: those it found, and the env files a file it read loads (compose's
    `env_file:`, a unit's EnvironmentFile=) under its root, read for their variables though no
    reader claims them by name (AlexsLemonade/refinebio's api/environments/local)."""
    read = list(walk.files)
    loaded = [path for path, by in result.env_files if by and path not in read]
    root = Path(walk.root).resolve()
    return read + [p for p in dict.fromkeys(loaded) if p.resolve().is_relative_to(root)]


def _coverage_line(walk: Any, result: CheckResult) -> str:
    """One walk's summary: files read, templates and unclaimed files skipped, paths ignored."""
    parts = [f"{_plural(len(_read_by(walk, result)), 'file')} read"]
    if walk.templates:
        parts.append(f"{_plural(len(walk.templates), 'template')} skipped")
    if walk.unclaimed:
        parts.append(f"{_plural(len(walk.unclaimed), 'file')} no reader claims")
    parts.append(f"{walk.ignored} ignored (.gitignore, vendored or generated)")
    return f"found in {walk.root}: " + ", ".join(parts)


def _walks_json(result: CheckResult) -> list[dict[str, Any]]:
    return [
        {
            "root": str(walk.root),
            "read": [str(p) for p in _read_by(walk, result)],
            "templates": [{"file": str(p), "line": line} for p, line in walk.templates],
            "unclaimed": [str(p) for p in walk.unclaimed],
            "ignored": walk.ignored,
        }
        for walk in result.discovered
    ]


def _graph_json(result: CheckResult) -> dict[str, Any]:
    """The launch graph, env files and walks, the same in JSON and in SARIF's properties."""
    return {
        "launches": [launch_json(one) for one in _launches(result)],
        "env_files": [
            {"file": str(path), "loaded_by": [str(p) for p in by]} for path, by in result.env_files
        ],
        "walks": _walks_json(result),
    }


def _without_file(n: Note) -> str:
    """The note's message without its own leading `file:` (the line already starts with it)."""
    for prefix in (f"{n.at}: ", f"{n.at.file}: "):
        if n.message.startswith(prefix):
            return n.message[len(prefix) :]
    return n.message


def _note_json(n: Note) -> dict[str, Any]:
    return {
        "kind": n.kind,
        "file": str(n.at.file),
        "line": n.at.line,
        "message": _without_file(n),
        "fix": n.fix,
    }


def _kind_of(rule_id: str) -> str:
    """The kind a rule declares (a traffic rule, or an ignore's own rule, is a fault)."""
    rule = RULES.get(rule_id)
    return rule.kind if rule is not None else "fault"


def _kind(f: Finding) -> str:
    """The kind its finding's rule declares."""
    return _kind_of(f.rule)


def _finding_json(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        # advice below info: servertune's plan, not a fault (docs/check.md).
        "severity": f.severity.name,
        "kind": _kind(f),
        "file": str(f.at.file),
        "line": f.at.line,
        "message": f.message,
        "fix": f.fix,
        "backing": f.backing,
        "related": [{"file": str(r.file), "line": r.line} for r in f.related],
    }


def _suppressed_json(s: Suppressed) -> dict[str, Any]:
    how = s.suppression
    where = {"file": str(how.at.file), "line": how.at.line}
    return {
        **_finding_json(s.finding),
        "suppressed": {"kind": how.kind, "by": how.by, "reason": how.reason, "location": where},
    }


def format_json(result: CheckResult) -> str:
    """The files read, the links found and every finding, as one JSON document."""
    document = {
        "files": [str(p) for p in result.files],
        "load_balancer": None
        if result.lb is None
        else {"name": result.lb.name, "idle_timeout_s": result.lb.idle_timeout_s},
        "links": [
            {
                "nginx": str(link.passing.at),
                "upstream": link.upstream.name if link.upstream else None,
                "server": link.server.value,
                "app": str(link.app.file),
            }
            for link in result.links
        ],
        # HAProxy backends' server lines and the nginx or app server listening there.
        "balancer_links": [
            {
                "balancer": str(link.server.at),
                "backend": link.balancer.name,
                "server": link.server.value,
                "maxconn": None if link.maxconn is None else link.maxconn.value,
                "pool_max_conn": None if link.pool is None else link.pool.value,
                "nginx": None if link.nginx is None else str(link.nginx.file),
                "app": None if link.app is None else str(link.app.file),
            }
            for link in result.balancer_links
        ],
        # What starts each server, through which files, behind which front (`check/graph.py`).
        **_graph_json(result),
        "findings": [_finding_json(f) for f in result.findings],
        # Ignored findings (settings, ignore comments, a baseline): never in the exit status.
        "suppressed": [_suppressed_json(s) for s in result.suppressed],
        # Coverage: what was not followed or not known; never a finding, never in the exit.
        "coverage": [_note_json(n) for n in result.notes],
        # Files not read at all (the exit status is 2 when there is one).
        "errors": [
            {"file": str(e.file), "line": e.line, "message": e.message} for e in result.errors
        ],
        "cores": None
        if result.cores is None
        else {"count": result.cores[0], "source": result.cores[1]},
    }
    if result.baseline is not None:
        document["baseline"] = {
            "file": str(result.baseline.file),
            "matched": result.baseline.matched,
            "fixed": [
                {"rule": e.rule, "file": e.file, "line": e.line, "message": e.message}
                for e in result.baseline.stale
            ],
        }
    return json.dumps(document, indent=2)


def _location(at: Location) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": at.file.as_posix()},
            "region": {"startLine": at.line},
        }
    }


def _sarif_result(f: Finding, index: dict[str, int]) -> dict[str, Any]:
    return {
        "ruleId": f.rule,
        "ruleIndex": index[f.rule],
        "level": _SARIF_LEVEL[f.severity],
        "message": {"text": f"{f.message}. Fix: {f.fix}"},
        "locations": [_location(f.at)],
        "relatedLocations": [{"id": i, **_location(r)} for i, r in enumerate(f.related, start=1)],
        "properties": {
            "fix": f.fix,
            "backing": f.backing,
            "severity": f.severity.name,
            "kind": _kind(f),
        },
    }


def format_sarif(result: CheckResult) -> str:
    """A SARIF 2.1.0 log with one run: every rule in the driver, every finding a result."""
    known = catalog()
    rules = [
        {
            "id": rule.id,
            "name": rule.id,
            "shortDescription": {"text": rule.title},
            "help": {"text": f"Backed by: {rule.backing}"},
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
            "properties": {"kind": _kind_of(rule.id), "severity": rule.severity.name},
        }
        for rule in known.values()
    ]
    index = {rule_id: i for i, rule_id in enumerate(known)}
    results = [_sarif_result(f, index) for f in result.findings]
    for s in result.suppressed:
        # SARIF 3.35: kind inSource (a comment in the file), external (settings, a baseline);
        # code-scanning UIs show the result as dismissed, with the justification.
        how = s.suppression
        suppression = {
            "kind": how.kind,
            "status": "accepted",
            "justification": how.reason,
            "location": _location(how.at),
        }
        results.append({**_sarif_result(s.finding, index), "suppressions": [suppression]})
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "servertune",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "artifacts": [{"location": {"uri": p.as_posix()}} for p in result.files],
                "results": results,
                # The launch graph and the walks' coverage summary (SARIF 3.8: property bag).
                "properties": _graph_json(result),
                # SARIF's place for what the tool could not do: coverage notes are
                # notifications of level "note", files not read of level "error" (3.58).
                "invocations": [
                    {
                        "executionSuccessful": not result.errors,
                        "toolExecutionNotifications": [
                            {
                                "descriptor": {"id": n.kind},
                                "level": "note",
                                "message": {"text": _without_file(n)},
                                "locations": [_location(n.at)],
                            }
                            for n in result.notes
                        ]
                        + [
                            {
                                "descriptor": {"id": "file-not-read"},
                                "level": "error",
                                "message": {"text": e.message},
                                "locations": [_location(Location(e.file, e.line or 1))],
                            }
                            for e in result.errors
                        ],
                    }
                ],
            }
        ],
    }
    return json.dumps(log, indent=2)


FORMATS = {"text": format_text, "json": format_json, "sarif": format_sarif}
