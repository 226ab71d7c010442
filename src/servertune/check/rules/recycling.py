"""Recycling: `max_requests` spread by a jitter wide enough that workers do not all restart at
once.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from servertune.check.model import Finding, Severity
from servertune.check.rules.backing import GUNICORN_DOCS
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule
from servertune.check.rules.spelling import SPELLING, assignment, spelled
from servertune.sizing import MAX_REQUESTS_JITTER_RATIO

#: Each server's own word on spreading restarts: a finding cites its server's, never another's.
_JITTER_BACKING = {
    "gunicorn": "benoitc/gunicorn#3427 (max_requests 10240 with jitter 512: four workers "
    f"restarted within four seconds); {GUNICORN_DOCS}#max-requests-jitter",
    "uwsgi": "https://uwsgi-docs.readthedocs.io/en/latest/Options.html#max-requests-delta",
    "uvicorn": "https://www.uvicorn.org/settings/#resource-limits (--limit-max-requests-jitter)",
}


#: The recycling settings: one the files compute from what only the running server knows is
#: not judged.
_RECYCLING = frozenset({"max_requests", "max_requests_jitter"})


@check_rule(
    "max-requests-without-jitter",
    Severity.advice,
    "workers recycled after N requests all restart together",
    "benoitc/gunicorn#3427; " + GUNICORN_DOCS + "#max-requests-jitter",
    kind="advice",
)
def max_requests_without_jitter(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.sized():
        if app.max_requests.value <= 0 or app.max_requests_jitter.value > 0:
            continue
        if _RECYCLING & app.unknown:
            continue  # a number only the running server knows (`getenv("JITTER", f())`)
        if app.missing_config is not None:
            continue  # the config file the command names, not read, may set the jitter
        replicas = app.container.replicas if app.container is not None else None
        if app.workers.value * (replicas.value if replicas is not None else 1) < 2:
            continue  # one process in all: no restarts to keep apart
        jitter = math.ceil(app.max_requests.value * MAX_REQUESTS_JITTER_RATIO)
        yield rule.finding(
            app.max_requests.at,
            f"for any workload servertune's plan spreads recycling with a jitter of "
            f"{MAX_REQUESTS_JITTER_RATIO:.0%} of the limit ({assignment(app, 'jitter', jitter)}): "
            f"max requests {app.max_requests.value} with no {spelled(app, 'jitter')}, workers "
            "that share the load reach the limit at about the same time and may restart "
            "together, leaving fewer to serve while an application starts",
            assignment(app, "jitter", jitter),
            backing=_JITTER_BACKING.get(app.kind, _JITTER_BACKING["gunicorn"]),
        )


@check_rule(
    "max-requests-jitter-small",
    Severity.advice,
    "the recycling jitter is too small to keep the workers' restarts apart",
    "benoitc/gunicorn#3427 (max_requests 10240 with jitter 512: four workers restarted within "
    "four seconds); the plan's MAX_REQUESTS_JITTER_RATIO; "
    + GUNICORN_DOCS
    + "#max-requests-jitter",
    kind="advice",
)
def max_requests_jitter_small(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.sized():
        if _RECYCLING & app.unknown:
            continue  # a number only the running server knows
        limit, jitter = app.max_requests.value, app.max_requests_jitter.value
        if (
            limit <= 0
            or jitter <= 0
            or app.kind not in SPELLING
            or "jitter" not in SPELLING[app.kind]
        ):
            continue  # no recycling, or no jitter at all (max-requests-without-jitter)
        replicas = app.container.replicas if app.container is not None else None
        copies = replicas.value if replicas is not None else 1
        total = app.workers.value * copies
        if total < 2:
            continue
        wanted = math.ceil(limit * MAX_REQUESTS_JITTER_RATIO)
        if jitter >= wanted:
            continue
        across = (
            f"; with {copies} replicas ({replicas.at}) {total} workers share the load and "
            f"draw from the same window, so the chance that some replica restarts all "
            f"{app.workers.value} of its workers at once is {copies} times one replica's"
            if replicas is not None and copies > 1
            else ""
        )
        yield rule.finding(
            app.max_requests_jitter.at,
            f"for any workload servertune's plan is a jitter of "
            f"{MAX_REQUESTS_JITTER_RATIO:.0%} of the limit ({assignment(app, 'jitter', wanted)}"
            f"), not {jitter}, {jitter / limit:.1%} of {spelled(app, 'max_requests')} {limit}: "
            f"workers that share the load evenly reach their limits within {jitter} requests "
            f"of each other and restart almost together{across}",
            assignment(app, "jitter", wanted),
            (app.max_requests.at,) + ((replicas.at,) if replicas is not None else ()),
            backing=_JITTER_BACKING.get(app.kind, _JITTER_BACKING["gunicorn"]),
        )
