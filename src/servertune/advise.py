"""`servertune advise`: which execution model fits a workload, and why, in its own numbers.

Three candidates, judged from the workload (measured by `servertune measure` or given) and,
when supplied, a `servertune bench parallel --json` report from the same machine:

* processes x threads: one process per core, 1/cpu_fraction threads each (bench `balance`), plus
  headroom for slow calls (Little's law); the default, because it fits every workload whose
  in-flight requests per process stay within MAX_THREADS_PER_PROCESS (per core a process
  computes on: one under the GIL).
* asyncio: one thread interleaves waits, but a request that computes holds the loop and every
  other request waits behind it (bench `parallel`: asyncio/loop ~1 for fib); it fits requests that
  mostly wait, and is the answer when so many are in flight that threads would not scale.
* sub-interpreters (3.12+): a GIL per interpreter, started in milliseconds inside a process
  (bench `parallel`: fib on every core, without a process's start-up). Processes already give each
  core a GIL for serving, so they pay off only to split one request's heavy CPU work.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from servertune.inputfile import InputFileError, read_text
from servertune.sizing import Plan, make_plan, plan_for
from servertune.sizing.queueing import arrival_rate, held_s, in_flight
from servertune.sizing.rules.threads import thread_cap
from servertune.workload import Workload
from servertune.workload_file import Measured, MeasuredPath

__all__ = [
    "ASYNC_MAX_CPU_FRACTION",
    "SUBINTERPRETER_MIN_CPU_MS",
    "Advice",
    "Fit",
    "advise",
    "read_parallel",
]

# --- Tuned defaults, each with its justification -------------------------------------------------

#: asyncio fits when requests hold the GIL at most this share of their time: below it a process
#: needs 5+ threads to fill its core (1/cpu_fraction, bench `balance`), where one event loop saves the
#: threads' stacks and switches; above it the few threads cost nothing and asyncio only adds a
#: loop that each request's computation blocks.
ASYNC_MAX_CPU_FRACTION = 0.2
#: asyncio is also recommended for such an app when its loops serve this many times the CPU
#: ceiling of the threaded layout: a WSGI server's own work per request (its accept, parsing and
#: close in Python: WSGI_SERVER_MS_PER_REQUEST) can cost more than a mostly-waiting app's, where
#: uvicorn's is ASGI_SERVER_MS_PER_REQUEST. Below it the two are within this machine's run-to-run
#: noise.
ASYNC_CAPACITY_LEAD = 1.2
#: Sub-interpreters pay off when one request computes at least this long: bench parallel on a
#: 2-core box started ten of them in 25-50 ms under 3.12 and 3.13 (first_start_s), so the work
#: split across them must be several times that to gain.
SUBINTERPRETER_MIN_CPU_MS = 250.0
#: First Python whose sub-interpreters each have their own GIL (PEP 684).
SUBINTERPRETER_PYTHON = (3, 12)

#: "unknown": the deciding number is not known (cpu_fraction assumed, not measured).
Verdict = Literal["recommended", "fits", "poor", "unknown"]


@dataclass(frozen=True)
class Fit:
    """One execution model, how well it fits, and the reasons with the numbers behind them."""

    model: str
    verdict: Verdict
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Advice:
    """The verdict per model, and the measurements they cite."""

    fits: tuple[Fit, ...]
    evidence: tuple[str, ...] = ()
    hints: tuple[str, ...] = field(default=())

    @property
    def recommended(self) -> Fit:
        """The model to use."""
        return next(f for f in self.fits if f.verdict == "recommended")

    def to_json(self) -> dict[str, Any]:
        """The advice for machines."""
        return {
            "recommended": self.recommended.model,
            "models": [
                {"model": f.model, "verdict": f.verdict, "reasons": list(f.reasons)}
                for f in self.fits
            ],
            "evidence": list(self.evidence),
        }

    def format(self) -> str:
        """What a person reads: the recommendation first, then every model with its reasons."""
        lines = [f"recommended: {self.recommended.model}", ""]
        for fit in self.fits:
            lines.append(f"{fit.model}: {fit.verdict}")
            lines.extend(f"  - {reason}" for reason in fit.reasons)
        if self.evidence:
            lines += ["", "measured:"]
            lines.extend(f"  - {item}" for item in self.evidence)
        lines.extend(f"hint: {hint}" for hint in self.hints)
        return "\n".join(lines)


#: Largest `bench parallel --json` report read: a real one is a few KiB.
MAX_REPORT_BYTES = 1024 * 1024


def read_parallel(path: Path) -> dict[str, Any]:
    """A `servertune bench parallel --json` report; ValueError naming the file if it is not one."""
    try:
        text = read_text(path, max_bytes=MAX_REPORT_BYTES, what="bench report")
    except InputFileError as error:
        raise ValueError(str(error)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON: {error}") from None
    except RecursionError:  # the json module recurses per nested array or object
        raise ValueError(f"{path} nests too deeply to be a bench report") from None
    if not isinstance(data, dict) or data.get("scenario") != "parallel":
        raise ValueError(f"{path} is not a `servertune bench parallel --json` report")
    problem = _report_problem(data)
    if problem is not None:
        raise ValueError(f"{path} is not a `servertune bench parallel --json` report: {problem}")
    return data


def _report_problem(data: Mapping[str, Any]) -> str | None:
    """What keeps a report's figures from being cited (a hand-edited one printed
    "Python ?" and "took -1.00 x the serial time"), or None."""
    machine = data.get("machine")
    version = machine.get("measured_python") if isinstance(machine, dict) else None
    if not isinstance(version, str) or not re.fullmatch(r"3\.\d{1,2}(\.\d{1,3})?\w*", version):
        return f"machine.measured_python is {version!r}, not a Python version such as '3.13.0'"
    ratios = data.get("ratios")
    if not isinstance(ratios, dict) or not ratios:
        return "it has no `ratios` table"
    for key, value in ratios.items():
        if not isinstance(value, int | float) or isinstance(value, bool):
            return f"ratios[{str(key)[:40]!r}] is {str(value)[:40]!r}, not a number"
        if not math.isfinite(value) or value <= 0:
            return f"ratios[{str(key)[:40]!r}] = {value}: a time ratio is a positive number"
    runs = data.get("runs", [])
    if not isinstance(runs, list) or not all(isinstance(run, dict) for run in runs):
        return "`runs` is not a list of runs"
    for run in runs:
        start = run.get("first_start_s")
        if start is not None and (
            not isinstance(start, int | float) or not math.isfinite(start) or start < 0
        ):
            return f"a run's first_start_s is {str(start)[:40]!r}, not a time in seconds"
    return None


def _python_of(parallel: Mapping[str, Any] | None) -> tuple[int, int]:
    version = None
    if parallel is not None:
        version = parallel.get("machine", {}).get("measured_python")
    if isinstance(version, str):
        major, minor = version.split(".")[:2]
        return int(major), int(minor)
    return sys.version_info[0], sys.version_info[1]


def _ratio(parallel: Mapping[str, Any] | None, key: str) -> float | None:
    if parallel is None:
        return None
    value = parallel.get("ratios", {}).get(key)
    return float(value) if isinstance(value, int | float) else None


def _subinterpreter_start_ms(parallel: Mapping[str, Any] | None) -> float | None:
    if parallel is None:
        return None
    for run in parallel.get("runs", []):
        if run.get("config") == "subinterpreters" and run.get("task") == "fib":
            start = run.get("first_start_s")
            return None if start is None else float(start) * 1000
    return None


def advise(
    workload: Workload,
    *,
    measured: Measured | Mapping[str, Any] | None = None,
    parallel: Mapping[str, Any] | None = None,
    plan: Plan | None = None,
) -> Advice:
    """Judge processes x threads, asyncio and sub-interpreters for `workload`.

    `measured` is a workload file's `[measured]` table (a mapping is validated as one).
    """
    if measured is not None and not isinstance(measured, Measured):
        measured = Measured.model_validate(dict(measured))
    facts = _Facts.of(plan or plan_for(workload), parallel)
    c = facts.plan.workload.cpu_fraction
    asyncio_first = (
        (facts.too_many or facts.loops_lead)
        and c <= ASYNC_MAX_CPU_FRACTION
        and not facts.cpu_assumed
    )
    aio_verdict: Verdict = (
        "unknown"
        if facts.cpu_assumed
        else "recommended"
        if asyncio_first
        else "fits"
        if c <= ASYNC_MAX_CPU_FRACTION
        else "poor"
    )
    hints: tuple[str, ...] = ()
    if facts.cpu_assumed:
        hints += (
            (
                "cpu_fraction decides between threads and asyncio and was not given (an access "
                "log holds no CPU time): `servertune measure APP --out workload.toml` measures it"
            ),
        )
    if parallel is None:
        hints += (
            (
                "run `servertune bench parallel --json parallel.json` on the serving machine and "
                "pass `--parallel parallel.json` to cite its measured ratios"
            ),
        )
    return Advice(
        fits=(
            Fit(
                "processes x threads",
                "fits" if asyncio_first else "recommended",
                tuple(_processes_threads(facts)),
            ),
            Fit("asyncio", aio_verdict, tuple(_asyncio(facts))),
            _subinterpreters(facts),
        ),
        evidence=tuple(_evidence(facts.plan.workload, measured, parallel)),
        hints=hints,
    )


@dataclass(frozen=True)
class _Facts:
    """The numbers every candidate's judgement reads, derived once from the plan."""

    plan: Plan
    parallel: Mapping[str, Any] | None
    rate: float
    rate_src: str
    inflight: float
    saturating: float
    cap: int
    #: cpu_fraction is the model's default, given by no flag or file (a log-derived workload).
    cpu_assumed: bool
    #: The same app's ASGI plan: what its event loops would serve.
    asgi: Plan

    @classmethod
    def of(cls, plan: Plan, parallel: Mapping[str, Any] | None) -> _Facts:
        w = plan.workload
        rate, rate_src = arrival_rate(w, plan.ceiling_rps)
        return cls(
            plan=plan,
            parallel=parallel,
            rate=rate,
            rate_src=rate_src,
            inflight=in_flight(rate / plan.processes, held_s(w)),
            saturating=plan.cores_per_process / w.cpu_fraction,
            cap=thread_cap(plan.cores_per_process),
            cpu_assumed=not ({"cpu_fraction", "cpu_ms"} & w.model_fields_set),
            asgi=plan
            if w.interface == "asgi"
            else make_plan(w.model_copy(update={"interface": "asgi"}), plan.machine),
        )

    @property
    def too_many(self) -> bool:
        """More requests in flight per process than threads may serve."""
        return self.inflight > self.cap

    @property
    def loops_lead(self) -> bool:
        """The app's ASGI loops serve clearly more than its threads' CPU ceiling."""
        served = self.asgi.asgi_capacity_rps
        return served is not None and served >= ASYNC_CAPACITY_LEAD * self.plan.ceiling_rps

    @property
    def cpu_ms(self) -> float:
        return self.plan.workload.cpu_ms_per_request


def _processes_threads(f: _Facts) -> list[str]:
    """Processes x threads: fill each core's GIL with threads, size for slow calls."""
    plan, c = f.plan, f.plan.workload.cpu_fraction
    assumed = " (assumed: not measured)" if f.cpu_assumed else ""
    if plan.workload.gil == "enabled":
        fills = (
            f"cpu_fraction {c:g}{assumed}: a process fills its core at 1/{c:g} = {f.saturating:.1f} threads "
            f"(servertune bench balance); one process per core, as the GIL allows one core per process"
        )
    else:
        fills = (
            f"cpu_fraction {c:g}, gil = 'disabled': a process's threads share its "
            f"{plan.cores_per_process:g} cores, filled at {plan.cores_per_process:g}/{c:g} = "
            f"{f.saturating:.1f} threads (derived, not measured here)"
        )
    held_ms = held_s(plan.workload) * 1000
    pt = [
        fills,
        (
            f"plan: {plan.processes} processes x {plan.threads} threads "
            f"({plan.cpu_threads} to fill the core + {plan.slow_call_threads} for slow calls)"
        ),
        (
            f"in flight per process at {f.rate:.0f} req/s ({f.rate_src}): {f.inflight:.1f} "
            f"(rate x {held_ms:g} ms held / {plan.processes} processes, Little's law)"
        ),
    ]
    if f.too_many:
        waits = "slow calls" if plan.workload.slow_call_ratio > 0 else "waits outside the GIL"
        pt.append(
            f"{f.inflight:.0f} in flight per process exceeds the {f.cap}-thread "
            f"cap: threads parked on {waits} would make quick requests queue"
        )
    elif f.loops_lead and plan.workload.cpu_fraction <= ASYNC_MAX_CPU_FRACTION:
        assert f.asgi.asgi_capacity_rps is not None
        pt.append(
            f"as ASGI the same processes serve {f.asgi.asgi_capacity_rps:.0f} req/s, "
            f"{f.asgi.asgi_capacity_rps / plan.ceiling_rps:.2g} x the CPU ceiling of "
            f"{plan.ceiling_rps:.0f} req/s here (the WSGI server's own work per request included)"
        )
    return pt


def _asyncio(f: _Facts) -> list[str]:
    """asyncio: one loop interleaves waits; a request that computes holds it."""
    c = f.plan.workload.cpu_fraction
    aio: list[str] = []
    if f.cpu_assumed:
        aio.append(
            f"cpu_fraction {c:g} is assumed, not measured: asyncio fits when requests mostly "
            f"wait (cpu_fraction <= {ASYNC_MAX_CPU_FRACTION}) and is poor when they compute; "
            "only a measurement of the app says which"
        )
    elif c <= ASYNC_MAX_CPU_FRACTION:
        aio.append(
            f"requests mostly wait (cpu_fraction {c:g} <= {ASYNC_MAX_CPU_FRACTION}): one event "
            f"loop per process interleaves them without {f.saturating:.0f}+ threads"
        )
        wait_async = _ratio(f.parallel, "fetch: asyncio / loop")
        if wait_async is not None:
            aio.append(f"bench parallel: 10 fetches took {wait_async:.2f} x the serial time")
        aio.append(
            "every wait must be awaitable (an async HTTP/DB client); a blocking call stalls "
            "every request of the process"
        )
    else:
        aio.append(
            f"each request computes {f.cpu_ms:.1f} ms without yielding (cpu_fraction {c:g} > "
            f"{ASYNC_MAX_CPU_FRACTION}); requests in the same loop wait behind it"
        )
        fib_async = _ratio(f.parallel, "fib: asyncio / loop")
        if fib_async is not None:
            aio.append(
                f"bench parallel: 10 CPU tasks under asyncio took {fib_async:.2f} x the serial time"
            )
    aio.extend(_asgi_numbers(f.plan, f.asgi, f.too_many or f.loops_lead))
    return aio


def _subinterpreters(f: _Facts) -> Fit:
    """Sub-interpreters: a GIL each, worth it only to split one request's heavy CPU work."""
    version = _python_of(f.parallel)
    sub: list[str] = []
    verdict: Verdict = "poor"
    if version < SUBINTERPRETER_PYTHON:
        sub.append(
            f"Python {version[0]}.{version[1]} has no sub-interpreters with their own GIL (3.12+: "
            "_xxsubinterpreters, 3.13 _interpreters, 3.14 concurrent.interpreters)"
        )
    elif f.cpu_ms >= SUBINTERPRETER_MIN_CPU_MS:
        verdict = "fits"
        sub.append(
            f"a request computes {f.cpu_ms:.0f} ms (>= {SUBINTERPRETER_MIN_CPU_MS:g} ms): split "
            f"that work over sub-interpreters in threads to use {f.plan.processes} cores within "
            "one request"
        )
    else:
        sub.append(
            f"a request computes only {f.cpu_ms:.1f} ms (< {SUBINTERPRETER_MIN_CPU_MS:g} ms): "
            "starting interpreters costs more than splitting the work saves, and serving "
            "already runs one process, one GIL, per core"
        )
    if version >= SUBINTERPRETER_PYTHON:
        start_ms = _subinterpreter_start_ms(f.parallel)
        if start_ms is not None:
            sub.append(
                f"bench parallel: the first of 10 sub-interpreters started after {start_ms:.0f} ms"
            )
        fib_sub = _ratio(f.parallel, "fib: subinterpreters / loop")
        if fib_sub is not None:
            fib_proc = _ratio(f.parallel, "fib: processes / loop")
            vs = "" if fib_proc is None else f" (processes {fib_proc:.2f})"
            sub.append(f"bench parallel: 10 CPU tasks took {fib_sub:.2f} x the serial time{vs}")
        sub.append(
            "only pure Python and extension modules built for them load inside: no mainstream "
            "WSGI server runs its workers as sub-interpreters"
        )
    return Fit("sub-interpreters", verdict, tuple(sub))


def _ms(value: float) -> str:
    """Milliseconds to one decimal, or two significant digits below 0.1 ms."""
    return f"{value:.1f}" if value >= 0.1 else f"{value:.2g}"


def _asgi_numbers(plan: Plan, asgi: Plan, recommended: bool) -> list[str]:
    """What an ASGI server would do with this app (its own plan), and when threads stop sufficing."""
    w = plan.workload
    assert asgi.loop_ms is not None
    assert asgi.asgi_capacity_rps is not None
    # Threads run out when the requests in flight per process pass the per-process cap.
    cap = thread_cap(plan.cores_per_process)
    threads_up_to = cap * plan.processes / held_s(w)
    if threads_up_to <= plan.ceiling_rps:
        threads = f"threads serve up to {threads_up_to:.0f} req/s before {cap} per process run out"
    else:
        # The thread cap is not what binds: the cores are. Quote the ceiling that binds first.
        threads = (
            f"threads serve up to the CPU ceiling of {plan.ceiling_rps:.0f} req/s (the "
            f"{cap}-thread cap per process would allow {threads_up_to:.0f})"
        )
    reasons = [
        (
            f"as ASGI: each request holds its process's loop {_ms(asgi.loop_ms)} ms, so "
            f"{asgi.processes} loops serve {asgi.asgi_capacity_rps:.0f} req/s and nginx admits "
            f"{asgi.admission_limit} at once (Little's law); {threads}"
        ),
    ]
    if recommended:
        reasons.append(
            "serve it with `servertune gen uvicorn-per-worker --interface asgi` and "
            "`gen nginx-asgi-per-worker` (bench asgi: per-worker loops behind least_conn, "
            "overload answered with 503)"
        )
    return reasons


def _evidence(
    w: Workload, measured: Measured | None, parallel: Mapping[str, Any] | None
) -> list[str]:
    cites: list[str] = []
    if measured is not None:
        method = measured.method
        if measured.path is not None:
            cites.extend(_cite(measured, f"{method} {measured.path}"))
        else:
            total = sum(one.weight for one in measured.paths)
            for one in measured.paths:
                share = f"{one.weight / total:.0%} of traffic" if total else ""
                cites.extend(_cite(one, f"{method} {one.path} ({share})"))
            cites.extend(_cite(measured, f"the weighted mix of {len(measured.paths)} paths"))
    if parallel is not None:
        python = parallel.get("machine", {}).get("measured_python", "?")
        ratios = parallel.get("ratios", {})
        shown = ", ".join(f"{k} {v:.2f}" for k, v in ratios.items() if isinstance(v, int | float))
        cites.append(f"bench parallel, Python {python}: {shown}")
    return cites


def _cite(figures: Measured | MeasuredPath, what: str) -> list[str]:
    """The measured spread of one path (or of the mix), and a hint when it is wide."""
    service, fraction = figures.service_time_ms, figures.cpu_fraction
    cites = [
        (
            f"{figures.requests} requests of {what}: service time p50 {service.p50:.1f} ms "
            f"(p10-p90 {service.p10:.1f}-{service.p90:.1f}), cpu_fraction per request p10-p90 "
            f"{fraction.p10:.3f}-{fraction.p90:.3f}"
        )
    ]
    # A mix of paths spreads wide by construction: the hint is about one path's own spread.
    mixed = isinstance(figures, Measured) and figures.path is None
    if service.p10 > 0 and service.p90 / service.p10 > 2 and not mixed:
        cites.append(
            f"service time varies {service.p90 / service.p10:.1f}x from p10 to p90: if the "
            "slow ones wait on a remote call, describe them with slow_call_ratio / slow_call_ms"
        )
    return cites
