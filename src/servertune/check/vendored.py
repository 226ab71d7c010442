"""Vendored folders that hold the project's own deployment files: a `vendor/` or
`third_party/` folder is left out of the walk as other people's code, except the files in it
that a Dockerfile here copies (`COPY vendor/docker/webapp.conf /etc/nginx/sites-enabled/`,
ror-community/ror-api) or a compose file here mounts (`./vendor/nginx.conf:/etc/nginx/...`):
what the run's own build or mount names is the project's, whatever folder holds it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from servertune.check.commands import is_dockerfile

__all__ = ["VENDORED_DIRECTORIES", "named_in_vendored"]

#: The skipped folders whose name says "other people's code", which a project also uses for
#: its own files kept aside (`vendor/docker/`).
VENDORED_DIRECTORIES = frozenset({"vendor", "third_party"})

#: A Dockerfile's COPY / ADD instruction, its words after the keyword.
_COPY = re.compile(r"^[ \t]*(?:COPY|ADD)[ \t]+(.*)$", re.I | re.M)
#: A word of a line that may be a relative path (quotes, brackets, commas, `:` and `=` split).
_WORD = re.compile(r"[^\s'\"\[\],:=]+")
#: Files named inside one folder named at most (a folder of the project's deployment files).
_MAX_FILES = 200


def named_in_vendored(root: Path, vendored: Sequence[Path], files: Iterable[Path]) -> list[Path]:
    """The files inside the `vendored` folders (left out by the walk of `root`) that a
    Dockerfile's COPY / ADD or a YAML file's (compose) word among `files` names, relative to
    its folder or to `root`: each once, in order. A word naming the vendored folder itself
    (`COPY vendor/ vendor/`, a Go or PHP dependency tree) names none of them; a folder below
    it names its files."""
    if not vendored:
        return []
    named: dict[Path, None] = {}
    for file in files:
        for word in _words(file):
            for base in (file.parent, root):
                target = Path(os.path.normpath(base / word))
                if any(folder in target.parents for folder in vendored):
                    named.update(dict.fromkeys(_files_at(target)))
    return list(named)


def _words(file: Path) -> list[str]:
    """The relative path words of a Dockerfile's COPY / ADD lines, or of a YAML file's lines."""
    yaml_file = file.suffix.lower() in (".yml", ".yaml")
    if not (yaml_file or is_dockerfile(file)):
        return []
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if yaml_file:
        lines = text.splitlines()
    else:
        lines = [m[1] for m in _COPY.finditer(text.replace("\\\n", " "))]
    return [
        word
        for line in lines
        for word in _WORD.findall(line)
        if not word.startswith(("/", "-", "$"))
        and any(p in VENDORED_DIRECTORIES for p in Path(word).parts)
    ]


def _files_at(target: Path) -> Iterator[Path]:
    """`target` when it is a file, the files below it when it is a folder (not through
    symlinks, at most `_MAX_FILES`), nothing when it is neither."""
    if target.is_symlink():
        return
    if target.is_file():
        yield target
        return
    count = 0
    for folder, subfolders, names in os.walk(target):
        subfolders.sort()
        for name in sorted(names):
            path = Path(folder, name)
            if count < _MAX_FILES and not path.is_symlink():
                count += 1
                yield path
