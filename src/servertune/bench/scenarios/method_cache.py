"""Method caches: hit/miss cost and memory of cached_method vs functools, methodtools, cachetools.

`functools.cache` on a method keys on `self`, so short-lived instances never hit and every
instance stays alive (INADA Naoki, "functools.cacheをメソッドに使う", methane's blog: see
docs/references.md). This scenario times, in one process and one run, a cache hit and a
cache miss through each way of caching a method, next to `functools.lru_cache` on a plain
function (the floor), and counts what N created-and-dropped instances leave behind:

* `lru_cache-function`: `@lru_cache` on a module-level function (reference, not a method);
* `lru_cache-method`: `@lru_cache` straight on a method, the leaky pattern ruff B019 flags;
* `init-pattern`: that article's fix, `self.f = lru_cache(self._f)` in `__init__`;
* `methodtools`: `@methodtools.lru_cache()`;
* `cachetools`: `@cachetools.cachedmethod(lambda self: self._cache)`, a cache per instance
  (no lock, as its docs' example; a lock would add to its cost);
* `servertune`: `@servertune.cache.cached_method`;
* `servertune-shared`: `@servertune.cache.shared_method_cache`, for methods without `self`.

Timing caches hold 128 entries (`lru_cache`'s default); the memory pass uses unbounded caches
(`@cache`, as the leaky pattern is usually written). Each figure is the median over interleaved
repeats. No server is started.
"""

from __future__ import annotations

import gc
import statistics
import time
import timeit
import tracemalloc
import weakref
from collections.abc import Callable
from typing import Any

from servertune.bench.report import BenchOptions, Report, Target
from servertune.bench.versions import dist_version

__all__ = ["run"]

#: Calls per timing sample. Large enough that a sample takes ~10 ms (timer noise is negligible),
#: small enough that seven interleaved samples of seven variants stay under a minute.
CALLS_FULL = 200_000
CALLS_QUICK = 10_000
#: Interleaved samples per variant: the median of these is reported (house rule: >= 3 runs).
REPEATS_FULL = 7
REPEATS_QUICK = 3
#: Instances created, called once and dropped in the memory pass.
INSTANCES_FULL = 20_000
INSTANCES_QUICK = 2_000
#: Entries each timing cache holds: functools.lru_cache's default.
MAXSIZE = 128
#: "Several times faster": the helper's hit must beat methodtools' and cachetools' by this factor.
SEVERAL = 3.0

REFERENCE = "lru_cache-function"
LEAKY = "lru_cache-method"
OURS = "servertune"


def _classes(maxsize: int | None) -> dict[str, Any]:
    """One class (or, for the reference, one function) per variant, caching `f(x) -> x * 2`."""
    import functools

    import cachetools
    import methodtools  # type: ignore[import-untyped]

    from servertune.cache import cached_method, shared_method_cache

    @functools.lru_cache(maxsize=maxsize)
    def function(x: int) -> int:
        return x * 2

    class LruOnMethod:
        @functools.lru_cache(maxsize=maxsize)  # noqa: B019 - the pattern being measured
        def f(self, x: int) -> int:
            return x * 2

    class InitPattern:
        def __init__(self) -> None:
            self.f = functools.lru_cache(maxsize=maxsize)(self._f)

        def _f(self, x: int) -> int:
            return x * 2

    class MethodTools:
        @methodtools.lru_cache(maxsize=maxsize)  # type: ignore[untyped-decorator]
        def f(self, x: int) -> int:
            return x * 2

    class CacheTools:
        def __init__(self) -> None:
            self.cache: Any = {} if maxsize is None else cachetools.LRUCache(maxsize)

        @cachetools.cachedmethod(lambda self: self.cache)
        def f(self, x: int) -> int:
            return x * 2

    class Ours:
        @cached_method(maxsize=maxsize)
        def f(self, x: int) -> int:
            return x * 2

    class OursShared:
        @shared_method_cache(maxsize=maxsize)
        def f(x: int) -> int:
            return x * 2

    return {
        REFERENCE: function,
        LEAKY: LruOnMethod,
        "init-pattern": InitPattern,
        "methodtools": MethodTools,
        "cachetools": CacheTools,
        OURS: Ours,
        "servertune-shared": OursShared,
    }


def _call_target(name: str, made: Any) -> Any:
    # The reference is a function called directly; every other variant is reached through an
    # instance, so the attribute lookup (and any binding it does) is part of the measured cost.
    return made if name == REFERENCE else made()


def _time_ns(stmt: str, namespace: dict[str, Any], calls: int) -> float:
    seconds = timeit.Timer(stmt, globals=namespace).timeit(number=calls)
    return seconds / calls * 1e9


def _memory(made: Any, instances: int) -> tuple[float, int, int]:
    """KiB still allocated, and instances alive before and after a full collection."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        gc.disable()
        try:
            for _ in range(instances):
                obj = made()
                obj.f(42)
            del obj
        finally:
            gc.enable()
        gc.collect()
        kib = (tracemalloc.get_traced_memory()[0] - before) / 1024
    finally:
        tracemalloc.stop()
    sample = max(1, instances // 100)
    refs: list[weakref.ref[Any]] = []
    gc.disable()
    try:
        for i in range(instances):
            obj = made()
            obj.f(42)
            if i % sample == 0:
                refs.append(weakref.ref(obj))
        del obj
        alive_refcount = sum(r() is not None for r in refs) * sample
    finally:
        gc.enable()
    gc.collect()
    alive_gc = sum(r() is not None for r in refs) * sample
    return kib, alive_refcount, alive_gc


def run(options: BenchOptions) -> Report:
    """Time hits and misses of every variant, interleaved, then measure N dropped instances."""
    calls = CALLS_QUICK if options.quick else CALLS_FULL
    repeats = REPEATS_QUICK if options.quick else max(REPEATS_FULL, options.repeat)
    instances = INSTANCES_QUICK if options.quick else INSTANCES_FULL
    timing = _classes(MAXSIZE)
    names = list(timing)
    targets: dict[str, Any] = {n: _call_target(n, made) for n, made in timing.items()}
    hits: dict[str, list[float]] = {n: [] for n in names}
    misses: dict[str, list[float]] = {n: [] for n in names}
    start = time.perf_counter()
    for repeat in range(repeats):
        for name in names:
            obj = targets[name]
            call: Callable[[int], int] = obj if name == REFERENCE else obj.f
            call(42)  # warm: the first call is a miss
            spaces = {"o": obj, "f": obj} if name == REFERENCE else {"o": obj}
            stmt = "f(42)" if name == REFERENCE else "o.f(42)"
            hits[name].append(_time_ns(stmt, spaces, calls))
            # Misses: each call a new argument (the LRU evicts as it goes). `next(n)` costs the
            # same for every variant.
            counter = iter(range(10**9 + repeat * calls, 10**9 + (repeat + 1) * calls))
            miss_space = {**spaces, "n": counter}
            miss_stmt = "f(next(n))" if name == REFERENCE else "o.f(next(n))"
            misses[name].append(_time_ns(miss_stmt, miss_space, calls))
        if options.progress:
            print(f"  timing pass {repeat + 1}/{repeats} done", flush=True)
    unbounded = _classes(None)
    runs: list[dict[str, Any]] = []
    reference_hit = statistics.median(hits[REFERENCE])
    for name in names:
        hit = statistics.median(hits[name])
        row: dict[str, Any] = {
            "config": name,
            "hit_ns": round(hit, 1),
            "miss_ns": round(statistics.median(misses[name]), 1),
            "hit_x_function": round(hit / reference_hit, 2),
        }
        if name == REFERENCE:
            row.update({"instances": None, "kept_kib": None, "alive_no_gc": None, "alive": None})
        else:
            kib, alive_refcount, alive_gc = _memory(unbounded[name], instances)
            row.update(
                {
                    "instances": instances,
                    "kept_kib": round(kib, 1),
                    "alive_no_gc": alive_refcount,
                    "alive": alive_gc,
                }
            )
        runs.append(row)
    by_name = {row["config"]: row for row in runs}
    ours = by_name[OURS]
    # The target compares samples taken back to back in the same pass (a noisy neighbour slows
    # both alike), then takes the median of those paired ratios, with their spread in a note.
    paired = sorted(a / b for a, b in zip(hits[OURS], hits[LEAKY], strict=True))
    ratios = {
        "servertune hit / lru_cache-method hit": statistics.median(paired),
        "methodtools hit / servertune hit": by_name["methodtools"]["hit_ns"] / ours["hit_ns"],
        "cachetools hit / servertune hit": by_name["cachetools"]["hit_ns"] / ours["hit_ns"],
        "servertune hit / lru_cache-function hit": ours["hit_x_function"],
    }
    return Report(
        scenario="method-cache",
        runs=runs,
        ratios={k: round(v, 3) for k, v in ratios.items()},
        targets=[
            Target(
                "servertune hit <= lru_cache on a method",
                ratios["servertune hit / lru_cache-method hit"],
                "<=",
                1.0,
            ),
            Target(
                "methodtools hit / servertune hit",
                ratios["methodtools hit / servertune hit"],
                ">=",
                SEVERAL,
            ),
            Target(
                "cachetools hit / servertune hit",
                ratios["cachetools hit / servertune hit"],
                ">=",
                SEVERAL,
            ),
            Target(
                f"servertune instances alive after dropping {instances}",
                float(ours["alive"]),
                "==",
                0.0,
            ),
        ],
        notes=[
            (
                f"hit_ns/miss_ns: median of {repeats} interleaved samples of {calls} calls; "
                f"caches of {MAXSIZE} entries; misses include LRU eviction"
            ),
            (
                f"kept_kib/alive: {instances} instances created, called once and dropped, with "
                "unbounded caches; alive_no_gc counts survivors before the cycle collector runs "
                "(sampled 1 in 100)"
            ),
            (
                f"servertune hit / lru_cache-method hit: median of {len(paired)} same-pass "
                f"ratios, spread {paired[0]:.3f}-{paired[-1]:.3f}"
            ),
            f"took {time.perf_counter() - start:.1f} s",
        ],
        versions={dist: dist_version(dist) for dist in ("servertune", "methodtools", "cachetools")},
    )
