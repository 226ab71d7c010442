"""`servertune gen` output passes `servertune check`: what servertune writes, it never flags."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from servertune.check import LoadBalancer, check_files
from servertune.check.rules import BALANCE_CPU_FRACTION
from servertune.render import TARGETS
from servertune.sizing import Machine, Plan, make_plan
from servertune.workload import Workload

from .strategies import workloads

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.stem for p in (GOLDEN / "cases").glob("*.json"))
MACHINE = Machine(cores=1, somaxconn=4096)
#: The stacks `gen` writes: an app server config and the nginx in front of it.
STACKS = [
    ("uwsgi", "nginx"),
    ("uwsgi", "nginx-snippet"),
    ("gunicorn-per-worker", "nginx-gunicorn"),
    ("gunicorn-per-worker", "nginx-gunicorn-snippet"),
    ("gunicorn", "nginx-gunicorn-shared"),
    # ASGI: gunicorn with uvicorn's worker class, read by gunicorn like any gunicorn config.
    ("gunicorn-asgi", "nginx-asgi"),
    ("gunicorn-asgi", "nginx-asgi-snippet"),
    # The shell scripts, read by uvicorn's and granian's own command-line parsers.
    ("uvicorn", "nginx-asgi"),
    ("uvicorn-per-worker", "nginx-asgi-per-worker"),
    ("uvicorn-per-worker", "haproxy-asgi-per-worker"),  # HAProxy in nginx's place
    ("granian", "nginx-asgi"),
    ("granian", "nginx-gunicorn-shared"),  # granian serving a WSGI app
]
#: The ASGI stacks check can read, for hypothesis-drawn ASGI workloads below.
ASGI_STACKS = [stack for stack in STACKS if TARGETS[stack[0]].interfaces == {"asgi"}]
#: The one layout servertune writes but does not recommend (its own header says so): the
#: shared-socket gunicorn is flagged by exactly the rule that explains why, as advice.
SHARED_SOCKET_STACKS = {("gunicorn", "nginx-gunicorn-shared")}
#: The per-worker gunicorn config needs to know which worker it is.
ENV = {**os.environ, "SERVERTUNE_WORKER": "0"}


def _check(plan: Plan, stack: tuple[str, str], directory: Path) -> set[str]:
    paths = []
    for target in stack:
        path = directory / TARGETS[target].filename
        path.write_text(TARGETS[target].render(plan))
        paths.append(path)
    lb = LoadBalancer("workload", plan.workload.lb_idle_timeout_s, "test", "")
    result = check_files(paths, lb=lb, machine=plan.machine, plan=plan, env=ENV)
    # With several app hosts nginx proxies to other machines: nothing here to link it to.
    linked = not plan.workload.upstream
    # nginx links through its passes; HAProxy in nginx's place through its server lines.
    fronted = bool(result.links) or any(b.app is not None for b in result.balancer_links)
    assert fronted == linked, "the app server and the proxy in front were not linked"
    for finding in result.findings:
        # Advice only: never a fault (not even info) about servertune's own output.
        assert finding.severity.name == "advice", finding
    return {f.rule for f in result.findings}


def _expected(plan: Plan, stack: tuple[str, str]) -> set[str]:
    """shared-socket is advice for the one-socket layouts, once 2+ processes of 2+ threads share
    the socket the nginx given passes to, for an app holding the GIL as much as the benchmark's; granian's one-port layout with 2+ workers gets the same advice in granian's words."""
    shared = (
        stack in SHARED_SOCKET_STACKS
        and plan.processes >= 2
        and plan.threads >= 2
        and plan.workload.cpu_fraction >= BALANCE_CPU_FRACTION
        and not plan.workload.upstream  # said only where the nginx given passes to the socket
    )
    granian = stack[0] == "granian" and plan.processes >= 2
    return ({"shared-socket"} if shared else set()) | (
        {"granian-workers-share-a-port"} if granian else set()
    )


def _fits(case: str, stack: tuple[str, str]) -> bool:
    interface = json.loads((GOLDEN / "cases" / f"{case}.json").read_text()).get("interface", "wsgi")
    return all(interface in TARGETS[target].interfaces for target in stack)


#: Every golden case with every stack whose targets serve its app's interface.
PAIRS = [(case, stack) for case in CASES for stack in STACKS if _fits(case, stack)]


def test_there_are_cases() -> None:
    """The golden cases exist (a glob matching nothing would pass every test below)."""
    assert len(CASES) >= 4


@pytest.mark.parametrize(("case", "stack"), PAIRS, ids=[f"{c}-{'+'.join(s)}" for c, s in PAIRS])
def test_generated_stack_has_no_findings(case: str, stack: tuple[str, str], tmp_path: Path) -> None:
    """Every golden workload's generated app server + nginx pass check with the plan given."""
    workload = Workload.model_validate(json.loads((GOLDEN / "cases" / f"{case}.json").read_text()))
    plan = make_plan(workload, MACHINE)
    assert _check(plan, stack, tmp_path) == _expected(plan, stack)


def test_the_asgi_stacks_are_checked() -> None:
    """Some golden case is an ASGI app checked through gunicorn-asgi and the uvicorn scripts
    (not only skipped)."""
    assert ASGI_STACKS
    assert any(stack in ASGI_STACKS for _, stack in PAIRS)


#: Every other WSGI stack and every ASGI one; each drawn workload gets the stack's interface.
DRAWN = STACKS[:5:2] + ASGI_STACKS


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(workload=workloads())
@pytest.mark.parametrize("stack", DRAWN, ids=["+".join(s) for s in DRAWN])
def test_generated_stack_passes_for_any_workload(
    workload: Workload, stack: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """For hypothesis-drawn workloads too, gen's output draws no finding beyond the expected advice."""
    interface = "asgi" if stack in ASGI_STACKS else "wsgi"
    workload = workload.model_copy(update={"interface": interface})
    plan = make_plan(workload, Machine(cores=1, somaxconn=4096))
    # shared-socket only fires with 2+ processes of 2+ threads: a subset, not always equal.
    assert _check(plan, stack, tmp_path_factory.mktemp("gen")) == _expected(plan, stack)
