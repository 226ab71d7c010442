"""How each app server spells a setting (`workers`, `processes`, `--workers`), so a message names
it as the user's file does and a fix is a line that file takes; and how a number is shown.
"""

from __future__ import annotations

from collections.abc import Callable

from servertune.check.model import AppServer, Location, Setting


def figure(value: float) -> str:
    """A number as a message shows it: `3.0` is `3`, `0.5` stays `0.5`."""
    return f"{value:g}"


def as_shown(setting: Setting[float] | Setting[int], unit: str = "") -> str:
    """`2 s (default)`: the value, its unit, and whether the file left it at the default."""
    return f"{figure(setting.value)}{unit}" + (" (default)" if setting.default else "")


#: How each app server spells a setting, for messages and fixes. A name starting with `--` is a
#: command-line flag (`--flag VALUE`), any other a line of its config file (`name = VALUE`).
SPELLING: dict[str, dict[str, str]] = {
    "gunicorn": {
        "workers": "workers",
        "threads": "threads",
        "graceful": "graceful_timeout",
        "keepalive": "keepalive",
        "timeout": "timeout",
        "backlog": "backlog",
        "max_requests": "max_requests",
        "jitter": "max_requests_jitter",
    },
    "uwsgi": {
        "workers": "processes",
        "threads": "threads",
        "timeout": "harakiri",
        "backlog": "listen",
        "max_requests": "max-requests",
        "jitter": "max-requests-delta",
    },
    "uvicorn": {
        "workers": "--workers",
        "keepalive": "--timeout-keep-alive",
        "backlog": "--backlog",
        "max_requests": "--limit-max-requests",
        "jitter": "--limit-max-requests-jitter",
        "graceful": "--timeout-graceful-shutdown",
        "concurrency": "--limit-concurrency",
    },
    # NGINX Unit's JSON: an application's and a listener's own keys, the http settings' path
    # (https://unit.nginx.org/configuration/).
    "unit": {
        "workers": "processes",
        "threads": "threads",
        "keepalive": "settings.http.idle_timeout",
        "backlog": "backlog",
    },
    "granian": {
        "workers": "--workers",
        "threads": "--blocking-threads",
        "backlog": "--backlog",
        "graceful": "--workers-kill-timeout",
        "concurrency": "--backpressure",
    },
    # Hypercorn's TOML keys (its `-c` file; the command line's flags are in _FLAGS). No
    # recycling: its `--max-requests-jitter` sets the jitter to --max-requests' value.
    "hypercorn": {
        "workers": "workers",
        "keepalive": "keep_alive_timeout",
        "graceful": "graceful_timeout",
        "backlog": "backlog",
    },
    # Daphne has its command line only (daphne/cli.py).
    "daphne": {"timeout": "--http-timeout"},
    # waitress's settings as a PasteDeploy `[server:main]` or `serve(app, **kw)` names them
    # (waitress/adjustments.py; the command line's flags are in _FLAGS): one process, so no
    # worker count.
    "waitress": {
        "threads": "threads",
        "keepalive": "channel_timeout",
        "backlog": "backlog",
    },
}


#: gunicorn's, uWSGI's and Hypercorn's command-line flags for the same settings, for an app server started
#: by a command line (a Dockerfile's CMD, a compose command, a Procfile, a manifest's args).
_FLAGS: dict[str, dict[str, str]] = {
    "gunicorn": {
        "workers": "--workers",
        "threads": "--threads",
        "keepalive": "--keep-alive",
        "timeout": "--timeout",
        "backlog": "--backlog",
        "max_requests": "--max-requests",
        "jitter": "--max-requests-jitter",
        "graceful": "--graceful-timeout",
    },
    "uwsgi": {
        "workers": "--processes",
        "threads": "--threads",
        "timeout": "--harakiri",
        "backlog": "--listen",
        "max_requests": "--max-requests",
        "jitter": "--max-requests-delta",
    },
    "hypercorn": {
        "workers": "--workers",
        "keepalive": "--keep-alive",
        "graceful": "--graceful-timeout",
        "backlog": "--backlog",
    },
    # waitress-serve's options (waitress/runner.py).
    "waitress": {
        "threads": "--threads",
        "keepalive": "--channel-timeout",
        "backlog": "--backlog",
    },
}


#: Where each concept's setting lives on an AppServer, to find the file it was written in.
_WHERE: dict[str, Callable[[AppServer], Setting[float] | Setting[int] | None]] = {
    "workers": lambda a: a.workers,
    "threads": lambda a: a.threads,
    "keepalive": lambda a: a.keepalive,
    "timeout": lambda a: a.request_timeout,
    "graceful": lambda a: a.graceful_timeout,
    "backlog": lambda a: a.backlog,
    "max_requests": lambda a: a.max_requests,
    "jitter": lambda a: a.max_requests_jitter,
}


#: A setting whose fix is written beside another one's line (the finding points there).
_WRITTEN_BESIDE = {"jitter": "max_requests"}


def _in_config_file(app: AppServer, concept: str) -> bool:
    """The setting was written in a config file (a gunicorn `.py`, a uWSGI `.ini`), even when a
    command line (a Dockerfile's CMD, `gunicorn -c`, `uwsgi --ini`) started the server: its fix
    is a line of that file, in that file's language."""
    setting = _WHERE[concept](app) if concept in _WHERE else None
    if (setting is None or setting.default) and concept in _WRITTEN_BESIDE:
        # `max-requests-delta` unset: its line goes beside `max-requests`, where that is.
        setting = _WHERE[_WRITTEN_BESIDE[concept]](app)
    if setting is None or setting.default:
        return False
    # The file `-c` / `--ini` names is a config file whatever its suffix (a uWSGI `.conf`).
    config = app.config_file.file if app.config_file is not None else None
    return setting.at.file == config or setting.at.file.suffix in (".py", ".ini")


def spelled(app: AppServer, concept: str) -> str:
    """What `app`'s server calls a setting where it is written: `workers`, `processes`,
    `--workers`, ..."""
    if (
        app.command_line
        and concept in _FLAGS.get(app.kind, {})
        and not _in_config_file(app, concept)
    ):
        return _FLAGS[app.kind][concept]
    return SPELLING[app.kind][concept]


def spelled_or(app: AppServer, concept: str, otherwise: str) -> str:
    """`spelled`, or `otherwise` for a setting the server has no spelling of here (an error
    line naming a value every server's reader refuses)."""
    return spelled(app, concept) if concept in SPELLING.get(app.kind, {}) else otherwise


#: uWSGI's environment variables for the worker layout (UWSGI_<OPTION>, read as options).
_UWSGI_LAYOUT_ENV = {"workers": "UWSGI_PROCESSES", "threads": "UWSGI_THREADS"}


def assignment(app: AppServer, concept: str, value: object) -> str:
    """The fix as the server's file spells it: `keepalive = 65` or `--timeout-keep-alive 65`;
    for a uWSGI whose processes an environment variable sets (`ENV UWSGI_PROCESSES 16`, an
    image's documented knob), that variable, as the line that sets it writes it."""
    if app.kind == "uwsgi" and app.workers_env and concept in _UWSGI_LAYOUT_ENV:
        variable = app.workers_env if concept == "workers" else _UWSGI_LAYOUT_ENV[concept]
        from servertune.check.commands import is_dockerfile

        if is_dockerfile(app.workers.at.file):
            return f"ENV {variable} {value}"
        return f"{variable}={value}"
    name = spelled(app, concept)
    if app.kind == "unit":
        return _json_member(name, value)
    return f"{name} {value}" if name.startswith("--") else f"{name} = {value}"


def _json_member(path: str, value: object) -> str:
    """A setting of a JSON config by its path, as the file writes it: `settings.http.idle_timeout`
    set to 65 is `"settings": {"http": {"idle_timeout": 65}}`."""
    *parents, leaf = path.split(".")
    text = f'"{leaf}": {value}'
    for parent in reversed(parents):
        text = f'"{parent}": {{{text}}}'
    return text


def written_where(app: AppServer, concept: str, value: object) -> tuple[Location, str, str]:
    """Where a fix of `concept` goes, its name there and the fix: its own line; or, for a
    setting left at its default by a server whose command names a config file (`gunicorn -c
    gunicorn.conf.py`, `uwsgi --ini`), that file at its first line, in its words, since the
    project keeps the server's other settings there."""
    setting = _WHERE[concept](app) if concept in _WHERE else None
    if (
        app.config_file is not None
        and (setting is None or setting.default)
        and concept in SPELLING.get(app.kind, {})
    ):
        name = SPELLING[app.kind][concept]
        fix = _json_member(name, value) if app.kind == "unit" else f"{name} = {value}"
        return app.config_file, name, fix
    at = setting.at if setting is not None else Location(app.file)
    return at, spelled(app, concept), assignment(app, concept, value)
