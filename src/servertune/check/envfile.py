"""Env files (`KEY=value` lines): compose's `env_file`, `docker run --env-file`, and
`servertune check --env-file`.

Read by python-dotenv's parser, the one uvicorn's own `--env-file` uses: comments, blank lines,
`export KEY=value`, single quotes (literal), double quotes (escapes), inline comments after
unquoted values, each binding with its line. A line the parser cannot read is refused with its
line; a `KEY` without `=` takes its value from `lookup` (compose takes it from the shell), and
is left out when `lookup` has none. `interpolate` (compose's rule for env files) is applied to
unquoted and double-quoted values.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from servertune.check.model import CheckInputError, Location
from servertune.check.source import read_text

__all__ = ["compose_loads", "env_named", "looks_like_env_file", "read_env_file"]

#: What an env file's example or template copy is named after (`.env.example`, `env.dist`).
_COPY = r"(sample|example|template|dist|tpl|in)"

#: Env files by name: `.env`, `.env.prod`, `.env-dist`, `.env_sample` (codalab/codabench),
#: `prod.env`, `server.env.template`, `.env.example`, `env.sample`, `env.prod.template`,
#: `env.oss.gh.example`.
ENV_FILE_NAME = re.compile(
    rf"\A(\.env([._-].+)?|.+\.env(\.{_COPY})?|env\.([\w-]+\.)*{_COPY})\Z", re.I
)

#: `env` as a word of a name (`conf.d/env`, `cape-processor.env.default`, `web_env`): an env
#: file when its content is one (`ENV_FILE_NAME`'s names are one by name alone).
_ENV_WORD = re.compile(r"(\A|[._-])env(\Z|[._-])", re.I)

#: Suffixes of other kinds of files, whatever their names say (`env.py`, `setup-env.sh`).
_OTHER_SUFFIXES = frozenset(
    {".py", ".sh", ".bash", ".yaml", ".yml", ".json", ".toml", ".ini", ".conf", ".cfg", ".md"}
    | {".rst", ".txt", ".html", ".js", ".ts", ".rb", ".go", ".j2", ".jinja", ".jinja2", ".ps1"}
)

#: A `KEY=value` line, as an env file or a shell file of variables writes it.
_BINDING = re.compile(r"\A(export\s+)?[A-Za-z_][A-Za-z0-9_]*=")


def env_named(path: Path) -> bool:
    """Named as an env file may be: by `ENV_FILE_NAME`, or with `env` as a word of its name and
    no other kind's suffix (whose content then decides: `looks_like_env_file`)."""
    return bool(ENV_FILE_NAME.match(path.name)) or (
        bool(_ENV_WORD.search(path.name)) and path.suffix.lower() not in _OTHER_SUFFIXES
    )


def looks_like_env_file(path: Path, text: str) -> bool:
    """Named as an env file; or with `env` as a word of its name (`env_named`), every line a
    comment, blank or `KEY=value`, one at least binding or commenting out a variable (an
    example that lists what to set); or a server's settings written as shell variables (a
    `gunicorn.conf` of `GUNICORN_BIND=...` lines that an entrypoint sources): named for a
    server, every line a comment or `KEY=value`."""
    if ENV_FILE_NAME.match(path.name):
        return True
    lines = [line.strip() for line in text.splitlines()]
    bindings = [line for line in lines if line and not line.startswith("#")]
    if env_named(path):
        listed = bindings or [c for line in lines if (c := line.lstrip("#").strip()) != line]
        return any(_BINDING.match(line) for line in listed) and all(
            _BINDING.match(line) for line in bindings
        )
    name = path.name.lower()
    if path.suffix == ".py" or not any(s in name for s in ("gunicorn", "uwsgi", "uvicorn")):
        return False
    return bool(bindings) and all(_BINDING.match(line) for line in bindings)


def read_env_file(
    path: Path,
    lookup: Mapping[str, str] | None = None,
    interpolate: Callable[[str, Location], str] | None = None,
) -> tuple[dict[str, str], dict[str, Location]]:
    """The variables of the env file, and the line that set each."""
    from dotenv.parser import parse_stream

    text = read_text(path)
    values: dict[str, str] = {}
    where: dict[str, Location] = {}
    for binding in parse_stream(io.StringIO(text)):
        at = Location(path, binding.original.line)
        if binding.error:
            shown = binding.original.string.strip()[:60]
            raise CheckInputError(f"{at}: not a KEY=value line: {shown!r}")
        if binding.key is None:
            continue  # a comment or a blank line
        value = binding.value
        if value is None:
            value = (lookup or {}).get(binding.key)
            if value is None:
                continue
        else:
            raw = binding.original.string.partition("=")[2].lstrip()
            if interpolate is not None and not raw.startswith("'"):
                value = interpolate(value, at)
        values[binding.key] = value
        # a binding's `original` may start on the blank lines before it
        leading = len(binding.original.string) - len(binding.original.string.lstrip("\n"))
        where[binding.key] = Location(path, binding.original.line + leading)
    return values, where


#: Compose's own env file: read from the project folder (the compose file's) to interpolate it.
COMPOSE_DOTENV = ".env"


def compose_loads(path: Path, text: str) -> tuple[Path, ...]:
    """The env files here a compose file loads, whether or not its services start a server
    check reads (a stack of images built elsewhere loads them all the same): each service's
    `env_file` (a path, a list of paths or of `{path:, required:}`, relative to the compose
    file's folder), and the `.env` beside it, which compose reads to interpolate the file
    (Compose's "Set environment variables" and "Interpolation" pages). A path that names a
    variable, or a file outside the tree check reads, is not one here."""
    import yaml

    from servertune.check import resolve
    from servertune.check.kubernetes import _documents

    try:
        documents = _documents(path, text)
    except CheckInputError:
        return ()  # the compose reader says why, once
    services = documents[0].get("services") if documents else None
    if services is None or not isinstance(services.node, yaml.MappingNode):
        return ()
    names = [COMPOSE_DOTENV]
    for _, service in services.items():
        entries = service.get("env_file")
        if entries is None:
            continue
        items = entries.list() if isinstance(entries.node, yaml.SequenceNode) else [entries]
        for item in items:
            named = item.get("path") if isinstance(item.node, yaml.MappingNode) else item
            written = named.text() if named is not None else None
            if written and "$" not in written:
                names.append(written)
    found = (Path(os.path.normpath(path.parent / name)) for name in dict.fromkeys(names))
    return tuple(f for f in found if resolve.inside(f, path) and f.is_file())
