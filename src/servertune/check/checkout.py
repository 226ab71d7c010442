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
from servertune.check.model import Location, note

__all__ = ["in_checkout", "in_named_checkout"]


def in_checkout(config: Path, workdir: str, *, by_name: bool = False) -> FindConfig:
    """Finds a file the command line of `config` (a unit or a supervisord config) names in the
    repository that holds `config`: a path under `workdir` (the program's working directory, as
    written) or relative to it is that path from the checkout's root, looked for in the
    config's folder and the folders above it up to the tree check reads; else as any command
    line's (`commands.beside`); else by the longest tail of the path the repository holds
    (`_by_tail`); with `by_name` (a unit's own command line), else a config by its file name
    alone (`_by_name`)."""
    fallback = beside(config)
    as_written = _as_written(config, workdir, fallback)

    def find(wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        found = as_written(wanted, at)
        if found is None and "\n" not in wanted and len(wanted) <= 4096:
            found = _by_tail(config, wanted, at, fallback)
            if found is None and by_name:
                found = _by_name(config, wanted, at)
        return found

    return find


def _levels(config: Path) -> int:
    """How many folders the tree check reads holds above `config`'s own: asked at every
    lookup of every program's command, so worked out once per run and config (`memo`)."""
    from servertune.check import memo
    from servertune.check.resolve import root

    key = (root(), config)
    return memo.recall(memo.run_table("checkout levels"), key, lambda: _count_levels(config))


def _count_levels(config: Path) -> int:
    """`_levels`, worked out."""
    from servertune.check.resolve import within_default

    with within_default(config) as root:
        folder = config.parent.absolute().resolve()
        return len(folder.relative_to(root).parts) if folder.is_relative_to(root) else 0


def _by_tail(
    config: Path, wanted: str, at: Location | None, fallback: FindConfig
) -> ConfigFile | None:
    """A path of the deployed host the repository does not hold as written
    (`/webapps/site/bin/start`, `{working_dir}/start.sh` with a placeholder folder): the
    longest tail of it that names a file of the repository (`bin/start` at the checkout's
    root), nearest folder first; a bare file name only in `config`'s own folder (the script a
    unit ships beside itself), since any folder above may hold an unrelated one."""
    parts = [p for p in PurePosixPath(wanted).parts if p != "/"]
    if ".." in parts or len(parts) < 2:
        return None
    levels = _levels(config)
    for start in range(1, len(parts)):
        tail = "/".join(parts[start:])
        for up in range(levels + 1 if start < len(parts) - 1 else 1):
            found = fallback("../" * up + tail, at)
            if found is not None:
                return found
    return None


#: The file name endings of the configs a unit's server may be matched to by name alone (not a
#: program or a script: `/usr/local/bin/start` is no config, and a name is weak evidence).
_CONFIG_SUFFIXES = (".ini", ".conf", ".cfg", ".toml", ".yaml", ".yml", ".json", ".xml")


def _by_name(config: Path, wanted: str, at: Location | None) -> ConfigFile | None:
    """A config a host's unit names by a deployed path no file here installs
    (`uwsgi --ini /srv/aplus/uwsgi-aplus-web.ini`, the repository's doc/uwsgi-aplus-web.ini,
    copied there by hand): the repository's only file of that name, said in a
    `matched-by-name` note; None for any other name, or one two files have."""
    from servertune.check.resolve import root
    from servertune.check.source import read_text
    from servertune.check.tree_tails import unique_by_name

    if not wanted.startswith("/") or not wanted.endswith(_CONFIG_SUFFIXES):
        return None
    found = unique_by_name(wanted, config)
    if found is None or found.resolve() == config.resolve():
        return None
    try:
        text = read_text(found)
    except OSError:
        return None
    top = root()
    whole = found.absolute().resolve()
    shown = whole.relative_to(top) if top is not None and whole.is_relative_to(top) else found
    note(
        "matched-by-name",
        at or Location(config, 1),
        f"config matched by name: {wanted} is {shown.as_posix()}, the repository's only file "
        "of that name; no file here installs it there, so the match is by its name alone",
    )
    return ConfigFile(text, found, 1)


def _as_written(config: Path, workdir: str, fallback: FindConfig) -> FindConfig:
    """`in_checkout`'s lookup of the path as written (or relative to `workdir`)."""

    def find(wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        relative = wanted
        base = PurePosixPath(workdir) if workdir.startswith("/") else None
        if wanted.startswith("/"):
            if base is None or not PurePosixPath(wanted).is_relative_to(base):
                return fallback(wanted, at)
            relative = PurePosixPath(wanted).relative_to(base).as_posix()
        if "\n" in relative or len(relative) > 4096 or ".." in PurePosixPath(relative).parts:
            return fallback(wanted, at)
        for up in range(_levels(config) + 1):  # the config's folder first, then each one above it
            found = fallback("../" * up + relative, at)
            if found is not None:
                return found
        return fallback(wanted, at)

    return find


def in_named_checkout(config: Path) -> FindConfig:
    """Finds an absolute path a program of `config` names through a folder named for the
    repository (`/data/spug/spug_api/tools/start-api.sh` in `spug`, where the image's
    entrypoint runs `git clone .../spug.git /data/spug`, or a checkout `git clone` names for
    the repository): the path below that folder is the repository's file. Only a folder of the
    repository's very name (`repository_names`) is that evidence, and only the path from the
    repository's root is looked for; None otherwise."""
    from servertune.check.repository_names import repository_names
    from servertune.check.resolve import within_default

    def find(wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        if not wanted.startswith("/") or "\n" in wanted or len(wanted) > 4096:
            return None
        parts = PurePosixPath(wanted).parts[1:]
        with within_default(config) as root:
            names = {n.lower() for n in repository_names(root)}
        named = [i for i, part in enumerate(parts[:-1]) if part.lower() in names]
        if not named or ".." in parts:
            return None
        # From the repository's root, as the run names its files (relative to `config`).
        return beside(config)("../" * _levels(config) + "/".join(parts[named[-1] + 1 :]), at)

    return find
