"""Files a Debian package of the repository installs at paths of the host.

debhelper installs a package's service files by name (dh_installinit(1),
https://manpages.debian.org/testing/debhelper/dh_installinit.1.en.html):
`debian/<package>.init` at `/etc/init.d/<package>`, `debian/<package>.default` at
`/etc/default/<package>`, and `debian/<package>.service` at
`/lib/systemd/system/<package>.service`; and each line of `debian/install` (or
`debian/<package>.install`) lists files, relative to the source tree (the folder holding
`debian/`), and last the folder they go in (dh_install(1),
https://manpages.debian.org/testing/debhelper/dh_install.1.en.html). A unit's
`ExecStart=/etc/init.d/kolibri-server start` then runs `debian/kolibri-server.init`, and its
`--ini /etc/kolibri/dist/uwsgi.ini` reads the `uwsgi.ini` a line `uwsgi.ini etc/kolibri/dist/`
installs (learningequality/kolibri-server).

Only literal names count: a wildcard, a folder installed whole, a line with one name (whose
destination dh_install guesses) or a `${var}` of dh-exec installs nothing known here.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from pathlib import Path

from servertune.check import memo, resolve

__all__ = ["debian_installs"]

#: The folder debhelper's packaging files live in.
PACKAGING_FOLDER = "debian"
#: dh_installinit's files, by suffix: where `debian/<package>.<suffix>` is installed.
_BY_SUFFIX = {
    "init": "/etc/init.d/{}",
    "default": "/etc/default/{}",
    "service": "/lib/systemd/system/{}.service",
}
#: The most lines of install lists one packaging folder's reading takes.
_MOST_LINES = 2000


def debian_installs(debian: Path) -> tuple[tuple[str, Path], ...]:
    """(the installed absolute path, the repository file) of each literal install the
    packaging folder `debian` makes, once per run."""
    key = (resolve.root(), "debian", debian)
    return memo.recall(memo.run_table("deploy installs"), key, lambda: tuple(_read(debian)))


def _read(debian: Path) -> Iterator[tuple[str, Path]]:
    try:
        files = sorted(p for p in debian.iterdir() if p.is_file())
    except OSError:
        return
    for file in files:
        package, dot, suffix = file.name.rpartition(".")
        if dot and package and suffix in _BY_SUFFIX:
            yield _BY_SUFFIX[suffix].format(package), file
    lines = 0
    for file in files:
        if file.name != "install" and not file.name.endswith(".install"):
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for line in text.splitlines():
            lines += 1
            if lines > _MOST_LINES:
                return
            yield from _line(debian.parent, line)


def _line(source: Path, line: str) -> Iterator[tuple[str, Path]]:
    """The literal files one install-list line puts in its last word's folder."""
    words = line.split("#", 1)[0].split()
    if len(words) < 2 or any(c in w for w in words for c in "*?[$"):
        return
    folder = "/" + words[-1].strip("/")
    for name in words[:-1]:
        src = source / name
        if src.is_file() and resolve.inside(src):
            yield posixpath.join(folder, posixpath.basename(name.rstrip("/"))), src
