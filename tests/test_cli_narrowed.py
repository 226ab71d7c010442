"""A run declares only the workload options its argv names: the same output, code and errors.

`servertune.cli.main` builds a command with only the workload options argv names (cold start,
bench cold-start). Each argv below runs through `main()` twice, in process: as it is, and with
every option declared (the app built without argv), and both must print the same, exit the
same and leave the same files.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
import typer.main

from servertune.cli import entry
from servertune.cli.workload_options import FLAGS

from .test_cli_broken_files import _run

CASES = [
    ["gen", "uwsgi", "--cores", "4"],
    ["gen", "uwsgi", "--cores=4", "--app", "x:y"],
    ["gen", "uwsgi", "--cores", "4", "--sync-views"],
    ["gen", "uwsgi", "--cores", "4", "--no-sync-views"],
    ["gen", "uwsgi", "--cores", "4", "--static", "/static/=/srv/static"],
    ["gen", "all", "--cores", "2", "--interface", "asgi"],
    ["gen", "uwsgi", "--cores", "4", "--cores", "5"],
    ["gen", "uwsgi", "--cores", "0"],
    ["gen", "uwsgi", "--cores", "four"],
    ["gen", "uwsgi", "--cores"],
    ["gen", "uwsgi", "--app", "--cores"],
    ["gen", "uwsgi", "--cors", "4"],
    ["gen", "uwsgi", "--no-cores", "4"],
    ["gen", "uwsgi", "--cores", "4", "-h"],
    ["gen", "uwsgi", "--cores", "4", "--help"],
    ["gen", "uwsgi", "--cores", "4", "--", "x"],
    ["gen", "uwsgi", "--cores", "-1"],
    ["gen", "--cores", "4"],
    ["gen", "nonsense", "--cores", "4"],
    ["gen"],
    ["gen", "uwsgi"],
    ["explain"],
    ["plan", "--json"],
    ["explain", "--cores", "3", "--interface", "asgi"],
    ["explain", "--cores", "3", "--memory-limit-mb", "100"],
    ["plan", "--cores", "2", "--json"],
    ["plan", "--json", "--cores", "2", "--no-json"],
    ["advise", "--cores", "4"],
]


BUILD_APP = entry.build_app


def _every_option(names: Iterable[str], args: list[str] | None = None) -> typer.Typer:
    """`build_app` as it was before argv narrowed it: every option declared."""
    return BUILD_APP(names)


def _both(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    narrowed = _run(argv, monkeypatch, capsys)
    with monkeypatch.context() as patch:
        patch.setattr(entry, "build_app", _every_option)
        full = _run(argv, monkeypatch, capsys)
    return narrowed, full


@pytest.mark.parametrize("argv", CASES, ids=" ".join)
def test_a_narrowed_run_answers_as_a_full_one(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    narrowed, full = _both(argv, monkeypatch, capsys)
    assert narrowed == full
    assert "Traceback" not in narrowed[2]


def test_a_workload_file_and_out_dir_are_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--workload` and `--out` (the command's own options) narrow too; the files match."""
    (tmp_path / "w.toml").write_text('cores = 3\napp = "site.wsgi:application"\n')
    written = []
    for name in ("narrowed", "full"):
        out = tmp_path / name
        argv = ["gen", "all", "--workload", str(tmp_path / "w.toml"), "--cores", "2"]
        with monkeypatch.context() as patch:
            if name == "full":
                patch.setattr(entry, "build_app", _every_option)
            code, _, err = _run([*argv, "--out", str(out)], monkeypatch, capsys)
        assert code == 0, err
        written.append(
            ({p.name: p.read_text() for p in out.iterdir()}, err.replace(str(out), "OUT"))
        )
    assert written[0] == written[1]


def _declared(args: list[str]) -> set[str]:
    command = typer.main.get_command(entry.build_app(["gen"], args))
    assert isinstance(command, typer.core.TyperGroup)
    gen = command.commands["gen"]
    return {flag for param in gen.params for flag in param.opts}


def test_only_the_named_workload_options_are_declared() -> None:
    """The narrowing happens (else the comparisons above compare a run with itself)."""
    workload_flags = set(FLAGS.values())
    assert _declared(["uwsgi", "--cores", "4"]) & workload_flags == {"--cores"}
    assert _declared(["uwsgi", "--cores=4", "--app", "x:y", "--out", "d"]) & workload_flags == {
        "--cores",
        "--app",
    }
    # Help, a word that is no option, or no words at all: every option, as Typer would build.
    for args in (["uwsgi", "--help"], ["uwsgi", "--cors", "4"], [], ["uwsgi", "-h"]):
        assert _declared(args) >= workload_flags, args
