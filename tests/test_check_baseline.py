"""`check --baseline-write FILE` records today's findings; `check --baseline FILE` then fails
only on new ones, tolerates line moves, and reports the entries fixed since."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.baseline import read_baseline, write_baseline
from servertune.check.settings import CheckSettings
from servertune.check.suppress import suppress
from servertune.cli import app
from servertune.sizing import Machine

#: On 2 cores: workers-over-cores (line 1) and max-requests-without-jitter (line 2), both advice.
GUNICORN = "workers = 4\nmax_requests = 1000\n"


def check(*argv: str | Path) -> tuple[int, str]:
    """`servertune check ARGV --cores 2 --fail-on advice` in process: (exit status, stdout and
    stderr). The run fails on advice, so an exit 0 says the baseline took the findings."""
    result = CliRunner().invoke(
        app, ["check", *map(str, argv), "--cores", "2", "--fail-on", "advice"]
    )
    return result.exit_code, result.output


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, Path]:
    """A gunicorn config with two findings, and the baseline recording them."""
    config = tmp_path / "gunicorn.conf.py"
    config.write_text(GUNICORN)
    baseline = tmp_path / "servertune-baseline.json"
    status, output = check(config, "--baseline-write", baseline)
    assert status == 0, output
    assert output.endswith(f"recorded 2 findings in {baseline}\n")
    return config, baseline


def test_a_baseline_records_rule_file_and_line_hash_not_line_number(
    recorded: tuple[Path, Path],
) -> None:
    """Each entry: rule, the file relative to the baseline, a fingerprint, line and message."""
    _, baseline = recorded
    document = json.loads(baseline.read_text())
    assert document["servertune-baseline"] == 1
    entries = [(e["rule"], e["file"], e["line"]) for e in document["findings"]]
    assert entries == [
        ("workers-over-cores", "gunicorn.conf.py", 1),
        ("max-requests-without-jitter", "gunicorn.conf.py", 2),
    ]
    assert all(len(e["fingerprint"]) == 16 for e in document["findings"])


def test_recorded_findings_pass_and_are_listed_as_ignored(recorded: tuple[Path, Path]) -> None:
    """With the baseline: exit 0, both findings listed as ignored by the baseline."""
    config, baseline = recorded
    status, output = check(config, "--baseline", baseline)
    assert status == 0, output
    assert f"by {baseline}:1 (baseline): recorded in the baseline {baseline}" in output
    assert output.rstrip().endswith(
        "no findings in 1 file, judged for 2 cores (--cores); 2 findings ignored (listed above)"
    )


def test_line_moves_are_tolerated(recorded: tuple[Path, Path]) -> None:
    """Lines added above both findings: still the recorded findings, exit 0."""
    config, baseline = recorded
    config.write_text('"""The web tier."""\n\nimport os\n\n' + GUNICORN)
    status, output = check(config, "--baseline", baseline)
    assert status == 0, output
    assert "gunicorn.conf.py:6: advice [max-requests-without-jitter]" in output


def test_only_a_new_finding_fails(recorded: tuple[Path, Path]) -> None:
    """A changed line is a new finding (exit 1, shown as such); the entry it replaced is
    reported as fixed, in text and JSON."""
    config, baseline = recorded
    config.write_text("workers = 4\nmax_requests = 2000\n")
    status, output = check(config, "--baseline", baseline)
    assert status == 1, output
    assert "gunicorn.conf.py:2: advice [max-requests-without-jitter] " in output
    assert "max_requests_jitter = 200): max requests 2000 with no" in output
    assert f"fixed since {baseline} was written" in output
    [fixed] = [line for line in output.splitlines() if line.startswith("  gunicorn.conf.py:2: [")]
    assert fixed.startswith("  gunicorn.conf.py:2: [max-requests-without-jitter] ")
    assert "max requests 1000 with no" in fixed
    status, output = check(config, "--baseline", baseline, "--format", "json")
    document = json.loads(output)
    assert [f["rule"] for f in document["findings"]] == ["max-requests-without-jitter"]
    assert document["baseline"]["matched"] == 1
    assert [e["line"] for e in document["baseline"]["fixed"]] == [2]


def test_the_baseline_can_come_from_the_settings(
    recorded: tuple[Path, Path], tmp_path: Path
) -> None:
    """`baseline = "servertune-baseline.json"` in pyproject.toml: no flag needed."""
    config, _ = recorded
    (tmp_path / "pyproject.toml").write_text(
        '[tool.servertune.check]\nbaseline = "servertune-baseline.json"\n'
    )
    assert check(config)[0] == 0


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{", "not a baseline (not JSON"),
        ('{"findings": []}', "not a servertune baseline of version 1"),
        ('{"servertune-baseline": 1, "findings": {}}', "findings: expected a list"),
        ('{"servertune-baseline": 1, "findings": [{"rule": 1}]}', "findings[0]: rule: expected"),
    ],
)
def test_a_bad_baseline_is_one_error_line(
    text: str, words: str, recorded: tuple[Path, Path]
) -> None:
    """A baseline that is not one: exit 2, one `error:` line naming it."""
    config, baseline = recorded
    baseline.write_text(text)
    status, output = check(config, "--baseline", baseline)
    assert status == 2
    assert output.count("\n") == 1
    assert output.startswith(f"error: {baseline}: ")
    assert words in output


def test_no_baseline_is_written_when_a_file_cannot_be_read(tmp_path: Path) -> None:
    """An unreadable file: exit 2 and no baseline (it would record a partial run)."""
    config = tmp_path / "gunicorn.conf.py"
    config.write_text(GUNICORN)
    baseline = tmp_path / "baseline.json"
    status, _ = check(config, tmp_path / "missing.conf", "--baseline-write", baseline)
    assert status == 2
    assert not baseline.exists()


def test_baseline_and_baseline_write_together_are_refused(recorded: tuple[Path, Path]) -> None:
    """Reading and writing a baseline in one run: one `error:` line."""
    config, baseline = recorded
    status, output = check(config, "--baseline", baseline, "--baseline-write", baseline)
    assert (status, output) == (
        2, "error: --baseline and --baseline-write: give one of them, not both\n"
    )  # fmt: skip


def _kinds() -> list[tuple[str, dict[str, str], list[str]]]:
    """Every file kind check reads, as the ignore tests write them, without their ignores."""
    from .test_check_ignores import CASES, _without_ignores

    seen: dict[str, tuple[str, dict[str, str], list[str]]] = {}
    for name, files, named, _, _ in CASES:
        kind = name.split(",")[0]
        seen.setdefault(kind, (kind, {n: _without_ignores(t) for n, t in files.items()}, named))
    return list(seen.values())


def _run(root: Path, files: dict[str, str], named: list[str], **options: object) -> CheckResult:
    for name, text in files.items():
        (root / name).write_text(text)
    machine = Machine.read().model_copy(update={"cores": 2, "cores_source": "--cores"})
    result = check_files([root / n for n in named], machine=machine)
    settings = options.get("settings", CheckSettings())
    assert isinstance(settings, CheckSettings)
    baseline = options.get("baseline")
    return suppress(
        result, settings, read_baseline(baseline) if isinstance(baseline, Path) else None
    )


KINDS = _kinds()


@pytest.mark.parametrize(("files", "named"), [k[1:] for k in KINDS], ids=[k[0] for k in KINDS])
def test_in_every_file_kind_a_baseline_survives_lines_added_above(
    files: dict[str, str], named: list[str], tmp_path: Path
) -> None:
    """Record, then add a blank line at the top of every file: every finding still matches its
    entry (none new, none fixed), though each moved down a line."""
    before = _run(tmp_path, files, named)
    assert before.findings
    baseline = tmp_path / "baseline.json"
    write_baseline(baseline, before.findings)
    after = _run(tmp_path, {n: "\n" + t for n, t in files.items()}, named, baseline=baseline)
    assert after.findings == ()
    assert after.baseline is not None
    assert (after.baseline.matched, after.baseline.stale) == (len(before.findings), ())
    moved = {(s.finding.rule, s.finding.at.line) for s in after.suppressed}
    assert moved != {(f.rule, f.at.line) for f in before.findings}


@pytest.mark.parametrize(("files", "named"), [k[1:] for k in KINDS], ids=[k[0] for k in KINDS])
def test_in_every_file_kind_per_file_ignores_apply(
    files: dict[str, str], named: list[str], tmp_path: Path
) -> None:
    """`per-file-ignores` naming each file's rules: nothing left, each finding ignored
    `external`ly with the glob as its reason."""
    before = _run(tmp_path, files, named)
    table: dict[str, tuple[str, ...]] = {}
    for finding in before.findings:
        table[finding.at.file.name] = (*table.get(finding.at.file.name, ()), finding.rule)
    settings = CheckSettings(tmp_path / "servertune.toml", "[check]", {"per-file-ignores": table})
    after = _run(tmp_path, files, named, settings=settings)
    assert after.findings == ()
    assert len(after.suppressed) == len(before.findings)
    assert {s.suppression.kind for s in after.suppressed} == {"external"}
