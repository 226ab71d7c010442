"""The plan's ASGI capacity against the saturation `bench app` measures, per servertune row.

The plan says what one machine's loops serve (`asgi_capacity_rps` for uvicorn and gunicorn's
ASGI workers, `granian_capacity_rps` for granian), and admission is derived from it: HAProxy's
`maxconn` and nginx's `limit_conn` let in what the loops serve for as long as a request is held.
A capacity far above what the layout serves admits requests that then queue in the servers; far
below, it sheds what they would have answered. So each servertune row's measured saturation (its
highest median req/s over the closed levels) is set against its server's planned capacity, and
the tool judges the ratio itself (`CAPACITY_TOLERANCE`).

The saturation a plan is judged against is the same server's WITHOUT servertune's admission: the
copied layouts of that server in the same run with at least the plan's processes
(`without_admission`), the best of them, and of those the ones that saturated first
(`references`: a layout bound by something else, such as uvicorn's `--workers` held by the
client's delayed ACK, gives only a floor). Behind
its own admission a row stops at the plan (nginx sheds past it, HAProxy queues), so its own
saturation would confirm any capacity, too low included. Only where the run has no copied layout
of that server is a row judged against itself, and the target says so.

A row has saturated when its highest level shed (503: admission was full), when its req/s grew
by less than `SATURATION_GROWTH` from the level below while the connections at least doubled, or
when its connections outnumber what its req/s keeps in flight at its unloaded latency by
`QUEUED_SHARE` (Little's law: the rest were queued, waiting for a loop); otherwise its best
req/s is a floor of what it serves, and the target is not judged. A shed at the highest level
does not make a lower best level its saturation when that level still kept its connections in
flight: the closed loop bounded it there (connections / latency), and past the admission limit
nginx's quick 503s send wrk's connections straight back, so the answered req/s there measures
that churn; the saturation lies between the two levels, unmeasured.

The capacity judged is what that server costs, not what it answered beside the load
generator: the app servers' and the front's CPU per answered request at the saturated level,
over the plan's cores (`Saturation.machine_rps`). The plan's machine runs neither the load
generator nor other work, and on a 2-core test machine those take a third of the cores or
more, so a raw saturation would fault every plan by that share (2.28 x on FastAPI `/io`,
2026-11-29, where the CPU per request gave 1.20 x). Where the CPU was not measured, the raw
saturation is judged and the target says so. The raw req/s stays in the target's text.

The note beside each ratio splits the CPU per answered request at that level (the app's
servers, the proxy, the load generator) and the cores other work took meanwhile: on a shared
machine the load generator, an upstream stand-in and other processes take cores the plan gives
the app's loops, and the note says how much, instead of folding it into the plan.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from servertune.bench.harness.report import Target
from servertune.bench.scenarios.app.load import CPU_KEYS

#: The plan's capacity should be within this share of the saturation measured: a plan further
#: off admits the wrong number of requests.
CAPACITY_TOLERANCE = 0.20
#: A row whose req/s grew by less than this factor from one closed level to the next, while
#: the connections at least doubled, has saturated: more connections only queue.
SATURATION_GROWTH = 1.25
#: ...or whose req/s x its unloaded p50 (the requests in flight if none waited) is under this
#: share of the connections: a fifth of them or more were waiting for a loop, not served.
QUEUED_SHARE = 0.8


def planned_rps(plan: Any, server: str) -> float:
    """The plan's capacity for `server`: granian's own, else uvicorn's (also gunicorn's ASGI
    workers', which parse HTTP in Python as uvicorn does)."""
    if server == "granian" and plan.granian_capacity_rps:
        return float(plan.granian_capacity_rps)
    return float(plan.asgi_capacity_rps or 0.0)


@dataclass(frozen=True)
class Saturation:
    """One servertune row's best closed-level req/s, where, and whether it had saturated."""

    config: str
    server: str
    planned_rps: float
    measured_rps: float
    concurrency: int
    #: Why the row counts as saturated, or None (its best req/s is then only a floor).
    saturated: str | None
    #: The closed-level row (medians) the best req/s comes from.
    row: dict[str, Any]
    #: Why the best req/s is only a floor, where the levels say more than "still growing".
    floor: str | None = None
    #: The copied layout of the same server (no admission) whose saturation this is; None:
    #: the row's own, behind servertune's admission.
    against: str | None = None
    #: The cores the plan's processes use (a loop uses one at most, so the fewer of the
    #: machine's cores and the processes); 0: unknown (the ratio is then the raw saturation's).
    cores: int = 0

    @property
    def served_ms(self) -> float | None:
        """The app servers' and the front's CPU per answered request at the row's best level
        (the 503s cost the app nothing), None where it was not measured."""
        app, proxy = self.row.get(CPU_KEYS[0]), self.row.get(CPU_KEYS[1])
        if app is None or proxy is None:
            return None
        total = (float(app) + float(proxy)) * _per_answered(self.row)
        return total if total > 0 else None

    @property
    def machine_rps(self) -> float | None:
        """What the row's servers and front serve on the plan's cores at the CPU per request
        they paid at saturation: the plan's machine runs no load generator and no other work,
        which on a shared test machine take cores the plan gives the app. None: not measured."""
        ms = self.served_ms
        return self.cores * 1000 / ms if ms is not None and self.cores > 0 else None

    @property
    def judged_rps(self) -> float:
        """The capacity the plan is set against: `machine_rps` where the CPU was measured, else
        the raw saturation."""
        machine = self.machine_rps
        return machine if machine is not None else self.measured_rps

    @property
    def ratio(self) -> float | None:
        """The plan's capacity over the capacity measured, None where nothing was served."""
        judged = self.judged_rps
        return self.planned_rps / judged if judged > 0 else None


def saturation(
    config: str,
    server: str,
    planned: float,
    closed: list[dict[str, Any]],
    unloaded_p50_ms: float | None = None,
    cores: int = 0,
) -> Saturation:
    """`config`'s best closed-level row, and whether its highest level shows saturation."""
    levels = sorted(closed, key=lambda r: int(r["concurrency"]))
    best = max(levels, key=lambda r: float(r["rps"]))
    top = levels[-1]
    why = None
    if int(top.get("refused_503") or 0) > 0 and not _bound_by_connections(best, unloaded_p50_ms):
        why = f"shed {top['refused_503']} (503) at c={top['concurrency']}: admission was full"
    elif int(top.get("refused_503") or 0) > 0:
        return Saturation(
            config, server, planned, float(best["rps"]), int(best["concurrency"]), None, best,
            floor=f"c={best['concurrency']} kept its connections in flight and c="
            f"{top['concurrency']} shed past the admission limit: the saturation lies between",
            cores=cores,
        )  # fmt: skip
    if why is None and len(levels) > 1:
        below = levels[-2]
        grew = float(top["rps"]) / float(below["rps"]) if float(below["rps"]) > 0 else None
        doubled = int(top["concurrency"]) >= 2 * int(below["concurrency"])
        if grew is not None and doubled and grew < SATURATION_GROWTH:
            why = (
                f"req/s {grew:.2f} x from c={below['concurrency']} to c={top['concurrency']}: "
                "more connections only queued"
            )
    if why is None and unloaded_p50_ms:
        held = float(top["rps"]) * unloaded_p50_ms / 1000
        if held < QUEUED_SHARE * int(top["concurrency"]):
            why = (
                f"at c={top['concurrency']} {float(top['rps']):.0f} req/s x the unloaded p50 "
                f"{unloaded_p50_ms:g} ms = {held:.0f} in flight: the other connections waited"
            )
    return Saturation(
        config, server, planned, float(best["rps"]), int(best["concurrency"]), why, best,
        cores=cores,
    )  # fmt: skip


def without_admission(ours: Saturation, copied: list[Saturation]) -> Saturation:
    """`ours` judged against the best of `copied` (the same server's copied layouts, with no
    admission, from the same run): their saturation, and whether it was one; `ours` itself
    when the run has none."""
    if not copied:
        return ours
    best = max(copied, key=lambda c: c.measured_rps)
    return replace(
        ours,
        measured_rps=best.measured_rps,
        concurrency=best.concurrency,
        saturated=best.saturated,
        row=best.row,
        floor=best.floor,
        against=best.config,
    )


def references(many: list[Saturation], few: list[Saturation]) -> list[Saturation]:
    """The copied layouts of a server a row is judged against (`without_admission` takes the
    best): those with at least the plan's processes (`many`) that saturated; else those with
    fewer (`few`, their CPU measured) that saturated, whose CPU per answered request is the
    server's cost with nothing in front, unless a floor of `many` is already above what they
    give; else `many`, then `few`, as floors. A layout bound by something other than its
    cores (uvicorn's `--workers`, each answer held 40 ms by the client's delayed ACK, 179
    req/s at 8 connections on a 3 ms route) never saturates, and its floor says nothing of
    the plan."""
    saturated = [s for s in many if s.saturated is not None]
    if saturated:
        return saturated
    alone = [s for s in few if s.saturated is not None]
    if alone and max(a.judged_rps for a in alone) >= max((m.judged_rps for m in many), default=0.0):
        return alone
    return many or few


def _bound_by_connections(row: dict[str, Any], unloaded_p50_ms: float | None) -> bool:
    """Whether a level kept at least QUEUED_SHARE of its connections in flight at the unloaded
    latency (its req/s was then the closed loop's, not the servers'); False when the unloaded
    latency is unknown or the level is past the closed loop's bound."""
    if not unloaded_p50_ms:
        return False
    if int(row.get("refused_503") or 0) > 0:
        return False
    held = float(row["rps"]) * unloaded_p50_ms / 1000
    return held >= QUEUED_SHARE * int(row["concurrency"])


def _per_answered(row: dict[str, Any]) -> float:
    """Requests sent per request answered: a row's CPU per request counted over the answered
    ones (the 503s cost the app nothing)."""
    sent = int(row.get("requests") or 0)
    answered = sent - int(row.get("refused_503") or 0)
    return sent / answered if answered > 0 else 1.0


def cpu_said(sat: Saturation, cores: int, tool: str, front: str) -> str:
    """The CPU per answered request at the row's best level, each part's, the cores other work
    took, and the req/s those figures give: what the cores really went to."""
    from servertune.bench.harness.stats import median

    row = sat.row
    app, proxy, load = (row.get(k) for k in CPU_KEYS[:3])
    if app is None or proxy is None or load is None:
        return "CPU per request not measured"
    per = _per_answered(row)
    app, proxy, load = app * per, proxy * per, load * per
    others = [float(r["other_cpu_cores"]) for r in row.get("repeats", [])
              if r.get("other_cpu_cores") is not None]  # fmt: skip
    other = median(others) if others else 0.0
    total = app + proxy + load
    fits = 1000 * max(cores - other, 0.0) / total if total > 0 else 0.0
    alone = 1000 * cores / (app + proxy) if app + proxy > 0 else 0.0
    return (
        f"per answered request: app servers {app:.3f} ms, {front} {proxy:.3f} ms, {tool} "
        f"{load:.3f} ms of CPU; other work took {other:.2f} of the {cores} cores; "
        f"({cores} - {other:.2f}) cores / {total:.3f} ms = {fits:.0f} req/s; the servers and "
        f"{front} alone on the {cores} cores (the plan's machine: no load generator, no other "
        f"work) would serve {cores} / {app + proxy:.3f} ms = {alone:.0f} req/s"
    )


def saturation_note(sat: Saturation, cores: int, tool: str, front: str) -> str:
    """One line: the plan's capacity, the measured saturation, their ratio, and the CPU split."""
    ratio = f"{sat.ratio:.2f} x" if sat.ratio is not None else "-"
    state = (
        f"saturated: {sat.saturated}"
        if sat.saturated
        else "not saturated: a floor" + (f" ({sat.floor})" if sat.floor else "")
    )
    machine = sat.machine_rps
    against = (
        f"{sat.measured_rps:.0f} measured"
        if machine is None
        else f"{machine:.0f} on the plan's {sat.cores} cores ({sat.measured_rps:.0f} answered "
        "beside the load generator)"
    )
    return (
        f"capacity {sat.config}: the plan's {sat.planned_rps:.0f} req/s ({sat.server}'s) against "
        f"{against} at c={sat.concurrency} {_whose(sat)} ({state}) = "
        f"{ratio}; " + cpu_said(sat, cores, tool, front)
    )


def _whose(sat: Saturation) -> str:
    """Whose saturation the plan is set against."""
    if sat.against is not None:
        return f"by {sat.against} (the same server without servertune's admission)"
    return (
        f"by {sat.config} itself (no copied layout of {sat.server} with as many processes in "
        "this run: behind its own admission, which stops at the plan)"
    )


def saturation_target(sat: Saturation) -> Target:
    """The +-CAPACITY_TOLERANCE target on |plan / measured - 1|; not judged (None) where the
    row had not saturated or served nothing."""
    judged = sat.saturated is not None and sat.ratio is not None
    ms, machine = sat.served_ms, sat.machine_rps
    measured = (
        f"the saturation measured ({sat.measured_rps:.0f} req/s at c={sat.concurrency} "
        f"{_whose(sat)})"
        if machine is None or ms is None
        else f"the capacity measured on the plan's {sat.cores} cores ({sat.cores} x 1000 / "
        f"{ms:.3f} ms of app-server and front CPU per answered request = {machine:.0f} req/s, "
        f"at c={sat.concurrency} {_whose(sat)}, which answered {sat.measured_rps:.0f} req/s "
        "beside the load generator)"
    )
    name = (
        f"{sat.config}: the plan's capacity ({sat.server}'s, {sat.planned_rps:.0f} req/s) / "
        f"{measured} = "
        + (f"{sat.ratio:.2f}" if sat.ratio is not None else "-")
        + ", |ratio - 1|"
        + (
            ""
            if judged
            else f": not saturated ({sat.floor}), so only a floor"
            if sat.floor
            else ": not saturated at the highest level, so only a floor"
        )
    )
    value = round(abs(sat.ratio - 1), 3) if judged and sat.ratio is not None else None
    return Target(name, value, "<=", CAPACITY_TOLERANCE)
