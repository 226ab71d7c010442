"""Workers and cores: as many worker processes (and threads) as the cores they run on, counted
where the server runs (a container's CPUs, not the host's).
"""

from __future__ import annotations

from collections.abc import Iterator

from servertune.check.model import AppServer, Finding, Severity
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule
from servertune.check.rules.spelling import assignment, figure, spelled
from servertune.sizing import Plan, make_plan
from servertune.workload import Workload


@check_rule(
    "gthread-one-thread",
    Severity.warning,
    "a gthread worker with one thread accepts requests while it is busy",
    "servertune bench hol; benoitc/gunicorn#2191",
    kind="fault",
)
def gthread_one_thread(rule: Rule, c: Context) -> Iterator[Finding]:
    if c.plan is not None and c.plan.workload.slow_call_ratio == 0:
        return  # no slow calls: a request waits at most one quick request
    for app in c.apps:
        if app.worker_class is None or app.worker_class.value != "gthread":
            continue
        if app.threads.value == 1:
            fix = f"threads = {c.plan.threads}" if c.plan else 'worker_class = "sync"'
            yield rule.finding(
                app.threads.at,
                "gthread with threads = 1: a worker busy on a slow call still accepts "
                "connections and queues them behind it (head-of-line blocking: the hol "
                "benchmark's quick requests stall for the slow call's full length)",
                fix,
                (app.worker_class.at,),
            )


def judged_cores(c: Context) -> tuple[int, str]:
    machine = c.plan.machine if c.plan else c.machine
    where = "the workload's" if c.plan else f"the server's ({machine.cores_source}):"
    return machine.cores, where


def planned_processes(app: AppServer, c: Context) -> bool:
    """The workload's plan itself runs this many single-threaded processes on its cores: its
    memory holds a process for each slot the GIL share asks for (docs/sizing.md)."""
    plan = c.plan
    if plan is None or plan.processes <= plan.machine.cores:
        return False
    return app.workers.value <= plan.processes and app.threads.value <= plan.threads


def plan_for_cores(c: Context, cores: int) -> tuple[Plan, str]:
    """The plan the worker findings follow, and in words which workload it was made for: the
    workload given (`--workload`), or servertune's default one on these cores, named as an
    assumption (an I/O-bound app's plan has more threads, never more processes)."""
    if c.plan is not None:
        return c.plan, "the workload given"
    workload = Workload(cores=cores)
    assumed = (
        f"servertune's default workload ({figure(workload.service_time_ms)} ms per request, "
        f"{workload.cpu_fraction:.0%} of it holding the GIL; give --workload for yours)"
    )
    return make_plan(workload, c.machine.model_copy(update={"cores": cores})), assumed


def workers_fix(app: AppServer, plan: Plan) -> str:
    """The plan's processes (and threads, where the server has WSGI threads) in the file's words."""
    fix = assignment(app, "workers", plan.processes)
    if app.kind in ("gunicorn", "uwsgi") and app.interface == "wsgi" and plan.threads > 1:
        fix += f" and {assignment(app, 'threads', plan.threads)}"
    return fix


@check_rule(
    "workers-over-cores",
    Severity.advice,
    "more worker processes than the cores the server may use",
    "`servertune explain --cores N` (its `processes` and `threads` rows: one process per core "
    "under the GIL; threads, not processes, for the waits); servertune bench balance",
    kind="advice",
)
def workers_over_cores(rule: Rule, c: Context) -> Iterator[Finding]:
    cores, where = judged_cores(c)
    for app in c.apps:
        box = app.container
        if box is not None and (box.platform != "compose" or box.cpu_limit is not None):
            continue  # in a container the limit is what counts (workers-over-cpu-limit)
        if app.workers_follow_cpu_count and _runs_in_container(app):
            continue  # one cause, one finding: workers-from-cpu-count says it at this line
        if app.workers.value > cores and not planned_processes(app, c):
            plan, assumed = plan_for_cores(c, cores)
            # A per-worker script starts one single-worker server per socket: its count is
            # the number of sockets, and so is the fix.
            per_socket = app.mapped_sockets and app.kind in ("uvicorn", "granian")
            subject = (
                f"{app.workers.value} single-worker servers (one per socket) are"
                if per_socket
                else f"{assignment(app, 'workers', app.workers.value)} is"
            )
            shape = f"{plan.processes} processes" + (
                f" x {plan.threads} threads"
                if app.interface == "wsgi" and app.kind in ("gunicorn", "uwsgi")
                else ""
            )
            waits = (
                "threads wait as well at a fraction of a process's memory"
                if app.interface == "wsgi"
                else "each process's event loop already waits on many at once"
            )
            yield rule.finding(
                app.workers.at,
                f"{subject} more than {where} {cores} core{'' if cores == 1 else 's'}: while requests hold the GIL the "
                "extra processes only take turns on the same cores and multiply memory; for "
                f"requests that wait on I/O, {waits}. servertune's plan for {assumed} is "
                f"{shape}",
                f"{plan.processes} sockets, one single-worker server each"
                if per_socket
                else workers_fix(app, plan),
            )


def _runs_in_container(app: AppServer) -> bool:
    """The files say the server runs in a container or dyno: a manifest or compose service
    holds it, or a command line (a Dockerfile's CMD, a Procfile, a manifest's args) starts it."""
    return app.container is not None or app.command_line


@check_rule(
    "workers-from-cpu-count",
    Severity.warning,
    "the worker count follows the host's CPU count, not the container's CPU limit",
    "tiangolo/uvicorn-gunicorn-docker#43; https://docs.python.org/3/library/os.html#os.cpu_count",
    kind="fault",
)
def workers_from_cpu_count(rule: Rule, c: Context) -> Iterator[Finding]:
    cores, _ = judged_cores(c)
    for app in c.apps:
        if not _runs_in_container(app):
            # A config file read on its own may be a host's (searxng's uWSGI template for a
            # systemd install): there the CPU count is the right one. Its count is judged
            # against the cores by workers-over-cores; the container case needs the files
            # that say it runs in one (a Dockerfile, compose file, manifest, Procfile).
            continue
        if app.workers_follow_cpu_count:
            name = spelled(app, "workers")
            yield rule.finding(
                app.workers.at,
                f"{name} is computed from the CPU count, which reports the host's cores, not the "
                "cgroup's CPU quota: in a CPU-limited container this starts many times too many "
                "workers",
                f"{workers_fix(app, plan_for_cores(c, cores)[0])}   (or read the cgroup "
                "limit: `servertune explain` shows it)",
            )


#: gunicorn worker classes whose workers serve many requests at once on green threads.
ASYNC_WORKERS = {"gevent", "eventlet", "tornado"}
