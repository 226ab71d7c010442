"""gunicorn.conf.py, read by gunicorn itself in a child interpreter with a time limit.

A gunicorn config is Python: its numbers may come from the environment, GUNICORN_CMD_ARGS or
`multiprocessing.cpu_count()`. Only gunicorn's own loader gives the values gunicorn will use,
and running someone's Python inside servertune's process would let it hang or crash `check`;
so a child interpreter loads it (`_gunicorn_probe.py`), and is killed after
GUNICORN_EVAL_TIMEOUT_S. Line numbers come from the file's syntax tree (never executed here).
"""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from servertune.check.model import AppServer, CheckInputError, Location, Setting

__all__ = [
    "ASGI_WORKER_CLASSES",
    "GUNICORN_DEFAULTS",
    "GUNICORN_EVAL_TIMEOUT_S",
    "GUNICORN_FLAGS",
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
        raise CheckInputError(
            f"{path}: Python syntax error at line {error.lineno}: {error.msg}"
        ) from None
    lines: dict[str, int] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                lines[target.id] = node.lineno
    return lines


def _evaluate(
    path: Path, env: Mapping[str, str] | None, argv: tuple[str, ...] = ()
) -> dict[str, Any]:
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
        from gunicorn.config import KNOWN_SETTINGS  # type: ignore[import-untyped]
    except ModuleNotFoundError:  # loading it then says which extra to install
        return None
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError:
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
    if not values.get("set_in_file") and not environment.get("GUNICORN_CMD_ARGS"):
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
        values = _evaluate(config, env, argv)
    except CheckInputError as error:
        reason = str(error).removeprefix(f"{config}: ")
        raise CheckInputError(f"{at or file}: {reason}") from None
    return gunicorn_app(file, values, locate)


def gunicorn_app(file: Path, values: dict[str, Any], locate: Locate) -> AppServer:
    """The AppServer of gunicorn's settings `values`, placed by `locate`."""

    def setting(name: str, kind: type[Any]) -> Setting[Any]:
        at, default = locate(name)
        return Setting(kind(values[name]), at, default=default)

    binds = values["bind"]
    bind_at, bind_default = locate("bind")
    instances = int(values.get("instances", 1))
    workers = setting("workers", int)
    if instances > 1:  # one single-worker instance per socket: the uWSGI map-socket layout
        workers = Setting(workers.value * instances, workers.at, workers.default)
    return AppServer(
        kind="gunicorn",
        file=file,
        workers=workers,
        threads=setting("threads", int),
        sockets=tuple(Setting(str(b), bind_at, bind_default) for b in binds),
        mapped_sockets=instances > 1,
        keepalive=setting("keepalive", float),
        request_timeout=setting("timeout", float),
        graceful_timeout=setting("graceful_timeout", float),
        max_requests=setting("max_requests", int),
        max_requests_jitter=setting("max_requests_jitter", int),
        backlog=setting("backlog", int),
        worker_class=setting("worker_class", str),
        workers_follow_cpu_count=bool(values["workers_follow_cpu_count"]),
        interface=interface_of([str(n) for n in values["worker_class_names"]]),
        # arbiter.py: start() creates the listeners (sock.py: bind() and listen() in the
        # master), then run() forks the workers, and each worker imports the app in
        # init_process() -> load_wsgi(); preload_app imports it in the arbiter's setup(),
        # before the listeners exist.
        listens_before_app=not values.get("preload_app", False),
    )
