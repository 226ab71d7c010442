"""Method caches: hit/miss cost and memory of cached_method vs functools, methodtools, cachetools.

`functools.cache` on a method keys on `self`, so short-lived instances never hit and
every instance stays alive. This scenario times, in one process and one run, a cache hit and a
cache miss through each way of caching a method, next to `functools.lru_cache` on a plain
function (the floor), and counts what N created-and-dropped instances leave behind:

* `lru_cache-function`: `@lru_cache` on a module-level function (reference, not a method);
* `lru_cache-method`: `@lru_cache` straight on a method, the leaky pattern ruff B019 flags;
* `init-pattern`: the usual fix, `self.f = lru_cache(self._f)` in `__init__`;
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
import time
import timeit
import tracemalloc
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from servertune.bench.harness.report import Report, Target
from servertune.bench.harness.scenario import BaseScenario, Level, QuickFull, Results, Run
from servertune.bench.harness.stats import median
from servertune.bench.harness.versions import dist_version

__all__ = ["MethodCache", "MethodCacheSizes"]


@dataclass(frozen=True)
class MethodCacheSizes:
    """Calls per timing sample, interleaved samples per variant, instances in the memory pass."""

    calls: int
    repeats: int
    instances: int


#: calls: a sample takes ~10 ms (timer noise is negligible) yet seven interleaved samples of
#: seven variants stay under a minute; repeats: the median of these is reported (house rule:
#: >= 3 runs); instances: created, called once and dropped in the memory pass.
SIZES = QuickFull(
    quick=MethodCacheSizes(calls=10_000, repeats=3, instances=2_000),
    full=MethodCacheSizes(calls=200_000, repeats=7, instances=20_000),
)
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


class MethodCache(BaseScenario[MethodCacheSizes]):
    """Time hits and misses of every variant, interleaved, then measure N dropped instances."""

    name = "method-cache"
    needs = ("cachetools", "methodtools")
    sizes = SIZES

    def setup(self, run: Run[MethodCacheSizes]) -> None:
        """The timing classes (bounded caches), one instance each."""
        self.started = time.perf_counter()
        timing = _classes(MAXSIZE)
        self.targets: dict[str, Any] = {n: _call_target(n, made) for n, made in timing.items()}

    def configs(self, run: Run[MethodCacheSizes]) -> list[str]:
        """Every variant, the plain-function reference first."""
        return list(self.targets)

    def measure(
        self, run: Run[MethodCacheSizes], config: str, served: Any, level: Level
    ) -> dict[str, Any]:
        """One timing sample of a hit and of a miss (ns per call)."""
        calls = run.size.calls
        obj = self.targets[config]
        call: Callable[[int], int] = obj if config == REFERENCE else obj.f
        call(42)  # warm: the first call is a miss
        spaces = {"o": obj, "f": obj} if config == REFERENCE else {"o": obj}
        stmt = "f(42)" if config == REFERENCE else "o.f(42)"
        hit = _time_ns(stmt, spaces, calls)
        # Misses: each call a new argument (the LRU evicts as it goes). `next(n)` costs the
        # same for every variant.
        counter = iter(range(10**9 + run.repeat * calls, 10**9 + (run.repeat + 1) * calls))
        miss_stmt = "f(next(n))" if config == REFERENCE else "o.f(next(n))"
        miss = _time_ns(miss_stmt, {**spaces, "n": counter}, calls)
        return {"config": config, "hit_ns": hit, "miss_ns": miss}

    def summarize(self, run: Run[MethodCacheSizes], results: Results) -> Report:
        """Median costs, then the memory pass (a count, not a timing), ratios and targets."""
        runs = self._rows(run, results)
        by_name = {row["config"]: row for row in runs}
        ours = by_name[OURS]
        # The target compares samples taken back to back in the same pass (a noisy neighbour
        # slows both alike), then takes the median of those paired ratios, spread in a note.
        paired = sorted(
            a["hit_ns"] / b["hit_ns"]
            for a, b in zip(results.rows(OURS), results.rows(LEAKY), strict=True)
        )
        ratios = {
            "servertune hit / lru_cache-method hit": median(paired),
            "methodtools hit / servertune hit": by_name["methodtools"]["hit_ns"] / ours["hit_ns"],
            "cachetools hit / servertune hit": by_name["cachetools"]["hit_ns"] / ours["hit_ns"],
            "servertune hit / lru_cache-function hit": ours["hit_x_function"],
        }
        return Report(
            scenario=self.name,
            runs=runs,
            ratios={k: round(v, 3) for k, v in ratios.items()},
            targets=_targets(ratios, run.size.instances, float(ours["alive"])),
            notes=self._notes(run, paired),
            versions={
                dist: dist_version(dist) for dist in ("servertune", "methodtools", "cachetools")
            },
        )

    def _rows(self, run: Run[MethodCacheSizes], results: Results) -> list[dict[str, Any]]:
        """Per cache: median hit and miss costs, the hit over a plain function's, and (but for
        the function) what `instances` dropped instances leave behind."""
        instances = run.size.instances
        unbounded = _classes(None)
        runs: list[dict[str, Any]] = []
        reference_hit = results.median_of(REFERENCE, "hit_ns")
        for name in self.configs(run):
            hit = results.median_of(name, "hit_ns")
            row: dict[str, Any] = {
                "config": name,
                "hit_ns": round(hit, 1),
                "miss_ns": round(results.median_of(name, "miss_ns"), 1),
                "hit_x_function": round(hit / reference_hit, 2),
            }
            if name == REFERENCE:
                row.update(
                    {"instances": None, "kept_kib": None, "alive_no_gc": None, "alive": None}
                )
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
        return runs

    def _notes(self, run: Run[MethodCacheSizes], paired: list[float]) -> list[str]:
        """How the costs and the memory were measured, the paired ratios' spread, the time."""
        return [
            (
                f"hit_ns/miss_ns: median of {run.repeats} interleaved samples of "
                f"{run.size.calls} calls; caches of {MAXSIZE} entries; misses include LRU "
                "eviction"
            ),
            (
                f"kept_kib/alive: {run.size.instances} instances created, called once and "
                "dropped, with unbounded caches; alive_no_gc counts survivors before the cycle "
                "collector runs (sampled 1 in 100)"
            ),
            (
                f"servertune hit / lru_cache-method hit: median of {len(paired)} same-pass "
                f"ratios, spread {paired[0]:.3f}-{paired[-1]:.3f}"
            ),
            f"took {time.perf_counter() - self.started:.1f} s",
        ]


def _targets(ratios: dict[str, float], instances: int, alive: float) -> list[Target]:
    """servertune's cache hits no slower than lru_cache on a method, several times faster than
    methodtools' and cachetools', and keeps no dropped instance alive."""
    return [
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
            alive,
            "==",
            0.0,
        ),
    ]
