"""uWSGI's `ini = file[:section]` chaining and `@(file)` values, read as uWSGI reads them,
with every finding pointing into the file where the option was set."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.check import check_files
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.check.source import MAX_CONFIG_BYTES
from servertune.check.uwsgi import uwsgi_settings
from servertune.cli import app
from servertune.sizing import Machine

from .support import tool

BASE = """\
[uwsgi]
processes = 3
harakiri = 30
chdir = %d
max-requests = 500

[prod]
processes = 5
listen = 1024
"""
APP = """\
[uwsgi]
ini = base.ini
socket = %dapp.sock
max-requests-delta = @(jitter.txt)
ini = base.ini:prod
threads = 2
ini = :other
procname = %n

[other]
harakiri = 45
"""


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "base.ini").write_text(BASE)
    (tmp_path / "jitter.txt").write_text("7\n")
    path = tmp_path / "app.ini"
    path.write_text(APP)
    return path


def test_chained_sections_and_file_values_match_uwsgi_itself(tmp_path: Path) -> None:
    """The real uWSGI's own `--show-config` (started in the ini's directory, stopped by
    `--need-app` before it serves) lists the same options, values and order as check reads:
    base.ini's [uwsgi] in place, @(jitter.txt) without its newline, base.ini's [prod], and
    `ini = :other` looking in the file read last (base.ini, which has no [other])."""
    path = _tree(tmp_path)
    shown = subprocess.run(
        [tool("uwsgi"), "--ini", path.name, "--show-config", "--need-app"],
        cwd=tmp_path, capture_output=True, text=True, timeout=30, check=False,
        env={**os.environ, "PYTHONPATH": ""},
    )  # fmt: skip
    text = shown.stdout + shown.stderr
    block = text[text.index("[uwsgi]\n") : text.index(";end of configuration")]
    uwsgi = [tuple(line.split(" = ", 1)) for line in block.splitlines()[1:]]
    # Started here: the file is deployed at this path, so its `%d` is this folder.
    ours = [(k, v) for k, v, _ in uwsgi_settings(path, path.read_text(), {}, installed=str(path))]
    assert uwsgi[0] == ("ini", "app.ini")  # the command line's own --ini
    assert uwsgi[1:] == [*ours, ("show-config", "true"), ("need-app", "true")]
    assert ("harakiri", "45") not in ours


def test_findings_point_into_the_file_that_set_the_option(tmp_path: Path) -> None:
    """processes = 5 comes from base.ini's [prod] line 8: the finding says base.ini:8."""
    path = _tree(tmp_path)
    result = check_files([path], machine=Machine(cores=2, somaxconn=4096))
    (server,) = result.apps
    assert (server.workers.value, str(server.workers.at)) == (5, f"{tmp_path}/base.ini:8")
    assert str(server.max_requests_jitter.at) == f"{path}:4"
    (finding,) = [f for f in result.findings if f.rule == "workers-over-cores"]
    assert finding.at == server.workers.at
    assert result.files == (path, tmp_path / "base.ini", tmp_path / "jitter.txt")


def _write(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    return tmp_path / "conf" / "app.ini"


HOSTILE: dict[str, tuple[dict[str, str | bytes], str]] = {
    "cycle": (
        {"conf/app.ini": "[uwsgi]\nini = b.ini\n", "conf/b.ini": "[uwsgi]\nini = app.ini\n"},
        "ini include cycle",
    ),
    "self-section-cycle": ({"conf/app.ini": "[uwsgi]\nini = :uwsgi\n"}, "ini include cycle"),
    "missing": ({"conf/app.ini": "[uwsgi]\nini = base.ini:prod\n"}, "no such file"),
    "exec": ({"conf/app.ini": "[uwsgi]\nprocesses = @(exec://nproc)\n"}, "scheme"),
    "huge": (
        {
            "conf/app.ini": "[uwsgi]\nprocesses = @(big.txt)\n",
            "conf/big.txt": "1" * (MAX_CONFIG_BYTES + 1),
        },
        "larger than",
    ),
    "binary": (
        {"conf/app.ini": "[uwsgi]\nini = bin.ini\n", "conf/bin.ini": b"[uwsgi]\n\0\x01"},
        "binary file",
    ),
    "not-utf8": (
        {"conf/app.ini": "[uwsgi]\nini = latin.ini\n", "conf/latin.ini": b"[uwsgi]\n\xe9\n"},
        "not UTF-8",
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_chained_files_are_refused_in_one_error_line(name: str, tmp_path: Path) -> None:
    """A cycle, a missing, huge, binary or non-UTF-8 file, a scheme uWSGI would run, a placeholder uWSGI would not
    expand: one `error:` line naming the file and the reason, exit 2, nothing else."""
    files, reason = HOSTILE[name]
    path = _write(tmp_path, files)
    result = CliRunner().invoke(app, ["check", str(path)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: "), result.output
    assert lines[0].startswith(f"error: {path.parent}/"), lines  # the line that reads it
    assert reason in lines[0], lines[0]


def test_ini_section_on_the_command_line_is_read_with_the_sections_it_chains(
    tmp_path: Path,
) -> None:
    """`uwsgi --ini wsgi.ini:web --gevent 200`: the `[web]` section, whose `ini = :uwsgi`
    pulls the same file's `[uwsgi]` (die-on-term, one process): read, not config-not-found,
    and its 200 gevent cores make one process serve many requests (no one-process-one-thread)."""
    (tmp_path / "wsgi.ini").write_text(
        "[uwsgi]\nmodule = wsgi:app\nmaster = true\nprocesses = 1\ndie-on-term = true\n"
        "socket = [::]:5000\n\n[web]\nini = :uwsgi\nhttp = [::]:8080\n"
    )
    (tmp_path / "start.sh").write_text(
        "#!/bin/sh\nexec uwsgi --ini wsgi.ini:web --gevent 200 --max-fd 1048576\n"
    )
    machine = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)
    result = check_files([tmp_path / "start.sh"], machine=machine, env={})
    (app,) = result.apps
    assert app.config_file is not None
    assert app.config_file.file == tmp_path / "wsgi.ini"
    assert not [n for n in result.notes if n.kind == "config-not-found"]
    assert not [f for f in result.findings if f.rule == "one-process-one-thread"]
    assert [f.rule for f in result.findings if f.rule.startswith("uwsgi-sigterm")] == [
        "uwsgi-sigterm-cuts-requests"
    ]


def test_include_of_each_file_a_for_glob_matches_reads_them_in_place_as_uwsgi_does(
    tmp_path: Path,
) -> None:
    """`for-glob = conf.d/*.ini` with `include = %(_)`: the real uWSGI's `--show-config`
    reads each matched ini's options in place, in name order, right after its `include`
    line; check reads the same options in the same order (the loop's own lines aside)."""
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "20_workers.ini").write_text("[uwsgi]\nprocesses = 3\nthreads = 2\n")
    (tmp_path / "conf.d" / "10_socket.ini").write_text(f"[uwsgi]\nsocket = {tmp_path}/a.sock\n")
    path = tmp_path / "app.ini"
    path.write_text("[uwsgi]\nmodule = app\nfor-glob = conf.d/*.ini\ninclude = %(_)\nendfor =\n")
    shown = subprocess.run(
        [tool("uwsgi"), "--ini", path.name, "--show-config", "--need-app"],
        cwd=tmp_path, capture_output=True, text=True, timeout=30, check=False,
        env={**os.environ, "PYTHONPATH": ""},
    )  # fmt: skip
    text = shown.stdout + shown.stderr
    block = text[text.index("[uwsgi]\n") : text.index(";end of configuration")]
    uwsgi = [tuple(line.split(" = ", 1)) for line in block.splitlines()[2:]]
    uwsgi = [o for o in uwsgi if o[0] not in ("for-glob", "endfor", "show-config", "need-app")]
    ours = [(k, v) for k, v, _ in uwsgi_settings(path, path.read_text(), {})]
    assert ours == uwsgi
    assert ("processes", "3") in ours


def test_for_glob_over_an_image_folder_reads_the_files_the_dockerfile_copies_there(
    tmp_path: Path,
) -> None:
    """`COPY uwsgi /etc/` and `uwsgi --ini /etc/uwsgi.ini`, whose `for-glob = /etc/uwsgi.d/*`
    includes each file (seen in ThePalaceProject/circulation): the included files are the
    repository's uwsgi/uwsgi.d/*, parts of the one instance that loops (3 processes x 2
    threads on the socket one of them sets), not launches of their own, and no note says the
    image's folder lies outside the tree."""
    files = {
        "Dockerfile": 'FROM python:3.12-slim\nCOPY uwsgi /etc/\nCMD ["uwsgi", "--ini", '
        '"/etc/uwsgi.ini"]\n',
        "uwsgi/uwsgi.ini": "[uwsgi]\nmodule = app\ndie-on-term = true\n"
        "for-glob = /etc/uwsgi.d/*\ninclude = %(_)\nendfor =\n",
        "uwsgi/uwsgi.d/10_user.ini": "[uwsgi]\nuid = app\n",
        "uwsgi/uwsgi.d/20_socket.ini": "[uwsgi]\nsocket = /run/app.sock\n",
        "uwsgi/uwsgi.d/30_workers.ini": "[uwsgi]\nprocesses = 3\nthreads = 2\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    walk = discover(tmp_path)
    machine = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)
    result = check_files(list(walk.files), machine=machine, discovered=[walk], root=tmp_path)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert [at.file.relative_to(tmp_path).as_posix() for at in launch.chain] == [
        "Dockerfile",
        "uwsgi/uwsgi.ini",
        "uwsgi/uwsgi.d/10_user.ini",
        "uwsgi/uwsgi.d/20_socket.ini",
        "uwsgi/uwsgi.d/30_workers.ini",
    ]
    app = launch.app
    assert (app.workers.value, app.threads.value) == (3, 2)
    assert [s.value for s in app.sockets] == ["unix:/run/app.sock"]
    assert not [n for n in result.notes if n.kind == "outside-tree"]
    assert not [f for f in result.findings if f.rule == "one-process-one-thread"]
