"""The Plan: every derived number declared once, as a field with its unit; reasons beside them.

A derived field is declared with `derived(unit)`. Its unit is field metadata, its display order
is the field order, and the reason is whatever the one rule that derives it said
(`servertune.sizing.rules`). Nothing else lists the names.
"""

# No `from __future__ import annotations` here: Pydantic would evaluate each of the Plan's ~95
# string annotations when the class is created, on every run (0.5 ms of `servertune gen`'s
# import, -X importtime, bytecode cached).
import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from servertune.machine import Machine
from servertune.workload import Workload

__all__ = [
    "Derivation",
    "Forced",
    "Plan",
    "PlanError",
    "PlanField",
    "Socket",
    "SocketLayout",
    "derived",
    "host_port",
]


class PlanError(ValueError):
    """The workload is valid field by field but cannot be served (e.g. memory for no worker).

    The message starts with the workload field at fault; the CLI maps it to its flag.
    """


def host_port(host: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int) -> str:
    """`127.0.0.1:8001` or `[::1]:8001`: IPv6 needs brackets wherever a port follows."""
    shown = f"[{host}]" if isinstance(host, ipaddress.IPv6Address) else str(host)
    return f"{shown}:{port}"


#: `per-worker`: one socket per worker behind nginx least_conn; `shared`: every worker accepts
#: from one socket. Which one uWSGI gets is the plan's `socket_layout`.
SocketLayout = Literal["per-worker", "shared"]


class Socket(BaseModel):
    """One app-server socket: a loopback/private TCP port or a unix socket path.

    Built by the sizing rules from a validated Workload, so they build it with `tcp()`/`unix()`
    (no validation) and its validator is deferred (`defer_build`) to a first `Socket(...)`:
    a cold `gen` never pays for it.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    kind: Literal["tcp", "unix"]
    host: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None
    port: int | None = None
    path: str | None = None

    @classmethod
    def tcp(cls, host: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int) -> "Socket":
        """A TCP socket from already-validated parts (the Workload's `bind_host`, a port)."""
        return cls.model_construct(kind="tcp", host=host, port=port)

    @classmethod
    def unix(cls, path: str) -> "Socket":
        """A unix socket from an already-validated path (under the Workload's `socket_dir`)."""
        return cls.model_construct(kind="unix", path=path)

    @property
    def address(self) -> str:
        """As uWSGI spells it: `127.0.0.1:8001`, `[::1]:8001` or `/run/app/w0.sock`."""
        if self.kind == "unix":
            assert self.path is not None
            return self.path
        assert self.host is not None
        assert self.port is not None
        return host_port(self.host, self.port)

    @property
    def endpoint(self) -> str:
        """As nginx (`server`, `*_pass`) and gunicorn (`bind`) spell it: `unix:` before a path."""
        return f"unix:{self.path}" if self.kind == "unix" else self.address


# Plain classes, not NamedTuples: `typing.NamedTuple` execs a generated `__new__` when the
# class is created, on every run (0.1 ms each, bench cold-start).
class PlanField:
    """One Plan field as `Plan.fields()` lists it: `unit` is None for the bookkeeping fields
    (workload, machine, reasons, warnings), which are not derived numbers."""

    __slots__ = ("annotation", "explain_only", "name", "unit")

    def __init__(self, name: str, annotation: Any, unit: str | None, explain_only: bool) -> None:
        self.name = name
        self.annotation = annotation
        self.unit = unit
        self.explain_only = explain_only


class _Derived:
    """What `derived()` leaves in the class body until `_declare` turns it into a PlanField."""

    __slots__ = ("explain_only", "unit")

    def __init__(self, unit: str, explain_only: bool) -> None:
        self.unit = unit
        self.explain_only = explain_only


def derived(unit: str, *, explain_only: bool = False) -> Any:
    """Declare a derived Plan field: its unit is metadata, its reason comes from its rule.

    `explain_only` marks a number no config prints (an intermediate or a bound): `explain` shows
    it, and the meta-tests check that every other derived number reaches some target.
    """
    return _Derived(unit, explain_only)


_REQUIRED = object()


class Plan:
    """Every number servertune derives, in display order, each with a unit and a reason.

    A plain frozen class, not a Pydantic model: only `make_plan` builds one, from values the
    rules derived from a validated Workload and Machine, which already have their fields' types
    (tests/test_sizing.py validates plans against the declared types to keep it so; a forced
    value, which comes from outside the rules, is validated by `make_plan`). As a model, its
    ~95 fields cost 3-5 ms of every `servertune` run to collect, even with the validator
    deferred (bench cold-start). The field table is `Plan.fields()`, read from the class body.
    """

    workload: Workload
    machine: Machine

    processes: int = derived("processes")
    cores_per_process: float = derived("cores", explain_only=True)
    threads: int = derived("threads per process")
    cpu_threads: int = derived("threads", explain_only=True)
    slow_call_threads: int = derived("threads", explain_only=True)
    ceiling_rps: float = derived("req/s", explain_only=True)
    sockets: tuple[Socket, ...] = derived("sockets")
    shared_socket: Socket = derived("socket")
    socket_layout: SocketLayout = derived("layout")
    thunder_lock: bool = derived("yes/no")
    gunicorn_worker_class: str | None = derived("worker class")
    backlog: int = derived("connections")
    shared_backlog: int = derived("connections")
    somaxconn: int = derived("connections", explain_only=True)
    nginx_keepalive_timeout_s: int = derived("s")
    request_timeout_s: int = derived("s")
    graceful_timeout_s: int = derived("s")
    nginx_read_timeout_s: int = derived("s")
    upstream_keepalive_timeout_s: int = derived("s")
    gunicorn_keepalive_s: int = derived("s")
    max_requests: int = derived("requests")
    max_requests_jitter: int = derived("requests")
    reload_on_rss_mb: int | None = derived("MiB")
    nginx_worker_processes: int = derived("processes")
    nginx_worker_connections: int = derived("connections")
    upstream_zone_kb: int = derived("KiB")
    upstream_keepalive_connections: int = derived("connections")
    max_fails: int = derived("errors")
    fail_timeout_s: int = derived("s")
    max_body_mb: int = derived("MiB")
    access_log_buffer_kb: int = derived("KiB")
    access_log_flush_s: int = derived("s")
    forwarded_allow_ips: str = derived("addresses")
    buffer_size: int = derived("bytes")
    limit_request_line: int = derived("bytes")
    limit_request_fields: int = derived("headers")
    limit_request_field_size: int = derived("bytes")
    socket_mode: str | None = derived("mode")
    socket_umask: str | None = derived("umask")
    # Several app hosts behind one nginx (rules/hosts.py).
    upstream_hosts: tuple[str, ...] = derived("hosts")
    upstream_weights: tuple[int, ...] = derived("weights")
    upstream_connect_timeout_s: int = derived("s")
    host_max_fails: int = derived("errors")
    host_fail_timeout_s: int = derived("s")
    next_upstream_tries: int = derived("tries")
    next_upstream_timeout_s: int = derived("s")
    # The load balancer in front of nginx, as `gen haproxy` writes it (rules/balancer.py).
    lb_client_idle_s: int = derived("s")
    lb_pool_idle_s: int = derived("s")
    lb_server_timeout_s: int = derived("s")
    lb_connect_timeout_s: int = derived("s")
    lb_reuse: str = derived("strategy")
    lb_app_reuse: str | None = derived("strategy")
    lb_retries: int = derived("resends")
    lb_retry_on: tuple[str, ...] = derived("conditions")
    lb_per_try_timeout_s: int = derived("s")
    lb_maxconn: int = derived("connections")
    lb_server_maxconn: tuple[int, ...] | None = derived("requests per server")
    lb_server_pool: int | None = derived("connections")
    lb_pool_low_fd_ratio: int | None = derived("%")
    lb_pool_high_fd_ratio: int | None = derived("%")
    lb_queue_timeout_ms: int | None = derived("ms")
    lb_weights: tuple[int, ...] = derived("weights")
    lb_threads: int | None = derived("threads")
    # Kubernetes (rules/cluster.py).
    cpu_limit_cores: int = derived("cores")
    python_cpu_count: int = derived("cores")
    app_memory_mb: int | None = derived("MiB")
    nginx_cpu_millicores: int = derived("millicores")
    nginx_memory_mb: int = derived("MiB")
    hpa_target_cpu_percent: int = derived("%")
    hpa_container_metric: bool = derived("yes/no")
    pods_for_peak: int | None = derived("pods", explain_only=True)
    hpa_min_replicas: int = derived("pods")
    hpa_max_replicas: int = derived("pods")
    pdb_max_unavailable: int = derived("pods")
    rollout_max_surge: int = derived("pods")
    rollout_max_unavailable: int = derived("pods")
    readiness_period_s: int = derived("s")
    readiness_failure_threshold: int = derived("probes")
    probe_timeout_s: int = derived("s")
    liveness_period_s: int = derived("s")
    liveness_failure_threshold: int = derived("probes")
    prestop_sleep_s: int = derived("s")
    app_prestop_sleep_s: int = derived("s")
    termination_grace_period_s: int = derived("s")
    native_sleep: bool = derived("yes/no")
    # ASGI apps (interface = 'asgi'): an event loop per process. None where a WSGI plan has none.
    loop_ms: float | None = derived("ms", explain_only=True)
    asgi_capacity_rps: float | None = derived("req/s", explain_only=True)
    granian_capacity_rps: float | None = derived("req/s", explain_only=True)
    admission_wait_ms: float | None = derived("ms", explain_only=True)
    admitted_per_process: int | None = derived("requests", explain_only=True)
    in_service_per_process: int | None = derived("requests")
    admission_limit: int | None = derived("requests")
    executor_threads: int | None = derived("threads per process", explain_only=True)
    limit_concurrency: int | None = derived("connections")
    gunicorn_asgi_worker: str | None = derived("worker class")
    asgi_keepalive_s: int | None = derived("s")
    asgi_max_requests: int | None = derived("requests")
    uvicorn_listener_nodelay: bool | None = derived("yes/no")
    granian_blocking_threads: int = derived("threads per process")
    granian_backpressure: int = derived("requests")
    granian_max_rss_mb: int | None = derived("MiB")

    reasons: dict[str, str]
    warnings: tuple[str, ...] = ()

    def __init__(self, **values: Any) -> None:
        unknown = sorted(set(values) - set(_FIELDS))
        missing = [n for n in _FIELDS if n not in values and _DEFAULTS[n] is _REQUIRED]
        if unknown or missing:
            raise TypeError(f"Plan: unknown {unknown}, missing {missing}")
        state = self.__dict__
        for name in _FIELDS:
            state[name] = values[name] if name in values else _DEFAULTS[name]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Plan is frozen: cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Plan is frozen: cannot delete {name}")

    def __eq__(self, other: object) -> bool:
        return type(other) is Plan and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # reasons is a dict, as in the model it was

    def __repr__(self) -> str:
        return f"Plan({', '.join(f'{n}={v!r}' for n, v in self.__dict__.items())})"

    def replace(self, **changes: Any) -> "Plan":
        """A copy with `changes` (unvalidated, as `model_copy(update=...)` was for the model)."""
        return Plan(**{**self.__dict__, **changes})

    @classmethod
    def fields(cls) -> Mapping[str, PlanField]:
        """Every field, in declaration order: the derived numbers and the bookkeeping."""
        return _FIELDS

    @classmethod
    def derived_names(cls) -> list[str]:
        """The derived fields, in display order."""
        return _DERIVED_NAMES

    @classmethod
    def explain_only(cls, name: str) -> bool:
        """Whether a derived number is shown by `explain` only, never printed into a config."""
        return _FIELDS[name].explain_only

    @classmethod
    def unit(cls, name: str) -> str:
        """The unit a derived field is declared with."""
        unit = _FIELDS[name].unit
        if unit is None:
            raise KeyError(name)
        return unit

    @classmethod
    def validated(cls, values: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
        """`values` with those of `names` validated against their fields' types (by Pydantic,
        errors and coercions as a model of these fields gives them)."""
        from pydantic import create_model

        model = create_model(  # type: ignore[call-overload]
            "Plan",
            __config__=ConfigDict(arbitrary_types_allowed=True),
            **{name: (_FIELDS[name].annotation, ...) for name in names},
        )
        checked = model.model_validate({name: values[name] for name in names})
        return {**values, **dict(checked)}

    @property
    def units(self) -> dict[str, str]:
        """Unit of every derived number, by name."""
        return {name: self.unit(name) for name in self.derived_names()}

    def value(self, name: str) -> Any:
        """A derived number as JSON-ready data: sockets become their addresses."""
        value: Any = getattr(self, name)
        if name == "sockets":
            return [s.address for s in self.sockets]
        if isinstance(value, tuple):
            return list(value)
        return value.address if isinstance(value, Socket) else value

    def rows(self) -> list[tuple[str, str, str, str]]:
        """(name, value, unit, reason) for every derived number, in declaration order."""
        rows = []
        for name in self.derived_names():
            value = self.value(name)
            if isinstance(value, list):
                shown = ", ".join(str(v) for v in value) or "-"
            elif isinstance(value, float):
                shown = f"{value:.1f}"
            else:
                shown = "-" if value is None else str(value)
            rows.append((name, shown, self.unit(name), self.reasons[name]))
        return rows

    def to_json(self) -> dict[str, Any]:
        """The plan for machines: the resolved workload and each number with its unit and reason."""
        numbers = {
            name: {"value": self.value(name), "unit": self.unit(name), "reason": self.reasons[name]}
            for name in self.derived_names()
        }
        return {
            "workload": self.workload.model_dump(mode="json"),
            "machine": self.machine.model_dump(mode="json"),
            "plan": numbers,
            "warnings": list(self.warnings),
        }


def _declare(cls: type) -> tuple[dict[str, PlanField], dict[str, Any]]:
    """The field table from the class body (annotations in order, `derived()` or a default),
    and each field's default (`_REQUIRED` for none); the class keeps no field attributes, so
    a field never set is an AttributeError, not its declaration."""
    fields: dict[str, PlanField] = {}
    defaults: dict[str, Any] = {}
    for name, annotation in cls.__annotations__.items():
        declared = cls.__dict__.get(name, _REQUIRED)
        if isinstance(declared, _Derived):
            fields[name] = PlanField(name, annotation, declared.unit, declared.explain_only)
            defaults[name] = _REQUIRED
        else:
            fields[name] = PlanField(name, annotation, None, False)
            defaults[name] = declared
        if name in cls.__dict__:
            delattr(cls, name)
    return fields, defaults


_FIELDS, _DEFAULTS = _declare(Plan)
_DERIVED_NAMES = [name for name, field in _FIELDS.items() if field.unit is not None]


# A NamedTuple, not a frozen dataclass: every `servertune` run creates this class, and a
# dataclass execs its generated methods at creation, ~0.5 ms more each (bench cold-start).
class Forced(NamedTuple):
    """A value imposed on one derived number, with its own reason ("forced by the benchmark: ...").

    The rules still run: every number derived *from* a forced one (zone sizes, connection
    counts, ...) follows it, so a baseline plan is as consistent as servertune's own.
    """

    value: Any
    reason: str


class Derivation:
    """The numbers derived so far, in rule order; forced values replace what a rule derived."""

    def __init__(self, forced: Mapping[str, Forced] | None = None) -> None:
        self.forced = dict(forced or {})
        unknown = sorted(set(self.forced) - set(Plan.derived_names()))
        if unknown:
            raise PlanError(f"forced: {', '.join(unknown)} is not a derived number")
        self.values: dict[str, Any] = {}
        self.reasons: dict[str, str] = {}
        #: Which rule derived each number (the rule module's name), for the docs reference.
        self.origin: dict[str, str] = {}
        self.rule = ""
        self.warnings: list[str] = []

    def put(self, name: str, value: Any, reason: str) -> Any:
        """Record `name` and return the value later rules must use (the forced one, if any)."""
        if name in self.values:
            raise RuntimeError(f"{name} is derived by two rules")
        if name not in Plan.fields():
            raise RuntimeError(f"{name} is not a Plan field")
        if name in self.forced:
            forced = self.forced[name]
            value, reason = forced.value, f"{forced.reason} (the rule: {reason})"
        self.values[name] = value
        self.reasons[name] = reason
        self.origin[name] = self.rule
        return value

    def get_int(self, name: str) -> int:
        """An integer derived by an earlier rule."""
        value = self.values[name]
        assert isinstance(value, int), name
        return value

    def get_float(self, name: str) -> float:
        """A number derived by an earlier rule."""
        value = self.values[name]
        assert isinstance(value, int | float), name
        return float(value)

    def warn(self, message: str) -> None:
        """A plan that can be served but not as asked (shown as `warning:` lines)."""
        self.warnings.append(message)
