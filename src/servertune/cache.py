"""Method-safe caches: one LRU cache per instance, freed with the instance.

`functools.cache` / `functools.lru_cache` written on a method keys every entry on `self`, so the
one cache shared by the class keeps every instance alive, and short-lived instances never hit
(bench `method-cache`; ruff B019, pylint W1518, cpython#102618). The two helpers here are the fixes B019
points to:

* `cached_method`: a cache per instance. The first access to `obj.method` builds a C
  `functools.lru_cache` around the method and stores it in `obj.__dict__` under the method's
  name, so later calls find it by a plain attribute lookup and a hit runs no Python code at all:
  it costs less than `lru_cache` applied straight to a method (no bound method is built, and
  `self` is not part of the key). The cache reaches its instance through a weak reference, so
  nothing but the instance itself holds the cache and the instance is freed by reference
  counting alone; `cache_info()` / `cache_clear()` are the instance's own.
* `shared_method_cache`: one cache for a method that does not use `self`, i.e. `staticmethod`
  then `lru_cache` in the order that works, with a check that the method really takes
  no `self`.

The cache lives in the instance's `__dict__`, like a `functools.cached_property` value: a class
whose `__slots__` leave out `__dict__` cannot hold it (a clear `TypeError` says so), and
`del obj.method` drops the instance's cache. A copy made by `copy.copy` shares the original's
attributes and so its cache: `del copy.method` gives the copy a cache of its own.
`pickle` cannot store the cache (a function): an instance whose cache was used pickles only
after `del obj.method`.
"""

from __future__ import annotations

import functools
import inspect
import threading
import weakref
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, Self, TypeVar, overload

__all__ = [
    "DEFAULT_MAXSIZE",
    "CachedMethod",
    "MethodCache",
    "SharedMethodCache",
    "cached_method",
    "shared_method_cache",
]

#: Entries per instance unless told otherwise: `functools.lru_cache`'s own default, so swapping
#: `@lru_cache` for `@cached_method` changes where the cache lives, not how large it grows.
DEFAULT_MAXSIZE = 128

#: What `CachedMethod._stored` finds when an instance holds no cache yet.
_ABSENT: Any = object()

P = ParamSpec("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)
S = TypeVar("S")


class MethodCache(Protocol[P, R_co]):
    """What `obj.method` is once cached: the method's call, plus `functools`' cache controls."""

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co:
        """Call the method, or return the cached result for these arguments."""
        ...

    def cache_info(self) -> functools._CacheInfo:
        """Hits, misses, maxsize and current size of this cache."""
        ...

    def cache_clear(self) -> None:
        """Empty this cache and reset its statistics."""
        ...


class SharedMethodCache(Protocol[P, R_co]):
    """The descriptor `shared_method_cache` returns: `Class.method` and `obj.method` alike."""

    def __get__(self, instance: object, owner: type[Any] | None = None) -> MethodCache[P, R_co]:
        """The shared cache, whatever it is reached through."""
        ...


class CachedMethod(Generic[S, P, R]):
    """The descriptor `cached_method` puts on the class; `obj.method` is its per-instance cache."""

    # Copied from the method by functools.update_wrapper, so help() and docs tools see it.
    __name__: str
    __wrapped__: Callable[..., Any]

    def __init__(self, func: Callable[Concatenate[S, P], R], maxsize: int | None, typed: bool):
        if isinstance(func, staticmethod | classmethod):
            raise TypeError(
                f"cached_method caches per instance, so it needs a plain method, not a "
                f"{type(func).__name__}; for a method that does not use self use shared_method_cache"
            )
        if not callable(func):
            raise TypeError(f"cached_method needs a function; got {func!r}")
        if inspect.iscoroutinefunction(func):
            # lru_cache would cache the coroutine object, which can be awaited only once.
            raise TypeError(f"cached_method cannot cache the coroutine function {func!r}")
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            # The cached generator is exhausted after its first use: `[1]`, then `[]` forever.
            raise TypeError(
                f"cached_method cannot cache the generator function {func!r}; "
                "return a list or tuple instead"
            )
        if maxsize is not None and (not isinstance(maxsize, int) or maxsize < 0):
            raise TypeError(f"maxsize must be None or an integer >= 0; got {maxsize!r}")
        self.func = func
        self.maxsize = maxsize
        self.typed = typed
        self.attrname: str = getattr(func, "__name__", "method")
        self.private_name = f"__cached_method_{self.attrname}"
        self.qualname: str = getattr(func, "__qualname__", self.attrname)
        if not _defined_in_class(func):
            raise TypeError(self._not_in_class())
        self._lock = threading.Lock()
        self._probing = threading.local()
        functools.update_wrapper(self, func)

    def _not_in_class(self) -> str:
        return (
            f"cached_method caches a method per instance, but {self.qualname} is not defined "
            "in a class body (and its first parameter is not named self); for a plain "
            "function use functools.lru_cache"
        )

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._owner = owner
        self.attrname = name
        # Where the cache lives when this method is reached through super() from a subclass
        # that overrides it: the public name then belongs to the subclass's own method.
        self.private_name = f"__cached_method_{owner.__qualname__}.{name}"

    @overload
    def __get__(self, instance: None, owner: type[Any] | None = None) -> Self: ...
    @overload
    def __get__(self, instance: S, owner: type[Any] | None = None) -> MethodCache[P, R]: ...
    def __get__(self, instance: S | None, owner: type[Any] | None = None) -> Any:
        """The instance's cache, built and stored on first access (class access: the descriptor)."""
        if instance is None:
            return self
        if getattr(self._probing, "active", False):
            return _ABSENT  # `_stored` asking: the instance holds no cache under this name yet
        # Reached on the first access only (later ones find the cache in the instance's
        # dict): hand back a view that holds the instance, so `Obj().method(x)` on a temporary
        # still has its instance when called (the cache itself only holds a weak reference).
        return _Holding(self._cache_of(instance), instance)

    def __call__(self, instance: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        """`Class.method(obj, ...)` works as it does for a plain method."""
        if not hasattr(self, "_owner"):
            raise TypeError(self._not_in_class())
        cache: MethodCache[P, R] = self._cache_of(instance)
        return cache(*args, **kwargs)

    def _cache_of(self, instance: S) -> MethodCache[P, R]:
        if type(instance).__dictoffset__ == 0:
            raise TypeError(
                f"cached_method {self.qualname} keeps its cache in the instance's __dict__, "
                f"but {type(instance).__qualname__} instances have none (__slots__ without "
                "'__dict__'); add '__dict__' to __slots__, or use shared_method_cache if the "
                "method does not depend on self"
            )
        key = self.attrname if self._is_visible_on(type(instance)) else self.private_name
        cache = self._stored(instance, key)
        if cache is _ABSENT:
            with self._lock:  # two threads racing on the first access share one cache
                cache = self._stored(instance, key)
                if cache is _ABSENT:
                    cache = self._new_cache(instance)
                    # object.__setattr__, never `instance.__dict__[key] = ...`: reading
                    # `__dict__` turns the instance's inline attribute values into a real dict,
                    # and every later `obj.method` lookup then costs more (bench method-cache).
                    # It also bypasses a frozen class's __setattr__, as cached_property does.
                    object.__setattr__(instance, key, cache)
        return cache  # type: ignore[return-value]

    def _stored(self, instance: S, key: str) -> object:
        """The cache `instance` already holds under `key`, or _ABSENT (no __dict__ read)."""
        self._probing.active = True
        try:
            return getattr(instance, key, _ABSENT)
        finally:
            self._probing.active = False

    def _is_visible_on(self, cls: type[Any]) -> bool:
        # True when `obj.<name>` resolves to this descriptor, i.e. storing the cache under the
        # public name cannot shadow a subclass's override.
        for klass in cls.__mro__:
            if self.attrname in klass.__dict__:
                return klass.__dict__[self.attrname] is self
        return False

    def _new_cache(self, instance: S) -> MethodCache[P, R]:
        func = self.func
        try:
            ref: Callable[[], S | None] = weakref.ref(instance)
        except TypeError:
            # No __weakref__ slot: hold the instance strongly. The instance -> cache -> instance
            # cycle is still freed, by the cycle collector instead of reference counting.
            def ref() -> S:
                return instance

        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            owner = ref()
            if owner is None:
                raise ReferenceError(
                    f"{self.qualname}: the instance this cache belongs to is gone; "
                    "a copy shares its original's cache: `del copy.method` gives it its own"
                )
            return func(owner, *args, **kwargs)

        functools.update_wrapper(call, func)
        wrapper: MethodCache[P, R] = functools.lru_cache(maxsize=self.maxsize, typed=self.typed)(
            call
        )
        return wrapper

    def __repr__(self) -> str:
        return f"<cached_method {self.qualname} maxsize={self.maxsize} typed={self.typed}>"


def _defined_in_class(func: Callable[..., Any]) -> bool:
    """Whether `func` was written in a class body (`Class.f` qualname) or takes `self` first."""
    parts = getattr(func, "__qualname__", "").split(".")
    if len(parts) >= 2 and parts[-2] != "<locals>":
        return True
    try:
        first = next(iter(inspect.signature(func).parameters), None)
    except (TypeError, ValueError):
        return False
    return first == "self"


class _Holding:
    """An instance's cache plus a strong reference to the instance, for the first access."""

    __slots__ = ("__weakref__", "_cache", "_instance")

    def __init__(self, cache: MethodCache[..., Any], instance: object) -> None:
        self._cache = cache
        self._instance = instance

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._cache(*args, **kwargs)

    def cache_info(self) -> functools._CacheInfo:
        return self._cache.cache_info()

    def cache_clear(self) -> None:
        self._cache.cache_clear()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cache, name)  # __wrapped__, __name__, __doc__, ...

    def __repr__(self) -> str:
        return repr(self._cache)


@overload
def cached_method(func: Callable[Concatenate[S, P], R], /) -> CachedMethod[S, P, R]: ...
@overload
def cached_method(
    *, maxsize: int | None = DEFAULT_MAXSIZE, typed: bool = False
) -> Callable[[Callable[Concatenate[S, P], R]], CachedMethod[S, P, R]]: ...
def cached_method(
    func: Callable[Concatenate[S, P], R] | None = None,
    /,
    *,
    maxsize: int | None = DEFAULT_MAXSIZE,
    typed: bool = False,
) -> CachedMethod[S, P, R] | Callable[[Callable[Concatenate[S, P], R]], CachedMethod[S, P, R]]:
    """Cache a method per instance: `@cached_method` or `@cached_method(maxsize=128, typed=False)`.

    Each instance gets its own `functools.lru_cache` (thread-safe like it), built on first access
    and freed with the instance. `obj.method.cache_info()` and `obj.method.cache_clear()` act on
    that instance's cache only. Arguments must be hashable; `self` need not be.
    """
    if func is None:

        def decorate(f: Callable[Concatenate[S, P], R]) -> CachedMethod[S, P, R]:
            return CachedMethod(f, maxsize, typed)

        return decorate
    if isinstance(func, int) and not isinstance(func, bool):
        raise TypeError(f"write @cached_method(maxsize={func}), not @cached_method({func})")
    return CachedMethod(func, maxsize, typed)


@overload
def shared_method_cache(func: Callable[P, R], /) -> SharedMethodCache[P, R]: ...
@overload
def shared_method_cache(
    *, maxsize: int | None = DEFAULT_MAXSIZE, typed: bool = False
) -> Callable[[Callable[P, R]], SharedMethodCache[P, R]]: ...
def shared_method_cache(
    func: Callable[P, R] | None = None,
    /,
    *,
    maxsize: int | None = DEFAULT_MAXSIZE,
    typed: bool = False,
) -> SharedMethodCache[P, R] | Callable[[Callable[P, R]], SharedMethodCache[P, R]]:
    """One cache, shared by the class and all instances, for a method that does not use `self`.

    `staticmethod(lru_cache(f))`, in that order (lru_cache's wrapper is not a
    staticmethod, so `lru_cache` outside `staticmethod` binds `self` again). A function whose
    first parameter is named `self` is refused: sharing would key on, and keep, every instance.
    """
    if func is None:

        def decorate(f: Callable[P, R]) -> SharedMethodCache[P, R]:
            return _shared(f, maxsize, typed)

        return decorate
    if isinstance(func, int) and not isinstance(func, bool):
        raise TypeError(f"write @shared_method_cache(maxsize={func}), not ({func})")
    return _shared(func, maxsize, typed)


def _shared(func: Callable[P, R], maxsize: int | None, typed: bool) -> SharedMethodCache[P, R]:
    if isinstance(func, classmethod):
        raise TypeError(
            "shared_method_cache caches a function that uses neither self nor cls; "
            "for a classmethod write @classmethod above @functools.lru_cache"
        )
    plain = func.__func__ if isinstance(func, staticmethod) else func
    if inspect.iscoroutinefunction(plain):
        raise TypeError(f"shared_method_cache cannot cache the coroutine function {plain!r}")
    if inspect.isgeneratorfunction(plain) or inspect.isasyncgenfunction(plain):
        raise TypeError(
            f"shared_method_cache cannot cache the generator function {plain!r}; "
            "return a list or tuple instead"
        )
    try:
        parameters = list(inspect.signature(plain).parameters)
    except (TypeError, ValueError):
        parameters = []
    if parameters[:1] == ["self"]:
        raise TypeError(
            f"shared_method_cache: {getattr(plain, '__qualname__', plain)!r} takes self, so one "
            "shared cache would key on every instance and keep it alive; use cached_method"
        )
    cache = functools.lru_cache(maxsize=maxsize, typed=typed)(plain)
    shared: SharedMethodCache[P, R] = staticmethod(cache)  # type: ignore[assignment]
    return shared
