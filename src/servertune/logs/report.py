"""What `measure --log` prints: the traffic a log shows, each number with its evidence."""

from __future__ import annotations

import shlex
import time

from servertune.logs.sketch import quantile
from servertune.logs.traffic import SLOW_CALL_FACTOR, SLOW_CALL_FLOOR_MS, Traffic

__all__ = ["SHOWN_ROUTES", "format_traffic"]

#: Routes listed, the most total time first.
SHOWN_ROUTES = 10
_QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999))


def _ms(value: float) -> str:
    return f"{value:,.1f} ms" if value < 100 else f"{value:,.0f} ms"


def format_traffic(traffic: Traffic) -> str:
    """The report of one log: lines, arrivals, service time, routes, statuses, unparsable lines."""
    sections = (
        _lines,
        _arrivals,
        _service_time,
        _request_size,
        _routes,
        _dominant,
        _statuses,
        _terminations,
        _cautions,
    )
    return "\n".join(line for section in sections for line in section(traffic))


def _lines(t: Traffic) -> list[str]:
    """What was read, and the unparsable lines shown as evidence."""
    out = [
        f"log            {', '.join(t.sources)} ({t.format.name})",
        (
            f"lines          {t.lines:,}: {t.requests:,} requests, {t.unparsable:,} unparsable, "
            f"{t.blank:,} blank"
            + (f", {t.events:,} of {t.format.name}'s own events" if t.events else "")
        ),
    ]
    for bad in t.bad_lines:
        out.append(f"  unparsable   {bad}")
    if t.unparsable > len(t.bad_lines):
        out.append(f"  unparsable   ... and {t.unparsable - len(t.bad_lines):,} more")
    return out


def _arrivals(t: Traffic) -> list[str]:
    """The span the log covers and the requests arriving per second."""
    out: list[str] = []
    if t.span_s:
        start = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t.first_second or 0))
        out += [
            f"span           {t.span_s:,} s from {start} UTC",
            (
                f"arrivals/s     median {t.arrival_quantile(0.5):,.1f}, p95 {t.arrival_quantile(0.95):,.1f}, "
                f"peak {t.peak_rps:,} (mean {t.mean_rps:,.2f})"
            ),
        ]
    return out


def _service_time(t: Traffic) -> list[str]:
    """Service time quantiles, slow calls, concurrency and connect time, where the log has them."""
    if t.timing_missing is not None:
        return [f"service time   {t.timing_missing}"]
    quantiles = ", ".join(f"{n} {_ms(t.quantile(q))}" for n, q in _QUANTILES)
    split = t.split()
    share = split.share
    out = [
        (
            f"service time   {quantiles}; mean {_ms(t.mean_ms)} "
            f"({t.timed:,} requests timed by {t.format.service_field})"
        ),
        f"slow calls     {share:.2%} of requests at >= {_ms(t.slow_threshold_ms)} "
        f"({SLOW_CALL_FACTOR:g}x the median, at least {SLOW_CALL_FLOOR_MS:g} ms), {t.slow_time_share():.1%} of the time"
        + (
            f"; their mean {_ms(split.slow_mean_ms)}, the others' {_ms(split.fast_mean_ms)}"
            if share
            else ""
        ),
        (
            f"concurrency    {t.concurrency(t.mean_rps):,.2f} mean, "
            f"{t.concurrency(t.peak_rps):,.2f} at the peak second (Little's law: rate x mean time)"
        ),
    ]
    if t.connect_sketch.count:
        out.append(
            f"connect time   p50 {_ms(quantile(t.connect_sketch, 0.5))}, "
            f"p99 {_ms(quantile(t.connect_sketch, 0.99))}"
        )
    return out


def _request_size(t: Traffic) -> list[str]:
    """The largest requests, where the log records their length."""
    if not t.length_sketch.count:
        return []
    return [
        (f"request size   p99 {quantile(t.length_sketch, 0.99):,.0f} B, max {t.max_length:,} B")
    ]


def _routes(t: Traffic) -> list[str]:
    """The routes taking the most total time, SHOWN_ROUTES of them."""
    out: list[str] = []
    if t.routes and not t.timed:  # no timing: the routes by their requests
        out.append("routes (most requests first; no timing in this log):")
        out.append(f"  {'route':40} {'requests':>10} {'share':>6}")
        rows = sorted(t.routes.values(), key=lambda r: (-r.requests, r.route))
        for row in rows[:SHOWN_ROUTES]:
            out.append(
                f"  {row.route[:40]:40} {row.requests:>10,} {row.requests / t.requests:>6.1%}"
            )
        if len(t.routes) > SHOWN_ROUTES:
            out.append(f"  ... and {len(t.routes) - SHOWN_ROUTES:,} more routes")
    if t.routes and t.timed:
        out.append("routes (most total time first):")
        out.append(
            f"  {'route':40} {'requests':>10} {'share':>6} {'p50':>10} {'p99':>10} {'time':>6}"
        )
        for row in t.route_rows()[:SHOWN_ROUTES]:
            out.append(
                f"  {row.route[:40]:40} {row.count:>10,} {row.count / t.timed:>6.1%} "
                f"{_ms(row.quantile(0.5)):>10} {_ms(row.quantile(0.99)):>10} "
                f"{row.total_ms / t.total_ms if t.total_ms else 0:>6.1%}"
            )
        rows = t.route_rows()
        if len(rows) > SHOWN_ROUTES:
            out.append(f"  ... and {len(rows) - SHOWN_ROUTES:,} more routes")
        for kind in sorted(t.left_out):
            rows_of = sorted(
                (r for r in t.routes.values() if r.kind == kind), key=lambda r: -r.requests
            )
            shown = ", ".join(f"{r.route} x{r.requests:,}" for r in rows_of[:3])
            out.append(
                f"  left out     {t.left_out[kind]:,} requests for {kind} "
                f"({t.left_out[kind] / t.requests:.1%}), not the app's load: {shown}"
                + (f" and {len(rows_of) - 3:,} more routes" if len(rows_of) > 3 else "")
            )
        untimed, routes = t.untimed()
        if untimed:
            shown = ", ".join(f"{r.route} x{r.requests - r.count:,}" for r in routes[:3])
            out.append(
                f"  not timed    {untimed:,} requests ({untimed / t.requests:.1%}) without "
                f"{t.format.service_field}, left out of the app's load: {shown}"
                + (f" and {len(routes) - 3:,} more routes" if len(routes) > 3 else "")
            )
    return out


def _statuses(t: Traffic) -> list[str]:
    """Each status sent, with what it means for the stack where servertune knows."""
    out: list[str] = []
    if t.statuses:
        out.append("statuses:")
        for code, count, meaning in t.status_rows():
            line = f"  {code:>5} {count:>10,} {count / t.requests:>7.2%}"
            out.append(line + (f"  {meaning}" if meaning else ""))
    return out


def _terminations(t: Traffic) -> list[str]:
    """HAProxy's termination states, the five most common that are not normal."""
    out: list[str] = []
    if t.terminations:
        ended = ", ".join(
            f"{key} x{n:,}" for key, n in t.terminations.most_common(5) if not key.startswith("--")
        )
        if ended:
            out.append(f"terminations   {ended} (HAProxy termination state and status)")
    return out


def _cautions(t: Traffic) -> list[str]:
    """What the numbers should be read with (a log given twice, too little traffic)."""
    return [f"caution        {text}" for text in t.cautions()]


def _dominant(t: Traffic) -> list[str]:
    """A route that takes most of the time with few of the requests, and a pool of its own."""
    row = t.dominant_route()
    if row is None:
        return []
    mean = row.total_ms / row.count
    held = row.count / t.span_s * mean / 1000 if t.span_s else 0.0
    text = (
        f"one route      {row.route} is {row.count / t.timed:.1%} of the requests and "
        f"{row.total_ms / t.total_ms:.1%} of the time (mean {_ms(mean)}, p99.9 "
        f"{_ms(row.quantile(0.999))}; {held:,.2f} of the {t.concurrency(t.mean_rps):,.2f} "
        "requests in flight): in one pool its requests hold the threads the others need, and "
        "its timeouts are everyone's. A pool of its own, with its own timeouts and admission: "
        f"`servertune measure --log {' --log '.join(map(shlex.quote, t.sources))} --route "
        f"{shlex.quote(row.route)} --out "
        "route.toml` (with the same --log-format or --log-conf), then `servertune gen gunicorn "
        "--workload route.toml --base-port 9001`, and an nginx `location` for the route passing "
        "to it"
    )
    return [text]
