"""A run that other work disturbed says so, and, when the kernel's autogroup scheduling makes
`nice` useless against that work, how to keep it off the cores."""

from __future__ import annotations

from pathlib import Path

from servertune.bench.harness.stats import other_work_advice
from servertune.bench.scenarios.app.notes import busy_note


def sysctl(tmp_path: Path, value: str) -> Path:
    """A stand-in for /proc/sys/kernel/sched_autogroup_enabled holding `value`."""
    path = tmp_path / "sched_autogroup_enabled"
    path.write_text(value)
    return path


def test_autogroup_on_names_the_sysctl_that_lets_nice_work(tmp_path: Path) -> None:
    """With autogroup on, the advice names the sysctl to turn off and why nice did not help."""
    advice = other_work_advice(sysctl(tmp_path, "1\n"))
    assert "kernel.sched_autogroup_enabled=0" in advice
    assert "whatever its nice value" in advice


def test_autogroup_off_or_absent_adds_nothing(tmp_path: Path) -> None:
    """Off, or a kernel without the feature: nothing to add."""
    assert other_work_advice(sysctl(tmp_path, "0\n")) == ""
    assert other_work_advice(tmp_path / "absent") == ""


def test_busy_note_carries_the_advice_only_when_other_work_took_cores(tmp_path: Path) -> None:
    """The noisy-run line appears above a quarter core of other work, with the advice."""
    on = sysctl(tmp_path, "1")
    note = busy_note([{"other_cpu_cores": 0.1}, {"other_cpu_cores": 1.64}], sysctl=on)
    assert note is not None
    assert note.startswith("other work on this machine used up to 1.64 cores")
    assert "sched_autogroup_enabled" in note
    assert busy_note([{"other_cpu_cores": 0.2}], sysctl=on) is None
