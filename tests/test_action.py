"""The GitHub Action (action.yml) does what its recipe says: its steps' commands are run here,
in order, in a fresh folder, with the inputs GitHub would pass (issue 47, item 17).

GitHub evaluates `${{ ... }}` before a step runs; `_evaluate` does the same for the few forms the
action uses (an input, the action's path, a step's output, `==`, `!=`, `&&`, `||`) and refuses
any other, so the test never guesses. `uses:` steps (setup-python, upload-sarif) are GitHub's
own: the test checks what they are given (the SARIF file the upload would send is valid SARIF
2.1.0). The install step is checked by what it installs, not run: it would replace this
checkout's editable install.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text())
STEPS: list[dict[str, Any]] = ACTION["runs"]["steps"]
BROKEN = REPO / "docs" / "recipes" / "keepalive-chain" / "broken"
FIXED = REPO / "docs" / "recipes" / "keepalive-chain" / "fixed"


def _evaluate(text: str, context: dict[str, Any]) -> str:
    """`text` with each `${{ expression }}` replaced by its value, as GitHub Actions does."""

    def one(match: re.Match[str]) -> str:
        value = _expression(match.group(1), context)
        return ("true" if value else "false") if isinstance(value, bool) else str(value)

    return re.sub(r"\$\{\{(.*?)\}\}", one, text)


def _expression(expression: str, context: dict[str, Any]) -> Any:
    tokens = re.findall(r"'[^']*'|&&|\|\||==|!=|[()]|[\w.-]+|\S", expression)
    python = []
    for token in tokens:
        if token.startswith("'"):
            python.append(repr(token[1:-1]))
        elif token in ("&&", "||"):
            python.append({"&&": "and", "||": "or"}[token])
        elif token in ("==", "!=", "(", ")"):
            python.append(token)
        elif re.fullmatch(r"(inputs|github|steps)\.[\w.-]+", token):
            value: Any = context
            for part in token.split("."):
                value = value.get(part, "") if isinstance(value, dict) else ""
            python.append(repr(value))
        else:
            raise AssertionError(f"an expression this test does not evaluate: {token!r}")
    return eval(" ".join(python), {"__builtins__": {}})  # the tokens were checked above


def _run_action(inputs: dict[str, str], folder: Path) -> dict[str, Any]:
    """Run the action's steps in `folder`: what ran, each step's exit code, the outputs."""
    given = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    given.update(inputs)
    context: dict[str, Any] = {
        "inputs": given,
        "github": {"action_path": str(REPO)},
        "steps": {},
    }
    ran: dict[str, Any] = {"codes": {}, "skipped": [], "uses": {}}
    for step in STEPS:
        name = step.get("name", step.get("uses"))
        if "if" in step and not _expression(
            step["if"].strip().removeprefix("${{").removesuffix("}}"), context
        ):
            ran["skipped"].append(name)
            continue
        if "uses" in step:
            ran["uses"][step["uses"]] = {
                k: _evaluate(str(v), context) for k, v in step.get("with", {}).items()
            }
            continue
        env = {k: _evaluate(str(v), context) for k, v in step.get("env", {}).items()}
        script = step["run"]
        if "pip install" in script:
            ran["install"] = (script, env)
            continue
        outputs = folder / f"output-{len(ran['codes'])}"
        outputs.write_text("")
        result = subprocess.run(
            ["bash", "-e", "-c", script], cwd=folder, capture_output=True, text=True, timeout=120,
            check=False, env={
                **os.environ, **env, "GITHUB_OUTPUT": str(outputs),
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            },
        )  # fmt: skip
        ran["codes"][name] = result.returncode
        ran.setdefault("logs", {})[name] = result.stdout + result.stderr
        if "id" in step:
            pairs = dict(
                line.split("=", 1) for line in outputs.read_text().splitlines() if "=" in line
            )
            context["steps"][step["id"]] = {"outputs": pairs}
    ran["outputs"] = context["steps"]
    return ran


def _copy(source: Path, folder: Path) -> None:
    for file in source.iterdir():
        shutil.copy(file, folder / file.name)


def test_findings_are_printed_uploaded_as_sarif_and_fail_the_job(tmp_path: Path) -> None:
    """Broken configs: check's findings in the log, a SARIF 2.1.0 file handed to upload-sarif,
    and the last step fails the job with check's exit 1."""
    _copy(BROKEN, tmp_path)
    ran = _run_action({"files": "nginx.conf gunicorn.conf.py", "args": "--cores 2"}, tmp_path)
    assert ran["outputs"]["check"]["outputs"]["exit-code"] == "1"
    assert "upstream-keepalive-over-app-keepalive" in ran["logs"]["Run servertune check"]
    upload = ran["uses"]["github/codeql-action/upload-sarif@v3"]
    sarif = json.loads((tmp_path / upload["sarif_file"]).read_text())
    assert sarif["version"] == "2.1.0"
    rules = {r["ruleId"] for run in sarif["runs"] for r in run["results"]}
    assert "upstream-keepalive-over-app-keepalive" in rules
    assert ran["codes"]["Fail on findings"] == 1


def test_clean_configs_pass_and_still_upload(tmp_path: Path) -> None:
    """Fixed configs: exit 0, an empty SARIF report uploaded (it clears old alerts), no failure."""
    _copy(FIXED, tmp_path)
    ran = _run_action({"files": "nginx.conf gunicorn.conf.py", "args": "--cores 2"}, tmp_path)
    assert ran["outputs"]["check"]["outputs"]["exit-code"] == "0"
    assert (tmp_path / "servertune.sarif").exists()
    assert "Fail on findings" in ran["skipped"]


def test_findings_do_not_fail_the_job_when_told_not_to(tmp_path: Path) -> None:
    """`fail-on-findings: false`: the findings are uploaded, the job goes on."""
    _copy(BROKEN, tmp_path)
    ran = _run_action(
        {"files": "nginx.conf gunicorn.conf.py", "fail-on-findings": "false"}, tmp_path
    )
    assert ran["outputs"]["check"]["outputs"]["exit-code"] == "1"
    assert "Fail on findings" in ran["skipped"]


def test_an_unreadable_file_fails_the_job_without_an_upload(tmp_path: Path) -> None:
    """Exit 2 (a file check cannot read): nothing to upload, and the job fails whatever
    `fail-on-findings` says."""
    (tmp_path / "uwsgi.ini").write_bytes(b"[uwsgi]\nprocesses = \xff\n")
    ran = _run_action({"files": "uwsgi.ini", "fail-on-findings": "false"}, tmp_path)
    assert ran["outputs"]["check"]["outputs"]["exit-code"] == "2"
    assert "Upload the findings for code scanning" in ran["skipped"]
    assert ran["codes"]["Fail on findings"] == 2


def test_an_input_cannot_inject_a_command(tmp_path: Path) -> None:
    """Inputs reach bash through the environment: `$(...)` and `;` in them run nothing."""
    _copy(BROKEN, tmp_path)
    _run_action({"files": "nginx.conf; touch pwned", "args": "$(touch pwned2)"}, tmp_path)
    assert not (tmp_path / "pwned").exists()
    assert not (tmp_path / "pwned2").exists()
    for step in STEPS:
        assert "${{" not in step.get("run", ""), step["name"]


def test_the_install_step_installs_this_repository_with_the_extras_check_needs() -> None:
    """The action installs itself (its own checkout, `github.action_path`) with extras that exist."""
    (install,) = [s for s in STEPS if "pip install" in s.get("run", "")]
    assert install["env"]["SERVERTUNE_SOURCE"] == "${{ github.action_path }}"
    extras = re.search(r'"\$\{SERVERTUNE_SOURCE\}\[([\w,]+)\]"', install["run"])
    assert extras is not None
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert set(extras.group(1).split(",")) <= set(declared)
    assert {"check", "logs"} <= set(extras.group(1).split(","))


@pytest.mark.parametrize("step", [s for s in STEPS if "uses" in s], ids=lambda s: s["uses"])
def test_the_actions_it_uses_are_pinned_to_a_major_version(step: dict[str, Any]) -> None:
    """setup-python and upload-sarif are named with a major version (`@v5`), never a branch."""
    assert re.fullmatch(r"[\w-]+/[\w/-]+@v\d+", step["uses"]), step["uses"]
