"""Running the measurement: warm up, then time requests one at a time, within a time budget."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from servertune.machine import free_threaded_build, read_gil_enabled
from servertune.measure.asgi import AsgiCaller, LoopTimer, asgi_caller
from servertune.measure.clocks import Clock, rss_kb
from servertune.measure.errors import AppFailed, MeasureError, describe_exception
from servertune.measure.loading import Interface, detect_interface, load_app
from servertune.measure.one_core import on_one_core
from servertune.measure.result import Measurement, Mix, Sample
from servertune.measure.sweep import Sweep, sweep
from servertune.measure.target import (
    Request,
    WeightedPath,
    check_method,
    check_paths,
    split_target,
)
from servertune.measure.wsgi import call_wsgi

__all__ = [
    "DEFAULT_MAX_SECONDS",
    "DEFAULT_REQUESTS",
    "DEFAULT_WARMUP",
    "measure_app",
    "measure_mix",
]

#: Requests measured by default: enough for a stable median and a p10-p90 band (the spread of
#: the 10 ms sleep + 10 ms CPU test app over 50 requests is under 2% of its median), few enough
#: that a 100 ms app finishes in about 5 s.
DEFAULT_REQUESTS = 50
#: Requests run first and discarded: the first requests import lazily, fill caches and compile
#: templates, none of which a warm worker pays again.
DEFAULT_WARMUP = 3
#: Stop measuring after this long, whatever `requests` says: a slow app never hangs the command.
#: A mix of paths shares it, each path getting an equal slice.
DEFAULT_MAX_SECONDS = 60.0
#: The shortest and longest --max-seconds: below a tenth of a second not one request of a slow
#: app is measured; above a day is no budget at all (and past what `signal.setitimer` takes:
#: `inf` raised OverflowError there).
MIN_MAX_SECONDS = 0.1
MAX_MAX_SECONDS = 86_400.0
#: A request still running when its path's time is up may finish within this many times the
#: slice (at least 1 s more); then it is interrupted, so an app that never answers cannot hang
#: the command. Twice the slice lets the slowest request a slice allows still count.
HARD_LIMIT_FACTOR = 2.0


class _NoAnswer(BaseException):
    """Raised by the alarm inside a request that outlived the hard limit.

    A BaseException, so an app's `except Exception:` cannot swallow it.
    """


class _HardExit(BaseException):
    """Raised instead of ending the process when the app calls `os._exit` while measured."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@contextlib.contextmanager
def _no_hard_exit() -> Iterator[None]:
    """While measuring, `os._exit(n)` in this process raises `_HardExit` so it can be reported.

    A server's worker would die there; a measurement that ends with no word is worse than one
    line naming where. Forked children (multiprocessing) still exit for real.
    """
    real, pid = os._exit, os.getpid()

    def refuse(code: int) -> None:
        if os.getpid() != pid:
            real(code)
        raise _HardExit(code)

    os._exit = refuse  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit = real


def measure_app(
    app_spec: str,
    *,
    path: str = "/",
    method: str = "GET",
    requests: int = DEFAULT_REQUESTS,
    warmup: int = DEFAULT_WARMUP,
    headers: Sequence[tuple[str, str]] = (),
    body: bytes = b"",
    interface: Interface | None = None,
    app_dir: str | None = None,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    app: Callable[..., Any] | None = None,
    on_sample: Callable[[int], None] | None = None,
) -> Measurement:
    """Import `app_spec` (or use `app`), run `warmup` + `requests` requests, and measure each.

    MeasureError names the bad input; AppFailed says what the app raised and where.
    """
    mix = measure_mix(
        app_spec, [WeightedPath(path)], method=method, requests=requests, warmup=warmup,
        headers=headers, body=body, interface=interface, app_dir=app_dir,
        max_seconds=max_seconds, app=app, on_sample=on_sample,
    )  # fmt: skip
    return mix.first


def measure_mix(
    app_spec: str,
    paths: Sequence[WeightedPath],
    *,
    method: str = "GET",
    requests: int = DEFAULT_REQUESTS,
    warmup: int = DEFAULT_WARMUP,
    headers: Sequence[tuple[str, str]] = (),
    body: bytes = b"",
    interface: Interface | None = None,
    app_dir: str | None = None,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    app: Callable[..., Any] | None = None,
    on_sample: Callable[[int], None] | None = None,
    in_flight_sweep: bool = True,
) -> Mix:
    """Measure each of `paths` in turn (`warmup` + `requests` each) and weigh them into a Mix;
    an ASGI app's mix is then driven at 1, 2, 4, ... requests in flight (`sweep`)."""
    if requests < 1:
        raise MeasureError("requests", f"must be at least 1; got {requests}")
    if warmup < 0:
        raise MeasureError("warmup", f"must be 0 or more; got {warmup}")
    if isinstance(max_seconds, bool) or not MIN_MAX_SECONDS <= max_seconds <= MAX_MAX_SECONDS:
        raise MeasureError(
            "max_seconds",
            f"must be a number of seconds from {MIN_MAX_SECONDS:g} to {MAX_MAX_SECONDS:g}; "
            f"got {max_seconds!r}",
        )
    method = check_method(method)
    check_paths(list(paths))
    targets = [(one, *split_target(one.path)) for one in paths]
    func = app if app is not None else load_app(app_spec, app_dir)
    kind = interface or detect_interface(func)
    clock = Clock(whole_process=kind == "asgi")
    runqueue_known = clock.read()[2] is not None
    budget = max_seconds / len(targets)
    where = os.path.abspath(app_dir or os.getcwd())
    parts = []
    timer = LoopTimer() if kind == "asgi" else None
    with _no_hard_exit(), _caller(func, kind, timer) as call:
        for one, target, query in targets:
            req = Request(method, target, query, tuple(headers), body)
            rss: list[int | None] = []
            samples, early = _drive(
                _guarded(call, req, where), clock, requests, warmup, budget, on_sample,
                what=f"{method} {one.path}", timer=timer, rss=rss,
            )  # fmt: skip
            measurement = Measurement(
                app=app_spec,
                interface=kind,
                method=method,
                path=one.path,
                samples=tuple(samples),
                warmup=warmup,
                stopped_early=early,
                runqueue_known=runqueue_known,
                gil_enabled=read_gil_enabled(),
                free_threaded=free_threaded_build(),
                rss_warm_kb=rss[0] if rss else None,
                rss_end_kb=rss_kb(),
            )
            parts.append((measurement, one.weight))
        found = None
        if in_flight_sweep and isinstance(call, AsgiCaller):
            found = _sweep(call, [(Request(method, t, q, tuple(headers), body), one.weight)
                                  for one, t, q in targets])  # fmt: skip
    return Mix(tuple(parts), found)


#: The sweep cycles through the paths in this many slots, each path's share by its weight.
SWEEP_SLOTS = 20


def _sweep(call: AsgiCaller, weighted: list[tuple[Request, float]]) -> Sweep:
    """The mix at 1, 2, 4, ... in flight on the app's one loop: each path gets its share of
    the slots the requests cycle through (at least one)."""
    total = sum(weight for _, weight in weighted)
    cycle = [
        req for req, weight in weighted for _ in range(max(1, round(SWEEP_SLOTS * weight / total)))
    ]
    with on_one_core() as core:
        found = sweep(
            lambda in_flight, count, seconds: call.level(cycle, in_flight, count, seconds),
            time.monotonic,
        )
    return dataclasses.replace(found, core=core)


@contextlib.contextmanager
def _caller(
    func: Callable[..., Any], kind: Interface, timer: LoopTimer | None = None
) -> Iterator[Callable[[Request], int]]:
    """An ASGI app's AsgiCaller (it also drives requests at once), or a WSGI call."""
    if kind == "asgi":
        with asgi_caller(func, timer) as call:
            yield call
    else:
        yield lambda req: call_wsgi(func, req)


def _guarded(call: Callable[[Request], int], req: Request, app_dir: str) -> Callable[[], int]:
    def one() -> int:
        try:
            return call(req)
        except MeasureError:
            raise
        except (Exception, SystemExit, KeyboardInterrupt, _HardExit) as error:
            # The app's own bug: say what and where in one line; the traceback is the app's to
            # reproduce (the request is named), not ours to print. Exits and interrupts the app
            # raises itself are reported the same way: the user sees why measuring stopped.
            target = req.path + (f"?{req.query}" if req.query else "")
            what = _ending(error)
            verb = "called" if what else "raised"
            raise AppFailed(
                f"{req.method} {target}: the app {verb} "
                f"{describe_exception(error, app_dir, head=what)}"
            ) from None

    return one


def _ending(error: BaseException) -> str | None:
    """How an app that ends the process says so: `sys.exit(5)`, `os._exit(0)`; else None."""
    if isinstance(error, SystemExit):
        return f"sys.exit({error.code!r})"
    if isinstance(error, _HardExit):
        return f"os._exit({error.code!r})"
    return None


def _timed(call: Callable[[], int], clock: Clock, timer: LoopTimer | None = None) -> Sample:
    loop0 = timer.mark() if timer is not None else None
    thread0 = timer.loop_cpu() if timer is not None else None
    wall0, cpu0, wait0 = clock.read()
    status = call()
    wall1, cpu1, wait1 = clock.read()
    runqueue = 0.0 if wait0 is None or wait1 is None else max(0.0, wait1 - wait0)
    loop = None if timer is None or loop0 is None else timer.blocked_since(loop0)
    thread1 = timer.loop_cpu() if timer is not None else None
    return Sample(
        wall_s=wall1 - wall0, cpu_s=cpu1 - cpu0, runqueue_s=runqueue, status=status, loop_s=loop,
        loop_cpu_s=None if thread0 is None or thread1 is None else thread1 - thread0,
    )  # fmt: skip


def _drive(
    call: Callable[[], int],
    clock: Clock,
    requests: int,
    warmup: int,
    max_seconds: float,
    on_sample: Callable[[int], None] | None,
    what: str = "",
    timer: LoopTimer | None = None,
    rss: list[int | None] | None = None,
) -> tuple[list[Sample], bool]:
    deadline = time.monotonic() + max_seconds
    hard = max(max_seconds * HARD_LIMIT_FACTOR, max_seconds + 1.0)
    samples: list[Sample] = []
    try:
        with _alarm(hard):
            for _ in range(warmup):
                call()
            if rss is not None:
                # The warm size: what a worker holds once imports and caches are in.
                rss.append(rss_kb())
            for i in range(requests):
                samples.append(_timed(call, clock, timer))
                if on_sample is not None:
                    on_sample(i + 1)
                if time.monotonic() > deadline and i + 1 < requests:
                    return samples, True
    except _NoAnswer:
        if not samples:
            raise AppFailed(f"{what}: the app did not answer within {hard:g} s") from None
        return samples, True  # the interrupted request is not a sample
    return samples, False


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """Raise _NoAnswer in this thread after `seconds` (where signals allow: the main thread)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "setitimer"
    ):
        yield
        return

    def ring(signum: int, frame: object) -> None:
        raise _NoAnswer

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
