"""A bounded, fair `sync_to_async`: sync code on a thread pool sized for the load, FIFO, with a deadline.

asgiref's `sync_to_async` runs sync code in one of three places, none sized for the load
(bench `sync-to-async`; docs/references.md): one thread for everything (`thread_sensitive=True`, its default, outside
Django's per-request context), the event loop's default pool of `min(32, cpus + 4)` threads
(`thread_sensitive=False`), or, under Django, a new thread per request. Under 200 connections
of blocking calls the first two serve a few percent of what native async code serves, with p99
latencies in seconds (a published load test saw a 341 s maximum); the third has no bound on threads.

`servertune.asgi.sync_to_async` is a drop-in with one difference: unless asked for asgiref's
`thread_sensitive=True` semantics, it runs the call on a `BoundedExecutor`

* sized by Little's law from a `Workload` (calls in flight = arrival rate x time a call holds its
  thread, plus Poisson tail headroom, as `servertune.sizing` sizes slow-call threads) or given
  an explicit `max_threads`;
* FIFO: one shared queue, served in arrival order (`ThreadPoolExecutor`'s queue), so no call is
  overtaken indefinitely;
* with an optional `queue_timeout`: a call still waiting for a thread after that long is taken
  out of the queue and raises `OverloadedError`, which a server answers with 503, instead of a
  request waiting minutes.

`install(loop)` makes that executor the loop's default, so `loop.run_in_executor(None, ...)` and
`asyncio.to_thread` share the same bound. Context variables travel into the call and changes
come back, as with asgiref.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import math
import threading
import weakref
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, overload

from servertune.pool_limits import DEFAULT_MAX_THREADS, MAX_THREADS

if TYPE_CHECKING:
    from servertune.workload import Workload

__all__ = [
    "DEFAULT_MAX_THREADS",
    "MAX_THREADS",
    "BoundedExecutor",
    "OverloadedError",
    "default_executor",
    "executor_threads",
    "install",
    "pool_threads",
    "sync_to_async",
]

#: Prefix of the pool's thread names: what `ps -L`, py-spy and thread dumps show.
THREAD_NAME_PREFIX = "servertune-sync"

P = ParamSpec("P")
R = TypeVar("R")


class OverloadedError(RuntimeError):
    """No thread took the call within `queue_timeout`: the server is overloaded; answer 503.

    The call was removed from the queue and never ran, so retrying it elsewhere is safe.
    """

    #: The HTTP status a server should answer with (503 Service Unavailable).
    status_code = 503

    def __init__(self, func: Callable[..., Any], queue_timeout: float, queued: int, threads: int):
        self.func = func
        self.queue_timeout = queue_timeout
        self.queued = queued
        self.threads = threads
        name = getattr(func, "__qualname__", repr(func))
        super().__init__(
            f"sync_to_async: no thread free for {name} within queue_timeout={queue_timeout:g} s "
            f"({threads} threads busy, {queued} calls queued); the call did not run - answer 503"
        )


def executor_threads(workload: Workload, *, processes: int | None = None) -> int:
    """Threads one process's pool needs for `workload`, by Little's law plus tail headroom.

    A call holds its thread for the request's service time plus, for the share that makes one,
    the slow call. At the peak rate per process (`peak_rps`, or the CPU ceiling when unset) the
    mean number of calls in flight is rate x hold time; the pool gets the 99.9th percentile of a
    Poisson with that mean (`servertune.sizing.SLOW_CALL_QUANTILE`), at least the threads that
    keep the GIL busy, at most `MAX_THREADS`. `processes` defaults to the plan's (one per core).
    """
    # Imported here: an app importing servertune.asgi for sync_to_async need not load pydantic.
    from servertune.sizing import plan_for
    from servertune.sizing.queueing import arrival_rate, held_s, in_flight

    plan = plan_for(workload)
    count = processes if processes is not None else plan.processes
    if count < 1:
        raise ValueError(f"processes: must be at least 1; got {count}")
    rate, _ = arrival_rate(plan.workload, plan.ceiling_rps)
    return pool_threads(in_flight(rate / count, held_s(plan.workload)), plan.cpu_threads)


def pool_threads(mean_in_flight: float, cpu_threads: int) -> int:
    """A pool for `mean_in_flight` calls: the Poisson tail above it, at least `cpu_threads`.

    The formula lives in `servertune.sizing.queueing.pool_threads`, the layer the plan's
    `executor_threads` number is derived in (so sizing never imports this module).
    """
    from servertune.sizing.queueing import pool_threads as formula

    return formula(mean_in_flight, cpu_threads)


class BoundedExecutor(ThreadPoolExecutor):
    """A `ThreadPoolExecutor` with a hard thread bound, a FIFO queue and an optional deadline.

    It is a real `ThreadPoolExecutor`, so `loop.set_default_executor` accepts it (`install`).
    Threads start on demand, one whenever a call finds no idle thread, up to `max_threads`.
    """

    def __init__(
        self,
        max_threads: int = DEFAULT_MAX_THREADS,
        *,
        queue_timeout: float | None = None,
        thread_name_prefix: str = THREAD_NAME_PREFIX,
    ) -> None:
        if not isinstance(max_threads, int) or not 1 <= max_threads <= MAX_THREADS:
            raise ValueError(
                f"max_threads: must be an integer from 1 to {MAX_THREADS}; got {max_threads!r}"
            )
        _check_queue_timeout(queue_timeout)
        super().__init__(max_workers=max_threads, thread_name_prefix=thread_name_prefix)
        self.max_threads = max_threads
        self.queue_timeout = queue_timeout

    @classmethod
    def from_workload(
        cls,
        workload: Workload,
        *,
        processes: int | None = None,
        queue_timeout: float | None = None,
    ) -> BoundedExecutor:
        """A pool sized by `executor_threads(workload, processes=processes)`."""
        return cls(executor_threads(workload, processes=processes), queue_timeout=queue_timeout)

    @property
    def queued(self) -> int:
        """Calls waiting for a thread right now (approximate, as any queue size read is)."""
        return self._work_queue.qsize()

    @property
    def threads(self) -> int:
        """Threads started so far (they stay until shutdown)."""
        return len(self._threads)

    def __repr__(self) -> str:
        return (
            f"<BoundedExecutor max_threads={self.max_threads} queue_timeout={self.queue_timeout} "
            f"threads={self.threads} queued={self.queued}>"
        )


_default: BoundedExecutor | None = None
_default_lock = threading.Lock()
_installed: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Executor] = (
    weakref.WeakKeyDictionary()
)


def default_executor() -> BoundedExecutor:
    """The process-wide pool used when no executor is installed or given (DEFAULT_MAX_THREADS)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = BoundedExecutor(DEFAULT_MAX_THREADS)
        return _default


def install(
    loop: asyncio.AbstractEventLoop | None = None,
    executor: ThreadPoolExecutor | None = None,
    *,
    max_threads: int | None = None,
    workload: Workload | None = None,
    queue_timeout: float | None = None,
) -> ThreadPoolExecutor:
    """Make a bounded pool `loop`'s default executor (default: the running loop) and return it.

    Afterwards `sync_to_async`, `loop.run_in_executor(None, ...)` and `asyncio.to_thread` all
    share that one pool and its bound. Give an `executor`, or let one be built from
    `max_threads` or `workload` (see `executor_threads`), or take `DEFAULT_MAX_THREADS`.
    """
    if loop is None:
        loop = asyncio.get_running_loop()
    if executor is not None and (max_threads, workload, queue_timeout) != (None, None, None):
        raise TypeError("install: give either executor or max_threads/workload/queue_timeout")
    pool = executor if executor is not None else _build(max_threads, workload, queue_timeout)
    loop.set_default_executor(pool)
    _installed[loop] = pool
    return pool


def _build(
    max_threads: int | None, workload: Workload | None, queue_timeout: float | None
) -> BoundedExecutor:
    if max_threads is not None and workload is not None:
        raise TypeError("give max_threads or workload, not both")
    if workload is not None:
        return BoundedExecutor.from_workload(workload, queue_timeout=queue_timeout)
    return BoundedExecutor(
        max_threads if max_threads is not None else DEFAULT_MAX_THREADS,
        queue_timeout=queue_timeout,
    )


@overload
def sync_to_async(
    func: Callable[P, R],
    /,
    *,
    thread_sensitive: bool = False,
    executor: Executor | None = None,
    max_threads: int | None = None,
    workload: Workload | None = None,
    queue_timeout: float | None = None,
) -> Callable[P, Coroutine[Any, Any, R]]: ...
@overload
def sync_to_async(
    func: None = None,
    /,
    *,
    thread_sensitive: bool = False,
    executor: Executor | None = None,
    max_threads: int | None = None,
    workload: Workload | None = None,
    queue_timeout: float | None = None,
) -> Callable[[Callable[P, R]], Callable[P, Coroutine[Any, Any, R]]]: ...
def sync_to_async(
    func: Callable[P, R] | None = None,
    /,
    *,
    thread_sensitive: bool = False,
    executor: Executor | None = None,
    max_threads: int | None = None,
    workload: Workload | None = None,
    queue_timeout: float | None = None,
) -> (
    Callable[P, Coroutine[Any, Any, R]]
    | Callable[[Callable[P, R]], Callable[P, Coroutine[Any, Any, R]]]
):
    """Wrap sync `func` so that awaiting it runs it on a bounded, FIFO thread pool.

    Same call shapes as asgiref's: `sync_to_async(f)`, `@sync_to_async`,
    `@sync_to_async(thread_sensitive=True)`. Where the call runs:

    * `thread_sensitive=True`: asgiref's own `SyncToAsync`, unchanged (needs asgiref);
    * `executor`: that executor;
    * `max_threads` or `workload`: a pool of this function's own (a bulkhead: a slow
      dependency cannot take every thread);
    * otherwise the pool `install` put on the running loop, else `default_executor()`.

    `queue_timeout` (seconds; default: the pool's own) bounds the wait for a thread: a call not
    started by then is withdrawn and raises `OverloadedError`. The call itself is never cut short.
    """
    # Checked here, not on the first call: NaN would make every call on an idle pool overloaded.
    _check_queue_timeout(queue_timeout)
    if func is None:
        return functools.partial(
            sync_to_async,
            thread_sensitive=thread_sensitive,
            executor=executor,
            max_threads=max_threads,
            workload=workload,
            queue_timeout=queue_timeout,
        )
    if not callable(func):
        raise TypeError(f"sync_to_async needs a callable; got {func!r}")
    if inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
        getattr(func, "__call__", None)  # noqa: B004 - a callable object's own __call__
    ):
        raise TypeError("sync_to_async can only be applied to sync functions")
    if thread_sensitive:
        if (executor, max_threads, workload, queue_timeout) != (None, None, None, None):
            raise TypeError(
                "thread_sensitive=True runs on asgiref's single thread; it takes no executor, "
                "max_threads, workload or queue_timeout"
            )
        return _asgiref_thread_sensitive(func)
    if executor is not None and (max_threads, workload) != (None, None):
        raise TypeError("give executor or max_threads/workload, not both")
    own: Executor | None = executor
    if own is None and (max_threads is not None or workload is not None):
        own = _build(max_threads, workload, None)
    return _bridge(func, own, queue_timeout)


def _check_queue_timeout(queue_timeout: object) -> None:
    """Refuse a queue_timeout that is not None or a finite number of seconds >= 0."""
    if queue_timeout is None:
        return
    if (
        isinstance(queue_timeout, bool)
        or not isinstance(queue_timeout, int | float)
        or not (math.isfinite(queue_timeout) and queue_timeout >= 0)
    ):
        raise ValueError(
            f"queue_timeout: must be None or a finite number of seconds >= 0; got {queue_timeout!r}"
        )


def _asgiref_thread_sensitive(func: Callable[P, R]) -> Callable[P, Coroutine[Any, Any, R]]:
    try:
        from asgiref.sync import SyncToAsync
    except ImportError:
        raise ImportError(
            "sync_to_async(thread_sensitive=True) keeps asgiref's semantics and needs asgiref: "
            "pip install 'servertune[asgi]'"
        ) from None
    wrapped: Callable[P, Coroutine[Any, Any, R]] = SyncToAsync(func, thread_sensitive=True)
    return wrapped


def _bridge(
    func: Callable[P, R], executor: Executor | None, queue_timeout: float | None
) -> Callable[P, Coroutine[Any, Any, R]]:
    @functools.wraps(func)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        loop = asyncio.get_running_loop()
        pool = executor or _installed.get(loop) or default_executor()
        context = contextvars.copy_context()
        work = pool.submit(context.run, functools.partial(func, *args, **kwargs))
        future = asyncio.wrap_future(work, loop=loop)
        deadline = (
            queue_timeout if queue_timeout is not None else getattr(pool, "queue_timeout", None)
        )
        try:
            if deadline is not None:
                done, _ = await asyncio.wait((future,), timeout=deadline)
                # cancel() succeeds only while the call is still queued: it never ran.
                if not done and work.cancel():
                    raise OverloadedError(func, deadline, _queued(pool), _threads(pool))
            return await future
        except asyncio.CancelledError:
            future.cancel()  # the caller left (client gone): withdraw the call if still queued
            raise
        finally:
            _restore_context(context)

    return call


def _queued(pool: Executor) -> int:
    queue = getattr(pool, "_work_queue", None)
    return queue.qsize() if queue is not None else 0


def _threads(pool: Executor) -> int:
    return len(getattr(pool, "_threads", ()))


def _restore_context(context: contextvars.Context) -> None:
    # Like asgiref: context variables the sync code set become visible to the awaiting coroutine.
    for var, value in context.items():
        try:
            if var.get() is value:
                continue
        except LookupError:
            pass
        var.set(value)
