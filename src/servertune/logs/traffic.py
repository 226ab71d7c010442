"""A log read into traffic: arrival rate, service-time percentiles overall and per route, the slow
calls, concurrency by Little's law and the status mix, each with the evidence behind it.

`read_traffic` streams the logs chunk by chunk (`servertune.logs.reader`), matches a chunk's
lines at once and counts each column's distinct values; every `FLUSH_DISTINCT` distinct values,
the counts are converted and folded into sketches (`servertune.logs.sketch`) and per-second
arrival counts. Memory is bounded by those constants, not by the log's length.
"""

from __future__ import annotations

import math
import re
import time
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import compress
from pathlib import Path
from typing import Any

from servertune.logs.errors import LogError
from servertune.logs.formats import LogFormat
from servertune.logs.reader import Chunk, chunks, rotation_order
from servertune.logs.routes import MAX_ROUTES, Routes, not_the_apps, template_block
from servertune.logs.sketch import new_sketch, quantile
from servertune.logs.sketch import split as split_sketch

__all__ = [
    "DOMINANT_REQUEST_SHARE",
    "DOMINANT_TIME_SHARE",
    "DUPLICATE_PROBE_BYTES",
    "FAST_RETRY_CHUNKS",
    "FEW_REQUESTS",
    "FEW_SECONDS",
    "FLUSH_DISTINCT",
    "MAX_SPAN_S",
    "PROFILE_WINDOW_S",
    "PROGRESS_BYTES",
    "SHOWN_BAD_LINES",
    "SLOW_CALL_FACTOR",
    "SLOW_CALL_FLOOR_MS",
    "TAIL_QUANTILE",
    "BadLine",
    "RouteStats",
    "Split",
    "Traffic",
    "read_traffic",
]

#: Distinct (path, time) pairs counted before they are folded into the sketches: the counters'
#: memory bound (about 200 bytes a pair).
FLUSH_DISTINCT = 100_000
#: The longest span one read covers: the per-second series costs 4 bytes a second (400 days,
#: 132 MiB); a log past it is one with a time from another year written in, not traffic.
MAX_SPAN_S = 400 * 86400
#: Bytes read between two progress calls: a MiB (`measure --log` shows "MiB read"), whatever
#: the reader's chunk size.
PROGRESS_BYTES = 1 << 20
#: Seconds of the arrival profile kept: the busiest window of this many consecutive seconds
#: (`Traffic.busiest`), which `bench app --replay` offers at its shape. The busiest window rather
#: than the whole span downsampled: a day squeezed into a minute averages its bursts away, and
#: the bursts (the busiest second and the seconds around it) are what fills a queue. A minute holds
#: the peak and its build-up and decay at one-second resolution, in 60 integers whatever the log.
PROFILE_WINDOW_S = 60
#: A route is offered a pool of its own when it takes this share of the app's time or more
#: with at most DOMINANT_REQUEST_SHARE of its requests: a report or an export that holds most
#: threads while most requests wait behind it.
DOMINANT_TIME_SHARE = 0.5
DOMINANT_REQUEST_SHARE = 0.25
#: Bytes of a log's start compared, with its size, to tell a copy of a log given twice.
DUPLICATE_PROBE_BYTES = 64 * 1024
#: Under this many timed requests, or this many seconds, a workload from a log is a guess, and
#: the report and the workload file say so: a p99.9 needs a thousand requests to be more than the
#: largest one, and a minute is the shortest stretch whose busiest second means something.
FEW_REQUESTS = 1000
FEW_SECONDS = 60
#: Unparsable lines shown with their line numbers; the rest are only counted.
SHOWN_BAD_LINES = 5
#: The tail the timeouts let finish (Workload.request_tail_ms; check --log's timeout rule).
TAIL_QUANTILE = 0.999
#: A request is a slow call when it takes SLOW_CALL_FACTOR times the median or more (and at
#: least SLOW_CALL_FLOOR_MS): the sizing rules treat such a request as a thread held by a wait
#: (Workload.slow_call_*), not as a longer typical request.
SLOW_CALL_FACTOR = 10.0
SLOW_CALL_FLOOR_MS = 500.0

#: What a status code says about the timeouts, per format (the server that wrote the status).
STATUS_MEANINGS: dict[str, dict[str, str]] = {
    "nginx": {
        "499": "clients closed the connection before nginx answered: their timeout is shorter "
        "than the time these requests took",
        "502": "the app closed or refused the connection: a worker killed (by its timeout or "
        "memory) or not running",
        "504": "proxy_read_timeout (uwsgi_read_timeout) expired waiting for the app",
    },
    "alb": {
        "460": "clients closed the connection before the ALB's idle timeout",
        "502": "the target closed or reset the connection: an app keep-alive shorter than the "
        "ALB idle timeout, or a worker killed",
        "504": "the ALB idle timeout expired waiting for the target",
    },
    "haproxy": {
        "502": "the server closed or answered garbage: a worker killed or not running",
        "503": "no server available, or the queue timeout (timeout queue) expired",
        "504": "timeout server expired waiting for the response headers (termination sH)",
    },
}
STATUS_MEANINGS["gunicorn"] = STATUS_MEANINGS["uwsgi"] = {
    "500": "the app raised",
}


@dataclass(frozen=True)
class BadLine:
    """An unparsable line: where it is and how it starts."""

    source: str
    line: int
    text: str

    def __str__(self) -> str:
        shown = self.text if len(self.text) <= 120 else self.text[:117] + "..."
        return f"{self.source}:{self.line}: {shown!a}"


@dataclass
class RouteStats:
    """One route's requests and service time."""

    route: str
    sketch: Any
    #: Requests timed (the sketch's count) and all requests, timed or not.
    count: int = 0
    total_ms: float = 0.0
    requests: int = 0
    #: 'static files' or 'health checks': requests counted, left out of the app's load.
    kind: str | None = None

    def quantile(self, q: float) -> float:
        """The q-quantile (0..1) of this route's service time, in ms."""
        return quantile(self.sketch, q)


def _round(value: float, digits: int) -> float:
    return round(value, digits)


def _significant(value: float, digits: int = 4) -> float:
    """`value` to `digits` significant digits: a share of 0.00004 stays one, not 0."""
    return float(f"{value:.{digits}g}")


@dataclass(frozen=True)
class Split:
    """Timed requests split at the slow-call line, as the Workload reads them.

    The workload says a request takes `service_time_ms` and a `slow_call_ratio` share of them
    wait `slow_call_ms` more: held on average service + ratio x slow, which Little's law turns
    into requests in flight. So both are means: the others' mean, and the slow calls' mean less
    it. With the split's two sums adding up to the log's exact total, the workload's mean time
    per request is the log's mean (before rounding), whatever the mix.
    """

    count: float
    total_ms: float
    threshold_ms: float
    slow_count: float
    fast_sum_ms: float

    @classmethod
    def of(cls, sketch: Any, total_ms: float, threshold_ms: float) -> Split:
        """Split what `sketch` holds (whose exact sum is `total_ms`) at `threshold_ms`."""
        count = float(sketch.count)
        slow, fast_sum = split_sketch(sketch, threshold_ms) if count else (0.0, 0.0)
        if not slow:  # no slow call: the exact sum is all the others'
            fast_sum = total_ms
        return cls(count, total_ms, threshold_ms, slow, min(fast_sum, total_ms))

    @property
    def fast_count(self) -> float:
        return self.count - self.slow_count

    @property
    def share(self) -> float:
        return self.slow_count / self.count if self.count else 0.0

    @property
    def fast_mean_ms(self) -> float:
        return self.fast_sum_ms / self.fast_count if self.fast_count else 0.0

    @property
    def slow_sum_ms(self) -> float:
        return self.total_ms - self.fast_sum_ms

    @property
    def slow_mean_ms(self) -> float:
        return self.slow_sum_ms / self.slow_count if self.slow_count else 0.0

    def workload_values(self) -> dict[str, Any]:
        """service_time_ms, and slow_call_ratio / slow_call_ms when there are slow calls."""
        # Here, not at the top: importing the Workload model (pydantic) cost a log read 0.05
        # CPU s and 10 MiB (about 40,000 of its lines), and reading a log does not need it.
        from servertune.workload import MIN_SERVICE_TIME_MS

        service = max(MIN_SERVICE_TIME_MS, _round(self.fast_mean_ms, 2))
        values: dict[str, Any] = {"service_time_ms": min(600_000.0, service)}
        if self.slow_count:
            values["slow_call_ratio"] = _significant(self.share)
            extra = self.slow_mean_ms - self.fast_mean_ms
            values["slow_call_ms"] = min(600_000.0, max(MIN_SERVICE_TIME_MS, _round(extra, 1)))
        return values


@dataclass
class Traffic:
    """What a log says about the traffic it recorded."""

    format: LogFormat
    sources: tuple[str, ...]
    lines: int = 0
    blank: int = 0
    unparsable: int = 0
    #: Lines the server wrote about itself (`LogFormat.events`): not requests, not unparsable.
    events: int = 0
    bad_lines: list[BadLine] = field(default_factory=list)
    requests: int = 0
    timed: int = 0
    total_ms: float = 0.0
    sketch: Any = None
    routes: dict[str, RouteStats] = field(default_factory=dict)
    statuses: Counter[str] = field(default_factory=Counter)
    terminations: Counter[str] = field(default_factory=Counter)
    connect_sketch: Any = None
    length_sketch: Any = None
    max_length: int = 0
    #: Seconds of the span by how many requests arrived in them (idle ones under 0): exact,
    #: since a count per second takes at most as many distinct values as the peak.
    arrivals: Counter[int] = field(default_factory=Counter)
    first_second: int | None = None
    last_second: int | None = None
    peak_rps: int = 0
    peak_second: int | None = None
    #: Requests per second over the busiest PROFILE_WINDOW_S consecutive seconds (idle seconds
    #: as 0; the whole span when shorter), and the first of those seconds (epoch).
    busiest: tuple[int, ...] = ()
    busiest_start: int | None = None
    #: Requests left out of the app's load, by kind ('static files', 'health checks').
    left_out: Counter[str] = field(default_factory=Counter)
    #: What the reader saw that the numbers should be read with (a log given twice, how
    #: little a log holds): printed under the report and written into the workload file.
    notes: list[str] = field(default_factory=list)
    #: A path seen for each route (its first), as logged without the query string.
    examples: dict[str, str] = field(default_factory=dict)

    # --- Numbers -------------------------------------------------------------------------------

    @property
    def source(self) -> str:
        """The logs read, as a phrase: `access.log` or `access.log.1 and 2 more`."""
        if len(self.sources) == 1:
            return Path(self.sources[0]).name if self.sources[0] != "stdin" else "stdin"
        return f"{Path(self.sources[0]).name} and {len(self.sources) - 1} more"

    def quantile(self, q: float) -> float:
        """The q-quantile (0..1) of the service time over all timed requests, in ms."""
        if not self.timed:
            return 0.0
        return quantile(self.sketch, q)

    @property
    def mean_ms(self) -> float:
        """The mean service time, in ms (exact: the sum of the logged times)."""
        return self.total_ms / self.timed if self.timed else 0.0

    @property
    def span_s(self) -> int:
        """Seconds from the first request to the last, both counted."""
        if self.first_second is None or self.last_second is None:
            return 0
        return self.last_second - self.first_second + 1

    @property
    def app_requests(self) -> int:
        """The requests that are the app's load: all but static files and health checks."""
        return self.requests - sum(self.left_out.values())

    @property
    def mean_rps(self) -> float:
        """The app's requests over the span of the log, per second."""
        return self.app_requests / self.span_s if self.span_s else 0.0

    def arrival_quantile(self, q: float) -> float:
        """The q-quantile of requests per second, over every second of the span (idle ones too)."""
        if not self.span_s:
            return 0.0
        rank = max(1, math.ceil(q * self.span_s - 1e-9))  # nearest rank, 1-based
        seen = 0
        for count in sorted(self.arrivals):
            seen += self.arrivals[count]
            if seen >= rank:
                return float(count)
        return float(self.peak_rps)

    @property
    def slow_threshold_ms(self) -> float:
        """Where slow calls start: SLOW_CALL_FACTOR x the median, at least SLOW_CALL_FLOOR_MS."""
        return max(SLOW_CALL_FACTOR * self.quantile(0.5), SLOW_CALL_FLOOR_MS)

    def split(self, route: str | None = None) -> Split:
        """The timed requests (of one route, or all) split at the slow-call line."""
        if route is None:
            return Split.of(self.sketch, self.total_ms, self.slow_threshold_ms)
        stats = self.routes[route]
        return Split.of(stats.sketch, stats.total_ms, self.slow_threshold_ms)

    @property
    def slow_share(self) -> float:
        """The share of timed requests at or above the slow-call threshold."""
        return self.split().share

    def slow_time_share(self) -> float:
        """The share of all service time spent in slow calls."""
        split = self.split()
        return split.slow_sum_ms / split.total_ms if split.total_ms else 0.0

    @property
    def tail_ms(self) -> float:
        """The p99.9 (TAIL_QUANTILE) of all timed requests: Workload.request_tail_ms."""
        return self.quantile(TAIL_QUANTILE)

    def share_at_or_above(self, ms: float) -> float:
        """The share of timed requests that took `ms` or longer."""
        return self.split_at(ms).share

    def split_at(self, ms: float) -> Split:
        """The timed requests split at `ms`."""
        return Split.of(self.sketch, self.total_ms, ms)

    def concurrency(self, rate: float) -> float:
        """Requests in the app at once at `rate` req/s, by Little's law (L = rate x mean time)."""
        return rate * self.mean_ms / 1000.0

    def route_rows(self) -> list[RouteStats]:
        """The routes with timed requests, the most total time first."""
        timed = (r for r in self.routes.values() if r.count and r.kind is None)
        return sorted(timed, key=lambda r: (-r.total_ms, -r.count, r.route))

    def untimed(self) -> tuple[int, list[RouteStats]]:
        """Requests without a time (nginx answered them itself: static files, a cache, a
        redirect; or the balancer never reached a target) and their routes, most first."""
        rows = [r for r in self.routes.values() if r.requests > r.count and r.kind is None]
        rows.sort(key=lambda r: (-(r.requests - r.count), r.route))
        return sum(r.requests - r.count for r in rows), rows

    # --- What the rest of servertune reads -----------------------------------------------------

    def workload_values(self, route: str | None = None) -> dict[str, Any]:
        """The Workload fields this log (or one route of it) sets: the means Little's law needs
        (service time, slow calls), the tail the timeouts need, the peak arrival rate.

        A log without timing sets the peak arrival rate only (`timing_missing` says why)."""
        if route is not None or self.timed:
            self.require_timing()
        else:
            return {"peak_rps": float(min(self.peak_rps, 1_000_000))} if self.peak_rps else {}
        split = self.split(route)
        values = split.workload_values()
        tail = (
            self.quantile(TAIL_QUANTILE)
            if route is None
            else self.routes[route].quantile(TAIL_QUANTILE)
        )
        values["request_tail_ms"] = min(600_000.0, max(values["service_time_ms"], _round(tail, 1)))
        peak = self.peak_rps if route is None else self.route_peak_rps(route)
        if peak:
            values["peak_rps"] = float(min(max(0.01, round(peak, 2)), 1_000_000))
        return values

    def route_peak_rps(self, route: str) -> float:
        """A route's share of the busiest second: the log's peak x the route's share of the app's
        requests (the reader counts arrivals for the app, not per route)."""
        app = self.app_requests
        return self.peak_rps * self.routes[route].requests / app if app else 0.0

    def dominant_route(self) -> RouteStats | None:
        """The route that takes DOMINANT_TIME_SHARE of the app's time or more with at most
        DOMINANT_REQUEST_SHARE of its requests (a report or an export), if one does."""
        rows = self.route_rows()
        if len(rows) < 2 or not self.total_ms:
            return None
        top = rows[0]
        heavy = top.total_ms / self.total_ms >= DOMINANT_TIME_SHARE
        return top if heavy and top.count / self.timed <= DOMINANT_REQUEST_SHARE else None

    def sources_of(self, route: str | None = None) -> dict[str, str]:
        """Each workload number's source, in words, each named a mean or a tail (`explain`'s
        and the file's comments)."""
        timed = f"{self.timed:,} requests timed by {self.format.service_field} in {self.source}"
        if route is not None:
            timed = f"the {self.routes[route].count:,} of route {route} of {timed}"
        split = self.split(route)
        line = f"{self.slow_threshold_ms:,.0f} ms"
        out = {
            "service_time_ms": (
                f"mean of the {split.fast_count:,.0f} requests under the slow-call line "
                f"({line}) of {timed}"
            ),
            "request_tail_ms": f"tail: p99.9 of {timed}; what the timeouts let finish",
        }
        if split.slow_count:
            out["slow_call_ratio"] = f"share of requests at or above {line} of {timed}"
            out["slow_call_ms"] = (
                f"mean: the {split.slow_count:,.0f} slow calls' mean "
                f"{split.slow_mean_ms:,.1f} ms less the others' mean, of {timed}"
            )
        if self.peak_rps and self.peak_second is not None:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(self.peak_second))
            out["peak_rps"] = (
                f"busiest second ({when} UTC) of {self.span_s:,} s, {self.requests:,} requests "
                f"in {self.source}"
            )
            if route is not None:
                share = self.routes[route].requests / self.app_requests
                out["peak_rps"] = f"{share:.1%} (the route's share of requests) of the " + out[
                    "peak_rps"
                ].replace("busiest second", "log's busiest second", 1)
        return out

    def require_timing(self) -> None:
        """LogError when the log has no timing: which directive adds it."""
        if self.format.service_field is None:
            raise LogError(f"{self.source} has no request timing: {self.format.timing_hint}")
        if not self.timed:
            raise LogError(
                f"{self.source}: none of its {self.requests:,} requests has a time "
                f"({self.format.service_field} is '-' or -1 on every line)"
            )

    @property
    def timing_missing(self) -> str | None:
        """Why the log gives no service time (None when it gives one)."""
        if self.format.service_field is None:
            return f"not in this log: {self.format.timing_hint}"
        if not self.timed:
            return (
                f"none of the {self.requests:,} requests has a time "
                f"({self.format.service_field} is '-' or -1 on every line)"
            )
        return None

    def cautions(self) -> list[str]:
        """What the numbers should be read with: the reader's notes, and how little a short or
        small log shows."""
        out = list(self.notes)
        seen = self.timed or self.requests
        kind = "timed requests" if self.timed else "requests"
        little = []
        if seen < FEW_REQUESTS:
            little.append(f"only {seen:,} {kind} (a p99.9 needs {FEW_REQUESTS:,})")
        if self.span_s < FEW_SECONDS:
            little.append(
                f"only {self.span_s:,} s (a busiest second means little under {FEW_SECONDS} s)"
            )
        if little:
            out.append(
                f"{' over '.join(little)}: every number from so little traffic is a guess; "
                "read a longer log"
            )
        return out

    def to_toml(self, route: str | None = None) -> str:
        """A workload file that `gen --workload` reads (of one route, or of the whole log),
        each number's source as a comment."""
        from servertune.workload_file import dumps

        if route is not None and route not in self.routes:
            known = ", ".join(r.route for r in self.route_rows()[:5])
            raise LogError(f"no route {route!r} in {self.source} (its routes: {known})")
        values = self.workload_values(route)
        sources = self.sources_of(route) if self.timed else {}
        comments = [
            f"servertune measure --log: {self.format.name} log {', '.join(self.sources)}"
            + (f", route {route} alone" if route is not None else ""),
            "cpu_fraction: not in a log; `servertune measure APP` measures it",
        ]
        if self.timing_missing is not None:
            comments.append(
                "service_time_ms, slow calls, request_tail_ms: timing missing (the service time "
                "is not in this log; see `servertune measure --log`'s report)"
            )
        comments += [f"caution: {text}" for text in self.cautions()]
        return dumps(
            values,
            comments=comments,
            sources={name: sources[name] for name in values if name in sources},
        )

    def status_rows(self) -> list[tuple[str, int, str]]:
        """Each status seen: code, count, and what it says about a timeout (where it says one)."""
        meanings = STATUS_MEANINGS.get(self.format.name, {})
        return [
            (code, count, meanings.get(code, "")) for code, count in sorted(self.statuses.items())
        ]


#: The columns the accumulator reads (not `method`): the only groups `LogFormat.scanner` captures.
_READ = ("ts", "path", "service", "status", "connect", "length", "term")


#: A newline followed by another: the line after it is blank.
_BLANK_AFTER = re.compile(rb"\n(?=\n)")
#: One chunk in this many is tried with the fast pattern while it keeps failing (see `add`).
FAST_RETRY_CHUNKS = 8


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


class _Accumulator:
    """Counts of distinct column values (bytes, as matched), folded into a Traffic every
    FLUSH_DISTINCT; a value is decoded and converted once, when its count is folded."""

    def __init__(self, fmt: LogFormat, traffic: Traffic) -> None:
        self.fmt = fmt
        self.traffic = traffic
        self.scan = fmt.scanner(_READ)
        self.fast_scan = fmt.scanner(_READ, strict=False)
        self.time_check = fmt.time_check
        self.chunks = 0
        self.fast_misses = 0  # chunks the fast pattern did not match whole
        groups = self.scan.groupindex
        self.index = {name: groups[name] - 1 if name in groups else None for name in _READ}
        self.pairs: Counter[tuple[bytes, bytes]] = Counter()
        self.seconds: Counter[bytes] = Counter()
        self.statuses: Counter[bytes] = Counter()
        self.connects: Counter[bytes] = Counter()
        self.lengths: Counter[bytes] = Counter()
        self.terms: Counter[tuple[bytes, bytes]] = Counter()
        self.routes = Routes()
        self.kinds: dict[bytes, str | None] = {}
        self.left_out = traffic.left_out
        # Requests a second from `base` on, the whole span: 4 bytes a second (a day 338 KiB),
        # so lines out of order, and logs of several hosts over the same hours, add up in their
        # own seconds whatever order they are read in.
        self.series = array("I")
        self.base: int | None = None
        self.examples = traffic.examples
        self.example_routes: set[bytes] = set()  # routes that have their example (or never will)

    def add(self, chunk: Chunk) -> None:
        traffic = self.traffic
        data = chunk.data
        for line in chunk.oversize:
            traffic.unparsable += 1
            traffic.lines += 1
            if len(traffic.bad_lines) < SHOWN_BAD_LINES:
                traffic.bad_lines.append(BadLine(chunk.source, line, "(longer than 64 KiB)"))
        if not data:
            return
        count = chunk.lines
        # The fast pattern while it matches nearly every chunk whole; a log with unparsable lines
        # all through it would pay for both patterns on every chunk, so there it is tried only
        # on one chunk in FAST_RETRY_CHUNKS (and again on every chunk once they match whole).
        self.chunks += 1
        fast = self.fast_misses * FAST_RETRY_CHUNKS <= self.chunks
        rows = (self.fast_scan if fast else self.scan).findall(data)
        columns = self._columns(rows)
        # A line without a match, or a time the fast pattern read by its width only that is
        # no time: the fast rows are not trusted.
        stamps = self._stamps(columns)
        if fast and (len(rows) != count or not self._times_valid(stamps)):
            self.fast_misses += 1
            rows = self.scan.findall(data)
            columns = self._columns(rows)
            stamps = self._stamps(columns)
        traffic.lines += count
        # Every line matched: no blank, no unparsable one. Else count them line by line.
        blank, events = (0, 0) if len(rows) == count else self._slow_path(chunk)
        events = min(events, count - blank - len(rows))  # a request line is never an event
        traffic.blank += blank
        traffic.events += events
        traffic.unparsable += count - blank - events - len(rows)
        if not rows:
            return
        traffic.requests += len(rows)
        i = self.index
        path = i["path"]
        # A column the format lacks reads as empty values (made only then: a chunk's worth).
        none = (b"",) * len(rows) if path is None or i["service"] is None else ()
        # Paths become routes here, a chunk at a time in C: the counts are then per route, and
        # a log of a million distinct ids is a handful of distinct (route, time) pairs.
        routes = (
            template_block(b"\n".join(columns[path])).split(b"\n") if path is not None else none
        )
        kinds: dict[bytes, str] = {}
        distinct: set[bytes] = set()
        if path is not None:
            distinct = set(routes)  # a chunk's few routes, for both (one pass in C)
            self._examples(distinct, routes, columns[path])
            kinds = self._kinds(distinct)
        self.pairs.update(
            zip(routes, columns[i["service"]] if i["service"] is not None else none, strict=True)
        )
        # Static files or probes: not in the app's arrivals (counted by kind at the flush,
        # from the pairs). In C: a generator a line here cost the bench log-read log (a
        # quarter static files and probes) 0.13 CPU s a million lines, a tenth of the read.
        if kinds and i["ts"] is not None:
            # Their lines counted in C; a second that holds only them is dropped (`-=`).
            stamps -= Counter(compress(columns[i["ts"]], map(kinds.__contains__, routes)))
        self.seconds.update(stamps)
        if i["status"] is not None:
            self.statuses.update(columns[i["status"]])
        if i["connect"] is not None:
            self.connects.update(columns[i["connect"]])
        if i["length"] is not None:
            self.lengths.update(columns[i["length"]])
        if i["term"] is not None and i["status"] is not None:
            self.terms.update(zip(columns[i["term"]], columns[i["status"]], strict=True))
        if len(self.pairs) > FLUSH_DISTINCT or len(self.seconds) > FLUSH_DISTINCT // 10:
            self.flush()

    def _columns(self, rows: list[Any]) -> list[Any]:
        """The chunk's rows as columns (none without rows)."""
        if self.scan.groups <= 1:  # one group: findall gives its values, not tuples
            return [rows]
        return list(zip(*rows, strict=True))

    def _stamps(self, columns: list[Any]) -> Counter[bytes]:
        """The chunk's requests by `ts` as logged (empty without a `ts` column or rows); from
        the column, not the rows (an `itemgetter` a line: 8 ns a line more)."""
        ts = self.index["ts"]
        if ts is None or not columns:
            return Counter()
        return Counter(columns[ts])

    def _times_valid(self, stamps: Counter[bytes]) -> bool:
        """Whether every distinct `ts` the fast pattern read is one the strict pattern reads
        (`LogFormat.time_check`): a handful a chunk, each checked once, counted anyway."""
        return self.time_check is None or all(map(self.time_check, stamps))

    def _kinds(self, distinct: set[bytes]) -> dict[bytes, str]:
        """The chunk's routes (`distinct`) that are not the app's load (`not_the_apps`), with
        their kind."""
        known = self.kinds
        out: dict[bytes, str] = {}
        for route in distinct:
            kind = known.get(route, "")
            if kind == "":
                if len(known) > FLUSH_DISTINCT:  # a crawler's million paths: bounded memory
                    known.clear()
                kind = known[route] = not_the_apps(_text(route))
            if kind:
                out[route] = kind
        return out

    def _examples(
        self, distinct: set[bytes], routes: Sequence[bytes], paths: Sequence[bytes]
    ) -> None:
        """One requestable path per route (what `bench app --replay` sends); `distinct`: the
        chunk's routes."""
        if distinct <= self.example_routes:  # the usual chunk: no new route (a C-level test)
            return
        for route, path in dict(zip(routes, paths, strict=True)).items():
            if route in self.example_routes:
                continue
            self.example_routes.add(route)
            name = _text(route)
            if name not in self.examples and len(self.examples) <= MAX_ROUTES:
                self.examples[name] = _text(path)

    def _slow_path(self, chunk: Chunk) -> tuple[int, int]:
        """Count the blank lines and the server's own event lines of a chunk that has
        unparsable ones (in C), and keep the first few unparsable ones (line by line, until
        SHOWN_BAD_LINES are kept)."""
        data = chunk.data
        blank = len(_BLANK_AFTER.findall(data)) + data.startswith(b"\n")
        own = self.fmt.events
        events = 0 if own is None else len(own.findall(data))
        bad = self.traffic.bad_lines
        if len(bad) >= SHOWN_BAD_LINES:
            return blank, events
        match = self.scan.match
        for offset, line in enumerate(data.split(b"\n")[:-1]):
            if not line or match(line) is not None or (own is not None and own.match(line)):
                continue
            bad.append(BadLine(chunk.source, chunk.first_line + offset, _text(line)))
            if len(bad) >= SHOWN_BAD_LINES:
                break
        return blank, events

    def _ms(self, text: str, reader: Callable[[str], float | None]) -> float | None:
        try:
            return reader(text)
        except (ValueError, OverflowError):
            return None

    def flush(self, final: bool = False) -> None:
        traffic = self.traffic
        fmt = self.fmt
        read = fmt.service_ms
        # Each route decoded once a flush, with its kind where it is not the app's load.
        names: dict[bytes, tuple[str, str | None]] = {}
        # Each time read once a flush, and added to the log's sketch once with all its
        # requests: a time is logged under many routes (a sketch's add is 1 us of Python).
        times: dict[bytes, float | None] = {}
        overall: Counter[float] = Counter()
        for (path, service), n in self.pairs.items():
            named = names.get(path)
            if named is None:
                text = _text(path)
                kind = self.kinds.get(path, "")  # as `_kinds` found it, where it still holds it
                named = names[path] = (
                    (self.routes(text), not_the_apps(text) if kind == "" else kind)
                    if path
                    else ("(no path)", None)
                )
            route, left_out = named
            if left_out is not None:
                self.left_out[left_out] += n
            stats = traffic.routes.get(route)
            if stats is None:
                kind = not_the_apps(route)
                stats = traffic.routes[route] = RouteStats(route, new_sketch(), kind=kind)
            stats.requests += n
            if service in times:
                ms = times[service]
            else:
                ms = times[service] = self._ms(_text(service), read) if service else None
            if ms is None or stats.kind is not None:  # no time, or not the app's
                continue
            stats.sketch.add(ms, n)
            stats.count += n
            stats.total_ms += ms * n
            overall[ms] += n
            traffic.timed += n
            traffic.total_ms += ms * n
        for ms, n in overall.items():
            traffic.sketch.add(ms, n)
        self.pairs.clear()
        for value, n in self.statuses.items():
            traffic.statuses[_text(value)] += n
        self.statuses.clear()
        for (term, status), n in self.terms.items():
            traffic.terminations[f"{_text(term[:2])} {_text(status)}"] += n
        self.terms.clear()
        for value, n in self.connects.items():
            ms = self._ms(_text(value), read if fmt.name != "nginx" else _nginx_times)
            if ms is not None:
                traffic.connect_sketch.add(ms, n)
        self.connects.clear()
        for value, n in self.lengths.items():
            if not value.isdigit():  # `-`: not recorded (an ALB request it did not forward)
                continue
            size = int(value)
            traffic.length_sketch.add(max(size, 1), n)
            traffic.max_length = max(traffic.max_length, size)
        self.lengths.clear()
        self._arrivals(final)

    def _arrivals(self, final: bool) -> None:
        """Fold the seconds counted into the per-second series; at the end, read it."""
        # The series grows once a flush, not once a new second: a log of 50 requests a second
        # brings a new second every 50 lines (3 us each to grow the array by one).
        times: list[tuple[int, int]] = []
        low = self.base
        high = None if low is None else low + len(self.series)
        for value, n in self.seconds.items():
            try:
                second = self.fmt.second(_text(value))
            except ValueError as error:
                raise _BadTime(value, str(error)) from None
            if low is None or high is None:
                low, high = second, second + 1
            if max(high, second + 1) - min(low, second) > MAX_SPAN_S:
                first = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(low))
                raise _BadTime(
                    value,
                    f"{(max(high, second + 1) - min(low, second)) / 86400:,.0f} days from the "
                    f"log's time {first} UTC, past the {MAX_SPAN_S // 86400} days one read covers",
                )
            # Before the first seen: another host, or late.
            low, high = min(low, second), max(high, second + 1)
            times.append((second, n))
        if low is not None and high is not None:
            series = self.series
            if self.base is None:
                self.base = low
            if low < self.base:
                series[0:0] = array("I", bytes(4 * (self.base - low)))
                self.base = low
            if high - self.base > len(series):
                series.extend(array("I", bytes(4 * (high - self.base - len(series)))))
            base = self.base
            for second, n in times:
                series[second - base] += n
        self.seconds.clear()
        if final and self.base is not None:
            self._read_series()

    def _read_series(self) -> None:
        """The span, the exact count of seconds by their requests, the busiest second and the
        busiest PROFILE_WINDOW_S seconds, from the per-second series."""
        traffic = self.traffic
        series = self.series
        assert self.base is not None
        traffic.first_second = self.base
        traffic.last_second = self.base + len(series) - 1
        traffic.arrivals = Counter(series)
        traffic.peak_rps = max(series)
        traffic.peak_second = self.base + series.index(traffic.peak_rps)
        width = min(PROFILE_WINDOW_S, len(series))
        window = best = sum(series[:width])
        start = 0
        for i in range(width, len(series)):  # the first window with the most requests
            window += series[i] - series[i - width]
            if window > best:
                best, start = window, i - width + 1
        traffic.busiest = tuple(series[start : start + width])
        traffic.busiest_start = self.base + start


class _BadTime(Exception):
    """A time no clock shows, as logged: `read_traffic` finds its line."""

    def __init__(self, value: bytes, reason: str) -> None:
        super().__init__(reason)
        self.value = value
        self.reason = reason


def _locate(paths: Sequence[Path], value: bytes) -> str:
    """`file:line` of the first line holding `value` (the error path only: a second read)."""
    for path in paths:
        if str(path) == "-":
            continue
        for chunk in chunks(path):
            at = chunk.data.find(value)
            if at >= 0:
                line = chunk.first_line + chunk.data.count(b"\n", 0, at)
                return f"{path}:{line}"
    return "stdin" if any(str(p) == "-" for p in paths) else str(paths[0])


def _distinct(paths: Sequence[Path]) -> tuple[list[Path], list[str]]:
    """The paths with each file once (the same file named twice, by a link or a copy of the
    same bytes), and a note for each left out: read twice, its requests would count twice."""
    import hashlib

    kept: list[Path] = []
    notes: list[str] = []
    seen: dict[tuple[int, int] | tuple[int, str], Path] = {}
    for path in paths:
        if str(path) == "-":
            kept.append(path)
            continue
        try:
            stat = path.stat()
            with path.open("rb") as handle:
                head = hashlib.sha256(handle.read(DUPLICATE_PROBE_BYTES)).hexdigest()
        except OSError:
            kept.append(path)  # the reader names the error
            continue
        for key in ((stat.st_dev, stat.st_ino), (stat.st_size, head)):
            if key in seen:
                notes.append(
                    f"{path} is the same log as {seen[key]} (the same "
                    + ("file" if isinstance(key[1], int) else "size and first bytes")
                    + "): read once, not counted twice"
                )
                break
        else:
            seen[(stat.st_dev, stat.st_ino)] = seen[(stat.st_size, head)] = path
            kept.append(path)
    return kept, notes


def _nginx_times(text: str) -> float | None:
    from servertune.logs.formats.nginx import upstream_ms

    return upstream_ms(text)


def read_traffic(
    paths: Sequence[Path],
    fmt: LogFormat,
    on_chunk: Callable[[int], None] | None = None,
) -> Traffic:
    """Read the logs at `paths` (rotated sets oldest first; "-" is stdin) in `fmt`;
    `on_chunk(n)` each PROGRESS_BYTES (or more) read, with the bytes read since its last call."""
    kept, notes = _distinct(paths)
    ordered = rotation_order(kept)
    traffic = Traffic(
        format=fmt,
        sources=tuple("stdin" if str(p) == "-" else str(p) for p in ordered),
        sketch=new_sketch(),
        connect_sketch=new_sketch(),
        length_sketch=new_sketch(),
    )
    traffic.notes.extend(notes)
    accumulator = _Accumulator(fmt, traffic)
    unreported = 0
    try:
        for path in ordered:
            for chunk in chunks(path):
                accumulator.add(chunk)
                unreported += len(chunk.data)
                if on_chunk is not None and unreported >= PROGRESS_BYTES:
                    on_chunk(unreported)
                    unreported = 0
        accumulator.flush(final=True)
    except _BadTime as bad:
        raise LogError(
            f"{_locate(ordered, bad.value)}: {bad.reason}: a time no clock shows; fix or drop "
            "the line"
        ) from None
    if traffic.lines == 0:
        raise LogError(f"{traffic.source} is empty")
    if traffic.requests == 0:
        shown = f"; line {traffic.bad_lines[0]}" if traffic.bad_lines else ""
        hint = ""
        if fmt.name in ("nginx", "gunicorn"):
            hint = f" (a log_format of its own? give --log-format {fmt.name}:'<format>'" + (
                " or --log-conf nginx.conf)" if fmt.name == "nginx" else ")"
            )
        raise LogError(
            f"{traffic.source}: none of its {traffic.lines:,} lines matches the {fmt.name} "
            f"format{hint}{shown}"
        )
    return traffic
