"""gunicorn.conf.py, read as source and never run, unless the user asks for it to be run.

A gunicorn config is Python: its numbers may come from the environment, GUNICORN_CMD_ARGS or
`multiprocessing.cpu_count()`. `check` runs in pre-commit hooks on other people's pull
requests, so by default it reads the file without running it (`pystatic`: literals, arithmetic,
the environment, the CPU count), then hands the values to gunicorn's own `Config` (its
validators, its command-line parser for GUNICORN_CMD_ARGS and the command's flags), so every
value is gunicorn's type. What the static read cannot know is reported as unresolved.
`--execute-gunicorn-config` loads it through gunicorn itself instead, in a child interpreter
killed after GUNICORN_EVAL_TIMEOUT_S (`_gunicorn_probe.py`): that runs the file's code.
Line numbers come from the file's syntax tree.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import difflib
import functools
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from servertune.check._gunicorn_probe import NAMES as _READ
from servertune.check._gunicorn_probe import PROBE_CPUS as _PROBE_CPUS
from servertune.check.budget import OverBudget
from servertune.check.model import (
    AppServer,
    CheckInputError,
    Location,
    Setting,
    evaluation_cores,
    note,
)

# The static reader evaluates a file for the same two CPU counts as the child probe (no real
# host reports both: a `workers` that differs between them follows the CPU count) and reads the
# settings the probe reports: both declared once, in the probe, which imports nothing itself.
from servertune.check.working_dirs import started_in

if TYPE_CHECKING:
    from servertune.check.pystatic import StaticConfig

__all__ = [
    "ASGI_WORKER_CLASSES",
    "GUNICORN_DEFAULTS",
    "GUNICORN_EVAL_TIMEOUT_S",
    "GUNICORN_FLAGS",
    "executing_configs",
    "full_flags",
    "gunicorn_app",
    "interface_of",
    "read_gunicorn",
    "read_gunicorn_command",
]

#: A config file that has not finished loading after this long is looping (gunicorn itself
#: would never start); importing gunicorn takes well under a second.
GUNICORN_EVAL_TIMEOUT_S = 10.0
_PROBE = Path(__file__).with_name("_gunicorn_probe.py")
_MARK = "@@servertune-check@@"
#: gunicorn's documented defaults (docs.gunicorn.org/en/stable/settings.html), used only to say
#: "default" beside a value the file did not set; the values themselves come from gunicorn.
GUNICORN_DEFAULTS = {"keepalive": 2, "timeout": 30, "graceful_timeout": 30, "backlog": 2048}
#: gunicorn worker classes that run an ASGI app, one event loop per process: gunicorn's native
#: `asgi` worker (`-k asgi`, `worker_class = "asgi"`, the `egg:` spelling or its class path; what
#: `gen gunicorn-asgi` writes where gunicorn has it), uvicorn's workers from the uvicorn-worker
#: package (`gen gunicorn-asgi` writes a subclass of its UvicornWorker otherwise) and from uvicorn
#: itself (deprecated there, still common). A config whose worker class is one of these, or
#: derives from one, is compared with the ASGI plan: its `threads` mean nothing.
ASGI_WORKER_CLASSES = frozenset(
    {
        "asgi",
        "egg:gunicorn#asgi",
        "gunicorn.workers.gasgi.ASGIWorker",
        *(
            f"{module}.{name}"
            for module in ("uvicorn_worker", "uvicorn_worker._workers", "uvicorn.workers")
            for name in ("UvicornWorker", "UvicornH11Worker")
        ),
    }
)


def _lines(text: str, path: Path) -> dict[str, int]:
    """The line of the last top-level assignment to each name (gunicorn keeps the last value)."""
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as error:
        raise CheckInputError(f"{path}:{error.lineno}: Python syntax error: {error.msg}") from None
    except (RecursionError, MemoryError, ValueError):  # nesting past the parser's limits
        raise CheckInputError(f"{path}: Python nested too deeply to parse") from None
    lines: dict[str, int] = {}
    nested: dict[str, int] = {}
    for node in _module_level(tree.body):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                (lines if node in tree.body else nested)[target.id] = node.lineno
    # A name only a block sets (`else: preload = True`) is placed there; one also set at the
    # top level keeps that line, the value written for every run.
    lines = nested | lines
    handed = _handing_call(tree)
    if handed is not None:
        lines[HANDED] = handed.lineno
    return lines


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that run at the module's level: `body`'s, and those inside its `if`,
    `try` and `with` blocks (a name set there is the module's too, as gunicorn reads it:
    `if DEBUG: reload = True` / `else: preload = True`), not a function's or a class's."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.For, ast.While)):
            yield from _module_level(node.body)
            yield from _module_level(node.orelse)
        elif isinstance(node, ast.With):
            yield from _module_level(node.body)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from _module_level(block)


#: The key `_lines` gives the line of a call handed the module's own names (`_handing_call`).
HANDED = "\0handed"


def _hands_module(node: ast.expr) -> bool:
    """`globals()`, `vars()`, `locals()` (at the top level: the module's names) or
    `sys.modules[__name__]`: the module itself, which the callee may set names in."""
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        return isinstance(node.func, ast.Name) and node.func.id in ("globals", "vars", "locals")
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Name)
        and node.slice.id == "__name__"
        and ast.unparse(node.value) == "sys.modules"
    )


def _handing_call(tree: ast.Module) -> ast.Call | None:
    """The last top-level call handed the module itself (`set_gunicorn_defaults(globals())`,
    alphagov's notifications_utils): the callee may set any setting in it; None when none is."""
    handed: ast.Call | None = None
    for statement in tree.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and any(
                _hands_module(a) for a in [*node.args, *(k.value for k in node.keywords)]
            ):
                handed = node
    return handed


def _unknown(
    tree: ast.Module, found: StaticConfig, flagged: set[str], path: Path, locate: Locate | None
) -> list[str]:
    """The settings read as gunicorn's default, which is not what runs: each the file computes
    from what only the running server knows, or a call handed the module may set, that no
    flag sets."""
    handed = _handed_unknown(tree, found, flagged, path, locate)
    return sorted(set(found.unresolved) - flagged | handed)


def _handed_unknown(
    tree: ast.Module, found: StaticConfig, flagged: set[str], path: Path, locate: Locate | None
) -> set[str]:
    """The settings a call handed the module itself may set (`_handing_call`): each one the
    rules read that no line below it assigns and no flag sets, said in one note."""
    call = _handing_call(tree)
    if call is None:
        return set()
    later = {name for name, line in found.lines.items() if line > call.lineno}
    names = sorted(n for n in _READ if n not in later and n not in flagged)
    if names:
        at = Location(path, call.lineno) if locate is None else locate(HANDED)[0]
        note(
            "unresolved-variable",
            at,
            f"`{ast.unparse(call)}` hands the module's own names to code not read here, which "
            f"may set any setting: {', '.join(names)} (assigned on no line below it) are known "
            "only when gunicorn runs the file; gunicorn was read without them, so they were "
            "not checked",
        )
    return set(names)


#: Whether gunicorn configs are loaded through gunicorn (running them) in the run in progress:
#: only when the user asked (`check --execute-gunicorn-config`).
_EXECUTE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "servertune_execute_gunicorn", default=False
)


@contextlib.contextmanager
def executing_configs(execute: bool = True) -> Iterator[None]:
    """Load gunicorn configs through gunicorn (which runs their code) while the block runs."""
    token = _EXECUTE.set(execute)
    try:
        yield
    finally:
        _EXECUTE.reset(token)


def _evaluate(
    path: Path,
    env: Mapping[str, str] | None,
    argv: tuple[str, ...] = (),
    locate: Locate | None = None,
) -> dict[str, Any]:
    """gunicorn's view of the config at `path` plus the command line `argv`: read statically,
    or loaded by gunicorn in a child interpreter when the user opted in. `locate` places a
    setting in the user's file when `path` is a temporary copy (a command line's config)."""
    if not _EXECUTE.get():
        return _static(path, env, argv, locate)
    note(
        "executed",
        Location(path),
        f"{path}: loaded through gunicorn (--execute-gunicorn-config): its code ran",
    )
    return _executed(path, env, argv)


#: Settings gunicorn validates against the machine it starts on (the directory exists, the
#: account exists, `--reload-extra-file`'s files exist): they name the production host, which
#: the machine running check need not be, so they are taken as set, never validated here.
_HOST_SETTINGS = frozenset({"chdir", "user", "group", "reload_extra_files"})


def _set_host(cfg: Any, name: str, value: Any) -> bool:
    """Keeps the folder `--chdir` / `chdir = ...` names, as written, without gunicorn's check
    that it exists here (a relative unix bind is made there: `working_dirs`); whether it was."""
    if name != "chdir" or not isinstance(value, str):
        return False
    cfg.settings[name].value = value
    return True


def _worker_class_names(value: Any) -> list[str]:
    from servertune.check.pystatic import ClassValue, imported_path

    if isinstance(value, ClassValue):
        return [value.name, *value.bases]
    imported = imported_path(value)  # `from uvicorn_worker import UvicornWorker`
    return [imported.lstrip(".") if imported is not None else str(value)]


def _parsed(path: Path) -> ast.Module:
    """The config's syntax tree, read through the run's reading: a template read in place
    (`gunicorn.conf.py.j2`) is parsed as what it renders to, never as its Jinja
    (WikiWatershed/model-my-watershed's ansible role)."""
    from servertune.check.source import read_text

    text = read_text(path)
    try:
        return ast.parse(text, filename=str(path))
    except SyntaxError as error:
        raise CheckInputError(f"{path}:{error.lineno}: Python syntax error: {error.msg}") from None
    except (RecursionError, MemoryError, ValueError):  # nesting past the parser's limits
        raise CheckInputError(f"{path}: Python nested too deeply to parse") from None


def _static(
    path: Path, env: Mapping[str, str] | None, argv: tuple[str, ...], locate: Locate | None = None
) -> dict[str, Any]:
    """The settings of the config at `path`, read without running it, then `GUNICORN_CMD_ARGS`
    and `argv` parsed by gunicorn's own parser, in gunicorn's order (file, environment, flags)."""
    from servertune.check.py_imports import tree_importer
    from servertune.check.pystatic import Refused, evaluate_config

    importer = tree_importer(path)
    try:
        from gunicorn.config import KNOWN_SETTINGS, Config  # type: ignore[import-untyped]
    except ModuleNotFoundError:
        raise CheckInputError(
            f"{path}: reading it needs gunicorn, which is not installed here: "
            "pip install 'servertune[check]'"
        ) from None
    tree = _parsed(path)
    environment = dict(os.environ if env is None else env)
    names = {setting.name for setting in KNOWN_SETTINGS}
    binds, instances = _instances(path, tree, environment)
    cores = evaluation_cores()
    try:
        found = evaluate_config(tree, environment, cores, importer=importer)
        probes = [
            evaluate_config(tree, environment, cpus, importer=importer) for cpus in _PROBE_CPUS
        ]
    except Refused as why:
        raise CheckInputError(
            f"{path}: {why} on the path its top level takes here (read without running it; "
            "--env-file gives the environment it expects)"
        ) from None
    cfg = Config()
    set_in_file, class_names = _set_from_file(cfg, path, found, names, locate)
    if "workers" not in found.values and "WEB_CONCURRENCY" in environment:
        with contextlib.suppress(ValueError):  # gunicorn's default reads it the same way
            cfg.set("workers", int(environment["WEB_CONCURRENCY"]))
    flagged = _parse_flags(
        cfg,
        path,
        shlex.split(environment.get("GUNICORN_CMD_ARGS", "")),
        "GUNICORN_CMD_ARGS",
        locate,
    )
    flagged |= _parse_flags(cfg, path, list(argv), "the command line", locate)
    values: dict[str, Any] = {name: cfg.settings[name].get() for name in _READ}
    values["worker_class"] = cfg.worker_class_str
    flagged_class = cfg.settings["worker_class"].get()
    if class_names is None or (isinstance(flagged_class, str) and flagged_class != class_names[0]):
        class_names = _worker_class_names(flagged_class)
    values["worker_class_names"] = class_names
    counts = [p.values.get("workers") for p in probes]
    # A `--workers 12` on the command line (or in GUNICORN_CMD_ARGS) wins over the file's
    # `workers = cpu_count()`: then the count the server runs with follows nothing.
    values["workers_follow_cpu_count"] = (
        "workers" in found.values
        and "workers" not in flagged
        and counts[0] is not None
        and counts[0] != counts[1]
    )
    values["workers_on_nodes"] = list(zip(_PROBE_CPUS, counts, strict=True))
    values["workers_env"] = _environment_name(tree, found.lines.get("workers"))
    values["bind"] = binds or [str(b) for b in values["bind"]]
    if not binds and "bind" not in found.values and "bind" not in flagged:
        # gunicorn's default bind, for the environment the server runs in (gunicorn computes
        # it from its own process's PORT, here check's): `0.0.0.0:$PORT` when PORT is set
        # (its `bind` setting's docs), else 127.0.0.1:8000.
        port = environment.get("PORT", "")
        values["bind"] = [f"0.0.0.0:{port}" if port else "127.0.0.1:8000"]
    values["instances"] = instances
    # gunicorn 25+ speaks uWSGI's binary protocol on its binds with `protocol = "uwsgi"`
    # (gunicorn.org/uwsgi: what nginx's uwsgi_pass sends); older ones have no such setting.
    values["protocol"] = str(cfg.settings["protocol"].get()) if "protocol" in cfg.settings else ""
    values["set_in_file"] = set_in_file
    given_chdir = isinstance(found.values.get("chdir"), str) or "chdir" in flagged
    values["chdir"] = str(cfg.settings["chdir"].get()) if given_chdir else ""
    values["misspelled"] = _misspelled(cfg, found, tree, KNOWN_SETTINGS)
    values["unknown"] = _unknown(tree, found, flagged, path, locate)
    return values


def _read_back(tree: ast.Module) -> set[str]:
    """The names the file reads after writing them (`env = os.environ["APP_ENV"]`, then `if
    env == "production": raw_env = [...]`): a variable the file computes with, not a value
    written for a setting (seen in NREL/REopt_API's config/gunicorn.conf.py)."""
    return {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }


def _imported_only(tree: ast.Module) -> set[str]:
    """The names the top level binds by `import` and never assigns (`from os import environ
    as env`): a module the file uses, not a value written for a setting."""
    imported: set[str] = set()
    assigned: set[str] = set()
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            assigned |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            for block in ("body", "orelse", "finalbody"):
                pending += getattr(node, block, [])
            pending += [s for h in getattr(node, "handlers", []) for s in h.body]
    return imported - assigned


def _flag_spelled(
    found: StaticConfig, settings: list[Any], imported: set[str]
) -> list[tuple[str, str]]:
    """(name, setting) for each name the file assigns that is no gunicorn setting but is a
    setting's command-line flag written as a name (`keep_alive` for `--keep-alive`,
    `access_logfile` for `--access-logfile`), its value one a setting could take or the name
    a near spelling of the setting's: gunicorn's config loader skips every name it
    does not know (gunicorn/app/base.py, `load_config_from_module_name_or_filename`: "Ignore
    unknown names"), so the value is silently not applied. A name only imported (`from os
    import environ as env`, seen in CybercentreCanada/assemblyline-ui) was never written for
    a setting: not one."""
    names = {setting.name for setting in settings}
    by_flag = {
        flag.lstrip("-").replace("-", "_"): setting.name
        for setting in settings
        for flag in getattr(setting, "cli", None) or ()
        if flag.startswith("--")
    }
    return [
        (name, by_flag[name])
        for name in sorted(set(found.values) | set(found.unresolved))
        if name not in names
        and name in by_flag
        and name not in imported
        and (_plain(found.values.get(name, _UNKNOWN)) or _close(name, by_flag[name]))
    ]


_UNKNOWN = object()


def _misspelled(
    cfg: Any, found: StaticConfig, tree: ast.Module, settings: list[Any]
) -> list[tuple[str, str, bool]]:
    """`_flag_spelled`'s (name, setting) pairs, each with whether its value is the one the
    setting has anyway (`_same_as_in_effect`)."""
    spelled = _flag_spelled(found, settings, _imported_only(tree) | _read_back(tree))
    return [(name, meant, _same_as_in_effect(cfg, found, name, meant)) for name, meant in spelled]


def _same_as_in_effect(cfg: Any, found: StaticConfig, name: str, meant: str) -> bool:
    """The value written under the flag's name is the one the meant setting has anyway (its
    default, or what the file or command line set it to): `log_file = "-"` where `errorlog`
    is `-` by default. Ignoring the name then changes nothing the server does."""
    value = found.values.get(name, _UNKNOWN)
    if value is _UNKNOWN:
        return False
    setting = cfg.settings[meant]
    try:
        return bool(setting.validator(value) == setting.get())
    except Exception:  # a value gunicorn's validator refuses is not the same
        return False


def _plain(value: object) -> bool:
    """A value a setting could take: a literal (text, a number, a flag, None) or a list,
    tuple or dict of them. A helper object (`env = environ.Env()`), a function, a class or
    a value not known here is none: the name was likely never meant as a setting (seen on
    quipucords/quipucords's gunicorn_conf.py)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    return False


#: How alike (difflib's ratio) a name must be to a setting's to be taken for its misspelling.
_NEAR_SPELLING_RATIO = 0.8


def _close(name: str, setting: str) -> bool:
    """`name` is a near spelling of `setting` (`keep_alive` of `keepalive`): the same
    letters but for underscores, or at least `_NEAR_SPELLING_RATIO` alike."""
    if name.replace("_", "") == setting.replace("_", ""):
        return True
    return difflib.SequenceMatcher(None, name, setting).ratio() >= _NEAR_SPELLING_RATIO


def _environment_name(tree: ast.Module, line: int | None) -> str:
    """The first environment variable the assignment at `line` reads (`os.environ.get("X",
    ...)`, `os.getenv("X")`, `os.environ["X"]`): the project's own knob for that setting."""
    if line is None:
        return ""
    for statement in ast.walk(tree):
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.lineno != line:
            continue
        for node in ast.walk(statement):
            name: ast.expr | None = None
            if isinstance(node, ast.Call) and node.args:
                called = ast.unparse(node.func)
                if called.endswith(("environ.get", "getenv")):
                    name = node.args[0]
            elif isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("environ"):
                name = node.slice
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                return name.value
    return ""


def _instances(path: Path, tree: ast.Module, environment: dict[str, str]) -> tuple[list[str], int]:
    """A config that binds a port per instance (`SERVERTUNE_CHECK_INSTANCES` names the
    variable it is numbered by): every instance's binds and how many instances; the config is
    then read as instance 0. No such variable: no binds, one instance."""
    from servertune.check.pystatic import Refused, evaluate_config

    binds: list[str] = []
    instances = 1
    numbered = environment.pop("SERVERTUNE_CHECK_INSTANCES", "")
    if numbered:
        for index in range(1024):
            try:
                one = evaluate_config(tree, {**environment, numbered: str(index)}, 1)
            except Refused:
                if index == 0:
                    raise CheckInputError(f"{path}: refuses {numbered}=0") from None
                break
            bind = one.values.get("bind", [])
            binds += [str(b) for b in ([bind] if isinstance(bind, str) else bind)]
            instances = index + 1
        environment[numbered] = "0"
    return binds, instances


def _set_from_file(
    cfg: Any, path: Path, found: StaticConfig, names: set[str], locate: Locate | None
) -> tuple[list[str], list[str] | None]:
    """Each gunicorn setting the file assigns, set in `cfg` through gunicorn's validators: the
    names set, and the worker class's name and bases when the file sets it."""
    from servertune.check.pystatic import imported_path

    set_in_file: list[str] = []
    class_names: list[str] | None = None
    for name in sorted(names & (set(found.values) | set(found.unresolved))):
        line = found.lines.get(name, 1)
        if name in found.unresolved:
            set_in_file.append(name)
            note(
                "unresolved-variable",
                Location(path, line) if locate is None else locate(name)[0],
                f"{name}: {found.unresolved[name]} is known only when gunicorn runs the file; "
                "gunicorn was read without it, so whatever it sets was not checked",
            )
            continue
        value = found.values[name]
        if imported_path(value) is not None and name in _JUDGED and name != "worker_class":
            # A name imported from a module not in the tree: not gunicorn's default, unknown.
            set_in_file.append(name)
            note(
                "unresolved-variable",
                Location(path, line) if locate is None else locate(name)[0],
                f"{name}: `{imported_path(value)}` is imported from a module not in the tree "
                "read here; gunicorn was read without it, so whatever it sets was not checked",
            )
            continue
        if name in _HOST_SETTINGS:
            set_in_file.append(name)
            _set_host(cfg, name, value)
            continue
        if name == "worker_class":
            class_names = _worker_class_names(value)
            value = class_names[0]
        elif not isinstance(value, (str, int, float, bool, list, tuple, dict, type(None))):
            set_in_file.append(name)  # a hook or an object: set, and nothing the rules read
            continue
        try:
            cfg.set(name, value)
        except Exception as error:  # gunicorn's validators raise ValueError / TypeError
            at = Location(path, line) if locate is None else locate(name)[0]
            _refused(name, f"{name} = {value!r}", error, at, f"{path}:{line}")
        set_in_file.append(name)
    return set_in_file, class_names


def _refused(name: str, written: str, error: Exception, at: Location, where: str) -> None:
    """A value the gunicorn installed here refuses: for a setting check judges by, the file's
    fault (one error line); for any other (`http_protocols = "h3,h2,h1"`, which gunicorn 26
    takes and 27 refuses) what gunicorn accepts depends on its version, which is the
    deployment's, not this machine's: a coverage note naming the setting and the version
    installed here, and the rest of the file judged."""
    if name in _JUDGED:
        raise CheckInputError(f"{where}: {written}: gunicorn refuses it ({error})")
    note(
        "server-version",
        at,
        f"{written}: gunicorn {_installed_version()}, installed here, refuses it ({error}); "
        "the gunicorn the deployment installs may take it: not checked",
    )


def _installed_version() -> str:
    """The version of the gunicorn installed here (the one whose validators check asks)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gunicorn")
    except PackageNotFoundError:  # pragma: no cover - gunicorn imported, so installed
        return "?"


@functools.cache
def _flag_parser() -> Any:
    """gunicorn's argument parser, built once: it is the same for every `Config` (each option's
    default is None; values are set on the config afterwards), and building it is most of the
    cost of reading a command line (180 options through argparse)."""
    from gunicorn.config import Config

    return Config().parser()


def full_flags(words: Sequence[str]) -> list[str]:
    """`words` with each long option shortened to a prefix only one of gunicorn's options has
    written in full (`--conf x` is `--config x`, `--work=3` is `--workers=3`), as gunicorn's
    argparse parser reads them (`allow_abbrev`, on in every gunicorn); an exact option, an
    ambiguous prefix and the words after `--` are left as written (seen in gratipay's
    Procfile `--conf gunicorn_hide_version.py`)."""
    longs = [f for f in _flag_parser()._option_string_actions if f.startswith("--")]
    out: list[str] = []
    for index, word in enumerate(words):
        if word == "--":
            return out + list(words[index:])
        flag, sep, value = word.partition("=")
        matches = [f for f in longs if f.startswith(flag)] if flag[:2] == "--" else []
        if len(flag) > 2 and flag not in longs and len(matches) == 1:
            word = matches[0] + sep + value
        out.append(word)
    return out


def _parse_flags(
    cfg: Any, path: Path, words: list[str], where: str, locate: Locate | None = None
) -> set[str]:
    """gunicorn's own argument parser on `words`, each flag given set in `cfg` (as gunicorn's
    `load_config` does for GUNICORN_CMD_ARGS and the command line): the settings they set."""
    if not words:
        return set()
    parser = _flag_parser()
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
            parsed, unknown = parser.parse_known_args(words)
    except SystemExit:
        reason = errors.getvalue().strip().splitlines()[-1:] or ["cannot parse"]
        raise CheckInputError(f"{path}: {where}: gunicorn: {reason[0]}") from None
    at = Location(path) if locate is None else locate("")[0]
    flags = [word for word in unknown if word.startswith("-")]
    if flags:
        # An option this gunicorn does not have may be another version's (`--http-protocols`
        # before gunicorn had it): named, never a reason to refuse the rest.
        note(
            "server-version",
            at,
            f"{where}: {' '.join(flags)}: not an option of gunicorn {_installed_version()}, "
            "installed here; the gunicorn the deployment installs may have it: not checked",
        )
    given: set[str] = set()
    for key, value in vars(parsed).items():
        if key in _HOST_SETTINGS and _set_host(cfg, key, value):
            given.add(key)
        if value is None or key == "args" or key not in cfg.settings or key in _HOST_SETTINGS:
            continue
        try:
            cfg.set(key.lower(), value)
        except Exception as error:
            flag = (cfg.settings[key].cli or [key])[-1]
            _refused(key, f"{where}: {flag} {value!r}", error, at, f"{path}: {where}")
            continue
        given.add(key.lower())
    return given


def _executed(
    path: Path, env: Mapping[str, str] | None, argv: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The child probe: gunicorn's loader runs the file (only with --execute-gunicorn-config)."""
    child_env = dict(os.environ if env is None else env)
    try:
        process = subprocess.Popen(
            [sys.executable, "-B", "-c", _PROBE.read_text(), str(path), *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env,
            start_new_session=True,  # so a timeout can stop anything the file started, too
        )
    except OSError as error:
        raise CheckInputError(f"{path}: cannot start Python to load it ({error})") from None
    try:
        out, err = process.communicate(timeout=GUNICORN_EVAL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise CheckInputError(
            f"{path}: gunicorn did not finish loading it in {GUNICORN_EVAL_TIMEOUT_S:g} s "
            "(a loop or a blocking call in the file?)"
        ) from None
    except OverBudget:  # the file's time budget ran out first: nothing it started lingers
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    text = out.decode("utf-8", "replace")
    if process.returncode != 0 or _MARK not in text:
        lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines()]
        reasons = [line for line in lines if line]
        reason = reasons[-1] if reasons else f"exit status {process.returncode}"
        if "No module named 'gunicorn'" in reason:
            raise CheckInputError(
                f"{path}: reading it needs gunicorn, which is not installed here: "
                "pip install 'servertune[check]'"
            )
        raise CheckInputError(f"{path}: gunicorn cannot load it: {reason[:300]}")
    values: dict[str, Any] = json.loads(text.rpartition(_MARK)[2])
    return values


def interface_of(worker_class_names: list[str]) -> Literal["wsgi", "asgi"]:
    """'asgi' when the worker class is (or derives from) one of ASGI_WORKER_CLASSES."""
    return "asgi" if ASGI_WORKER_CLASSES.intersection(worker_class_names) else "wsgi"


#: The gunicorn settings `check` reads and the command-line flags that set them (gunicorn's
#: `cli` names, docs.gunicorn.org/en/stable/settings.html), to find the line that set each one.
GUNICORN_FLAGS = {
    "workers": ("-w", "--workers"),
    "threads": ("--threads",),
    "bind": ("-b", "--bind"),
    "keepalive": ("--keep-alive",),
    "timeout": ("-t", "--timeout"),
    "graceful_timeout": ("--graceful-timeout",),
    "max_requests": ("--max-requests",),
    "max_requests_jitter": ("--max-requests-jitter",),
    "backlog": ("--backlog",),
    "worker_class": ("-k", "--worker-class"),
}

#: The settings check judges a server by (GUNICORN_FLAGS' and the probe's): their meaning is
#: the same in every gunicorn, so a value gunicorn refuses for one is the file's fault.
_JUDGED = frozenset(_READ) | frozenset(GUNICORN_FLAGS)


#: Where a setting was written: (its location, whether it was left at the default).
Locate = Callable[[str], tuple[Location, bool]]


#: servertune's per-worker config is started once per socket, the instance's number in this
#: variable (its header shows the command). Read without it, the file is read as its instances
#: are started: once for each number it accepts, 0, 1, ... A user's own value is honoured.
PER_WORKER_VARIABLE = "SERVERTUNE_WORKER"


#: Web frameworks by the top-level package an application module imports, as `check` names them.
FRAMEWORKS = {
    "aiohttp": "aiohttp",
    "bottle": "Bottle",
    "django": "Django",
    "falcon": "Falcon",
    "fastapi": "FastAPI",
    "flask": "Flask",
    "litestar": "Litestar",
    "pyramid": "Pyramid",
    "quart": "Quart",
    "sanic": "Sanic",
    "starlette": "Starlette",
    "tornado": "Tornado",
}
#: The names WSGI and ASGI servers look an app up by when none is given (gunicorn, uvicorn and
#: Django's wsgi.py / asgi.py use these).
APP_NAMES = ("application", "app")


def _bound_names(body: list[ast.stmt]) -> set[str] | None:
    """Every name the module's own code binds at its top level (also inside `if`, `try`,
    `with`, `for`), None when a `*` import, `globals()`, `vars()` or `exec` could bind others."""
    names: set[str] = set()
    for node in body:
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom) and any(a.name == "*" for a in inner.names):
                return None
            if isinstance(inner, ast.Name) and inner.id in ("globals", "vars", "exec", "locals"):
                return None
        stack: list[ast.AST] = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(current.name)
                continue  # their bodies bind their own names
            if isinstance(current, ast.Import | ast.ImportFrom):
                names.update((a.asname or a.name).split(".")[0] for a in current.names)
            elif isinstance(current, ast.Name) and isinstance(current.ctx, ast.Store):
                names.add(current.id)
            elif isinstance(current, ast.Lambda):
                continue
            stack.extend(ast.iter_child_nodes(current))
    return names


def _framework(tree: ast.Module) -> str | None:
    """The web framework the module imports (the first, in file order), if any."""
    for node in ast.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [node.module]
        for module in modules:
            if module.split(".")[0] in FRAMEWORKS:
                return FRAMEWORKS[module.split(".")[0]]
    return None


def _called(tree: ast.Module) -> set[str]:
    """The names of the functions the module calls (`f()` and `module.f()`)."""
    called: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Name):
                called.add(function.id)
            elif isinstance(function, ast.Attribute):
                called.add(function.attr)
    return called


def application_module(text: str, path: Path) -> str | None:
    """What the .py file is when it is an application module rather than a gunicorn config,
    told without running it: it binds no gunicorn setting at its top level, and binds an app
    (`application`, `app`) or imports a web framework. None when it may be a config (also
    when a `*` import or `globals()` could set settings unseen, or gunicorn is absent)."""
    try:
        from gunicorn.config import KNOWN_SETTINGS
    except ModuleNotFoundError:  # loading it then says which extra to install
        return None
    try:
        tree = ast.parse(text, filename=str(path))
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return None  # _lines says where
    names = _bound_names(tree.body)
    if names is None or names & {setting.name for setting in KNOWN_SETTINGS}:
        return None
    apps = [name for name in APP_NAMES if name in names]
    framework = _framework(tree)
    if framework is None and not apps:
        return None
    kind = f"a {framework} application module" if framework else "an application module"
    for interface in ("wsgi", "asgi"):  # Django's wsgi.py / asgi.py, as startproject writes them
        if framework == "Django" and f"get_{interface}_application" in names | _called(tree):
            kind = f"Django's {interface.upper()} module"
    if apps:
        kind += f" (it defines `{apps[0]}`)"
    return kind


def read_gunicorn(path: Path, text: str, env: Mapping[str, str] | None = None) -> AppServer:
    """The settings gunicorn would run `path` with (under `env`, default this environment)."""
    lines = _lines(text, path)
    application = application_module(text, path)
    if application is not None:
        raise CheckInputError(
            f"{path}: read as a gunicorn config file (a .py file), but it is {application} "
            "and sets no gunicorn setting: not a config (and not run); check the "
            "gunicorn.conf.py that serves it"
        )
    environment = dict(os.environ if env is None else env)
    if PER_WORKER_VARIABLE in text and PER_WORKER_VARIABLE not in environment:
        environment["SERVERTUNE_CHECK_INSTANCES"] = PER_WORKER_VARIABLE
    values = _evaluate(path, environment)
    named_for_gunicorn = "gunicorn" in path.name.lower() and not re.search(
        r"^(app|application)\s*[:=]", text, re.M
    )
    if (
        not values.get("set_in_file")
        and not environment.get("GUNICORN_CMD_ARGS")
        and not named_for_gunicorn
    ):
        # A `gunicorn.conf.py` that only configures logging is gunicorn's config all the
        # same (gunicorn loads ./gunicorn.conf.py by default): read, with gunicorn's defaults.
        raise CheckInputError(
            f"{path}: read as a gunicorn config file (a .py file), but it defines no gunicorn "
            "setting (workers, bind, timeout, ...): an application module is not a config; "
            "check the gunicorn.conf.py that serves it"
        )

    def locate(name: str) -> tuple[Location, bool]:
        line = lines.get(name)
        return Location(path, line or 1), line is None

    return gunicorn_app(path, values, locate)


def read_gunicorn_command(
    config: Path,
    argv: tuple[str, ...],
    env: Mapping[str, str] | None,
    file: Path,
    locate: Locate,
    at: Location | None = None,
) -> AppServer:
    """A gunicorn command line (`-c config` plus `argv`), read by gunicorn's own loader and
    argument parser; `locate` says where each setting was written (a manifest's line). `config`
    is a copy in a temporary directory: an error names `at`, the command's own line."""
    try:
        values = _evaluate(config, env, argv, locate)
    except CheckInputError as error:
        reason = str(error).removeprefix(f"{config}: ")
        raise CheckInputError(f"{at or file}: {reason}") from None
    return gunicorn_app(file, values, locate)


def _with_port(bind: str) -> str:
    """A TCP bind with its port, as gunicorn's `util.parse_address` reads one: a host written
    without a port (`-b 0.0.0.0`) listens on port 8000; unix sockets, `fd://` and binds with a
    port or a variable are as written (Uninett/Argus's `-b 0.0.0.0`)."""
    if bind.startswith(("unix:", "fd://", "/")) or ":" in bind or not bind or "$" in bind:
        return bind
    return f"{bind}:8000"


def gunicorn_app(file: Path, values: dict[str, Any], locate: Locate) -> AppServer:
    """The AppServer of gunicorn's settings `values`, placed by `locate`."""

    unknown = frozenset(values.get("unknown", ()))

    def setting(name: str, kind: type[Any]) -> Setting[Any]:
        at, default = locate(name)
        return Setting(kind(values[name]), at, default=default or name in unknown)

    # A bind the file computes (`bind = get_bind()`) is not gunicorn's default 127.0.0.1:8000:
    # no socket known, so no front is joined by a port nobody set (meeb/tubesync).
    binds = [] if "bind" in unknown else values["bind"]
    bind_at, bind_default = locate("bind")
    instances = int(values.get("instances", 1))
    workers = setting("workers", int)
    if instances > 1:  # one single-worker instance per socket: the uWSGI map-socket layout
        workers = Setting(workers.value * instances, workers.at, workers.default)
    sockets = tuple(Setting(_with_port(str(b)), bind_at, bind_default) for b in binds)
    app = AppServer(
        kind="gunicorn",
        file=file,
        workers=workers,
        threads=setting("threads", int),
        sockets=sockets,
        uwsgi_protocol=tuple(s.value for s in sockets) if values.get("protocol") == "uwsgi" else (),
        mapped_sockets=instances > 1,
        keepalive=setting("keepalive", float),
        request_timeout=setting("timeout", float),
        graceful_timeout=setting("graceful_timeout", float),
        max_requests=setting("max_requests", int),
        max_requests_jitter=setting("max_requests_jitter", int),
        backlog=setting("backlog", int),
        worker_class=setting("worker_class", str),
        workers_follow_cpu_count=bool(values["workers_follow_cpu_count"]),
        workers_on_nodes=tuple(
            (int(cores), int(count))
            for cores, count in values.get("workers_on_nodes", ())
            if count is not None
        )
        if values["workers_follow_cpu_count"]
        else (),
        workers_env=str(values.get("workers_env", "")),
        reloads=Setting(True, locate("reload")[0]) if values.get("reload") else None,
        daemonizes=Setting(True, locate("daemon")[0]) if values.get("daemon") else None,
        misspelled=tuple(
            (written, locate(written)[0], meant, bool(same))
            for written, meant, same in values.get("misspelled", ())
        ),
        interface=interface_of([str(n) for n in values["worker_class_names"]]),
        chdir=str(values.get("chdir", "")),
        # arbiter.py: start() creates the listeners (sock.py: bind() and listen() in the
        # master), then run() forks the workers, and each worker imports the app in
        # init_process() -> load_wsgi(); preload_app imports it in the arbiter's setup(),
        # before the listeners exist.
        listens_before_app=not values.get("preload_app", False),
        unknown=frozenset(_FIELDS[n] for n in unknown if n in _FIELDS),
    )
    # A relative unix bind is made in `chdir`, which gunicorn changes to before it binds.
    return started_in(app, "")


#: gunicorn's settings by the `AppServer` field each is read into.
_FIELDS = {
    "workers": "workers",
    "threads": "threads",
    "keepalive": "keepalive",
    "timeout": "request_timeout",
    "graceful_timeout": "graceful_timeout",
    "max_requests": "max_requests",
    "max_requests_jitter": "max_requests_jitter",
    "backlog": "backlog",
    "worker_class": "worker_class",
}
