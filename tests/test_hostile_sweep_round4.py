"""The hostile sweep, round 4 (issue 47): inputs the first sweep did not try, across every
option of every command (taken from the Typer app, as tests/test_hostile_sweep.py does), the
numbers a server config can hold (every check reader) and the values and timestamps of access
log lines. None may end in a traceback; a refusal is one `error:` line with exit 2; and a number
no server or workload can have (NaN, an infinity, one past any float) is never silently accepted
by an option that takes a number.

Everything runs in process (`servertune.cli.main`), so the ~1,500 cases take seconds.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main

from servertune.cli import app
from servertune.workload import Workload
from tests.test_hostile_sweep import BASES, PARAMS, Sweep, _problem, run_cli, sweep

__all__ = ["sweep"]  # the first sweep's fixture (its special files), shared

#: Unusual text the first sweep did not give: signs, bases, other scripts' digits, padding,
#: invisible characters, a value that looks like a flag, format strings, quotes and emoji.
UNUSUAL_TEXT = [
    "+5",
    "0x10",
    "\uff11\uff12",  # fullwidth 12
    "\u0663",  # Arabic-Indic 3
    " 4",
    "4 ",
    "-0",
    "00004",
    "\u200b4",  # a zero-width space before 4
    "9" * 400,
    "-inf",
    "1e999",
    "None",
    "--help",
    "%s%n",
    "\\",
    "'",
    '"',
    "\t",
    "\U0001f642",
    "1,5",
    "4k",
]
#: Numbers no option that takes a number may accept.
NEVER_A_NUMBER = ["nan", "-nan", "inf", "-inf", "1e999", "9" * 400 + ".0"]


def _numeric_options() -> list[tuple[str, str]]:
    """(command, option) for every option whose value is a number: typed int or float (an
    Optional one too), or a numeric Workload field (the workload options are typed by the model,
    not by Typer; swept with `plan`, as the first sweep does)."""
    group = typer.main.get_command(app)
    numeric_fields = {
        f"--{name.replace('_', '-')}"
        for name, info in Workload.model_fields.items()
        if re.search(r"\b(int|float)\b", str(info.annotation))
    }
    found = []
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        if name not in BASES:
            continue
        for param in command.params:
            if not param.opts or getattr(param, "is_flag", False):
                continue
            option = param.opts[0]
            annotation = str(param.type_descriptor.annotation)
            if re.fullmatch(r"<class '(int|float)'>|(int|float) \| None", annotation) or (
                name == "plan" and option in numeric_fields
            ):
                found.append((name, option))
    return found


NUMERIC = _numeric_options()


def _argv(command: str, option: str, positional: bool, value: str, sweep: Sweep) -> list[str]:
    base = [str(sweep.files["config"]) if arg == "CONFIG" else arg for arg in BASES[command]]
    if positional:
        positionals = [o for c, o, pos in PARAMS if c == command and pos]
        index = positionals.index(option)
        argv = list(base)
        if 1 + index < len(argv):
            argv[1 + index] = value
        else:
            argv.append(value)
        return argv
    argv = list(base)
    if option in argv:
        del argv[argv.index(option) : argv.index(option) + 2]
    return [*argv, option, value]


def test_the_sweep_is_at_least_300_inputs() -> None:
    """The issue asks for at least 300 hostile or unusual inputs: count them."""
    cli = len(PARAMS) * len(UNUSUAL_TEXT) + len(NUMERIC) * len(NEVER_A_NUMBER)
    readers = sum(len(values) for _, _, values in READER_CASES)
    logs = len(LOG_TIMESTAMPS) + len(LOG_VALUES)
    assert cli + readers + logs >= 300, (cli, readers, logs)
    assert len(NUMERIC) >= 20  # the numeric options were found, not an empty list


@pytest.mark.parametrize(
    ("command", "option", "positional"), PARAMS, ids=[f"{c} {o}" for c, o, _ in PARAMS]
)
def test_no_unusual_value_of_any_option_ends_in_a_traceback(
    command: str,
    option: str,
    positional: bool,
    sweep: Sweep,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """Every unusual value of this option: exit 0, 1 or 2, one `error:` line, specials intact."""
    problems = []
    for value in UNUSUAL_TEXT:
        outcome = run_cli(_argv(command, option, positional, value, sweep), capsys, tmp_path)
        problem = _problem(outcome, sweep)
        if problem is not None:
            problems.append((value[:40], problem))
    assert problems == []


@pytest.mark.parametrize(("command", "option"), NUMERIC, ids=[f"{c} {o}" for c, o in NUMERIC])
def test_no_option_that_takes_a_number_accepts_nan_or_infinity(
    command: str, option: str, sweep: Sweep, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """NaN, infinities and numbers past any float are refused with one `error:` line naming the
    option, never taken (a NaN compares false with every bound)."""
    accepted = []
    for value in NEVER_A_NUMBER:
        outcome = run_cli(_argv(command, option, False, value, sweep), capsys, tmp_path)
        assert _problem(outcome, sweep) is None, (value, outcome)
        if outcome.code != 2:
            accepted.append(value[:20])
    assert accepted == []


#: (file name, a line template with {v}, values): each reader given numbers no server runs with.
#: uWSGI reads a number's leading digits (atoi): `processes = 1e3` runs 1 process and
#: `listen = 1e9` a backlog of 1, so those are read as uWSGI reads them
#: (tests/test_check_uwsgi_values.py), not refused; what is left here is nonsense to uWSGI too.
READER_CASES = [
    ("uwsgi.ini", "[uwsgi]\nmodule = app:application\nprocesses = {v}\n",
     ["-4", "0", "99999999999999999999", "nan", "0x10"]),
    ("uwsgi.ini", "[uwsgi]\nmodule = app:application\nthreads = {v}\n",
     ["-1", "0", "2147483648", "abc"]),
    # listen = 0: the listen-queue-zero fault (test_check_values), not a refusal.
    ("uwsgi.ini", "[uwsgi]\nmodule = app:application\nlisten = {v}\n", ["-5", "x"]),
    ("uwsgi.ini", "[uwsgi]\nmodule = app:application\nharakiri = {v}\n", ["-3", "inf"]),
    ("uwsgi.ini", "[uwsgi]\nmodule = app:application\nmax-requests = {v}\n", ["-1", "x"]),
    ("gunicorn.conf.py", "workers = {v}\n",
     ["-4", "0", "99999999999999999999", "float('nan')", "'-4'", "None", "[1]"]),
    ("gunicorn.conf.py", "threads = {v}\n", ["0", "-1", "1099511627776"]),
    ("gunicorn.conf.py", "backlog = {v}\n", ["-1"]),
    ("gunicorn.conf.py", "timeout = {v}\n", ["-1", "float('inf')"]),
    ("gunicorn.conf.py", "keepalive = {v}\n", ["-2"]),
    ("Procfile", "web: uvicorn app:app --workers {v}\n", ["0", "-1", "x"]),
    ("Procfile", "web: uvicorn app:app --backlog {v}\n", ["-1"]),
    ("Procfile", "web: uvicorn app:app --limit-concurrency {v}\n", ["0", "-3"]),
    ("Procfile", "web: gunicorn app:app --workers {v}\n", ["0", "-1", "1e3"]),
    ("Procfile", "web: granian --interface asgi app:app --workers {v}\n", ["0", "-1"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "text", "values"), READER_CASES, ids=[f"{n}:{t.splitlines()[-1][:30]}" for n, t, _ in READER_CASES]
)  # fmt: skip
def test_no_reader_accepts_a_number_no_server_runs_with(
    name: str,
    text: str,
    values: list[str],
    sweep: Sweep,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """Each nonsense number: exit 2 with one `error:` line naming the file, never "no findings"."""
    accepted = []
    for value in values:
        (tmp_path / name).write_text(text.format(v=value))
        outcome = run_cli(["check", name], capsys, tmp_path)
        assert _problem(outcome, sweep) is None, (value, outcome)
        if outcome.code != 2 or name not in outcome.err:
            accepted.append((value, outcome.code, outcome.out[-120:]))
    assert accepted == []


_LINE = '127.0.0.1 - - [{ts}] "GET /x HTTP/1.1" 200 3 "-" "-" 46 0.012 {v} 0.000'
_GOOD_TS = "26/Nov/2026:13:40:15 +0000"
#: Timestamps a log line may carry: impossible dates and times, zones past any, year 9999.
LOG_TIMESTAMPS = [
    "31/Feb/2026:13:40:15 +0000", "26/Nov/2026:25:61:61 +0000", "26/Nov/2026:13:40:15 +9999",
    "26/Nov/9999:23:59:59 +0000", "00/Nov/2026:13:40:15 +0000", "26/Xyz/2026:13:40:15 +0000",
    "26/Nov/0001:00:00:00 -2359", "26/Nov/2026:13:40:15", "", "26/Nov/2026:13:40:15 +0000]",
]  # fmt: skip
#: Values of the timing field: negative, NaN, infinities, past any float, huge, a retry list.
LOG_VALUES = [
    "-1.000", "nan", "inf", "-inf", "1e400", "99999999", "0.000", "-", "1.0, 2.0 : 3.0",
    "1.0,", ", ,", "0x10", "1e-400", "\u0663.0",
]  # fmt: skip
NGINX_CONF = (
    "events {}\nhttp {\n    log_format timed '$remote_addr - $remote_user [$time_local] "
    '"$request" $status \'\n        \'$body_bytes_sent "$http_referer" "$http_user_agent" '
    "$request_length '\n        '$request_time $upstream_response_time "
    "$upstream_connect_time';\n    access_log /var/log/nginx/access.log timed;\n}\n"
)


@pytest.mark.parametrize("command", ["measure", "check"])
def test_no_log_timestamp_or_value_ends_in_a_traceback(
    command: str, sweep: Sweep, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A log whose one odd line has each timestamp or timing value: read (the line counted or
    set aside as unparsable) or refused in one `error:` line; never a traceback."""
    (tmp_path / "nginx.conf").write_text(NGINX_CONF)
    good = [_LINE.format(ts=_GOOD_TS, v="0.010") for _ in range(20)]
    problems = []
    cases = [(ts, "0.010") for ts in LOG_TIMESTAMPS] + [(_GOOD_TS, v) for v in LOG_VALUES]
    for number, (ts, value) in enumerate(cases):
        log = tmp_path / f"odd-{number}.log"
        log.write_text("\n".join([*good, _LINE.format(ts=ts, v=value)]) + "\n")
        argv = (
            ["measure", "--log", log.name, "--log-conf", "nginx.conf", "--out", f"w{number}.toml"]
            if command == "measure"
            else ["check", "--log", log.name, "nginx.conf"]
        )
        outcome = run_cli(argv, capsys, tmp_path)
        problem = _problem(outcome, sweep)
        if problem is not None:
            problems.append((ts, value, problem))
    assert problems == []


def test_a_negative_or_unreadable_timing_is_never_counted_as_a_time(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`-1.000`, NaN and infinities in the timing field are no request time: the written
    workload's service time is that of the 20 good lines (10 ms), whatever the odd line held."""
    (tmp_path / "nginx.conf").write_text(NGINX_CONF)
    good = [_LINE.format(ts=_GOOD_TS, v="0.010") for _ in range(20)]
    for number, value in enumerate(["-1.000", "nan", "inf", "-inf", "1e400"]):
        log = tmp_path / f"v{number}.log"
        log.write_text("\n".join([*good, _LINE.format(ts=_GOOD_TS, v=value)]) + "\n")
        out = tmp_path / f"v{number}.toml"
        argv = ["measure", "--log", log.name, "--log-conf", "nginx.conf", "--out", out.name]
        outcome = run_cli(argv, capsys, tmp_path)
        assert outcome.code == 0, (value, outcome)
        assert "service_time_ms = 10.0" in out.read_text(), (value, out.read_text())
