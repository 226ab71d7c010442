"""`servertune measure APP` (or `--log FILE`): an app's service time and CPU per request measured in
process, or the workload an access log shows, printed and written as a workload file."""

from __future__ import annotations

import contextlib
import enum
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from typer.core import TyperCommand

from servertune.cli.options import check_output_path, fail, log_format_option, log_option

__all__ = ["MEASURE_FLAGS", "MeasureInterface", "NoRepeatedOptions", "measure"]


class MeasureInterface(enum.StrEnum):
    """How to call the app: by its signature, or forced."""

    auto = "auto"
    wsgi = "wsgi"
    asgi = "asgi"


class NoRepeatedOptions(TyperCommand):
    """A command that refuses a single-valued option given twice instead of keeping the last.

    click keeps the last of `--method GET --method POST` without a word; for a command whose
    options describe what is measured, a dropped value is a wrong measurement.
    """

    # ctx: Any, as typer's Context type lives in a private module (its vendored click).
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Count each option's occurrences first, then parse as usual."""
        order: list[Any] = []
        if not ctx.resilient_parsing:
            # A malformed command line fails here and again, with click's own message, below.
            with contextlib.suppress(Exception):
                _, _, order = self.make_parser(ctx).parse_args(args=list(args))
        seen: set[str] = set()
        for param in order:
            single = getattr(param, "param_type_name", "") == "option" and not (
                param.multiple or param.is_flag
            )
            if single and param.name in seen:
                raise typer.BadParameter("given more than once; give it once", ctx, param)
            if single:
                seen.add(param.name)
        return super().parse_args(ctx, args)


#: CLI name of each input `servertune.measure` names in its errors.
MEASURE_FLAGS = {
    "app": "APP",
    "path": "--path",
    "method": "--method",
    "requests": "--requests",
    "warmup": "--warmup",
    "max_seconds": "--max-seconds",
    "interface": "--interface",
    "app_dir": "--app-dir",
}

AppSpec = Annotated[
    str,
    typer.Argument(
        metavar="[APP]", help="the WSGI or ASGI app, as module:callable (not with --log)"
    ),
]
Paths = Annotated[
    Optional[list[str]],  # noqa: UP045
    typer.Option(
        "--path",
        metavar="P[=WEIGHT]",
        help=(
            "request target, e.g. /items?id=1 (default /); repeat for a mix of paths, each "
            "with an optional relative weight (/get=3; in a query string: /items?id=1=3)"
        ),
    ),
]
Method = Annotated[str, typer.Option("--method", help="HTTP method")]
Requests = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option(
        "--requests", min=1, max=1_000_000, help="requests to measure per path (default 50)"
    ),
]
Warmup = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option(
        "--warmup", min=0, max=10_000, help="requests run first, not measured (default 3)"
    ),
]
MaxSeconds = Annotated[
    Optional[float],  # noqa: UP045
    typer.Option(
        "--max-seconds",
        # The range (finite, 0.1 s to a day) is the library's: one message for nan and inf.
        help="stop measuring after this long, shared by the paths (0.1 to 86400; default 60)",
    ),
]
Header = Annotated[
    Optional[list[str]],  # noqa: UP045
    typer.Option("--header", "-H", help="'Name: value' request header; repeatable"),
]
Data = Annotated[Optional[str], typer.Option("--data", help="request body (UTF-8)")]  # noqa: UP045
Interface = Annotated[
    MeasureInterface, typer.Option("--interface", help="WSGI or ASGI; auto reads the signature")
]
AppDir = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--app-dir",
        help="import the app from here (default: the current directory)",
        file_okay=False,
    ),
]
Sweep = Annotated[
    bool,
    typer.Option(
        "--sweep/--no-sweep",
        # No numbers here: the sweep's bounds live in servertune.measure.sweep, which the CLI
        # does not import until `measure` runs.
        help="ASGI: after the paths, drive the mix at 1, 2, 4, ... requests in flight (bounded "
        "in count and in seconds) and write in_flight_limit where the loop's time per request "
        "climbs (default: on)",
    ),
]
Out = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--out", help="write a workload TOML that `gen --workload` reads", dir_okay=False),
]
Log = Annotated[
    Optional[list[Path]],  # noqa: UP045
    log_option(
        "read the workload from access logs instead (plain or .gz, - for stdin; "
        "repeat for a rotated set)"
    ),
]
LogFormat = Annotated[
    Optional[str],  # noqa: UP045
    log_format_option(
        "nginx, gunicorn, uwsgi, haproxy or alb; nginx:'<log_format>' or "
        "gunicorn:'<access_log_format>' (default: told from the lines)"
    ),
]
LogConf = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--log-conf", help="the nginx.conf whose log_format wrote --log", dir_okay=False),
]
Route = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--route",
        help="with --log: the workload of this route alone, as the report names it (e.g. "
        "'/export/{id}.csv'), for a pool of its own",
    ),
]


def measure(
    app_spec: AppSpec = "",
    path: Paths = None,
    method: Method = "GET",
    requests: Requests = None,
    warmup: Warmup = None,
    max_seconds: MaxSeconds = None,
    header: Header = None,
    data: Data = None,
    interface: Interface = MeasureInterface.auto,
    app_dir: AppDir = None,
    sweep: Sweep = True,
    out: Out = None,
    log: Log = None,
    log_format: LogFormat = None,
    log_conf: LogConf = None,
    route: Route = None,
) -> None:
    """Measure an app's service time and CPU ms per request in process; write a workload file.

    Several --path options are measured in turn and mixed by weight; the mix feeds --out.
    With --log, the workload comes from access logs: arrival rate, service time per route,
    slow calls and statuses. Exit 2: bad input or an app that cannot be imported; exit 1: the
    app raised.
    """
    from servertune import measure as m
    from servertune.bench.harness.progress import Progress

    check_output_path("--out", out)
    if log:
        if app_spec:
            raise fail("APP: give an app or --log, not both")
        app_only = {"--path": path, "--requests": requests, "--warmup": warmup,
                    "--max-seconds": max_seconds, "--header": header, "--data": data,
                    "--app-dir": app_dir, "--no-sweep": not sweep}  # fmt: skip
        if given := [flag for flag, value in app_only.items() if value]:
            raise fail(f"{given[0]}: measures an app; --log reads a log instead")
        _write(out, _measure_log(log, log_format, log_conf, out is not None, route))
        return
    if log_format is not None or log_conf is not None or route is not None:
        given_flag = (
            "--log-format" if log_format is not None else "--log-conf" if log_conf else "--route"
        )
        raise fail(f"{given_flag}: goes with --log")
    if not app_spec:
        raise fail("APP: name the app (module:callable) or give --log FILE")
    headers = _headers(header or [])
    defaults = {"requests": requests, "warmup": warmup, "max_seconds": max_seconds}
    try:
        paths = [m.parse_weighted_path(item) for item in path or ["/"]]
    except m.MeasureError as error:
        raise fail(f"--path: {error.reason}") from None
    # A bar on a terminal only: in logs and pipes the table is the whole story.
    progress = Progress(len(paths) * (requests or m.DEFAULT_REQUESTS), enabled=sys.stderr.isatty())
    try:
        result = m.measure_mix(
            app_spec,
            paths,
            method=method,
            headers=headers,
            body=(data or "").encode(),
            interface=None if interface is MeasureInterface.auto else interface.value,  # type: ignore[arg-type]
            app_dir=None if app_dir is None else str(app_dir),
            on_sample=lambda _: progress.advance("requests measured"),
            in_flight_sweep=sweep,
            **{k: v for k, v in defaults.items() if v is not None},  # type: ignore[arg-type]
        )
    except m.MeasureError as error:
        raise fail(f"{MEASURE_FLAGS.get(error.field, error.field)}: {error.reason}") from None
    except m.AppFailed as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=1) from None
    finally:
        progress.close()
    typer.echo(result.table())
    _write(out, result.to_toml() if out is not None else "")


def _headers(items: list[str]) -> list[tuple[str, str]]:
    """`--header 'Name: value'` options as pairs; one `error:` line for a malformed one."""
    headers: list[tuple[str, str]] = []
    for item in items:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise fail(f"--header: must be 'Name: value'; got {item!r}")
        if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in item):
            raise fail(f"--header: must not contain CR, LF or control characters; got {item!r}")
        headers.append((name.strip(), value.strip()))
    return headers


def _measure_log(
    logs: list[Path],
    log_format: str | None,
    log_conf: Path | None,
    toml: bool,
    route: str | None = None,
) -> str:
    """`measure --log`: read the logs, print what they show; the workload TOML if `toml`."""
    from servertune.bench.harness.progress import Progress
    from servertune.logs import LogError
    from servertune.logs.flags import LogFlagError, read_logs
    from servertune.logs.report import format_traffic

    # A step per MiB read (a chunk), on a terminal only: a log of gigabytes takes minutes.
    sizes = [p.stat().st_size for p in logs if str(p) != "-" and p.is_file()]
    progress = Progress(sum(sizes) >> 20, enabled=sys.stderr.isatty())
    try:
        traffic = read_logs(
            logs, log_format, log_conf, on_chunk=lambda _: progress.advance("MiB read")
        )
    except LogFlagError as error:
        raise fail(str(error)) from None
    finally:
        progress.close()
    if route is not None and route not in traffic.routes:
        known = ", ".join(r.route for r in traffic.route_rows()[:5])
        raise fail(f"--route: no route {route!r} in {traffic.source} (its routes: {known})")
    typer.echo(format_traffic(traffic))
    try:
        return traffic.to_toml(route) if toml else ""
    except LogError as error:  # a route without timing
        raise fail(f"--route: {error}") from None


def _write(out: Path | None, text: str) -> None:
    """Write the workload file `--out` names (atomically), if it names one."""
    if out is None:
        return
    from servertune.files import write_atomically

    try:
        write_atomically({out.name: text}, out.parent)
    except OSError as error:
        raise fail(f"--out: cannot write {out}: {error.strerror}") from None
    typer.echo(f"wrote {out}", err=True)
