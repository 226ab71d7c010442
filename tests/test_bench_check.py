"""Smoke runs of the benchmarks behind `servertune check`: keepalive-chain and check-speed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.bench import BenchOptions, load_scenario, run_scenario, scenario_names, summary
from servertune.bench.harness.ports import listening_ports
from servertune.bench.harness.report import BenchInputError
from servertune.bench.scenarios import check_speed, keepalive_chain
from servertune.cli import app

from .support import REPO

RECIPE = REPO / "docs" / "recipes" / "keepalive-chain"


def test_scenarios_are_listed() -> None:
    """`servertune bench --list` shows both, with their summaries."""
    assert {"keepalive-chain", "check-speed"} <= set(scenario_names())
    assert summary("keepalive-chain").startswith("Keep-alive chain")


@pytest.mark.parametrize("config", keepalive_chain.CONFIGS)
def test_recipe_files_are_the_benchmarked_stack(config: str) -> None:
    """The recipe's files are exactly what the benchmark deploys (nginx on 8000, gunicorn on 8001)."""
    for name, text in keepalive_chain.render(config, 8000, 8001, 8001).items():
        assert (RECIPE / config / name).read_text() == text


def test_keepalive_chain_quick_run() -> None:
    """Both stacks run, check finds the broken one, the fixed one has no errors, nothing is left behind."""
    report = run_scenario(
        load_scenario("keepalive-chain"), BenchOptions(quick=True, progress=False)
    )
    rows = {row["config"]: row for row in report.runs}
    quick = keepalive_chain.SIZES.quick
    assert set(rows) == {"broken", "fixed"}
    assert rows["broken"]["check_findings"] == 1
    assert rows["fixed"]["check_findings"] == 0
    assert rows["fixed"]["errors"] == 0
    for row in rows.values():
        assert row["requests"] == quick.threads * quick.rounds
    assert [t.met for t in report.targets] == [True]
    kinds = sorted(s["kind"] for s in report.servers)
    assert kinds == ["gunicorn", "gunicorn", "nginx", "nginx", "relay", "relay"]
    assert all(s["stopped"] for s in report.servers)
    ports = {p for s in report.servers for p in s["ports"]}
    assert not ports & listening_ports()
    for server in report.servers:
        with pytest.raises(ProcessLookupError):
            os.killpg(server["pgid"], 0)


def test_check_speed_tree_has_fifty_files(tmp_path: Path) -> None:
    """The speed benchmark's tree is 50 nginx files that check reads in full."""
    from servertune.check import check_files
    from servertune.machine import Machine

    main = check_speed.build_tree(tmp_path / "nginx")
    result = check_files([main], machine=Machine(cores=2))
    assert len(result.files) == check_speed.NGINX_FILES
    assert len(result.nginx[0].upstreams) == check_speed.NGINX_FILES - 4


def test_check_speed_quick_run() -> None:
    """The benchmark reports its configurations and targets (the numbers are not asserted here)."""
    report = run_scenario(load_scenario("check-speed"), BenchOptions(quick=True, progress=False))
    assert [row["files"] for row in report.runs] == [50, 51, 54]
    assert [row["runs"] for row in report.runs] == [check_speed.SIZES.quick.repeats] * 3
    assert report.targets[0].value is not None
    assert report.targets[1].threshold == check_speed.REPOSITORY_TARGET_S


def test_check_speed_repository_is_300_files_of_linked_projects(tmp_path: Path) -> None:
    """The walked repository holds 300 files in 20 projects; the walk reads each one's
    deployment files (not its source and docs), and each project's entrypoint, copied by its
    Dockerfile, starts its server in a container (checked on the quick run's five projects,
    one of each server)."""
    from servertune.check import check_files
    from servertune.check.discover import discover
    from servertune.machine import Machine

    full = check_speed.build_repository(tmp_path / "full")
    assert sum(1 for p in full.rglob("*") if p.is_file()) == check_speed.REPOSITORY_FILES
    assert len(list(full.glob("projects/*"))) == 20
    files = check_speed.SIZES.quick.repository_files
    root = check_speed.build_repository(tmp_path / "repo", files)
    projects = files // check_speed.PROJECT_FILES
    walk = discover(root)
    assert not {p for p in walk.files if p.suffix == ".py" and p.parent.name == "app"}
    assert sum(1 for p in walk.files if p.name == "Dockerfile") == projects
    result = check_files(list(walk.files), machine=Machine(cores=2), discovered=[walk])
    assert not result.errors
    started = {
        app.file.relative_to(root).parts[1]
        for app in result.apps
        if app.container is not None and app.file.name == "entrypoint.sh"
    }
    assert len(started) == projects


def test_check_speed_corpus_files_follow_expected_json(tmp_path: Path) -> None:
    """`--corpus DIR`: the files each `<project>/expected.json` names; without any, every file
    but hidden ones; a directory with neither is one error naming it."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "Procfile").write_text("web: gunicorn -w 2 app:app\n")
    (tmp_path / "a" / "support.env").write_text("X=1\n")
    (tmp_path / "a" / "expected.json").write_text('{"files": {"Procfile": {"findings": []}}}')
    assert check_speed.corpus_files(tmp_path) == [tmp_path / "a" / "Procfile"]
    (tmp_path / "a" / "expected.json").unlink()
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref\n")
    assert check_speed.corpus_files(tmp_path) == [
        tmp_path / "a" / "Procfile",
        tmp_path / "a" / "support.env",
    ]
    (tmp_path / "empty").mkdir()
    with pytest.raises(BenchInputError, match=r"--corpus: .*empty: no files"):
        check_speed.corpus_files(tmp_path / "empty")


def test_check_speed_times_a_corpus_against_its_target(tmp_path: Path) -> None:
    """With a corpus, a third configuration: one check of all its files, with its own target."""
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "Procfile").write_text("web: gunicorn -w 2 app:app\n")
    (tmp_path / "p" / "Dockerfile").write_text('FROM python:3.12\nCMD ["uvicorn", "app:app"]\n')
    options = BenchOptions(quick=True, progress=False, extra={"corpus": str(tmp_path)})
    report = run_scenario(load_scenario("check-speed"), options)
    assert report.runs[-1]["config"] == "corpus (2 files checked)"
    assert report.runs[-1]["files"] == 2
    assert report.targets[-1].threshold == check_speed.CORPUS_TARGET_S


def test_only_check_speed_takes_a_corpus(tmp_path: Path) -> None:
    """`--corpus` on another scenario is one error line, exit 2, before anything runs."""
    result = CliRunner().invoke(app, ["bench", "hol", "--corpus", str(tmp_path)])
    assert result.exit_code == 2
    assert "--corpus: only `servertune bench check-speed` takes it" in result.output
