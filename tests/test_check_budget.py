"""Each file of a folder walk gets a time budget (`servertune.check.budget`): a file whose
reading overruns it is a coverage note and the walk goes on, so input nobody foresaw never
hangs a user's pre-commit hook or CI job. (A held-out project's compose file hung `check .`
for over 12 minutes on a regex that backtracked exponentially; evroon/bracket's deeply indented
blocks did the same, since fixed.)

Each test runs its check in a child process with a hard timeout, as the other hang tests do: a
runaway reading cannot be stopped from a thread of the test's own process. The readers that
hang loop until interrupted, and the budget is made small, so no test races the clock.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from servertune.check.asgi_cli import CLI_EVAL_CPU_S
from servertune.check.budget import FILE_BUDGET_S, LINK_BUDGET_S, over_budget
from servertune.check.gunicorn import GUNICORN_EVAL_TIMEOUT_S
from tests.folder_support import write

#: Every test's child is killed after this: a hang fails the test instead of the suite.
HARD_TIMEOUT_S = 60


def _in_a_child(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`code` run by a child Python with this test run's imports, killed after the timeout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=HARD_TIMEOUT_S,  # a hang fails here
        env=env,
        cwd=cwd,
        check=False,
    )


#: The folder the walks read: a front, the app server behind it, and `stuck` files whose
#: telling or reading the child's patched code makes loop forever.
FILES = {
    "nginx.conf": (
        "events {}\nhttp {\n  server {\n    listen 80;\n"
        "    location / { proxy_pass http://127.0.0.1:8000; }\n  }\n}\n"
    ),
    "gunicorn.conf.py": 'bind = "127.0.0.1:8000"\nworkers = 3\n',
    "deploy/stuck.conf": "upstream app { server 127.0.0.1:8000; }\n",
}
#: A script that starts the gunicorn (its scan for server lines after the reading is stuck).
_MORE = {"deploy/stuck.sh": "#!/bin/sh\nexec gunicorn -c gunicorn.conf.py app:app\n"}
_MORE_NAMES = {Path(name).name for name in _MORE}

#: The CLI's JSON for the folder, with the walk's telling of `deploy/stuck.conf` (`_claims`)
#: or its reading (`read_with`) looping until interrupted, and a budget of 2 s: far above what
#: reading the other small files takes on a loaded machine, so only the stuck file overruns.
_CHECK_WITH = """
import sys
from pathlib import Path
import servertune.check.budget as budget
import servertune.check.{module} as patched

budget.FILE_BUDGET_S = 2.0
original = patched.{function}

def stuck(*args, **kwargs):
    if any(isinstance(a, Path) and a.name == {stuck!r} for a in args):
        while True:  # a runaway reading: only the budget's signal ends it
            pass
    return original(*args, **kwargs)

patched.{function} = stuck
from servertune.cli.entry import main
sys.argv = ["servertune", "check", "--format", "json", "--cores", "4", *{argv!r}]
main()
"""


def _checked_with_a_stuck_file(
    tmp_path: Path,
    module: str,
    function: str,
    argv: tuple[str, ...] = (".",),
    stuck: str = "stuck.conf",
) -> dict[str, object]:
    write(tmp_path, {**FILES, **(_MORE if stuck in _MORE_NAMES else {})})
    code = _CHECK_WITH.format(module=module, function=function, argv=list(argv), stuck=stuck)
    done = _in_a_child(code, tmp_path)
    assert done.stdout, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    report["exit"] = done.returncode
    return report


def _notes(report: dict[str, object]) -> list[dict[str, object]]:
    notes = report["coverage"]
    assert isinstance(notes, list)
    return notes


def test_a_runaway_regex_is_interrupted_by_the_budget_and_the_handler_restored() -> None:
    """CPython's regex engine checks for signals as it matches, so a pattern that backtracks
    exponentially (`(a+)+$` on a's and one b: 2**40 tries) is cut short by the budget's timer;
    afterwards SIGALRM's handler and timer are the ones before it (here a handler of the
    caller's own, with its timer running on)."""
    code = """
import re, signal, time
from servertune.check.budget import OverBudget, within_budget

def mine(signum, frame):
    print("caller's alarm")

signal.signal(signal.SIGALRM, mine)
signal.setitimer(signal.ITIMER_REAL, 30)
started = time.monotonic()
try:
    with within_budget(0.2):
        re.match(r"(a+)+$", "a" * 40 + "b")
    print("finished")
except OverBudget:
    print("interrupted", round(time.monotonic() - started) < 10)
print(signal.getsignal(signal.SIGALRM) is mine, 20 < signal.getitimer(signal.ITIMER_REAL)[0] <= 30)
"""
    done = _in_a_child(code, Path.cwd())
    assert done.stdout.split("\n")[:2] == ["interrupted True", "True True"], done.stderr


def test_a_file_whose_telling_overruns_its_budget_is_named_and_the_walk_goes_on(
    tmp_path: Path,
) -> None:
    """A file the walk cannot tell in its budget (which kind it is) is named among the files
    not read, with why ("reading took over 2 s; please report"), and every other file is
    still read and linked: the front to the gunicorn behind it."""
    report = _checked_with_a_stuck_file(tmp_path, "discover", "_claims")
    said = [n for n in _notes(report) if "please report" in str(n["message"])]
    assert len(said) == 1
    assert "reading took over 2 s; please report (1): " in str(said[0]["message"])
    assert "stuck.conf" in str(said[0]["message"])
    assert set(map(str, report["files"])) >= {"nginx.conf", "gunicorn.conf.py"}  # type: ignore[call-overload]
    assert "deploy/stuck.conf" not in report["files"]  # type: ignore[operator]
    assert report["links"], report


def test_a_file_whose_reading_overruns_its_budget_is_a_note_and_the_others_are_read(
    tmp_path: Path,
) -> None:
    """A file told as a kind check reads whose reading overruns its budget is a `not-read`
    coverage note at the file ("not read: reading took over 2 s; please report"), not an
    error: the exit status is the one the other files give (a note never changes it), and
    they are still read and linked."""
    report = _checked_with_a_stuck_file(tmp_path, "audit", "read_with")
    said = [n for n in _notes(report) if "please report" in str(n["message"])]
    assert [(n["kind"], n["file"], n["message"]) for n in said] == [
        ("not-read", "deploy/stuck.conf", "not read: reading took over 2 s; please report")
    ]
    assert report["exit"] == 0, report
    assert not report["errors"]
    assert "deploy/stuck.conf" not in report["files"]  # type: ignore[operator]
    assert report["links"], report


def test_a_file_over_its_budget_before_its_reading_is_not_read_nor_tried_again(
    tmp_path: Path,
) -> None:
    """What a run works out from every file before reading them (here the files a script
    writes with here-documents) is budgeted per file too: a file that overruns it is the same
    `not-read` note, is not read after (its budget is not spent again), and the others are
    read and linked."""
    report = _checked_with_a_stuck_file(tmp_path, "written_files", "scripts_written")
    said = [n for n in _notes(report) if "please report" in str(n["message"])]
    assert [(n["kind"], n["file"], n["message"]) for n in said] == [
        ("not-read", "deploy/stuck.conf", "not read: reading took over 2 s; please report")
    ]
    assert report["exit"] == 0, report
    assert "deploy/stuck.conf" not in report["files"]  # type: ignore[operator]
    assert report["links"], report


def test_a_named_file_whose_reading_overruns_its_budget_is_an_error(tmp_path: Path) -> None:
    """A file named on the command line whose reading overruns its budget is a file not read
    (exit 2, as for any file named that cannot be read: the user said to read it), and the
    other files named are still read and linked."""
    argv = ("nginx.conf", "gunicorn.conf.py", "deploy/stuck.conf")
    report = _checked_with_a_stuck_file(tmp_path, "audit", "read_with", argv)
    assert report["exit"] == 2, report
    assert [(e["file"], e["message"]) for e in report["errors"]] == [  # type: ignore[attr-defined]
        ("deploy/stuck.conf", "deploy/stuck.conf: not read: reading took over 2 s; please report")
    ]
    assert report["links"], report


def test_the_budget_is_declared_once_said_in_the_note_and_above_the_childrens_limits() -> None:
    """The budget is one declared constant, the note says it, and it is above the limits of
    the children a reading starts, so a gunicorn config that loops is still said to loop."""
    assert over_budget() == f"not read: reading took over {FILE_BUDGET_S:g} s; please report"
    assert max(GUNICORN_EVAL_TIMEOUT_S, CLI_EVAL_CPU_S) < FILE_BUDGET_S


def test_a_pass_over_the_compose_files_before_reading_is_budgeted_per_file(
    tmp_path: Path,
) -> None:
    """Every pass over the run's files is budgeted per file, not only the reading: here the
    one that parses each compose file for what it builds and mounts (done before any file is
    read) is stuck on one file; that file is one `not-read` note, is not tried again, and the
    others are read and linked."""
    report = _checked_with_a_stuck_file(tmp_path, "compose", "read_text")
    said = [n for n in _notes(report) if "please report" in str(n["message"])]
    assert [(n["kind"], n["file"], n["message"]) for n in said] == [
        ("not-read", "deploy/stuck.conf", "not read: reading took over 2 s; please report")
    ]
    assert report["exit"] == 0, report
    assert "deploy/stuck.conf" not in report["files"]  # type: ignore[operator]
    assert report["links"], report


def test_a_file_over_its_budget_in_a_pass_after_its_reading_is_named_and_left_out(
    tmp_path: Path,
) -> None:
    """A pass after the reading (the scan of each file for a server line no launch reached)
    is budgeted per file too: a file over it is the same `not-read` note, is not listed among
    the files read, and the run's links and exit status are the others'."""
    report = _checked_with_a_stuck_file(tmp_path, "unreached", "_scanned", stuck="stuck.sh")
    said = [n for n in _notes(report) if "please report" in str(n["message"])]
    assert [(n["kind"], n["file"], n["message"]) for n in said] == [
        ("not-read", "deploy/stuck.sh", "not read: reading took over 2 s; please report")
    ]
    assert report["exit"] == 0, report
    assert "deploy/stuck.sh" not in report["files"]  # type: ignore[operator]
    assert report["links"], report


#: The CLI's JSON for the folder, with the linking (`audit.link`) looping until interrupted
#: (`stuck`) or finding no link, and a linking budget of 2 s.
_LINK_WITH = """
import sys
import servertune.check.audit as audit
import servertune.check.budget as budget

budget.LINK_BUDGET_S = 2.0

def stuck(*args, **kwargs):
    if {stuck!r}:
        while True:  # a runaway linking: only the budget's signal ends it
            pass
    return []

audit.link = stuck
from servertune.cli.entry import main
sys.argv = ["servertune", "check", "--format", "json", "--cores", "4", "."]
main()
"""


def _linked_with(tmp_path: Path, stuck: bool) -> dict[str, object]:
    write(tmp_path, FILES)
    done = _in_a_child(_LINK_WITH.format(stuck=stuck), tmp_path)
    assert done.stdout, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    report["exit"] = done.returncode
    return report


def test_a_linking_over_its_budget_is_one_note_and_ends_as_a_run_that_found_no_link(
    tmp_path: Path,
) -> None:
    """The whole linking has one budget (`LINK_BUDGET_S`): over it, the run keeps what it
    read, says one note ("not linked: linking took over 2 s; please report") and ends as a
    run whose linking found no link does: the same exit status, findings and files."""
    from servertune.check.budget import LINK_BUDGET_S, not_linked

    over = _linked_with(tmp_path / "over", stuck=True)
    none = _linked_with(tmp_path / "none", stuck=False)
    said = [n for n in _notes(over) if "please report" in str(n["message"])]
    assert [n["message"] for n in said] == ["not linked: linking took over 2 s; please report"]
    assert not over["links"]
    assert over["exit"] == none["exit"]
    assert over["findings"] == none["findings"]
    assert over["files"] == none["files"]
    assert not_linked() == f"not linked: linking took over {LINK_BUDGET_S:g} s; please report"


def test_a_file_budget_inside_another_budget_is_the_outer_ones_and_blames_no_file() -> None:
    """Budgets do not nest: a pass over files started inside another budget (the linking's,
    another file's reading) gives its files no timer of their own, so the outer budget runs
    out when it would have; its OverBudget goes on to the outer block (never swallowed as the
    file's), the file is not recorded as over its own budget, and the handler is restored."""
    code = """
import signal, time
from pathlib import Path
from servertune.check import memo
from servertune.check.budget import OverBudget, each_within_budget, overran, within_budget

def loop(path):
    while True:
        pass

started = time.monotonic()
with memo.one_run():
    try:
        with within_budget(0.5):
            each_within_budget([Path("a.conf")], loop)
        print("finished")
    except OverBudget:
        print("outer", time.monotonic() - started < 10, overran(Path("a.conf")))
print(signal.getsignal(signal.SIGALRM) is signal.SIG_DFL)
"""
    done = _in_a_child(code, Path.cwd())
    assert done.stdout.split("\n")[:2] == ["outer True False", "True"], done.stderr


def test_the_docs_state_the_budgets_as_declared() -> None:
    """docs/check.md names both budgets with the figures `budget` declares, so the prose
    cannot drift from the constants."""
    docs = (Path(__file__).parent.parent / "docs" / "check.md").read_text()
    assert f"reading took over {FILE_BUDGET_S:g} s; please report" in docs
    assert f"linking took over {LINK_BUDGET_S:g} s; please report" in docs
