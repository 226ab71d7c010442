"""The CLI: a thin shell over the library. Exit codes, streams, atomic output, and the issue's acceptance lines."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune import files
from servertune.cli import app
from servertune.render import TARGETS, write_atomically
from servertune.sizing import make_plan, plan_for
from servertune.workload import Workload

runner = CliRunner()


def test_gen_uwsgi_cores_4_maps_four_sockets() -> None:
    """`servertune gen uwsgi --cores 4` prints four sockets mapped 0:1 .. 3:4 on stdout."""
    result = runner.invoke(app, ["gen", "uwsgi", "--cores", "4"])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith("map-socket")] == [
        f"map-socket = {i}:{i + 1}" for i in range(4)
    ]
    assert sum(line.startswith("socket = ") for line in lines) == 4
    assert result.stderr == ""


def test_gen_prints_exactly_what_the_library_renders() -> None:
    """The CLI adds nothing: its stdout is the renderer's output for the same workload."""
    result = runner.invoke(app, ["gen", "nginx", "--cores", "3", "--cpu-fraction", "0.25"])
    expected = TARGETS["nginx"].render(plan_for(Workload(cores=3, cpu_fraction=0.25)))
    assert result.stdout == expected


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--cores", "0"], "cores"),
        (["--app", "wsgi:app\nsocket = 0.0.0.0:1"], "app"),
        (["--app", "wsgi:app;"], "app"),
        (["--cpu-fraction", "0"], "cpu_fraction"),
        (["--base-port", "99999"], "base_port"),
        (["--cores", "1_0"], "cores"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_the_field(args: list[str], field: str) -> None:
    """Bad input: exit code 2, one line on stderr naming the field, nothing on stdout."""
    result = runner.invoke(app, ["gen", "uwsgi", *args])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"error: {field} (--")


def test_workload_file_and_flags_win(tmp_path: Path) -> None:
    """--workload FILE supplies fields; a flag overrides the file."""
    toml = tmp_path / "w.toml"
    toml.write_text("cores = 2\ncpu_fraction = 0.25\n")
    result = runner.invoke(app, ["plan", "--json", "--workload", str(toml), "--cores", "3"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["workload"]["cores"] == 3
    assert data["plan"]["threads"]["value"] == 4
    assert data["plan"]["threads"]["reason"]


def test_plan_json_has_value_unit_and_reason_for_every_number() -> None:
    """`plan --json` gives each derived number with its unit and reason."""
    data = json.loads(runner.invoke(app, ["plan", "--json", "--cores", "2"]).stdout)
    assert data["plan"]["processes"] == {
        "value": 2,
        "unit": "processes",
        "reason": data["plan"]["processes"]["reason"],
    }
    assert all({"value", "unit", "reason"} <= set(v) for v in data["plan"].values())


def test_explain_prints_a_row_per_number() -> None:
    """`explain` prints every plan number by name with its reason."""
    result = runner.invoke(app, ["explain", "--cores", "2", "--slow-call-ratio", "0.01"])
    assert result.exit_code == 0
    for name in make_plan(Workload(cores=2)).reasons:
        assert f"\n{name} " in result.stdout
    assert "Little's law" in result.stdout


@pytest.mark.parametrize("interface", ["wsgi", "asgi"])
def test_gen_all_writes_every_file_that_serves_the_app(interface: str, tmp_path: Path) -> None:
    """`gen all --out DIR` writes every target file fitting the app's interface, each reported."""
    out = tmp_path / "out"
    args = ["gen", "all", "--cores", "2", "--interface", interface, "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr
    fits = [t for t in TARGETS.values() if interface in t.interfaces]
    assert sorted(p.name for p in out.iterdir()) == sorted(t.filename for t in fits)
    assert "granian.sh" in {t.filename for t in fits}
    assert result.stdout == ""
    assert result.stderr.count("wrote ") == len(fits)


@pytest.mark.parametrize(
    ("target", "interface", "fits"),
    [("uvicorn", "wsgi", "gunicorn"), ("gunicorn-asgi", "wsgi", "uwsgi"),
     ("uwsgi", "asgi", "uvicorn"), ("nginx-gunicorn", "asgi", "nginx-asgi")],
)  # fmt: skip
def test_gen_refuses_an_app_the_target_cannot_serve(
    target: str, interface: str, fits: str, tmp_path: Path
) -> None:
    """An ASGI app given to a WSGI target (or the reverse): one error line naming the fitting targets."""
    out = tmp_path / "out"
    args = ["gen", target, "--interface", interface, "--cores", "2", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: interface (--interface): ")
    assert fits in lines[0].split("for it use ", 1)[1].split(", ")
    assert not out.exists()


def test_gen_all_without_out_separates_files_on_stdout() -> None:
    """Without --out every file goes to stdout behind a `# ==> name <==` comment line."""
    result = runner.invoke(app, ["gen", "all", "--cores", "2"])
    assert [line for line in result.stdout.splitlines() if line.startswith("# ==> ")] == [
        f"# ==> {t.filename} <==" for t in TARGETS.values() if "wsgi" in t.interfaces
    ]


def test_bad_input_writes_nothing(tmp_path: Path) -> None:
    """A refused workload leaves the output directory untouched (not even created)."""
    out = tmp_path / "out"
    result = runner.invoke(app, ["gen", "all", "--cores", "0", "--out", str(out)])
    assert result.exit_code == 2
    assert not out.exists()


def test_failed_write_restores_previous_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the third rename fails, the files already replaced get their old content back and no temp file stays."""
    tmp_path.joinpath("a.conf").write_text("old a\n")
    tmp_path.joinpath("b.conf").write_text("old b\n")
    real_replace = os.replace
    calls = {"n": 0}

    def flaky_replace(src: str | Path, dst: str | Path) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "replace", flaky_replace)
    with pytest.raises(OSError, match="No space left"):
        write_atomically({"a.conf": "new a\n", "b.conf": "new b\n", "c.conf": "new c\n"}, tmp_path)
    monkeypatch.setattr(files.os, "replace", real_replace)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.conf", "b.conf"]
    assert tmp_path.joinpath("a.conf").read_text() == "old a\n"
    assert tmp_path.joinpath("b.conf").read_text() == "old b\n"


def test_unwritable_out_dir_is_one_line_exit_2(tmp_path: Path) -> None:
    """An --out path under a regular file fails with one line and exit code 2."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = runner.invoke(app, ["gen", "all", "--cores", "2", "--out", str(blocker / "sub")])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --out: cannot write")


def test_plan_error_exits_2() -> None:
    """A workload that cannot be served (memory for no worker) is refused like bad input."""
    result = runner.invoke(
        app, ["gen", "uwsgi", "--memory-per-worker-mb", "500", "--memory-limit-mb", "100"]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith("error: memory_limit_mb (--memory-limit-mb): ")


def test_help_lists_every_workload_field_with_its_range() -> None:
    """`gen --help` shows every workload flag (from the model), with its declared range."""
    result = runner.invoke(app, ["gen", "--help"], env={"COLUMNS": "200"})
    for name in Workload.model_fields:
        assert "--" + name.replace("_", "-") in result.stdout
    assert "from 1 to 1024" in result.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["gen", "foo"],
        ["gen", "uwsgi", "--bogus", "1"],
        ["bench", "--repeat", "0"],
        ["plan", "--cores"],
    ],
)
def test_usage_errors_from_the_console_script_are_one_line(argv: list[str]) -> None:
    """Unknown targets, options and out-of-range flags: exit 2 and a single `error:` line, no box."""
    result = subprocess.run(
        [sys.executable, "-m", "servertune", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert result.stderr.count("\n") == 1


def test_port_collision_is_one_line_naming_both_fields() -> None:
    """`gen --listen-port 8002 --cores 4` (inside the worker block) exits 2 with one line and no file."""
    result = runner.invoke(app, ["gen", "nginx", "--listen-port", "8002", "--cores", "4"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: listen_port (--listen-port): 8002")
    assert "base_port" in lines[0]


def test_out_with_a_directory_in_the_way_names_it(tmp_path: Path) -> None:
    """`gen all --out D` where D/uwsgi.ini is a directory: one line naming it, nothing written."""
    (tmp_path / "uwsgi.ini").mkdir()
    result = runner.invoke(app, ["gen", "all", "--cores", "2", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: --out: cannot write to {tmp_path / 'uwsgi.ini'}: "
        "a directory of that name is in the way\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["uwsgi.ini"]


def _console(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "servertune", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **env},
    )


def test_version_prints_the_package_version() -> None:
    """`servertune --version` prints `servertune X.Y.Z` on stdout and exits 0."""
    from servertune import __version__

    result = _console("--version")
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        f"servertune {__version__}\n",
        "",
    )


def test_bare_command_prints_help_on_stdout_and_exits_0() -> None:
    """Bare `servertune` asks for help: usage and the command list on stdout, exit 0."""
    result = _console()
    assert result.returncode == 0
    assert result.stderr == ""
    assert "Usage: servertune" in result.stdout
    assert "gen" in result.stdout


def test_shell_completion_script_and_completions() -> None:
    """Typer's completion: `--show-completion` under bash prints a script; the hook completes commands."""
    # Typer detects the shell it runs under (shellingham reads the parent process): run in bash.
    script = subprocess.run(
        ["bash", "-c", f"{shlex.quote(sys.executable)} -m servertune --show-completion; exit $?"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert script.returncode == 0, script.stderr
    assert "_servertune_completion" in script.stdout
    done = _console(
        _SERVERTUNE_COMPLETE="complete_bash", COMP_WORDS="servertune gen ngi", COMP_CWORD="2"
    )
    assert done.returncode == 0
    assert done.stdout.split() == [name for name in TARGETS if name.startswith("ngi")]


def test_help_shows_each_workload_option_kind_not_str() -> None:
    """Number options show int/number (from the field) in --help, never `<str>`."""
    result = runner.invoke(app, ["gen", "--help"], env={"COLUMNS": "200"})
    assert "<str>" not in result.stdout
    for flag, kind in [("--cores", "<int|auto>"), ("--cpu-fraction", "<number>"),
                       ("--base-port", "<int>"), ("--bind-host", "<address>")]:  # fmt: skip
        line = next(line for line in result.stdout.splitlines() if f" {flag} " in line)
        assert kind in line, line


def test_cli_models_skip_pydantic_plugin_scan_and_restore_the_switch() -> None:
    """Importing a command (`gen`: the Workload, Plan and Machine models) builds its models without
    Pydantic's entry-point scan, then unsets the switch."""
    code = (
        "import os\n"
        "import servertune.cli.gen\n"
        "from pydantic.plugin import _loader\n"
        "print(os.environ.get('PYDANTIC_DISABLE_PLUGINS'), _loader._plugins)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    # None: the switch is gone again; None: the plugin cache was never filled (no scan ran).
    assert result.stdout == "None None\n"
    kept = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={**env, "PYDANTIC_DISABLE_PLUGINS": "somepkg"},
    )  # fmt: skip
    assert kept.stdout.startswith("somepkg ")


def test_switches_show_no_value_type_in_help() -> None:
    """`--json`, `--quick`, `--help`: switches take no value, so help shows no `<bool>` type."""
    for command in (["bench", "--help"], ["plan", "--help"], ["gen", "--help"]):
        result = runner.invoke(app, command, env={"COLUMNS": "160"})
        assert result.exit_code == 0
        assert "<bool>" not in result.output


def test_plain_str_and_bool_options_share_one_adapter_each() -> None:
    """Typer builds a Pydantic adapter per option it runs; `gen`'s ~20 plain `str`/`bool`
    workload options share one per type (servertune.cli.options), parsing exactly as Typer's."""
    from typer import _adapters
    from typer.models import OptionInfo

    from servertune.cli import options

    assert runner.invoke(app, ["gen", "uwsgi", "--cores", "4", "--sync-views"]).exit_code == 0
    assert set(options._SHARED_ADAPTERS) == {str, bool}
    first = _adapters.build_leaf_adapter(str, OptionInfo(help="a"))
    assert first is _adapters.build_leaf_adapter(str, OptionInfo(metavar="<x>"))
    assert first.validate_python(b"caf\xc3\xa9") == "café"
    assert _adapters.build_leaf_adapter(bool, OptionInfo()).validate_python("yes") is True
    # A parser, a number or an enum: Typer's own adapter, built for that option.
    with_parser = OptionInfo(parser=int)
    assert _adapters.build_leaf_adapter(str, with_parser) is not first
    assert _adapters.build_leaf_adapter(int, OptionInfo(min=1)).validate_python("3") == 3
