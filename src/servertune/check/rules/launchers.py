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
