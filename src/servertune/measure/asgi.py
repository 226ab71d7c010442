"""Calling an ASGI app in process: one event loop for the whole run, lifespan around it."""

from __future__ import annotations

import contextlib
import inspect
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from servertune.measure.clocks import ThreadWaits, schedstat_run_s, schedstat_wait_s
from servertune.measure.errors import MeasureError
from servertune.measure.loading import detect_interface
from servertune.measure.sweep import DRAIN_SECONDS, LevelFailed
from servertune.measure.target import Request

if TYPE_CHECKING:  # asyncio costs ~35 ms to import; only ASGI measurement needs it
    import asyncio

__all__ = [
    "LIFESPAN_TIMEOUT_S",
    "AsgiCaller",
    "LoopTimer",
    "asgi_caller",
    "asgi_scope",
]

#: How long an ASGI app may take to answer lifespan startup before measuring gives up.
LIFESPAN_TIMEOUT_S = 10.0


def asgi_scope(req: Request, state: dict[str, Any]) -> dict[str, Any]:
    """The HTTP scope a server on 127.0.0.1:80 would pass for `req`."""
    headers = [(b"host", b"127.0.0.1")]
    headers += [(n.lower().encode("latin-1"), v.encode("latin-1")) for n, v in req.headers]
    if req.body:
        headers.append((b"content-length", str(len(req.body)).encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": req.method,
        "scheme": "http",
        "path": unquote(req.path),
        "raw_path": req.path.encode("latin-1", "replace"),
        "query_string": req.query.encode("latin-1", "replace"),
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
        "state": dict(state),
    }


async def call_asgi(app: Callable[..., Any], req: Request, state: dict[str, Any]) -> int:
    """Run one request through `app` and return its status code."""
    import asyncio

    sent_body = False
    done = asyncio.Event()
    status: list[int] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": req.body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: Mapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(int(message["status"]))
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            done.set()

    try:
        pending = app(asgi_scope(req, state), receive, send)
    except TypeError as error:
        if detect_interface(app) == "asgi":
            raise  # an ASGI app's own TypeError: the app's bug, reported as such
        raise MeasureError("interface", f"{_not_asgi(app)}: calling it raised {error}") from None
    if not inspect.isawaitable(pending):
        raise MeasureError("interface", f"{_not_asgi(app)}: it returned {type(pending).__name__}")
    await pending
    done.set()
    if not status:
        raise MeasureError("app", "the ASGI app returned without sending http.response.start")
    return status[0]


def _not_asgi(app: Callable[..., Any]) -> str:
    name = getattr(app, "__qualname__", type(app).__name__)
    return (
        f"{name} is not an ASGI app (not awaitable as app(scope, receive, send)); "
        "let the interface be detected, or call it as WSGI"
    )


class _Lifespan:
    """Run an ASGI app's lifespan protocol around the measurement, if the app speaks it."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app
        import asyncio

        self.state: dict[str, Any] = {}
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._answers: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": self.state}

        async def send(message: Mapping[str, Any]) -> None:
            await self._answers.put(dict(message))

        with contextlib.suppress(Exception):  # an app without lifespan support may raise
            await self.app(scope, self._queue.get, send)
        await self._answers.put({"type": "lifespan.unsupported"})

    async def startup(self) -> None:
        import asyncio

        self._task = asyncio.get_running_loop().create_task(self._run())
        await self._queue.put({"type": "lifespan.startup"})
        answer = await asyncio.wait_for(self._answers.get(), LIFESPAN_TIMEOUT_S)
        if answer["type"] == "lifespan.startup.failed":
            raise MeasureError("app", f"ASGI lifespan startup failed: {answer.get('message', '')}")
        if answer["type"] != "lifespan.startup.complete":
            self._task = None  # the app does not speak lifespan: nothing to shut down

    async def shutdown(self) -> None:
        if self._task is None:
            return
        import asyncio

        await self._queue.put({"type": "lifespan.shutdown"})
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._task, LIFESPAN_TIMEOUT_S)


#: A LoopTimer reading: callback seconds, process CPU seconds, the loop thread's run-queue
#: seconds, and the other threads' (`ThreadWaits.mark`).
LoopMark = tuple[float, float, float, tuple[dict[int, float], int]]


class LoopTimer:
    """Seconds the event loop spent running callbacks: the time a request blocks the loop.

    Every task step and callback runs through `asyncio.Handle._run`; timing it while the
    measurement runs splits a request's wall time into loop-blocking time (Python on the loop,
    or a sync call made without `await`) and awaiting time (the rest).

    A callback's wall time also holds the moments the loop's thread was runnable but another
    process had the core: on a busy machine that is most of it (a Django view measured 2.82 ms
    of loop a request for 0.77 ms of CPU while other work took 1.5 cores, and the plan admitted
    a third of what the same server served). It also holds the loop's waits for threads it
    starts to get a core: Django's ASGI handler starts two a request, and beside two niced busy
    loops their run-queue time was 4.7-6.1 ms a request while the loop's own was 0.2 ms (the
    callbacks' wall time, 4.1-6.2 ms). `blocked_since` takes both waits back out (Linux's
    schedstat for the loop's thread, `ThreadWaits` for the others); a sync call's sleep is no
    run-queue time, so it stays counted. The waits are read over a window, so they also hold
    waits between callbacks; the process's CPU over the window bounds the result from below
    (under the GIL any of it keeps the loop from running, which is why the plan's held time is
    the larger of the two). All are read at the window's ends only: a clock read in every
    callback would add its own cost to the CPU measured per request, 0.06 ms on a FastAPI route.
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        #: The loop's thread: the one that measures (asyncio.Runner runs the loop in it).
        self.tid = threading.get_native_id()
        self.threads = ThreadWaits(leave_out=self.tid)

    def mark(self) -> LoopMark:
        """A reading to time a window from (`blocked_since`): callback seconds, the process's
        CPU seconds, the loop thread's run-queue seconds (0 where Linux does not give them),
        and the other threads' run-queue reading."""
        return (
            self.seconds,
            time.process_time(),
            schedstat_wait_s(self.tid) or 0.0,
            self.threads.mark(),
        )

    def loop_cpu(self) -> float | None:
        """Seconds the loop's thread has computed (Linux schedstat; None where not given): the
        process's CPU less this is what the requests ran in other threads."""
        return schedstat_run_s(self.tid)

    def blocked_since(self, mark: LoopMark) -> float:
        """Seconds the loop was blocked since `mark`: its callbacks' wall time less its own and
        the other threads' run-queue waits, never less than the process's CPU meanwhile."""
        wall0, cpu0, wait0, threads0 = mark
        wall, cpu, wait = self.seconds, time.process_time(), schedstat_wait_s(self.tid) or 0.0
        others = self.threads.since(threads0)
        return max(cpu - cpu0, wall - wall0 - (wait - wait0) - others)

    @contextlib.contextmanager
    def installed(self) -> Iterator[LoopTimer]:
        import asyncio.events

        handle = asyncio.events.Handle
        original = handle._run
        timer = self

        def timed(h: asyncio.events.Handle) -> None:
            start = time.perf_counter()
            try:
                original(h)
            finally:
                timer.seconds += time.perf_counter() - start

        handle._run = timed  # type: ignore[method-assign,assignment]
        try:
            with self.threads.installed():
                yield self
        finally:
            handle._run = original  # type: ignore[method-assign]


class AsgiCaller:
    """Calls into one ASGI app on one event loop: a request at a time, or many at once."""

    def __init__(self, runner: asyncio.Runner, app: Callable[..., Any], state: dict[str, Any],
                 timer: LoopTimer) -> None:  # fmt: skip
        self._runner, self._app, self._state, self._timer = runner, app, state, timer

    def __call__(self, req: Request) -> int:
        return self._runner.run(call_asgi(self._app, req, self._state))

    def level(
        self, requests: list[Request], in_flight: int, count: int, seconds: float
    ) -> tuple[int, float, float, float]:
        """Up to `count` requests (cycling through `requests`), `in_flight` at a time, issued
        for at most `seconds`: (answered, wall seconds, loop seconds, process CPU seconds)."""
        return self._runner.run(self._level(requests, in_flight, count, seconds))

    async def _level(
        self, requests: list[Request], in_flight: int, count: int, seconds: float
    ) -> tuple[int, float, float, float]:
        import asyncio

        issued = answered = 0
        start = time.perf_counter()
        cpu0 = time.process_time()
        loop0 = self._timer.mark()

        async def slot() -> None:
            nonlocal issued, answered
            while issued < count and time.perf_counter() - start < seconds:
                req = requests[issued % len(requests)]
                issued += 1
                try:
                    await call_asgi(self._app, req, self._state)
                except Exception as error:  # the app's own: this level cannot be measured
                    raise LevelFailed(f"{req.method} {req.path} raised {error!r}") from None
                answered += 1

        tasks = [asyncio.ensure_future(slot()) for _ in range(in_flight)]
        _, pending = await asyncio.wait(tasks, timeout=seconds + DRAIN_SECONDS)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
            raise LevelFailed(f"requests did not finish within {seconds + DRAIN_SECONDS:g} s")
        for task in tasks:
            task.result()  # LevelFailed, if a slot's request raised
        return (
            answered,
            time.perf_counter() - start,
            self._timer.blocked_since(loop0),
            time.process_time() - cpu0,
        )


@contextlib.contextmanager
def asgi_caller(app: Callable[..., Any], timer: LoopTimer | None = None) -> Iterator[AsgiCaller]:
    """A blocking `call(req) -> status` for `app`, inside its lifespan, on one event loop.

    One loop for the whole run, as a server has: connection pools and caches the app keeps on
    the loop survive from request to request (and from path to path).
    """
    import asyncio

    timer = timer or LoopTimer()
    with asyncio.Runner() as runner, timer.installed():
        lifespan = _Lifespan(app)
        runner.run(lifespan.startup())
        try:
            yield AsgiCaller(runner, app, lifespan.state, timer)
        finally:
            runner.run(lifespan.shutdown())
