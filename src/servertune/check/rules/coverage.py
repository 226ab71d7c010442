"""What check could not read (a missing include or config file, a variable only the running
container knows): said, so a clean report is not taken for a checked one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from servertune.check.commands import CALLER_ARGUMENTS
from servertune.check.model import Finding, Severity
from servertune.check.placeholders import placeholder
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule


@check_rule(
    "include-not-found",
    Severity.info,
    "an nginx include names a file that is not here, so its settings were not checked",
    "https://nginx.org/en/docs/ngx_core_module.html#include",
    kind="coverage",
)
def include_not_found(rule: Rule, c: Context) -> Iterator[Finding]:
    for nginx in c.nginx:
        for include in nginx.missing_includes:
            yield rule.finding(
                include.at,
                f"include {include.value}: not in this config tree here; settings in it were "
                "not checked",
                f"servertune check {nginx.file} {include.value}   (from the server's own tree)",
            )


@check_rule(
    "unresolved-variable",
    Severity.info,
    "a command-line word only the running container can expand: not checked",
    "the shell expands $VAR from the container's environment when it starts; "
    "check reads the files, never runs them (docs/check.md)",
    kind="coverage",
)
def unresolved_variable(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        for emptied in app.emptied:
            written, path = emptied.value
            names = sorted(set(re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", written)))
            yield rule.finding(
                emptied.at,
                f"{written!r}: {', '.join(names)} set by no file read, so read as {path!r}, "
                "as the shell expands an unset variable to empty (a file of that path is "
                f"provided); if the container sets it, {app.kind}'s config may be another file",
                f"servertune check --env-file FILE ... (FILE holding {', '.join(n + '=...' for n in names)})",
            )
        for word in app.unresolved:
            kubelet = sorted(set(re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", word.value)))
            names = sorted(set(re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", word.value)))
            if kubelet:
                fix = (
                    f"check this manifest with the one that sets {', '.join(kubelet)} (the "
                    "overlay's ConfigMap or the container's env), or write the value"
                )
            elif names:
                fix = f"servertune check --env-file FILE ... (FILE holding {', '.join(n + '=...' for n in names)})"
            else:
                fix = "write the value in the command line, or check the file that supplies it"
            # A `$NAME` is the environment's; a Python launcher's `settings.PORT` is a value
            # the program computes when it runs.
            # An installer's or a template's placeholder (`__PORT__`) is filled before it runs.
            if "$" in word.value:
                source = "the container's or platform's variables"
            elif placeholder(word.value) is not None:
                source = "a placeholder an installer or template fills"
            else:
                source = "a value the program computes"
            yield rule.finding(
                word.at,
                f"{word.value!r}: known only when it runs ({source}); {app.kind} was read "
                "without it, so whatever it sets was not checked",
                fix,
            )


@check_rule(
    "config-not-found",
    Severity.info,
    "the command line names a config file that is not among the files read",
    "https://docs.gunicorn.org/en/stable/settings.html#config; "
    "https://uwsgi-docs.readthedocs.io/en/latest/Configuration.html",
    kind="coverage",
)
def config_not_found(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        missing = app.missing_config
        if missing is None or missing.value in CALLER_ARGUMENTS:
            continue  # the caller's arguments, not a file: `unresolved-variable` names them
        if missing.value.startswith("python:"):
            # gunicorn's `-c python:package.module`: a module on the app's path, not a file.
            module = missing.value.removeprefix("python:").replace(".", "/")
            fix = f"servertune check {module}.py   (the module's file, from your repository)"
        else:
            fix = (
                f"servertune check {missing.value.rsplit('/', 1)[-1]}   (the file from your "
                "repository), or keep it where the Dockerfile's COPY puts it"
            )
        yield rule.finding(
            missing.at,
            f"{missing.value}: not in the build context or the files given, so its settings "
            f"were not checked; {app.kind} was read from its command line alone",
            fix,
        )
