"""Kubernetes manifests: the app servers their containers start, with the container around them.

A manifest is read by PyYAML's safe composer (node graph only: no object is ever constructed,
so a `!!python/...` tag is refused, never run), which keeps each node's line, so a finding
points at the `cpu: 500m` or the `-w` that caused it. Aliases and nesting depth are bounded
(a "billion laughs" file is refused, not expanded). Every workload kind that holds a pod
template is read (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Pod, and `List`
items); each container whose command line starts gunicorn, uvicorn or granian becomes an
AppServer, read by that server's own parser: gunicorn's loader and argument parser (a
`-c` config found in a ConfigMap of the same files is handed to it), uvicorn's and granian's
click commands. `env` (values and ConfigMap references, `envFrom`) becomes the server's
environment, and `$(VAR)` in `command`/`args` is expanded as the kubelet does. The AWS load
balancers that Service and Ingress annotations put in front of a pod (a Classic LB's
`aws-load-balancer-connection-idle-timeout`, an ALB's `idle_timeout.timeout_seconds`) are read
with their idle timeouts, for the keep-alive rules.
"""

from __future__ import annotations

import contextvars
import math
import posixpath
import re
import shlex
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import yaml

from servertune.check import memo
from servertune.check.model import (
    SERVERS,
    AppServer,
    CheckInputError,
    Container,
    Location,
    NginxConfig,
    Probe,
    Setting,
    collect_notes,
    note,
    server_program,
)
from servertune.check.shell_lists import simple_commands
from servertune.check.working_dirs import started_in

if TYPE_CHECKING:
    from servertune.check.commands import ConfigFile, FindConfig
    from servertune.check.dockerfile import Image

__all__ = [
    "ALB_ATTRIBUTES",
    "CLB_IDLE_TIMEOUT",
    "GATEWAY_DURATION",
    "MAX_ALIASES",
    "MAX_DEPTH",
    "MAX_EXPANDED_NODES",
    "WORKLOAD_KINDS",
    "looks_like_manifest",
    "parse_gateway_duration",
    "parse_quantity",
    "read_manifests",
]

#: Real files use anchors (Helm renders none; a compose file may share `x-defaults: &d` among
#: dozens of services: getsentry/self-hosted's has over 100 aliases): what is bounded is the
#: size the document would have with every alias expanded, which a billion-laughs bomb
#: multiplies at each level. Counted while composing, so a bomb never expands.
MAX_EXPANDED_NODES = 200_000
#: Kept for callers that name the old bound; the expansion bound is what is enforced.
MAX_ALIASES = MAX_EXPANDED_NODES
#: Deeper than any pod spec (a container's probe's httpGet header is ~12 levels).
MAX_DEPTH = 64
#: The kinds that hold a pod template, and the path to it.
WORKLOAD_KINDS: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "Pod": ("spec",),
}
#: Kubernetes' default when a pod sets none (PodSpec.terminationGracePeriodSeconds).
DEFAULT_GRACE_PERIOD_S = 30
#: The standard YAML tags a manifest may carry (the safe loader's, all of them data).
_SAFE_TAGS = {
    f"tag:yaml.org,2002:{name}"
    for name in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp", "merge")
}
#: Kubernetes' quantity grammar (k8s.io/apimachinery/pkg/api/resource, quantity.go):
#: <signedNumber><suffix>, suffix a binary SI (Ki..Ei), decimal SI (n u m "" k M G T P E) or
#: a decimal exponent (e3, E-2).
_QUANTITY = re.compile(
    r"\A(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?\Z"
)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
#: `$(VAR)` in command/args; `$$(VAR)` is a literal `$(VAR)` (the kubelet's expansion rules).
_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
#: A whole value that is an unresolved reference: where a number belongs, a Helm chart
#: template's value its files do not give (`helm_templates`), unknown rather than an error.
_UNRESOLVED = re.compile(r"\$\([A-Za-z_][A-Za-z0-9_.-]*\)")
#: A word naming a script (an absolute or `./` path, or a `.sh` file): the dockerfile
#: reader's test for an entrypoint script.
_SCRIPT = re.compile(r"\A(/|\./)\S+\Z|\A\S+\.(sh|bash)\Z")
#: A word naming a file a command runs or reads (`/usr/local/bin/start.sh`, `gunicorn.py`,
#: a relative path with a folder: `bin/server`, the `args` an image's `bash -c` runs).
_FILE_WORD = re.compile(
    r"\A/[\w./-]+\Z|\A[\w./-]+\.(sh|bash|py|ini|conf|cfg|toml)\Z|\A(?:\./)?[\w.-]+/[\w./-]*\w\Z"
)
#: The servers a container's own command line is read for here: every server check models.
_SERVERS = SERVERS
#: ConfigMap name -> its `data` node, over every manifest of the run (`config_maps` sets it);
#: a name two files define differently is left out (which one a cluster holds is not known).
RUN_CONFIG_MAPS: contextvars.ContextVar[dict[str, _Node] | None] = contextvars.ContextVar(
    "servertune_check_config_maps", default=None
)


def parse_quantity(text: str) -> Decimal:
    """A Kubernetes quantity ("500m", "1.5", "512Mi", "1G", "1e3") as a number of base units."""
    match = _QUANTITY.match(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a Kubernetes quantity")
    try:
        number = Decimal(match["number"])
    except InvalidOperation:
        raise ValueError(f"{text!r} is not a Kubernetes quantity") from None
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        return number * (Decimal(1024) ** _BINARY[suffix])
    if suffix in _DECIMAL:
        return number.scaleb(_DECIMAL[suffix])
    if suffix:
        return number.scaleb(int(suffix[1:]))
    return number


def looks_like_manifest(path: Path, text: str) -> bool:
    """A `.yaml`/`.yml` file with `apiVersion:` and `kind:` at the start of a line."""
    if path.suffix not in (".yaml", ".yml", ".json"):
        return False
    return bool(re.search(r"^apiVersion:", text, re.M) and re.search(r"^kind:", text, re.M))


class _Loader(yaml.SafeLoader):
    """The safe composer with a bound on aliases and on depth."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0
        #: Each composed node's size with its aliases expanded (by id: nodes are shared).
        self.sizes: dict[int, int] = {}

    def _size(self, node: Any) -> int:
        if isinstance(node, yaml.SequenceNode):
            return 1 + sum(self.sizes.get(id(item), 1) for item in node.value)
        if isinstance(node, yaml.MappingNode):
            return 1 + sum(
                self.sizes.get(id(k), 1) + self.sizes.get(id(v), 1) for k, v in node.value
            )
        return 1

    def compose_node(self, parent: Any, index: Any) -> Any:
        mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise CheckInputError(
                    f"line {mark.line + 1}: YAML nested deeper than {MAX_DEPTH} levels; refused"
                )
            node = super().compose_node(parent, index)
        finally:
            self.depth -= 1
        if isinstance(node, yaml.MappingNode):
            _flatten_merge_keys(node)
        size = self._size(node)
        if size > MAX_EXPANDED_NODES:
            raise CheckInputError(
                f"line {mark.line + 1}: YAML aliases expand to more than {MAX_EXPANDED_NODES} "
                "nodes; refused (an alias bomb expands to gigabytes)"
            )
        self.sizes[id(node)] = max(size, self.sizes.get(id(node), 0))
        return node


#: The tag of a merge key (`<<: *base`).
_MERGE_KEY = "tag:yaml.org,2002:merge"


def _flatten_merge_keys(node: yaml.MappingNode) -> None:
    """`node`'s merge keys (`<<: *base`, `<<: [*a, *b]`) replaced by the pairs they merge, as
    YAML's merge type defines them (https://yaml.org/type/merge.html) and as Compose and
    Kubernetes load them: the mapping's own keys win, then the earlier merged mapping's. Done
    when the mapping is composed (its values already are), so every reader, and a compose
    overlay merging a service by key (`environment` by name), sees the keys the anchor gives
    (seen in akvo/akvo-rsr's ci/k8s/deployment.yml: `- <<: *backend` with its own `name`). A
    merge key whose value is not a mapping or a list of them is left for the reader to skip."""
    if not any(key.tag == _MERGE_KEY for key, _ in node.value):
        return
    own: list[tuple[yaml.Node, yaml.Node]] = []
    merged: list[tuple[yaml.Node, yaml.Node]] = []
    for key, value in node.value:
        sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
        if key.tag != _MERGE_KEY or not all(isinstance(s, yaml.MappingNode) for s in sources):
            own.append((key, value))
            continue
        for source in sources:
            merged += source.value
    names = {str(k.value) for k, _ in own if isinstance(k, yaml.ScalarNode)}
    for key, value in merged:
        name = str(key.value) if isinstance(key, yaml.ScalarNode) else None
        if name is None or name not in names:
            own.append((key, value))
            if name is not None:
                names.add(name)
    node.value = own


@dataclass(frozen=True)
class _Node:
    """A YAML node with its line: mapping lookups, items and scalar values as Kubernetes reads
    them (merge keys `<<` flattened by the loader, as sigs.k8s.io/yaml does)."""

    node: yaml.Node
    path: Path

    @property
    def at(self) -> Location:
        return Location(self.path, self.node.start_mark.line + 1)

    def _child(self, node: yaml.Node) -> _Node:
        """`node` under this one, with the file it is written in: this one's, or for a value
        a compose overlay's merge took from its base file, the base's (its mark's name)."""
        name = node.start_mark.name
        if name == str(self.path) or name.startswith("<"):
            return _Node(node, self.path)
        return _Node(node, Path(name))

    def _pairs(self) -> list[tuple[str, _Node]]:
        if not isinstance(self.node, yaml.MappingNode):
            return []
        # Merge keys are flattened when composed (`_flatten_merge_keys`); one left merges no
        # mapping and is no key of the object.
        return [
            (str(key.value), self._child(value))
            for key, value in self.node.value
            if isinstance(key, yaml.ScalarNode) and key.tag != _MERGE_KEY
        ]

    def get(self, *keys: str) -> _Node | None:
        node: _Node | None = self
        for key in keys:
            if node is None:
                return None
            node = next((v for k, v in node._pairs() if k == key), None)
        return node

    def key_at(self, key: str) -> Location:
        """The line of `key:` itself (a block mapping value starts on the line below)."""
        if isinstance(self.node, yaml.MappingNode):
            for k, _ in self.node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == key:
                    return Location(self.path, k.start_mark.line + 1)
        return self.at

    def items(self) -> list[tuple[str, _Node]]:
        return self._pairs()

    def each(self, *keys: str) -> list[_Node]:
        """The items of the sequence at `keys` (none when absent)."""
        found = self.get(*keys)
        return found.list() if found is not None else []

    def list(self) -> list[_Node]:
        if isinstance(self.node, yaml.SequenceNode):
            return [self._child(n) for n in self.node.value]
        return []

    def text(self) -> str | None:
        if isinstance(self.node, yaml.ScalarNode) and self.node.tag != "tag:yaml.org,2002:null":
            return str(self.node.value)
        return None

    def number(self, field: str) -> float | None:
        value = self.text()
        if value is None or _UNRESOLVED.fullmatch(value):
            return None  # a chart template's value its files do not give (`helm_templates`)
        try:
            return float(value)
        except ValueError:
            raise CheckInputError(f"{self.at}: {field} {value!r} is not a number") from None


#: Compose's merge tags (https://docs.docker.com/reference/compose-file/merge/): `!reset`
#: drops the value the file it overlays gives, `!override` replaces it whole. Data a compose
#: file holds; `overlay` applies them, and elsewhere the node is its plain value.
MERGE_TAGS = frozenset({"!reset", "!override"})
_PLAIN_TAGS = {
    yaml.ScalarNode: "tag:yaml.org,2002:str",
    yaml.SequenceNode: "tag:yaml.org,2002:seq",
    yaml.MappingNode: "tag:yaml.org,2002:map",
}


def _check_tags(node: yaml.Node, path: Path, seen: set[int]) -> None:
    if id(node) in seen:
        return
    seen.add(id(node))
    if node.tag in MERGE_TAGS:
        # Kept under its merge tag as an attribute, read as the plain value it holds.
        node.merge_tag = node.tag  # type: ignore[attr-defined]
        node.tag = _PLAIN_TAGS[type(node)]
        if isinstance(node, yaml.ScalarNode) and node.value in ("", "null", "~"):
            node.tag = "tag:yaml.org,2002:null"  # `!reset null`: no value
    if node.tag not in _SAFE_TAGS:
        raise CheckInputError(
            f"{path}:{node.start_mark.line + 1}: YAML tag {node.tag!r} is not data a manifest "
            "holds; refused (it is never constructed)"
        )
    if isinstance(node, yaml.SequenceNode):
        for child in node.value:
            _check_tags(child, path, seen)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            _check_tags(key, path, seen)
            _check_tags(value, path, seen)


def _documents(path: Path, text: str) -> list[_Node]:
    """The file's YAML documents, each a tree of its own: composed once per run (every reader
    of a walk that looks at a YAML file asks), copied for each caller, as compose's reading
    interpolates its values in place."""
    key = (str(path), text)
    roots = memo.recall(memo.run_table("yaml"), key, lambda: _composed(path, text))
    copies: dict[int, yaml.Node] = {}
    return [_Node(_copied(root, copies), path) for root in roots]


def _copied(node: yaml.Node, copies: dict[int, yaml.Node]) -> yaml.Node:
    """`node` and the nodes under it, new, an anchor's node still one node wherever its
    aliases are (`copies`, by the original's id); the marks are shared, never changed."""
    done = copies.get(id(node))
    if done is not None:
        return done
    if isinstance(node, yaml.ScalarNode):
        copy: yaml.Node = yaml.ScalarNode(
            node.tag, node.value, node.start_mark, node.end_mark, node.style
        )
        copies[id(node)] = _with_merge_tag(node, copy)
        return copy
    if isinstance(node, yaml.SequenceNode):
        sequence = yaml.SequenceNode(node.tag, [], node.start_mark, node.end_mark, node.flow_style)
        copies[id(node)] = _with_merge_tag(node, sequence)
        sequence.value = [_copied(item, copies) for item in node.value]
        return sequence
    assert isinstance(node, yaml.MappingNode)
    mapping = yaml.MappingNode(node.tag, [], node.start_mark, node.end_mark, node.flow_style)
    copies[id(node)] = _with_merge_tag(node, mapping)
    mapping.value = [(_copied(k, copies), _copied(v, copies)) for k, v in node.value]
    return mapping


def _with_merge_tag(node: yaml.Node, copy: yaml.Node) -> yaml.Node:
    """`copy`, keeping the compose merge tag `node` was written with (`MERGE_TAGS`)."""
    tag = getattr(node, "merge_tag", None)
    if tag is not None:
        copy.merge_tag = tag  # type: ignore[attr-defined]
    return copy


def _composed(path: Path, text: str) -> tuple[yaml.Node, ...]:
    loader = _Loader(text)
    loader.name = str(path)  # each mark names its file: a merged overlay keeps each value's
    documents: list[yaml.Node] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                _check_tags(node, path, set())
                documents.append(node)
    except CheckInputError as error:
        message = str(error)
        raise CheckInputError(
            message if message.startswith(str(path)) else f"{path}: {message}"
        ) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise CheckInputError(f"{path}{line}: YAML syntax error: {error.problem}") from None
    except yaml.YAMLError as error:
        raise CheckInputError(f"{path}: YAML error: {str(error).splitlines()[0]}") from None
    except RecursionError:
        raise CheckInputError(f"{path}: YAML nested too deeply; refused") from None
    finally:
        loader.dispose()
    return tuple(documents)


def _objects(documents: list[_Node]) -> Iterator[_Node]:
    """Every object, `List` items (`v1/List`, `kind: ...List`) and an OpenShift Template's
    `objects` unpacked."""
    for document in documents:
        kind = document.get("kind")
        items = document.get("items")
        held = document.get("objects")
        if kind is not None and (kind.text() or "").endswith("List") and items is not None:
            yield from _objects(items.list())
        elif kind is not None and kind.text() == "Template" and held is not None:
            from servertune.check.openshift_templates import fill_parameters

            # Filled here too for every other reader of the objects (read_manifests has
            # filled them first, with its notes).
            fill_parameters(document.path, [document.node], say=False)
            yield from _objects(held.list())
        elif isinstance(document.node, yaml.MappingNode):
            yield document


@dataclass(frozen=True)
class _Word:
    """A word of a container's command line, with its line in the manifest."""

    text: str
    at: Location
    #: It names a `$(VAR)` no variable of the container defines here (an overlay's ConfigMap,
    #: a Secret): the kubelet would pass it on as written, so its value is not known.
    unresolved: bool = False


def _expand(word: str, env: Mapping[str, str]) -> str:
    """The kubelet's `$(VAR)` expansion: a defined variable is replaced, an undefined reference
    stays as written, `$$` is a literal `$`."""

    def replace(match: re.Match[str]) -> str:
        if match[0] == "$$":
            return "$"
        return env.get(match[1], match[0])

    return _REFERENCE.sub(replace, word)


def _config_maps(objects: list[_Node]) -> dict[str, _Node]:
    maps: dict[str, _Node] = {}
    for obj in objects:
        if (obj.get("kind") and obj.get("kind").text()) == "ConfigMap":  # type: ignore[union-attr]
            name = obj.get("metadata", "name")
            data = obj.get("data")
            if name is not None and data is not None:
                maps[name.text() or ""] = data
    return maps


def _environment(
    container: _Node, maps: dict[str, _Node], only: bool = False
) -> tuple[dict[str, str], dict[str, Location]]:
    """The container's environment as the kubelet builds it (envFrom first, then env, each
    `$(VAR)` in a value expanded from the variables before it), and each variable's line.
    `only`: the container is its pod's one container (a `resourceFieldRef` names it)."""
    env: dict[str, str] = {}
    where: dict[str, Location] = {}
    for source in container.each("envFrom"):
        ref = source.get("configMapRef", "name")
        prefix = (source.get("prefix") and source.get("prefix").text()) or ""  # type: ignore[union-attr]
        data = maps.get(ref.text() or "") if ref is not None else None
        for key, value in data.items() if data is not None else []:
            env[prefix + key] = value.text() or ""
            where[prefix + key] = value.at
    for item in container.each("env"):
        name = item.get("name")
        if name is None or name.text() is None:
            continue
        key = name.text() or ""
        given = item.get("value")
        if given is not None:
            env[key] = _expand(given.text() or "", env)
            where[key] = given.at
            continue
        ref = item.get("valueFrom", "configMapKeyRef")
        if ref is not None:
            data = maps.get((ref.get("name") and ref.get("name").text()) or "")  # type: ignore[union-attr]
            wanted = ref.get("key")
            found = data.get(wanted.text() or "") if data is not None and wanted else None
            if found is not None:
                env[key] = found.text() or ""
                where[key] = found.at
        cpu = _cpu_field(container, item.get("valueFrom", "resourceFieldRef"), only)
        if cpu is not None:
            env[key], where[key] = cpu
    return env, where


def _cpu_field(container: _Node, ref: _Node | None, only: bool) -> tuple[str, Location] | None:
    """The value the downward API gives an env var from `resourceFieldRef: {resource:
    limits.cpu}` (or `requests.cpu`): the container's own quantity divided by `divisor` (1
    unless set) and rounded up to a whole number, as the kubelet writes it (project-koku/koku's
    POD_CPU_LIMIT, which its gunicorn config sizes workers by). None when the quantity is not
    written here (an unset limit gives the node's CPU count) or the field names another
    container of a pod of several."""
    if ref is None:
        return None
    resource = ref.get("resource")
    field = (resource.text() if resource is not None else None) or ""
    if field not in ("limits.cpu", "requests.cpu"):
        return None
    named = ref.get("containerName")
    own = container.get("name")
    if named is not None and not only and (named.text() or "") != (own.text() if own else None):
        return None
    kind, _, _ = field.partition(".")
    written = container.get("resources", kind, "cpu")
    quantity = _quantity(written, field, Decimal(1))
    divisor = ref.get("divisor")
    try:
        by = parse_quantity(divisor.text() or "1") if divisor is not None else Decimal(1)
    except ValueError:
        return None
    if quantity is None or written is None or by <= 0:
        return None
    return str(math.ceil(parse_quantity(written.text() or "") / by)), written.at


def _quantity(node: _Node | None, field: str, scale: Decimal) -> Setting[float] | None:
    if node is None or node.text() is None or _UNRESOLVED.fullmatch(node.text() or ""):
        return None
    try:
        value = parse_quantity(node.text() or "")
    except ValueError as error:
        raise CheckInputError(f"{node.at}: {field}: {error}") from None
    return Setting(float(value / scale), node.at)


def _probes(container: _Node) -> tuple[Probe, ...]:
    probes = []
    for kind in ("readiness", "liveness", "startup"):
        probe = container.get(f"{kind}Probe")
        if probe is None:
            continue
        target = "?"
        port: int | None = None
        for handler in ("httpGet", "tcpSocket", "grpc", "exec"):
            spec = probe.get(handler)
            if spec is not None:
                parts = [
                    f"{k}={v.text() if v.text() is not None else yaml.serialize(v.node)}"
                    for k, v in spec.items()
                ]
                target = f"{handler} " + " ".join(sorted(parts))
                if handler in ("httpGet", "tcpSocket") and spec.get("host") is None:
                    port = _port(container, spec.get("port"))

        def number(field: str, default: int, node: _Node = probe) -> int:
            found = node.get(field)
            value = found.number(field) if found is not None else None
            return default if value is None else int(value)

        probes.append(
            Probe(
                kind=kind,
                at=container.key_at(f"{kind}Probe"),
                target=target,
                # Kubernetes' defaults (Probe v1 core API reference).
                initial_delay_s=number("initialDelaySeconds", 0),
                period_s=number("periodSeconds", 10),
                timeout_s=number("timeoutSeconds", 1),
                failure_threshold=number("failureThreshold", 3),
                port=port,
            )
        )
    return tuple(probes)


def _port(container: _Node, port: _Node | None) -> int | None:
    """A probe's port as a number: written as one, or the name of one of the container's
    `ports` (an IANA_SVC_NAME, resolved to its containerPort as the kubelet does)."""
    text = port.text() if port is not None else None
    if text is None:
        return None
    if text.isdigit():
        return int(text)
    for declared in container.each("ports"):
        name, number = declared.get("name"), declared.get("containerPort")
        if name is not None and name.text() == text and number is not None:
            value = number.text() or ""
            return int(value) if value.isdigit() else None
    return None


def _prestop(container: _Node) -> Setting[float] | None:
    prestop = container.get("lifecycle", "preStop")
    if prestop is None:
        return None
    seconds = prestop.get("sleep", "seconds")
    if seconds is not None:
        value = seconds.number("preStop.sleep.seconds")
        return None if value is None else Setting(value, seconds.at)
    command = prestop.get("exec", "command")
    words = [w.text() or "" for w in command.list()] if command is not None else []
    if len(words) == 1:  # ["sh", "-c", "sleep 5"] arrives as one word below
        words = shlex.split(words[0])
    if len(words) >= 3 and words[-2:][0].endswith("-c"):
        words = shlex.split(words[-1])
    if len(words) == 2 and PurePosixPath(words[0]).name == "sleep":
        try:
            return Setting(float(words[1]), prestop.at)
        except ValueError:
            return None
    return None


def _somaxconn(pod: _Node) -> Setting[int] | None:
    """The pod's `securityContext.sysctls` entry for net.core.somaxconn (a namespaced sysctl,
    each container's listen backlogs are capped by it); None when the pod sets none."""
    for sysctl in pod.each("securityContext", "sysctls"):
        name, value = sysctl.get("name"), sysctl.get("value")
        if name is None or value is None or name.text() != "net.core.somaxconn":
            continue
        text = value.text() or ""
        if text.isdigit():
            return Setting(int(text), value.at)
    return None


def _developers(node: _Node) -> Setting[str] | None:
    """What says the container runs on a developer's cluster, where written:
    `imagePullPolicy: Never` (the image exists only in the node's own Docker, built into
    minikube or kind), or a manifest under a folder for one (`k8s/minikube/`)."""
    from servertune.check.development import development_folder

    policy = node.get("imagePullPolicy")
    if policy is not None and policy.text() == "Never":
        return Setting(
            "imagePullPolicy: Never: the image is built into the node, as minikube's or kind's",
            policy.at,
        )
    folder = development_folder(node.at.file)
    if folder is not None:
        return Setting(f"its manifest is under {folder}/, a developer's", node.at)
    return None


def _container(node: _Node, pod: _Node, workload: _Node, replicas: _Node | None) -> Container:
    resources = node.get("resources")
    limits = resources.get("limits") if resources else None
    requests = resources.get("requests") if resources else None
    grace = pod.get("terminationGracePeriodSeconds")
    grace_value = grace.number("terminationGracePeriodSeconds") if grace else None
    replicas_value = replicas.number("replicas") if replicas is not None else None
    mib = Decimal(1024 * 1024)
    return Container(
        name=(node.get("name") and node.get("name").text()) or "?",  # type: ignore[union-attr]
        at=node.at,
        pod=pod.at,
        cpu_limit=_quantity(limits.get("cpu") if limits else None, "limits.cpu", Decimal(1)),
        cpu_request=_quantity(
            requests.get("cpu") if requests else None, "requests.cpu", Decimal(1)
        ),
        memory_limit_mb=_quantity(limits.get("memory") if limits else None, "limits.memory", mib),
        memory_request_mb=_quantity(
            requests.get("memory") if requests else None, "requests.memory", mib
        ),
        grace_period_s=Setting(grace_value, grace.at)  # type: ignore[union-attr]
        if grace_value is not None
        else Setting(float(DEFAULT_GRACE_PERIOD_S), pod.at, default=True),
        prestop_s=_prestop(node),
        development=_developers(node),
        somaxconn=_somaxconn(pod),
        probes=_probes(node),
        pod_ready_probe=any(
            c.get("readinessProbe") is not None for c in (pod.each("containers") or [node])
        ),
        replicas=Setting(int(replicas_value), replicas.at)  # type: ignore[union-attr]
        if replicas_value is not None
        else None,
        named_ports=tuple(
            (name.text() or "", int(number.text() or ""))
            for declared in node.each("ports")
            if (name := declared.get("name")) is not None
            and (number := declared.get("containerPort")) is not None
            and (number.text() or "").isdigit()
        ),
    )


def _one_string(node: _Node) -> Setting[str] | None:
    """A container's `command` that is one item holding a whole command line (`command:
    ["gunicorn app:app"]`): the runtime runs no shell, so it looks for a program named by the
    whole string. (An `args` item with a space is one argument the program parses, not this.)"""
    found = node.get("command")
    items = found.list() if found is not None else []
    text = items[0].text() if len(items) == 1 else None
    if text is None or not re.search(r"\S\s+\S", text.strip()):
        return None
    return Setting(text, items[0].at)


def _command(node: _Node, env: Mapping[str, str]) -> list[_Word]:
    words: list[_Word] = []
    one_string = _one_string(node)
    for field in ("command", "args"):
        found = node.get(field)
        for word in found.list() if found is not None else []:
            if word.text() is not None:
                raw = word.text() or ""
                missing = any(m[1] and m[1] not in env for m in _REFERENCE.finditer(raw))
                if field == "command" and one_string is not None:
                    # Read split, a guess at what was meant (`exec-form-one-string`).
                    words.extend(_Word(_expand(w, env), word.at, missing) for w in _split(raw))
                    continue
                words.append(_Word(_expand(raw, env), word.at, missing))
    # `sh -c ". env.sh; exec gunicorn ..."`: the shell's words, all on the line of the script;
    # of its commands (split at `;`, `&&`, `||`, `|`, newlines) the one that starts a server.
    if (
        len(words) >= 3
        and PurePosixPath(words[0].text).name in ("sh", "bash")
        and words[1].text == "-c"
    ):
        script = words[2]
        from servertune.check.commands import without_comments

        text = without_comments(script.text).replace("\\\n", " ").replace("\n", ";")
        commands = simple_commands(text)
        for command in commands:
            started = _runs([_Word(w, script.at) for w in command])
            if started and server_program(PurePosixPath(started[0].text).name) in _SERVERS:
                return started
            if started and _fastapi(started):
                return _as_uvicorn(started)
        return []
    return _runs(words)


def _command_app(
    path: Path,
    pod: _Node,
    container: _Node,
    maps: dict[str, _Node],
    argv: list[_Word],
    environment: tuple[dict[str, str], dict[str, Location]],
) -> tuple[AppServer, tuple[Setting[str], ...]] | None:
    """The server a container's `command` starts, with the words of it left out as unknown:
    read from the manifest's own words (a gunicorn `-c` held in a mounted ConfigMap), else
    through the image a Dockerfile here builds (`_tied_image`) when the command runs what only
    that image holds (`sh /usr/local/bin/start.sh`, a `-c gunicorn.py` under `workingDir`)."""
    env, env_at = environment
    held = mounted_files(pod, container, maps)
    started = _started(container, env, argv, held) if argv else None
    if started is None:
        app = _through_image(path, container, env, env_at, maps)
        return (app, ()) if app is not None else None
    argv, server = started
    argv, unresolved = _known_words(argv)
    if server == "gunicorn":
        config = _config_file(argv, _mounts(pod, container), maps)
        image_app = (
            _through_image(path, container, env, env_at, maps)
            if config is None and _names_config(argv)
            else None
        )
        if image_app is not None:
            return image_app, unresolved
        app = _gunicorn(path, argv, env, env_at, config, argv[0].at)
    else:
        app = _asgi(path, server, argv, env, _in_mounts(held, container))
    from servertune.check.commands import Word, joined_words

    joined = joined_words([Word(w.text, w.at) for w in argv[1:]])
    return replace(app, joined_options=joined), unresolved


def _names_config(argv: list[_Word]) -> bool:
    """gunicorn's command line names a config file (`-c FILE`, `--config=FILE`)."""
    texts = [w.text for w in argv]
    return any(t in ("-c", "--config") or t.startswith("--config=") for t in texts[1:])


def _through_image(
    path: Path,
    container: _Node,
    env: dict[str, str],
    env_at: dict[str, Location],
    maps: Mapping[str, _Node],
) -> AppServer | None:
    """The server the container's `command` + `args` start, read as the image a Dockerfile
    here builds runs them (its files, its ENV under the container's `env`), in the
    container's `workingDir` (else the image's WORKDIR); None when no image is tied."""
    image = _tied_image(path, container)
    if image is None:
        return None
    from servertune.check.commands import ENVIRONMENT_COMPLETE, Word
    from servertune.check.dockerfile import image_server

    _, words = _words(container, env)
    working = container.get("workingDir")
    workdir = (working.text() if working is not None else None) or image.workdir

    def find(wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        inside = wanted if workdir == image.workdir else str(PurePosixPath(workdir) / wanted)
        return image.find(inside, at)

    token = ENVIRONMENT_COMPLETE.set(_environment_known(container, maps))
    try:
        return image_server(
            path,
            [Word(w.text, w.at) for w in words],
            [],
            {**image.env, **env},
            {**image.env_at, **env_at},
            image,
            find=find,
        )
    finally:
        ENVIRONMENT_COMPLETE.reset(token)


def _words(container: _Node, env: Mapping[str, str]) -> tuple[list[_Word], list[_Word]]:
    """The container's `command` words, and its `command` + `args` words, `$(VAR)` expanded."""
    lists = []
    for field in ("command", "args"):
        found = container.get(field)
        lists.append(
            [
                _Word(_expand(w.text() or "", env), w.at)
                for w in (found.list() if found is not None else [])
                if w.text() is not None
            ]
        )
    return lists[0], lists[0] + lists[1]


def _tied_image(path: Path, container: _Node) -> Image | None:
    """The image a Dockerfile here builds that the container runs: the one its `image:`
    names (`images.image_named`: on evidence in the files), else, in a Helm chart whose
    `image:` is written from its values (`{{ .Values.image.repository }}:{{ ... }}`: set where
    the chart is installed, often by CI), the one image of the run that holds a file the
    container's command names (`/usr/local/bin/runserver.sh`, a `-c gunicorn.py` under its
    `workingDir`). Two such images: a `not-followed` note, never a guess (seen in IFRCGo/go-api's
    chart, whose values name `SET-BY-CICD-IMAGE`)."""
    named = container.get("image")
    reference = named.text() if named is not None else None
    if named is None or not reference:
        return None
    from servertune.check.helm_templates import is_chart_template
    from servertune.check.images import image_named, run_images

    image = image_named(reference, path, named.at)
    if image is not None or not is_chart_template(path) or not _templated(path, named.at):
        return image
    working = container.get("workingDir")
    _, words = _words(container, {})
    files = [w.text for w in words if _FILE_WORD.match(w.text)]
    holding = []
    for candidate in run_images():
        workdir = (working.text() if working is not None else None) or candidate.workdir
        inside = [f if f.startswith("/") else str(PurePosixPath(workdir) / f) for f in files]
        if any(candidate.find(f) is not None for f in inside):
            holding.append(candidate)
    if len(holding) == 1:
        return holding[0]
    if holding:
        from servertune.check.model import note

        names = ", ".join(str(i.path) for i in holding)
        note(
            "not-followed",
            named.at,
            f"not followed: image from Helm values not tied to a Dockerfile ({reference!r} is "
            f"set where the chart is installed, and {len(holding)} Dockerfiles here hold the "
            f"files its command names: {names}); what it starts was not read",
        )
    return None


def _templated(path: Path, at: Location) -> bool:
    """The chart template's own line at `at` writes its value with an action (`{{ }}`)."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return False
    return 0 < at.line <= len(lines) and "{{" in lines[at.line - 1]


def _started(
    container: _Node, env: Mapping[str, str], argv: list[_Word], held: Mapping[str, _Node]
) -> tuple[list[_Word], str] | None:
    """The server a container with a `command` starts and its words: its command line's own
    first word, or the one after the wrappers of its `command` (`_past_wrappers`)."""
    server = server_program(PurePosixPath(argv[0].text).name)
    if server is not None and server in _SERVERS:
        return argv, server
    return _past_wrappers(container, env, held)


def _past_wrappers(
    container: _Node, env: Mapping[str, str], held: Mapping[str, _Node]
) -> tuple[list[_Word], str] | None:
    """The server a container's `command` of wrappers runs, and that server's name: the words
    after the process wrappers check knows (`tini --`, `gosu USER`), shells running a script
    (`bash /entrypoint.sh`) and entrypoint scripts (`/usr/local/bin/_entrypoint.sh`), which
    the kubelet hands `args` to (it appends them to `command`). A script these files do not
    hold (it is the image's) is named in a `not-followed` note: an entrypoint ending in
    `exec "$@"` runs its arguments, and what it does before was not checked. None when a
    wrapper is a mounted ConfigMap script that does not pass its arguments on, or the words
    after the wrappers start no server (seen in DIRACGrid/diracx-charts' Deployment)."""
    from servertune.check.commands import SHELLS, WRAPPERS, Word, program_name, wrapped

    found = container.get("command")
    if found is None or _one_string(container) is not None:
        return None
    command, words = _words(container, env)
    index = 0
    unread: list[_Word] = []
    while index < len(command):
        name = program_name(words[index].text)
        if name in WRAPPERS:
            rest = wrapped([Word(w.text, w.at) for w in words[index:]], name)
            index = len(words) - len(rest)
            continue
        if name in SHELLS:
            index += 1
            while index < len(words) and words[index].text.startswith("-"):
                if words[index].text == "-c":
                    return None  # `sh -c SCRIPT`: the script's own reading (`_command`)
                index += 1
            if index >= len(words) or not _SCRIPT.match(words[index].text):
                return None
        elif not _SCRIPT.match(words[index].text) or name.startswith("python"):
            break
        if server_program(program_name(words[index].text)) is not None:
            break
        script = held.get(words[index].text)
        if script is not None and '"$@"' not in (script.text() or ""):
            return None  # a mounted script that does not run its arguments
        if script is None:
            unread.append(words[index])
        index += 1
    started = _runs(words[index:]) if 0 < index < len(words) else []
    server = server_program(PurePosixPath(started[0].text).name) if started else None
    if server is None or server not in _SERVERS:
        return None
    if unread:
        from servertune.check.model import note

        named = ", ".join(f"`{w.text}`" for w in unread)
        note(
            "not-followed",
            unread[0].at,
            f"not followed: {named} in the container's `command` (not in these files: the "
            f"image's); the {server} after it was read as what it runs (the kubelet appends "
            '`args` to `command`, and an entrypoint ending in `exec "$@"` runs them); what '
            "the wrapper does before it was not checked",
        )
    return started, server


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _runs(words: list[_Word]) -> list[_Word]:
    # What runs is the first word after `exec`, `env`, `VAR=value`, `python -m`.
    while words and (words[0].text in ("exec", "env") or re.match(r"\A\w+=", words[0].text)):
        words = words[1:]
    if (
        len(words) >= 3
        and PurePosixPath(words[0].text).name.startswith("python")
        and words[1].text == "-m"
    ):
        words = words[2:]
    # `-m gunicorn.app.wsgiapp`, gunicorn's own entry module, is gunicorn.
    if words and words[0].text.split(".")[0] in _SERVERS and "." in words[0].text:
        words = [replace(words[0], text=words[0].text.split(".")[0]), *words[1:]]
    if _fastapi(words):
        return _as_uvicorn(words)
    return words


def _fastapi(words: list[_Word]) -> bool:
    """`fastapi run ...`: FastAPI's CLI running uvicorn (its template's container command);
    `litestar [--app X] run ...`, Litestar's, the same."""
    from servertune.check.commands import Word, _litestar_run_at

    name = PurePosixPath(words[0].text).name if words else ""
    if name == "litestar":
        return _litestar_run_at([Word(w.text, w.at) for w in words]) is not None
    return len(words) >= 2 and name == "fastapi" and words[1].text == "run"


def _as_uvicorn(words: list[_Word]) -> list[_Word]:
    """The uvicorn command line `fastapi run` amounts to (commands._fastapi_run's reading);
    `litestar run`'s (commands._litestar_run's)."""
    from servertune.check.commands import Word, _fastapi_run, _litestar_run

    read = _litestar_run if PurePosixPath(words[0].text).name == "litestar" else _fastapi_run
    command = read([Word(w.text, w.at) for w in words], ())
    return [_Word("uvicorn", words[0].at)] + [_Word(w.text, w.at) for w in command.args]


def _config_file(
    argv: list[_Word], mounts: dict[str, tuple[str, _Node]], maps: dict[str, _Node]
) -> tuple[str, _Node] | None:
    """The gunicorn `-c` file's text and node, when it is a key of a mounted ConfigMap."""
    for index, word in enumerate(argv):
        value = None
        if word.text in ("-c", "--config") and index + 1 < len(argv):
            value = argv[index + 1].text
        elif word.text.startswith("--config="):
            value = word.text.partition("=")[2]
        if value is None:
            continue
        target = PurePosixPath(value)
        for mount_path, (map_name, _) in mounts.items():
            try:
                key = str(target.relative_to(mount_path))
            except ValueError:
                continue
            data = maps.get(map_name)
            found = data.get(key) if data is not None else None
            if found is not None and found.text() is not None:
                return found.text() or "", found
    return None


def _mounts(pod: _Node, container: _Node) -> dict[str, tuple[str, _Node]]:
    """Mount path -> (ConfigMap name, the mount's node) for the container's ConfigMap volumes."""
    volumes: dict[str, str] = {}
    for volume in pod.each("volumes"):
        name, ref = volume.get("name"), volume.get("configMap", "name")
        if name is not None and ref is not None:
            volumes[name.text() or ""] = ref.text() or ""
    mounts: dict[str, tuple[str, _Node]] = {}
    for mount in container.each("volumeMounts"):
        name, path = mount.get("name"), mount.get("mountPath")
        if name is not None and path is not None and (name.text() or "") in volumes:
            mounts[path.text() or ""] = (volumes[name.text() or ""], mount)
    return mounts


def mounted_files(pod: _Node, container: _Node, maps: dict[str, _Node]) -> dict[str, _Node]:
    """Container path -> the ConfigMap value held there, for each ConfigMap volume the
    container mounts: one key by `subPath`, else every key (or the volume's `items`) in the
    mount's folder. The file's own ConfigMaps first, then the run's."""
    run = RUN_CONFIG_MAPS.get() or {}
    volumes: dict[str, tuple[_Node, _Node | None]] = {}
    for volume in pod.each("volumes"):
        name, ref = volume.get("name"), volume.get("configMap", "name")
        data = (maps.get(ref.text() or "") or run.get(ref.text() or "")) if ref else None
        if name is not None and data is not None:
            volumes[name.text() or ""] = (data, volume.get("configMap", "items"))
    held: dict[str, _Node] = {}
    for mount in container.each("volumeMounts"):
        name, where = mount.get("name"), mount.get("mountPath")
        if name is None or where is None or (name.text() or "") not in volumes:
            continue
        data, items = volumes[name.text() or ""]
        inside = PurePosixPath(where.text() or "/")
        sub = mount.get("subPath")
        if sub is not None:
            value = data.get(sub.text() or "")
            if value is not None:
                held[str(inside)] = value
            continue
        paths = {k: k for k, _ in data.items()}
        if items is not None:
            paths = {
                (i.get("key") and i.get("key").text()) or "": (  # type: ignore[union-attr]
                    i.get("path") and i.get("path").text()  # type: ignore[union-attr]
                )
                or ""
                for i in items.list()
            }
        for key, relative in paths.items():
            value = data.get(key)
            if value is not None and relative:
                held[str(inside / relative)] = value
    return held


def mounted_config(value: _Node) -> ConfigFile:
    """A ConfigMap value as a file: its text, from the line below its `|` header (a block
    scalar), else from its own line."""
    from servertune.check.commands import ConfigFile

    below = 1 if getattr(value.node, "style", None) in ("|", ">") else 0
    return ConfigFile(value.text() or "", value.path, value.node.start_mark.line + 1 + below)


def _in_mounts(held: Mapping[str, _Node], container: _Node) -> FindConfig:
    """Finds a config file a container's command names among the files it mounts from
    ConfigMaps: an absolute path where it is mounted, a relative one under the container's
    `workingDir`, or (the image's WORKDIR not known here) the one mounted file whose path ends
    with it (Substra's `uwsgi --ini uwsgi.ini` with the ini mounted at
    /usr/src/app/uwsgi.ini by `subPath`)."""
    found = container.get("workingDir")
    workdir = found.text() if found is not None else None

    def find(wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        del at
        target = PurePosixPath(wanted)
        if not target.is_absolute() and workdir:
            target = PurePosixPath(workdir) / target
        if target.is_absolute():
            value = held.get(str(target))
            return mounted_config(value) if value is not None else None
        tail = "/" + str(target).removeprefix("./")
        ending = [value for inside, value in held.items() if inside.endswith(tail)]
        return mounted_config(ending[0]) if len(ending) == 1 else None

    return find


def _gunicorn(
    path: Path,
    argv: list[_Word],
    env: dict[str, str],
    env_at: dict[str, Location],
    config: tuple[str, _Node] | None,
    start: Location,
) -> AppServer:
    from servertune.check.gunicorn import GUNICORN_FLAGS, read_gunicorn_command

    args = [w.text for w in argv[1:]]
    # `-c` is handed over as the extracted file below; the rest is gunicorn's to parse.
    rest: list[str] = []
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if word in ("-c", "--config"):
            skip = True
            continue
        if word.startswith("--config="):
            continue
        rest.append(word)
    config_lines: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="servertune-check-") as directory:
        conf = Path(directory) / "gunicorn.conf.py"
        text = config[0] if config else ""
        conf.write_text(text)
        if config is not None:
            from servertune.check.gunicorn import _lines

            first = config[1].node.start_mark.line + 1  # the `|` line; the text starts below
            config_lines = {k: first + v for k, v in _lines(text, path).items()}

        def locate(name: str) -> tuple[Location, bool]:
            flags = GUNICORN_FLAGS.get(name, ())
            found = None
            for word in argv[1:]:
                if word.text in flags or any(
                    word.text.startswith(f + "=") for f in flags if f.startswith("--")
                ):
                    found = word.at
                elif word.text.startswith(
                    tuple(f for f in flags if not f.startswith("--"))
                ) and any(len(word.text) > 2 and word.text[:2] == f for f in flags):
                    found = word.at  # `-w9`
            if found is not None:
                return found, False
            if name == "workers" and "WEB_CONCURRENCY" in env_at:
                return env_at["WEB_CONCURRENCY"], False
            if "GUNICORN_CMD_ARGS" in env_at and any(
                f in env.get("GUNICORN_CMD_ARGS", "").split() for f in flags
            ):
                return env_at["GUNICORN_CMD_ARGS"], False
            if name in config_lines:
                return Location(path, config_lines[name]), False
            return start, True

        child_env = {**_BASE_ENV, **env}
        return read_gunicorn_command(conf, tuple(rest), child_env, path, locate, start)


#: What a child interpreter needs from here besides the container's own variables.
_BASE_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def _asgi(
    path: Path,
    server: str,
    argv: list[_Word],
    env: dict[str, str],
    find_config: FindConfig | None = None,
) -> AppServer:
    """uvicorn / granian / uWSGI, read by their own CLIs through the script reader's machinery;
    a config file the line names (`uwsgi --ini`) is found by `find_config`."""
    from servertune.check.scripts import read_script

    first = min(w.at.line for w in argv)
    last = max(w.at.line for w in argv)
    # A script whose words sit on the manifest's own lines, so each flag keeps its line.
    words: dict[int, list[str]] = {}
    for word in argv:
        # An unknown part of an argument (`$(Values.kind)_http:app`, kept for the kubelet
        # passes it on) is its name to the shell reader, which would take `$(...)` for a
        # command substitution and leave the argument out.
        text = _REFERENCE.sub(lambda m: m[1] or m[0], word.text) if word.unresolved else word.text
        words.setdefault(word.at.line, []).append(shlex.quote(text))
    lines = [""] * (first - 1) + [
        " ".join(words.get(number, [])) + (" \\" if number < last else "")
        for number in range(first, last + 1)
    ]
    body = "\n".join(lines)
    del server
    app = read_script(path, body + "\n", {**_BASE_ENV, **env}, find_config=find_config)
    return replace(app, without_exec=None)  # the kubelet runs these words: no shell


def read_manifests(
    path: Path,
    text: str,
    env: Mapping[str, str] | None = None,
    patched: Callable[[Path, _Node, _Node], _Node] | None = None,
) -> tuple[tuple[AppServer, ...], tuple[NginxConfig, ...]]:
    """The app servers the manifests' containers start, each with its container; `patched`:
    a container as the overlays that build this file give it (`kustomize_patches`)."""
    from servertune.check.openshift_templates import fill_parameters

    del env  # a container's environment is the manifest's, not this shell's
    documents = _documents(path, text)
    fill_parameters(path, [document.node for document in documents])
    objects = list(_objects(documents))
    # The file's own ConfigMaps, over the run's: a chart's Deployment takes `envFrom` from
    # the ConfigMap template beside it (NREL/REopt_API's `K8S_DEPLOY: "true"`).
    maps = {**(RUN_CONFIG_MAPS.get() or {}), **_config_maps(objects)}
    routed = _route_timeouts(objects)
    balanced = _load_balancers(objects)
    services = [o for o in objects if _kind(o) == "Service"]
    apps: list[AppServer] = []
    for obj in objects:
        for pod, containers, replicas, labels, name in _pods(obj):
            if patched is not None:
                containers = [c if c is pod else patched(path, obj, c) for c in containers]
            shared = (maps, services, routed, balanced)
            _read_pod(path, (obj, name), pod, containers, replicas, labels, shared, apps)
    return tuple(apps), ()


def _pods(
    obj: _Node,
) -> Iterator[tuple[_Node, list[_Node], _Node | None, _Node | None, str]]:
    """Each pod template of a workload object: its spec, containers, replicas, labels and name
    (a container's own `name` comes first). A
    Clowder `ClowdApp` (Red Hat's operator; an OpenShift Template often holds one) lists
    `spec.deployments`, each a `podSpec` that is its one container's spec and its pod's (image,
    command, args, env, resources, probes, volumes) with `replicas` / `minReplicas` beside it."""
    kind = obj.get("kind")
    named = (kind.text() if kind else None) or ""
    if named == "ClowdApp":
        for deployment in obj.each("spec", "deployments"):
            pod = deployment.get("podSpec")
            if pod is not None:
                replicas = deployment.get("replicas") or deployment.get("minReplicas")
                name = deployment.get("name")
                yield pod, [pod], replicas, None, (name.text() if name else None) or _name(obj)
        return
    pod_path = WORKLOAD_KINDS.get(named)
    pod = obj.get(*pod_path) if pod_path is not None else None
    if pod_path is None or pod is None:
        return
    labels = obj.get(*pod_path[:-1], "metadata", "labels") if len(pod_path) > 1 else None
    if labels is None:
        labels = obj.get("metadata", "labels")
    yield pod, pod.each("containers"), obj.get("spec", "replicas"), labels, _name(obj)


def _read_pod(
    path: Path,
    workload: tuple[_Node, str],
    pod: _Node,
    containers: list[_Node],
    replicas: _Node | None,
    labels: _Node | None,
    shared: tuple[
        dict[str, _Node],
        list[_Node],
        dict[str, list[tuple[str, Setting[float]]]],
        dict[str, list[tuple[str, Setting[float]]]],
    ],
    apps: list[AppServer],
) -> None:
    """The app servers a pod's containers start, added to `apps`."""
    maps, services, routed, balanced = shared
    obj, name = workload
    for container in containers:
        env, env_at = _environment(container, maps, only=len(containers) == 1)
        argv = _command(container, env)
        unresolved: tuple[Setting[str], ...] = ()
        # No `command`: the image's ENTRYPOINT runs, with `args` (if given) for its CMD.
        found = (
            _image_app(
                path,
                (pod, container),
                env,
                env_at,
                argv or None,
                _environment_known(container, maps),
            )
            if container.get("command") is None
            else None
        )
        if found is not None:
            app = found
        elif container.get("command") is None and not argv:
            image = container.get("image")
            named = (image.text() if image is not None else None) or ""
            if _UNRESOLVED.search(named):  # an OpenShift Template parameter with no default
                note(
                    "not-followed",
                    image.at if image is not None else container.at,
                    f"not followed: image {named[:80]} is named from a value given where the "
                    "template is processed, so it is not tied to a Dockerfile here: what it "
                    "runs is not known",
                )
            continue
        else:
            read = _command_app(path, pod, container, maps, argv, (env, env_at))
            if read is None:
                continue
            app, unresolved = read
        box = _container(container, pod, obj, replicas)
        if box.name == "?" and container is pod and name:
            box = replace(box, name=name)  # a ClowdApp's podSpec: its deployment's name
        timeouts = [
            t for svc in services if _selects(svc, labels) for t in routed.get(_name(svc), [])
        ]
        fronts = [
            b
            for svc in services
            if _selects(svc, labels) and _reaches(svc, container, app)
            for b in balanced.get(_name(svc), [])
        ]
        box = replace(
            box,
            labels=_label_pairs(labels),
            route_timeouts=tuple(timeouts),
            load_balancers=tuple(fronts),
            exposed_by=_exposed_by(services, labels),
        )
        app = replace(app, unresolved=app.unresolved + unresolved)
        if (working := container.get("workingDir")) is not None:
            app = started_in(app, working.text() or "")
        if app.one_string_exec is None and (one_string := _one_string(container)):
            app = replace(app, one_string_exec=one_string)
        apps.append(_with_container(app, box))


def _linked_image(container: _Node, path: Path) -> Image | None:
    """The image a Dockerfile here builds that a container setting no `command` runs
    (`images.image_named`: on evidence in the files only), else None."""
    if container.get("command") is not None:
        return None
    return _tied_image(path, container)


def _image_app(
    path: Path,
    where: tuple[_Node, _Node],
    env: dict[str, str],
    env_at: dict[str, Location],
    args: list[_Word] | None = None,
    known: bool = False,
) -> AppServer | None:
    """The server a container with no `command` starts: its image's ENTRYPOINT with its CMD,
    or with the container's `args` in the CMD's place (the kubelet's rule), from the
    Dockerfile here that builds it, under the image's ENV and then the container's `env`
    (which wins, as the kubelet sets it over the image's); None when no Dockerfile here is
    known to build it, or its command starts no server check reads (an image tag naming a
    `dev` stage runs that stage's command, not the final stage's). `known`: the container's
    environment is all in the manifests (`ENVIRONMENT_COMPLETE` while the image is read)."""
    pod, container = where
    image = _linked_image(container, path)
    generated = _generated_mounts(path, pod, container)
    if image is None and container.get("image") is None:
        image = _reading_generated(generated)
    if image is None:
        return None
    from servertune.check.commands import ENVIRONMENT_COMPLETE, Word
    from servertune.check.dockerfile import (
        container_words,
        image_server,
        sh_of,
        shell_form,
        with_stop_signal,
    )

    cmd, cmd_shell = image.cmd, image.cmd_shell
    if args is not None:
        cmd, cmd_shell = tuple(Word(w.text, w.at) for w in args), False
    first, rest = container_words(image, image.entrypoint, image.entrypoint_shell, cmd, cmd_shell)
    token = ENVIRONMENT_COMPLETE.set(known)
    try:
        app = image_server(
            path,
            first,
            rest,
            {**image.env, **env},
            {**image.env_at, **env_at},
            image,
            find=_overlaid(image, generated),
        )
    finally:
        ENVIRONMENT_COMPLETE.reset(token)
    if app is None:
        return None
    started = shell_form(image, image.entrypoint, image.entrypoint_shell, cmd, cmd_shell)
    if image.stop_signal is not None:
        app = with_stop_signal(app, *image.stop_signal, "STOPSIGNAL SIGTERM")
    return replace(app, shell_form=started, shell_form_sh=sh_of(image) if started else "")


def _generated_mounts(path: Path, pod: _Node, container: _Node) -> dict[str, Path]:
    """Container path -> the file of the repository a kustomize `configMapGenerator` beside
    the manifest makes a key of a ConfigMap the container mounts (`files: [uwsgi.ini]`,
    `name=uwsgi.ini` too): the ConfigMap is built from that file where the overlay is
    applied, so the file is what the container reads there (seen in dod-ccpo/atst)."""
    generated = memo.recall(
        memo.run_table("kustomize generators"), path.parent, lambda: _generators(path.parent)
    )
    held: dict[str, Path] = {}
    for inside, (map_name, mount) in _mounts(pod, container).items():
        keys = generated.get(map_name, {})
        sub = mount.get("subPath")
        for key, file in keys.items():
            if sub is None:
                held[str(PurePosixPath(inside) / key)] = file
            elif sub.text() == key:
                held[inside] = file
    return held


def _generators(folder: Path) -> dict[str, dict[str, Path]]:
    """ConfigMap name -> key -> the repository file a kustomize `configMapGenerator` of the
    kustomization in `folder` makes it from; none when it cannot be read. The same for every
    container of every manifest of the folder: worked out once a run."""
    from servertune.check import resolve
    from servertune.check.source import read_text

    generated: dict[str, dict[str, Path]] = {}
    for name in ("kustomization.yaml", "kustomization.yml", "Kustomization"):
        file = folder / name
        if not file.is_file():
            continue
        try:
            objects = list(_objects(_documents(file, read_text(file))))
        except (CheckInputError, OSError):
            return {}
        for obj in objects:
            for generator in obj.each("configMapGenerator"):
                named = generator.get("name")
                keys = generated.setdefault((named.text() if named else None) or "", {})
                for item in generator.each("files"):
                    key, _, source = (item.text() or "").rpartition("=")
                    found = resolve.admit(file.parent / source, source, item.at, "files")
                    if found is not None and found.is_file():
                        keys[key or PurePosixPath(source).name] = found
    return generated


def _reading_generated(generated: Mapping[str, Path]) -> Image | None:
    """The one image of the run whose command reads a file a kustomize generator mounts at
    that very path (`CMD ["uwsgi", "--ini", "uwsgi.ini"]` under `WORKDIR /opt/app` and a
    mount at `/opt/app/uwsgi.ini`): what a container with no `image:` (set where the overlay
    is applied) runs; None with no such image or more than one."""
    if not generated:
        return None
    from servertune.check.images import run_images

    reading = [
        image
        for image in run_images()
        if any(
            posixpath.normpath(posixpath.join(image.workdir or "/", w.text)) in generated
            for w in (*image.entrypoint, *image.cmd)
        )
    ]
    return reading[0] if len(reading) == 1 else None


def _overlaid(image: Image, generated: Mapping[str, Path]) -> FindConfig:
    """The image's files with the container's generated mounts over them."""
    from servertune.check.commands import ConfigFile
    from servertune.check.source import read_text

    def find(wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        inside = posixpath.normpath(posixpath.join(image.workdir or "/", wanted))
        file = generated.get(inside)
        if file is not None:
            return ConfigFile(read_text(file), file, 1)
        return image.find(wanted, at)

    return find


def _environment_known(container: _Node, maps: Mapping[str, _Node]) -> bool:
    """Whether the container's whole environment is in the manifests read: each `envFrom`
    a ConfigMap here, each `env` item a value or a key of one (not a Secret's, a field's)."""
    for source in container.each("envFrom"):
        ref = source.get("configMapRef", "name")
        if ref is None or (ref.text() or "") not in maps:
            return False
    for item in container.each("env"):
        if item.get("value") is not None:
            continue
        ref = item.get("valueFrom", "configMapKeyRef")
        data = maps.get((ref.get("name") and ref.get("name").text()) or "") if ref else None  # type: ignore[union-attr]
        wanted = ref.get("key") if ref is not None else None
        if data is None or wanted is None or data.get(wanted.text() or "") is None:
            return False
    return True


def _label_pairs(labels: _Node | None) -> tuple[tuple[str, str], ...]:
    return tuple((k, v.text() or "") for k, v in labels.items()) if labels is not None else ()


def _known_words(argv: list[_Word]) -> tuple[list[_Word], tuple[Setting[str], ...]]:
    """The words whose value is known, and the ones left out: a word naming a variable defined
    nowhere in these manifests (`--workers=$(GUNICORN_WORKERS)` in a kustomize base that an
    overlay completes) is left out with its flag (`--workers $(N)`), and named, as a shell's
    unset variable is; the server's own defaults stand for it."""
    known: list[_Word] = []
    unresolved: list[Setting[str]] = []
    for index, word in enumerate(argv):
        if not word.unresolved:
            known.append(word)
            continue
        previous = argv[index - 1].text if index else ""
        if (
            known
            and index > 1
            and previous.startswith("-")
            and previous != "-"
            and "=" not in previous
            and known[-1] is argv[index - 1]
        ):
            known.pop()
            unresolved.append(Setting(f"{previous} {word.text}", word.at))
        else:
            unresolved.append(Setting(word.text, word.at))
            # (A word that is nothing but the reference, `$(EXTRA_ARGS)`, may stand for any
            # number of words: it is left out rather than taken for one argument.)
            if not _UNRESOLVED.fullmatch(word.text) and not word.text.startswith("-"):
                # An argument written around an unknown part (a chart's
                # `{{ .Values.kind }}_http:app`): the kubelet passes it on as written, and the
                # server gets its argument, unknown as it is (leaving it out would make the
                # command line one the server refuses, for want of a value).
                known.append(word)
    return known, tuple(unresolved)


def _with_container(app: AppServer, container: Container) -> AppServer:
    return replace(app, container=container)


def _exposed_by(services: list[_Node], labels: _Node | None) -> Setting[str] | None:
    """The first Service of type LoadBalancer that selects the pod."""
    for service in services:
        kind = service.get("spec", "type")
        if kind is not None and kind.text() == "LoadBalancer" and _selects(service, labels):
            return Setting(_name(service), service.at)
    return None


#: Images that are never the app's own build: proxies, sidecars, databases, caches, shells.
_NOT_APP_IMAGES = frozenset(
    {
        "nginx",
        "nginx-unprivileged",
        "haproxy",
        "envoy",
        "proxyv2",
        "traefik",
        "redis",
        "memcached",
        "postgres",
        "mysql",
        "mariadb",
        "mongo",
        "rabbitmq",
        "busybox",
        "alpine",
        "cloud-sql-proxy",
        "pgbouncer",
        # ingress-nginx's default backend (gcr.io/google_containers/defaultbackend, ...-amd64)
        "defaultbackend",
        "defaultbackend-amd64",
    }
)


def _values_name_owners_image(path: Path, at: Location) -> bool:
    """A chart template's `image:` line written by an action that names a values path holding
    an owner's image (`{{ include "chart.imageRepo" (dict "repo" .Values.infinity.image.repository)
    }}` with values `infiniflow/infinity`): that owner's image, not a local one (seen in
    infiniflow/ragflow's chart, whose database container it is)."""
    from servertune.check.helm_templates import chart_values, is_chart_template
    from servertune.check.images import owners_image

    if not is_chart_template(path) or not _templated(path, at):
        return False
    line = path.read_text(errors="replace").splitlines()[at.line - 1]
    values, _ = chart_values(path)
    for found in re.finditer(r"\.Values((?:\.[\w-]+)+)", line):
        value: object = values
        for part in found[1].split(".")[1:]:
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, str) and owners_image(value):
            return True
    return False


def image_containers(path: Path, text: str) -> tuple[Container, ...]:
    """The containers that set neither `command` nor `args` and run a local image (`app`,
    `${IMAGE}`: no owner's name, which only the files' evidence links): each runs its image's
    own ENTRYPOINT and CMD, which a Dockerfile given in the same run says (check links the
    two)."""
    from servertune.check.images import owners_image

    objects = list(_objects(_documents(path, text)))
    services = [o for o in objects if _kind(o) == "Service"]
    boxes: list[Container] = []
    for obj in objects:
        kind = obj.get("kind")
        pod_path = WORKLOAD_KINDS.get((kind.text() if kind else None) or "")
        pod = obj.get(*pod_path) if pod_path is not None else None
        if pod_path is None or pod is None:
            continue
        labels = obj.get(*pod_path[:-1], "metadata", "labels") if len(pod_path) > 1 else None
        if labels is None:
            labels = obj.get("metadata", "labels")
        for container in pod.each("containers"):
            if container.get("command") is not None or container.get("args") is not None:
                continue
            with collect_notes():  # read_manifests notes what linking it could not follow
                if _linked_image(container, path) is not None:
                    continue  # read_manifests reads what it runs, under its env
                if container.get("image") is None and _reading_generated(
                    _generated_mounts(path, pod, container)
                ):
                    continue  # the same: the image reading the file a generator mounts
            image = container.get("image")
            reference = (image.text() if image is not None else None) or ""
            if owners_image(reference):
                # An owner's image (`emrgntcmplxty/r2r-dashboard:1.0.1`): the files' evidence
                # alone links it (`_linked_image`), never being the run's one Dockerfile.
                continue
            if image is not None and _values_name_owners_image(path, image.at):
                continue  # the same, named in the chart's values through an `include`
            # With no `image:` (a kustomize overlay sets it), the container's own name.
            own = container.get("name")
            name = reference.rsplit("/", 1)[-1] or (own.text() if own is not None else None) or ""
            if name.split(":", 1)[0].split("@", 1)[0] in _NOT_APP_IMAGES:
                continue  # a sidecar or a database: not the image a Dockerfile of the app builds
            box = _container(container, pod, obj, obj.get("spec", "replicas"))
            boxes.append(
                replace(box, exposed_by=_exposed_by(services, labels), labels=_label_pairs(labels))
            )
    return tuple(boxes)


#: Gateway API Duration (GEP-2257): up to four <1-5 digits><h|m|s|ms> groups, e.g. "1h30m".
GATEWAY_DURATION = re.compile(r"\A([0-9]{1,5}(h|m|s|ms)){1,4}\Z")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_gateway_duration(text: str) -> float:
    """A Gateway API Duration ("10s", "1m30s", "500ms") in seconds."""
    if not GATEWAY_DURATION.match(text):
        raise ValueError(f"{text!r} is not a Gateway API duration (GEP-2257)")
    return sum(
        int(number) * _UNIT_S[unit] for number, unit in re.findall(r"([0-9]+)(ms|h|m|s)", text)
    )


def _kind(obj: _Node) -> str:
    found = obj.get("kind")
    return (found.text() if found is not None else None) or ""


def _name(obj: _Node) -> str:
    found = obj.get("metadata", "name")
    return (found.text() if found is not None else None) or ""


def _route_timeouts(objects: list[_Node]) -> dict[str, list[tuple[str, Setting[float]]]]:
    """Service name -> the timeouts of the HTTPRoutes that send to it (an Ingress is read as
    the nginx ingress-nginx renders it to: `check.ingress`)."""
    found: dict[str, list[tuple[str, Setting[float]]]] = {}
    for obj in objects:
        if _kind(obj) == "HTTPRoute":
            for rule in obj.each("spec", "rules"):
                timeouts: list[tuple[str, Setting[float]]] = []
                for field in ("request", "backendRequest"):
                    value = rule.get("timeouts", field)
                    if value is None or value.text() is None:
                        continue
                    try:
                        seconds = parse_gateway_duration(value.text() or "")
                    except ValueError as error:
                        raise CheckInputError(f"{value.at}: timeouts.{field}: {error}") from None
                    timeouts.append((f"HTTPRoute timeouts.{field}", Setting(seconds, value.at)))
                for ref in rule.each("backendRefs"):
                    kind = ref.get("kind")
                    if kind is not None and kind.text() != "Service":
                        continue
                    name = ref.get("name")
                    if name is not None:
                        found.setdefault(name.text() or "", []).extend(timeouts)
    return found


def _backends(ingress: _Node) -> set[str]:
    """The Services an Ingress sends to (its rules' paths and its default backend)."""
    services = {
        (n.text() or "")
        for rule in ingress.each("spec", "rules")
        for p in rule.each("http", "paths")
        if (n := p.get("backend", "service", "name")) is not None
    }
    default = ingress.get("spec", "defaultBackend", "service", "name")
    if default is not None:
        services.add(default.text() or "")
    return services


#: The in-tree AWS cloud provider's Classic Load Balancer idle timeout, seconds (its service
#: controller's annotation table: 1-4000, default 60).
CLB_IDLE_TIMEOUT = "service.beta.kubernetes.io/aws-load-balancer-connection-idle-timeout"
#: The Classic LB's listener to the pods: only an HTTP(S) listener reuses its back-end
#: connections across clients (keep-alive); `tcp` (the default) and `ssl` relay one
#: client connection each, so the app's closing reaches that client as it would directly.
CLB_BACKEND_PROTOCOL = "service.beta.kubernetes.io/aws-load-balancer-backend-protocol"
#: A Service of this annotation is an NLB (`nlb`; `external`/`nlb-ip` for the AWS Load Balancer
#: Controller): a TCP pass-through that keeps no connection of its own to reuse.
AWS_LB_TYPE = "service.beta.kubernetes.io/aws-load-balancer-type"
#: The AWS Load Balancer Controller's Ingress annotation: comma-separated ALB attributes,
#: `idle_timeout.timeout_seconds=N` among them (ALB default 60 s, 1-4000).
ALB_ATTRIBUTES = "alb.ingress.kubernetes.io/load-balancer-attributes"
ALB_IDLE_ATTRIBUTE = "idle_timeout.timeout_seconds"
#: An ALB's idle timeout when no attribute sets it (AWS: "The default is 60 seconds").
ALB_DEFAULT_IDLE_S = 60.0


def _annotation(obj: _Node, key: str) -> _Node | None:
    annotations = obj.get("metadata", "annotations")
    return annotations.get(key) if annotations is not None else None


def _alb(ingress: _Node) -> Location | None:
    """Where an Ingress is made one of the AWS Load Balancer Controller's (class `alb`, by the
    field or the older annotation, or an annotation in its `alb.ingress.kubernetes.io/`
    namespace); None when it is not."""
    spec_class = ingress.get("spec", "ingressClassName")
    if spec_class is not None and spec_class.text() == "alb":
        return spec_class.at
    annotations = ingress.get("metadata", "annotations")
    for key, value in annotations.items() if annotations is not None else []:
        if (key == "kubernetes.io/ingress.class" and value.text() == "alb") or key.startswith(
            "alb.ingress.kubernetes.io/"
        ):
            return annotations.key_at(key)  # type: ignore[union-attr]
    return None


def _seconds(node: _Node, field: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CheckInputError(f"{node.at}: {field}: {text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise CheckInputError(f"{node.at}: {field}: {text!r} is not a number of seconds")
    return value


def _load_balancers(objects: list[_Node]) -> dict[str, list[tuple[str, Setting[float]]]]:
    """Service name -> the AWS load balancers in front of it with their idle timeouts: a
    Classic Load Balancer whose Service annotation sets one, an ALB of an Ingress that sends
    to the Service (its attribute, else AWS's default 60 s at the line that makes it an ALB)."""
    found: dict[str, list[tuple[str, Setting[float]]]] = {}
    for obj in objects:
        if _kind(obj) == "Service":
            idle = _annotation(obj, CLB_IDLE_TIMEOUT)
            kind = obj.get("spec", "type")
            protocol = _annotation(obj, CLB_BACKEND_PROTOCOL)
            if idle is None or idle.text() is None or _annotation(obj, AWS_LB_TYPE) is not None:
                continue
            if protocol is None or (protocol.text() or "").lower() not in ("http", "https"):
                continue  # a TCP/SSL listener pairs each client connection with its own
            if kind is None or kind.text() != "LoadBalancer":
                continue
            seconds = _seconds(idle, CLB_IDLE_TIMEOUT, idle.text() or "")
            found.setdefault(_name(obj), []).append(
                (
                    f"AWS Classic Load Balancer of Service `{_name(obj)}` ({CLB_IDLE_TIMEOUT})",
                    Setting(seconds, idle.at),
                )
            )
        elif _kind(obj) == "Ingress" and (alb := _alb(obj)) is not None:
            attributes = _annotation(obj, ALB_ATTRIBUTES)
            setting = None
            for pair in (attributes.text() or "").split(",") if attributes is not None else []:
                key, _, value = pair.partition("=")
                if key.strip() == ALB_IDLE_ATTRIBUTE and attributes is not None:
                    seconds = _seconds(attributes, ALB_IDLE_ATTRIBUTE, value.strip())
                    setting = Setting(seconds, attributes.at)
            where = f"{ALB_ATTRIBUTES}: {ALB_IDLE_ATTRIBUTE}"
            if setting is None:
                setting = Setting(ALB_DEFAULT_IDLE_S, alb, default=True)
                where = f"{ALB_IDLE_ATTRIBUTE} not set: AWS's default"
            for service in _backends(obj):
                found.setdefault(service, []).append(
                    (f"AWS Application Load Balancer of Ingress `{_name(obj)}` ({where})", setting)
                )
    return found


def _reaches(service: _Node, container: _Node, app: AppServer) -> bool:
    """The Service sends to a port the app server listens on (its `targetPort`, a number or
    the name of one of the container's ports; `port` when absent), not to another container
    of the pod (an nginx in front of it, which check does not read from a manifest)."""
    from servertune.check.chain import normalise

    listening = {normalise(s.value)[1] for s in app.sockets}
    for entry in service.each("spec", "ports"):
        target = entry.get("targetPort") or entry.get("port")
        number = _port(container, target)
        if number is not None and str(number) in listening:
            return True
    return False


def _selects(service: _Node, labels: _Node | None) -> bool:
    selector = service.get("spec", "selector")
    if selector is None or labels is None or not selector.items():
        return False
    have = {k: v.text() for k, v in labels.items()}
    return all(have.get(k) == v.text() for k, v in selector.items())
