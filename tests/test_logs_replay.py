"""`bench app APP --replay access.log`: the log's busiest routes, as real paths weighted by their
requests, are what `bench app` measures and loads (a real gunicorn run, two candidates)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.cli import app as cli
from servertune.logs import LogError, build_format, read_traffic
from servertune.logs.replay import arrival_profile, route_mix
from servertune.logs.traffic import PROFILE_WINDOW_S
from tests.support import REPO

FORMAT = '%(h)s %(t)s "%(r)s" %(s)s %(D)s'


def _log(tmp_path: Path) -> Path:
    """300 requests: /items/<id> half, /fast and /slow a quarter each."""
    lines = []
    for i in range(300):
        path = ["/fast", f"/items/{i}", f"/items/{i + 7}", "/slow"][i % 4]
        lines.append(
            f'127.0.0.1 [26/Nov/2026:13:00:{i // 20:02d} +0000] "GET {path}?x=1 HTTP/1.1" 200 '
            f"{[25000, 40000, 40000, 150000][i % 4]}\n"
        )
    log = tmp_path / "access.log"
    log.write_text("".join(lines))
    return log


def test_route_mix_is_the_busiest_routes_with_real_paths(tmp_path: Path) -> None:
    traffic = read_traffic([_log(tmp_path)], build_format("gunicorn", FORMAT))
    mix, covered = route_mix(traffic)
    assert [(p.split("/")[1], w) for p, w in mix] == [("items", 150), ("fast", 75), ("slow", 75)]
    assert mix[0][0].startswith("/items/")
    assert mix[0][0][7:].isdigit()
    assert covered == 1.0
    two, part = route_mix(traffic, limit=2)
    assert len(two) == 2
    assert part == pytest.approx(0.75)
    traffic.routes.clear()
    with pytest.raises(LogError, match="no route"):
        route_mix(traffic)


def test_bench_app_replays_the_logs_routes_at_its_arrival_times(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        cli,
        ["bench", "app", "tests.log_apps:app", "--chdir", str(REPO), "--replay",
         str(_log(tmp_path)), "--replay-format", f"gunicorn:{FORMAT}", "--quick", "--no-progress",
         "--only", "servertune-gthread,gunicorn-default", "--json", str(out),
         "--report", str(tmp_path / "report.html")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "replaying 3 routes of access.log: 100.0% of its 300 requests" in result.output
    report = json.loads(out.read_text())
    notes = " ".join(report["notes"])
    assert "/fast x75" in notes
    assert "/slow x75" in notes
    assert "x150" in notes
    # The arrival times: the busiest 10 s of the log's 15 s of 20 requests each (whole-second
    # stamps, spread within each second), --quick plays 2 of them at 1, 2 and 4 x their pace.
    assert "at the arrival times of the busiest 10 s of access.log from 2026-11-26" in (
        result.output
    )
    assert "200 requests, mean 20.0 req/s, 20 to 20 per second; the log's stamps are whole" in (
        result.output
    )
    assert "replay: the arrival times of 2 s of access.log from 2026-11-26 13:00:00 UTC: 40 " in (
        notes
    )
    for speed in (1, 2, 4):
        level = f"replay-{speed}x"
        replayed = {r["config"]: r for r in report["runs"] if r.get("load") == level}
        assert set(replayed) == {"servertune-gthread", "gunicorn-default"}
        for config, row in replayed.items():
            # The same 40 arrivals for every layout, `speed` x faster: the log's rate over time
            # beside what the layout answered in time, per log second.
            assert row["requests"] == 40
            assert row["timeline"]["offered_rps"] == [20.0 * speed] * 2
            assert row["timeline"]["log_second_s"] == pytest.approx(1 / speed)
            in_time = row["timeline"]["in_time_rps"]
            assert sum(in_time) / speed == row["in_time_count"] <= 40
            assert 0.0 <= row["in_time"] <= 1.0
            assert f"{level} {config}: {row['in_time']:.1%} of 40 requests" in notes
        assert f"{level} ({speed} x, {20 * speed:.1f} req/s mean, one log second every" in notes
        assert [v["level"] for v in report["verdicts"]].count(level) == 1
        assert f"verdict {level}: " in notes
        # The HTML report draws it: the log's rate over time beside each layout's answers.
        page = (tmp_path / "report.html").read_text()
        assert f"{level}: the log" in page
        assert "s rate over time beside what each layout answered in time" in page


def test_replay_on_an_asgi_app_measures_each_level_once_without_overload(tmp_path: Path) -> None:
    """--replay's default-sized run on an ASGI app (real uvicorn behind nginx): no overload
    level (the replay's 2 x and 4 x ask it of the log's traffic), every level once, the replay's
    verdicts at each pace; the notes say what was left out and how to get it."""
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        cli,
        ["bench", "app", "tests.log_apps:asgi_app", "--chdir", str(REPO), "--replay",
         str(_log(tmp_path)), "--replay-format", f"gunicorn:{FORMAT}", "--quick", "--no-progress",
         "--only", "servertune-uvicorn,uvicorn-1-worker", "--json", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    loads = {(r["config"], r.get("load")) for r in report["runs"]}
    assert not any(load == "overload" for _, load in loads)
    assert {
        (c, f"replay-{s}x") for c in ("servertune-uvicorn", "uvicorn-1-worker") for s in (1, 2, 4)
    } <= loads
    assert [v["level"] for v in report["verdicts"] if v["level"].startswith("replay")] == [
        "replay-1x", "replay-2x", "replay-4x"
    ]  # fmt: skip
    notes = " ".join(report["notes"])
    assert "no overload level in --replay's default run" in notes
    assert "each level is measured once" in notes
    assert "(--thorough: every candidate at every level, 3 times)" in notes
    assert "overload admitted p99" not in notes
    assert "overload: 4 x it" not in notes
    assert "a closed level's one req/s is widened to +-25%" in notes
    # The closed level's one sample, widened to +-25 %: no winner named from noise.
    closed = [r for r in report["runs"] if r.get("load") == "closed"]
    assert closed
    for row in closed:
        assert row["rps_low"] == pytest.approx(0.75 * row["rps"], rel=0.01)
        assert row["rps_high"] == pytest.approx(1.25 * row["rps"], rel=0.01)


def test_replay_default_run_levels() -> None:
    """--replay's default (adaptive) run leaves out an ASGI app's overload level and measures
    each level REPLAY_REPEATS times; --thorough, and a run without --replay, keep it."""
    from servertune.bench.scenarios.app import AppBench
    from servertune.bench.scenarios.app.levels import REPLAY_REPEATS, levels_for, replay_trimmed

    roles = [lv.role for lv in levels_for("asgi", [2, 4], replay=True, overload=False)]
    assert roles == ["unloaded", "", "", "replay-1x", "replay-2x", "replay-4x"]
    assert "overload" in [lv.role for lv in levels_for("asgi", [2], replay=True)]
    sizes = AppBench.sizes
    assert replay_trimmed(sizes.full, replay=True)
    assert not replay_trimmed(sizes.full, replay=False)
    assert sizes.thorough is not None
    assert not replay_trimmed(sizes.thorough, replay=True)
    assert sizes.full.repeats > REPLAY_REPEATS


def test_replay_errors_are_one_line(tmp_path: Path) -> None:
    log = _log(tmp_path)
    for args, message in (
        (["--replay", str(log), "--path", "/x"], "error: --replay: give --path or --replay"),
        (["--replay-format", "nginx"], "error: --replay-format: goes with --replay"),
        (["--replay", str(tmp_path / "none.log")], "error: --replay: cannot read"),
        (["--replay", str(log)], "error: --replay: "),  # combined: no timing
        (["--replay", "-"], "error: --replay: give a file, not stdin (-)"),
        (["--path", "/x", "--keep-log", str(tmp_path / "a b")], "error: --keep-log: "),
    ):
        result = CliRunner().invoke(cli, ["bench", "app", "m:app", *args, "--quick"])
        assert result.exit_code == 2, result.output
        assert result.output.startswith(message), result.output
    other = CliRunner().invoke(cli, ["bench", "hol", "--replay", str(log), "--quick"])
    assert other.exit_code == 2
    assert "only `servertune bench app` takes it" in other.output


def _timed_log(tmp_path: Path, counts: dict[int, int]) -> Path:
    """A gunicorn log with `counts[s]` requests in second s after 13:00:00 (none elsewhere)."""
    lines = []
    for second, n in sorted(counts.items()):
        stamp = f"26/Nov/2026:{13 + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
        lines += [f'127.0.0.1 [{stamp} +0000] "GET /x HTTP/1.1" 200 1000\n'] * n
    log = tmp_path / "timed.log"
    log.write_text("".join(lines))
    return log


def test_the_busiest_window_is_kept_with_its_idle_seconds(tmp_path: Path) -> None:
    """A quiet hour with one busy minute: the window is that minute, idle seconds as 0."""
    counts = dict.fromkeys(range(0, 3600, 10), 1)  # one request every 10 s for an hour
    burst = {1800 + s: 5 + s for s in range(0, 60, 2)}  # a ramp every other second
    log = _timed_log(tmp_path, {**counts, **burst})
    traffic = read_traffic([log], build_format("gunicorn", FORMAT))
    assert len(traffic.busiest) == PROFILE_WINDOW_S
    # The burst's seconds hold the quiet ones too (every 10th second is even): the first
    # window holding all of it, from the idle second before it.
    assert sum(traffic.busiest) == sum(burst.values())
    profile = arrival_profile(traffic)
    start = profile.start - (traffic.first_second or 0)
    window = {start + i: n for i, n in enumerate(profile.counts)}
    assert start == 1799
    for second, n in window.items():
        assert n == burst.get(second, counts.get(second, 0)), second
    assert profile.peak == 5 + 58
    assert "the busiest 60 s of timed.log (from 2026-11-26 13:" in profile.describe()


def test_a_log_shorter_than_the_window_is_its_whole_span(tmp_path: Path) -> None:
    traffic = read_traffic([_log(tmp_path)], build_format("gunicorn", FORMAT))
    profile = arrival_profile(traffic)
    assert profile.counts == (20,) * 15
    assert "1,200" not in profile.describe()
    assert "300 requests, 20 to 20 per second" in profile.describe()


def test_a_gap_longer_than_the_window_leaves_only_zeros_between(tmp_path: Path) -> None:
    log = _timed_log(tmp_path, {0: 3, 1: 4, 500: 2})
    traffic = read_traffic([log], build_format("gunicorn", FORMAT))
    assert traffic.busiest[:2] == (3, 4)
    assert sum(traffic.busiest) == 7
    assert traffic.busiest_start == traffic.first_second


def test_a_log_without_time_stamps_has_no_profile(tmp_path: Path) -> None:
    traffic = read_traffic([_log(tmp_path)], build_format("gunicorn", FORMAT))
    traffic.busiest, traffic.busiest_start = (), None
    with pytest.raises(LogError, match="no arrival profile"):
        arrival_profile(traffic)


def test_a_replay_pace_past_the_clients_ceiling_is_not_judged() -> None:
    """A replay level whose mean rate is past what the calibrated open-loop client sends on
    these cores measured the client, not the layouts: it is said so, with both rates."""
    from servertune.bench.harness.open_loop_ceiling import ClientCeiling
    from servertune.bench.scenarios.app.replay import ReplaySummary

    summary = ReplaySummary()
    # 0.25 of 2 cores at 0.1 ms a request: 5,000 req/s.
    summary.client = ClientCeiling(cpu_ms_per_request=0.1, cores=2, sent=2000, answered=2000)
    assert summary._unsendable(4999.0) is None
    said = summary._unsendable(6000.0)
    assert said is not None
    assert said.startswith("not measurable here: it offers 6000 req/s mean, past the 5000 req/s")
    summary.client = None  # a WSGI run calibrates no client: nothing to say
    assert summary._unsendable(1e9) is None


def test_one_sample_is_widened_by_its_band_and_repeats_by_their_range() -> None:
    """A level measured once has no spread of its own: widened to the band it is given
    (ONE_SAMPLE_BAND in --replay's default run); repeats keep their range (+-NOISE_BAND)."""
    from servertune.bench.scenarios.app.verdicts import NOISE_BAND, ONE_SAMPLE_BAND, spread

    assert spread([100.0]) == pytest.approx((100 * (1 - NOISE_BAND), 100 * (1 + NOISE_BAND)))
    assert spread([100.0], ONE_SAMPLE_BAND) == pytest.approx((75.0, 125.0))
    assert spread([90.0, 100.0, 130.0], ONE_SAMPLE_BAND) == (90.0, 130.0)
