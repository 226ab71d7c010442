"""Python launcher scripts: a script an image runs (`CMD /start.py`, `python main.py`) that
builds the server's command line and hands it to `os.system`, `subprocess` or `os.exec*`, or
starts uvicorn in its own process (`uvicorn.run("main:app", port=8000)`, read as the uvicorn
command line of the same settings).

The script is parsed, never imported or run (`check` runs on contributors' pull requests). Its
statements are walked in order by `pystatic`'s evaluator, which knows literals, the environment
(`os.environ.get("CPU_COUNT", "1")` reads the image's ENV) and the names the script binds; a list
the script grows (`cmdline.append(...)`, `cmdline.extend([...])`) keeps each element's line, so a
finding on `--threads` points at the line that writes it. An `if` whose test is not known here
(`if log.root.level <= log.INFO:`) is read branch after branch, as a shell script's lines are.
The first call that runs a server command line is the launch. A value only the running script
knows (`port=settings.API_PORT`, `"-w", str(self.worker)`) is one unknown word of that command
line, as a shell's `$PORT` is: the option and its value are left out and named, and the rest is
read (the server, its config, the values written here). A command whose program itself is not
known, or built whole by a function of the project's, is NotFollowed, never guessed.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from servertune.check.commandgroup import chosen_command
from servertune.check.commands import Word, server_command
from servertune.check.model import SERVERS_READ, Location, NotFollowed, Setting, note
from servertune.check.pystatic import ClassValue, Refused, Unresolved, _Evaluator
from servertune.check.unfollowed import not_followed_launcher

__all__ = [
    "PythonLaunch",
    "child_launch",
    "looks_like_python",
    "python_launch",
    "starts_a_server",
]

#: The calls that run a command line through a shell (`os.system("gunicorn ...")`).
_SHELL_RUNNERS = frozenset({"os.system", "os.popen"})
#: The calls that run a program with its arguments as a list (a shell only with `shell=True`).
_LIST_RUNNERS = frozenset(
    {
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.Popen",
    }
)
#: `os.execvp(file, args)`: the program replaces the script (`args` is its whole argv).
_EXEC_LIST = frozenset({"os.execv", "os.execve", "os.execvp", "os.execvpe"})
#: `os.execlp(file, arg0, arg1, ...)`: the same with the argv written out.
_EXEC_ARGS = frozenset({"os.execl", "os.execle", "os.execlp", "os.execlpe"})


#: A server started in the script's own process: `uvicorn.run(app, host=..., port=...)`,
#: `uvicorn.Config(...)` (run by `uvicorn.Server(config)`), read as the command line that sets
#: the same: each keyword is the click option of the same name (uvicorn's `main` hands its
#: options to `run` by these names).
_IN_PROCESS = frozenset({"uvicorn.run", "uvicorn.Config", "uvicorn.config.Config"})
#: gunicorn's application classes a launcher subclasses and runs (`OLServer(...).run()`), by
#: where its settings come from: `Application` (and `WSGIApplication`) parses the command line
#: the script is run with (`load_config`: `sys.argv[1:]`, `GUNICORN_CMD_ARGS`, `-c`),
#: `BaseApplication` only what its subclass's `load_config` sets (gunicorn's "Custom
#: Application" example: the options dict given to the constructor, each `cfg.set(key,
#: value)`): https://docs.gunicorn.org/en/stable/custom.html
_GUNICORN_APPLICATIONS = {
    "gunicorn.app.base.Application": "argv",
    "gunicorn.app.wsgiapp.WSGIApplication": "argv",
    "gunicorn.app.base.BaseApplication": "options",
}


class _Argument(str):
    """A word of the command line the script is run with, still knowing where it is written
    (`sys.argv.pop(1)` and `sys.argv[1:]` keep it): a finding on what gunicorn reads from it
    points at the caller's line."""

    at: Location


def _argument(word: str | Word) -> str:
    if isinstance(word, str):
        return word
    argument = _Argument(word.text)
    argument.at = word.at
    return argument


@dataclass(frozen=True)
class _GunicornApp:
    """An instance of a gunicorn application class the script defines: how it is set, and the
    call that made it."""

    kind: str
    name: str
    made: ast.Call


#: The keywords of `uvicorn.run` whose option a check reads or prints, as uvicorn's CLI spells
#: them; a flag pair for booleans (`proxy_headers=False` is `--no-proxy-headers`).
_UVICORN_OPTIONS: dict[str, str | tuple[str, str | None]] = {
    "host": "--host",
    "port": "--port",
    "uds": "--uds",
    "fd": "--fd",
    "workers": "--workers",
    "backlog": "--backlog",
    "limit_concurrency": "--limit-concurrency",
    "limit_max_requests": "--limit-max-requests",
    "timeout_keep_alive": "--timeout-keep-alive",
    "timeout_graceful_shutdown": "--timeout-graceful-shutdown",
    "forwarded_allow_ips": "--forwarded-allow-ips",
    "root_path": "--root-path",
    "loop": "--loop",
    "http": "--http",
    "lifespan": "--lifespan",
    "interface": "--interface",
    "log_level": "--log-level",
    "proxy_headers": ("--proxy-headers", "--no-proxy-headers"),
    "access_log": ("--access-log", "--no-access-log"),
    "reload": ("--reload", None),
}


class _Unknown:
    """An element of a command line the script builds whose value only the running script
    knows (`settings.WORKERS`, `str(self.worker)`): kept in its list so the words around it
    stay known, and poison to anything else (comparing, formatting or testing it is itself
    not known here)."""

    __slots__ = ("many", "source")

    def __init__(self, source: str, *, many: bool = False) -> None:
        #: The expression as written, for the note that names it.
        self.source = source
        #: Several words (`*extra`, `cmd.extend(options)`), never one flag's value.
        self.many = many

    def _unknown(self, *_: object) -> Any:
        raise Unresolved(f"`{self.source}`")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _unknown
    __bool__ = __str__ = __format__ = __len__ = __iter__ = __hash__ = _unknown


def looks_like_python(path: Path, text: str) -> bool:
    """A `.py` file, or one whose `#!` line names python."""
    first = text.split("\n", 1)[0]
    return path.suffix == ".py" or (first.startswith("#!") and "python" in first)


@dataclass(frozen=True)
class PythonLaunch:
    """The server command line a Python launcher runs, and whether it replaces the script
    (`os.exec*`) or runs as its child (`os.system`, `subprocess`)."""

    words: tuple[Word, ...]
    replaces: bool
    #: Run through a shell (`os.system`, `shell=True`), which expands `$NAME` in the words.
    shell: bool
    #: The server runs in the script's own process (`uvicorn.run(...)`): the words are the
    #: command line of its settings, and no `UVICORN_*` variable sets one (only its CLI reads
    #: them).
    in_process: bool = False
    #: The call that runs it (`os.system`, `subprocess.run`, `os.execvp`), at `line`, with
    #: its command argument as written (`" ".join(cmdline)`): where a child is fixed.
    call: str = ""
    line: int = 0
    argument: str = ""
    #: Options left out because only the running script knows their value (`--port
    #: settings.API_PORT`), each at the line that writes it: unresolved, as a shell's `$PORT`.
    unknown: tuple[Setting[str], ...] = ()
    #: A gunicorn `BaseApplication` given an options dict: its `load_config` fills gunicorn's
    #: settings as a config file does (`cfg.set`), so the script is the server's config; any
    #: other launcher holds a command line (`uvicorn.run`'s keywords, a `subprocess` argv).
    loads_config: bool = False


class _Found(Exception):
    def __init__(self, launch: PythonLaunch) -> None:
        self.launch = launch


class _Launcher(_Evaluator):
    def __init__(
        self,
        path: Path,
        env: Mapping[str, str],
        entry: str | None = None,
        argv: Sequence[str] = (),
        arguments: Sequence[str | Word] | None = None,
    ) -> None:
        super().__init__(env, 1, path.stem)
        # Run as a program (`python main.py`, `CMD ["/start.py"]`), its `if __name__ ==
        # "__main__":` block runs; a console script's module is imported, so it does not.
        self.names["__name__"] = "__main__" if entry is None else path.stem
        self.path = path
        #: `sys.argv` when the command that runs the script is known (a compose `command`
        #: after it); None otherwise, and then a value it picks is not known here.
        self.arguments: list[str] | None = (
            None if arguments is None else [str(path), *(_argument(a) for a in arguments)]
        )
        #: A command the script hands over to that names a server it starts in its own code
        #: (`manage.py runserver 0.0.0.0:8000`): not followed, said when no server is found.
        self.launcher: NotFollowed | None = None
        #: The function a console script runs, and the words after the command.
        self.entry = entry
        self.argv = list(argv)
        #: The commands of a console script's group that its words do not run.
        self.skipped: frozenset[str] = frozenset()
        #: The line of each element of a list the script builds, by the list's name.
        self.element_lines: dict[str, list[int]] = {}
        self.unknown_command: str | None = None
        #: A server the script runs in its own code (`app.run(host=..., port=...)`, Flask's
        #: development server): not one check reads, and not "no server" either.
        self.own_server: str | None = None
        #: The script's text, for the source of the call that runs the server.
        self.text = ""
        #: The command it runs is picked from a table by `sys.argv`, not given here.
        self.picked = False
        #: The tests not known here of the `if`s being read (innermost last).
        self.uncertain: list[str] = []
        #: The method being read for the command line it returns (`Class.name`), if any.
        self.method: str | None = None
        #: The first server command line a method of the script returns.
        self.returned: PythonLaunch | None = None
        #: The line of each key of a table the script binds (`"gunicorn": [...]`), by table.
        self.key_lines: dict[str, dict[str, int]] = {}
        #: The dict literal last bound to each name (its keys read one by one when a value is
        #: not known here: gunicorn's options).
        self.dicts: dict[str, ast.Dict] = {}

    def statement(self, node: ast.stmt) -> None:
        value = getattr(node, "value", None)
        if isinstance(node, (ast.Expr, ast.Assign, ast.Return)) and isinstance(value, ast.expr):
            for call in (n for n in ast.walk(value) if isinstance(n, ast.Call)):
                if self.method is None:
                    self.runner(call)
            if isinstance(node, ast.Expr) and isinstance(value, ast.Call):
                self.grow(value)
        if isinstance(node, ast.Return) and value is not None and self.method is not None:
            self.returns(value, node.lineno)
        if isinstance(node, ast.ClassDef):
            super().statement(node)
            self.methods(node)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == self.entry:
                self.bind_options(node)
            if node.name not in self.skipped:
                self.run(node.body)  # a launcher's `main()`: its calls are the launch
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            self.run(node.body)  # once, as written: a server started in a loop is started
        if isinstance(node, ast.Raise):
            return  # on a branch read only because its test is not known here
        super().statement(node)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.dicts[target.id] = node.value
                    self.key_lines[target.id] = {
                        k.value: k.lineno
                        for k in node.value.keys
                        if isinstance(k, ast.Constant) and isinstance(k.value, str)
                    }
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.element_lines[target.id] = (
                        [e.lineno for e in node.value.elts]
                        if isinstance(node.value, (ast.List, ast.Tuple))
                        else []
                    )

    def expr(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Attribute) and self.dotted(node) == "sys.argv":
            if self.arguments is None:
                raise Unresolved("`sys.argv` (the arguments it is run with, not given here)")
            return self.arguments  # the one list: `sys.argv.pop(1)` changes what gunicorn reads
        if isinstance(node, ast.Attribute) and self.dotted(node) == "sys.executable":
            return "python"  # the interpreter running the script: `sys.executable -m gunicorn`
        if isinstance(node, (ast.List, ast.Tuple)):
            items = self.elements(node.elts)
            return tuple(items) if isinstance(node, ast.Tuple) else items
        return super().expr(node)

    def call(self, node: ast.Call) -> Any:
        function = node.func
        if (
            isinstance(function, ast.Attribute)
            and function.attr == "pop"
            and len(node.args) <= 1
            and not node.keywords
        ):
            owner = self.expr(function.value)
            index = self.expr(node.args[0]) if node.args else -1
            if isinstance(owner, list) and isinstance(index, int):
                return owner.pop(index)  # `sys.argv.pop(1)`: the config file, taken off argv
        made = self.gunicorn_application(function)
        if made is not None:
            for argument in node.args:  # `Server(sys.argv.pop(1))` takes its word off argv
                try:
                    self.expr(argument)
                except Refused:
                    raise
                except Exception:
                    continue
            return _GunicornApp(made[0], made[1], node)
        return super().call(node)

    def gunicorn_application(self, function: ast.expr, depth: int = 0) -> tuple[str, str] | None:
        """(how it is set, its name) when `function` names a class of the script's that
        subclasses one of gunicorn's application classes (through its own classes too)."""
        if not isinstance(function, ast.Name) or depth > 8:
            return None
        value = self.names.get(function.id)
        if not isinstance(value, ClassValue):
            return None
        for base in value.bases:
            if base in _GUNICORN_APPLICATIONS:
                return _GUNICORN_APPLICATIONS[base], function.id
            local = base.removeprefix(f"{self.module}.")
            found = None if "." in local else self.gunicorn_application(ast.Name(local), depth + 1)
            if found is not None:
                return found[0], function.id
        return None

    def elements(self, nodes: Sequence[ast.expr]) -> list[Any]:
        """A list's elements, one not known here kept as `_Unknown` (`*rest` not known: one
        `_Unknown` for several words)."""
        items: list[Any] = []
        for node in nodes:
            starred = isinstance(node, ast.Starred)
            inner = node.value if isinstance(node, ast.Starred) else node
            try:
                value = self.expr(inner)
            except Refused:
                raise
            except Exception:
                items.append(_Unknown(ast.unparse(inner), many=starred))
                continue
            if starred and isinstance(value, list | tuple):
                items.extend(value)
            elif starred:
                items.append(_Unknown(ast.unparse(inner), many=True))
            else:
                items.append(value)
        return items

    def server_entries(self) -> list[tuple[str, str, str]]:
        """The entries of the tables of command lines the script binds (`KNOWN_COMMANDS =
        {"gunicorn": ["gunicorn", "--config", ...], ...}`) that start a server, as (table,
        key, server)."""
        entries: list[tuple[str, str, str]] = []
        for name, value in self.names.items():
            if not isinstance(value, dict):
                continue
            for key, command in value.items():
                if not isinstance(command, list | tuple) or not command:
                    continue
                if not isinstance(key, str) or not all(isinstance(w, str) for w in command):
                    continue
                found = server_command([Word(w, Location(self.path, 0)) for w in command])
                if found is not None:
                    entries.append((name, key, found.server))
        return entries

    def picked_from(self) -> str | None:
        """The first table entry that starts a server, as "NAME at line N, whose 'KEY' entry
        starts SERVER"; None when the script binds none."""
        entries = self.server_entries()
        if not entries:
            return None
        name, key, server = entries[0]
        return f"{name} at line {self.lines.get(name, 0)}, whose {key!r} entry starts {server}"

    def bind_options(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """The console script's function: each parameter a `@click.option("--port", ...)`
        declares takes its value from the command line's words (`--port 5000`,
        `--port=5000`, a flag's presence), else the option's `default=`."""
        parameters = {a.arg for a in (*function.args.args, *function.args.kwonlyargs)}
        for decorator in function.decorator_list:
            if not (
                isinstance(decorator, ast.Call) and self.dotted(decorator.func).endswith("option")
            ):
                continue
            flags = [
                a.value
                for a in decorator.args
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            ]
            named = [f for f in flags if not f.startswith("-")]
            longest = max((f for f in flags if f.startswith("-")), key=len, default="")
            parameter = named[0] if named else longest.lstrip("-").replace("-", "_")
            if parameter not in parameters:
                continue
            keywords = {k.arg: k.value for k in decorator.keywords if k.arg}
            flag = keywords.get("is_flag")
            is_flag = isinstance(flag, ast.Constant) and flag.value is True
            given = _given(self.argv, [f for f in flags if f.startswith("-")], is_flag)
            if given is not None:
                self.bind(parameter, given, decorator.lineno)
                continue
            default = keywords.get("default")
            if default is None:
                self.bind(parameter, None, decorator.lineno)
            else:
                target = ast.Name(parameter, ast.Store())
                self.assign(target, partial(self.expr, default), decorator.lineno)

    def branch(
        self, test: ast.expr, body: list[ast.stmt], orelse: list[ast.stmt], line: int
    ) -> None:
        try:
            taken = bool(self.expr(test))
        except Refused:
            raise
        except Exception:
            # Not known here: both branches, in order, as a shell's lines; what they add to
            # a command line is only there when the test holds (`if DEBUG:
            # cmd.append("--reload")`), so it is a word not known here.
            self.uncertain.append(ast.unparse(test))
            try:
                self.run(body)
                self.run(orelse)
            finally:
                self.uncertain.pop()
            return
        self.run(body if taken else orelse)

    def methods(self, node: ast.ClassDef) -> None:
        """The methods of a class the script defines, read for the server command line one
        returns (`GunicornService.cmd`: `return ["gunicorn", ...]`), never run as a launch:
        each on the names of the module, which it leaves as they were."""
        for item in node.body:
            if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            saved = (dict(self.names), dict(self.unknown), dict(self.lines))
            lines = dict(self.element_lines)
            self.method = f"{node.name}.{item.name}"
            try:
                self.run(item.body)
            finally:
                self.method = None
                self.names, self.unknown, self.lines = saved
                self.element_lines = lines

    def returns(self, value: ast.expr, line: int) -> None:
        """A method's `return cmd`: the first server command line a method returns."""
        if self.returned is not None:
            return
        items = self.items_of(value, line)
        split = _list_words(self.path, items) if items is not None and len(items) > 1 else None
        known = _known_words(split) if split is not None else None
        if known is not None and server_command(known[0]) is not None:
            self.returned = PythonLaunch(
                tuple(known[0]), replaces=True, shell=False, unknown=tuple(known[1])
            )

    def grow(self, call: ast.Call) -> None:
        """`name.append(x)`, `name.extend([...])`, `name.insert(i, x)` on a list the script
        bound: the list as it is after the call."""
        function = call.func
        if not (isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name)):
            return
        name = function.value.id
        current = self.names.get(name)
        if not isinstance(current, list) or function.attr not in ("append", "extend", "insert"):
            return
        lines = self.element_lines.setdefault(name, [])
        # `cmd.append(settings.X)`: the list keeps its known words, that one unknown (and
        # `cmd.extend(options)` several unknown words).
        many = function.attr == "extend"
        args = self.elements(call.args)
        if self.uncertain and function.attr in ("append", "extend") and len(args) == 1:
            # Added only when a test not known here holds: not known either.
            written = ast.unparse(call.args[0])
            current.append(_Unknown(f"{written} (when `{self.uncertain[-1]}`)", many=True))
            lines.append(call.lineno)
            return
        args = [a if not isinstance(a, _Unknown) else _Unknown(a.source, many=many) for a in args]
        if many and args and isinstance(args[-1], _Unknown):
            args[-1] = [args[-1]]
        if function.attr == "insert" and args and not isinstance(args[0], int):
            self.unbind(name, f"`{ast.unparse(call)}`", call.lineno)  # where is not known
            return
        if function.attr == "append" and len(args) == 1:
            current.append(args[0])
            lines.append(call.lineno)
        elif function.attr == "extend" and len(args) == 1 and isinstance(args[0], list | tuple):
            current.extend(args[0])
            lines.extend(_element_lines(call.args[0], call.lineno, len(args[0])))
        elif function.attr == "insert" and len(args) == 2 and isinstance(args[0], int):
            current.insert(args[0], args[1])
            lines.insert(args[0], call.lineno)

    def runner(self, call: ast.Call) -> None:
        function = call.func
        if isinstance(function, ast.Attribute) and function.attr == "run" and not call.args:
            try:
                owner = self.expr(function.value)
            except Exception:
                owner = None
            if isinstance(owner, _GunicornApp):
                self.gunicorn_run(owner, call)
        name = self.dotted(call.func)
        listens = {k.arg for k in call.keywords} & {"host", "port"}
        if name.endswith(".run") and name not in _IN_PROCESS and listens and not self.own_server:
            self.own_server = f"line {call.lineno}: `{ast.unparse(call)[:80]}`"
        if name in _IN_PROCESS:
            self.in_process(call)
            return
        shell = name in _SHELL_RUNNERS or any(
            k.arg == "shell" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in call.keywords
        )
        if name in _EXEC_ARGS:
            argv: Sequence[ast.expr] = call.args[1:]
            items = self.items_of(ast.List(elts=list(argv)), call.lineno)
        elif name in _EXEC_LIST and len(call.args) >= 2:
            # `os.execvpe(file, args, env)`: the argv is the second argument, whatever follows.
            items = self.items_of(call.args[1], call.lineno)
        elif name in (_SHELL_RUNNERS | _LIST_RUNNERS) and call.args:
            items = self.items_of(call.args[0], call.lineno)
        else:
            return
        replaces = name in _EXEC_LIST | _EXEC_ARGS
        if items is None:
            if replaces and self.unknown_command is None:
                table = self.picked_from()
                self.picked = table is not None and self.arguments is None
                if table is not None:
                    self.unknown_command = (
                        f"line {call.lineno}: the command it runs is picked from {table}, "
                        "by the arguments it is run with, which are not given here"
                    )
            return
        split = _shell_words(self.path, items) if shell else _list_words(self.path, items)
        known = _known_words(split) if split is not None else None
        if known is None or server_command(known[0]) is None:
            if known is not None and replaces and self.launcher is None:
                self.launcher = not_followed_launcher(known[0])
            elif known is None and _names_server(ast.unparse(call)):
                self.unknown_command = self.unknown_command or (
                    f"line {call.lineno}: the program it runs is not known here"
                )
            return
        words, unknown = known
        written = ast.get_source_segment(self.text, call.args[0]) if call.args else None
        raise _Found(
            PythonLaunch(
                tuple(words),
                replaces=replaces,
                shell=shell,
                call=name,
                line=call.lineno,
                argument=written or "",
                unknown=tuple(unknown),
            )
        )

    def gunicorn_run(self, app: _GunicornApp, call: ast.Call) -> None:
        """`OLWSGIServer(config).run()`: gunicorn in the script's own process, set by the
        command line the script is run with (an `Application`), or by the options dict its
        constructor is given (a `BaseApplication`)."""
        at = Location(self.path, call.lineno)
        words = [Word("gunicorn", at)]
        unknown: list[Setting[str]] = []
        if app.kind == "argv":
            if self.arguments is None:
                # Every setting may be among them, its address too: nothing to read yet.
                if self.unknown_command is None:
                    self.unknown_command = (
                        f"line {call.lineno}: {app.name}, a gunicorn Application, takes its "
                        "settings from the arguments the script is run with, not given here"
                    )
                return
            words += [Word(a, a.at if isinstance(a, _Argument) else at) for a in self.arguments[1:]]
        else:
            options = self.options_of(app.made)
            if options is None:
                if self.unknown_command is None:
                    self.unknown_command = (
                        f"line {call.lineno}: {app.name}, a gunicorn BaseApplication, sets "
                        "its settings in its own load_config, from no dict given to it here"
                    )
                return
            words_of, unknown = options
            words += words_of
        raise _Found(
            PythonLaunch(
                tuple(words),
                replaces=True,
                # The arguments came from a shell's command line: it expands `$GUNICORN_OPTS`.
                shell=any("$" in w.text for w in words),
                in_process=True,
                unknown=tuple(unknown),
                loads_config=app.kind != "argv",
            )
        )

    def options_of(self, made: ast.Call) -> tuple[list[Word], list[Setting[str]]] | None:
        """The settings of the dict a `BaseApplication` subclass is made with (`Standalone(app,
        {"bind": "0.0.0.0:8000", "workers": n})`) as command-line words, each at its key's
        line; a value not known here left out and named. None without one such dict."""
        from servertune.check.paste import gunicorn_flags, setting_words

        dicts: list[ast.Dict] = []
        for argument in [*made.args, *(k.value for k in made.keywords)]:
            if isinstance(argument, ast.Name) and argument.id in self.dicts:
                dicts.append(self.dicts[argument.id])
            elif isinstance(argument, ast.Dict):
                dicts.append(argument)
        if len(dicts) != 1:
            return None
        flags = gunicorn_flags()
        words: list[Word] = []
        unknown: list[Setting[str]] = []
        for key, value in zip(dicts[0].keys, dicts[0].values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            at = Location(self.path, getattr(key, "lineno", made.lineno))
            try:
                known = self.expr(value)
            except Refused:
                raise
            except Exception:
                flag = flags.get(key.value.lower(), ("", ""))[0]
                if flag:
                    unknown.append(Setting(f"{flag} {ast.unparse(value)}", at))
                continue
            words += setting_words(flags, key.value, known, at)
        return words, unknown

    def in_process(self, call: ast.Call) -> None:
        """`uvicorn.run("shop:app", host="0.0.0.0", port=8000)`: the uvicorn command line of
        the same settings, each word at its keyword's line."""
        at = Location(self.path, call.lineno)
        if any(k.arg is None for k in call.keywords) or any(
            isinstance(a, ast.Starred) for a in call.args
        ):
            # `uvicorn.run(**uvicorn_args)`: the settings are a mapping the code builds.
            if self.unknown_command is None:
                self.unknown_command = f"line {call.lineno}: `{ast.unparse(call)[:80]}`"
            return
        app = (
            call.args[0]
            if call.args
            else next((k.value for k in call.keywords if k.arg in ("app", "config")), None)
        )
        try:
            target = self.expr(app) if app is not None else None
        except (Unresolved, Refused):
            target = None
        if not isinstance(target, str):
            # An app object (`uvicorn.run(app)`): the module's, by the name it is bound to.
            written = ast.unparse(app) if app is not None else "app"
            target = f"{self.path.stem}:{written}"
        words = [Word("uvicorn", at), Word(target, at)]
        unknown: list[Setting[str]] = []
        for keyword in call.keywords:
            option = _UVICORN_OPTIONS.get(keyword.arg or "")
            if option is None:
                continue
            where = Location(self.path, keyword.value.lineno)
            try:
                value = self.expr(keyword.value)
            except Refused:
                raise
            except Exception:
                # `port=settings.API_PORT`: the option is left out and named, as `$PORT`.
                named = option[0] if isinstance(option, tuple) else option
                unknown.append(Setting(f"{named} {ast.unparse(keyword.value)}", where))
                continue
            if isinstance(option, tuple):
                flag = option[0] if value else option[1]
                if flag is not None:
                    words.append(Word(flag, where))
            elif value is not None:
                words.extend([Word(option, where), Word(str(value), where)])
        raise _Found(
            PythonLaunch(
                tuple(words), replaces=True, shell=False, in_process=True, unknown=tuple(unknown)
            )
        )

    def items_of(self, node: ast.expr, line: int) -> list[tuple[str | _Unknown, int]] | None:
        """The command's parts with their lines: a list's elements (one not known here an
        `_Unknown`), or one string."""
        lines: list[int] = []
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "join"
            and len(node.args) == 1
        ):
            source = node.args[0]
        else:
            source = node
        if isinstance(source, ast.Name):
            lines = self.element_lines.get(source.id, [])
        elif isinstance(source, (ast.List, ast.Tuple)):
            lines = [e.lineno for e in source.elts]
        try:
            value: Any = self.expr(source)
        except (Unresolved, Refused) as why:
            if self.unknown_command is None and _names_server(ast.unparse(source)):
                self.unknown_command = f"line {line}: {why}"
            return None
        if isinstance(value, str):
            return [(value, line)]
        if isinstance(value, list | tuple) and all(isinstance(v, str | _Unknown) for v in value):
            if len(lines) != len(value):
                lines = [line] * len(value)
            return list(zip(value, lines, strict=True))
        return None


def _given(argv: Sequence[str], flags: Sequence[str], is_flag: bool) -> str | bool | None:
    """The value the command line gives an option (`--port 5000`, `--port=5000`; True for a
    flag that is present), None when it gives none."""
    for index, word in enumerate(argv):
        name, sep, value = word.partition("=")
        if name not in flags:
            continue
        if is_flag:
            return True
        if sep:
            return value
        if index + 1 < len(argv):
            return argv[index + 1]
    return None


def _element_lines(node: ast.expr, line: int, count: int) -> list[int]:
    if isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) == count:
        return [e.lineno for e in node.elts]
    return [line] * count


def _names_server(text: str) -> bool:
    return any(server in text for server in ("gunicorn", "uvicorn", "granian", "uwsgi"))


#: A command's words, an element not known here kept with its line.
_Split = list[Word | tuple[_Unknown, Location]]


def _list_words(path: Path, items: list[tuple[str | _Unknown, int]]) -> _Split:
    return [
        Word(text, Location(path, line)) if isinstance(text, str) else (text, Location(path, line))
        for text, line in items
    ]


def _shell_words(path: Path, items: list[tuple[str | _Unknown, int]]) -> _Split | None:
    """The words a shell splits the joined command into, each at the line of its part (a
    part that does not split alone, an open quote, splits with the whole line); a part not
    known here stays one unknown part."""
    words: _Split = []
    try:
        for text, line in items:
            if isinstance(text, _Unknown):
                words.append((_Unknown(text.source, many=True), Location(path, line)))
            else:
                words.extend(Word(w, Location(path, line)) for w in shlex.split(text))
    except ValueError:
        if any(isinstance(text, _Unknown) for text, _ in items):
            return None
        try:
            joined = shlex.split(" ".join(str(text) for text, _ in items))
        except ValueError:
            return None
        return [Word(w, Location(path, items[0][1])) for w in joined]
    return words


def _known_words(split: _Split) -> tuple[list[Word], list[Setting[str]]] | None:
    """The words known here, and the options left out with their unknown value (`-w` and
    `str(self.worker)` as `-w str(self.worker)`, as the shell reader leaves `-w $W` out);
    None when the program itself is not known."""
    words: list[Word] = []
    unknown: list[Setting[str]] = []
    for part in split:
        if isinstance(part, Word):
            words.append(part)
            continue
        item, at = part
        if not words:
            return None
        previous = words[-1].text
        if not item.many and previous.startswith("-") and previous != "-" and "=" not in previous:
            words.pop()  # the flag goes with its value
            unknown.append(Setting(f"{previous} {item.source}", at))
        else:
            unknown.append(Setting(item.source, at))
    return words, unknown


def python_launch(
    path: Path,
    text: str,
    env: Mapping[str, str],
    entry: str | None = None,
    argv: Sequence[str] = (),
    arguments: Sequence[str | Word] | None = None,
) -> PythonLaunch | None:
    """The server command line the Python script at `path` runs, under `env` (its function
    `entry` run by a console script with the words `argv`; `arguments` its `sys.argv[1:]`
    when the command that runs it is known); None when it runs none; NotFollowed when it
    runs one built from values only the running script knows, or hands over to a launcher
    of a server of its own (`manage.py runserver`).

    A launcher that picks its command from a table by the arguments it is run with, when
    those are not given here (an image with no CMD, run with `gunicorn` by a deployment not
    among the files), is read as run with the key of the table's server entry: as a shell's
    `case "$1"` whose word is not known, one server is read and a `server-chosen` note says
    which key it needs and which other keys start other servers."""
    return _launch(path, text, env, entry, argv, arguments, chosen=True)


def _launch(
    path: Path,
    text: str,
    env: Mapping[str, str],
    entry: str | None,
    argv: Sequence[str],
    arguments: Sequence[str | Word] | None,
    *,
    chosen: bool,
) -> PythonLaunch | None:
    try:
        tree = ast.parse(text, filename=str(path))
    except (SyntaxError, ValueError, RecursionError):
        return None
    launcher = _Launcher(path, env, entry, argv, arguments)
    launcher.text = text
    _choose(launcher, tree)
    try:
        launcher.run(tree.body)
    except _Found as found:
        return found.launch
    except (Refused, RecursionError):
        return None
    if launcher.picked and chosen:
        launch = _picked(path, text, tree, env, entry, argv, launcher)
        if launch is not None:
            return launch
    known = launcher.unknown_command is None and launcher.launcher is None
    if known and launcher.returned is not None:
        return launcher.returned  # a module that builds the command another one runs
    if launcher.unknown_command is None and launcher.launcher is not None:
        raise launcher.launcher
    if launcher.unknown_command is None and launcher.own_server is not None:
        raise NotFollowed(
            f"{path}: not followed: it runs a server in its own code ({launcher.own_server}, "
            "a framework's development server such as Flask's app.run): not a server check "
            f"reads ({SERVERS_READ}), so how it serves is not checked"
        )
    if launcher.unknown_command is not None:
        raise NotFollowed(
            f"{path}: not followed: the server it starts is set from a value check does not "
            f"evaluate ({launcher.unknown_command}), so how the server starts is not known"
        )
    return None


def _choose(launcher: _Launcher, tree: ast.Module) -> None:
    """A console script that is a group of commands runs the one its words name, with the
    words after it (`agent-memory api --port 8000`); the others are only declared."""
    chosen = chosen_command(tree, launcher.entry, launcher.argv)
    if chosen is None:
        return
    if chosen.unknown is not None:
        raise NotFollowed(
            f"{launcher.path}: not followed: {launcher.entry} is a group of commands and the "
            f"word that names the command, {chosen.unknown!r}, is not known here"
        )
    launcher.entry, launcher.argv, launcher.skipped = chosen.function, chosen.argv, chosen.skipped


def _picked(
    path: Path,
    text: str,
    tree: ast.Module,
    env: Mapping[str, str],
    entry: str | None,
    argv: Sequence[str],
    launcher: _Launcher,
) -> PythonLaunch | None:
    """The launch when the script is run with the key of its table's first server entry,
    noted with the keys it needs (None when no entry's run reaches a server)."""
    found: list[tuple[str, str, PythonLaunch]] = []
    for table, key, _ in launcher.server_entries():
        again = _Launcher(path, env, entry, argv, [key])
        again.text = text
        _choose(again, tree)
        try:
            again.run(tree.body)
        except _Found as run:
            found.append((table, key, run.launch))
        except (Refused, RecursionError):
            continue
    if not found:
        return None
    table, key, launch = found[0]
    line = launcher.key_lines.get(table, {}).get(key, launcher.lines.get(table, 1))
    others = "".join(
        f"; run with {k!r} it starts {found_server}"
        for _, k, other in found[1:]
        if (found_server := _server_name(other)) is not None
    )
    note(
        "server-chosen",
        Location(path, line),
        f"the {key!r} entry of {table} starts {_server_name(launch)} when the image is run "
        f"with {key!r} (the command is picked by the arguments it is run with, which the "
        f"files read do not give){others}: read as run with {key!r}",
    )
    return launch


def _server_name(launch: PythonLaunch) -> str | None:
    found = server_command(launch.words)
    return found.server if found is not None else None


def starts_a_server(path: Path, text: str) -> bool:
    """Whether the Python file at `path` is a launcher: its top level runs a server command
    line (or one built from values only the running script knows). An application module,
    which only defines what a server serves, is not."""
    if not looks_like_python(path, text) or not _names_server(text):
        return False
    try:
        return _launch(path, text, {}, None, (), None, chosen=False) is not None
    except NotFollowed:
        return True


#: A script that handles SIGTERM itself (`signal.signal(signal.SIGTERM, forward)`), as a
#: shell script's `trap`: whether it passes the signal on is the script's own code.
_HANDLES_SIGNALS = re.compile(r"\bsignal\.signal\s*\(|\bloop\.add_signal_handler\s*\(")


def child_launch(path: Path, text: str, launch: PythonLaunch) -> tuple[Setting[str], str] | None:
    """The line where the script runs the server as its child (`os.system`, `subprocess`),
    with the `os.execvp` that makes the server replace it; None when it replaces itself
    (`os.exec*`), runs the server in its own process, or handles signals itself."""
    if launch.replaces or launch.in_process or not launch.call:
        return None
    if _HANDLES_SIGNALS.search(text):
        return None
    lines = text.splitlines()
    shown = lines[launch.line - 1].strip() if 0 < launch.line <= len(lines) else launch.call
    argument = launch.argument or "..."
    if not launch.shell:
        fix = (
            f"os.execvp({argument}[0], {argument})"
            if argument.isidentifier()
            else f"argv = {argument}; os.execvp(argv[0], argv)"
        )
    elif any("$" in w.text for w in launch.words):
        # The shell expands the variables: keep it, and let it exec the server.
        fix = f'os.execvp("sh", ["sh", "-c", "exec " + {argument}])'
    else:
        fix = f"argv = shlex.split({argument}); os.execvp(argv[0], argv)"
    return Setting(shown, Location(path, launch.line)), fix
