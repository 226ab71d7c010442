"""Traefik's configuration, reduced to what the chain needs: where each HTTP service sends
requests, how long Traefik keeps an idle connection to those servers, and how long it waits for
their answer.

Traefik reads two configurations (https://doc.traefik.io/traefik/getting-started/configuration-overview/):
the *static* one (`traefik.yml` / `traefik.toml`, or `--flags` on its command line) holds the
entry points and their `transport.respondingTimeouts`, the default `serversTransport`, and the
providers; the *dynamic* one (files the file provider names, or labels on the containers the
docker provider watches) holds the routers, the services (`http.services.X.loadBalancer.servers`)
and named `http.serversTransports`. Keys are case-insensitive; durations are Go's, and bare
digits are seconds.

Each HTTP service becomes a `Balancer`: its servers' addresses, the idle time of its
serversTransport (`forwardingTimeouts.idleConnTimeout`, 90 s by default; 0 never closes), and
the shorter of `forwardingTimeouts.responseHeaderTimeout` and the
`respondingTimeouts.writeTimeout` of the entry points its routers take (neither set by
default: Traefik then waits as long as the server takes). A dynamic file read on its own takes the static settings of a `traefik.yml` /
`traefik.toml` beside it (or one folder up) whose file provider names it, as Traefik would.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from servertune.check.durations import parse_go_duration
from servertune.check.model import Balancer, CheckInputError, Location, Setting, note

__all__ = [
    "DEFAULT_IDLE_CONN_TIMEOUT_S",
    "TRAEFIK_DOCS",
    "TRAEFIK_ENTRYPOINT_DOCS",
    "TRAEFIK_TRANSPORT_DOCS",
    "looks_like_traefik",
    "read_compose_labels",
    "read_traefik",
]

#: The serversTransport reference (static default and dynamic named transports).
TRAEFIK_TRANSPORT_DOCS = (
    "https://doc.traefik.io/traefik/routing/overview/#transport-configuration; "
    "https://doc.traefik.io/traefik/routing/services/#serverstransport_1"
)
#: The entry points' reference: `respondingTimeouts`.
TRAEFIK_ENTRYPOINT_DOCS = "https://doc.traefik.io/traefik/routing/entrypoints/#respondingtimeouts"
#: `forwardingTimeouts.idleConnTimeout`: "Optional, Default=90s ... the maximum amount of time an
#: idle (keep-alive) connection will remain idle before closing itself. Zero means no limit."
#: (TRAEFIK_TRANSPORT_DOCS). `responseHeaderTimeout`: "Default=0s ... If zero, no timeout
#: exists." The entry points' `respondingTimeouts.writeTimeout`: "Default=0s ... covers the time
#: from the end of the request header read to the end of the response write. If zero, no
#: timeout exists." (TRAEFIK_ENTRYPOINT_DOCS, Traefik v2.11 and v3).
DEFAULT_IDLE_CONN_TIMEOUT_S = 90.0
#: What a finding about a Traefik front cites for these defaults.
TRAEFIK_DOCS = (
    "Traefik's serversTransport forwardingTimeouts: idleConnTimeout 90s, responseHeaderTimeout "
    f"0s (none) by default ({TRAEFIK_TRANSPORT_DOCS}); entry points' respondingTimeouts: "
    f"writeTimeout 0s (none) by default ({TRAEFIK_ENTRYPOINT_DOCS})"
)
#: The file names Traefik looks for its static configuration under (`/etc/traefik/`, `$HOME/
#: .config/`, the working directory), and the ones projects keep it under.
STATIC_NAMES = ("traefik.yml", "traefik.yaml", "traefik.toml")
_TIMEOUTS = ("readtimeout", "writetimeout", "idletimeout")
_FORWARDING = (
    "dialtimeout",
    "responseheadertimeout",
    "idleconntimeout",
    "readidletimeout",
    "pingtimeout",
)


@dataclass
class _Node:
    """A configuration value (mapping with lower-cased keys, list, or scalar text) and where."""

    value: dict[str, _Node] | list[_Node] | str
    at: Location

    def get(self, *keys: str) -> _Node | None:
        node: _Node | None = self
        for key in keys:
            if node is None or not isinstance(node.value, dict):
                return None
            node = node.value.get(key.lower())
        return node

    def items(self) -> Iterator[tuple[str, _Node]]:
        if isinstance(self.value, dict):
            yield from self.value.items()


def _from_yaml(path: Path, text: str) -> _Node:
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise CheckInputError(
            f"{path}:{line}: not valid YAML ({getattr(error, 'problem', error)})"
        ) from None
    except RecursionError:
        raise CheckInputError(f"{path}: nested too deep to read") from None
    if root is None:
        return _Node({}, Location(path))
    budget = [100_000]  # an alias bomb is refused, never expanded

    def walk(node: yaml.Node, depth: int) -> _Node:
        budget[0] -= 1
        at = Location(path, node.start_mark.line + 1)
        if budget[0] < 0 or depth > 64:
            raise CheckInputError(f"{at}: too many or too deeply nested values; refused")
        if isinstance(node, yaml.MappingNode):
            found: dict[str, _Node] = {}
            for key, value in node.value:
                child = walk(value, depth + 1)
                child.at = Location(path, key.start_mark.line + 1)
                found[str(key.value).lower()] = child
            return _Node(found, at)
        if isinstance(node, yaml.SequenceNode):
            return _Node([walk(v, depth + 1) for v in node.value], at)
        return _Node(str(node.value), at)

    return walk(root, 0)


def _from_toml(path: Path, text: str) -> _Node:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise CheckInputError(f"{path}: not valid TOML ({error})") from None
    lines = text.splitlines()

    def line_of(key: str) -> int:
        # tomllib keeps no positions: the first line that assigns or opens the key.
        pattern = re.compile(rf"^\s*(\[+[^\]]*\b{re.escape(key)}\b|{re.escape(key)}\s*=)", re.I)
        return next((n for n, line in enumerate(lines, 1) if pattern.search(line)), 1)

    def walk(value: object, at: Location) -> _Node:
        if isinstance(value, dict):
            return _Node(
                {
                    str(k).lower(): walk(v, Location(path, line_of(str(k))))
                    for k, v in value.items()
                },
                at,
            )
        if isinstance(value, list):
            return _Node([walk(v, at) for v in value], at)
        return _Node(str(value).lower() if isinstance(value, bool) else str(value), at)

    return walk(data, Location(path))


def _load(path: Path, text: str) -> _Node:
    return _from_toml(path, text) if path.suffix == ".toml" else _from_yaml(path, text)


def looks_like_traefik(path: Path, text: str) -> bool:
    """A static config by its name (`traefik.yml`, `traefik.toml`), or YAML / TOML whose top
    level is Traefik's: `entryPoints` / `providers` (static) or `http:` holding routers or
    services (dynamic; a TOML table header indented, as TOML allows: mlco2/codecarbon)."""
    if path.name.lower() in STATIC_NAMES:
        return True
    if path.suffix in (".yml", ".yaml"):
        return bool(
            re.search(r"^(entryPoints|providers):", text, re.M)
            or (
                re.search(r"^http:", text, re.M)
                and re.search(r"^\s+(routers|services|serversTransports):", text, re.M)
            )
        ) and not re.search(r"^(services|apiVersion):", text, re.M)
    if path.suffix == ".toml":
        return bool(
            re.search(
                r"^[ \t]*\[\[?(entryPoints|providers|http\.(routers|services|serversTransports))\b",
                text,
                re.M | re.I,
            )
        )
    return False


def _duration(node: _Node, what: str, env: Mapping[str, str]) -> Setting[float] | None:
    """A Traefik duration in seconds; None (with a note) when it needs the environment."""
    if not isinstance(node.value, str):
        raise CheckInputError(f"{node.at}: {what} is not a duration")
    text = node.value
    if "${" in text or "{{" in text:
        note("unresolved-variable", node.at, f"{what} {text!r}: known only when Traefik runs")
        return None
    seconds = parse_go_duration(text, bare_seconds=True)
    if seconds is None or seconds < 0:
        raise CheckInputError(
            f"{node.at}: {what} {text!r} is not a duration (Go's: 30s, 1m30s, 90; digits are seconds)"
        )
    return Setting(seconds, node.at)


@dataclass
class _Transport:
    """A serversTransport's forwardingTimeouts as they apply."""

    idle: Setting[float] | None = None
    idle_source: str = "Traefik's default serversTransport `idleConnTimeout` (90s)"
    header: Setting[float] | None = None
    header_name: str = "forwardingTimeouts.responseHeaderTimeout"


def _transport(
    node: _Node | None, base: _Transport, where: str, env: Mapping[str, str]
) -> _Transport:
    """`node`'s forwardingTimeouts over `base` (the static default)."""
    found = _Transport(base.idle, base.idle_source, base.header, base.header_name)
    timeouts = node.get("forwardingTimeouts") if node is not None else None
    for key, value in timeouts.items() if timeouts is not None else ():
        if key not in _FORWARDING:
            raise CheckInputError(f"{value.at}: forwardingTimeouts has no {key!r}")
        seconds = _duration(value, f"forwardingTimeouts.{key}", env)
        if key == "idleconntimeout" and seconds is not None:
            found.idle = Setting(math.inf if seconds.value == 0 else seconds.value, seconds.at)
            found.idle_source = f"{where} `forwardingTimeouts.idleConnTimeout`"
        elif key == "responseheadertimeout" and seconds is not None:
            found.header = seconds if seconds.value > 0 else None
            found.header_name = f"{where} forwardingTimeouts.responseHeaderTimeout"
    return found


@dataclass
class _Static:
    """The static configuration's numbers the services use."""

    transport: _Transport = field(default_factory=_Transport)
    #: Each entry point's non-zero `respondingTimeouts.writeTimeout`, by lower-cased name.
    writes: dict[str, Setting[float]] = field(default_factory=dict)
    #: The file provider's file and folder, as written, and where.
    provided: list[tuple[str, Location]] = field(default_factory=list)


def _static(root: _Node, env: Mapping[str, str]) -> _Static:
    static = _Static(
        _transport(root.get("serversTransport"), _Transport(), "serversTransport", env)
    )
    for name, entry in (root.get("entryPoints") or _Node({}, root.at)).items():
        responding = entry.get("transport", "respondingTimeouts")
        for key, value in responding.items() if responding is not None else ():
            if key not in _TIMEOUTS:
                raise CheckInputError(f"{value.at}: respondingTimeouts has no {key!r}")
            seconds = _duration(
                value, f"entryPoints.{name}.transport.respondingTimeouts.{key}", env
            )
            if key == "writetimeout" and seconds is not None and seconds.value > 0:
                static.writes[name] = seconds
    provider = root.get("providers", "file")
    for key in ("filename", "directory"):
        given = provider.get(key) if provider is not None else None
        if given is not None and isinstance(given.value, str):
            static.provided.append((given.value, given.at))
    return static


def _address(url: _Node) -> Setting[str] | None:
    if not isinstance(url.value, str):
        raise CheckInputError(f"{url.at}: a server's url is not text")
    text = url.value
    if "${" in text or "{{" in text:
        note("unresolved-variable", url.at, f"server url {text!r}: known only when Traefik runs")
        return None
    scheme, sep, rest = text.partition("://")
    if not sep:
        raise CheckInputError(f"{url.at}: server url {text!r} has no scheme (http://host:port)")
    host = rest.split("/", 1)[0]
    if not re.search(r":[0-9]+\Z", host):
        host += ":443" if scheme == "https" else ":80"
    return Setting(host, url.at)


def _waits(
    transport: _Transport, static: _Static, entry_points: set[str] | None = None
) -> tuple[Setting[float] | None, str]:
    """The shortest wait for a server's answer: the transport's responseHeaderTimeout, and the
    writeTimeout of the entry points its routers take (None: every entry point, Traefik's
    default for a router that names none)."""
    waits = [(transport.header_name, transport.header)] if transport.header is not None else []
    waits += [
        (f"entryPoints.{name}.transport.respondingTimeouts.writeTimeout", write)
        for name, write in static.writes.items()
        if entry_points is None or name in entry_points
    ]
    if not waits:
        return None, ""
    name, shortest = min(waits, key=lambda w: w[1].value if w[1] is not None else math.inf)
    return shortest, name


def _names(node: _Node | None) -> list[str]:
    """A list of names, written as a YAML / TOML list or as `a,b` (labels, flags)."""
    if node is None:
        return []
    if isinstance(node.value, list):
        return [str(n.value).lower() for n in node.value if isinstance(n.value, str)]
    if isinstance(node.value, str):
        return [n.strip().lower() for n in node.value.split(",") if n.strip()]
    return []


def _entry_points(http: _Node, service: str) -> set[str] | None:
    """The entry points of the routers that send to `service` (None: every one, when a router
    names none or no router names the service)."""
    found: set[str] = set()
    for _, router in (http.get("routers") or _Node({}, http.at)).items():
        target = router.get("service")
        if target is None or not isinstance(target.value, str):
            continue
        if target.value.split("@")[0] != service:
            continue
        names = _names(router.get("entryPoints"))
        if not names:
            return None
        found.update(names)
    return found or None


def _services(root: _Node, static: _Static, env: Mapping[str, str]) -> list[Balancer]:
    """The dynamic configuration's HTTP services, as balancers."""
    http = root.get("http")
    if http is None:
        return []
    named = {
        name: _transport(node, static.transport, f"serversTransport `{name}`", env)
        for name, node in (http.get("serversTransports") or _Node({}, http.at)).items()
    }
    balancers: list[Balancer] = []
    for name, service in (http.get("services") or _Node({}, http.at)).items():
        balancer = service.get("loadBalancer")
        if balancer is None:
            continue  # weighted, mirroring, failover: services of services
        servers = balancer.get("servers")
        urls = (
            [s.get("url") for s in servers.value]
            if servers and isinstance(servers.value, list)
            else []
        )
        addresses = [a for a in (_address(u) for u in urls if u is not None) if a is not None]
        chosen = balancer.get("serversTransport")
        transport = static.transport
        if chosen is not None and isinstance(chosen.value, str):
            transport = named.get(chosen.value.split("@")[0], static.transport)
        timeout, directive = _waits(transport, static, _entry_points(http, name))
        idle = transport.idle or Setting(DEFAULT_IDLE_CONN_TIMEOUT_S, balancer.at, default=True)
        balancers.append(
            Balancer(
                kind="traefik",
                file=balancer.at.file,
                name=name,
                at=balancer.at,
                servers=tuple(addresses),
                idle=idle,
                idle_source=transport.idle_source,
                server_timeout=timeout,
                server_timeout_directive=directive,
                label=f"Traefik service `{name}`",
                docs=TRAEFIK_DOCS,
            )
        )
    return balancers


def _static_beside(path: Path, env: Mapping[str, str]) -> _Static | None:
    """The static config beside `path` (or one folder up) whose file provider names it."""
    from servertune.check.resolve import inside

    for folder in (path.parent, path.parent.parent):
        for name in STATIC_NAMES:
            candidate = folder / name
            if candidate == path or not candidate.is_file() or not inside(candidate, path):
                continue
            try:
                static = _static(_load(candidate, candidate.read_text(encoding="utf-8")), env)
            except (CheckInputError, OSError, UnicodeDecodeError):
                continue  # its own reading says what is wrong with it
            if any(path in _provided_files(candidate, ref, None) for ref, _ in static.provided):
                return static
    return None


def _provided_files(static_path: Path, reference: str, at: Location | None) -> list[Path]:
    """The dynamic files a file provider's `filename` / `directory` names, found here: the
    reference taken from the static file's folder when relative, else by its last parts (the
    container path `/etc/traefik/dynamic.yml` of a file kept beside the static one)."""
    from servertune.check.resolve import admit

    candidates = [static_path.parent / reference] if not reference.startswith("/") else []
    parts = Path(reference).parts
    candidates += [static_path.parent / Path(*parts[-n:]) for n in (1, 2) if len(parts) >= n]
    for candidate in candidates:
        if candidate.is_dir():
            return sorted(
                p
                for p in candidate.iterdir()
                if p.suffix in (".yml", ".yaml", ".toml") and p.is_file()
            )
        if candidate.is_file():
            if at is not None and admit(candidate, reference, at, "providers.file") is None:
                return []
            return [candidate]
    return []


def read_traefik(
    path: Path, text: str, env: Mapping[str, str] | None = None
) -> tuple[tuple[Balancer, ...], tuple[Path, ...]]:
    """The HTTP services of a Traefik config as balancers, and the files read along the way:
    a static config's file-provider files with its settings, a dynamic file with the settings
    of the static config that names it."""
    env = env or {}
    root = _load(path, text)
    if root.get("http") is not None:
        return tuple(_services(root, _static_beside(path, env) or _Static(), env)), ()
    static = _static(root, env)
    balancers: list[Balancer] = []
    files: list[Path] = []
    for reference, at in static.provided:
        found = _provided_files(path, reference, at)
        if not found:
            note(
                "include-not-found",
                at,
                f"providers.file {reference!r}: not here, its services not checked",
            )
        for dynamic in found:
            try:
                dynamic_text = dynamic.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise CheckInputError(f"{at}: {dynamic} cannot be read ({error})") from None
            balancers += _services(_load(dynamic, dynamic_text), static, env)
            files.append(dynamic)
    return tuple(balancers), tuple(files)


_LABEL_PORT = re.compile(r"\Atraefik\.http\.services\.([^.]+)\.loadbalancer\.server\.port\Z", re.I)


def _labels(service: _Node) -> dict[str, _Node]:
    """A compose service's labels, its container's (`labels`) and its swarm service's
    (`deploy.labels`): Traefik's swarm provider (`providers.docker.swarmMode`, v3's
    `providers.swarm`) reads the service's, "labels must be set on the service (deploy.labels),
    not on the container" (https://doc.traefik.io/traefik/v2.11/providers/docker/#docker-swarm-mode),
    and the docker provider the container's; a key in both is the service's."""
    found: dict[str, _Node] = {}
    for labels in (service.get("labels"), service.get("deploy", "labels")):
        if labels is None:
            continue
        if isinstance(labels.value, dict):
            found.update(labels.value)
        elif isinstance(labels.value, list):
            for item in labels.value:
                if isinstance(item.value, str) and "=" in item.value:
                    key, _, value = item.value.partition("=")
                    found[key.strip().lower()] = _Node(value.strip(), item.at)
    return found


def _flags(service: _Node) -> _Node:
    """A traefik container's `--static.key=value` flags as a static configuration."""
    command = service.get("command")
    words: list[_Node] = []
    if command is not None and isinstance(command.value, list):
        words = [w for w in command.value if isinstance(w.value, str)]
    elif command is not None and isinstance(command.value, str):
        words = [_Node(w, command.at) for w in command.value.split()]
    root = _Node({}, service.at)
    for word in words:
        assert isinstance(word.value, str)
        if not word.value.startswith("--") or "=" not in word.value:
            continue
        key, _, value = word.value[2:].partition("=")
        node = root
        parts = key.lower().split(".")
        for part in parts[:-1]:
            assert isinstance(node.value, dict)
            child = node.value.setdefault(part, _Node({}, word.at))
            if not isinstance(child.value, dict):
                break
            node = child
        else:
            assert isinstance(node.value, dict)
            node.value[parts[-1]] = _Node(value, word.at)
    return root


def _static_named_beside(path: Path, env: Mapping[str, str]) -> _Static:
    """The static config kept beside a compose file (mounted into the traefik container)."""
    from servertune.check.resolve import inside

    for name in STATIC_NAMES:
        candidate = path.parent / name
        if candidate.is_file() and inside(candidate, path):
            try:
                return _static(_load(candidate, candidate.read_text(encoding="utf-8")), env)
            except (CheckInputError, OSError, UnicodeDecodeError):
                break  # its own reading says what is wrong with it
    return _Static()


def _exposed_ports(service: _Node) -> list[_Node]:
    """The container ports a compose service exposes (`expose`, and `ports`' container side:
    `8000`, `8080:8000`, `127.0.0.1:8080:8000/tcp`, `{target: 8000}`), each once."""
    found: dict[str, _Node] = {}
    for key in ("expose", "ports"):
        listed = service.get(key)
        for item in listed.value if listed is not None and isinstance(listed.value, list) else []:
            target = item.get("target") if isinstance(item.value, dict) else item
            if target is None or not isinstance(target.value, str):
                continue
            port = target.value.split("/")[0].rpartition(":")[2]
            found.setdefault(port, _Node(port, item.at))
    return list(found.values())


def _service_ports(
    name: str, service: _Node, labels: Mapping[str, _Node], image_ports: Sequence[str]
) -> list[tuple[str, _Node]]:
    """(Traefik service, port) for each `loadbalancer.server.port` label of a compose service;
    with none, when its labels route to it, the one port its container exposes, in a service
    named after the compose service. A container exposes its image's `EXPOSE`s (`image_ports`)
    with its `expose` and `ports`; Traefik's docker provider, "Port Detection": "If a container
    exposes a single port, then Traefik uses this port" (https://doc.traefik.io/traefik/
    providers/docker/#port-detection); with several, which one is a guess, not taken here."""
    ports = [
        (match.group(1), value)
        for key, value in labels.items()
        if (match := _LABEL_PORT.match(key))
    ]
    enabled = labels.get("traefik.enable")
    routers = [v for k, v in labels.items() if k.startswith("traefik.http.routers.")]
    if ports or not ((enabled is not None and enabled.value == "true") or routers):
        return ports
    exposed = {n.value: n for n in _exposed_ports(service)}
    # The image's port is said where the labels route to it: its first router label.
    at = routers[0].at if routers else enabled.at if enabled is not None else service.at
    for port in image_ports:
        exposed.setdefault(port, _Node(port, at))
    return [(name, next(iter(exposed.values())))] if len(exposed) == 1 else []


def read_compose_labels(
    path: Path,
    text: str,
    env: Mapping[str, str] | None = None,
    image_ports: Mapping[str, Sequence[str]] | None = None,
) -> tuple[Balancer, ...]:
    """The services Traefik's docker provider makes of a compose file's labels, each sending
    to its compose service by name at the labelled port (else at the one port its container
    exposes, its image's `EXPOSE`s by service name in `image_ports` with its own); the static
    settings from the traefik container's `--flags`, else from a traefik.yml / traefik.toml
    beside the compose file."""
    env = env or {}
    root = _from_yaml(path, text)
    services = root.get("services")
    if services is None:
        return ()
    static: _Static | None = None
    for _, service in services.items():
        image = service.get("image")
        if (
            image is not None
            and isinstance(image.value, str)
            and "traefik" in image.value.split(":")[0]
        ):
            static = _static(_flags(service), env)
    if static is None:
        static = _static_named_beside(path, env)
    balancers: list[Balancer] = []
    for name, service in services.items():
        labels = _labels(service)
        enabled = labels.get("traefik.enable")
        if enabled is not None and enabled.value == "false":
            continue
        ports = _service_ports(name, service, labels, (image_ports or {}).get(name, ()))
        routers: dict[str, list[str]] = {}
        for key, value in labels.items():
            parts = key.split(".")
            if len(parts) >= 5 and parts[:3] == ["traefik", "http", "routers"]:
                names = routers.setdefault(parts[3], [])
                if parts[4] == "entrypoints":
                    names.extend(_names(value))
        entry_points = (
            {n for names in routers.values() for n in names}
            if routers and all(routers.values())
            else None
        )
        for service_name, value in ports:
            if not isinstance(value.value, str) or not value.value.isdigit():
                note(
                    "unresolved-variable",
                    value.at,
                    f"Traefik port {value.value!r} of `{name}`: not a port known here",
                )
                continue
            timeout, directive = _waits(static.transport, static, entry_points)
            balancers.append(
                Balancer(
                    kind="traefik",
                    file=path,
                    name=service_name,
                    at=value.at,
                    servers=(Setting(f"{name}:{value.value}", value.at),),
                    idle=static.transport.idle
                    or Setting(DEFAULT_IDLE_CONN_TIMEOUT_S, value.at, default=True),
                    idle_source=static.transport.idle_source,
                    server_timeout=timeout,
                    server_timeout_directive=directive,
                    label=f"Traefik service `{service_name}` (labels of `{name}`)",
                    docs=TRAEFIK_DOCS,
                )
            )
    return tuple(balancers)
