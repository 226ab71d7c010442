"""Every CLI command that reads or writes a file, fed a corpus of broken files: one `error:` line, exit 2.

The commands run through the console entry point (`servertune.cli.main`), in process, so what
is checked is exactly what a user sees: a single line on stderr naming the file and the reason,
nothing on stdout, no traceback, exit code 2.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from servertune.advise import MAX_REPORT_BYTES
from servertune.cli import main
from servertune.workload import Workload
from servertune.workload_file import MAX_WORKLOAD_FILE_BYTES
from tests.test_safety import HOSTILE

#: Broken inputs every file-reading option must refuse, each made inside a temporary directory.
READ_CORPUS: dict[str, Callable[[Path], Path]] = {}


def _corpus(name: str) -> Callable[[Callable[[Path], Path]], Callable[[Path], Path]]:
    def register(make: Callable[[Path], Path]) -> Callable[[Path], Path]:
        READ_CORPUS[name] = make
        return make

    return register


def _file(tmp: Path, content: bytes) -> Path:
    path = tmp / "input.toml"
    path.write_bytes(content)
    return path


@_corpus("empty")
def _empty(tmp: Path) -> Path:
    return _file(tmp, b"")


@_corpus("non-utf8")
def _non_utf8(tmp: Path) -> Path:
    return _file(tmp, b"\xff\xfe[workload]")


@_corpus("binary")
def _binary(tmp: Path) -> Path:
    return _file(tmp, bytes(range(256)) * 4)


@_corpus("huge")
def _huge(tmp: Path) -> Path:
    return _file(tmp, b"#" * (max(MAX_WORKLOAD_FILE_BYTES, MAX_REPORT_BYTES) + 1))


@_corpus("directory")
def _directory(tmp: Path) -> Path:
    path = tmp / "a-directory"
    path.mkdir()
    return path


@_corpus("missing")
def _missing(tmp: Path) -> Path:
    return tmp / "no-such-file.toml"


@_corpus("fifo")
def _fifo(tmp: Path) -> Path:
    path = tmp / "fifo.toml"
    os.mkfifo(path)
    return path


@_corpus("malformed")
def _malformed(tmp: Path) -> Path:
    return _file(tmp, b'{"cores": [\n')


@_corpus("unknown-table")
def _unknown_table(tmp: Path) -> Path:
    return _file(tmp, b"[workload]\ncores = 2\n[foo]\nx = 1\n")


@_corpus("deeply-nested")
def _deeply_nested(tmp: Path) -> Path:
    # Within the size limit, deep enough to exhaust a recursive parser (TOML or JSON).
    return _file(tmp, b"a = " + b"[" * 100_000)


@_corpus("deeply-nested-json")
def _deeply_nested_json(tmp: Path) -> Path:
    return _file(tmp, b"[" * 100_000)


@_corpus("null-bytes")
def _null_bytes(tmp: Path) -> Path:
    return _file(tmp, b"cores = 2\x00\n")


#: Commands and where the broken file goes; FILE is replaced by its path.
READERS = [
    ["gen", "uwsgi", "--workload", "FILE"],
    ["gen", "all", "--workload", "FILE", "--out", "OUTDIR"],
    ["explain", "--workload", "FILE"],
    ["plan", "--workload", "FILE"],
    ["plan", "--json", "--workload", "FILE"],
    ["advise", "--workload", "FILE"],
    ["advise", "--parallel", "FILE"],
]


def _dir_named(tmp: Path, name: str) -> Path:
    path = tmp / name
    path.mkdir()
    return path


#: Output targets (named `name`) that cannot be written, each made inside a temporary directory.
WRITE_CORPUS: dict[str, Callable[[Path, str], Path]] = {
    "directory in the way": _dir_named,
    "missing parent": lambda tmp, name: tmp / "missing" / name,
    "parent is a file": lambda tmp, name: _file(tmp, b"x") / name,
    "proc": lambda tmp, name: Path("/proc") / f"servertune-{name}",
}

#: Commands and the output file name they take; FILE is replaced by the target.
WRITERS = [
    (["measure", "tests.measure_apps:raises", "--out", "FILE"], "out.toml"),
    (["bench", "cold-start", "--quick", "--json", "FILE"], "out.json"),
    (["bench", "cold-start", "--quick", "--plot", "FILE"], "out.png"),
]


def _run(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["servertune", *argv])
    with pytest.raises(SystemExit) as exit_:
        main()
    out, err = capsys.readouterr()
    return int(exit_.value.code or 0), out, err


def _assert_one_error_line(code: int, out: str, err: str, path: Path) -> None:
    assert code == 2, err
    assert out == ""
    assert err.startswith("error: "), err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert str(path) in err, err  # the file is named


@pytest.mark.parametrize("argv", READERS, ids=[" ".join(a) for a in READERS])
@pytest.mark.parametrize("broken", list(READ_CORPUS))
def test_every_reader_refuses_every_broken_file(
    argv: list[str], broken: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """gen/explain/plan/advise with a broken --workload or --parallel: one line naming the file, exit 2."""
    path = READ_CORPUS[broken](tmp_path)
    outdir = tmp_path / "out"
    args = [str(path) if a == "FILE" else str(outdir) if a == "OUTDIR" else a for a in argv]
    code, out, err = _run(args, monkeypatch, capsys)
    _assert_one_error_line(code, out, err, path)
    assert not outdir.exists()  # nothing half-written


def test_parallel_report_that_is_valid_json_but_no_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSON file that is not a `bench parallel` report is refused by name."""
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"scenario": "hol"}))
    code, out, err = _run(["advise", "--parallel", str(path)], monkeypatch, capsys)
    _assert_one_error_line(code, out, err, path)


@pytest.mark.parametrize(("argv", "name"), WRITERS, ids=[" ".join(a) for a, _ in WRITERS])
@pytest.mark.parametrize("broken", list(WRITE_CORPUS))
def test_every_writer_refuses_an_unwritable_target_before_working(
    argv: list[str], name: str, broken: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """measure --out and bench --json/--plot: an unwritable target is one line, exit 2, before any run.

    The measured app raises on every request, and the benchmark would take seconds: a refusal
    that came after the work would show the app's error or take that long instead.
    """
    target = WRITE_CORPUS[broken](tmp_path, name)
    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # tests.measure_apps imports from here
    code, out, err = _run([str(target) if a == "FILE" else a for a in argv], monkeypatch, capsys)
    _assert_one_error_line(code, out, err, target)


@pytest.mark.parametrize("field", list(Workload.model_fields))
@pytest.mark.parametrize("value", HOSTILE, ids=[repr(v)[:24] for v in HOSTILE])
def test_hostile_value_in_a_workload_file_names_field_and_file(
    field: str, value: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Every hostile value, written into a workload file: one line naming the field and the file, no file written."""
    path = tmp_path / "w.toml"
    path.write_text(dumps_toml_string(field, value), encoding="utf-8")
    out = tmp_path / "out"
    code, stdout, err = _run(
        ["gen", "all", "--workload", str(path), "--out", str(out)], monkeypatch, capsys
    )
    if code == 0:  # legitimate for a few fields, as with flags (see test_safety)
        assert (field, value) in {
            ("listen_host", "0.0.0.0"),
            ("lb_listen_host", "0.0.0.0"),
            ("server_name", "0.0.0.0"),
            # A digits-and-dots registry name is a valid image reference (see test_safety).
            ("app_image", "0.0.0.0"),
            ("nginx_image", "0.0.0.0"),
        }
        return
    _assert_one_error_line(code, stdout, err, path)
    assert err.startswith(f"error: {field} (--workload {path}): ")
    assert not out.exists()


def dumps_toml_string(field: str, value: str) -> str:
    """`field = "value"` under [workload], the value escaped as a TOML basic string."""
    return f"[workload]\n{field} = {json.dumps(value)}\n"
