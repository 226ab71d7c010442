"""Upstart jobs (`/etc/init/uwsgi.conf`): what the job's main process runs, and how it stops.

init(5) (http://manpages.ubuntu.com/manpages/xenial/man5/init.5.html) and the Upstart
Cookbook (https://upstart.ubuntu.com/cookbook/, "exec" and "script"): a job's main process is
its `exec COMMAND [ARG]...` stanza, or the lines between `script` and `end script`, which
Upstart runs with `/bin/sh -e`; `env KEY=VALUE` sets a variable for it, `chdir DIR` its working
directory. Upstart stops the job with `kill signal` (SIGTERM) and waits `kill timeout` (5 s)
before SIGKILL, sending both to the job's process group, so a server a `script` block starts
without `exec` is stopped with it.

The job is read as the shell script its main process is: `exec` kept as a shell line (`exec
uwsgi --emperor /etc/uwsgi`), the `script` block's lines as written, `env` as `export` and
`chdir` as `cd`, every other stanza (`start on`, `respawn`, `pre-start script`) a blank line,
so each line keeps its number (`scripts.read_script`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from servertune.check.checkout import in_checkout
from servertune.check.model import AppServer, Location, NothingToCheck, Setting

__all__ = ["looks_like_upstart", "read_upstart"]

#: init(5): `kill timeout INTERVAL`, 5 seconds when a job leaves it out.
DEFAULT_KILL_TIMEOUT_S = 5.0

#: Stanzas only an Upstart job writes: one beside a main process tells the job.
_STANZA = re.compile(
    r"^[ \t]*(?:start[ \t]+on|stop[ \t]+on|respawn|kill[ \t]+timeout|kill[ \t]+signal"
    r"|expect[ \t]+(?:fork|daemon|stop)|normal[ \t]+exit|console[ \t]+(?:log|output|none)"
    r"|pre-start|post-start|pre-stop|post-stop)\b",
    re.M,
)
_MAIN = re.compile(r"^[ \t]*(?:exec[ \t]+\S|script[ \t]*(?:#.*)?$)", re.M)
_BLOCK_OPEN = re.compile(r"^[ \t]*(?:(?:pre|post)-(?:start|stop)[ \t]+)?script[ \t]*(?:#.*)?$")
_BLOCK_END = re.compile(r"^[ \t]*end[ \t]+script[ \t]*(?:#.*)?$")
_CHDIR = re.compile(r"^[ \t]*chdir[ \t]+(\S+)", re.M)
_KILL_TIMEOUT = re.compile(r"^[ \t]*kill[ \t]+timeout[ \t]+(\d+)[ \t]*(?:#.*)?$")


def looks_like_upstart(path: Path, text: str) -> bool:
    """A `.conf` (or `.override`) job file, as init(5) names them, with a main process (`exec`
    or `script`) and a stanza only Upstart writes (`start on`, `respawn`, `kill timeout`)."""
    if path.suffix not in (".conf", ".override") or re.search(r"^[ \t]*\[\w", text, re.M):
        return False  # an ini section: supervisord's or uWSGI's, not a job
    return bool(_MAIN.search(text) and _STANZA.search(text))


def _as_script(text: str) -> tuple[str, int | None]:
    """The job's main process as a shell script on the job's own lines, and the line of that
    process (its first `exec` or main `script`)."""
    out: list[str] = []
    block: str | None = None  # "main" inside the main `script`, "other" inside another
    main: int | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if block is not None:
            ended = _BLOCK_END.match(line) is not None
            out.append("" if ended or block == "other" else line)
            block = None if ended else block
            continue
        words = line.split(None, 1)
        first = words[0] if words else ""
        if _BLOCK_OPEN.match(line):
            block = "main" if first == "script" else "other"
            main = number if block == "main" and main is None else main
            out.append("")
        elif first == "exec":
            main = number if main is None else main
            out.append(line)
        elif first == "env" and len(words) == 2:
            out.append(f"export {words[1]}")
        elif first == "chdir" and len(words) == 2:
            out.append(f"cd {words[1]}")
        else:
            out.append("")
    return "\n".join(out) + "\n", main


def read_upstart(path: Path, text: str, env: Mapping[str, str] | None = None) -> AppServer:
    """The app server the job's main process starts, with Upstart's stop wait."""
    from servertune.check.scripts import read_script

    script, main = _as_script(text)
    if main is None:
        raise NothingToCheck(f"{path}: no `exec` or `script` stanza: the job runs nothing")
    # A file the job names on the host (`--ini /srv/app/deploy/uwsgi.ini`) is looked for in
    # the checkout holding the job, as a systemd unit's (`checkout.in_checkout`).
    chdir = _CHDIR.findall(text)
    app = read_script(
        path, script, env, find_config=in_checkout(path, chdir[-1] if chdir else "", by_name=True)
    )
    at = Location(path, main)
    stop = _kill_timeout(path, text) or Setting(DEFAULT_KILL_TIMEOUT_S, at, default=True)
    # The signal and the SIGKILL reach the job's whole process group: a server the `script`
    # block runs without `exec` is stopped with the shell.
    return replace(
        app,
        without_exec=None,
        manager_without_exec=None,
        stop_wait=stop,
        stop_wait_name="kill timeout",
        stop_wait_fix="kill timeout {}",
        launched_by=(at, *app.launched_by) if app.launched_by else app.launched_by,
    )


def _kill_timeout(path: Path, text: str) -> Setting[float] | None:
    """The job's `kill timeout`, at its line (the last one written counts)."""
    found: Setting[float] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if (match := _KILL_TIMEOUT.match(line)) is not None:
            found = Setting(float(match.group(1)), Location(path, number))
    return found
