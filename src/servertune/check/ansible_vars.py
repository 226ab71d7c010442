"""The values an ansible play or role gives the templates it installs, from the tree's files.

A role's or a playbook's `templates/Caddyfile.j2` is rendered with the variables its play
gives: a play's `vars:` (`setup.yml` beside `templates/`), the role's `defaults/main.yml` and
`vars/main.yml`, the inventory's `group_vars/` and `host_vars/` files. A template read in place
(`value_templates`) takes a value from them where it is a literal (`bind_port: '8000'`), so
`127.0.0.1:{{ app.bind_port }}` is `127.0.0.1:8000`; a value written from other values
(`sock: "{{ app_path }}/uwsgi.sock"`) is filled from them where each is a literal; a filter,
a list or a mapping is not taken, and a name the files give two different values is left unresolved (which
one the deployment uses is its inventory's choice).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from servertune.check import memo

__all__ = ["ansible_values", "is_play_template", "play_values"]

#: Folders whose YAML files are variables by ansible's layout, at any depth below the play.
_VARS_FOLDERS = frozenset({"group_vars", "host_vars", "defaults", "vars"})
_YAML = (".yml", ".yaml")
#: A value that names another variable and nothing else: `{{ openwisp2_path }}`.
_NAMED = re.compile(r"\{\{-?\s*(?P<name>[A-Za-z_][\w.]*)\s*-?\}\}")
#: How many folders up from a template its role's `templates/` is looked for.
_TEMPLATE_DEPTH = 3


def ansible_values(template: Path) -> Mapping[str, str]:
    """The literal values (dotted names: `app.bind_port`) the play or role holding `template`,
    a file in a `templates/` folder or a folder below it (`templates/supervisor/app.j2`, which
    ansible's `template` finds by that relative path), gives; empty for any other file."""
    for folder in list(template.absolute().parents)[:_TEMPLATE_DEPTH]:
        if folder.name == "templates":
            return play_values(folder.parent)
    return {}


def is_play_template(template: Path) -> bool:
    """Whether `template` is in the `templates/` folder of an ansible role (beside its `tasks/`)
    or of a playbook's folder (beside a YAML file of plays, each with `hosts:`): a file the play
    renders on the hosts it deploys."""
    for folder in list(template.absolute().parents)[:_TEMPLATE_DEPTH]:
        if folder.name == "templates":
            return (folder.parent / "tasks").is_dir() or any(
                _is_playbook(path) for path in sorted(folder.parent.glob("*"))
            )
    return False


def _is_playbook(path: Path) -> bool:
    if path.suffix not in _YAML or not path.is_file():
        return False
    loaded = _load(path)
    return isinstance(loaded, list) and any(
        isinstance(play, dict) and "hosts" in play for play in loaded
    )


def play_values(place: Path) -> Mapping[str, str]:
    """The literal values the role or the playbook's folder `place` (the folder holding its
    `templates/`, `files/` and `tasks/`) gives its tasks and templates."""
    folder = place.absolute() / "templates"
    return memo.recall(memo.run_table("ansible values"), str(folder), lambda: _values(folder))


def _values(templates: Path) -> dict[str, str]:
    role = templates.parent
    # A role's templates take the role's own variables and its playbook's (above `roles/`).
    places = [role, role.parent.parent] if role.parent.name == "roles" else [role]
    found: dict[str, set[str]] = {}
    for place in places:
        for mapping in _mappings(place):
            for name, value in _flattened(mapping, ""):
                found.setdefault(name, set()).add(value)
    single = {name: next(iter(values)) for name, values in found.items() if len(values) == 1}
    return _resolved(single)


def _resolved(values: Mapping[str, str]) -> dict[str, str]:
    """The literal values of `values`, with a value written from others (`{{ path }}/app.sock`)
    filled in where each name it uses is itself known (a filter or an expression is not)."""
    known = {name: value for name, value in values.items() if not _templated(value)}
    pending = {name: value for name, value in values.items() if name not in known}
    while pending:
        filled = {
            name: _NAMED.sub(lambda match: known[match["name"]], value)
            for name, value in pending.items()
            if all(match["name"] in known for match in _NAMED.finditer(value))
            and not _templated(_NAMED.sub("", value))
        }
        if not filled:
            break
        known.update(filled)
        for name in filled:
            del pending[name]
    return known


def _templated(text: str) -> bool:
    return "{{" in text or "{%" in text


def _mappings(place: Path) -> Iterator[Mapping[object, object]]:
    """The variable mappings of a play's folder: its plays' `vars:` and its vars files."""
    for path in sorted(place.glob("*")):
        if path.suffix in _YAML and path.is_file():
            loaded = _load(path)
            plays = loaded if isinstance(loaded, list) else []
            for play in plays:
                if (
                    isinstance(play, dict)
                    and "hosts" in play
                    and isinstance(play.get("vars"), dict)
                ):
                    yield play["vars"]
        elif path.is_dir() and path.name in _VARS_FOLDERS:
            for folder, _, names in os.walk(path):
                for name in sorted(n for n in names if n.endswith(_YAML)):
                    loaded = _load(Path(folder) / name)
                    if isinstance(loaded, dict):
                        yield loaded


def _load(path: Path) -> object:
    import yaml

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None


def _flattened(mapping: Mapping[object, object], prefix: str) -> Iterator[tuple[str, str]]:
    """(dotted name, text) of every scalar below `mapping`."""
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flattened(value, name + ".")
        elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
            yield name, str(value)
