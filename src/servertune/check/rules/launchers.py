"""Command lines that start a server: what the server's own parser does with them."""

from __future__ import annotations

from collections.abc import Iterator

from servertune.check.model import Finding, Severity
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule

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
