"""servertune.asgi: sync code on a bounded, FIFO pool with an overload deadline."""

from __future__ import annotations

import asyncio
import contextvars
import math
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servertune import asgi as asgi_module
from servertune.asgi import (
    MAX_THREADS,
    BoundedExecutor,
    OverloadedError,
    executor_threads,
    install,
    sync_to_async,
)
from servertune.sizing import SLOW_CALL_QUANTILE, poisson_quantile
from servertune.workload import Workload

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id")


@pytest.fixture
def pool() -> Iterator[BoundedExecutor]:
    """A small pool, shut down after the test."""
    executor = BoundedExecutor(3)
    yield executor
    executor.shutdown(wait=True, cancel_futures=True)


def test_exports_are_declared() -> None:
    """Every name in servertune.asgi.__all__ exists."""
    assert all(hasattr(asgi_module, name) for name in asgi_module.__all__)


def test_wrapped_function_is_a_coroutine_function_with_the_same_name() -> None:
    """The wrapper is awaitable, keeps the function's name, and returns its result."""

    def add(a: int, b: int = 0) -> int:
        return a + b

    wrapped = sync_to_async(add)
    assert asyncio.iscoroutinefunction(wrapped)
    assert wrapped.__name__ == "add"
    assert asyncio.run(wrapped(1, b=2)) == 3


def test_never_more_threads_than_the_bound(pool: BoundedExecutor) -> None:
    """Forty concurrent calls on a 3-thread pool run at most 3 at a time, on 3 threads."""
    lock = threading.Lock()
    running, peak, names = [0], [0], set()
    release = threading.Event()

    def work() -> None:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            names.add(threading.current_thread().name)
        release.wait(0.01)
        with lock:
            running[0] -= 1

    async def main() -> None:
        call = sync_to_async(work, executor=pool)
        await asyncio.gather(*(call() for _ in range(40)))

    asyncio.run(main())
    assert peak[0] <= 3
    assert len(names) <= 3
    assert pool.threads <= 3


def test_calls_start_in_arrival_order() -> None:
    """On one thread, queued calls run first-in, first-out."""
    order: list[int] = []
    executor = BoundedExecutor(1)

    async def main() -> None:
        call = sync_to_async(order.append, executor=executor)
        await asyncio.gather(*(call(i) for i in range(50)))

    try:
        asyncio.run(main())
    finally:
        executor.shutdown()
    assert order == list(range(50))


def test_queue_timeout_raises_overloaded_and_the_call_never_runs() -> None:
    """A call still queued after queue_timeout raises OverloadedError (503) and is withdrawn."""
    gate = threading.Event()
    ran: list[str] = []
    executor = BoundedExecutor(1, queue_timeout=0.05)

    def blocker() -> None:
        gate.wait(10)
        ran.append("blocker")

    def queued() -> None:
        ran.append("queued")

    async def main() -> BaseException | None:
        first = asyncio.ensure_future(sync_to_async(blocker, executor=executor)())
        await asyncio.sleep(0)
        try:
            await sync_to_async(queued, executor=executor)()
        except OverloadedError as error:
            caught: BaseException | None = error
        else:
            caught = None
        gate.set()
        await first
        return caught

    try:
        error = asyncio.run(main())
    finally:
        gate.set()
        executor.shutdown()
    assert isinstance(error, OverloadedError)
    assert error.status_code == 503
    assert "queue_timeout=0.05" in str(error)
    assert ran == ["blocker"]


def test_a_running_call_is_not_cut_short_by_queue_timeout() -> None:
    """queue_timeout bounds the wait for a thread, never the call once it has started."""
    executor = BoundedExecutor(1)

    def slow() -> str:
        threading.Event().wait(0.1)
        return "done"

    async def main() -> str:
        return await sync_to_async(slow, executor=executor, queue_timeout=0.01)()

    try:
        assert asyncio.run(main()) == "done"
    finally:
        executor.shutdown()


def test_install_makes_the_pool_the_loops_default() -> None:
    """After install(), run_in_executor(None), to_thread and sync_to_async share the bounded pool."""

    def name() -> str:
        return threading.current_thread().name

    async def main() -> list[str]:
        pool = install(max_threads=2)
        try:
            loop = asyncio.get_running_loop()
            return [
                await loop.run_in_executor(None, name),
                await asyncio.to_thread(name),
                await sync_to_async(name)(),
            ]
        finally:
            pool.shutdown(wait=False)

    names = asyncio.run(main())
    assert all(n.startswith("servertune-sync") for n in names)


def test_context_variables_travel_both_ways() -> None:
    """The call sees the caller's context variables, and what it sets comes back, as in asgiref."""

    def read_and_set() -> str:
        seen = request_id.get()
        request_id.set("set-in-thread")
        return seen

    async def main() -> tuple[str, str]:
        request_id.set("from-caller")
        seen = await sync_to_async(read_and_set, max_threads=1)()
        return seen, request_id.get()

    assert asyncio.run(main()) == ("from-caller", "set-in-thread")


def test_thread_sensitive_true_keeps_asgiref_semantics() -> None:
    """thread_sensitive=True is asgiref's SyncToAsync: every call on one and the same thread."""
    from asgiref.sync import SyncToAsync

    wrapped = sync_to_async(threading.get_ident, thread_sensitive=True)
    assert isinstance(wrapped, SyncToAsync)

    async def main() -> set[int]:
        return set(await asyncio.gather(*(wrapped() for _ in range(5))))

    assert len(asyncio.run(main())) == 1


def test_decorator_forms_match_asgiref() -> None:
    """@sync_to_async and @sync_to_async(...) both wrap a function."""

    @sync_to_async
    def one() -> int:
        return 1

    @sync_to_async(max_threads=2, queue_timeout=1.0)
    def two() -> int:
        return 2

    async def main() -> list[int]:
        return [await one(), await two()]

    assert asyncio.run(main()) == [1, 2]


def test_misuse_is_refused() -> None:
    """Coroutine functions, conflicting options and out-of-range sizes raise clear errors."""

    async def coro() -> None:
        return None

    with pytest.raises(TypeError, match="sync functions"):
        sync_to_async(coro)
    with pytest.raises(TypeError, match="thread_sensitive=True"):
        sync_to_async(len, thread_sensitive=True, max_threads=4)
    with pytest.raises(ValueError, match="max_threads"):
        BoundedExecutor(0)
    with pytest.raises(ValueError, match="max_threads"):
        BoundedExecutor(MAX_THREADS + 1)
    with pytest.raises(ValueError, match="queue_timeout"):
        BoundedExecutor(1, queue_timeout=-1)


def test_sizing_is_littles_law_with_poisson_headroom() -> None:
    """2000 req/s x 100 ms held = 200 calls in flight; the pool gets its p99.9 Poisson quantile."""
    workload = Workload(cores=1, peak_rps=2000, service_time_ms=100)
    assert executor_threads(workload) == poisson_quantile(200, SLOW_CALL_QUANTILE)


def test_sizing_counts_slow_calls_and_splits_the_rate_over_processes() -> None:
    """Slow calls add their share of hold time; each of N processes gets 1/N of the rate."""
    workload = Workload(
        cores=4, peak_rps=400, service_time_ms=10, slow_call_ratio=0.1, slow_call_ms=1000
    )
    in_flight = 400 / 4 * (0.010 + 0.1 * 1.0)
    assert executor_threads(workload) == poisson_quantile(in_flight, SLOW_CALL_QUANTILE)
    assert executor_threads(workload, processes=1) > executor_threads(workload)


@settings(max_examples=60, deadline=None)
@given(
    rate=st.floats(min_value=0.1, max_value=100_000),
    service_ms=st.floats(min_value=0.1, max_value=10_000),
    more=st.floats(min_value=1.0, max_value=10.0),
)
def test_sizing_is_bounded_and_grows_with_the_rate(
    rate: float, service_ms: float, more: float
) -> None:
    """For any workload the pool has 1..MAX_THREADS threads, and more load never means fewer."""
    low = executor_threads(Workload(cores=1, peak_rps=rate, service_time_ms=service_ms))
    high = executor_threads(
        Workload(cores=1, peak_rps=min(rate * more, 1_000_000), service_time_ms=service_ms)
    )
    assert low >= 1
    assert low <= high <= MAX_THREADS


@pytest.mark.parametrize("bad", [-1, -0.5, math.nan, math.inf, True, "5"])
def test_sync_to_async_refuses_a_bad_queue_timeout_when_built(bad: object) -> None:
    """queue_timeout -1, NaN, inf, a bool or a string: ValueError at wrapping time, every form."""
    with pytest.raises(ValueError, match=r"^queue_timeout: must be None or a finite number"):
        sync_to_async(len, queue_timeout=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^queue_timeout: "):
        sync_to_async(queue_timeout=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^queue_timeout: "):
        BoundedExecutor(1, queue_timeout=bad)  # type: ignore[arg-type]


def test_sync_to_async_accepts_a_zero_queue_timeout() -> None:
    """0 is a valid deadline: only a call that finds an idle thread at once runs."""
    assert callable(sync_to_async(len, queue_timeout=0))
