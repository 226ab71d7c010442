"""`bench app`'s own flags: the app, its paths (or an access log's route mix to replay), the
configs to race, and the rest of `AppInput`, validated into the scenario's `extra["app"]`.

Kept beside the scenario (not in the CLI) so the command stays a parse-and-call; registered in
`servertune.bench.scenario_options.SCENARIO_FLAGS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from servertune.bench.harness.report import BenchInputError

if TYPE_CHECKING:
    from servertune.logs.arrivals import Arrivals

__all__ = ["APP_FLAGS", "app_extra", "replay_paths"]

#: Every flag only `bench app` takes, in the order a misplaced one is reported.
APP_FLAGS = ("--path", "--workload", "--against", "--chdir", "--pythonpath", "--static",
             "--interface", "--concurrency", "--only", "--replay", "--replay-format",
             "--keep-log", "APP")  # fmt: skip


def app_extra(given: Mapping[str, Any], note: Callable[[str], None]) -> dict[str, object]:
    """`bench app`'s `extra`: its validated input (BenchInputError naming the flag if not)."""
    paths: list[str] | None = given.get("--path")
    replay: list[Path] | None = given.get("--replay")
    replay_format: str | None = given.get("--replay-format")
    profile = None
    if replay:
        if paths:
            raise BenchInputError("--replay: give --path or --replay, not both")
        paths, profile = replay_paths(replay, replay_format, note)
    elif replay_format is not None:
        raise BenchInputError("--replay-format: goes with --replay")
    return {"app": _app_input(given, paths, profile)}


def replay_paths(
    logs: list[Path], log_format: str | None, note: Callable[[str], None]
) -> tuple[list[str], Arrivals]:
    """`bench app --replay`: the log's busiest routes as `--path P=WEIGHT` values, and the
    arrival times of its busiest REPLAY_LOG_SECONDS (a second pass over the log, bounded)."""
    from servertune.logs import LogError, LogFormatError, read_traffic
    from servertune.logs.arrivals import REPLAY_LOG_SECONDS, busiest_seconds, read_arrivals
    from servertune.logs.choose import choose_format
    from servertune.logs.flags import in_flags_of
    from servertune.logs.replay import arrival_profile, route_mix

    if any(str(log) == "-" for log in logs):
        raise BenchInputError(
            "--replay: give a file, not stdin (-): the log is read twice, for its route mix "
            "and then for the arrival times of its busiest seconds"
        )
    try:
        fmt = choose_format(log_format, None, logs[0])
        traffic = read_traffic(logs, fmt)
        traffic.require_timing()
        mix, covered = route_mix(traffic)
        profile = arrival_profile(traffic)
        start = profile.start + busiest_seconds(profile.counts, REPLAY_LOG_SECONDS)
        arrivals = read_arrivals(logs, fmt, start, min(REPLAY_LOG_SECONDS, len(profile.counts)))
    except LogFormatError as error:
        raise BenchInputError(in_flags_of(f"--replay-format: {error}", "--replay-format")) from None
    except LogError as error:
        raise BenchInputError(in_flags_of(f"--replay: {error}", "--replay-format")) from None
    note(
        f"replaying {len(mix)} routes of {traffic.source}: {covered:.1%} of its "
        f"{traffic.timed:,} requests, at the arrival times of the busiest {arrivals.describe()}"
    )
    return [f"{p}={w:g}" for p, w in mix], arrivals


def _app_input(
    given: Mapping[str, Any], paths: list[str] | None, replay: Arrivals | None
) -> object:
    """`bench app`'s validated `AppInput`."""
    from servertune.bench.scenarios.app import AppInput, parse_concurrency, parse_path

    interface: str | None = given.get("--interface")
    only: str | None = given.get("--only")
    concurrency: str | None = given.get("--concurrency")
    static: list[str] | None = given.get("--static")
    if interface is not None and interface not in ("wsgi", "asgi"):
        raise BenchInputError(f"--interface: must be wsgi or asgi; got {interface[:20]!r}")
    if only is not None and not only.strip(" ,"):
        raise BenchInputError("--only: name at least two candidates, comma-separated")
    if not given.get("APP"):
        raise BenchInputError(
            "APP: `servertune bench app` needs the app, e.g. mysite.wsgi:application"
        )
    return AppInput(
        app=given["APP"],
        paths=tuple(parse_path(p) for p in (paths or ["/"])),
        workload=given.get("--workload"),
        against=tuple(given.get("--against") or ()),
        chdir=given.get("--chdir"),
        pythonpath=tuple(given.get("--pythonpath") or ()),
        static=",".join(static) if static else None,
        interface=interface,  # type: ignore[arg-type]
        concurrency=parse_concurrency(concurrency) if concurrency is not None else (),
        only=tuple(dict.fromkeys(n.strip() for n in (only or "").split(",") if n.strip())),
        replay=replay,
        keep_log=given.get("--keep-log"),
    )
