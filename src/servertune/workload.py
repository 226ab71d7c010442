"""The Workload model: every input field, its unit, range and description, declared once.

The CLI options, the validation messages and the docs reference table are all derived from the
`Field` declarations below, so a range or a description changes in exactly one place.
"""

from __future__ import annotations

import inspect
import ipaddress
import keyword
import math
import re
import typing
import unicodedata
from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

__all__ = [
    "FIELD_ALLOWED",
    "Workload",
    "WorkloadError",
    "describe_allowed",
    "describe_kind",
]

# Allow-lists for values that reach a config file. Anchored with \A ... \Z (never `$`, which
# also matches before a trailing newline) and kept to characters that mean nothing to uWSGI's
# ini expansion (`$(`, `%(`, `@(`), nginx (`;`, `{`, `#`, quotes) or Python.
# Python identifiers, Unicode ones included (`módulo:app` imports: PEP 3131); `\w` is Unicode
# here, and `_no_keywords` holds each part to str.isidentifier (which refuses `²`, a `\w`).
APP_PATTERN = r"\A[^\W\d]\w*(\.[^\W\d]\w*)*:[^\W\d]\w*\Z"
PATH_PATTERN = r"\A(/[A-Za-z0-9_][A-Za-z0-9_.-]*)+/?\Z|\A/\Z"
USER_PATTERN = r"\A[a-z_][a-z0-9_-]{0,31}\Z"
# `/static/=/srv/app/static[,/media/=/srv/app/media]`: URL prefixes (ending in /) and the
# absolute directories nginx serves them from; no dot segments (a segment starts with a
# letter, digit or _), no spaces, quotes, `;` or braces.
_SEGMENTS = r"(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)+"
STATIC_PATTERN = rf"\A{_SEGMENTS}/={_SEGMENTS}(?:,{_SEGMENTS}/={_SEGMENTS})*\Z"
# nginx's own rules (ngx_http_core_module.c, ngx_http_core_server_name; docs "Server names"):
# a `*` only as a whole first label (`*.example.com`, at least 3 characters, `*` then `.`) or a
# whole last one (`www.example.*`); a leading `.` (`.example.com`) means the name and every
# subdomain. `*`, `*example.com` or `w*.example.com` make `nginx -t` fail ("server name "*" is
# invalid", "invalid server name or wildcard"). No regex names (`~`): free text in a config.
_HOST_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = rf"{_HOST_LABEL}(\.{_HOST_LABEL})*"
SERVER_NAME_PATTERN = rf"\A(_|\*\.{_HOST}|\.{_HOST}|{_HOST}(\.\*)?)\Z"


class AllowList:
    """A text field's allow-list: at most `max_length` characters matching `pattern`.

    Checked by `Workload._as_strict_as_the_flags` (the validator every field already has), not
    by Pydantic's `StringConstraints(pattern=...)`: Pydantic compiles each pattern whenever the
    class is created, on every run of every command (about 1 ms for the nine, bench cold-start),
    where `re` compiles one here only when a value for it is given. The length is checked first,
    so a huge value is refused before any pattern reads it.
    """

    __slots__ = ("max_length", "pattern")

    def __init__(self, pattern: str, max_length: int | None = None) -> None:
        self.pattern = pattern
        self.max_length = max_length

    def allows(self, value: str) -> bool:
        """Whether `value` is short enough and matches the pattern."""
        if self.max_length is not None and len(value) > self.max_length:
            return False
        return re.match(self.pattern, value) is not None


AppPath = Annotated[str, AllowList(APP_PATTERN, max_length=200)]


def _scripts(word: str) -> set[str]:
    """The scripts of a word's letters, by the first word of each one's Unicode name (LATIN,
    CYRILLIC, GREEK, ...); `_` and digits belong to none."""
    return {unicodedata.name(c, "?").split()[0] for c in word if c.isalpha()}


DirPath = Annotated[str, AllowList(PATH_PATTERN, max_length=200)]
UserName = Annotated[str, AllowList(USER_PATTERN)]
ServerName = Annotated[str, AllowList(SERVER_NAME_PATTERN, max_length=253)]
# Kubernetes names. An RFC 1035 label: lower-case letters, digits and '-', starting
# with a letter (a Service name must), at most 63: it is also a valid RFC 1123 label and label value.
K8S_NAME_PATTERN = r"\A[a-z]([a-z0-9-]{0,61}[a-z0-9])?\Z"
# An image reference: [registry[:port]/]path[:tag]. No digest: '@' is not an allow-listed value.
IMAGE_PATTERN = (
    r"\A[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)*"
    r"(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?\Z"
)
# An HTTP path without query, fragment or percent-escapes: what a probe's httpGet.path needs.
PROBE_PATH_PATTERN = r"\A/[A-Za-z0-9._~/-]{0,200}\Z"
# Kubernetes minor versions whose schemas the validator servertune tests with ships.
K8S_VERSION_PATTERN = r"\A1\.(2[5-9]|3[0-7])\Z"
# One app host behind nginx: IPv4, [IPv6] or a DNS name, a port, an optional weight (its cores).
UPSTREAM_PATTERN = (
    r"\A(?P<host>[0-9.]+|\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*):(?P<port>[0-9]{1,5})(=(?P<weight>[0-9]{1,4}))?\Z"
)
#: At most this many app hosts in one upstream (the zone is sized per server).
MAX_UPSTREAM_HOSTS = 256

K8sName = Annotated[str, AllowList(K8S_NAME_PATTERN)]
ImageRef = Annotated[str, AllowList(IMAGE_PATTERN, max_length=255)]
ProbePath = Annotated[str, AllowList(PROBE_PATH_PATTERN)]
K8sVersion = Annotated[str, AllowList(K8S_VERSION_PATTERN)]
StaticDirs = Annotated[str, AllowList(STATIC_PATTERN, max_length=2000)]

# What a user may write for fields whose range is not a number: shown in errors and the docs.
FIELD_ALLOWED: dict[str, str] = {
    "cores": "an integer from 1 to 1024, or 'auto'",
    "app": "module:callable made of Python identifiers (e.g. 'mysite.wsgi:application')",
    "app_dir": "an absolute path of letters, digits and . _ - (no '..', spaces or quotes)",
    "socket_dir": "an absolute path of letters, digits and . _ - (no '..', spaces or quotes)",
    "bind_host": "a loopback or private IPv4/IPv6 address without a zone id (never 0.0.0.0 or ::)",
    "listen_host": "an IPv4 or IPv6 address without a zone id (0.0.0.0 or :: for every interface)",
    "lb_listen_host": "an IPv4 or IPv6 address without a zone id (0.0.0.0 or :: for every interface)",
    "nginx_user": "a POSIX user name (lower-case letters, digits, '_' and '-', at most 32)",
    "server_name": "'_' or a DNS host name (letters, digits, '-', '.'), as nginx takes it: a "
    "wildcard only as a whole first or last label ('*.example.com', 'www.example.*') or a "
    "leading '.' ('.example.com')",
    "app_name": "an RFC 1123/1035 label: a-z, 0-9 and '-', starting with a letter, at most 63",
    "namespace": "an RFC 1123/1035 label: a-z, 0-9 and '-', starting with a letter, at most 63",
    "app_image": "an image reference [registry[:port]/]name[:tag] (lower-case path, no digest)",
    "nginx_image": "an image reference [registry[:port]/]name[:tag] (lower-case path, no digest)",
    "probe_path": "an absolute HTTP path of letters, digits and . _ ~ / - (no query, no '..')",
    "k8s_layout": "'sidecar' (nginx + gunicorn in one pod), 'ingress' (gunicorn alone behind an Ingress) "
    "or 'gateway' (gunicorn alone behind a Gateway API HTTPRoute)",
    "ingress_class": "an RFC 1123/1035 label: a-z, 0-9 and '-', starting with a letter, at most 63",
    "gateway_name": "an RFC 1123/1035 label: a-z, 0-9 and '-', starting with a letter, at most 63",
    "k8s_version": "a Kubernetes minor version from 1.25 to 1.37 (e.g. '1.34')",
    "cpu_limit": "a whole number of cores equal to `cores` (fractional quotas are refused)",
    "upstream": "HOST:PORT[=CORES] items, comma-separated (at most 256; CORES 1-1024 is the weight)",
    "interface": "'wsgi' or 'asgi'",
    "sync_views": "true or false",
    "gil": "'enabled' or 'disabled'",
    "gunicorn_asgi_worker": "'auto', 'native' or 'uvicorn'",
    "static": (
        "/prefix/=/absolute/dir, comma-separated for several; letters, digits and . _ - "
        "(no '..', spaces or quotes), each prefix once"
    ),
}


# How a number may be written as text (a flag, or a quoted TOML value): plain decimal digits, and
# for non-integer fields a fraction and an exponent. Python's int()/float() and Pydantic's lax mode
# also take `1_0` (10), surrounding spaces, a sign and `4.0` for an integer: a typo then
# becomes a different number, so anything else is refused.
INTEGER_TEXT = re.compile(r"\A[0-9]+\Z")
NUMBER_TEXT = re.compile(r"\A([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")


#: The shortest service time a plan is made for: a bare call into a Python WSGI app through a
#: server costs ~10 us, and `measure` never writes less. Below it (1e-300 ms) the plan's
#: ceiling was 2,000,000 req/s and max_requests 600,000,000: numbers no server reaches.
MIN_SERVICE_TIME_MS = 0.01
#: service_time_ms when not given (the field's default, for deriving cpu_fraction from cpu_ms).
DEFAULT_SERVICE_TIME_MS = 100.0
#: The least CPU per request cpu_ms takes: a microsecond, under any call through a server.
MIN_CPU_MS = 0.001


class WorkloadError(ValueError):
    """Bad input: one line naming the field and what it accepts."""


#: The app an ASGI workload serves when none is named (Django's asgi.py exports it).
DEFAULT_ASGI_APP = "asgi:application"

#: The pydantic error type of a reason more exact than what a field accepts in general (a
#: duplicate, two fields that contradict each other): the one-line error shows it as it is.
EXACT_ERROR = "servertune_exact"


_F = TypeVar("_F", bound=Any)


def _exact(field: str, message: str) -> PydanticCustomError:
    return PydanticCustomError(EXACT_ERROR, message, {"field": field})


def _signature_read_once(function: _F) -> _F:
    """Pydantic reads a validator's signature (does it take `info`?) once per field it applies
    to: 44 times for the `*` validator on every run. Read here once; `inspect.signature`
    returns a function's `__signature__` as it is."""
    function.__signature__ = inspect.signature(function)
    return function


class Workload(BaseModel):
    """What the application does, in a few numbers. Every field has a default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cores: int | Literal["auto"] = Field(
        default="auto",
        description="CPU cores the server may use; 'auto' reads cgroup quota and CPU affinity",
        json_schema_extra={"unit": "cores", "ge": 1, "le": 1024},
    )
    service_time_ms: float = Field(
        default=DEFAULT_SERVICE_TIME_MS,
        ge=MIN_SERVICE_TIME_MS,
        le=600_000,
        description="mean wall time of a request inside the app, excluding slow calls (a "
        "mean: Little's law turns it into requests in flight)",
        json_schema_extra={"unit": "ms"},
    )
    cpu_fraction: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="share of the service time that holds the GIL (CPU in Python code); "
        "with cpu_ms set, derived from it (cpu_ms / service_time_ms)",
        json_schema_extra={"unit": "ratio"},
    )
    cpu_ms: float | None = Field(
        default=None,
        ge=MIN_CPU_MS,
        le=600_000,
        description="CPU time one request spends in Python, holding the GIL (`measure` writes "
        "it, taken at concurrency); when set, cpu_fraction is derived from it; unset means "
        "cpu_fraction x service_time_ms",
        json_schema_extra={"unit": "ms"},
    )
    slow_call_ratio: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="share of requests that also wait on a slow external call",
        json_schema_extra={"unit": "ratio"},
    )
    slow_call_ms: float = Field(
        default=10_000.0,
        gt=0,
        le=600_000,
        description="mean time a slow call adds to its request, holding its thread (a mean: "
        "Little's law turns it into threads parked)",
        json_schema_extra={"unit": "ms"},
    )
    request_tail_ms: float | None = Field(
        default=None,
        gt=0,
        le=600_000,
        description="the longest a legitimate request takes, a tail such as the p99.9: the "
        "timeouts let it finish; unset means service_time_ms + slow_call_ms",
        json_schema_extra={"unit": "ms"},
    )
    peak_rps: float | None = Field(
        default=None,
        gt=0,
        le=1_000_000,
        description="peak arrival rate; unset means size for the CPU ceiling",
        json_schema_extra={"unit": "req/s"},
    )
    memory_per_worker_mb: int | None = Field(
        default=None,
        ge=1,
        le=1_048_576,
        description="resident memory of one worker process once warm",
        json_schema_extra={"unit": "MiB"},
    )
    memory_limit_mb: int | None = Field(
        default=None,
        ge=1,
        le=16_777_216,
        description="memory the whole server may use (container limit)",
        json_schema_extra={"unit": "MiB"},
    )
    memory_growth_kb_per_request: float | None = Field(
        default=None,
        ge=0,
        le=1_048_576,
        description="how much one worker's resident memory grows per request once warm "
        "(servertune measure reports it); sets max_requests when above 0",
        json_schema_extra={"unit": "KiB"},
    )
    lb_idle_timeout_s: int = Field(
        default=60,
        ge=1,
        le=4000,
        description="idle timeout of the load balancer in front of nginx (AWS ALB: 60)",
        json_schema_extra={"unit": "s"},
    )
    bind_host: ipaddress.IPv4Address | ipaddress.IPv6Address = Field(
        default=ipaddress.IPv4Address("127.0.0.1"),
        description="address of the app server sockets behind nginx (never a wildcard)",
        json_schema_extra={"unit": "address"},
    )
    listen_host: ipaddress.IPv4Address | ipaddress.IPv6Address = Field(
        default=ipaddress.IPv4Address("127.0.0.1"),
        description="address nginx listens on for clients",
        json_schema_extra={"unit": "address"},
    )
    base_port: int = Field(
        default=8001,
        ge=1024,
        le=65000,
        description="first TCP port of the per-worker app sockets (one port per worker)",
        json_schema_extra={"unit": "port"},
    )
    listen_port: int = Field(
        default=8000,
        ge=1,
        le=65535,
        description="port nginx listens on",
        json_schema_extra={"unit": "port"},
    )
    lb_listen_host: ipaddress.IPv4Address | ipaddress.IPv6Address = Field(
        default=ipaddress.IPv4Address("0.0.0.0"),
        description="address the load balancer `gen haproxy` writes listens on for clients",
        json_schema_extra={"unit": "address"},
    )
    lb_listen_port: int = Field(
        default=80,
        ge=1,
        le=65535,
        description="port the load balancer `gen haproxy` writes listens on",
        json_schema_extra={"unit": "port"},
    )
    socket_dir: DirPath | None = Field(
        default=None,
        description="put the app sockets in this directory as unix sockets instead of TCP ports",
        json_schema_extra={"unit": "path"},
    )
    nginx_user: UserName | None = Field(
        default=None,
        description="user (and same-named group) the nginx workers run as; owns the unix sockets",
        json_schema_extra={"unit": "user"},
    )
    app: AppPath = Field(
        default="wsgi:application",
        description="the WSGI or ASGI callable to serve (see interface; default: Django's "
        "wsgi:application, or asgi:application for interface 'asgi')",
        json_schema_extra={"unit": "module:callable"},
    )
    app_dir: DirPath | None = Field(
        default=None,
        description="directory to change into before importing the app",
        json_schema_extra={"unit": "path"},
    )
    server_name: ServerName = Field(
        default="_",
        description="nginx server_name",
        json_schema_extra={"unit": "host"},
    )
    static: StaticDirs | None = Field(
        default=None,
        description=(
            "URL prefixes nginx serves from directories (alias, cached for good), so the app "
            "server never sees them"
        ),
        json_schema_extra={"unit": "prefix=dir"},
    )
    max_body_mb: int = Field(
        default=10,
        ge=0,
        le=10_240,
        description="largest request body nginx accepts (0 disables the check)",
        json_schema_extra={"unit": "MiB"},
    )
    interface: Literal["wsgi", "asgi"] = Field(
        default="wsgi",
        description="how the server calls the app: 'wsgi' (a thread per request: uwsgi, gunicorn) "
        "or 'asgi' (an event loop per process: uvicorn, gunicorn-asgi); granian serves both",
        json_schema_extra={"unit": "interface"},
    )
    loop_blocking_fraction: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="ASGI: share of the service time that blocks the event loop (Python CPU on "
        "the loop, or a sync call not awaited); unset means cpu_fraction",
        json_schema_extra={"unit": "ratio"},
    )
    off_loop_fraction: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="ASGI: share of a request's CPU run in threads other than the event loop's "
        "(sync_to_async, run_in_executor, Django's per-request threads; `measure` writes it): "
        "the GIL then changes hands within every request, and the plan gives each core more "
        "than one process",
        json_schema_extra={"unit": "ratio"},
    )
    in_flight_limit: int | None = Field(
        default=None,
        ge=1,
        le=1_000_000,
        description="ASGI: the most requests one process holds at once before the loop's time "
        "per request climbs (`measure` drives the app at 1, 2, 4, ... in flight and writes it "
        "when it finds one); each process admits no more; unset means no such limit",
        json_schema_extra={"unit": "requests"},
    )
    sync_views: bool = Field(
        default=False,
        description="ASGI: sync views run through sync_to_async on a thread pool, off the loop "
        "(the pool's size is part of the plan)",
        json_schema_extra={"unit": "flag"},
    )
    gil: Literal["enabled", "disabled"] = Field(
        default="enabled",
        description="whether the app's Python runs with the GIL: 'disabled' only on a "
        "free-threaded build (3.13t+) where sys._is_gil_enabled() stays False while the app "
        "serves; `measure` writes what it saw",
        json_schema_extra={"unit": "GIL"},
    )
    gunicorn_asgi_worker: Literal["auto", "native", "uvicorn"] = Field(
        default="auto",
        description="ASGI on gunicorn (gen gunicorn-asgi): 'native' is gunicorn's own asgi "
        "worker (stable since gunicorn 25.1), 'uvicorn' the worker of the uvicorn-worker "
        "package; 'auto' takes the native one when the installed gunicorn has it",
        json_schema_extra={"unit": "worker class"},
    )

    # --- one machine is not enough: several app hosts, or a Kubernetes Deployment ---
    upstream: tuple[str, ...] = Field(
        default=(),
        description="app hosts nginx balances instead of this machine's sockets (HOST:PORT=CORES,...)",
        json_schema_extra={"unit": "hosts"},
    )
    cpu_limit: float | None = Field(
        default=None,
        gt=0,
        le=1024,
        description="the pod's CPU limit, if already decided; must equal `cores` (unset: = cores)",
        json_schema_extra={"unit": "cores"},
    )
    min_replicas: int = Field(
        default=2,
        ge=1,
        le=1000,
        description="fewest pods the autoscaler keeps (2 or more survives losing one)",
        json_schema_extra={"unit": "pods"},
    )
    max_replicas: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="most pods the autoscaler may run (unset: what peak_rps needs, at least 2 x min)",
        json_schema_extra={"unit": "pods"},
    )
    probe_path: ProbePath = Field(
        default="/healthz",
        description="path the readiness and liveness probes GET through nginx",
        json_schema_extra={"unit": "path"},
    )
    endpoint_propagation_s: int = Field(
        default=10,
        ge=1,
        le=600,
        description="time for a removed pod endpoint to reach every proxy and load balancer",
        json_schema_extra={"unit": "s"},
    )
    k8s_version: K8sVersion = Field(
        default="1.34",
        description="Kubernetes version the manifests are written (and validated) for",
        json_schema_extra={"unit": "version"},
    )
    k8s_layout: Literal["sidecar", "ingress", "gateway"] = Field(
        default="sidecar",
        description="the pod: 'sidecar' runs nginx beside gunicorn (buffering, the drain order, "
        "the plan's nginx); 'ingress' runs gunicorn alone behind an Ingress (one fewer "
        "container; the ingress balances pods, not workers); 'gateway' is 'ingress' with a "
        "Gateway API HTTPRoute instead of the Ingress",
        json_schema_extra={"unit": "layout"},
    )
    ingress_class: K8sName = Field(
        default="nginx",
        description="ingressClassName of the Ingress (k8s_layout 'ingress'); its annotations are "
        "ingress-nginx's",
        json_schema_extra={"unit": "name"},
    )
    gateway_name: K8sName = Field(
        default="gateway",
        description="the Gateway (same namespace) the HTTPRoute attaches to (k8s_layout 'gateway')",
        json_schema_extra={"unit": "name"},
    )
    ingress_keepalive_s: int = Field(
        default=60,
        ge=1,
        le=4000,
        description="how long the ingress controller (or Gateway) keeps an idle connection to a "
        "pod open (ingress-nginx ConfigMap upstream-keepalive-timeout: 60)",
        json_schema_extra={"unit": "s"},
    )
    app_name: K8sName = Field(
        default="app",
        description="name and `app` label of the Deployment, Service, HPA and PDB",
        json_schema_extra={"unit": "name"},
    )
    namespace: K8sName = Field(
        default="default",
        description="Kubernetes namespace of every manifest",
        json_schema_extra={"unit": "name"},
    )
    app_image: ImageRef = Field(
        default="registry.example.com/app:1.0",
        description="container image with the app and gunicorn installed",
        json_schema_extra={"unit": "image"},
    )
    nginx_image: ImageRef = Field(
        default="nginx:1.28",
        description="container image of the nginx beside the app (its STOPSIGNAL must be SIGQUIT)",
        json_schema_extra={"unit": "image"},
    )

    @field_validator("upstream", mode="before")
    @classmethod
    def _split_upstream(cls, value: object) -> object:
        # The flag gives one comma-separated string; a workload file gives a TOML list.
        if isinstance(value, str):
            if not value.strip():
                raise ValueError("empty")
            return tuple(item.strip() for item in value.split(","))
        return value

    @field_validator("upstream")
    @classmethod
    def _upstream_hosts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(value) > MAX_UPSTREAM_HOSTS:
            raise ValueError("too many hosts")
        seen: set[str] = set()
        for item in value:
            match = re.match(UPSTREAM_PATTERN, item)
            if match is None:
                raise ValueError(f"not HOST:PORT[=CORES]: {item!r}")
            host, port, weight = match["host"], int(match["port"]), match["weight"]
            if host.startswith("[") or host.replace(".", "").isdigit():
                ipaddress.ip_address(host.strip("[]"))  # ValueError when not an address
            if not 1 <= port <= 65535 or (weight is not None and not 1 <= int(weight) <= 1024):
                raise ValueError(f"port or weight out of range: {item!r}")
            address = f"{host}:{port}"
            if address in seen:
                raise _exact("upstream", f"{address} is listed twice (one line per app host)")
            seen.add(address)
        return value

    @model_validator(mode="before")
    @classmethod
    def _one_cpu_figure(cls, data: Any) -> Any:
        # Both given only as a dumped Workload has them: the share derived from the same ms.
        if not isinstance(data, dict) or data.get("cpu_ms") is None:
            return data
        cpu, given = _as_number(data["cpu_ms"]), data.get("cpu_fraction")
        service = _as_number(data.get("service_time_ms", DEFAULT_SERVICE_TIME_MS))
        if given is None or cpu is None or service is None or service <= 0:
            return data
        if not math.isclose(_as_number(given) or -1.0, min(1.0, cpu / service)):
            raise _exact(
                "cpu_ms",
                "give cpu_ms or cpu_fraction, not both (cpu_fraction is derived from cpu_ms)",
            )
        return {k: v for k, v in data.items() if k != "cpu_fraction"}

    @model_validator(mode="after")
    def _share_from_cpu_ms(self) -> Workload:
        # CPU per request is the measured quantity; the GIL share every rule reads is derived
        # from it, unrounded (0.3 ms of a 51 ms request is 0.0059, which two decimals cannot
        # hold). Above the service time (threads, or noise at concurrency) the share is 1. Set
        # past the frozen model's guard, and not marked as given: the user gave cpu_ms.
        if self.cpu_ms is not None:
            object.__setattr__(self, "cpu_fraction", min(1.0, self.cpu_ms / self.service_time_ms))
        return self

    @property
    def cpu_ms_per_request(self) -> float:
        """CPU ms one request holds the GIL: cpu_ms, or cpu_fraction x service_time_ms."""
        if self.cpu_ms is not None:
            return self.cpu_ms
        return self.cpu_fraction * self.service_time_ms

    @property
    def cpu_named(self) -> str:
        """The CPU per request as it was given, for a reason's text."""
        if self.cpu_ms is not None:
            return f"cpu_ms {self.cpu_ms:g}"
        return f"{self.service_time_ms:g} ms x cpu_fraction {self.cpu_fraction:g}"

    @model_validator(mode="before")
    @classmethod
    def _app_of_the_interface(cls, data: Any) -> Any:
        # Django's convention for both: wsgi.py and asgi.py beside settings.py export
        # `application`. An ASGI server started on the WSGI module would not serve at all.
        if isinstance(data, dict) and data.get("interface") == "asgi" and "app" not in data:
            return {**data, "app": DEFAULT_ASGI_APP}
        return data

    @model_validator(mode="after")
    def _upstream_is_not_nginx_itself(self) -> Workload:
        listen = self.listen_host
        for item in self.upstream:
            match = re.match(UPSTREAM_PATTERN, item)
            if match is None or int(match["port"]) != self.listen_port:
                continue
            host = match["host"].strip("[]")
            try:
                same = ipaddress.ip_address(host) == listen or (
                    listen.is_unspecified and ipaddress.ip_address(host).is_loopback
                )
            except ValueError:  # a name: only localhost is known to be this machine
                same = host == "localhost" and (listen.is_loopback or listen.is_unspecified)
            if same:
                raise _exact(
                    "upstream",
                    f"{item} is nginx's own listen address (port {self.listen_port} on {self.listen_host}): nginx would "
                    "proxy every request to itself; name the app hosts, or change listen_port",
                )
        if self.upstream and self.k8s_layout != "sidecar":
            raise _exact(
                "upstream",
                f"k8s_layout '{self.k8s_layout}' runs no nginx in the pod, so no upstream hosts to "
                "balance; drop upstream, or use k8s_layout 'sidecar'",
            )
        return self

    @model_validator(mode="after")
    def _tail_not_below_the_mean(self) -> Workload:
        # A tail under the mean of the requests it bounds is a mean given as a tail (or the
        # two fields swapped): timeouts sized from it would cut the typical request.
        if self.request_tail_ms is not None and self.request_tail_ms < self.service_time_ms:
            raise _exact(
                "request_tail_ms",
                f"{_num(self.request_tail_ms)} is below service_time_ms "
                f"{_num(self.service_time_ms)}: a tail (p99.9) is at least the mean",
            )
        return self

    @field_validator("*", mode="before")
    @classmethod
    @_signature_read_once
    def _as_strict_as_the_flags(cls, value: object, info: ValidationInfo) -> object:
        # One validator on every field, not one per rule: each "*" validator is built and
        # inspected once per field (43) when the model is, on every cold start.
        name = info.field_name or ""
        kind = _NUMERIC_KIND.get(name)
        if kind is None:
            return cls._text_as_the_flags_give_it(name, value)
        return cls._plain_number_text(kind, name, value)

    @staticmethod
    def _plain_number_text(kind: type, name: str, value: object) -> object:
        if isinstance(value, bool):
            # TOML `max_body_mb = true` would otherwise pass as the integer 1.
            raise ValueError("a boolean is not a number")
        if isinstance(value, str) and not (value == "auto" and name == "cores"):
            pattern = INTEGER_TEXT if kind is int else NUMBER_TEXT
            if not pattern.match(value):
                raise ValueError("not plain decimal digits")
        if kind is int and isinstance(value, float):
            # TOML `cores = 4.0` is refused like `--cores 4.0`: lax mode would take it as 4.
            raise ValueError("a fraction is not an integer")
        return value

    @classmethod
    def _text_as_the_flags_give_it(cls, name: str, value: object) -> object:
        # A flag is always text (or a switch's True/False); a workload file's TOML values are
        # typed, and Pydantic's lax mode would turn `sync_views = "yes"` into True and
        # `bind_host = 2130706433` into 127.0.0.1. A file is held to what the flags accept.
        if value is None:
            return value
        annotation = cls.model_fields[name].annotation
        if annotation is bool:
            if not isinstance(value, bool):
                raise ValueError("not true or false")
        elif name == "upstream":
            items = value if isinstance(value, list | tuple) else [value]
            if not all(isinstance(item, str) for item in items):
                raise ValueError("not text")
        elif not isinstance(value, str | ipaddress.IPv4Address | ipaddress.IPv6Address):
            raise ValueError("not text")
        allow_list = _ALLOW_LISTS.get(name)
        if allow_list is not None and isinstance(value, str) and not allow_list.allows(value):
            raise ValueError("not in the allow-list")
        return value

    @field_validator("cores")
    @classmethod
    def _cores_in_range(cls, value: int | str) -> int | str:
        if isinstance(value, int) and not 1 <= value <= 1024:
            raise ValueError("out of range")
        return value

    @field_validator("bind_host", "listen_host", "lb_listen_host")
    @classmethod
    def _no_scope(
        cls, value: ipaddress.IPv4Address | ipaddress.IPv6Address
    ) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
        # A zone id ("fe80::1%eth0") is free text: it would carry anything into a config.
        if isinstance(value, ipaddress.IPv6Address) and value.scope_id is not None:
            raise ValueError("scoped address")
        return value

    @field_validator("bind_host")
    @classmethod
    def _not_wildcard(
        cls, value: ipaddress.IPv4Address | ipaddress.IPv6Address
    ) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
        # The uwsgi protocol has no authentication: never offer it beyond a private network.
        if value.is_unspecified or not value.is_private:
            raise ValueError("not a loopback or private address")
        return value

    @field_validator("app")
    @classmethod
    def _no_keywords(cls, value: str) -> str:
        # `class:def` matches the identifier pattern, yet no import statement can name it.
        words = re.split(r"[.:]", value)
        if any(keyword.iskeyword(word) for word in words):
            raise ValueError("a Python keyword")
        if not all(word.isidentifier() for word in words):
            raise ValueError("not a Python identifier")
        # `wsgi:\u0430pp` (a Cyrillic a) is an identifier too, and reads as `app`: a name that
        # mixes the letters of two scripts is a look-alike (Unicode TS #39), never a real module.
        if any(len(_scripts(word)) > 1 for word in words):
            raise ValueError("letters of two scripts in one name (a look-alike)")
        return value

    @field_validator("static")
    @classmethod
    def _each_prefix_once(cls, value: str | None) -> str | None:
        prefixes = [entry.split("=", 1)[0] for entry in (value or "").split(",") if entry]
        if len(prefixes) != len(set(prefixes)):
            raise ValueError("a prefix given twice")
        return value

    @property
    def static_dirs(self) -> tuple[tuple[str, str], ...]:
        """(URL prefix, directory) pairs of `static`, in the order given."""
        if self.static is None:
            return ()
        return tuple((p, d) for p, _, d in (e.partition("=") for e in self.static.split(",")))

    @field_validator("socket_dir", "app_dir", "probe_path")
    @classmethod
    def _no_dot_segments(cls, value: str | None) -> str | None:
        if value is not None and any(part in {".", ".."} for part in value.split("/")):
            raise ValueError("dot segment")
        return value


def _as_number(value: object) -> float | None:
    """A finite number, from a number or a flag's text; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _numeric_kind(annotation: Any) -> type | None:
    """int or float for a field holding a number (maybe optional, maybe 'auto'), else None."""
    members = set(typing.get_args(annotation)) or {annotation}
    if int in members:
        return int
    if float in members:
        return float
    return None


#: int or float for every numeric Workload field: which text syntax `_plain_number_text` allows.
_NUMERIC_KIND: dict[str, type] = {
    name: kind
    for name, info in Workload.model_fields.items()
    if (kind := _numeric_kind(info.annotation)) is not None
}


def _allow_list(info: FieldInfo) -> AllowList | None:
    """The field's `AllowList`: Pydantic lifts the metadata of `Annotated[str, ...]` into
    `info.metadata`, but keeps it inside the annotation of `Annotated[str, ...] | None`."""
    inner = typing.get_args(info.annotation)
    metadata = [*info.metadata, *(m for arg in inner for m in getattr(arg, "__metadata__", ()))]
    return next((m for m in metadata if isinstance(m, AllowList)), None)


#: The allow-list of every Workload field that has one (see `AllowList`).
_ALLOW_LISTS: dict[str, AllowList] = {
    name: allow_list
    for name, info in Workload.model_fields.items()
    if (allow_list := _allow_list(info)) is not None
}


def describe_allowed(name: str, info: FieldInfo | None = None) -> str:
    """What a field accepts, in words, from its declaration."""
    if name in FIELD_ALLOWED:
        return FIELD_ALLOWED[name]
    info = info or Workload.model_fields[name]
    bounds: dict[str, Any] = {}
    for meta in info.metadata:
        for attr in ("gt", "ge", "lt", "le"):
            if getattr(meta, attr, None) is not None:
                bounds[attr] = getattr(meta, attr)
    kind = "an integer" if info.annotation in (int, int | None) else "a number"
    low = f"above {_num(bounds['gt'])}" if "gt" in bounds else f"from {_num(bounds.get('ge', 0))}"
    high = f"up to {_num(bounds['le'])}" if "le" in bounds else f"below {_num(bounds['lt'])}"
    unit = (
        (info.json_schema_extra or {}).get("unit", "")
        if isinstance(info.json_schema_extra, dict)
        else ""
    )
    return f"{kind} {low} {high}" + (f" {unit}" if unit and unit not in {"ratio", "port"} else "")


def describe_kind(name: str) -> str:
    """A field's kind in one word for `--help` (`int`, `number`, `int|auto`, or its unit)."""
    kind = _NUMERIC_KIND.get(name)
    info = Workload.model_fields[name]
    if kind is int:
        return "int|auto" if "auto" in str(info.annotation) else "int"
    if kind is float:
        return "number"
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    return str(extra.get("unit", "text"))


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _one_line(error: ValidationError, flags: Mapping[str, str] | None = None) -> str:
    first = error.errors()[0]
    loc = [str(part) for part in first["loc"]]
    name = loc[0] if loc else str((first.get("ctx") or {}).get("field", "workload"))
    label = flags.get(name, name) if flags else name
    if first["type"] == EXACT_ERROR:
        return f"{label}: {first['msg']}"
    if first["type"] == "extra_forbidden":
        return f"{label}: unknown field (known: {', '.join(Workload.model_fields)})"
    value = first.get("input")
    shown = repr(value) if isinstance(value, str) else str(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    allowed = describe_allowed(name) if name in Workload.model_fields else first["msg"]
    return f"{label}: must be {allowed}; got {shown}"


def build_workload(values: Mapping[str, Any], flags: Mapping[str, str] | None = None) -> Workload:
    """Validate `values` into a Workload, or raise WorkloadError with one line naming the field."""
    try:
        return Workload.model_validate(dict(values))
    except ValidationError as error:
        raise WorkloadError(_one_line(error, flags)) from None
