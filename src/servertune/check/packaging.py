"""A project's console scripts: the commands its packaging declares (`lnbits =
"lnbits.server:main"` in pyproject.toml), so a launch that runs one (`uv run lnbits --port
5000`) is followed into the function it names, as any launcher script is.

The pyproject.toml is looked up as the launch looks up its files (beside the file that runs the
command, or in the image that copies it, from its WORKDIR); the module is found under the same
folder, flat or under `src/`. Nothing is imported: the module is read by `pylauncher`.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from typing import Any

from servertune.check.commands import ConfigFile, FindConfig
from servertune.check.model import Location

__all__ = ["ConsoleScript", "console_script", "declared_script"]

#: A console script's object reference: `package.module:function`.
_REFERENCE = re.compile(r"\A\s*([A-Za-z_][\w.]*)\s*:\s*([A-Za-z_]\w*)\s*\Z")


@dataclass(frozen=True)
class ConsoleScript:
    """The module file and function a console script runs, and where it is declared."""

    module: ConfigFile
    function: str
    declared_at: Location


def _scripts(document: dict[str, Any]) -> dict[str, Any]:
    """`[project.scripts]`, and poetry's `[tool.poetry.scripts]` (a string or `{reference=}`)."""
    found: dict[str, Any] = {}
    project = document.get("project")
    if isinstance(project, dict) and isinstance(project.get("scripts"), dict):
        found.update(project["scripts"])
    tool = document.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if isinstance(poetry, dict) and isinstance(poetry.get("scripts"), dict):
        for name, value in poetry["scripts"].items():
            reference = value.get("reference") if isinstance(value, dict) else value
            found.setdefault(name, reference)
    return found


def console_script(name: str, find_config: FindConfig, at: Location) -> ConsoleScript | None:
    """What the command `name` runs when the project's pyproject.toml declares it as a console
    script and its module is here; None otherwise (a program of the image's, not the
    project's)."""
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*", name):
        return None
    meta = find_config("pyproject.toml", at)
    if meta is None:
        return None
    try:
        document = tomllib.loads(meta.text)
    except tomllib.TOMLDecodeError:
        return None  # said when the file is read as what it is, if ever
    reference = _scripts(document).get(name)
    matched = _REFERENCE.match(reference) if isinstance(reference, str) else None
    if matched is None:
        return None
    module, function = matched.groups()
    relative = module.replace(".", "/")
    line = next(
        (
            number
            for number, text in enumerate(meta.text.splitlines(), start=meta.first_line)
            if re.match(rf"\s*['\"]?{re.escape(name)}['\"]?\s*=", text)
        ),
        meta.first_line,
    )
    for candidate in (
        f"{relative}.py",
        f"{relative}/__init__.py",
        f"src/{relative}.py",
        f"src/{relative}/__init__.py",
    ):
        found = find_config(candidate, at)
        if found is not None:
            return ConsoleScript(found, function, Location(meta.file, line))
    return None


#: A console script's declaration in setup.cfg's `console_scripts =` or setup.py's
#: `entry_points`: `name = package.module:function`.
_DECLARED = r"\A\s*['\"]?{name}\s*=\s*[A-Za-z_][\w.]*\s*:\s*[A-Za-z_]\w*"


def declared_script(name: str, find_config: FindConfig, at: Location) -> Location | None:
    """Where the project's packaging (pyproject.toml, setup.cfg, setup.py) declares `name` as
    a console script, found as the launch finds its files; None when it does not."""
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*", name):
        return None
    meta = find_config("pyproject.toml", at)
    if meta is not None:
        try:
            if name in _scripts(tomllib.loads(meta.text)):
                declared = _line_of(meta, rf"\A\s*['\"]?{re.escape(name)}['\"]?\s*=")
                return declared or Location(meta.file, meta.first_line)
        except tomllib.TOMLDecodeError:
            pass  # said when the file is read as what it is, if ever
    for setup in ("setup.cfg", "setup.py"):
        found = find_config(setup, at)
        if found is not None:
            line = _line_of(found, _DECLARED.format(name=re.escape(name)))
            if line is not None:
                return line
    return None


def _line_of(found: ConfigFile, pattern: str) -> Location | None:
    """The first line of `found` that matches `pattern`, as a Location."""
    for number, text in enumerate(found.text.splitlines(), start=found.first_line):
        if re.match(pattern, text):
            return Location(found.file, number)
    return None
