"""systemd service units that start an app server (`gunicorn.service`): what `ExecStart=` runs,
with the unit's `Environment=`, and how systemd stops it.

systemd stops a service with `KillSignal=` (SIGTERM by default) and waits `TimeoutStopSec=`
(DefaultTimeoutStopSec, 90 s, by default) before SIGKILL: the stop wait and signal the shutdown
rules compare with the server's graceful timeout, as they do for supervisord's. The unit is read
as systemd.syntax(7) and systemd.service(5) write it: `[Section]` headers, `Key=value` lines,
`#` / `;` comments, a backslash continuing a line; `ExecStart=`'s command is split as systemd
splits it (shell-like quoting) after its `@-:+!` prefixes, and read like any command line
(`commands.run_words`): a server, or a script beside the unit that starts one.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from servertune.check.checkout import in_checkout
from servertune.check.commands import Word, written_as_script
from servertune.check.model import (
    SERVERS_READ,
    AppServer,
    CheckInputError,
    Location,
    NothingToCheck,
    Setting,
    note,
)
from servertune.check.systemd_sockets import activated_by_socket
from servertune.check.systemd_syntax import unit_entries
from servertune.check.working_dirs import started_in

__all__ = [
    "DEFAULT_TIMEOUT_STOP_S",
    "environment_files",
    "looks_like_systemd",
    "read_systemd",
]

#: systemd-system.conf(5): DefaultTimeoutStopSec=90s, what TimeoutStopSec= is when a unit
#: leaves it out.
DEFAULT_TIMEOUT_STOP_S = 90.0

#: systemd.time(7): the time span units, in seconds (a bare number is seconds).
_UNITS = {
    "us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3,
    "s": 1.0, "sec": 1.0, "second": 1.0, "seconds": 1.0,
    "m": 60.0, "min": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hour": 3600.0, "hours": 3600.0,
    "d": 86400.0, "day": 86400.0, "days": 86400.0,
}  # fmt: skip
_SPAN_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)")

#: Signals that stop uWSGI 2.0 at once (SIGINT, SIGQUIT): with them, SIGTERM's reload never
#: happens (uWSGI's systemd page recommends KillSignal=SIGQUIT).
_UWSGI_STOPS = frozenset({"INT", "QUIT", "2", "3"})


#: A unit file's section header (`[Unit]`, `[Service]`, `[Install]`).
_SECTION_HEADER = re.compile(r"^[ \t]*\[[A-Za-z]+\][ \t]*$", re.M)


def looks_like_systemd(path: Path, text: str) -> bool:
    """A `.service` unit (but a script so named, with a shebang and no section: a runit
    service's `run` kept as `web.service`), or any file with a `[Service]` section holding
    `ExecStart=`. A script by its form (`written_as_script`) is a script whatever sections its
    text holds: a heredoc that writes a unit (`cat << EOF > /etc/systemd/system/x.service`, an
    EC2 user-data script, pythonitalia/pycon) is the unit's text, not the file's own."""
    if path.suffix == ".service":
        return not (text.startswith("#!") and not _SECTION_HEADER.search(text))
    if written_as_script(path, text):
        return False
    return bool(re.search(r"^\[Service\]", text, re.M)) and bool(
        re.search(r"^\s*ExecStart\s*=", text, re.M)
    )


def _span(value: str, at: Location, key: str) -> float:
    """A systemd time span in seconds (`90`, `90s`, `5min 30s`, `infinity`)."""
    text = value.strip().lower()
    if text == "infinity":
        return math.inf
    parts = _SPAN_PART.findall(text)
    if not parts or re.sub(r"\s+", "", "".join(n + u for n, u in parts)) != re.sub(
        r"\s+", "", text
    ):
        raise CheckInputError(f"{at}: {key}={value[:40]!r} is not a time span (e.g. 90s, 5min)")
    total = 0.0
    for number, unit in parts:
        if unit not in _UNITS and unit != "":
            raise CheckInputError(f"{at}: {key}={value[:40]!r}: unknown time unit {unit!r}")
        total += float(number) * _UNITS.get(unit, 1.0)
    return total


def _load_environment_file(
    unit: Path,
    workdir: str,
    value: str,
    at: Location,
    environment: dict[str, str],
    env_at: dict[str, Location],
) -> None:
    """An `EnvironmentFile=` (`-` before it: no error when missing) read into `environment`
    when the repository holds it (under `WorkingDirectory=`, as a config is found); else one
    `env-file-not-found` note: the unit is read without its variables."""
    from servertune.check.envfile import read_env_file

    name = value.removeprefix("-")
    found = in_checkout(unit, workdir)(name, at)
    if found is None:
        note(
            "env-file-not-found",
            at,
            f"EnvironmentFile={name}: not here (a host's own file?); the unit was read without "
            "its variables",
        )
        return
    values, where = read_env_file(found.file)
    environment.update(values)
    env_at.update(where)


def environment_files(path: Path, text: str) -> tuple[Path, ...]:
    """The `EnvironmentFile=`s of the unit the repository holds, for the launch graph."""
    service = [(k, v) for section, k, v, _ in unit_entries(path, text) if section == "Service"]
    workdir = next((v.lstrip("-") for k, v in reversed(service) if k == "WorkingDirectory"), "")
    found = [
        in_checkout(path, workdir)(v.removeprefix("-"), None)
        for k, v in service
        if k == "EnvironmentFile" and v
    ]
    return tuple(f.file for f in found if f is not None)


#: systemd.service(5), "Command lines": `$NAME` alone as a word, and `${NAME}` anywhere.
_LONE_VARIABLE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_BRACED_VARIABLE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _expanded(
    words: list[Word], environment: Mapping[str, str], env_at: Mapping[str, Location]
) -> list[Word]:
    """ExecStart='s words with systemd's own expansion from `Environment=` (and the
    `EnvironmentFile=`s here), as systemd.service(5) says: `$NAME` as a word of its own is the
    value split at whitespace (zero or more arguments: StackStorm's st2api unit,
    `gunicorn st2api.wsgi:application $DAEMON_ARGS`), `${NAME}` is the value as one argument
    (inside a word too), `$$` a literal `$`. A name set nowhere here (a host's own file) stays
    as `${NAME}`, the form the command reader leaves out as an unresolved variable. A word
    that is a variable alone is at the line that sets it: a flag found there is written
    there, not on ExecStart='s line."""
    out: list[Word] = []

    def value(found: re.Match[str]) -> str:
        name = found.group(1)
        if name is None:
            return "$"
        return environment.get(name, found.group(0))

    for index, word in enumerate(words):
        lone = _LONE_VARIABLE.fullmatch(word.text) if index else None
        braced = _BRACED_VARIABLE.fullmatch(word.text) if index else None
        if lone is not None:
            at = env_at.get(lone[1], word.at)
            texts = (
                environment[lone[1]].split() if lone[1] in environment else ["${" + lone[1] + "}"]
            )
            out += [Word(text, at) for text in texts]
            continue
        if braced is not None and braced[1] in environment:
            out.append(Word(environment[braced[1]], env_at.get(braced[1], word.at)))
            continue
        out.append(Word(_BRACED_VARIABLE.sub(value, word.text), word.at) if index else word)
    return out


def _located(path: Path, text: str, start: int, words: list[str]) -> list[Word]:
    """ExecStart='s words, each at the line it is written on."""
    lines = _word_lines(text, start, words)
    return [Word(w, Location(path, n)) for w, n in zip(words, lines, strict=True)]


def _word_lines(text: str, start: int, words: list[str]) -> list[int]:
    """The line each word of a command continued over several lines (`\\` at a line's end)
    is written on, for a finding to point at its flag's own line: each word is looked for
    from where the one before it ended, on to the next line while the line is continued; a
    word not found as written (quoted) stays on the line of the one before."""
    lines = text.splitlines()[start - 1 :]
    row, column, out = 0, 0, []
    for word in words:
        probe_row, probe_column = row, column
        while probe_row < len(lines):
            found = lines[probe_row].find(word, probe_column)
            if found >= 0:
                row, column = probe_row, found + len(word)
                break
            if not lines[probe_row].rstrip().endswith("\\"):
                break  # the command ends on this line
            probe_row, probe_column = probe_row + 1, 0
        out.append(start + row)
    return out


def read_systemd(path: Path, text: str, env: Mapping[str, str] | None = None) -> AppServer:
    """The app server the unit's `ExecStart=` starts, with systemd's stop wait and signal."""
    from servertune.check.scripts import run_words

    service = [(k, v, n) for section, k, v, n in unit_entries(path, text) if section == "Service"]
    environment = dict(env or {})
    env_at: dict[str, Location] = {}
    start: tuple[str, int] | None = None
    stop: Setting[float] | None = None
    signal: Setting[str] | None = None
    workdir = ""
    kill_mode = "control-group"
    files: list[tuple[str, Location]] = []
    sockets: list[str] = []
    for key, value, number in service:
        at = Location(path, number)
        if key == "Environment":
            for word in shlex.split(value):
                name, equals, assigned = word.partition("=")
                if equals:
                    environment[name], env_at[name] = assigned, at
        elif key == "ExecStart":
            # An empty ExecStart= resets the list (a drop-in's override); the last one runs.
            start = (value, number) if value else None
        elif key in ("TimeoutStopSec", "TimeoutSec"):
            stop = Setting(_span(value, at, key), at)
        elif key == "WorkingDirectory":
            workdir = value.lstrip("-")  # `-/srv/app`: not an error when missing
        elif key == "KillSignal":
            signal = Setting(value.upper().removeprefix("SIG"), at)
        elif key == "EnvironmentFile" and value:
            files.append((value, at))
        elif key == "Sockets":
            sockets.append(value)
        elif key == "KillMode":
            kill_mode = value
    # systemd.exec(5): the files' settings override Environment='s, later files earlier ones.
    for value, at in files:
        _load_environment_file(path, workdir, value, at, environment, env_at)
    if start is None:
        raise NothingToCheck(f"{path}: no ExecStart= in its [Service] section: nothing to check")
    command, number = start
    at = Location(path, number)
    try:
        words = shlex.split(command.lstrip("@-:+!"))
    except ValueError:
        raise CheckInputError(f"{at}: ExecStart= cannot be split (an unclosed quote)") from None
    app = run_words(
        path,
        _expanded(_located(path, text, number, words), environment, env_at),
        environment,
        env_at,
        find_config=in_checkout(path, workdir, by_name=True),
    )
    if app is None:
        raise _started_none(at, words)
    if stop is None:
        stop = Setting(DEFAULT_TIMEOUT_STOP_S, at, default=True)
    if kill_mode == "control-group":
        # systemd.kill(5): the stop signal goes to every process of the unit's cgroup, so a
        # script's child server gets SIGTERM too, `exec` or not (as on a Heroku dyno).
        app = replace(app, without_exec=None, manager_without_exec=None)
    app = replace(
        started_in(activated_by_socket(path, sockets, app), workdir),
        stop_wait=stop,
        stop_wait_name="TimeoutStopSec",
        stop_wait_fix="TimeoutStopSec={}",
        launched_by=(at, *app.launched_by),
    )
    if signal is not None:
        app = replace(app, stop_signal=signal, stop_signal_fix="KillSignal=SIGTERM")
        if app.kind == "uwsgi" and app.die_on_term is None and signal.value in _UWSGI_STOPS:
            app = replace(app, die_on_term=Setting(True, signal.at))
    return app


def _started_none(at: Location, words: list[str]) -> Exception:
    """What to say of an ExecStart= that starts no server check reads: a launcher of a server
    its own code starts (`duffy -c FILE serve`) is not followed; anything else starts none."""
    from servertune.check.unfollowed import nothing_started

    launched = nothing_started([[Word(w, at) for w in words]])
    if launched is not None:
        return launched
    return NothingToCheck(
        f"{at}: ExecStart= starts no server check reads ({SERVERS_READ}): nothing to check"
    )
