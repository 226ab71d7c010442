"""The rules `servertune check` applies, one module per concern, registered in `RULES`.

Every threshold is a sizing constant (`servertune.sizing.defaults`) or a number of the plan, so
`check` flags exactly what `gen` would never write. Each rule says what goes wrong in
production, the directive that fixes it, and the benchmark or documentation behind it.

Adding a rule is one function with `@check_rule(...)` in its concern's module (or a new module
here for a new concern) and one line in `RULES` below. `RULES`' order is the order SARIF lists
the rules in; findings are sorted by file, line and rule id whatever the order.

`check --log`'s rules are a registry of their own (`servertune.check.traffic.TRAFFIC_RULES`):
they read the access log's `Traffic` too, and load the log reader only when a log is given.
"""

from __future__ import annotations

from dataclasses import replace

from servertune.check import memo
from servertune.check.model import Finding, Severity
from servertune.check.rules import (
    coverage,
    keepalive,
    launchers,
    limits,
    memory,
    plan,
    ports,
    probes,
    protocols,
    proxies,
    queueing,
    recycling,
    shutdown,
    sockets,
    timeouts,
    workers,
)
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule
from servertune.check.rules.sockets import BALANCE_CPU_FRACTION
from servertune.check.rules.timeouts import NEVER_GIVES_UP_S
from servertune.sizing.defaults import THUNDER_LOCK_MIN_PROCESSES

__all__ = [
    "BALANCE_CPU_FRACTION",
    "NEVER_GIVES_UP_S",
    "RULES",
    "THUNDER_LOCK_MIN_PROCESSES",
    "Context",
    "Rule",
    "check_rule",
    "run_rules",
]

RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        keepalive.lb_idle_over_nginx_keepalive,
        keepalive.lb_idle_over_app_keepalive,
        keepalive.upstream_keepalive_over_app_keepalive,
        timeouts.app_timeout_over_read_timeout,
        workers.gthread_one_thread,
        workers.threads_ignored_by_worker_class,
        sockets.shared_socket,
        sockets.granian_workers_share_a_port,
        sockets.uvicorn_workers_nagle,
        workers.workers_over_cores,
        workers.workers_from_cpu_count,
        workers.workers_from_cpu_count_no_limit,
        workers.one_process_one_thread,
        sockets.backlog_over_somaxconn,
        sockets.listen_queue_zero,
        recycling.max_requests_without_jitter,
        shutdown.graceful_below_timeout,
        sockets.thunder_lock,
        launchers.option_given_twice,
        launchers.gunicorn_unknown_setting,
        launchers.number_cut_short,
        launchers.uwsgi_inline_comment,
        launchers.reloader_in_production,
        launchers.development_server_in_production,
        launchers.substring_not_default,
        launchers.exec_form_not_expanded,
        launchers.exec_form_one_string,
        launchers.option_and_value_in_one_argument,
        launchers.pidfile_looks_like_port,
        launchers.ignored_by_platform,
        shutdown.entrypoint_without_exec,
        shutdown.entrypoint_without_exec_unlaunched,
        shutdown.shell_form_command,
        shutdown.background_server_without_trap,
        shutdown.stop_wait_below_graceful,
        shutdown.stop_signal_quick_shutdown,
        shutdown.uwsgi_sigterm_reloads,
        shutdown.uwsgi_sigterm_cuts_requests,
        timeouts.proxy_timeout_never_gives_up,
        proxies.worker_connections_below_proxied_load,
        coverage.include_not_found,
        plan.plan_interface_differs,
        plan.plan_differs,
        limits.workers_over_cpu_limit,
        limits.no_cpu_limit,
        memory.workers_over_memory_limit,
        memory.no_recycling_while_memory_grows,
        recycling.max_requests_jitter_small,
        coverage.unresolved_variable,
        coverage.config_not_found,
        shutdown.grace_period_below_shutdown,
        probes.liveness_kills_busy_pod,
        probes.liveness_same_as_readiness,
        probes.no_readiness_probe,
        probes.exposed_without_resources_or_probes,
        probes.readiness_tcp_before_workers,
        timeouts.route_timeout_below_app_timeout,
        queueing.balancer_maxconn_over_app_limit,
        protocols.uwsgi_pass_to_http_socket,
        ports.front_port_mismatch,
    )
}


def run_rules(context: Context) -> list[Finding]:
    """Every rule's findings, sorted by file, line and rule id; no rule but a coverage one
    reads a setting check could not work out (`Context.known`), and the fault rules judge no
    development launch (`Context.for_faults`)."""
    known = context.known()
    faults = known.for_faults()
    findings = [
        f
        for rule in RULES.values()
        for f in rule.check(
            rule, faults if rule.kind == "fault" else known if rule.kind == "advice" else context
        )
    ]
    with memo.one_run():  # a compose file's production twin looked for once, not per finding
        findings = [_in_development_stack(f) for f in findings]
    return sorted(findings, key=lambda f: (str(f.at.file), f.at.line, f.rule))


#: The rules about how a server is stopped (signals, exec, waits): a development stack's are
#: a developer's `docker compose down`, not a deployment's requests.
_STOP_RULES = frozenset(r.id for r in vars(shutdown).values() if isinstance(r, Rule))


def _in_development_stack(finding: Finding) -> Finding:
    """A stop finding written in a compose file whose production stack is a file of its own
    beside it (`docker-compose.yml` beside a `docker-compose.prod.yml` that runs alone) is
    advice: that file is the developers' stack, and what its stop loses is a developer's."""
    from servertune.check.overlay import production_twin

    if finding.rule not in _STOP_RULES or finding.severity == Severity.advice:
        return finding
    twin = production_twin(finding.at.file)
    if twin is None:
        return finding
    return replace(
        finding,
        severity=Severity.advice,
        message=f"{finding.message} (advice: {twin.name} beside {finding.at.file.name} is "
        "production's own stack, so this one is the developers')",
    )
