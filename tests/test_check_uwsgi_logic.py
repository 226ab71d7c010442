"""uWSGI's configuration loops (`for`, `for-times`, `for-readline`, `for-glob` up to `endfor`),
read as uWSGI reads them: each line of the loop added once per item with `%(_)` the item; a
loop over a file that is the machine's (outside the tree, or not here) is a note, and the rest
of the file is judged."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from servertune.check import check_files
from servertune.check.uwsgi import MAX_LOOP_ITEMS, uwsgi_settings
from servertune.sizing import Machine

from .support import tool

MACHINE = Machine(cores=4, cores_source="--cores", somaxconn=4096)

LOOPS = """\
[uwsgi]
base = 8001
for = %(base) 8002
  http-socket = :%(_)
  stats = /tmp/stats-%(_)
endfor =
for-times = 2
env = ROUND%(_)
end-for =
for-readline = extra.env
  env = %(_)
endfor =
for-glob = conf.d/*.ini
  touch-reload = %(_)
endfor =
for-glob = none/*.ini
  touch-reload = %(_)
end =
processes = 3
"""
#: Logic lines uWSGI's --show-config lists as options of their own.
_LOGIC = {"for", "for-times", "for-readline", "for-glob", "endfor", "end-for", "end"}


def test_loops_add_their_lines_per_item_as_uwsgi_itself_does(tmp_path: Path) -> None:
    """The real uWSGI's `--show-config` (started in the ini's directory, stopped by
    `--need-app` before it serves) lists, the loop lines aside, the same options, values and
    order as check reads: each body line once per item, `%(_)` the item, an unmatched glob
    its own pattern."""
    (tmp_path / "extra.env").write_text("A=1\nB=two\n")
    (tmp_path / "conf.d").mkdir()
    for name in ("b.ini", "a.ini"):
        (tmp_path / "conf.d" / name).write_text("")
    path = tmp_path / "app.ini"
    path.write_text(LOOPS)
    shown = subprocess.run(
        [tool("uwsgi"), "--ini", path.name, "--show-config", "--need-app"],
        cwd=tmp_path, capture_output=True, text=True, timeout=30, check=False,
        env={**os.environ, "PYTHONPATH": ""},
    )  # fmt: skip
    text = shown.stdout + shown.stderr
    block = text[text.index("[uwsgi]\n") : text.index(";end of configuration")]
    uwsgi = [tuple(line.split(" = ", 1)) for line in block.splitlines()[2:]]
    ours = [(k, v) for k, v, _ in uwsgi_settings(path, path.read_text(), {})]
    assert [o for o in uwsgi if o[0] not in _LOGIC] == [
        *ours,
        ("show-config", "true"),
        ("need-app", "true"),
    ]
    assert ("touch-reload", "conf.d/a.ini") in ours
    assert ("env", "B=two") in ours


def test_a_loop_over_a_file_of_the_machine_is_a_note_and_the_file_is_judged(
    tmp_path: Path,
) -> None:
    """`for-readline = /var/app/env` (a file of the machine uWSGI starts on) with `env = %(_)`
    is not refused: the loop's lines are left out with a note naming the line, and the
    sockets and processes around it are read."""
    ini = tmp_path / "uwsgi.ini"
    ini.write_text(
        "[uwsgi]\nmodule = app:application\nhttp-socket = :8080\n"
        "for-readline = /var/app/env\n  env = %(_)\nendfor =\n"
        "for-readline = generated.env\n  env = %(_)\nendfor =\nprocesses = 4\n"
    )
    result = check_files([ini], machine=MACHINE, env={})
    assert not result.errors
    (app,) = result.apps
    assert (app.workers.value, [s.value for s in app.sockets]) == (4, ["0.0.0.0:8080"])
    lines = {(n.kind, n.at.line) for n in result.notes}
    assert {("outside-tree", 4), ("unresolved-variable", 7)} <= lines


def test_a_loop_of_more_rounds_than_check_reads_is_a_note(tmp_path: Path) -> None:
    """`for-times` beyond MAX_LOOP_ITEMS (a hostile or mistaken count) is not run round by
    round: a note says its lines were not read, and the file is judged without them."""
    ini = tmp_path / "uwsgi.ini"
    ini.write_text(
        "[uwsgi]\nmodule = app\nhttp-socket = :8080\n"
        f"for-times = {MAX_LOOP_ITEMS * 1000}\n  socket = /tmp/s%(_)\nendfor =\n"
    )
    result = check_files([ini], machine=MACHINE, env={})
    assert not result.errors
    (app,) = result.apps
    assert [s.value for s in app.sockets] == ["0.0.0.0:8080"]
    assert [(n.kind, n.at.line) for n in result.notes] == [("not-supported", 4)]
