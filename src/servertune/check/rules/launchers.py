"""Command lines and config lines that start a server: what the server's own parser does with
them (an option given twice, a shell's expansion, a number cut at its first non-digit)."""

from __future__ import annotations

import dataclasses
import json
import posixpath
import shlex
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation

from servertune.check.commands import is_dockerfile
from servertune.check.deploy_installs import installed_as
from servertune.check.development import launch_line, production_evidence, production_launch
from servertune.check.entry_names import entry_words
from servertune.check.front_names import line_named_for_development
from servertune.check.model import AppServer, Finding, Location, Severity
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule
from servertune.check.rules.spelling import spelled

_ARGPARSE_STORE = "https://docs.python.org/3/library/argparse.html#action"


@check_rule(
    "option-given-twice",
    Severity.warning,
    "a single-value option is given twice on the command line: the last one wins",
    "gunicorn's command line is argparse's `store` action (each occurrence replaces the value: "
    f"{_ARGPARSE_STORE}); uvicorn's and granian's are click options "
    "(https://click.palletsprojects.com/en/stable/options/), uWSGI keeps the last value of a "
    "scalar option (https://uwsgi-docs.readthedocs.io/en/latest/Configuration.html)",
    kind="fault",
)
def option_given_twice(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        for first, last in app.repeated_options:
            yield rule.finding(
                first.at,
                f"`{first.value}` is overridden by `{last.value}` later on the same command "
                f"line ({last.at}): {app.kind} keeps only the last, so whatever the first one "
                "was meant to set is silently ignored",
                f"keep one of them (if `{last.value}` was meant for another option, give it "
                "that option's flag)",
                (last.at,),
            )


#: What a server does with an argument holding an option and its value.
_JOINED_EFFECT = {
    "gunicorn": "so what it sets is not set: gunicorn's parser takes the whole argument for a "
    "positional one (the app to load when it comes first, which then fails to import; else "
    "ignored)",
}
_REFUSED = (
    "and its parser refuses the argument (click: `No such option`; argparse: `unrecognized "
    "arguments`; uWSGI: an unrecognized option): the server exits at start"
)


@check_rule(
    "option-and-value-in-one-argument",
    Severity.error,
    'an option and its value are one argument (`"--bind 0.0.0.0:8000"` as one exec-form '
    "item or quoted word): the server's parser never sees the option",
    "no shell splits an exec-form item (https://docs.docker.com/reference/dockerfile/#exec-form; "
    "Kubernetes `args` are passed as written: https://kubernetes.io/docs/tasks/inject-data-"
    "application/define-command-argument-container/); argparse (gunicorn, Hypercorn, Daphne) "
    "reads an argument that starts with `-` and holds a space as a positional one "
    "(Lib/argparse.py, `_parse_optional`); click (uvicorn, granian) refuses it: `No such option`",
    kind="fault",
)
def option_and_value_in_one_argument(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        for written in app.joined_options:
            option, value = written.value.split(None, 1)
            yield rule.finding(
                written.at,
                f"`{written.value}` is one argument: {app.kind} never sees the option "
                f"`{option}`, {_JOINED_EFFECT.get(app.kind, _REFUSED)}",
                f"give the option and its value their own items (`{json.dumps(option)}, "
                f"{json.dumps(value.strip())}`), or join them with `=` "
                f"(`{json.dumps(option + '=' + value.strip())}`)",
            )


_GUNICORN_PIDFILE = "https://docs.gunicorn.org/en/stable/settings.html#pidfile"


@check_rule(
    "pidfile-looks-like-port",
    Severity.warning,
    "gunicorn's `-p`/`--pid` given a bare number: it is the pidfile, not a port",
    f"gunicorn's settings, `pidfile` (`-p FILE, --pid FILE`): {_GUNICORN_PIDFILE}; "
    "`bind` (`-b ADDRESS`, a port written `HOST:PORT`, 8000 when left out)",
    kind="fault",
)
def pidfile_looks_like_port(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        written = app.numeric_pidfile
        if written is None:
            continue
        listens = ", ".join(s.value for s in app.sockets) or "its bind"
        host = next(
            (s.value.rpartition(":")[0] for s in app.sockets if not s.value.startswith("unix:")),
            "0.0.0.0",
        )
        yield rule.finding(
            written.at,
            f"`-p {written.value}` is gunicorn's pidfile, not a port: gunicorn writes its pid "
            f"to a file named {written.value} in its working directory and listens on "
            f"{listens}"
            + (
                " (it works only because 8000 is gunicorn's default port)"
                if written.value == "8000"
                else ""
            ),
            f"--bind {host}:{written.value}   (and drop `-p`, or give it a pidfile path)",
        )


_SHELL_EXPANSION = (
    "https://www.gnu.org/software/bash/manual/html_node/Shell-Parameter-Expansion.html "
    "(${parameter:offset}: substring expansion, offset an arithmetic expression); "
    "https://pubs.opengroup.org/onlinepubs/9799919799/utilities/V3_chap02.html#tag_19_06_02 "
    "(POSIX sh: ${parameter:-word} is the default)"
)


@check_rule(
    "substring-not-default",
    Severity.warning,
    "`${VAR:word}` is a substring expansion, not a default: unset, the option gets nothing",
    _SHELL_EXPANSION,
    kind="fault",
)
def substring_not_default(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        for written in app.substrings:
            name, _, word = written.value[2:-1].partition(":")
            yield rule.finding(
                written.at,
                f"`{written.value}` is bash's substring expansion (from offset `{word}`, an "
                f"arithmetic expression: 0 while no variable `{word}` is set), not a default: "
                f"with {name} unset the word is empty, and {app.kind} gets an option with no "
                "value or the next word as its value; dash (/bin/sh on Debian) stops the "
                "script with `Bad substitution`",
                f"${{{name}:-{word}}}",
            )


@check_rule(
    "exec-form-not-expanded",
    Severity.error,
    "a Dockerfile's exec-form CMD or ENTRYPOINT holds `$VAR`: no shell runs, the server gets "
    "the text as written",
    "https://docs.docker.com/reference/dockerfile/#shell-and-exec-form (the exec form does not "
    'invoke a command shell: `[ "echo", "$HOME" ]` does not substitute $HOME)',
    kind="fault",
)
def exec_form_not_expanded(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        for written in app.unexpanded:
            yield rule.finding(
                written.at,
                f"`{written.value}` is in an exec-form instruction (a JSON array): Docker runs "
                f"{app.kind} with no shell, so it gets the text `{written.value}` itself, never "
                "the variable's value (a number option given it stops the server at start)",
                "write the value, or keep a shell that expands it and hands PID 1 over: "
                '`CMD ["sh", "-c", "exec ' + app.kind + ' ..."]`',
            )


@check_rule(
    "exec-form-one-string",
    Severity.error,
    "an exec-form command (a Dockerfile's CMD or ENTRYPOINT array, a compose or Kubernetes "
    "`command:` list) is one string holding the whole command line: the container runtime runs "
    "a program of that name, which does not exist",
    "https://docs.docker.com/reference/dockerfile/#exec-form (the exec form is a JSON array of "
    "the executable and its parameters, each its own element; no shell splits them); "
    "https://kubernetes.io/docs/tasks/inject-data-application/define-command-argument-container/ "
    "(`command` is not run in a shell)",
    kind="fault",
)
def exec_form_one_string(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        written = app.one_string_exec
        if written is None:
            continue
        yield rule.finding(
            written.at,
            f"the exec form here is one string, `[{json.dumps(written.value)}]`: no shell "
            "runs it, so the container runtime looks for a program named "
            f"{written.value!r} (`exec: ... "
            "executable file not found`) and the container exits at start; check read it "
            f"split into words, a guess at what was meant ({app.kind})",
            f"give each word its own element: `{json.dumps(shlex.split(written.value))}`",
        )


@check_rule(
    "number-cut-short",
    Severity.warning,
    "uWSGI reads a number up to its first non-digit: `processes = 1e3` runs 1 process",
    "uWSGI's option parsers take a number with C's atoi / strtoul (core/uwsgi.c: "
    "uwsgi_opt_set_int, uwsgi_opt_set_64bit), which stop at the first character that is not a "
    "digit; uWSGI 2.0.30 spawns one worker for `processes = 1e3` "
    "(tests/test_check_uwsgi_values.py)",
    kind="fault",
)
def number_cut_short(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        for option, written, read in app.cut_numbers:
            yield rule.finding(
                written.at,
                f"uWSGI reads {written.value} as {read}: `{option}` takes the digits before "
                f"the first non-digit, so it runs with {option} {read}, not the "
                f"{_meant(written.value)} the line reads as",
                f"{option} = {_whole(written.value)}   (a whole number, digits only)",
            )


@check_rule(
    "uwsgi-inline-comment",
    Severity.warning,
    "a comment after a uWSGI ini value is part of the value: `module = app # x` names no module",
    "uWSGI's ini reader (unbit/uwsgi core/ini.c, uwsgi_ini_config) skips a line only when it "
    "starts with `#` or `;` and keeps everything after `=` on any other line, trimmed of "
    "spaces, as the value; a flag is off only for `false`, `off`, `no` or `0` "
    "(core/uwsgi.c: uwsgi_opt_true)",
    kind="fault",
)
def uwsgi_inline_comment(rule: Rule, c: Context) -> Iterator[Finding]:
    seen: set[Location] = set()
    for app in c.apps:
        for option, written, meant in app.inline_comments:
            if written.at in seen:
                continue  # one ini read by several launches
            seen.add(written.at)
            if meant.lower() in _FLAG_OFF:
                what = (
                    f"`{written.value}` is none of the words that turn it off, so `{option}` is on"
                )
            else:
                what = f"`{option}` is `{written.value}`, the comment included, not `{meant}`"
            yield rule.finding(
                written.at,
                f"uWSGI's ini has no comment after a value: {what}",
                f"{option} = {meant}   (the comment on a line of its own, starting with #)",
            )


#: The values that turn a uWSGI flag off (uwsgi_opt_true).
_FLAG_OFF = frozenset({"false", "off", "no", "0"})


#: Numbers past this many digits are shown as written, never expanded.
_DIGITS_SHOWN = 20


def _meant(written: str) -> str:
    """What a number written `1e3`, `2.5` or `1_000` reads as to a person (Python's reading)."""
    try:
        number = Decimal(written.replace("_", ""))
    except InvalidOperation:
        return written
    if not -_DIGITS_SHOWN < number.adjusted() < _DIGITS_SHOWN:
        return written  # `1e999999` is not written out
    shown = f"{number:f}"
    return shown.rstrip("0").rstrip(".") if "." in shown else shown


def _whole(written: str) -> str:
    """The whole number to write for it: `1000` for 1e3; `2 or 3` for 2.5."""
    try:
        number = Decimal(written.replace("_", ""))
        if not -_DIGITS_SHOWN < number.adjusted() < _DIGITS_SHOWN:
            return "N"
        low, high = (
            int(number.to_integral_value("ROUND_FLOOR")),
            int(number.to_integral_value("ROUND_CEILING")),
        )
    except (InvalidOperation, ValueError, OverflowError):
        return "N"
    return str(low) if low == high else f"{low} or {high}"


@check_rule(
    "reloader-in-production",
    Severity.info,
    "a production image's, pod's, systemd unit's or production compose file's only launch runs "
    "the server's "
    "development reloader",
    "uvicorn's settings (`--reload`: for development, a process that watches the files and "
    "restarts the server, one process whatever --workers says: "
    "https://www.uvicorn.org/settings/#development); gunicorn's `reload` setting (restart "
    "workers when code changes, intended for development: "
    "https://docs.gunicorn.org/en/stable/settings.html#reload); granian's `--reload`",
    kind="fault",
)
def reloader_in_production(rule: Rule, c: Context) -> Iterator[Finding]:
    # A container that runs no reloader may run this image with its own command (a compose
    # file's `command`, a pod's `args`): then the reloader is not the image's only launch.
    overridden = any(a.container is not None and a.reloads is None for a in _every(c))
    for app in c.apps:
        if app.reloads is None or not production_launch(app, overridden):
            continue
        what = (
            "runs one process (whatever --workers says) and watches the files"
            if app.kind == "uvicorn"
            else "watches the files and restarts the workers on every change"
        )
        started = _started(app)
        written = _reload_written(app, app.reloads.at)
        finding = rule.finding(
            app.reloads.at,
            f"{app.kind} {written} is the only launch of {started}: the reloader {what}, a "
            "development server; a production run serves with it and spends CPU on the watch",
            f"drop {written} here and keep it in the development launch (a compose "
            "override's `command`, a `dev` stage)",
        )
        evidence = production_evidence(app, overridden)
        if evidence is None or app.kind not in _RELOAD_ONE_PROCESS:
            # gunicorn's reload is a watcher thread in workers that still serve as written
            # (okfn-brasil/serenata-de-amor's prod overlay, judged a note): no request lost.
            yield _reloader_graded(finding, app)
            continue
        # The files say a deployment runs it: uvicorn's or granian's development server,
        # one process under a file watcher (hotosm/raw-data-api's unit, PySpur-Dev/pyspur).
        yield dataclasses.replace(
            finding,
            severity=Severity.warning,
            message=f"{finding.message} (a warning, not a note: {evidence})",
        )


#: How a config file (not a command line) turns each server's reloader on.
_RELOAD_SETTING = {"gunicorn": "reload = True", "hypercorn": "use_reloader = true"}


def _reload_written(app: AppServer, at: Location) -> str:
    """`--reload`, or the config setting that turned the reloader on where `at` is in the
    server's config file (pyrox0/vgarchive's hypercorn.toml `use_reloader = true`)."""
    in_config = app.config_file is not None and at.file == app.config_file.file
    if app.kind in _RELOAD_SETTING and (in_config or not app.command_line):
        return _RELOAD_SETTING[app.kind]
    return "--reload"


def _every(c: Context) -> list[AppServer]:
    """Every app server read, development launches too."""
    return [*c.apps, *c.set_aside]


@check_rule(
    "development-server-in-production",
    Severity.warning,
    "a framework's development server (`flask run`, `manage.py runserver`) is a production "
    "image's own command or a production compose file's",
    "Flask's docs: 'Do not use the development server when deploying to production. It is "
    "intended for use only during local development. It is not designed to be particularly "
    "efficient, stable, or secure.' (https://flask.palletsprojects.com/en/stable/server/); "
    "Django's: 'DO NOT USE THIS SERVER IN A PRODUCTION SETTING. It has not gone through "
    "security audits or performance tests.' (https://docs.djangoproject.com/en/stable/ref/"
    "django-admin/#runserver)",
    kind="fault",
)
def development_server_in_production(rule: Rule, c: Context) -> Iterator[Finding]:
    # As `reloader-in-production`: an image's own command is the deployment's while no
    # container here runs the image with a command of its own (a compose `command:`). And
    # while no other launch here starts a production server: beside one (a Procfile's
    # gunicorn, another image's uvicorn) the image is a developer's (MTES-MCT/sparte's
    # Dockerfile beside its Procfile, bento-platform/katsu's beside bento.Dockerfile).
    other = bool(c.apps) or any(a.container is not None for a in _every(c))
    for found in c.development_servers:
        if is_dockerfile(found.at.file) and (other or line_named_for_development(found.at)):
            continue
        yield rule.finding(
            found.at,
            found.message,
            "serve the app with a production server (gunicorn, uvicorn, uWSGI) here, and keep "
            "the development server in the development launch (a compose override, a `dev` "
            "stage)",
        )


def _started(app: AppServer) -> str:
    """What runs `app`'s reloader, in words: its container, its systemd unit or its image."""
    if app.container is not None:
        return f"the {app.container.platform} container {app.container.name}"
    first = app.launched_by[0].file if app.launched_by else app.file
    start = launch_line(app)
    entry = entry_words(start) if start is not None else None
    if entry is not None:
        return entry
    if first.suffix == ".service":
        return f"the systemd unit {first.name}"
    installed = installed_as(first)
    if installed is not None and installed.endswith(".service"):
        return f"the systemd unit {posixpath.basename(installed)} (installed from {first.name})"
    return "this image (its final stage's command)"


#: The servers whose reloader serves in one process whatever the launch's worker count says.
_RELOAD_ONE_PROCESS = frozenset({"uvicorn", "granian"})


def _reloader_graded(finding: Finding, app: AppServer) -> Finding:
    """A note: the reloader costs a file watcher and loses no request. A warning where it
    defeats what the launch asks for: `uvicorn --reload --workers 4` (granian's likewise)
    serves in one process, not the four written."""
    if app.kind not in _RELOAD_ONE_PROCESS or app.workers.default or app.workers.value <= 1:
        return finding
    return dataclasses.replace(
        finding,
        severity=Severity.warning,
        message=f"{finding.message} (a warning, not a note: {spelled(app, 'workers')} = "
        f"{app.workers.value} is written, and the reloader serves in one process instead)",
    )


@check_rule(
    "gunicorn-unknown-setting",
    Severity.warning,
    "a gunicorn config assigns a name that is no setting but spells one's flag: it is ignored",
    "gunicorn's config loader skips every name of the file that is not a setting "
    "(gunicorn/app/base.py, load_config_from_module_name_or_filename: `# Ignore unknown "
    "names`: https://github.com/benoitc/gunicorn/blob/master/gunicorn/app/base.py); the "
    "settings' names: https://docs.gunicorn.org/en/stable/settings.html",
    kind="fault",
)
def gunicorn_unknown_setting(rule: Rule, c: Context) -> Iterator[Finding]:
    seen: set[tuple[object, str]] = set()
    for app in c.apps:
        for written, at, meant, same in app.misspelled:
            if (at, written) in seen:
                continue  # one config file read by several launches
            seen.add((at, written))
            said = (
                f"`{written}` is not a gunicorn setting (it is the `--"
                f"{written.replace('_', '-')}` flag written as a name): gunicorn ignores "
                f"it, so it does not set `{meant}`"
            )
            if not same:
                yield rule.finding(at, said, f"rename it to `{meant}`")
                continue
            # The value is the one `meant` has anyway (`log_file = "-"`, errorlog's default
            # `-`, seen in microsoft/sample-app-aoai-chatGPT): nothing runs otherwise, a note.
            finding = rule.finding(
                at,
                f"{said}; `{meant}` has that value anyway, so nothing changes today, but a "
                "value changed here later would be ignored",
                f"rename it to `{meant}` (or drop the line)",
            )
            yield dataclasses.replace(finding, severity=Severity.info)


@check_rule(
    "ignored-by-platform",
    Severity.warning,
    "a line or value the platform or proxy reading it ignores: its default applies instead",
    "Heroku's Procfile is `<process type>: <command>` lines, and a line of another form declares "
    "no process (https://devcenter.heroku.com/articles/procfile); ingress-nginx's timeout "
    "annotations are unitless seconds and a value that is not an integer is refused, its "
    "ConfigMap default (60 s) applying (https://kubernetes.github.io/ingress-nginx/user-guide/"
    "nginx-configuration/annotations/#custom-timeouts)",
    kind="fault",
)
def ignored_by_platform(rule: Rule, c: Context) -> Iterator[Finding]:
    for ignored in c.ignored:
        yield rule.finding(
            ignored.at,
            ignored.message,
            ignored.fix or "write the line or value in the form the platform reads",
        )
