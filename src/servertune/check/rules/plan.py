"""The file against the plan `gen` writes for the same cores: each setting that differs."""

from __future__ import annotations

from collections.abc import Iterator

from servertune.check.ingress import INGRESS_NGINX_ANNOTATIONS
from servertune.check.model import AppServer, Finding, Location, Setting, Severity
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule
from servertune.check.rules.spelling import as_shown
from servertune.sizing import Plan

#: The servers servertune writes a plan for (`gen`): another's file (an NGINX Unit config) is
#: not compared with a plan it has no spelling of.
PLANNED = frozenset({"gunicorn", "uwsgi", "uvicorn", "granian"})


@check_rule(
    "plan-interface-differs",
    Severity.advice,
    "the app server calls the app through another interface than the workload's",
    "servertune explain (interface)",
    kind="advice",
)
def plan_interface_differs(rule: Rule, c: Context) -> Iterator[Finding]:
    plan = c.plan
    if plan is None:
        return
    wanted = plan.workload.interface
    for app in c.sized():
        if app.interface == wanted or app.kind not in PLANNED:
            continue
        at = app.worker_class.at if app.worker_class is not None else app.workers.at
        worker = "" if app.worker_class is None else f" (worker class {app.worker_class.value})"
        yield rule.finding(
            at,
            f"{app.file.name} serves a{'n' if app.interface == 'asgi' else ''} "
            f"{app.interface.upper()} app{worker}, but the workload's interface is "
            f"'{wanted}': the plan sizes another kind of server, so its thread count is not "
            "compared and its other numbers may not fit",
            f'interface = "{app.interface}"   (in the workload), or '
            + (
                "servertune gen gunicorn-asgi"
                if wanted == "asgi"
                else "servertune gen gunicorn-per-worker"
            ),
        )


def _keepalive_field(plan: Plan, app: AppServer) -> str:
    """The plan number an app server's keep-alive is written from: uvicorn's for an ASGI
    worker (when the plan has one), gunicorn's otherwise."""
    if app.interface == "asgi" and plan.asgi_keepalive_s is not None:
        return "asgi_keepalive_s"
    return "gunicorn_keepalive_s"


@check_rule(
    "plan-differs",
    Severity.advice,
    "a number differs from the plan for the given workload",
    "servertune explain (the plan's reason, quoted in each finding)",
    kind="advice",
)
def plan_differs(rule: Rule, c: Context) -> Iterator[Finding]:
    plan = c.plan
    if plan is None:
        return
    # (setting, plan field, directive as written in its file, whether the file is nginx)
    compared: list[tuple[Setting[float] | Setting[int] | None, str, str, bool]] = []
    for app in (a for a in c.sized() if a.kind in PLANNED):
        if app.kind in ("uvicorn", "granian"):
            compared += _command_line_compared(app, plan)
            continue
        uwsgi = app.kind == "uwsgi"
        per_worker = app.workers.value == 1 and any(
            s.value in {p.endpoint for p in plan.sockets} for s in app.sockets
        )
        if not per_worker:  # one single-worker server per socket: its `workers = 1` is the plan
            compared.append((app.workers, "processes", "processes" if uwsgi else "workers", False))
        if app.interface == "wsgi" and plan.workload.interface == "wsgi":
            # An event loop per process has no thread count to compare (nor does a WSGI
            # server against an ASGI plan: plan-interface-differs says so).
            compared.append((app.threads, "threads", "threads", False))
        compared += [
            (app.request_timeout, "request_timeout_s", "harakiri" if uwsgi else "timeout", False),
            (app.graceful_timeout, "graceful_timeout_s", "graceful_timeout", False),
            (app.keepalive, _keepalive_field(plan, app), "keepalive", False),
            (app.max_requests, "max_requests", "max-requests" if uwsgi else "max_requests", False),
            (
                app.max_requests_jitter,
                "max_requests_jitter",
                "max-requests-delta" if uwsgi else "max_requests_jitter",
                False,
            ),
        ]
    for nginx in c.nginx:
        for keepalive in nginx.keepalive_timeouts:
            compared.append((keepalive, "nginx_keepalive_timeout_s", "keepalive_timeout", True))
        for passing in nginx.passes:
            directive = passing.timeout_name("read")  # an Ingress's: its annotation
            compared.append((passing.read_timeout, "nginx_read_timeout_s", directive, True))
        for upstream in nginx.upstreams.values():
            if upstream.keepalive is not None:
                compared.append(
                    (
                        upstream.keepalive_timeout,
                        "upstream_keepalive_timeout_s",
                        "keepalive_timeout",
                        True,
                    )
                )
    seen, unknown = set[tuple[Location, str]](), _unknown_settings(c)
    for setting, field, directive, in_nginx in compared:
        if setting is None or (setting.at, field) in seen or id(setting) in unknown:
            continue
        seen.add((setting.at, field))
        wanted = plan.value(field)
        if wanted is None:
            wanted = _UNSET_AS.get(field)
        if setting.value != wanted:
            if in_nginx and directive.startswith(INGRESS_NGINX_ANNOTATIONS):
                fix = f'{directive}: "{wanted}"'  # unitless seconds, as a string
            elif in_nginx:
                fix = f"{directive} {wanted}s;"
            else:
                fix = (
                    f"{directive} {wanted}"
                    if directive.startswith("--")
                    else f"{directive} = {wanted}"
                )
            yield rule.finding(
                setting.at,
                f"for the workload given the plan is {directive} {wanted}, not "
                f"{as_shown(setting)}: {plan.reasons[field]}",
                fix,
            )


def _unknown_settings(c: Context) -> set[int]:
    """The ids of the settings only the running server knows (`AppServer.unknown`): compared
    with no plan number."""
    return {id(getattr(app, name)) for app in c.sized() for name in app.unknown}


#: Plan numbers that are None where the server writes "none" as 0: uvicorn without
#: --limit-max-requests recycles nothing, which the plan says as asgi_max_requests = None.
_UNSET_AS = {"asgi_max_requests": 0}


def _command_line_compared(
    app: AppServer, plan: Plan
) -> list[tuple[Setting[float] | Setting[int] | None, str, str, bool]]:
    """What a uvicorn or granian command line says, beside the plan number it was written from."""
    compared: list[tuple[Setting[float] | Setting[int] | None, str, str, bool]] = [
        (app.workers, "processes", "--workers", False)
    ]
    if app.kind == "uvicorn":
        compared += [
            (app.keepalive, _keepalive_field(plan, app), "--timeout-keep-alive", False),
            (app.graceful_timeout, "graceful_timeout_s", "--timeout-graceful-shutdown", False),
        ]
        if not app.mapped_sockets:  # a single-worker uvicorn per socket never recycles
            compared.append((app.max_requests, "asgi_max_requests", "--limit-max-requests", False))
            if plan.asgi_max_requests is not None:
                jitter = (app.max_requests_jitter, "max_requests_jitter")
                compared.append((*jitter, "--limit-max-requests-jitter", False))
        return compared
    if not app.threads.default:  # granian's own default depends on the interface
        compared.append((app.threads, "granian_blocking_threads", "--blocking-threads", False))
    compared.append((app.graceful_timeout, "graceful_timeout_s", "--workers-kill-timeout", False))
    return compared
