"""What a new user hit in round 4 (issue 47): each test pins one item's fix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from servertune.workload import Workload


@pytest.mark.parametrize("app", ["módulo:app", "pkg.módulo:aplicación", "приложение:app"])
def test_a_unicode_identifier_is_a_valid_app(app: str) -> None:
    """Item 6: `--app 'módulo:app'` names a module Python imports (str.isidentifier)."""
    assert Workload(app=app).app == app


@pytest.mark.parametrize(
    "app", ["²x:app", "mód ulo:app", "x:class", "módulo:ap\np", "a:b:c", "wsgi:\u0430pp"]
)
def test_what_is_not_an_identifier_is_still_refused(app: str) -> None:
    """Item 6: widening to Unicode lets no digit-like start, space, keyword, newline or
    look-alike (a Cyrillic a among Latin letters) in."""
    with pytest.raises(ValueError, match="app"):
        Workload(app=app)


def test_gunicorn_loads_a_generated_config_for_a_unicode_module(tmp_path: Path) -> None:
    """Item 6: the config `gen` writes for `módulo:aplicación` is one gunicorn loads the app from."""
    (tmp_path / "módulo.py").write_text(
        'def aplicación(environ, start_response):\n    start_response("200 OK", [])\n'
        '    return [b"ok"]\n'
    )
    conf = tmp_path / "gunicorn.conf.py"
    gen = subprocess.run(
        [sys.executable, "-m", "servertune", "gen", "gunicorn", "--cores", "2",
         "--app", "módulo:aplicación", "--app-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert gen.returncode == 0, gen.stderr
    conf.write_text(gen.stdout)
    gunicorn = Path(sys.executable).parent / "gunicorn"
    checked = subprocess.run(
        [str(gunicorn), "-c", str(conf), "--check-config"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr


def _parallel_report(tmp_path: Path, **changes: object) -> Path:
    """docs/results/parallel-3.13.json with `changes` made to its top level."""
    import json

    from tests.support import REPO

    data = json.loads((REPO / "docs" / "results" / "parallel-3.13.json").read_text())
    data.update(changes)
    path = tmp_path / "parallel.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"machine": {}}, "machine.measured_python is None"),
        ({"machine": {"measured_python": "abc"}}, "machine.measured_python is 'abc'"),
        ({"ratios": {"fib: asyncio / loop": -1}}, "a time ratio is a positive number"),
        ({"ratios": {"fib: asyncio / loop": "fast"}}, "not a number"),
        ({"ratios": {}}, "no `ratios` table"),
        (
            {"runs": [{"config": "subinterpreters", "task": "fib", "first_start_s": -3}]},
            "first_start_s",
        ),
    ],
)
def test_a_wrong_parallel_report_is_refused_not_cited(
    changes: dict[str, object], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 10: `advise --parallel` on a wrong report says what is wrong, never "Python ?" or
    "took -1.00 x the serial time"."""
    from tests.test_hostile_sweep import run_cli

    report = _parallel_report(tmp_path, **changes)
    outcome = run_cli(["advise", "--cores", "2", "--parallel", str(report)], capsys, tmp_path)
    assert outcome.code == 2, outcome
    assert outcome.err.startswith("error: --parallel: "), outcome.err
    assert words in outcome.err, outcome.err
    assert outcome.err.count("\n") == 1


def test_a_real_parallel_report_is_still_cited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 10: the checks refuse no report `bench parallel --json` writes."""
    from tests.test_hostile_sweep import run_cli

    outcome = run_cli(
        ["advise", "--cores", "2", "--parallel", str(_parallel_report(tmp_path))], capsys, tmp_path
    )
    assert outcome.code == 0, outcome
    assert "bench parallel, Python 3.13.0:" in outcome.out


def test_advise_on_a_log_workload_says_cpu_fraction_is_assumed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 11: a workload from `measure --log` has no cpu_fraction; advise does not judge
    asyncio "poor" from the default 0.5, it says the number is assumed and how to measure it."""
    from tests.support import REPO
    from tests.test_hostile_sweep import run_cli

    logs = REPO / "docs" / "recipes" / "tune-from-access-logs"
    made = run_cli(
        ["measure", "--log", str(logs / "access.log"), "--log-conf", str(logs / "nginx.conf"),
         "--out", "workload.toml"],
        capsys, tmp_path,
    )  # fmt: skip
    assert made.code == 0, made
    assert "cpu_fraction" not in (tmp_path / "workload.toml").read_text().split("[workload]")[1]
    outcome = run_cli(["advise", "--workload", "workload.toml", "--cores", "2"], capsys, tmp_path)
    assert outcome.code == 0, outcome
    assert "asyncio: unknown" in outcome.out
    assert "asyncio: poor" not in outcome.out
    assert "cpu_fraction 0.5 is assumed, not measured" in outcome.out
    assert "`servertune measure APP" in outcome.out
    measured = run_cli(
        ["advise", "--workload", "workload.toml", "--cores", "2", "--cpu-fraction", "0.5"],
        capsys, tmp_path,
    )  # fmt: skip
    assert "asyncio: poor" in measured.out
    assert "assumed" not in measured.out
    # CPU per request in milliseconds (what `measure APP` writes) is a measurement too.
    in_ms = run_cli(
        ["advise", "--workload", "workload.toml", "--cores", "2", "--cpu-ms", "40"],
        capsys, tmp_path,
    )  # fmt: skip
    assert in_ms.code == 0, in_ms
    assert "asyncio: unknown" not in in_ms.out
    assert "assumed" not in in_ms.out


def test_the_fix_a_log_finding_suggests_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 14: `check --log`'s fix for too few workers is two commands that both run (it said
    `servertune gen --workload workload.toml`, with no target: exit 2)."""
    import shlex
    import shutil

    from tests.support import REPO
    from tests.test_hostile_sweep import run_cli

    for name in ("access.log", "nginx.conf"):
        shutil.copy(REPO / "docs" / "recipes" / "tune-from-access-logs" / name, tmp_path / name)
    (tmp_path / "gunicorn.conf.py").write_text("workers = 1\nthreads = 1\n")
    argv = ["check", "--log", "access.log", "nginx.conf", "gunicorn.conf.py", "--cores", "2"]
    found = run_cli(argv, capsys, tmp_path)
    fixes = [line for line in found.out.splitlines() if "fix: servertune measure --log" in line]
    assert fixes, found.out
    for command in fixes[0].split("fix: ", 1)[1].split(", then "):
        words = shlex.split(command)
        assert words[0] == "servertune"
        extra = ["--cores", "2"] if words[1] == "gen" else []
        ran = run_cli([*words[1:], *extra], capsys, tmp_path)
        assert ran.code == 0, (command, ran.err)


@pytest.mark.parametrize(
    ("argv", "named", "not_named"),
    [
        (["check", "--log", "odd.log", "n.conf"], "--log-format", "--log-conf"),
        (["check", "--log", "odd.log", "--log-format", "nginx", "n.conf"], "--log-format", "--log-conf"),
        (["bench", "app", "app:application", "--replay", "odd.log", "--no-progress"], "--replay-format", "--log-format"),
        (["bench", "app", "app:application", "--replay", "odd.log", "--replay-format", "nginx", "--no-progress"], "--replay-format", "--log-format"),
    ],
)  # fmt: skip
def test_a_log_error_names_only_the_commands_own_flags(
    argv: list[str], named: str, not_named: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Item 14: `check --log` suggested `--log-conf` (only `measure` has it); `bench app
    --replay` said `--log-format` for its `--replay-format`."""
    from tests.test_hostile_sweep import run_cli

    (tmp_path / "odd.log").write_text("hello world\nfoo bar\n")
    (tmp_path / "n.conf").write_text("events {}\nhttp { server { listen 80; } }\n")
    (tmp_path / "app.py").write_text("def application(e, s):\n    return []\n")
    outcome = run_cli(argv, capsys, tmp_path)
    assert outcome.code == 2, outcome
    assert named in outcome.err, outcome.err
    assert not_named not in outcome.err, outcome.err


def test_bench_app_names_the_workload_flag_of_a_file_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 14: "binary.log is not UTF-8 text" said nothing of `--workload`."""
    from tests.test_hostile_sweep import run_cli

    (tmp_path / "binary.log").write_bytes(b"abc\xff\n")
    (tmp_path / "app.py").write_text(
        'def application(e, s):\n    s("200 OK", [])\n    return [b"ok"]\n'
    )
    argv = ["bench", "app", "app:application", "--workload", "binary.log", "--no-progress"]
    outcome = run_cli(argv, capsys, tmp_path)
    assert outcome.code == 2, outcome
    assert outcome.err.startswith("error: --workload: binary.log is not UTF-8 text"), outcome.err


@pytest.mark.parametrize("kind", ["loop", "dangling"])
def test_gen_out_on_a_link_to_nothing_says_so(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 14: a symlink loop as --out said "cannot write to loop1: File exists"."""
    from tests.test_hostile_sweep import run_cli

    if kind == "loop":
        (tmp_path / "out").symlink_to("other")
        (tmp_path / "other").symlink_to("out")
    else:
        (tmp_path / "out").symlink_to("missing")
    outcome = run_cli(["gen", "all", "--out", "out"], capsys, tmp_path)
    assert outcome.code == 2, outcome
    assert "--out: out is a symbolic link to nothing" in outcome.err, outcome.err
    assert "File exists" not in outcome.err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["bench", "app", "nosuch:app", "--keep-log", "out", "--no-progress"],
         "error: --keep-log: out is a symbolic link to nothing"),
        (["measure", "--log", "x.log", "--log-conf", "out"],
         "error: --log-conf: cannot read out: Too many levels of symbolic links"),
    ],
)  # fmt: skip
def test_a_loop_of_links_is_one_error_line_everywhere(
    argv: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 14: besides `gen --out`, `bench app --keep-log` and `measure --log-conf` met a loop
    of links with Python's RuntimeError traceback ("Symlink loop from ...")."""
    from tests.test_hostile_sweep import run_cli

    (tmp_path / "out").symlink_to("other")
    (tmp_path / "other").symlink_to("out")
    (tmp_path / "x.log").write_text(
        '1.2.3.4 - - [26/Nov/2026:13:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "-"\n'
    )
    outcome = run_cli(argv, capsys, tmp_path)
    assert outcome.code == 2, outcome
    assert outcome.err.startswith(said), outcome.err
    assert outcome.err.count("\n") == 1, outcome.err


@pytest.mark.parametrize("directory", ["missing", "loop"])
def test_bench_app_refuses_a_static_directory_that_is_not_here(
    directory: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`bench app --static /s/=DIR` with DIR missing (or a loop of links) ran a whole benchmark
    whose note said only that DIR had no file to ask for: now one error line, before any run."""
    from tests.test_hostile_sweep import run_cli

    (tmp_path / "loop").symlink_to("other")
    (tmp_path / "other").symlink_to("loop")
    where = tmp_path / directory
    argv = ["bench", "app", "nosuch:app", "--static", f"/s/={where}", "--no-progress"]
    outcome = run_cli(argv, capsys, tmp_path)
    assert outcome.code == 2, outcome
    assert (
        outcome.err
        == f"error: --static: {where} is not a directory here (nginx serves /s/ from it)\n"
    )


def test_quick_rounds_never_say_at_least_2_at_most_1() -> None:
    """Item 14: `bench app --quick` measures each level once; its note said "at least 2, at
    most 1 times"."""
    from servertune.bench.harness.rounds import AdaptiveRounds

    rounds = AdaptiveRounds(
        [("a", [1])], side={"a": ("g", "ours")}, ranked=lambda level: True,
        climb=lambda level: True, value=lambda level, row: 1.0, max_repeats=1,
    )  # fmt: skip
    note = rounds.notes()[0]
    assert "at least 2, at most 1" not in note
    assert "each level is measured once" in note


def test_a_target_not_measured_reads_as_such() -> None:
    """Item 14: a target without a value printed "- <= 2 -> not measured"."""
    from servertune.bench.harness.report import Report, Target

    report = Report(scenario="x", runs=[], machine={}, targets=[Target("p99 ratio", None, "<=", 2)])
    text = report.table()
    assert "target p99 ratio (<= 2): not measured" in text
    assert "- <= 2" not in text


def test_the_readme_install_table_names_every_extra_and_what_needs_logs() -> None:
    """Item 12: every extra of pyproject.toml has its row in the README's install table, and
    `measure --log` is listed under `logs` (ddsketch), not under the base install."""
    import re
    import tomllib

    from tests.support import REPO

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    readme = (REPO / "README.md").read_text()
    rows = re.findall(r"^\| (.+?) \| (.+?) \| (.+?) \|$", readme, re.M)
    named = {name.strip("`") for first, _, _ in rows for name in first.split(", ")}
    assert set(extras) <= named, set(extras) - named
    by_extra = {first.strip("`"): (adds, use) for first, adds, use in rows}
    assert "measure --log" in by_extra["logs"][1]
    assert "ddsketch" in by_extra["logs"][0]
    assert "measure --log" not in by_extra["(none)"][1]


def test_one_line_is_never_given_two_different_read_timeouts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 14: `check --log` gave nginx.conf:15 `proxy_read_timeout 35s` (the timeout chain)
    and `proxy_read_timeout 3s` (the log's tail) in one run; the log's fix now asks at least
    what the chain asks, so the two agree."""
    import shutil

    from tests.support import REPO
    from tests.test_hostile_sweep import run_cli

    for name in ("access.log", "nginx.conf"):
        shutil.copy(REPO / "docs" / "recipes" / "tune-from-access-logs" / name, tmp_path / name)
    assert "proxy_read_timeout 1s;" in (tmp_path / "nginx.conf").read_text()
    (tmp_path / "gunicorn.conf.py").write_text("workers = 1\nthreads = 1\n")
    argv = ["check", "--log", "access.log", "nginx.conf", "gunicorn.conf.py", "--cores", "2"]
    out = run_cli(argv, capsys, tmp_path).out
    fixes: dict[str, set[str]] = {}
    where = ""
    for line in out.splitlines():
        if not line.startswith(" "):
            where = line.split(": ", 1)[0]
        elif line.strip().startswith("fix: proxy_read_timeout"):
            fixes.setdefault(where, set()).add(line.split()[2])
    assert fixes, out
    assert all(len(values) == 1 for values in fixes.values()), fixes


def test_a_tail_past_both_timeouts_gets_fixes_that_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 14: with 10 % of a log's requests at 31 s behind nginx's 30 s and gunicorn's 30 s,
    nginx.conf:15 was told `proxy_read_timeout 35s` (the chain, or `timeout = 25`) and `62s`
    (the tail), and gunicorn both `timeout = 25` and "above 62 s". Now the app server's fix is
    one timeout, and every fix of the nginx line is that timeout + the 5 s margin."""
    import re
    import shutil

    from tests.support import REPO
    from tests.test_hostile_sweep import run_cli

    shutil.copy(REPO / "docs" / "recipes" / "tune-from-access-logs" / "nginx.conf", tmp_path)
    conf = tmp_path / "nginx.conf"
    conf.write_text(conf.read_text().replace("proxy_read_timeout 1s;", "proxy_read_timeout 30s;"))
    (tmp_path / "gunicorn.conf.py").write_text("workers = 4\n")
    (tmp_path / "access.log").write_text(
        "".join(
            f'127.0.0.1 - - [26/Nov/2026:13:{i // 120:02d}:{i // 2 % 60:02d} +0000] "GET /a '
            f'HTTP/1.1" 200 5 "-" "curl" 100 {t} {t} 0.000\n'
            for i, t in ((i, "31.000" if i % 10 == 0 else "0.050") for i in range(400))
        )
    )
    argv = ["check", "--log", "access.log", "nginx.conf", "gunicorn.conf.py", "--cores", "2"]
    out = run_cli(argv, capsys, tmp_path).out
    fixes: dict[str, list[str]] = {}
    where = ""
    for line in out.splitlines():
        if not line.startswith(" "):
            where = line.split(": ", 1)[0]
        elif line.strip().startswith("fix: "):
            fixes.setdefault(where, []).append(line.strip())
    app = {int(n) for f in fixes["gunicorn.conf.py:1"] for n in re.findall(r"timeout = (\d+)", f)}
    read = {int(n) for f in fixes["nginx.conf:15"] for n in re.findall(r"read_timeout (\d+)s", f)}
    assert len(app) == 1, fixes
    assert len(read) == 1, fixes
    assert read == {app.pop() + 5}, fixes
    assert not any("timeout = " in f for f in fixes["nginx.conf:15"]), fixes


def test_a_report_names_no_version_for_a_local_app() -> None:
    """Item 14: a report of a local app's run listed "myapp: not installed"; an app from a
    distribution (httpbin) keeps its version."""
    from importlib.metadata import version

    from servertune.bench.harness.versions import app_version

    assert app_version("myapp_that_is_local:app") == {}
    assert app_version("httpbin:app") == {"httpbin": version("httpbin")}


@pytest.mark.parametrize("kind", ["loop", "dangling"])
@pytest.mark.parametrize(
    "argv",
    [
        ["measure", "nosuch:app", "--out", "out"],
        ["bench", "cold-start", "--quick", "--json", "out"],
    ],
    ids=["measure-out", "bench-json"],
)
def test_an_output_file_that_is_a_link_to_nothing_is_refused_before_any_work(
    kind: str, argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --json or --out that is a link to nothing was accepted: the run's end would replace
    the link itself (or, for bench app's corrected workload, raise on resolve())."""
    from tests.test_hostile_sweep import run_cli

    if kind == "loop":
        (tmp_path / "out").symlink_to("other")
        (tmp_path / "other").symlink_to("out")
    else:
        (tmp_path / "out").symlink_to("missing")
    outcome = run_cli(argv, capsys, tmp_path)
    assert outcome.code == 2, outcome
    flag = argv[-2]
    assert (
        outcome.err
        == f"error: {flag}: cannot write out: a symbolic link to nothing (a missing target, or links in a loop)\n"
    ), outcome.err
    assert (tmp_path / "out").is_symlink()
