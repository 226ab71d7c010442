"""The workload file: one reader and one writer, a typed [measured] table, refusals naming the file."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from servertune.workload import WorkloadError
from servertune.workload_file import (
    MAX_WORKLOAD_FILE_BYTES,
    Measured,
    MeasuredPath,
    Spread,
    WorkloadFileError,
    dumps,
    load_workload,
    read_workload_file,
)

SPREAD = Spread(p10=1.0, p50=2.0, p90=3.0, mean=2.1)


def _measured(**extra: object) -> Measured:
    return Measured(
        interface="wsgi", method="GET", requests=5, service_time_ms=SPREAD, cpu_fraction=SPREAD,
        **extra,  # type: ignore[arg-type]
    )  # fmt: skip


def test_written_file_reads_back_as_the_same_values_and_measured(tmp_path: Path) -> None:
    """dumps() then read_workload_file() gives back the workload values and an equal Measured."""
    measured = _measured(path="/x?a=1", raw_cpu_fraction=0.5)
    path = tmp_path / "w.toml"
    path.write_text(dumps({"cpu_fraction": 0.25, "app": "a.b:c"}, measured, ["made here"]))
    read = read_workload_file(path)
    assert read.values == {"cpu_fraction": 0.25, "app": "a.b:c"}
    assert read.measured == measured
    assert load_workload(path).cpu_fraction == 0.25


def test_a_mix_writes_each_path_as_an_array_of_tables(tmp_path: Path) -> None:
    """A mixed [measured] keeps every path with its weight under [[measured.paths]]."""
    paths = tuple(
        MeasuredPath(path=p, weight=w, requests=3, service_time_ms=SPREAD, cpu_fraction=SPREAD)
        for p, w in (("/a", 1.0), ("/b", 3.0))
    )
    text = dumps({"cpu_fraction": 0.5}, _measured(paths=paths))
    assert text.count("[[measured.paths]]") == 2
    path = tmp_path / "w.toml"
    path.write_text(text)
    measured = read_workload_file(path).measured
    assert measured is not None
    assert [(p.path, p.weight) for p in measured.paths] == [("/a", 1.0), ("/b", 3.0)]


def test_writer_refuses_values_gen_would_refuse() -> None:
    """dumps() validates the workload values: a file it writes is one `gen` accepts."""
    with pytest.raises(WorkloadError, match=r"^cpu_fraction: "):
        dumps({"cpu_fraction": 2.0})


def test_comments_cannot_start_a_line_of_toml() -> None:
    """A newline in a comment (e.g. from an app name) is written as '?', never as a new line."""
    text = dumps({"cpu_fraction": 0.5}, comments=["x\n[workload]\ncores = 64"])
    assert tomllib.loads(text) == {"workload": {"cpu_fraction": 0.5}}


def test_flat_file_may_carry_measured(tmp_path: Path) -> None:
    """A flat workload file may hold a [measured] table next to its fields."""
    path = tmp_path / "w.toml"
    path.write_text(
        "cores = 2\n[measured]\nrequests = 3\n"
        "service_time_ms = { p10 = 1.0, p50 = 2.0, p90 = 3.0 }\n"
        "cpu_fraction = { p10 = 0.1, p50 = 0.2, p90 = 0.3 }\n"
    )
    read = read_workload_file(path)
    assert read.values == {"cores": 2}
    assert read.measured is not None
    assert read.measured.requests == 3


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"\xff\xfe[workload]", "is not UTF-8 text (byte 0xff at offset 0)"),
        (b"", "holds no workload fields"),
        (b"# only a comment\n", "holds no workload fields"),
        (b"[foo]\nx = 1\n", "unknown table [foo]"),
        (b"[workload]\ncores = 2\n[foo]\nx = 1\n", "unknown table [foo]"),
        (b"[[foo]]\nx = 1\n", "unknown table [foo]"),
        (b"cores = 2\n[workload]\ncpu_fraction = 0.5\n", "key 'cores' outside [workload]"),
        (b"workload = 3\n", "[workload] must be a table"),
        (b"[workload]\n[measured]\nrequests = 0\n", "[measured] requests:"),
        (
            (
                b"[workload]\n[measured]\nrequests = 1\nbogus = 1\n"
                b"service_time_ms = { p10 = 1.0, p50 = 1.0, p90 = 1.0 }\n"
                b"cpu_fraction = { p10 = 0.1, p50 = 0.2, p90 = 0.3 }\n"
            ),
            "[measured] bogus: unknown field",
        ),
        (b"cores = [\n", "is not valid TOML"),
        (b"\x00\x01\x02binary", "is not valid TOML"),
        (b"a = " + b"[" * 100_000, "nests too deeply"),
    ],
)
def test_bad_files_are_one_line_naming_the_file(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    """Every malformed workload file is a WorkloadFileError naming the file and the reason."""
    path = tmp_path / "w.toml"
    path.write_bytes(content)
    with pytest.raises(WorkloadFileError) as caught:
        read_workload_file(path)
    message = str(caught.value)
    assert str(path) in message
    assert reason in message
    assert "\n" not in message


def test_huge_file_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    """A file over the size limit is refused by size, whatever it holds."""
    path = tmp_path / "w.toml"
    path.write_bytes(b"#" * (MAX_WORKLOAD_FILE_BYTES + 1))
    with pytest.raises(WorkloadFileError, match="larger than"):
        read_workload_file(path)


def test_directory_and_missing_file_are_refused(tmp_path: Path) -> None:
    """A directory or a missing file is a one-line error naming it."""
    with pytest.raises(WorkloadFileError, match="is a directory"):
        read_workload_file(tmp_path)
    with pytest.raises(WorkloadFileError, match=r"cannot read .*missing\.toml"):
        read_workload_file(tmp_path / "missing.toml")


def test_measured_numbers_must_be_finite(tmp_path: Path) -> None:
    """nan or inf in [measured] is refused: TOML allows them, a measurement never gives them."""
    path = tmp_path / "w.toml"
    path.write_text(
        "[workload]\n[measured]\nrequests = 1\n"
        "service_time_ms = { p10 = nan, p50 = 1.0, p90 = 1.0 }\n"
        "cpu_fraction = { p10 = 0.1, p50 = 0.2, p90 = 0.3 }\n"
    )
    with pytest.raises(WorkloadFileError, match=r"\[measured\] service_time_ms.p10"):
        read_workload_file(path)
