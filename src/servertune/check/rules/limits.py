"""CPU limits: workers sized for the CPUs a container may use, and a container with no limit."""

from __future__ import annotations

import math
from collections.abc import Iterator

from servertune.check.model import Container, Finding, Severity
from servertune.check.rules.backing import DOCKER_RESOURCES, GUNICORN_DOCS, K8S_RESOURCES
from servertune.check.rules.context import Context
from servertune.check.rules.probes import exposed_bare
from servertune.check.rules.rule import Rule, check_rule
from servertune.check.rules.spelling import assignment, figure
from servertune.check.rules.workers import (
    DOCUMENTED_WORKERS_PER_CORE,
    plan_for_cores,
    planned_processes,
    workers_fix,
)
from servertune.cores import round_cores


def limit_name(box: Container, what: str) -> str:
    """How the container's platform spells its CPU or memory limit."""
    if box.words is not None:
        return {"cpu": box.words.cpu_name, "memory": box.words.memory_name}.get(what, what)
    if box.platform == "compose":
        return {"cpu": "cpus", "memory": "mem_limit", "cpu-request": "reservations.cpus"}[what]
    return {"cpu": "limits.cpu", "memory": "limits.memory", "cpu-request": "requests.cpu"}[what]


@check_rule(
    "workers-over-cpu-limit",
    Severity.warning,
    "more worker processes than the documented range for the container's CPU limit",
    "a CPU limit is a CFS quota: past it the container is throttled for the rest of each "
    f"100 ms period: {K8S_RESOURCES}, {DOCKER_RESOURCES}; for gunicorn, its `workers` setting "
    "(generally 2-4 x $(NUM_CORES))",
    kind="fault",
)
def workers_over_cpu_limit(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.sized():
        box = app.container
        if box is None or box.cpu_limit is None:
            continue
        cores = round_cores(box.cpu_limit.value)
        # Of the CPUs the quota gives (a quarter CPU is no whole core).
        bound = DOCUMENTED_WORKERS_PER_CORE * box.cpu_limit.value
        if app.workers.value <= bound or planned_processes(app, c):
            continue  # up to 4 x the limit: advice at most (workers-over-cores)
        if app.workers_follow_cpu_count:
            continue  # one cause, one finding: workers-from-cpu-count names the CPU count
        plan = plan_for_cores(c, cores)[0]
        if app.workers.value <= max(1, plan.processes):
            # One process under a tenth of a CPU: no fewer workers is a fix (the plan's own
            # count is what runs), only a larger limit, which is the deployment's to size.
            continue
        gunicorn = app.kind == "gunicorn"
        yield rule.finding(
            app.workers.at,
            f"{assignment(app, 'workers', app.workers.value)} under a CPU limit of "
            f"{figure(box.cpu_limit.value)} core{'' if box.cpu_limit.value == 1 else 's'} "
            f"({box.cpu_limit.at}) is more than {DOCUMENTED_WORKERS_PER_CORE} per CPU"
            + (" (gunicorn's documented 2-4 x cores)" if gunicorn else "")
            + f": {app.workers.value} processes share a quota of "
            f"{figure(box.cpu_limit.value)} CPU, so under load the container is throttled, each "
            "request's latency stretches by the throttled time, and every extra worker "
            "costs memory towards an OOM kill",
            f"{workers_fix(app, plan)}   (servertune's plan for "
            f"{cores} core{'' if cores == 1 else 's'}; or raise {limit_name(box, 'cpu')} to "
            f"{figure(math.ceil(4 * app.workers.value / DOCUMENTED_WORKERS_PER_CORE) / 4)})",
            (box.cpu_limit.at,),
            backing=(
                f"{GUNICORN_DOCS}#workers (generally in the 2-4 x $(NUM_CORES) range); "
                if gunicorn
                else ""
            )
            + f"{K8S_RESOURCES}; {DOCKER_RESOURCES} (a CPU limit is a CFS quota: throttling)",
        )


@check_rule(
    "no-cpu-limit",
    Severity.info,
    "a container without a CPU limit: its worker count is not tied to any number of cores",
    f"{K8S_RESOURCES}; {DOCKER_RESOURCES}",
    kind="fault",
)
def no_cpu_limit(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.sized():
        box = app.container
        if box is None or box.cpu_limit is not None:
            continue
        if box.platform == "kubernetes" and exposed_bare(box):
            continue  # exposed-without-resources-or-probes says it, and more
        request = limit_name(box, "cpu-request")
        if box.cpu_request is not None:
            cores = round_cores(box.cpu_request.value)
            if app.workers.value <= cores:
                continue
            yield rule.finding(
                box.cpu_request.at,
                f"{request} {figure(box.cpu_request.value)} without a limit: the scheduler "
                f"guarantees {figure(box.cpu_request.value)} CPU, but {app.workers.value} workers "
                "count on more; on a busy node they share the request",
                f'{limit_name(box, "cpu")}: "{cores}" and {assignment(app, "workers", cores)}, or '
                f"{request} at the worker count ({app.workers.value})",
                (app.workers.at,),
            )
        elif box.platform != "kubernetes":
            # A compose service without `cpus` runs on the host's cores, like a process
            # started by hand: workers-over-cores judges it against them. A limit nobody set
            # for a file every user runs on another host is not a finding to send. An
            # application platform's machine has the size its plan gives it, not set here.
            continue
        elif _sized_by_chart_users(box):
            continue
        else:
            yield rule.finding(
                box.at,
                f"container {box.name!r} sets no CPU request or limit: it is scheduled as if it "
                f"needed no CPU, and its workers ({app.workers.value}) compete with every other pod "
                "on the node",
                f'resources: {{requests: {{cpu: "{app.workers.value}"}}, limits: '
                f'{{cpu: "{app.workers.value}"}}}}',
                (app.workers.at,),
            )


def _sized_by_chart_users(box: Container) -> bool:
    """A Helm chart's container whose template and values give no resources at all (none
    written, or `{{ toYaml .Values.resources }}` over values' `resources: {}`): Helm's own
    chart scaffold (`helm create`) leaves them to each install on purpose ("we usually
    recommend not to specify default resources and to leave this as a conscious choice for
    the user"), so the missing limit is the chart user's choice, not the chart's fault."""
    from servertune.check.helm_templates import is_chart_template

    given = (box.cpu_limit, box.cpu_request, box.memory_limit_mb, box.memory_request_mb)
    return is_chart_template(box.at.file) and all(g is None for g in given)
