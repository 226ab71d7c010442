"""The Heroku nginx buildpack's config: `config/nginx.conf.erb`, an ERB template of nginx's config.

heroku-buildpack-nginx (proxy mode, its proxy.md) runs `web: bin/start-nginx CMD...`: its
`bin/start-nginx` renders `config/nginx.conf.erb` with Ruby's `erb` into `config/nginx.conf`,
starts CMD, waits for the app to touch `/tmp/app-initialized`, then runs `bin/nginx -p . -c
config/nginx.conf` in the same dyno; the app is to listen on the unix socket
`/tmp/nginx.socket`, and nginx on the dyno's `<%= ENV["PORT"] %>`. (`bin/compile` copies the
buildpack's default config to `config/nginx.conf.erb` when the app has none.)

So the file is read as the nginx config it renders to: each output tag (`<%= ENV['NGINX_WORKERS']
|| 4 %>`) is a value known only where the dyno starts, written as a template variable the
nginx reader leaves unresolved (a directive whose number it is read as if absent; a pass to
it is not followed), and said in an `unresolved-variable` note naming the tag; a code tag
(`<% if ENV['FORCE_SSL'] %>`, `<% end %>`) is left out, so both arms of a condition are read,
and said the same way. Where that reading is not nginx (an arm opening a block the other
closes) the file is left unread with one note, never an error. The front runs in the dyno
`bin/start-nginx` starts: it reaches the servers that entry's command starts (`dyno_server`),
not an image's or a compose service's server on the same socket path. A compose service that
mounts the file and renders it (an entrypoint script running `erb`, mitodl/mit-learn) runs it
instead: a tag that writes one variable (`<%= ENV["X"] || "d" %>`) is the template variable X,
which that service's environment fills as it fills an envsubst template's.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from servertune.check.commands import START_NGINX
from servertune.check.model import AppServer, Location, NginxConfig, NotSupported, Setting, note

__all__ = ["as_nginx", "dyno_server", "is_buildpack_config", "read_buildpack_nginx"]


#: The folders the buildpack (and its older forks) take the config from.
_BUILDPACK_FOLDERS = frozenset({"config", "conf"})
#: An ERB tag: `<%= expr %>` (output), `<% code %>`, `<%# comment %>`, with `-%>` trimming.
_TAG = re.compile(r"<%(?P<kind>[=#-]?)(?P<body>.*?)-?%>", re.S)
#: An output tag that writes one environment variable: `ENV["X"]`, `ENV['X']`, `ENV.fetch("X",
#: "d")`, with or without a `|| default` (a default is the dyno's business: not taken).
_ENV = re.compile(
    r"""\s*ENV(?:\[\s*(?P<q>['"])(?P<name>\w+)(?P=q)\s*\]"""
    r"""|\.fetch\(\s*(?P<f>['"])(?P<fetched>\w+)(?P=f)[^)]*\))\s*(?:\|\|.*)?""",
    re.S,
)
#: A Procfile entry (or a script line) that runs the buildpack's wrapper as its command.
_STARTS_NGINX = re.compile(
    r"(?:\A|[\s:;&|])(?:\S*/)?(?:"
    + "|".join(map(re.escape, sorted(START_NGINX, key=len, reverse=True)))
    + r")(?:\s|\Z)"
)


def is_buildpack_config(path: Path) -> bool:
    """Named as the buildpack's config: its documented `config/nginx.conf.erb` (the older forks'
    `conf/nginx.conf.erb`), or another nginx `*.conf.erb` there (its samples'). An nginx ERB
    template elsewhere (a Chef cookbook's or Puppet module's `templates/nginx.conf.erb`) is
    rendered by its tool with values of its own: still a template the walk skips."""
    name = path.name.lower()
    return (
        name.endswith(".conf.erb")
        and "nginx" in name
        and path.parent.name.lower() in _BUILDPACK_FOLDERS
    )


def as_nginx(text: str) -> tuple[str, tuple[tuple[int, str, str], ...]]:
    """`text` with its ERB tags as the nginx reader reads them, on the same lines: an output tag
    as the template variable `${ERB_n}`, a code or comment tag as blanks; and each tag (its
    line, its kind: "output" or "code", its text), for the notes."""
    tags: list[tuple[int, str, str]] = []

    def one(match: re.Match[str]) -> str:
        line = text.count("\n", 0, match.start()) + 1
        newlines = "\n" * match[0].count("\n")
        written = " ".join(match[0].split())
        if match["kind"] == "#":
            return newlines
        if match["kind"] == "=":
            tags.append((line, "output", written))
            variable = _ENV.fullmatch(match["body"])
            # `<%= ENV["X"] %>` is the variable X, as envsubst's `${X}`: the environment
            # of a container that renders the file fills it (`chain.environment_of_front`).
            name = variable["name"] or variable["fetched"] if variable else f"ERB_{len(tags)}"
            return f"${{{name}}}" + newlines
        tags.append((line, "code", written))
        return newlines

    return _TAG.sub(one, text.replace("<%%", "\ue002")).replace("\ue002", "<%"), tuple(tags)


def read_buildpack_nginx(path: Path, text: str) -> NginxConfig:
    """The buildpack's config as the nginx it renders to (see the module's docstring); a
    reading that is not nginx is NotSupported (one coverage note)."""
    from servertune.check.model import CheckInputError, collect_notes
    from servertune.check.nginx import read_nginx_text

    rendered, tags = as_nginx(text)
    tagged = {line for line, _, _ in tags}
    try:
        with collect_notes() as said:
            config = read_nginx_text(path, rendered)
    except CheckInputError as why:
        raise NotSupported(
            f"{path}: the Heroku nginx buildpack's ERB template of nginx's config, rendered "
            "where the dyno starts; read with its tags as unknown values and every arm of its "
            f"conditions, it is not nginx ({re.sub(r'^.*?:[0-9]+: ', '', str(why))}), so it "
            "was not read"
        ) from None
    for one in said:
        # The tag's own note below says it; the reader's placeholder note would say it twice.
        if not (one.kind == "unresolved-variable" and one.at.line in tagged):
            note(one.kind, one.at, one.message)
    for line, kind, written in tags:
        at = Location(path, line)
        what = (
            "a value the buildpack's `erb` renders where the dyno starts (the dyno's "
            "environment), not in these files: read as unknown (a number it sets as if the "
            "directive were absent, an address it names not followed)"
            if kind == "output"
            else "Ruby code the buildpack's `erb` runs where the dyno starts: left out, so "
            "every arm of a condition was read"
        )
        note("unresolved-variable", at, f"{written}: {what}")  # one note for each tag's text
    return config


def dyno_server(front: NginxConfig, app: AppServer) -> bool | None:
    """Whether the buildpack's nginx `front` runs beside `app`: True when a Procfile entry
    `bin/start-nginx CMD` started it (nginx and CMD share the dyno), or it was read alone
    (no launch says where it runs); False for a server another launch starts (an image's CMD,
    a compose service: no buildpack nginx runs there). None when `front` is not the
    buildpack's config."""
    if not is_buildpack_config((front.files or (front.file,))[0]):
        return None
    if not app.launched_by and app.container is None:
        return True
    return any(map(_starts_nginx, _lines_of(app)))


def _lines_of(app: AppServer) -> set[Location]:
    """The lines the app's launch goes through and its settings were read at (a Procfile entry
    that names the server itself is where its command line was read)."""
    found = set(app.launched_by)
    for one in dataclasses.fields(app):
        value = getattr(app, one.name)
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, Setting):
                found.add(item.at)
    return found


def _starts_nginx(at: Location) -> bool:
    from servertune.check.model import CheckInputError
    from servertune.check.source import read_text

    try:
        lines = read_text(at.file).splitlines()
    except (OSError, CheckInputError):
        return False
    return 0 < at.line <= len(lines) and bool(_STARTS_NGINX.search(lines[at.line - 1]))
