"""The hostile sweep (issue 33): every option of every command and every workload-file field,
given empty, huge, NaN, inf, 1e308, 1e-300, keywords, wildcards, control characters and special
files (a FIFO, a device node, a socket, a directory, a huge or non-UTF-8 file) as inputs and
outputs. None may end in a traceback; a refusal is one `error:` line with exit 2; no special file
is ever replaced; and a value `gen` accepts renders configs the real servers accept (`nginx -t`,
`haproxy -c`).

The options come from the Typer app and the Workload model themselves, so a new option or field
is swept without a line here. The CLI runs in process (`servertune.cli.main`, as the console
script calls it): a few thousand cases in seconds, not a process each. The real servers' checks
run once per distinct rendered file, after the sweep collected them.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import typer.main

from servertune.cli import FLAGS, app, main
from servertune.workload import Workload

from .support import REPO, nginx_check, tool

#: Text any option may be given: empty and blank, huge, the float specials, numbers at and past
#: every bound, Python keywords, wildcards, control characters, config syntax and path tricks.
HOSTILE_TEXT = [
    "",
    " ",
    "x" * 5000,
    "nan",
    "inf",
    "1e308",
    "1e-300",
    "-1",
    "0",
    "4.0",
    "1_0",
    "class",
    "*",
    "a\nb",
    "\x1b[31m",
    "a;b}",
    "$(id)",
    "../../etc/passwd",
    "é",
]
#: The special files every option is also given, as input or output (created per test run).
SPECIALS = ("fifo", "device", "socket", "directory", "missing", "huge", "not-utf8", "empty")
#: TOML values a workload file may hold for any field.
HOSTILE_TOML = [
    *(json.dumps(text) for text in HOSTILE_TEXT if text and text[0] not in "0123456789-"),
    "nan",
    "inf",
    "1e308",
    "1e-300",
    "-1",
    "0",
    "4.0",
    "true",
    "[]",
    "{}",
    '["a", 1]',
    "1979-05-27T07:32:00Z",
]

#: A command line in which one option at a time is made hostile: fast to refuse or to run.
BASES: dict[str, list[str]] = {
    "gen": ["gen", "nginx"],
    "explain": ["explain"],
    "plan": ["plan"],
    "advise": ["advise"],
    # An app that answers at once; 1 request, no warm-up: an accepted value measures in ms.
    "measure": ["measure", "tests.measure_apps:pure_sleep", "--requests", "1", "--warmup", "0"],
    "check": ["check", "CONFIG"],
    # No such scenario: options are parsed and typed by click, nothing is ever run.
    "bench": ["bench", "no-such-scenario"],
}
#: The workload options are the same in gen, explain, plan and advise: swept once, with `plan`.
WORKLOAD_OPTIONS = {f"--{name.replace('_', '-')}" for name in Workload.model_fields}


def _params() -> list[tuple[str, str, bool]]:
    """(command, option or argument name, is an argument) for every value-taking parameter."""
    group = typer.main.get_command(app)
    found = []
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        for param in command.params:
            if getattr(param, "is_flag", False) or name not in BASES:
                continue
            option = param.opts[0] if param.opts else str(param.name)
            if option in WORKLOAD_OPTIONS and name != "plan":
                continue
            found.append((name, option, param.param_type_name == "argument"))
    return found


PARAMS = _params()


@dataclass
class Sweep:
    """What the sweep saw: the special files, and every value some command accepted."""

    root: Path
    files: dict[str, Path] = field(default_factory=dict)
    modes: dict[str, int] = field(default_factory=dict)


def _make_specials(root: Path) -> dict[str, Path]:
    files = {name: root / f"special-{name}" for name in SPECIALS}
    os.mkfifo(files["fifo"])
    # The numbers of /dev/null (1, 3), in the temporary directory: reading ends at once, and
    # /dev/null itself is never touched. Only root creates device nodes; the suite runs as root.
    os.mknod(files["device"], 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(files["socket"]))
    files["directory"].mkdir()
    files["huge"].write_bytes(b"a" * (2 * 1024 * 1024))
    files["not-utf8"].write_bytes(b"\xff\xfe workload = 1\n")
    files["empty"].write_bytes(b"")
    return files


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Sweep:
    """The special files, made once for the whole sweep."""
    if os.geteuid() != 0:
        pytest.fail("the sweep makes a device node, which needs root; the suite runs as root")
    root = tmp_path_factory.mktemp("sweep")
    state = Sweep(root=root, files=_make_specials(root))
    state.modes = {n: os.lstat(p).st_mode for n, p in state.files.items() if p.exists()}
    config = root / "gunicorn.conf.py"
    config.write_text('bind = "127.0.0.1:8000"\nworkers = 2\n')
    state.files["config"] = config
    return state


@dataclass
class Outcome:
    """One in-process run of the console script."""

    code: int
    out: str
    err: str


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str], cwd: Path) -> Outcome:
    """`servertune ARGV` in this process, exactly as the console script runs it (`main()`)."""
    saved_argv, saved_cwd = sys.argv, Path.cwd()
    sys.argv = ["servertune", *argv]
    os.chdir(cwd)
    try:
        main()
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


def _values(sweep: Sweep) -> Iterator[str]:
    yield from HOSTILE_TEXT
    yield from (str(sweep.files[name]) for name in SPECIALS)


def _problem(outcome: Outcome, sweep: Sweep) -> str | None:
    """What is wrong with an outcome, or None: exit 0/1/2, a refusal in one `error:` line."""
    if outcome.code not in (0, 1, 2):
        return f"exit {outcome.code}"
    if "Traceback" in outcome.err:
        return "a traceback"
    if outcome.code == 2:
        errors = [line for line in outcome.err.splitlines() if line.startswith("error: ")]
        if len(errors) != 1 or not outcome.err.splitlines()[-1].startswith("error: "):
            return f"not one error line: {outcome.err[:300]!r}"
    for name, mode in sweep.modes.items():
        path = sweep.files[name]
        if (not path.exists() and not path.is_symlink()) or os.lstat(path).st_mode != mode:
            return f"the {name} special file was replaced"
    return None


@pytest.mark.parametrize(
    ("command", "option", "positional"), PARAMS, ids=[f"{c} {o}" for c, o, _ in PARAMS]
)
def test_no_value_of_any_option_ends_in_a_traceback(
    command: str,
    option: str,
    positional: bool,
    sweep: Sweep,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """Every hostile value of this option: exit 0, 1 or 2, one `error:` line, specials intact."""
    base = [str(sweep.files["config"]) if arg == "CONFIG" else arg for arg in BASES[command]]
    problems = []
    for value in _values(sweep):
        if positional:
            # The hostile value replaces the base's argument at the same place, if it has one.
            positionals = [o for c, o, pos in PARAMS if c == command and pos]
            index = positionals.index(option)
            argv = list(base)
            if 1 + index < len(argv):
                argv[1 + index] = value
            else:
                argv.append(value)
        else:
            # Drop the base's own value of this option (measure's --requests, say): given twice
            # it would be refused for that, never reaching the value's own check.
            argv = list(base)
            if option in argv:
                del argv[argv.index(option) : argv.index(option) + 2]
            argv += [option, value]
        outcome = run_cli(argv, capsys, tmp_path)
        problem = _problem(outcome, sweep)
        if problem is not None:
            problems.append((value[:40], problem))
    assert problems == []


@pytest.mark.parametrize("name", list(Workload.model_fields))
def test_no_value_of_any_workload_file_field_ends_in_a_traceback(
    name: str, sweep: Sweep, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Every hostile TOML value of this field in a workload file: accepted or one `error:` line."""
    problems = []
    for number, value in enumerate(HOSTILE_TOML):
        path = sweep.root / f"file-{name}-{number}.toml"
        path.write_text(f"{name} = {value}\n", encoding="utf-8")
        outcome = run_cli(["plan", "--workload", str(path)], capsys, tmp_path)
        problem = _problem(outcome, sweep)
        if problem is not None:
            problems.append((value[:40], problem))
    assert problems == []


#: The complete configs `gen all` writes that a real server checks (snippets are inside them).
CHECKED = (
    "nginx-uwsgi.conf",
    "nginx-gunicorn.conf",
    "nginx-gunicorn-shared.conf",
    "nginx-asgi.conf",
    "nginx-asgi-per-worker.conf",
    "haproxy.cfg",
    "haproxy-asgi-per-worker.cfg",
    "gunicorn.conf.py",
)
#: An app gunicorn --check-config can import (the config's own wsgi_app is the user's).
CHECK_APP = "tests.measure_apps:pure_sleep"


def _accepted_cases(root: Path) -> list[list[str]]:
    """`gen all` arguments for every hostile value the workload accepts, as a flag or in a file:
    the same validation the CLI runs (`load_workload`), so no CLI run is spent on a refusal."""
    from servertune.workload import WorkloadError
    from servertune.workload_file import load_workload

    cases: list[list[str]] = []
    for name in Workload.model_fields:
        if name == "nginx_user":
            continue  # nginx -t looks the user up on this machine: a valid name may not exist here
        flag = FLAGS[name]
        if Workload.model_fields[name].annotation is not bool:
            for value in HOSTILE_TEXT:
                try:
                    load_workload(None, {name: value})
                except WorkloadError:
                    continue
                cases.append([flag, value])
                if name != "interface":
                    cases.append([flag, value, "--interface", "asgi"])
        for number, value in enumerate(HOSTILE_TOML):
            path = root / f"accepted-{name}-{number}.toml"
            path.write_text(f"{name} = {value}\n", encoding="utf-8")
            try:
                load_workload(path)
            except WorkloadError:
                continue
            cases.append(["--workload", str(path)])
    return cases


def test_every_accepted_value_renders_configs_the_real_servers_accept(
    sweep: Sweep, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """What the workload accepts of the hostile values (flags and file), rendered by `gen all`
    for WSGI and ASGI, passes `nginx -t` and `haproxy -c`: each distinct file checked once."""
    cases = _accepted_cases(tmp_path)
    assert len(cases) > 20, "some hostile values are valid (0, 4.0 for a float, keywords as names)"
    failures = []
    rendered: dict[str, Path] = {}
    for number, case in enumerate(cases):
        out = tmp_path / f"case-{number}"
        outcome = run_cli(["gen", "all", *case, "--out", str(out)], capsys, tmp_path)
        if outcome.code != 0:
            if _problem(outcome, sweep) is not None or outcome.code != 2:
                failures.append((case, outcome.err[:300]))
            continue  # a value `plan` takes may still fit no target (gen's own one-line error)
        for name in CHECKED:
            if (out / name).exists():
                rendered.setdefault((out / name).read_text(), out / name)
    assert failures == []
    kinds = {conf.name for conf in rendered.values()}
    assert kinds == set(CHECKED), kinds
    refused = []
    for conf in rendered.values():
        if conf.suffix == ".cfg":
            checked = subprocess.run(
                [tool("haproxy"), "-c", "-q", "-f", str(conf)],
                capture_output=True, text=True, timeout=30, check=False,
            )  # fmt: skip
        elif conf.name == "gunicorn.conf.py":
            checked = subprocess.run(
                [sys.executable, "-m", "gunicorn", "--check-config", "-c", str(conf), CHECK_APP],
                capture_output=True, text=True, timeout=60, check=False, cwd=REPO,
            )  # fmt: skip
        else:
            checked = nginx_check(conf)
        if checked.returncode != 0:
            refused.append((str(conf), checked.stderr[:300]))
    assert refused == []


def test_the_sweep_covers_every_option_and_field() -> None:
    """Derived, not listed: every command's value options and every Workload field are swept."""
    swept = {(c, o) for c, o, _ in PARAMS}
    assert ("plan", "--server-name") in swept
    assert ("measure", "--max-seconds") in swept
    assert ("check", "--lb-idle-timeout") in swept
    assert ("gen", "--out") in swept
    assert {
        f"--{n.replace('_', '-')}"
        for n in Workload.model_fields
        if Workload.model_fields[n].annotation is not bool
    } <= {o for c, o in swept if c == "plan"}
    assert set(FLAGS.values()) >= {o for c, o in swept if c == "plan" and o in WORKLOAD_OPTIONS}
    assert REPO.exists()
