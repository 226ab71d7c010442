"""`check --log`: findings only traffic shows, the access log's numbers against the configs.

These rules read a `Traffic` (servertune.logs) beside the configs `check` linked: the tail of
the app's time against the timeouts that cut it, the 499s of clients that gave up, the peak
arrival rate times the service time against the workers and threads that serve it, and request
bodies against nginx's `client_max_body_size`. They are their own registry, run after the
config rules (`traffic_findings`), so a check without a log runs exactly as before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from servertune.check.model import AppServer, Finding, Location, Severity
from servertune.check.rules import Context
from servertune.check.rules.spelling import assignment
from servertune.logs.traffic import TAIL_QUANTILE, Traffic

__all__ = [
    "BODY_NEAR_LIMIT_RATIO",
    "CLIENT_GAVE_UP_SHARE",
    "TAIL_QUANTILE",
    "TRAFFIC_RULES",
    "TrafficRule",
    "traffic_findings",
]

#: 499s (nginx) / 460s (ALB) above this share of requests are a pattern, not a stray tab closed.
CLIENT_GAVE_UP_SHARE = 0.001
#: A request body at this share of client_max_body_size or more is one upload away from a 413.
BODY_NEAR_LIMIT_RATIO = 0.8
#: nginx's client_max_body_size when none is written (ngx_http_core_module: 1m).
NGINX_DEFAULT_BODY_BYTES = 1024 * 1024
_BACKING = "`servertune measure --log FILE` (the per-route percentiles and the status mix)"


@dataclass(frozen=True)
class TrafficRule:
    """A rule over a log and the configs: id, severity, title, and its findings."""

    id: str
    severity: Severity
    title: str
    check: Callable[[TrafficRule, Context, Traffic], Iterator[Finding]]

    def finding(
        self, at: Location, message: str, fix: str, related: tuple[Location, ...] = ()
    ) -> Finding:
        """A finding of this rule."""
        return Finding(self.id, self.severity, at, message, fix, _BACKING, related)


TRAFFIC_RULES: dict[str, TrafficRule] = {}


def _rule(
    rule_id: str, severity: Severity, title: str
) -> Callable[[Callable[[TrafficRule, Context, Traffic], Iterator[Finding]]], None]:
    def register(check: Callable[[TrafficRule, Context, Traffic], Iterator[Finding]]) -> None:
        TRAFFIC_RULES[rule_id] = TrafficRule(rule_id, severity, title, check)

    return register


def traffic_findings(context: Context, traffic: Traffic | None) -> list[Finding]:
    """Every traffic rule's findings (none without a log)."""
    if traffic is None:
        return []
    return [f for rule in TRAFFIC_RULES.values() for f in rule.check(rule, context, traffic)]


def _chain_s(app: AppServer) -> int:
    """The read timeout the timeout chain asks in front of `app` (its request timeout + the
    margin), 0 when its timeout ends no request."""
    from servertune.check.rules.timeouts import caps_requests
    from servertune.sizing import READ_TIMEOUT_MARGIN_S

    timeout = app.request_timeout
    if timeout is None or timeout.value <= 0 or not caps_requests(app):
        return 0
    return math.ceil(timeout.value + READ_TIMEOUT_MARGIN_S)


def _with_timeout(app: AppServer, tail_ms: float, asked_s: int) -> AppServer:
    """`app` with the timeout `_tail` asks of it (`asked_s`) when the log's tail runs into its
    own; `app` as it is otherwise."""
    timeout = app.request_timeout
    if timeout is None or timeout.value <= 0 or tail_ms < timeout.value * 1000:
        return app
    return replace(app, request_timeout=replace(timeout, value=float(asked_s)))


def one_fix_per_line(findings: list[Finding]) -> list[Finding]:
    """A proxy line the log's tail and the timeout chain both judge gets the tail's read
    timeout as the chain's fix too: the chain alone asks less (or to shorten the app server's
    timeout, which the tail forbids), and two fixes for one line leave the user to guess."""
    tails = {f.at: f.fix.split(";")[0] for f in findings if f.rule == "traffic-tail-over-timeout"}
    return [
        replace(f, fix=tails[f.at] + ";")
        if f.rule == "app-timeout-over-read-timeout" and f.at in tails
        else f
        for f in findings
    ]


def _log_conf(c: Context) -> str:
    """` --log-conf FILE` when an nginx config checked here defines a log_format (check read
    the log with it; `measure` needs it named), else nothing (without it the fix's `measure`
    failed on a log of a format of its own)."""
    for site in c.nginx:
        for file in (site.file, *site.files):
            try:
                if "log_format" in file.read_text(errors="replace"):
                    return f" --log-conf {file}"
            except OSError:
                continue
    return ""


def _log(traffic: Traffic) -> Location:
    return Location(Path(traffic.sources[-1]), 1)


def _share(t: Traffic, ms: float) -> str:
    """The share of the log's timed requests at or above `ms`, as the log shows it."""
    split = t.split_at(ms)
    return f"{split.share:.2%} ({split.slow_count:,.0f} of {t.timed:,})"


def _s(ms: float) -> str:
    return f"{ms / 1000:,.1f} s" if ms >= 1000 else f"{ms:,.0f} ms"


@_rule(
    "traffic-tail-over-timeout",
    Severity.error,
    "the log's slowest requests take as long as a timeout that cuts them",
)
def _tail(rule: TrafficRule, c: Context, t: Traffic) -> Iterator[Finding]:
    if not t.timed:
        return
    tail_ms = t.quantile(TAIL_QUANTILE)
    evidence = f"p99.9 of the {t.timed:,} requests timed by {t.format.service_field} in {t.source}"
    # The app server's timeout this finding asks where the tail runs into it: the proxy's
    # fix in front is then that timeout + the margin, so the two fixes agree.
    asked_s = math.ceil(tail_ms / 1000 * 2)
    seen: set[Location] = set()
    for link in c.links:
        read = link.passing.read_timeout
        where = read.at if not read.default else link.passing.at
        directive = link.passing.timeout_name("read")
        if tail_ms >= read.value * 1000 and where not in seen:
            seen.add(where)
            # One line, one fix: never below what the timeout chain asks of the same directive
            # (app-timeout-over-read-timeout: the app server's timeout + the margin), with
            # the app server's timeout as this finding asks it where the tail runs into it.
            wanted = max(asked_s, _chain_s(_with_timeout(link.app, tail_ms, asked_s)))
            yield rule.finding(
                where,
                f"{directive} {read.value:g} s: the {evidence} is {_s(tail_ms)}; "
                f"{_share(t, read.value * 1000)} of the log's requests took that long or longer, "
                "and each would run into it and be answered 504",
                f"{link.passing.timeout_written('read', str(wanted))} and find why the slowest "
                "routes are that slow "
                "(measure --log lists them)",
                (_log(t),),
            )
    for app in c.apps:
        timeout = app.request_timeout
        if timeout is None or timeout.value <= 0 or timeout.at in seen:
            continue
        if tail_ms >= timeout.value * 1000:
            seen.add(timeout.at)
            yield rule.finding(
                timeout.at,
                f"the app server's timeout {timeout.value:g} s: the {evidence} is {_s(tail_ms)}; "
                "a worker running such a request is killed, and nginx answers 502",
                f"{assignment(app, 'timeout', asked_s)}, or move that work out of the request",
                (_log(t),),
            )


@_rule(
    "traffic-clients-gave-up",
    Severity.warning,
    "clients closed their connections before the answer (499 / 460)",
)
def _gave_up(rule: TrafficRule, c: Context, t: Traffic) -> Iterator[Finding]:
    code = "460" if t.format.name == "alb" else "499"
    count = t.statuses.get(code, 0)
    if not t.requests or count / t.requests < CLIENT_GAVE_UP_SHARE:
        return
    slowest = max(t.routes.values(), key=lambda r: r.quantile(0.99), default=None)
    hint = (
        f" (slowest route: {slowest.route}, p99 {_s(slowest.quantile(0.99))})"
        if slowest is not None
        else ""
    )
    yield rule.finding(
        _log(t),
        f"{count:,} of {t.requests:,} requests ({count / t.requests:.2%}) ended {code}: the "
        f"client gave up before the app answered{hint}; the app's work on them was wasted",
        "make the slow routes faster, or give those clients a longer timeout; a queue in front "
        "of busy workers (see traffic-queueing) shows up here first",
    )


@_rule(
    "traffic-queueing",
    Severity.warning,
    "at the peak second, more requests are in the app than workers x threads can hold",
)
def _queueing(rule: TrafficRule, c: Context, t: Traffic) -> Iterator[Finding]:
    if not t.timed or not t.peak_rps:
        return
    needed = t.concurrency(t.peak_rps)
    for app in c.apps:
        capacity = app.workers.value * max(1, app.threads.value)
        if needed > capacity:
            yield rule.finding(
                app.workers.at,
                f"{app.workers.value} workers x {app.threads.value} threads hold {capacity} "
                f"requests at once, but the log's busiest second brought {t.peak_rps:,} "
                f"requests of {_s(t.mean_ms)} on average: {needed:,.1f} at once by Little's law "
                f"({t.source}); the rest wait in the listen queue",
                f"servertune measure --log {t.sources[-1]}{_log_conf(c)} --out workload.toml, "
                f"then servertune gen {app.kind} --workload workload.toml",
                (app.threads.at, _log(t)),
            )


_BODY = re.compile(r"^\s*client_max_body_size\s+(\d+)([kKmMgG]?)\s*;", re.MULTILINE)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def _body_limits(files: tuple[Path, ...]) -> list[tuple[int, Location]]:
    limits = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for match in _BODY.finditer(text):
            size = int(match.group(1)) * _UNITS[match.group(2).lower()]
            limits.append((size, Location(path, text.count("\n", 0, match.start()) + 1)))
    return limits


@_rule(
    "traffic-body-near-limit",
    Severity.warning,
    "request bodies in the log come close to client_max_body_size",
)
def _body(rule: TrafficRule, c: Context, t: Traffic) -> Iterator[Finding]:
    if not t.max_length:
        return
    for nginx in c.nginx:
        limits = _body_limits(nginx.files) or [(NGINX_DEFAULT_BODY_BYTES, Location(nginx.file, 1))]
        size, at = max(limits)  # the largest: a location may allow more than the server
        if t.max_length >= BODY_NEAR_LIMIT_RATIO * size:
            yield rule.finding(
                at,
                f"client_max_body_size {size:,} bytes: the largest request in {t.source} was "
                f"{t.max_length:,} bytes ($request_length), {t.max_length / size:.0%} of it; a "
                "slightly larger upload is refused with 413",
                f"client_max_body_size {math.ceil(t.max_length * 2 / 1024**2)}m;",
                (_log(t),),
            )
