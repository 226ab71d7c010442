"""`check`'s settings file: `[tool.servertune.check]` in pyproject.toml, or `[check]` in
servertune.toml for a repository that is not a Python package.

Found as ruff finds its own: from the checked files' directory upwards, the first directory
holding a `servertune.toml`, or a `pyproject.toml` with a `[tool.servertune.check]` table
(a pyproject.toml without one is passed over). Each key is declared once in `KEYS` (its type,
its range, the flag it stands for, its description), and the validation, `--show-settings`
and the docs' settings table all read that declaration. A command-line flag wins over its key.

A settings file that is not UTF-8 or not TOML, an unknown key, a wrong type or an unknown rule
id is one `SettingsError` naming the file and the key: a typo must not silently turn a rule
back on.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from servertune.check.model import CheckInputError, Severity
from servertune.check.source import read_text

__all__ = [
    "CORES_RANGE",
    "KEYS",
    "LB_IDLE_TIMEOUT_RANGE",
    "OFF",
    "PYPROJECT_TABLE",
    "RSS_MB_RANGE",
    "SERVERTUNE_TABLE",
    "Applied",
    "CheckSettings",
    "Key",
    "SettingsError",
    "applied",
    "excluded",
    "find_settings",
    "glob_matches",
    "is_folder",
    "load_settings",
    "settings_for",
    "settings_table",
    "show_settings",
]

#: The table in pyproject.toml, and in servertune.toml.
PYPROJECT_TABLE = ("tool", "servertune", "check")
SERVERTUNE_TABLE = ("check",)
#: The ranges `check` takes, for a key here and its flag alike.
CORES_RANGE = (1, 1024)
LB_IDLE_TIMEOUT_RANGE = (1, 4000)
RSS_MB_RANGE = (1, 1048576)
#: A rule's severity that turns it off (its findings are listed as ignored, never counted).
OFF = "off"


class SettingsError(CheckInputError):
    """A settings file check cannot use: one line naming the file, the key and why."""


#: A key's parser: the TOML value and the settings file's directory -> the value, or ValueError
#: saying what was expected.
Parse = Callable[[Any, Path], Any]


@dataclass(frozen=True)
class Key:
    """One setting: its TOML key, the `check` flag it stands for, what it takes, its default."""

    name: str
    flag: str | None
    takes: str
    description: str
    parse: Parse
    default: Any = None


def _int_in(low: int, high: int) -> Parse:
    def parse(value: Any, root: Path) -> int:
        del root
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"expected an integer from {low} to {high}, got {value!r}")
        return value

    return parse


def _number_in(low: float, high: float) -> Parse:
    def parse(value: Any, root: Path) -> float:
        del root
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not low <= value <= high
        ):
            raise ValueError(f"expected a number from {low:g} to {high:g}, got {value!r}")
        return float(value)

    return parse


def _one_of(names: Callable[[], Sequence[str]]) -> Parse:
    def parse(value: Any, root: Path) -> str:
        del root
        if not isinstance(value, str) or value not in names():
            raise ValueError(f"expected one of {', '.join(names())}, got {value!r}")
        return value

    return parse


def _severities() -> list[str]:
    """Severity names, highest first: generic over the enum, so a new level is a new name."""
    return [s.name for s in sorted(Severity, reverse=True)]


def _balancers() -> list[str]:
    from servertune.check.balancers import LOAD_BALANCERS

    return list(LOAD_BALANCERS)


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"expected a list of {what} (strings), got {value!r}")
    return tuple(value)


def _paths(value: Any, root: Path) -> tuple[Path, ...]:
    """Paths relative to the settings file's directory (as ruff resolves its own)."""
    return tuple(_relative(root / p) for p in _strings(value, "paths"))


def _path(value: Any, root: Path) -> Path:
    if not isinstance(value, str) or not value:
        raise ValueError(f"expected a path (a string), got {value!r}")
    return _relative(root / value)


def _globs(value: Any, root: Path) -> tuple[str, ...]:
    del root
    return _strings(value, "globs")


def _rule_ids() -> dict[str, Any]:
    from servertune.check.catalog import catalog

    return catalog()


def _known_rule(rule: str) -> str:
    if rule not in _rule_ids():
        raise ValueError(f"{rule!r} is not a rule id check has (docs/check.md lists them)")
    return rule


def _severity_map(value: Any, root: Path) -> dict[str, Severity | None]:
    """rule id -> a Severity name, or "off": every level of the enum, so a new one drops in."""
    del root
    if not isinstance(value, dict):
        raise ValueError(f"expected a table of rule id = severity, got {value!r}")
    levels = {s.name: s for s in Severity}
    mapped: dict[str, Severity | None] = {}
    for rule, level in value.items():
        _known_rule(rule)
        if level != OFF and level not in levels:
            choices = ", ".join([*_severities(), OFF])
            raise ValueError(f"{rule}: expected one of {choices}, got {level!r}")
        mapped[rule] = None if level == OFF else levels[level]
    return mapped


def _per_file_ignores(value: Any, root: Path) -> dict[str, tuple[str, ...]]:
    del root
    if not isinstance(value, dict):
        raise ValueError(f"expected a table of glob = [rule ids], got {value!r}")
    table: dict[str, tuple[str, ...]] = {}
    for glob, rules in value.items():
        try:
            table[glob] = tuple(_known_rule(r) for r in _strings(rules, "rule ids"))
        except ValueError as error:
            raise ValueError(f"{glob!r}: {error}") from None
    return table


def _relative(path: Path) -> Path:
    """`path` relative to the working directory when it is under it (as the user wrote paths),
    else as it is."""
    try:
        relative = Path(os.path.relpath(path))
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.parts[:1] == ("..",) else relative


#: Keys that are one choice: a flag for one of them sets aside the file's value of the others.
_ONE_CHOICE = ("lb", "lb-idle-timeout")

#: Every key, in the order `--show-settings` and the docs list them.
KEYS: tuple[Key, ...] = (
    Key("cores", "--cores", "integer, {} to {}".format(*CORES_RANGE),
        "cores of the server that runs these configs", _int_in(*CORES_RANGE)),
    Key("fail-on", "--fail-on", "one of: " + ", ".join(_severities()), "exit 1 on findings of this severity or worse",
        _one_of(_severities), "warning"),
    Key("lb", "--lb", "a name: `aws-alb`, `gcp-https`, ... (as `--lb`)",
        "the load balancer in front (its documented idle timeout)", _one_of(_balancers)),
    Key("lb-idle-timeout", "--lb-idle-timeout", "integer, {} to {}".format(*LB_IDLE_TIMEOUT_RANGE),
        "the load balancer's idle timeout (s)", _int_in(*LB_IDLE_TIMEOUT_RANGE)),
    Key("rss-mb", "--rss-mb", "number, {} to {}".format(*RSS_MB_RANGE),
        "resident memory of one warm worker (MiB)", _number_in(*RSS_MB_RANGE)),
    Key("env-files", "--env-file", "list of paths",
        "KEY=value files the servers run with, read in order (a later one wins)", _paths, ()),
    Key("exclude", None, "list of globs",
        "files never checked, even when named (a pre-commit hook names them)", _globs, ()),
    Key("severity", None, "table: rule id = severity or \"off\"",
        "a rule's severity in this repository; \"off\" lists its findings as ignored",
        _severity_map, {}),
    Key("per-file-ignores", None, "table: glob = list of rule ids",
        "rules ignored in the files a glob matches", _per_file_ignores, {}),
    Key("baseline", "--baseline", "path",
        "a baseline (`--baseline-write`): only findings not in it count", _path),
)  # fmt: skip
_BY_NAME = {key.name: key for key in KEYS}


@dataclass(frozen=True)
class CheckSettings:
    """The settings read (or none: every key at its default), and the file they came from."""

    file: Path | None = None
    #: The table they were read from, as written in the file (`[tool.servertune.check]`).
    table: str = ""
    values: Mapping[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        """The directory globs and paths are relative to: the settings file's."""
        return self.file.parent if self.file is not None else Path()

    def get(self, name: str) -> Any:
        """The key's value, or its default."""
        return self.values.get(name, _BY_NAME[name].default)

    @property
    def where(self) -> str:
        """Where the settings came from, in words (`pyproject.toml [tool.servertune.check]`)."""
        return "no settings file" if self.file is None else f"{self.file} {self.table}"


def _table(document: dict[str, Any], path: Path) -> tuple[tuple[str, ...], Any] | None:
    names = PYPROJECT_TABLE if path.name == "pyproject.toml" else SERVERTUNE_TABLE
    if path.name != "pyproject.toml":
        unknown = sorted(set(document) - {names[0]})
        if unknown:
            raise SettingsError(
                f"{path}: {unknown[0]}: unknown table (servertune.toml has [check])"
            )
    table: Any = document
    for name in names:
        if not isinstance(table, dict) or name not in table:
            return None
        table = table[name]
    return names, table


def load_settings(path: Path) -> CheckSettings | None:
    """The settings of this file (None: a pyproject.toml without the table), or SettingsError."""
    try:
        text = read_text(path)
    except CheckInputError as error:
        raise SettingsError(str(error)) from None
    if path.name == "pyproject.toml" and "servertune" not in text:
        return None  # a pyproject.toml that cannot be configuring check: not parsed
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"{path}: not valid TOML: {error}") from None
    except RecursionError:
        raise SettingsError(f"{path}: not valid TOML: nested too deeply") from None
    found = _table(document, path)
    if found is None:
        if path.name != "pyproject.toml":
            return CheckSettings(path, "[check]", {})
        return None
    names, table = found
    where = f"[{'.'.join(names)}]"
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: {where}: expected a table, got {table!r}")
    values: dict[str, Any] = {}
    for name, value in table.items():
        key = _BY_NAME.get(name)
        if key is None:
            known = ", ".join(_BY_NAME)
            raise SettingsError(f"{path}: {where} {name}: unknown key (the keys: {known})")
        try:
            values[name] = key.parse(value, path.parent)
        except ValueError as error:
            raise SettingsError(f"{path}: {where} {name}: {error}") from None
    if all(name in values for name in _ONE_CHOICE):
        raise SettingsError(f"{path}: {where} lb, lb-idle-timeout: give one of them, not both")
    return CheckSettings(path, where, values)


def find_settings(start: Path) -> CheckSettings:
    """The settings that apply under `start` (a directory): the nearest upwards, or none."""
    for directory in (start, *start.parents):
        for name in ("servertune.toml", "pyproject.toml"):
            candidate = directory / name
            if _is_file(candidate):
                settings = load_settings(_relative(candidate))
                if settings is not None:
                    return settings
    return CheckSettings()


def is_folder(path: Path) -> bool:
    """A directory (a name too long or a loop of symlinks is none: the reader says why)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def settings_for(paths: Sequence[Path], explicit: Path | None = None) -> CheckSettings:
    """The settings of a run: the file named (`--settings`), else the one found upwards from
    the checked files' common directory (the working directory when none is named)."""
    if explicit is not None:
        settings = load_settings(explicit)
        if settings is None:
            raise SettingsError(f"--settings {explicit}: has no [tool.servertune.check] table")
        return settings
    directories = [(p if is_folder(p) else p.parent).absolute() for p in paths] or [Path.cwd()]
    common = Path(os.path.commonpath([str(d) for d in directories]))
    return find_settings(common)


@dataclass(frozen=True)
class Applied:
    """A setting's value for this run, and where it came from (a flag, the file, the default)."""

    value: Any
    source: str


def applied(settings: CheckSettings, flags: Mapping[str, Any]) -> dict[str, Applied]:
    """Every key's value for this run: the flag when given (not None), else the file's, else the
    default; each with where it came from."""
    result: dict[str, Applied] = {}
    chosen = next((n for n in _ONE_CHOICE if flags.get(n) is not None), None)
    for key in KEYS:
        given = flags.get(key.name)
        if given is not None and key.flag is not None:
            result[key.name] = Applied(given, key.flag)
        elif chosen is not None and key.name in _ONE_CHOICE:
            result[key.name] = Applied(key.default, f"set aside by {_BY_NAME[chosen].flag}")
        elif key.name in settings.values:
            result[key.name] = Applied(settings.values[key.name], str(settings.file))
        else:
            result[key.name] = Applied(key.default, "default")
    return result


def _shown(value: Any) -> str:
    """A value as TOML writes it."""
    if isinstance(value, Severity):
        return f'"{value.name}"'
    if value is None:
        return "(none)"
    if isinstance(value, str | Path):
        return f'"{PurePosixPath(value) if isinstance(value, Path) else value}"'
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    if isinstance(value, dict):
        pairs = [f"{_tomlkey(k)} = {_shown(OFF if v is None else v)}" for k, v in value.items()]
        return "{ " + ", ".join(pairs) + " }" if pairs else "{}"
    return str(value)


def _tomlkey(key: str) -> str:
    return key if all(c.isalnum() or c in "-_" for c in key) else f'"{key}"'


def show_settings(settings: CheckSettings, values: Mapping[str, Applied]) -> str:
    """`check --show-settings`: the file read, then each key's value and where it came from."""
    lines = [f"settings: {settings.where}"]
    width = max(len(f"{k} = {_shown(a.value)}") for k, a in values.items())
    for name, value in values.items():
        lines.append(f"{f'{name} = {_shown(value.value)}':<{width}}  # {value.source}")
    return "\n".join(lines)


def glob_matches(glob: str, path: Path, root: Path) -> bool:
    """`glob` matches `path`: a glob with a `/` against the path relative to `root` (the
    settings file's directory), one without against the file's name or any directory's, as a
    .gitignore line matches (`*.dev.yaml`, `legacy`)."""
    try:
        relative = PurePosixPath(Path(os.path.relpath(path.absolute(), root.absolute())).as_posix())
    except ValueError:
        relative = PurePosixPath(path.as_posix())
    if "/" in glob.rstrip("/"):
        pattern = glob.removeprefix("./").removeprefix("/").rstrip("/")
        return fnmatch.fnmatchcase(str(relative), pattern) or any(
            fnmatch.fnmatchcase(str(parent), pattern) for parent in relative.parents
        )
    return any(fnmatch.fnmatchcase(part, glob.rstrip("/")) for part in relative.parts)


def excluded(path: Path, settings: CheckSettings) -> bool:
    """One of the settings' `exclude` globs matches `path`."""
    return any(glob_matches(glob, path, settings.root) for glob in settings.get("exclude"))


def settings_table() -> str:
    """The docs' table of keys (docs/check.md shows it; tests/test_check_settings.py pins it)."""
    rows = ["| Key | Takes | Flag that wins | What it sets |", "|---|---|---|---|"]
    for key in KEYS:
        flag = f"`{key.flag}`" if key.flag else "none"
        rows.append(f"| `{key.name}` | {key.takes} | {flag} | {key.description} |")
    return "\n".join(rows)
