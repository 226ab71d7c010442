"""`servertune gen all --out DIR`, then `servertune check DIR/*`: servertune's own files, every
kind of them (Kubernetes manifests, per-worker gunicorn configs, scripts), read back clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.cli import app

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.stem for p in (GOLDEN / "cases").glob("*.json"))


def _toml(values: dict[str, object]) -> str:
    """A flat TOML table: JSON's strings, numbers and lists are TOML's too; booleans lower-case."""
    lines = []
    for key, value in values.items():
        shown = json.dumps(value)
        lines.append(f"{key} = {shown}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("case", CASES)
def test_every_file_gen_all_writes_checks_clean(case: str, tmp_path: Path) -> None:
    """Each golden case: `gen all` writes its files, and `check` on all of them, compared with
    the same workload's plan, exits 0 with no fault at all (not even info), and no advice that
    contradicts the plan the files were written from (plan-differs, workers-over-cores)."""
    workload = tmp_path / "workload.toml"
    workload.write_text(_toml(json.loads((GOLDEN / "cases" / f"{case}.json").read_text())))
    out = tmp_path / "out"
    runner = CliRunner()
    generated = runner.invoke(app, ["gen", "all", "--workload", str(workload), "--out", str(out)])
    assert generated.exit_code == 0, generated.output
    files = sorted(out.iterdir())
    assert len(files) >= 5
    checked = runner.invoke(
        app,
        ["check", "--workload", str(workload), "--format", "json", *map(str, files)],
    )
    assert checked.exit_code == 0, checked.output
    report = json.loads(checked.stdout)
    read = {Path(f).name for f in report["files"]}
    assert {f.name for f in files} <= read
    assert [f for f in report["findings"] if f["severity"] != "advice"] == []
    contradicting = {"plan-differs", "plan-interface-differs", "workers-over-cores"}
    assert [f for f in report["findings"] if f["rule"] in contradicting] == []


@pytest.mark.parametrize("case", [c for c in CASES if c.startswith("k8s-")])
def test_kubernetes_layouts_are_not_told_to_add_an_nginx(case: str, tmp_path: Path) -> None:
    """The gateway and ingress manifests `gen` writes have no nginx in front of the app pod's
    socket: no finding tells them to go "behind nginx least_conn" (issue 36.2)."""
    workload = tmp_path / "workload.toml"
    workload.write_text(_toml(json.loads((GOLDEN / "cases" / f"{case}.json").read_text())))
    out = tmp_path / "out"
    runner = CliRunner()
    generated = runner.invoke(app, ["gen", "all", "--workload", str(workload), "--out", str(out)])
    assert generated.exit_code == 0, generated.output
    manifest = out / "kubernetes.yaml"
    checked = runner.invoke(
        app, ["check", "--workload", str(workload), "--format", "json", str(manifest)]
    )
    assert checked.exit_code == 0, checked.output
    rules = {f["rule"] for f in json.loads(checked.stdout)["findings"]}
    assert "shared-socket" not in rules
    assert not any("least_conn" in f["fix"] for f in json.loads(checked.stdout)["findings"])
