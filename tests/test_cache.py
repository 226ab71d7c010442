"""servertune.cache: per-instance method caches that never outlive their instance."""

from __future__ import annotations

import copy
import dataclasses
import functools
import gc
import pickle
import threading
import tracemalloc
import weakref
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servertune import cache as cache_module
from servertune.cache import DEFAULT_MAXSIZE, cached_method, shared_method_cache


class Scaler:
    """A class whose cached method depends on `self`."""

    def __init__(self, factor: int) -> None:
        self.factor = factor
        self.calls = 0

    @cached_method
    def scale(self, x: int) -> int:
        self.calls += 1
        return self.factor * x

    @cached_method(maxsize=2, typed=True)
    def small(self, x: object) -> str:
        return f"{type(x).__name__}:{x}"


def test_exports_are_declared() -> None:
    """Every name in servertune.cache.__all__ exists."""
    assert all(hasattr(cache_module, name) for name in cache_module.__all__)


def test_hits_and_misses_are_counted_per_instance() -> None:
    """Each instance has its own cache: its own hits, misses and size."""
    a, b = Scaler(2), Scaler(3)
    assert [a.scale(5), a.scale(5), a.scale(6)] == [10, 10, 12]
    assert b.scale(5) == 15
    assert a.scale.cache_info() == functools._CacheInfo(1, 2, DEFAULT_MAXSIZE, 2)
    assert b.scale.cache_info() == functools._CacheInfo(0, 1, DEFAULT_MAXSIZE, 1)
    assert (a.calls, b.calls) == (2, 1)


def test_cache_clear_empties_only_that_instance() -> None:
    """cache_clear() on one instance leaves another instance's cache intact."""
    a, b = Scaler(2), Scaler(2)
    a.scale(1)
    b.scale(1)
    a.scale.cache_clear()
    assert a.scale.cache_info().currsize == 0
    assert b.scale.cache_info().currsize == 1


def test_maxsize_and_typed_are_honoured() -> None:
    """maxsize bounds each instance's cache; typed=True keeps 1 and 1.0 apart."""
    s = Scaler(1)
    assert s.small(1) == "int:1"
    assert s.small(1.0) == "float:1.0"
    s.small(2)
    info = s.small.cache_info()
    assert (info.maxsize, info.currsize, info.misses) == (2, 2, 3)


def test_class_access_gives_the_descriptor_and_calls_through() -> None:
    """Class.method is the descriptor (with the method's name and doc); Class.method(obj, x) works."""
    s = Scaler(4)
    assert Scaler.scale.__name__ == "scale"
    assert Scaler.scale(s, 2) == 8
    assert s.scale.cache_info().misses == 1


def test_dropped_instance_is_freed_without_the_cycle_collector() -> None:
    """Nothing but the instance holds its cache: `del` frees it by reference counting alone."""
    s = Scaler(2)
    s.scale(1)
    ref = weakref.ref(s)
    gc.disable()
    try:
        del s
        assert ref() is None
    finally:
        gc.enable()


def test_many_short_lived_instances_leave_no_growth() -> None:
    """100,000 instances created, called and dropped: none stays alive, memory stays flat."""
    refs: list[weakref.ref[Scaler]] = []
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(100_000):
            s = Scaler(i)
            s.scale(42)
            s.scale(42)
            if i % 1000 == 0:
                refs.append(weakref.ref(s))
        del s
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert all(r() is None for r in refs)
    # 100,000 leaked instances with their caches would be tens of MiB; the weakrefs we keep and
    # allocator noise are a few KiB.
    assert grown < 256 * 1024


def test_functools_cache_on_a_method_leaks_where_cached_method_does_not() -> None:
    """The pattern being replaced keeps every instance alive; cached_method keeps none."""

    class Leaky:
        @functools.cache  # noqa: B019 - the pattern this module replaces
        def f(self, x: int) -> int:
            return x

    class Safe:
        @cached_method
        def f(self, x: int) -> int:
            return x

    leaky_refs, safe_refs = [], []
    for _ in range(100):
        leaky, safe = Leaky(), Safe()
        leaky.f(1)
        safe.f(1)
        leaky_refs.append(weakref.ref(leaky))
        safe_refs.append(weakref.ref(safe))
    del leaky, safe
    gc.collect()
    assert sum(r() is not None for r in leaky_refs) == 100
    assert sum(r() is not None for r in safe_refs) == 0
    Leaky.f.cache_clear()


def test_concurrent_calls_from_threads_stay_correct() -> None:
    """Eight threads hammering one instance get correct results and one consistent cache."""
    s = Scaler(3)
    errors: list[str] = []
    start = threading.Barrier(8)

    def work() -> None:
        start.wait()
        for i in range(2000):
            x = i % 50
            if s.scale(x) != 3 * x:
                errors.append(f"scale({x})")

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    info = s.scale.cache_info()
    assert errors == []
    assert info.hits + info.misses == 8 * 2000
    assert info.currsize == 50


def test_racing_first_accesses_share_one_cache() -> None:
    """Threads calling obj.method for the first time at once share one cache: one miss in all."""
    for _ in range(20):
        s = Scaler(1)
        start = threading.Barrier(4)

        def touch(obj: Scaler = s, gate: threading.Barrier = start) -> None:
            gate.wait()
            obj.scale(3)

        threads = [threading.Thread(target=touch) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        info = s.scale.cache_info()
        assert (info.misses, info.hits, info.currsize) == (1, 3, 1)


class Base:
    """A base class with a cached method."""

    @cached_method
    def value(self, x: int) -> int:
        return x * 10


class Child(Base):
    """Overrides the cached method with a cached method that calls super()."""

    @cached_method
    def value(self, x: int) -> int:
        return super().value(x) + 1


class PlainChild(Base):
    """Overrides the cached method with a plain method that calls super()."""

    def value(self, x: int) -> int:  # type: ignore[override]  # a plain method replaces the cache
        return super().value(x) + 2


class Heir(Base):
    """Inherits the cached method unchanged."""


def test_inherited_cached_method_gets_its_own_cache_per_instance() -> None:
    """A subclass that does not override the method caches per instance like the base."""
    h = Heir()
    assert h.value(1) == h.value(1) == 10
    assert h.value.cache_info().hits == 1


def test_overriding_cached_method_and_super_have_separate_caches() -> None:
    """super().method from a cached override uses the base's cache, not the override's."""
    c = Child()
    assert c.value(1) == c.value(1) == 11
    assert c.value.cache_info().hits == 1
    assert Base.value.__get__(c, Base).cache_info().misses == 1


def test_plain_override_is_not_shadowed_by_the_base_cache() -> None:
    """A plain override calling super() keeps running: the base cache never takes its name."""
    p = PlainChild()
    assert p.value(1) == p.value(1) == 12
    assert "value" not in vars(p)


def test_slots_without_dict_get_a_clear_error() -> None:
    """A __slots__ class that has no __dict__ cannot hold a per-instance cache: TypeError says why."""

    class Slotted:
        __slots__ = ("x",)

        @cached_method
        def f(self) -> int:
            return 1

    with pytest.raises(TypeError, match=r"__slots__ without '__dict__'.*shared_method_cache"):
        Slotted().f()


def test_slots_with_dict_but_no_weakref_work_and_are_collected() -> None:
    """__slots__ = ('__dict__',) works; without __weakref__ the cycle collector frees it."""
    freed: list[int] = []

    class Slotted:
        __slots__ = ("__dict__",)

        def __del__(self) -> None:
            freed.append(1)

        @cached_method
        def f(self, x: int) -> int:
            return x + 1

    s = Slotted()
    assert s.f(1) == s.f(1) == 2
    del s
    gc.collect()
    assert freed == [1]


def test_unhashable_dataclass_instances_work() -> None:
    """`self` is not part of the key: an eq=True dataclass (unhashable) caches, and == ignores the cache."""

    @dataclasses.dataclass
    class Point:
        x: int

        @cached_method
        def shifted(self, dx: int) -> int:
            return self.x + dx

    p = Point(1)
    assert p.shifted(2) == p.shifted(2) == 3
    assert p.shifted.cache_info().hits == 1
    assert p == Point(1)


def test_del_drops_the_instance_cache() -> None:
    """`del obj.method` discards the cache; the next call starts a fresh one."""
    s = Scaler(2)
    s.scale(1)
    del s.scale
    assert s.scale.cache_info().currsize == 0
    assert s.scale(1) == 2
    assert s.calls == 2


def test_copy_shares_cache_until_deleted() -> None:
    """A shallow copy shares its original's cache; `del copy.method` gives it its own."""
    s = Scaler(2)
    s.scale(1)
    twin = copy.copy(s)
    assert twin.scale is s.scale
    del twin.scale
    twin.factor = 5
    assert twin.scale(1) == 5
    assert s.scale(1) == 2


def test_pickling_needs_the_cache_dropped_first() -> None:
    """A used cache cannot be pickled (it is a function); after `del obj.method` the instance pickles."""
    s = Scaler(2)
    s.scale(1)
    with pytest.raises(pickle.PicklingError):
        pickle.dumps(s)
    del s.scale
    assert pickle.loads(pickle.dumps(s)).scale(1) == 2


def test_misuse_is_refused_with_a_message() -> None:
    """staticmethod, coroutines and @cached_method(64) are refused with a pointer to the fix."""
    with pytest.raises(TypeError, match="shared_method_cache"):
        cached_method(staticmethod(len))
    with pytest.raises(TypeError, match=r"cached_method\(maxsize=64\)"):
        cached_method(64)  # type: ignore[call-overload]

    async def coro(self: Any) -> None:
        return None

    with pytest.raises(TypeError, match="coroutine"):
        cached_method(coro)


@given(st.lists(st.integers(min_value=-5, max_value=5), max_size=40))
def test_cached_results_equal_uncached_results(calls: list[int]) -> None:
    """For any call sequence the cached method returns what the plain method returns."""
    s = Scaler(7)
    assert [s.scale(x) for x in calls] == [7 * x for x in calls]
    assert s.calls == len(set(calls))


class Maths:
    """Methods that do not use self, cached once for the whole class."""

    @shared_method_cache
    def double(x: int) -> int:  # a staticmethod in all but the decorator
        return 2 * x

    @shared_method_cache(maxsize=None)
    @staticmethod
    def triple(x: int) -> int:
        return 3 * x


def test_shared_method_cache_hits_across_instances_and_the_class() -> None:
    """One cache serves Class.method and every instance's method alike."""
    Maths.double.cache_clear()
    assert [Maths.double(2), Maths().double(2), Maths().double(2)] == [4, 4, 4]
    assert Maths.double.cache_info().hits == 2
    assert Maths().triple(2) == 6
    assert Maths.triple.cache_info().maxsize is None


def test_shared_method_cache_refuses_methods_that_take_self() -> None:
    """A function whose first parameter is self is refused: sharing would key on every instance."""
    with pytest.raises(TypeError, match="use cached_method"):

        class Wrong:
            @shared_method_cache
            def f(self, x: int) -> int:
                return x


def test_a_method_called_on_a_temporary_instance_works() -> None:
    """`Scaler(2).scale(3)`: the instance lives until its first call returns (no ReferenceError)."""
    assert Scaler(2).scale(3) == 6
    method = Scaler(5).scale
    assert method(2) == 10
    assert method.cache_info().misses == 1


def test_cached_method_on_a_plain_function_is_refused_when_decorating() -> None:
    """A module-level function with no `self` is refused at decoration time, naming the fix."""

    def double(x: int) -> int:
        return 2 * x

    with pytest.raises(TypeError, match=r"not defined in a class body.*functools\.lru_cache"):
        cached_method(double)  # type: ignore[misc]
    with pytest.raises(TypeError, match="not defined in a class body"):
        cached_method(maxsize=4)(double)  # type: ignore[misc]


def test_a_function_taking_self_may_be_assigned_into_a_class() -> None:
    """`def f(self, ...)` written outside a class and put in one later is still a method."""

    @cached_method
    def triple(self: object, x: int) -> int:
        return 3 * x

    class Holder:
        f = triple

    holder = Holder()
    assert holder.f(2) == holder.f(2) == 6
    assert holder.f.cache_info().hits == 1
