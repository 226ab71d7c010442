"""Ignored findings are counted, not hidden: the text report lists each with the line that
ignores it and why, JSON carries them under `suppressed`, SARIF as `suppressions`."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from typer.testing import CliRunner

from servertune.check.audit import CheckResult
from servertune.check.model import Finding, Location, Severity
from servertune.check.output import format_sarif
from servertune.check.traffic import TRAFFIC_RULES
from servertune.cli import app

WHY = "the load balancer retries on another instance"


def _repository(root: Path) -> tuple[Path, Path]:
    """Two faults (warnings: each would fail the run): a gunicorn config's gthread-one-thread
    (line 2) ignored by per-file-ignores, a Procfile's option-given-twice ignored inline."""
    (root / "pyproject.toml").write_text(
        '[tool.servertune.check]\ncores = 2\nper-file-ignores = { "gunicorn.conf.py" = '
        '["gthread-one-thread"] }\n'
    )
    config = root / "gunicorn.conf.py"
    config.write_text('worker_class = "gthread"\nthreads = 1\n')
    procfile = root / "Procfile"
    procfile.write_text(
        "web: gunicorn app:app -b 0.0.0.0:8000 --timeout 30 --timeout 60"
        f"  # servertune: ignore[option-given-twice] {WHY}\n"
    )
    return config, procfile


def check(*argv: str | Path) -> tuple[int, str]:
    """`servertune check ARGV` in process: (exit status, stdout and stderr)."""
    result = CliRunner().invoke(app, ["check", *map(str, argv)])
    return result.exit_code, result.output


def test_the_text_report_says_how_many_were_ignored_and_by_which_line(tmp_path: Path) -> None:
    """Each ignored finding with the line that ignores it and the reason; the summary counts them."""
    config, procfile = _repository(tmp_path)
    status, output = check(config, procfile)
    assert status == 0, output
    settings = tmp_path / "pyproject.toml"
    assert output.splitlines() == [
        "ignored (counted here, not in the exit status):",
        f"  {procfile}:1: warning [option-given-twice] by {procfile}:1 (comment): {WHY}",
        (
            f"  {config}:2: warning [gthread-one-thread] by {settings}:3 (per-file-ignores): "
            f'per-file-ignores "gunicorn.conf.py" in {settings}'
        ),
        (
            "no findings in 2 files, judged for 2 cores (cores in "
            f"{settings}); 2 findings ignored (listed above)"
        ),
    ]


def test_json_carries_ignored_findings_with_kind_reason_and_location(tmp_path: Path) -> None:
    """`suppressed`: the finding as `findings` writes it, plus {kind, by, reason, location}."""
    config, procfile = _repository(tmp_path)
    document = json.loads(check(config, procfile, "--format", "json")[1])
    assert document["findings"] == []
    inline = document["suppressed"][0]
    assert inline["rule"] == "option-given-twice"
    assert inline["suppressed"] == {
        "kind": "inSource",
        "by": "comment",
        "reason": WHY,
        "location": {"file": str(procfile), "line": 1},
    }
    assert document["suppressed"][1]["suppressed"]["kind"] == "external"


def test_sarif_marks_ignored_results_with_suppressions(tmp_path: Path) -> None:
    """SARIF 2.1.0 §3.35: an inline ignore is kind `inSource`, a settings file's `external`,
    each with its justification; code scanning then shows them as dismissed."""
    config, procfile = _repository(tmp_path)
    log = json.loads(check(config, procfile, "--format", "sarif")[1])
    [run] = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert {rules[r["ruleIndex"]]["id"] for r in run["results"]} == set(by_rule)
    [inline] = by_rule["option-given-twice"]["suppressions"]
    assert inline["kind"] == "inSource"
    assert inline["justification"] == WHY
    assert inline["location"]["physicalLocation"]["region"]["startLine"] == 1
    [external] = by_rule["gthread-one-thread"]["suppressions"]
    assert external["kind"] == "external"
    assert external["justification"].startswith('per-file-ignores "gunicorn.conf.py"')


def test_sarif_declares_the_ignore_and_traffic_rules(tmp_path: Path) -> None:
    """A result of a traffic rule or of `unused-ignore` points at a rule the driver declares
    (the driver listed only the config rules: a traffic finding had no index)."""
    at = Location(tmp_path / "nginx.conf", 3)
    traffic = next(iter(TRAFFIC_RULES.values()))
    findings = (
        traffic.finding(at, "p99.9 over the timeout", "raise it"),
        Finding("unused-ignore", Severity.info, at, "matches nothing", "remove it", ""),
    )
    result = CheckResult((at.file,), (), (), (), findings, None, None)
    [run] = json.loads(format_sarif(dataclasses.replace(result)))["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [rules[r["ruleIndex"]]["id"] for r in run["results"]] == [traffic.id, "unused-ignore"]
