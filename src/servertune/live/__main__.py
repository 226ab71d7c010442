"""`python -m servertune.live [options] -- uvicorn app:app --workers N ...`"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import NoReturn

from servertune.live.cgroup import CgroupReader
from servertune.live.follower import DEFAULT_INTERVAL_S, DEFAULT_WINDOW_S
from servertune.live.supervise import SuperviseError, supervise
from servertune.workload import Workload, WorkloadError


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"{text} is not in (0, 3600] seconds")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse with the house's manners: bad input is one `error:` line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ours, command = (
        (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    )
    parser = _Parser(
        prog="python -m servertune.live",
        description="Run uvicorn and keep its worker count on the plan's number for the "
        "container's CPU limit as the limit changes.",
        epilog="Example: python -m servertune.live --workload workload.toml -- "
        "uvicorn app:app --workers 2",
    )
    parser.add_argument("--workload", type=Path, help="workload file (default: the defaults)")
    parser.add_argument(
        "--window",
        type=_positive,
        default=DEFAULT_WINDOW_S,
        help="seconds a new limit must hold before the workers move (default %(default)s)",
    )
    parser.add_argument(
        "--interval",
        type=_positive,
        default=DEFAULT_INTERVAL_S,
        help="seconds between readings of the cgroup (default %(default)s)",
    )
    parser.add_argument(
        "--cgroup",
        type=Path,
        action="append",
        metavar="DIR",
        help="the cgroup directory to watch (default: this process's); give it twice on "
        "cgroup v1 for the cpu and the cpuset directories",
    )
    options = parser.parse_args(ours)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(message)s")
    try:
        from servertune.workload_file import load_workload

        workload = load_workload(options.workload) if options.workload else Workload()
        reader = None
        if options.cgroup:
            for directory in options.cgroup:
                if not directory.is_dir():
                    raise SuperviseError(f"--cgroup: {directory} is not a directory")
            reader = CgroupReader(
                options.cgroup[0], options.cgroup[1] if len(options.cgroup) > 1 else None
            )
        return supervise(
            command, workload, window_s=options.window, interval_s=options.interval, cgroup=reader
        )
    except (SuperviseError, WorkloadError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: command: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
