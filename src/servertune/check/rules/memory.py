"""Memory: workers x resident size within the container's memory limit, and recycling when memory
grows.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from servertune.check.model import Finding, Severity
from servertune.check.rules.backing import GUNICORN_DOCS, K8S_RESOURCES
from servertune.check.rules.context import Context
from servertune.check.rules.limits import limit_name
from servertune.check.rules.rule import Rule, check_rule
from servertune.check.rules.spelling import SPELLING, assignment, figure, spelled
from servertune.sizing import MAX_REQUESTS_JITTER_RATIO, MEMORY_HEADROOM_RATIO


@check_rule(
    "workers-over-memory-limit",
    Severity.warning,
    "the workers' resident memory does not fit the container's memory limit",
    "`servertune explain` (processes: memory_limit_mb x MEMORY_HEADROOM_RATIO / "
    "memory_per_worker_mb); "
    "past the limit the kernel's OOM killer ends a worker mid-request: "
    "https://docs.docker.com/engine/containers/resource_constraints/#memory, " + K8S_RESOURCES,
    kind="fault",
)
def workers_over_memory_limit(rule: Rule, c: Context) -> Iterator[Finding]:
    if c.rss_mb is None:
        return
    for app in c.sized():
        box = app.container
        if box is None or box.memory_limit_mb is None:
            continue
        limit = box.memory_limit_mb.value
        fits = math.floor(limit * MEMORY_HEADROOM_RATIO / c.rss_mb)
        if app.workers.value <= fits:
            continue
        needed = math.ceil(app.workers.value * c.rss_mb / MEMORY_HEADROOM_RATIO)
        yield rule.finding(
            app.workers.at,
            f"{app.workers.value} workers x {figure(c.rss_mb)} MiB ({c.rss_source}) = "
            f"{figure(app.workers.value * c.rss_mb)} MiB against a memory limit of {figure(limit)} MiB "
            f"({box.memory_limit_mb.at}), of which {MEMORY_HEADROOM_RATIO:.0%} is for workers "
            "(the rest for the master, buffers and growth): under load a worker is OOM-killed "
            "and its requests fail",
            f"{assignment(app, 'workers', max(1, fits))}   (or raise "
            f"{limit_name(box, 'memory')} to {needed} MiB)",
            (box.memory_limit_mb.at,),
        )


@check_rule(
    "no-recycling-while-memory-grows",
    Severity.warning,
    "the workers' memory grows with every request and nothing recycles them",
    "`servertune explain` (max_requests: memory_growth_kb_per_request, measured by "
    "`servertune measure`, sets it); a worker past the container's limit is OOM-killed "
    "mid-request: https://docs.docker.com/engine/containers/resource_constraints/#memory, "
    + GUNICORN_DOCS
    + "#max-requests",
    kind="fault",
)
def no_recycling_while_memory_grows(rule: Rule, c: Context) -> Iterator[Finding]:
    plan = c.plan
    growth = plan.workload.memory_growth_kb_per_request if plan is not None else None
    if plan is None or not growth:
        return
    for app in c.sized():
        if app.max_requests.value > 0 or "max_requests" not in SPELLING[app.kind]:
            continue
        if "max_requests" in app.unknown:
            continue  # a number only the running server knows
        recycle = plan.asgi_max_requests if app.kind == "uvicorn" else plan.max_requests
        if recycle is None or (app.kind == "uvicorn" and app.workers.value < 2):
            continue  # one uvicorn worker cannot be recycled: its exit ends the server
        per_million_mb = growth * 1_000_000 / 1024
        yield rule.finding(
            app.max_requests.at,
            f"the workload's workers grow {growth:g} KiB a request "
            f"(memory_growth_kb_per_request) and {spelled(app, 'max_requests')} is unset: no "
            f"worker ever restarts, so each holds {per_million_mb:.0f} MiB more after a million "
            "requests, until the memory limit OOM-kills it mid-request",
            assignment(app, "max_requests", recycle)
            + f", {assignment(app, 'jitter', math.ceil(recycle * MAX_REQUESTS_JITTER_RATIO))}",
        )
