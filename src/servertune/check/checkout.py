"""The repository a host's process manager runs a program from: its deployed checkout.

A systemd unit (`WorkingDirectory=/srv/app`) or a supervisord program (`directory=/home/cloo/doaj`)
kept in a repository runs in a checkout of that repository on the host. Its command line names
files by their deployed paths (`-c /home/cloo/doaj/deploy/gunicorn.conf.py`) or relative to
that directory (`-c deploy/gunicorn.conf.py`): the same path below the checkout's root is the
repository's file. The root is not written anywhere, so it is looked for from the config's own
folder up to the tree check reads, nearest first.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from servertune.check.commands import ConfigFile, FindConfig, beside
from servertune.check.model import Location

__all__ = ["in_checkout"]


def in_checkout(config: Path, workdir: str) -> FindConfig:
    """Finds a file the command line of `config` (a unit or a supervisord config) names in the
    repository that holds `config`: a path under `workdir` (the program's working directory, as
    written) or relative to it is that path from the checkout's root, looked for in the
    config's folder and the folders above it up to the tree check reads; else as any command
    line's (`commands.beside`)."""
    from servertune.check.resolve import within_default

    fallback = beside(config)

    def find(wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        relative = wanted
        base = PurePosixPath(workdir) if workdir.startswith("/") else None
        if wanted.startswith("/"):
            if base is None or not PurePosixPath(wanted).is_relative_to(base):
                return fallback(wanted, at)
            relative = PurePosixPath(wanted).relative_to(base).as_posix()
        if "\n" in relative or len(relative) > 4096 or ".." in PurePosixPath(relative).parts:
            return fallback(wanted, at)
        with within_default(config) as root:
            folder = config.parent.absolute().resolve()
            levels = len(folder.relative_to(root).parts) if folder.is_relative_to(root) else 0
        for up in range(levels + 1):  # the config's folder first, then each one above it
            found = fallback("../" * up + relative, at)
            if found is not None:
                return found
        return fallback(wanted, at)

    return find
