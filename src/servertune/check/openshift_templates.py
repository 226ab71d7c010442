"""OpenShift Templates (`kind: Template`): plain YAML manifests with parameters.

A Template holds its resources under `objects:` and declares `parameters:`, each with a
`name` and maybe a default `value`; `oc process` replaces `${NAME}` in a string with the
parameter's value and `${{NAME}}` with the value as a YAML value of its own (a number), and a
parameter given no value on the command line takes its `value:`
(https://docs.openshift.com/container-platform/4.14/openshift_images/using-templates.html,
"Writing templates: Parameters"). So the objects are read as the manifests they are, each
parameter at its default, said in one note; a parameter with no default (`required`, or
`generate:`) stays unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import yaml

from servertune.check.model import Location, note

__all__ = ["fill_parameters"]

#: `${NAME}` and `${{NAME}}`: a parameter's reference.
_REFERENCE = re.compile(r"\$\{(\{)?([A-Za-z_][A-Za-z0-9_]*)\}(?(1)\})")


def _get(node: yaml.Node, key: str) -> yaml.Node | None:
    """A mapping's value at `key` (the manifests' reader has merged no key here: a Template's
    top level and its parameters are plain mappings)."""
    if not isinstance(node, yaml.MappingNode):
        return None
    return next(
        (v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key), None
    )


def _text(node: yaml.Node | None) -> str | None:
    if isinstance(node, yaml.ScalarNode) and node.tag != "tag:yaml.org,2002:null":
        return str(node.value)
    return None


def _defaults(document: yaml.Node) -> dict[str, str] | None:
    """Each parameter's default value (None: not a Template holding objects)."""
    if _text(_get(document, "kind")) != "Template" or _get(document, "objects") is None:
        return None
    defaults: dict[str, str] = {}
    parameters = _get(document, "parameters")
    for parameter in parameters.value if isinstance(parameters, yaml.SequenceNode) else []:
        named, given = _text(_get(parameter, "name")), _text(_get(parameter, "value"))
        if named and given is not None:
            defaults[named] = given
    return defaults


def _scalars(node: yaml.Node, seen: set[int]) -> Iterator[yaml.ScalarNode]:
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.ScalarNode):
        yield node
    elif isinstance(node, yaml.SequenceNode):
        for child in node.value:
            yield from _scalars(child, seen)
    elif isinstance(node, yaml.MappingNode):
        for _, value in node.value:
            yield from _scalars(value, seen)


def fill_parameters(path: Path, documents: Sequence[yaml.Node], say: bool = True) -> None:
    """Every parameter reference in a Template's objects replaced by the parameter's default,
    in place (a value of its own, as `oc process` substitutes into the parsed objects); one
    with no default becomes a kubelet reference `$(NAME)`, a value the manifests do not give.
    Notes say (`say`) which were taken and which are not known. Other documents are left
    alone; filled ones have no reference left, so a second fill changes nothing."""
    used: dict[str, int] = {}
    unknown: dict[str, int] = {}
    for document in documents:
        defaults = _defaults(document)
        held = _get(document, "objects")
        if defaults is None or held is None:
            continue
        for scalar in _scalars(held, set()):
            line = scalar.start_mark.line + 1

            def fill(
                match: re.Match[str], line: int = line, defaults: dict[str, str] = defaults
            ) -> str:
                name = match[2]
                if name not in defaults:
                    unknown.setdefault(name, line)
                    return f"$({name})"
                used.setdefault(name, line)
                return defaults[name]

            scalar.value = _REFERENCE.sub(fill, str(scalar.value))
    if used and say:
        first = min(used.values())
        note(
            "template",
            Location(path, first),
            f"{path}:{first}: an OpenShift Template: its objects were read with each parameter "
            f"at its default (`value:`; {len(used)} used, `oc process -p NAME=...` may give "
            "others)",
        )
    if unknown and say:
        first = min(unknown.values())
        names = ", ".join(f"${{{name}}} (line {line})" for name, line in unknown.items())
        note(
            "unresolved-variable",
            Location(path, first),
            f"{path}:{first}: {names}: OpenShift Template parameters with no default, given "
            "where it is processed: read as unknown, what depends on them was not checked",
        )
