"""`check`'s settings: `[tool.servertune.check]` in pyproject.toml or `[check]` in
servertune.toml, found upwards from the checked files; flags win; bad settings are one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.check.model import Severity
from servertune.check.settings import KEYS, find_settings, settings_table
from servertune.cli import app

from .support import REPO

#: Two pieces of advice on 2 cores: workers-over-cores (line 1) and max-requests-without-jitter
#: (line 2); they fail the run only with `--fail-on advice`.
GUNICORN = "workers = 4\nmax_requests = 1000\n"

#: A fault whatever the cores: gthread-one-thread (a warning, line 2).
FAULT = 'worker_class = "gthread"\nthreads = 1\n'


def check(*argv: str | Path) -> tuple[int, str]:
    """`servertune check ARGV` in process: (exit status, stdout and stderr)."""
    result = CliRunner().invoke(app, ["check", *map(str, argv)])
    return result.exit_code, result.output


def _project(root: Path, table: str, name: str = "pyproject.toml") -> Path:
    """A repository with `table` in its settings file and a gunicorn config in deploy/."""
    header = "[check]" if name == "servertune.toml" else "[tool.servertune.check]"
    (root / name).write_text(f"[project]\nname = 'x'\n\n{header}\n{table}" if name ==
                             "pyproject.toml" else f"{header}\n{table}")  # fmt: skip
    (root / "deploy").mkdir(exist_ok=True)
    config = root / "deploy" / "gunicorn.conf.py"
    config.write_text(GUNICORN)
    return config


def test_settings_are_found_upwards_from_the_checked_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cores = 8` in the repository's pyproject.toml applies to deploy/gunicorn.conf.py: 4
    workers are not over 8 cores; the summary says where the count came from. `--fail-on
    advice`: the run still fails, on max-requests-without-jitter alone."""
    config = _project(tmp_path, "cores = 8\n")
    monkeypatch.chdir(tmp_path / "deploy")
    status, output = check(config.name, "--fail-on", "advice")
    assert status == 1, output
    assert "[max-requests-without-jitter]" in output
    assert "workers-over-cores" not in output
    assert f"judged for 8 cores (cores in {tmp_path / 'pyproject.toml'})" in output


def test_a_pyproject_without_the_table_is_passed_over(tmp_path: Path) -> None:
    """A nested package's pyproject.toml without [tool.servertune.check] does not hide the
    repository's servertune.toml above it."""
    _project(tmp_path, "cores = 8\n", "servertune.toml")
    (tmp_path / "deploy" / "pyproject.toml").write_text("[project]\nname = 'servertune-user'\n")
    settings = find_settings(tmp_path / "deploy")
    assert settings.file is not None
    assert settings.file.name == "servertune.toml"
    assert settings.get("cores") == 8


def test_a_flag_wins_over_the_settings_file(tmp_path: Path) -> None:
    """`--cores 2` beats `cores = 8`: workers-over-cores (advice) is found again."""
    config = _project(tmp_path, "cores = 8\n")
    status, output = check(config, "--cores", "2", "--fail-on", "advice")
    assert status == 1
    assert "[workers-over-cores]" in output
    assert "judged for 2 cores (--cores)" in output


def test_show_settings_says_what_applied_and_from_where(tmp_path: Path) -> None:
    """`--show-settings`: the file read, each key's value, and whether the flag, the file or the
    default set it."""
    config = _project(
        tmp_path,
        'cores = 8\nlb = "aws-alb"\nseverity = { shared-socket = "off", '
        'graceful-below-timeout = "error" }\nper-file-ignores = { "legacy/*" = ["thunder-lock"] }\n',
    )
    status, output = check(config, "--show-settings", "--fail-on", "info")
    assert status == 0, output
    lines = output.splitlines()
    assert lines[0] == f"settings: {tmp_path / 'pyproject.toml'} [tool.servertune.check]"
    shown = {line.split(" = ")[0]: line for line in lines[1:]}
    assert list(shown) == [key.name for key in KEYS]
    assert shown["cores"].split("#")[1].strip() == str(tmp_path / "pyproject.toml")
    assert shown["fail-on"].startswith('fail-on = "info"')
    assert shown["fail-on"].endswith("# --fail-on")
    assert shown["rss-mb"].endswith("# default")
    assert 'severity = { shared-socket = "off", graceful-below-timeout = "error" }' in output
    assert 'per-file-ignores = { "legacy/*" = ["thunder-lock"] }' in output


def test_a_flag_for_the_idle_timeout_sets_aside_the_files_lb(tmp_path: Path) -> None:
    """`--lb-idle-timeout 90` with `lb = "aws-alb"` in the file: the flag is the one choice."""
    config = _project(tmp_path, 'lb = "aws-alb"\n')
    status, output = check(config, "--lb-idle-timeout", "90", "--show-settings")
    assert status == 0
    assert "lb = none" in output.replace("(none)", "none")
    assert "set aside by --lb-idle-timeout" in output


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ("core = 4\n", "[tool.servertune.check] core: unknown key"),
        ('cores = "4"\n', "[tool.servertune.check] cores: expected an integer from 1 to 1024"),
        ("cores = true\n", "cores: expected an integer"),
        ("cores = 0\n", "cores: expected an integer from 1 to 1024, got 0"),
        ('fail-on = "fatal"\n', "fail-on: expected one of error, warning, info"),
        ('lb = "aws-nlb"\n', "lb: expected one of aws-alb"),
        ('lb = "aws-alb"\nlb-idle-timeout = 60\n', "lb, lb-idle-timeout: give one of them"),
        ('env-files = ".env"\n', "env-files: expected a list of paths"),
        ('severity = { shared-sockets = "off" }\n', "severity: 'shared-sockets' is not a rule id"),
        ('severity = { shared-socket = "fatal" }\n', "severity: shared-socket: expected one of"),
        ('severity = "off"\n', "severity: expected a table"),
        ('per-file-ignores = { "a/*" = ["no-such-rule"] }\n', "per-file-ignores: 'a/*': 'no-such"),
        ('per-file-ignores = { "a/*" = "thunder-lock" }\n', "per-file-ignores: 'a/*': expected"),
        ("cores = \n", "not valid TOML: Invalid value (at line 5, column 9)"),
        ("check = 4\n", "[tool.servertune.check] check: unknown key"),
    ],
)
def test_bad_settings_are_one_error_line_naming_the_file_and_key(
    table: str, words: str, tmp_path: Path
) -> None:
    """Exit 2, one `error:` line with the settings file and the key; nothing checked."""
    config = _project(tmp_path, table)
    status, output = check(config)
    assert status == 2, output
    assert output.count("\n") == 1, output
    assert output.startswith(f"error: {tmp_path / 'pyproject.toml'}: "), output
    assert words in output
    assert "Traceback" not in output


def test_a_settings_file_that_is_not_utf8_is_one_error_line(tmp_path: Path) -> None:
    """A servertune.toml with a Latin-1 byte: exit 2, the file named, the byte's offset."""
    config = _project(tmp_path, "cores = 4\n", "servertune.toml")
    (tmp_path / "servertune.toml").write_bytes(b"[check]\ncores = 4 # caf\xe9\n")
    status, output = check(config)
    assert status == 2
    assert (
        output
        == f"error: {tmp_path / 'servertune.toml'}: not UTF-8 text (byte 0xe9 at offset 23)\n"
    )


def test_servertune_toml_refuses_a_table_it_does_not_have(tmp_path: Path) -> None:
    """servertune.toml holds [check]: a [chek] is a typo, not something to pass over."""
    config = _project(tmp_path, "cores = 4\n", "servertune.toml")
    (tmp_path / "servertune.toml").write_text("[chek]\ncores = 4\n")
    status, output = check(config)
    assert status == 2
    assert output.startswith(f"error: {tmp_path / 'servertune.toml'}: chek: unknown table")


def test_every_severity_level_can_be_set_and_off_lists_the_findings_as_ignored(
    tmp_path: Path,
) -> None:
    """`severity` maps onto every level the Severity enum has (a new level needs no change
    here), and "off" moves the rule's findings to the ignored ones, with the settings line."""
    for level in Severity:
        config = _project(
            tmp_path, f'cores = 2\nseverity = {{ workers-over-cores = "{level.name}" }}\n'
        )
        status, output = check(config, "--format", "json", "--fail-on", "error")
        [finding] = [f for f in json.loads(output)["findings"] if f["rule"] == "workers-over-cores"]
        assert finding["severity"] == level.name
        assert status == (1 if level >= Severity.error else 0)
    config = _project(tmp_path, 'cores = 2\nseverity = { workers-over-cores = "off" }\n')
    status, output = check(config, "--format", "json")
    document = json.loads(output)
    assert "workers-over-cores" not in {f["rule"] for f in document["findings"]}
    [off] = document["suppressed"]
    assert off["rule"] == "workers-over-cores"
    assert off["suppressed"]["kind"] == "external"
    assert off["suppressed"]["location"] == {"file": str(tmp_path / "pyproject.toml"), "line": 6}


def test_per_file_ignores_ignore_those_rules_in_the_files_a_glob_matches(tmp_path: Path) -> None:
    """`"deploy/*.py" = [rule]` ignores the rule there (reason: the glob and the file), and not
    in a file the glob does not match, whose finding fails the run."""
    config = _project(
        tmp_path, 'cores = 2\nper-file-ignores = { "deploy/*.py" = ["gthread-one-thread"] }\n'
    )
    config.write_text(FAULT)
    other = tmp_path / "gunicorn.conf.py"
    other.write_text(FAULT)
    status, output = check(config, other, "--format", "json")
    assert status == 1
    document = json.loads(output)
    [ignored] = document["suppressed"]
    assert ignored["file"] == str(config)
    assert ignored["suppressed"]["reason"] == (
        f'per-file-ignores "deploy/*.py" in {tmp_path / "pyproject.toml"}'
    )
    assert ignored["rule"] == "gthread-one-thread"
    assert ("gthread-one-thread", str(other)) in {
        (f["rule"], f["file"]) for f in document["findings"]
    }


def test_exclude_drops_a_named_file(tmp_path: Path) -> None:
    """`exclude = ["legacy"]`: a file under legacy/ named by a hook is not checked; when every
    file named is excluded, exit 0 saying so."""
    config = _project(tmp_path, 'cores = 2\nexclude = ["legacy", "*.old.py"]\n')
    config.write_text(FAULT)  # the one file checked: its fault is the exit 1
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "gunicorn.conf.py").write_text("this is not python (\n")
    (tmp_path / "deploy" / "gunicorn.old.py").write_text("this is not python (\n")
    status, output = check(
        config, legacy / "gunicorn.conf.py", tmp_path / "deploy" / "gunicorn.old.py"
    )
    assert status == 1, output
    assert "in 1 file" in output
    status, output = check(legacy / "gunicorn.conf.py")
    assert (status, output) == (
        0, f"no file to check: all 1 excluded by {tmp_path / 'pyproject.toml'} [tool.servertune.check]\n"
    )  # fmt: skip


def test_env_files_are_read_relative_to_the_settings_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`env-files = ["deploy/prod.env"]` is the servers' environment, whatever the working
    directory; `--env-file` replaces it. 6 workers on 2 cores is advice: `--fail-on advice`."""
    config = _project(tmp_path, 'cores = 2\nenv-files = ["deploy/prod.env"]\n')
    config.write_text("import os\nworkers = int(os.environ.get('WORKERS', '1'))\n")
    (tmp_path / "deploy" / "prod.env").write_text("WORKERS=6\n")
    (tmp_path / "one.env").write_text("WORKERS=1\n")
    monkeypatch.chdir(tmp_path / "deploy")
    status, output = check("gunicorn.conf.py", "--fail-on", "advice")
    assert status == 1, output
    assert "not workers = 6:" in output
    status, output = check(
        "gunicorn.conf.py", "--env-file", tmp_path / "one.env", "--fail-on", "advice"
    )
    assert status == 0, output


def test_the_settings_file_can_be_named(tmp_path: Path) -> None:
    """`--settings FILE` reads that file instead of looking upwards."""
    config = _project(tmp_path, "cores = 2\n")
    named = tmp_path / "ci.toml"
    named.write_text("[check]\ncores = 8\n")
    assert (
        check(config, "--settings", named, "--show-settings")[1]
        .splitlines()[1]
        .startswith("cores = 8")
    )


def test_the_docs_settings_table_is_generated_from_the_keys() -> None:
    """docs/check.md shows the table `settings_table()` writes from KEYS (one declaration)."""
    assert settings_table() in (REPO / "docs" / "check.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", (REPO / "docs" / "check.md").read_text(), re.S)


def test_the_ci_recipes_repeat_no_flag_the_settings_hold() -> None:
    """docs/check.md's pre-commit entry and GitHub workflow run `servertune check` with no flag
    a settings key stands for: they read them from pyproject.toml."""
    flags = {key.flag for key in KEYS if key.flag is not None}
    [hook] = [b for b in _blocks("yaml") if "# .pre-commit-config.yaml" in b]
    assert "args:" not in hook
    [workflow] = [b for b in _blocks("yaml") if "# .github/workflows/" in b]
    [command] = [line for line in workflow.splitlines() if "servertune check" in line]
    assert not flags & set(command.split()), command


@pytest.mark.parametrize("block", [b for b in _blocks("toml") if "[tool.servertune.check]" in b])
def test_the_docs_settings_examples_are_valid_settings(block: str, tmp_path: Path) -> None:
    """Each pyproject.toml example the page shows is read without an error."""
    (tmp_path / "pyproject.toml").write_text(block)
    settings = find_settings(tmp_path)
    assert settings.values


def test_settings_nested_past_the_parsers_depth_are_one_error_line(tmp_path: Path) -> None:
    """100,000 nested arrays: one `error:` line, no RecursionError traceback."""
    config = _project(tmp_path, "exclude = " + "[" * 100_000 + "]" * 100_000 + "\n")
    status, output = check(config)
    assert status == 2
    assert output == f"error: {tmp_path / 'pyproject.toml'}: not valid TOML: nested too deeply\n"


def test_the_pre_commit_hook_reads_the_settings_of_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook's own entry (.pre-commit-hooks.yaml), run as pre-commit runs it (from the
    repository's root, the changed files by relative name, no `args:`), applies pyproject.toml."""
    [entry] = re.findall(r"^\s+entry: (.+)$", (REPO / ".pre-commit-hooks.yaml").read_text(), re.M)
    assert entry.split() == ["servertune", "check"]
    _project(tmp_path, 'cores = 8\nseverity = { max-requests-without-jitter = "error" }\n')
    monkeypatch.chdir(tmp_path)
    status, output = check(*entry.split()[2:], "deploy/gunicorn.conf.py")
    assert status == 1
    assert "deploy/gunicorn.conf.py:2: error [max-requests-without-jitter]" in output
    assert "workers-over-cores" not in output


def test_an_ignore_of_a_rule_turned_off_is_reported_as_such(tmp_path: Path) -> None:
    """`severity = { rule = "off" }` and an inline ignore of that rule: the ignore is unused, and
    says the rule is off in the settings file."""
    config = _project(tmp_path, 'cores = 4\nseverity = { max-requests-without-jitter = "off" }\n')
    config.write_text(
        "workers = 2\nmax_requests = 1000  # servertune: ignore[max-requests-without-jitter] ok\n"
    )
    status, output = check(config, "--format", "json")
    assert status == 0
    [unused] = json.loads(output)["findings"]
    assert unused["rule"] == "unused-ignore"
    assert unused["message"].endswith(
        f"max-requests-without-jitter is off in {tmp_path / 'pyproject.toml'}"
    )


def test_a_named_settings_file_that_is_missing_is_one_error_line(tmp_path: Path) -> None:
    """`--settings nowhere.toml`: one `error:` line naming it."""
    config = _project(tmp_path, "cores = 4\n")
    status, output = check(config, "--settings", tmp_path / "nowhere.toml")
    assert (status, output) == (2, f"error: {tmp_path / 'nowhere.toml'}: no such file\n")
