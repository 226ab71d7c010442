"""A gunicorn config file read as Python source, never run: the values its top level assigns.

`check` runs in pre-commit hooks on contributors' pull requests, so it must not execute what
it reads (a config holding `os.system(...)` ran it). This evaluator walks the file's
syntax tree the way the interpreter would run its top level, and knows only what cannot have a
side effect: literals, names it assigned, arithmetic and comparisons, f-strings, `int()` /
`float()` / `str()` / `min()` / `max()` / `len()` / `round()` / `abs()`, a few string methods,
`os.environ.get(NAME, default)` / `os.getenv` / `os.environ[NAME]` (from the environment the
server runs under), and the CPU count (`multiprocessing.cpu_count()`, `os.cpu_count()`,
`len(os.sched_getaffinity(0))`), which reads the `cpus` it is given: the reader evaluates the
file for the cores being judged, and for two other counts to tell that `workers` follows it.

django-environ's `env("X", default=...)` / `env.int("X", default)` read the environment the same
way, through `env` or any name bound to `environ.Env()` (itself an `EnvReader`, not a value).
Anything else (a call into the project's own modules, a loop) makes the value
it feeds *unresolved*: the setting keeps gunicorn's default and the report names it. An `if`
whose test resolves takes its branch; one that does not resolves a name only when both
branches agree. `raise` on the path taken means the file refuses this environment (servertune's
per-worker config refuses an instance number past its sockets).
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ClassValue",
    "EnvReader",
    "FunctionValue",
    "Importer",
    "Refused",
    "StaticConfig",
    "Unresolved",
    "evaluate_config",
    "imported_path",
]


class Unresolved(Exception):
    """A value known only by running something (the reason says what)."""


class Refused(Exception):
    """The file raises on the path taken: it refuses to load in this environment."""


@dataclass(frozen=True)
class ClassValue:
    """A class the file defines: its dotted name and its bases' dotted names (for the worker
    class: a subclass of uvicorn's worker is an ASGI worker)."""

    name: str
    bases: tuple[str, ...]


@dataclass(frozen=True)
class FunctionValue:
    """A function the file defines (a server hook): its name."""

    name: str


@dataclass(frozen=True)
class _Imported:
    """A name bound by an import: the dotted path it stands for (`os.environ`, `multiprocessing.cpu_count`)."""

    path: str


@dataclass
class StaticConfig:
    """What the top level assigned: each name's value (or why not known) and its last line."""

    values: dict[str, Any] = field(default_factory=dict)
    unresolved: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
#: Built-ins without side effects, called with resolved arguments.
_BUILTINS: dict[str, Callable[..., Any]] = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "min": min,
    "max": max,
    "len": len,
    "round": lambda number, digits=None: round(number, _bounded(digits)),
    "abs": abs,
    "list": list,
    "tuple": tuple,
}
#: Methods of str without side effects.
_STR_METHODS = frozenset(
    {"lower", "upper", "strip", "lstrip", "rstrip", "split", "isdigit", "isnumeric"}
)
#: Dotted names that read the host's CPU count.
_CPU_COUNT = frozenset(
    {"multiprocessing.cpu_count", "os.cpu_count", "os.process_cpu_count", "psutil.cpu_count"}
)
#: Above this, a power or a repeated string is an attack on the reader, not a config.
_MAX_NUMBER = 10**12


def _bounded(digits: Any) -> Any:
    """`round()`'s digits, refused past what a setting could need (`round(5, -10**9)` would
    compute a power of ten with a billion digits)."""
    if isinstance(digits, int) and abs(digits) > 20:
        raise Unresolved("round() to more than 20 digits")
    return digits


#: Finds a module a config imports from (`from .base import *`, `from config.gunicorn import
#: workers`): its name as written (leading dots for a relative import) -> its syntax tree, when
#: the module is a file of the tree; None for any other (the standard library, a package).
Importer = Callable[[str], ast.Module | None]


class _Evaluator:
    def __init__(
        self, env: Mapping[str, str], cpus: int, module: str, importer: Importer | None = None
    ) -> None:
        self.env = env
        self.cpus = cpus
        self.module = module
        self.importer = importer
        self.names: dict[str, Any] = {}
        self.unknown: dict[str, str] = {}
        self.lines: dict[str, int] = {}

    # -- statements -----------------------------------------------------------------------
    def run(self, body: list[ast.stmt]) -> None:
        for node in body:
            self.statement(node)

    def bind(self, name: str, value: Any, line: int) -> None:
        self.names[name] = value
        self.unknown.pop(name, None)
        self.lines[name] = line

    def unbind(self, name: str, reason: str, line: int) -> None:
        self.names.pop(name, None)
        self.unknown[name] = reason
        self.lines[name] = line

    def assign(self, target: ast.expr, make: Callable[[], Any], line: int) -> None:
        if not isinstance(target, ast.Name):
            return  # `a.b = ...`, `a[0] = ...`, unpacking: not a setting
        try:
            self.bind(target.id, make(), line)
        except Unresolved as why:
            self.unbind(target.id, str(why), line)
        except Refused:
            raise
        except Exception as error:  # the value would raise here too (a bad int(), 1/0)
            self.unbind(target.id, f"{type(error).__name__}: {error}", line)

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self.assign(target, lambda: self.expr(node.value), node.lineno)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            value = node.value
            self.assign(node.target, lambda: self.expr(value), node.lineno)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            op = _BINARY.get(type(node.op))
            name = node.target.id

            def augmented() -> Any:
                if op is None:
                    raise Unresolved(f"the operator of line {node.lineno}")
                return self.arith(op, self.load(name), self.expr(node.value))

            self.assign(node.target, augmented, node.lineno)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.bind(alias.asname, _Imported(alias.name), node.lineno)
                else:
                    top = alias.name.split(".")[0]
                    self.bind(top, _Imported(top), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            if not self.imported_from(base, node):
                for alias in node.names:
                    if alias.name != "*":
                        self.bind(alias.asname or alias.name, _Imported(f"{base}.{alias.name}"), 0)
        elif isinstance(node, ast.ClassDef):
            bases = tuple(self.dotted(b) for b in node.bases)
            self.bind(node.name, ClassValue(f"{self.module}.{node.name}", bases), node.lineno)
        elif isinstance(node, ast.If):
            self.branch(node.test, node.body, node.orelse, node.lineno)
        elif isinstance(node, ast.Try):
            # The body as written; an except clause runs only when the body raises, which the
            # values it would raise on are already unresolved for.
            self.run(node.body)
            self.run(node.orelse)
            self.run(node.finalbody)
        elif isinstance(node, ast.With):
            self.run(node.body)
        elif isinstance(node, ast.Raise):
            what = ast.unparse(node.exc) if node.exc is not None else "again"
            raise Refused(f"line {node.lineno} raises {what[:120]}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # A server hook (`post_fork`, `on_starting`): defined, never called here.
            self.bind(node.name, FunctionValue(node.name), node.lineno)
        elif isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            for name in _stored(node):
                self.unbind(name, f"set in the loop at line {node.lineno}", node.lineno)
        elif isinstance(node, ast.Match):
            for name in _stored(node):
                self.unbind(name, f"set in the match at line {node.lineno}", node.lineno)
        # Expression statements (calls: `os.system(...)`, `makedirs(...)`), function
        # definitions (server hooks), `del`, `assert`, `pass`: never run, nothing bound.

    def imported_from(self, base: str, node: ast.ImportFrom) -> bool:
        """Bind the names `node` imports from a module of the tree to what its top level
        assigns, read the same way one level deep (its own imports are not followed): a name
        it leaves unknown, or does not assign, is unresolved. False when `base` is no module
        of the tree (the names stay imported paths, `multiprocessing.cpu_count`)."""
        tree = self.importer(base) if self.importer is not None else None
        if tree is None:
            return False
        try:
            found = evaluate_config(tree, self.env, self.cpus, base.lstrip(".") or self.module)
        except Refused as why:
            found = StaticConfig(unresolved={a.name: f"`{base}` {why}" for a in node.names})
        names = [a.name for a in node.names]
        if "*" in names:  # every public name it binds or leaves unknown
            names = [n for n in (*found.values, *found.unresolved) if not n.startswith("_")]
        aliases = {a.name: a.asname or a.name for a in node.names if a.name != "*"}
        for name in names:
            bound = aliases.get(name, name)
            if name in found.values:
                self.bind(bound, found.values[name], node.lineno)
            else:
                reason = found.unresolved.get(name, "not assigned at its top level")
                self.unbind(bound, f"`{name}` imported from `{base}` ({reason})", node.lineno)
        return True

    def branch(
        self, test: ast.expr, body: list[ast.stmt], orelse: list[ast.stmt], line: int
    ) -> None:
        try:
            taken = bool(self.expr(test))
        except Refused:
            raise
        except Exception as why:
            # Unknown test: each branch on a copy; a name both leave equal is known.
            reason = f"the `if` at line {line} depends on {why}"
            outcomes = []
            for block in (body, orelse):
                fork = _Evaluator(self.env, self.cpus, self.module)
                fork.names, fork.unknown, fork.lines = (
                    dict(self.names),
                    dict(self.unknown),
                    dict(self.lines),
                )
                try:
                    fork.run(block)
                except Refused:
                    continue  # that branch never reaches the settings
                outcomes.append(fork)
            if not outcomes:
                raise Refused(f"both branches of line {line} raise") from None
            touched = {n for f in outcomes for n in f.lines if f.lines[n] != self.lines.get(n)}
            for name in touched:
                values = [f.names.get(name, _MISSING) for f in outcomes]
                if all(v is not _MISSING for v in values) and all(v == values[0] for v in values):
                    self.bind(name, values[0], max(f.lines[name] for f in outcomes))
                else:
                    self.unbind(name, reason, max(f.lines.get(name, line) for f in outcomes))
            return
        self.run(body if taken else orelse)

    # -- expressions ----------------------------------------------------------------------
    def load(self, name: str) -> Any:
        if name in self.names:
            return self.names[name]
        if name in self.unknown:
            raise Unresolved(self.unknown[name])
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        if name in _BUILTINS:
            return _Imported(f"builtins.{name}")
        raise Unresolved(f"`{name}`")

    def dotted(self, node: ast.expr) -> str:
        """The dotted name of `a.b.c` (through imports), for calls and class bases."""
        if isinstance(node, ast.Name):
            value = self.names.get(node.id)
            if isinstance(value, _Imported):
                return value.path
            if isinstance(value, ClassValue):
                return value.name
            if value is None and node.id in _BUILTINS and node.id not in self.unknown:
                return f"builtins.{node.id}"
            return node.id
        if isinstance(node, ast.Attribute):
            return f"{self.dotted(node.value)}.{node.attr}"
        return ast.unparse(node)

    def arith(self, op: Callable[[Any, Any], Any], left: Any, right: Any) -> Any:
        if op is operator.pow and isinstance(right, (int, float)) and abs(right) > 64:
            raise Unresolved("a power too large to compute")
        if op is operator.mul and (isinstance(left, (str, list)) or isinstance(right, (str, list))):
            count = right if isinstance(left, (str, list)) else left
            if isinstance(count, int) and count > 10_000:
                raise Unresolved("a repetition too large to compute")
        result = op(left, right)
        if (
            isinstance(result, (int, float))
            and not math.isinf(result)
            and abs(result) > _MAX_NUMBER
        ):
            raise Unresolved("a number too large for a setting")
        return result

    def environ(self, name: Any, default: Any = None) -> Any:
        if not isinstance(name, str):
            raise Unresolved("an environment variable whose name is not a string")
        if name in self.env:
            return self.env[name]
        if default is _NO_DEFAULT:
            raise Unresolved(f"${name} (not set where check runs)")
        return default

    def env_reader(self, function: ast.expr) -> str | None:
        """The cast of a django-environ call `env(...)` ("") or `env.int(...)` ("int"), through
        any name bound to `environ.Env()`; None for any other call."""
        if isinstance(function, ast.Name) and _reads_env(self, function):
            return ""
        if (
            isinstance(function, ast.Attribute)
            and function.attr in _ENV_CASTS
            and _reads_env(self, function.value)
        ):
            return function.attr
        return None

    def call(self, node: ast.Call) -> Any:
        if node.keywords and not all(k.arg for k in node.keywords):
            raise Unresolved(f"`{ast.unparse(node)}`")
        args = [self.expr(a) for a in node.args if not isinstance(a, ast.Starred)]
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise Unresolved(f"`{ast.unparse(node)}`")
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords if k.arg}
        function = node.func
        cast = self.env_reader(function)
        # `env.int("X", 8000)` on a name bound to `environ.Env()` here: a reader method's
        # second argument is its default. The call form's (`env("X", int)`) is a cast, and
        # an `env` imported from elsewhere may be no django-environ reader: `default=` only.
        most = 2 if cast and _proven_reader(self, function) else 1
        if (
            cast is not None
            and 1 <= len(args) <= most
            and isinstance(args[0], str)
            and set(kwargs) <= {"default"}
            and not (len(args) == 2 and "default" in kwargs)
        ):
            default = args[1] if len(args) == 2 else kwargs.get("default", _NO_DEFAULT)
            value = self.environ(args[0], default)
            return _ENV_CASTS[cast](value) if isinstance(value, str) else value
        if self.dotted(function) in _ENV_CLASSES:
            return EnvReader()  # `env = environ.Env()`: read through its methods above
        if isinstance(function, ast.Attribute) and not _is_module_path(self, function.value):
            owner = self.expr(function.value)
            if isinstance(owner, str) and function.attr in _STR_METHODS:
                return getattr(owner, function.attr)(*args, **kwargs)
            if isinstance(owner, str) and function.attr == "format" and not kwargs:
                # `"0.0.0.0:{}".format(port)`; a width of 1000+ would only eat memory.
                if re.search(r"\d{4,}", owner):
                    raise Unresolved(f"`{ast.unparse(node)}`")
                return owner.format(*args)
            if isinstance(owner, dict) and function.attr == "get":
                return owner.get(*args)
            raise Unresolved(f"`{ast.unparse(node)}`")
        name = self.dotted(function)
        if name in _CPU_COUNT or (
            name.endswith(".cpu_count")
            and name.split(".")[0]
            in (
                "os",
                "multiprocessing",
            )
        ):
            return self.cpus
        if name in ("os.sched_getaffinity",):
            return set(range(self.cpus))
        if name in ("os.environ.get", "os.getenv") and args and len(args) <= 2 and not kwargs:
            return self.environ(args[0], args[1] if len(args) == 2 else None)
        if name.startswith("builtins."):
            return self.arith(lambda f, a: f(*a, **kwargs), _BUILTINS[name[9:]], args)
        raise Unresolved(f"`{ast.unparse(node.func)}(...)`")

    def sliced(self, container: Any, part: ast.Slice, node: ast.expr) -> Any:
        """`sys.argv[2:]`, `args[1:-1]`: whole-number bounds of a sequence known here."""
        bounds = [
            self.expr(b) if b is not None else None for b in (part.lower, part.upper, part.step)
        ]
        if not isinstance(container, (list, tuple, str)) or not all(
            b is None or (isinstance(b, int) and not isinstance(b, bool)) for b in bounds
        ):
            raise Unresolved(f"`{ast.unparse(node)}`")
        return container[slice(*bounds)]

    def expr(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.load(node.id)
        if isinstance(node, ast.BinOp):
            op = _BINARY.get(type(node.op))
            if op is None:
                raise Unresolved(f"`{ast.unparse(node)}`")
            return self.arith(op, self.expr(node.left), self.expr(node.right))
        if isinstance(node, ast.UnaryOp):
            value = self.expr(node.operand)
            if isinstance(node.op, ast.USub):
                return -value
            if isinstance(node.op, ast.UAdd):
                return +value
            if isinstance(node.op, ast.Not):
                return not value
            raise Unresolved(f"`{ast.unparse(node)}`")
        if isinstance(node, ast.BoolOp):
            result: Any = None
            for value_node in node.values:
                result = self.expr(value_node)
                if isinstance(node.op, ast.Or) and result:
                    return result
                if isinstance(node.op, ast.And) and not result:
                    return result
            return result
        if isinstance(node, ast.Compare):
            left = self.expr(node.left)
            for op_node, right_node in zip(node.ops, node.comparators, strict=True):
                right = self.expr(right_node)
                if not _COMPARE[type(op_node)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self.expr(node.body) if self.expr(node.test) else self.expr(node.orelse)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = [self.expr(e) for e in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise Unresolved(f"`{ast.unparse(node)}`")
            return {
                self.expr(k): self.expr(v)
                for k, v in zip(node.keys, node.values, strict=True)
                if k is not None
            }
        if isinstance(node, ast.JoinedStr):
            parts = []
            for part in node.values:
                if isinstance(part, ast.FormattedValue):
                    value = self.expr(part.value)
                    spec = self.expr(part.format_spec) if part.format_spec else ""
                    if re.search(r"\d{4,}", str(spec)):  # a width of 1000+: not a setting
                        raise Unresolved(f"`{ast.unparse(part)}`")
                    value = repr(value) if part.conversion == ord("r") else value
                    parts.append(format(value, spec))
                else:
                    parts.append(str(self.expr(part)))
            return "".join(parts)
        if isinstance(node, ast.Subscript):
            if _is_environ(self, node.value):
                return self.environ(self.expr(node.slice), _NO_DEFAULT)
            container = self.expr(node.value)
            if isinstance(node.slice, ast.Slice):
                return self.sliced(container, node.slice, node)
            return container[self.expr(node.slice)]
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Attribute):
            path = self.dotted(node)
            if path == "os.environ":
                return dict(self.env)
            raise Unresolved(f"`{path}`")
        raise Unresolved(f"`{ast.unparse(node)}`")


_MISSING = object()
#: `os.environ[NAME]`: no default, so an unset name raises.
_NO_DEFAULT = object()


#: django-environ's readers (`env = environ.Env()`, its documented name): `env("X",
#: default=...)`, `env.int(...)`, ... read the environment with a default, cast as they say
#: (its bool: true, on, ok, y, yes, 1).
_ENV_CASTS: dict[str, Callable[[str], Any]] = {
    "": str,
    "str": str,
    "int": int,
    "float": float,
    "bool": lambda v: v.strip().lower() in ("true", "on", "ok", "y", "yes", "1"),
}


#: django-environ's reader class, as a config imports it (`import environ`).
_ENV_CLASSES = frozenset({"environ.Env", "environ.environ.Env"})


@dataclass(frozen=True)
class EnvReader:
    """A django-environ reader a config made (`env = environ.Env()`): a helper object, not a
    setting's value."""


def _proven_reader(evaluator: _Evaluator, function: ast.expr) -> bool:
    """`function` is a method of a reader this file made (`environ.Env()`), not of a name
    `env` from elsewhere."""
    owner = function.value if isinstance(function, ast.Attribute) else function
    if isinstance(owner, ast.Name):
        return isinstance(evaluator.names.get(owner.id), EnvReader)
    return isinstance(owner, ast.Call)


def _reads_env(evaluator: _Evaluator, node: ast.expr) -> bool:
    """`node` is a django-environ reader: the name `env` (its documented name), a name bound
    to `environ.Env()`, or the call `environ.Env()` itself."""
    if isinstance(node, ast.Name):
        return node.id == "env" or isinstance(evaluator.names.get(node.id), EnvReader)
    return isinstance(node, ast.Call) and evaluator.dotted(node.func) in _ENV_CLASSES


def _is_module_path(evaluator: _Evaluator, node: ast.expr) -> bool:
    """`os.environ`, `multiprocessing`: an imported module, not a value to call a method on."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and isinstance(evaluator.names.get(node.id), _Imported)


def _is_environ(evaluator: _Evaluator, node: ast.expr) -> bool:
    return evaluator.dotted(node) == "os.environ"


def _stored(node: ast.AST) -> set[str]:
    return {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def evaluate_config(
    tree: ast.Module,
    env: Mapping[str, str],
    cpus: int,
    module: str = "gunicorn_conf",
    importer: Importer | None = None,
) -> StaticConfig:
    """The top level of `tree` evaluated under `env` with `cpus` CPUs: Refused when it raises
    (also when an expression nests deeper than Python's recursion allows: no config does).
    `importer` finds the modules of the tree it imports names from, read one level deep."""
    evaluator = _Evaluator(env, cpus, module, importer)
    try:
        evaluator.run(tree.body)
    except RecursionError:
        raise Refused("an expression nested too deeply to evaluate") from None
    return StaticConfig(evaluator.names, evaluator.unknown, evaluator.lines)


def imported_path(value: Any) -> str | None:
    """The dotted path a value stands for when it is a name bound by an import (a module's
    attribute no file of the tree gives), else None."""
    return value.path if isinstance(value, _Imported) else None
