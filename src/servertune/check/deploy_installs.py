"""Files a deploy tool of the repository installs at other paths of the host.

An ansible role installs its files where the servers read them (`template: src=gunicorn.py.j2
dest=/etc/mmw.d/gunicorn.py`, WikiWatershed/model-my-watershed), and the unit it installs
starts gunicorn with `--config /etc/mmw.d/gunicorn.py`. Like a Dockerfile's COPY, such a task
is an install map: a command line naming the destination names the repository file, the
task's `src` (under the role's `templates/` for `template`, `files/` for `copy`, else the
role's or the playbook's own folder). A salt state's `file.managed` (`- name: /etc/...`,
`- source: salt://...`) is the same, its source under the salt root (the folder of `top.sls`).

Only literal paths are taken: a `{{ var }}` the role's or play's files give one literal value
(`check.ansible_vars`) is that value, `{{ role_path }}` and `{{ playbook_dir }}` their folders;
any other templating (a loop's `{{ item }}`), a `remote_src` copy (a file of the host) or a
folder copied whole is no entry. The tasks are read, never run.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from servertune.check import memo, resolve
from servertune.check.commands import ConfigFile
from servertune.check.debian_installs import PACKAGING_FOLDER, debian_installs

__all__ = ["installed_as", "installed_files"]

#: (the installed path, the repository file) of each literal install task.
Install = tuple[str, Path]

#: An ansible role's (or playbook folder's) folders of files to install.
_ROLE_FOLDERS = frozenset({"templates", "files"})
#: The modules that install a file, each with the folder its relative `src` is looked in first.
_MODULES = {
    "template": "templates",
    "ansible.builtin.template": "templates",
    "copy": "files",
    "ansible.builtin.copy": "files",
}
#: The keys of a play or a task holding more tasks.
_TASK_LISTS = ("tasks", "pre_tasks", "post_tasks", "block", "rescue", "always")
_YAML = (".yml", ".yaml")
_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")
#: How far above a file its role's or salt root's folder is looked for.
_LEVELS = 4
#: The most task or state files one folder's reading opens.
_MOST_FILES = 200


def installed_files(paths: Sequence[Path]) -> dict[str, ConfigFile]:
    """The repository files the deploy tools holding `paths` install, by installed absolute
    path (two tasks installing one path: the first read)."""
    from servertune.check.source import read_text

    installs: dict[str, Path] = {}
    for place, reader in dict.fromkeys(p for path in paths for p in _places(path)):
        for dest, src in reader(place):
            installs.setdefault(dest, src)
    found: dict[str, ConfigFile] = {}
    for dest, src in installs.items():
        try:
            found[dest] = ConfigFile(read_text(src), src)
        except (OSError, UnicodeDecodeError, ValueError):
            continue
    return found


def installed_as(file: Path) -> str | None:
    """The absolute path a deploy tool of the repository installs `file` at (a unit's
    `gunicorn.service.j2` at `/etc/systemd/system/gunicorn.service`); None when none does."""
    real = resolve.real_path(file.absolute())
    for place, reader in _places(file):
        for dest, src in reader(place):
            if resolve.real_path(src) == real:
                return dest
    return None


def _places(file: Path) -> Iterator[tuple[Path, Callable[[Path], tuple[Install, ...]]]]:
    """The folders whose deploy tool may install `file`, each with its reader: the role or
    playbook folder above its `templates/` or `files/`, the salt root holding it, the Debian
    packaging folder (`debian/`) holding it."""
    top = resolve.root()
    # As the run names its files (relative to where it runs): the installed file is then the
    # very file the run reads on its own, not a second one by another name.
    folder = file.parent
    for _ in range(_LEVELS):
        if folder.name in _ROLE_FOLDERS:
            yield folder.parent, _ansible_installs
        if (folder / "top.sls").is_file():
            yield folder, _salt_installs
        if folder.name == PACKAGING_FOLDER:
            yield folder, debian_installs
        if folder.parent == folder or (top is not None and resolve.real_path(folder) == top):
            return
        folder = folder.parent


def _ansible_installs(base: Path) -> tuple[Install, ...]:
    """The literal install tasks of the role or playbook folder `base`, once per run."""
    key = (resolve.root(), "ansible", base)
    return memo.recall(memo.run_table("deploy installs"), key, lambda: tuple(_ansible(base)))


def _ansible(base: Path) -> Iterator[Install]:
    from servertune.check.ansible_vars import play_values

    values = dict(play_values(base))
    values["role_path"] = str(base)
    playbook = base.parent.parent if base.parent.name == "roles" else base
    values["playbook_dir"] = str(playbook)
    written: dict[str, Path | None] = {}  # each task's `dest` as written: the file it installs
    links: list[tuple[str, str]] = []
    for tasks in _task_lists(base):
        for task in tasks:
            found = _install(base, task, values)
            if found is not None:
                yield found
            installed = _install(base, task, values, as_written=True)
            if installed is not None:
                dest = installed[0]
                written[dest] = (
                    installed[1] if written.get(dest, installed[1]) == installed[1] else None
                )
            links += _link(task, values)
    # A link to what a task installs (`file: path=/etc/uwsgi/app.ini src="{{ app_dir }}uwsgi.ini"
    # state=link` after `template: dest="{{ app_dir }}uwsgi.ini"`): one expression of one
    # role's tasks names one path of the host, known or not (Cadasta/cadasta-platform).
    for path, target in links:
        source = written.get(target)
        if source is not None:
            yield path, source


def _task_lists(base: Path) -> Iterator[Sequence[object]]:
    """The task lists of `base`: each file of its `tasks/`, and its playbooks' plays."""
    files = sorted(p for p in base.glob("*") if p.suffix in _YAML and p.is_file())
    for folder, _, names in os.walk(base / "tasks"):
        files += [Path(folder) / n for n in sorted(names) if n.endswith(_YAML)]
    for path in files[:_MOST_FILES]:
        loaded = _load(path)
        if not isinstance(loaded, list):
            continue
        if path.parent == base:  # a playbook: its plays' tasks, nothing else there
            for play in loaded:
                if isinstance(play, dict) and "hosts" in play:
                    yield from _nested(play)
            continue
        yield loaded
        for task in loaded:
            if isinstance(task, dict):
                yield from _nested(task)


def _nested(holder: Mapping[object, object]) -> Iterator[Sequence[object]]:
    """The task lists a play or a task holds (`tasks:`, `block:`), at any depth."""
    for key in _TASK_LISTS:
        inner = holder.get(key)
        if isinstance(inner, list):
            yield inner
            for task in inner:
                if isinstance(task, dict):
                    yield from _nested(task)


def _link(task: object, values: Mapping[str, str]) -> list[tuple[str, str]]:
    """(the link's absolute literal path, its target as written) of a `file` task making a
    symbolic link; none for any other task."""
    module = next(
        (m for m in ("file", "ansible.builtin.file") if isinstance(task, dict) and m in task), None
    )
    if module is None or not isinstance(task, dict):
        return []
    args = _arguments(task[module])
    path = _literal(args.get("path") or args.get("dest") or args.get("name"), values)
    target = args.get("src")
    if str(args.get("state", "")) != "link" or path is None or not path.startswith("/"):
        return []
    if not isinstance(target, str) or not target:
        return []
    filled = _VARIABLE.sub(lambda m: values.get(m[1], m[0]), target)
    return [(posixpath.normpath(path), posixpath.normpath(filled))]


def _install(
    base: Path, task: object, values: Mapping[str, str], *, as_written: bool = False
) -> Install | None:
    """(dest, src) of a `template`/`copy` task whose paths are literal; None otherwise. With
    `as_written`, its `dest` as the task writes it, the values `values` gives filled and any
    other expression kept (`{{ app_dir }}uwsgi.ini`), whatever the path it names."""
    if not isinstance(task, dict):
        return None
    module = next((m for m in _MODULES if m in task), None)
    if module is None:
        return None
    args = _arguments(task[module])
    if isinstance(task.get("args"), dict):
        args = {**{str(k): v for k, v in task["args"].items()}, **args}
    if str(args.get("remote_src", "")).lower() in ("yes", "true", "1"):
        return None  # the host's own file, not the repository's
    src, dest = _literal(args.get("src"), values), _literal(args.get("dest"), values)
    if as_written and src is not None and isinstance(args.get("dest"), str):
        dest = _VARIABLE.sub(lambda m: values.get(m[1], m[0]), str(args["dest"]))
        if dest.endswith("/"):
            return None
    elif src is None or dest is None or not dest.startswith("/"):
        return None
    folders = (base / _MODULES[module], base, base / "tasks")
    candidates = [Path(src)] if src.startswith("/") else [f / src for f in folders]
    for candidate in candidates:
        # Outside a run (a rule asking after it), the role's own folder bounds the lookup.
        inside = resolve.inside(candidate, base / "tasks")
        if ".." not in Path(src).parts and candidate.is_file() and inside:
            if dest.endswith("/"):
                dest += candidate.name
            return posixpath.normpath(dest), candidate
    return None


def _arguments(value: object) -> dict[str, object]:
    """A module's arguments: its mapping, or its `key=value` words."""
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items()}
    if not isinstance(value, str):
        return {}
    try:
        words = shlex.split(value)
    except ValueError:
        return {}
    pairs = (w.partition("=") for w in words if "=" in w)
    return {name: given for name, _, given in pairs}


def _literal(value: object, values: Mapping[str, str]) -> str | None:
    """`value` with the `{{ name }}`s `values` gives filled; None when any templating stays."""
    if not isinstance(value, str) or not value:
        return None
    text = _VARIABLE.sub(lambda m: values.get(m[1], m[0]), value)
    return None if "{{" in text or "{%" in text else text


def _salt_installs(root: Path) -> tuple[Install, ...]:
    """The literal `file.managed` states of the salt root `root`, once per run."""
    key = (resolve.root(), "salt", root)
    return memo.recall(memo.run_table("deploy installs"), key, lambda: tuple(_salt(root)))


def _salt(root: Path) -> Iterator[Install]:
    files: list[Path] = []
    for folder, _, names in os.walk(root):
        files += [Path(folder) / n for n in sorted(names) if n.endswith(".sls")]
    for path in files[:_MOST_FILES]:
        states = _load(path, jinja_lines=True)
        if not isinstance(states, dict):
            continue
        for state_id, state in states.items():
            found = _managed(root, str(state_id), state)
            if found is not None:
                yield found


def _managed(root: Path, state_id: str, state: object) -> Install | None:
    """(name, source) of a `file.managed` state with a literal `salt://` source."""
    if not isinstance(state, dict):
        return None
    if isinstance(state.get("file.managed"), list):
        arguments = state["file.managed"]
    elif isinstance(state.get("file"), list) and "managed" in state["file"]:
        arguments = state["file"]
    else:
        return None
    given: dict[str, object] = {"name": state_id}
    for item in arguments:
        if isinstance(item, dict):
            given.update({str(k): v for k, v in item.items()})
    name, source = given.get("name"), given.get("source")
    if isinstance(source, list):
        source = source[0] if source else None
    if not isinstance(name, str) or not isinstance(source, str):
        return None
    if not name.startswith("/") or not source.startswith("salt://") or "{" in name + source:
        return None
    relative = source.removeprefix("salt://")
    candidate = root / relative
    if (
        ".." in Path(relative).parts
        or not candidate.is_file()
        or not resolve.inside(candidate, root / "top.sls")
    ):
        return None
    return posixpath.normpath(name), candidate


def _load(path: Path, jinja_lines: bool = False) -> object:
    """The YAML of `path`; with `jinja_lines`, its lines of Jinja statements left out (a salt
    state's `{% if %}`: what they choose between is not known here). None when not YAML."""
    try:
        import yaml
    except ModuleNotFoundError:  # no YAML parser: no install map (the extra is named elsewhere)
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if jinja_lines:
        text = "\n".join(
            "" if line.lstrip().startswith(("{%", "{#")) else line for line in text.splitlines()
        )
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None
