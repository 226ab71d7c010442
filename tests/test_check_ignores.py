"""Inline ignores in every file kind `check` reads: `servertune: ignore[rule-id] reason` in the
file's own comment syntax, and the `servertune.io/ignore` annotation on a Kubernetes object.

Each case is checked twice: with the ignore (the finding is listed as ignored, with the reason
and the line that ignores it) and with the ignore taken out (the same finding is active), so a
case cannot pass because the finding was never there.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.catalog import MISSING_REASON, UNUSED_IGNORE
from servertune.check.ignores import ignores_in
from servertune.check.model import Location
from servertune.check.settings import CheckSettings
from servertune.check.suppress import suppress
from servertune.sizing import Machine

JITTER = "max-requests-without-jitter"
WHY = "the load balancer retries on another instance"
APP = "gunicorn app:app -w 2 --max-requests 1000"
GUNICORN_BOUND = 'bind = "127.0.0.1:8000"\nworkers = 2\ntimeout = 120\ngraceful_timeout = 150\n'
NGINX = """upstream app {{
    server 127.0.0.1:8000;
}}
server {{
    listen 80;
{comment}    location / {{
        proxy_pass http://app;{trailing}
    }}
}}
"""
HAPROXY = """{comment}defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s{trailing}
    http-reuse never

backend app
    server a 127.0.0.1:8000
"""
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
{annotations}spec:
  template:
    spec:
      containers:
{comment}        - name: web
          image: x
          command: ["gunicorn", "app:app", "-w", "2", "--bind", "0.0.0.0:8000"]
          resources: {{limits: {{cpu: "2"}}}}
"""


def _ignore(rule: str = JITTER, marker: str = "#") -> str:
    return f"{marker} servertune: ignore[{rule}] {WHY}"


#: (case id, files, files named, the rule ignored, the ignore's file:line)
CASES = [
    ("python, own line", {"gunicorn.conf.py": f"workers = 2\n{_ignore()}\nmax_requests = 1000\n"},
     ["gunicorn.conf.py"], JITTER, ("gunicorn.conf.py", 2)),
    ("python, trailing", {"gunicorn.conf.py": f"workers = 2\nmax_requests = 1000  {_ignore()}\n"},
     ["gunicorn.conf.py"], JITTER, ("gunicorn.conf.py", 2)),
    ("python, a default (line 1) from the leading comment",
     {"gunicorn.conf.py": _ignore("gthread-one-thread") + "\nworkers = 2\nworker_class = 'gthread'\n"},
     ["gunicorn.conf.py"], "gthread-one-thread", ("gunicorn.conf.py", 1)),
    ("shell, own line", {"start.sh": f"#!/bin/sh\n{_ignore()}\nexec {APP}\n"},
     ["start.sh"], JITTER, ("start.sh", 2)),
    ("shell, trailing", {"start.sh": f"#!/bin/sh\nexec {APP}  {_ignore()}\n"},
     ["start.sh"], JITTER, ("start.sh", 2)),
    ("Procfile, own line", {"Procfile": f"{_ignore()}\nweb: {APP}\n"},
     ["Procfile"], JITTER, ("Procfile", 1)),
    ("Procfile, trailing", {"Procfile": f"web: {APP}  {_ignore()}\n"},
     ["Procfile"], JITTER, ("Procfile", 1)),
    ("Dockerfile, an instruction with its continuation lines",
     {"Dockerfile": f"FROM python:3.12\n{_ignore()}\nCMD gunicorn app:app -w 2 \\\n"
                    "    --max-requests 1000\n"},
     ["Dockerfile"], JITTER, ("Dockerfile", 2)),
    ("compose, a service's block",
     {"compose.yaml": f"services:\n  {_ignore()}\n  web:\n    image: x\n    command: {APP}\n"},
     ["compose.yaml"], JITTER, ("compose.yaml", 2)),
    ("compose, trailing", {"compose.yaml": f"services:\n  web:\n    image: x\n"
                                           f"    command: {APP}  {_ignore()}\n"},
     ["compose.yaml"], JITTER, ("compose.yaml", 4)),
    ("env file read through compose",
     {"compose.yaml": "services:\n  web:\n    image: x\n    env_file: prod.env\n"
                      "    command: gunicorn app:app\n",
      "prod.env": f"{_ignore('workers-over-cores')}\nWEB_CONCURRENCY=16\n"},
     ["compose.yaml"], "workers-over-cores", ("prod.env", 1)),
    ("supervisord, a `;` comment over the section",
     {"supervisord.conf": f"{_ignore(marker=';')}\n[program:web]\ncommand={APP}\n"},
     ["supervisord.conf"], JITTER, ("supervisord.conf", 1)),
    ("supervisord, trailing `;`",
     {"supervisord.conf": f"[program:web]\ncommand={APP} {_ignore(marker=';')}\n"},
     ["supervisord.conf"], JITTER, ("supervisord.conf", 2)),
    ("uWSGI, `#` over a line",
     {"uwsgi.ini": f"[uwsgi]\nmodule = app:application\nprocesses = 2\n{_ignore()}\n"
                   "max-requests = 1000\n"},
     ["uwsgi.ini"], JITTER, ("uwsgi.ini", 4)),
    ("uWSGI, `;` over the section",
     {"uwsgi.ini": f"{_ignore(marker=';')}\n[uwsgi]\nmodule = app:application\nprocesses = 2\n"
                   "max-requests = 1000\n"},
     ["uwsgi.ini"], JITTER, ("uwsgi.ini", 1)),
    ("nginx, a location block",
     {"nginx.conf": NGINX.format(comment="    " + _ignore("app-timeout-over-read-timeout") + "\n",
                                 trailing=""),
      "gunicorn.conf.py": GUNICORN_BOUND},
     ["nginx.conf", "gunicorn.conf.py"], "app-timeout-over-read-timeout", ("nginx.conf", 6)),
    ("nginx, trailing",
     {"nginx.conf": NGINX.format(comment="", trailing="  " + _ignore("app-timeout-over-read-timeout")),
      "gunicorn.conf.py": GUNICORN_BOUND},
     ["nginx.conf", "gunicorn.conf.py"], "app-timeout-over-read-timeout", ("nginx.conf", 7)),
    ("HAProxy, a section",
     {"haproxy.cfg": HAPROXY.format(comment=_ignore("app-timeout-over-read-timeout") + "\n",
                                    trailing=""),
      "gunicorn.conf.py": GUNICORN_BOUND},
     ["haproxy.cfg", "gunicorn.conf.py"], "app-timeout-over-read-timeout", ("haproxy.cfg", 1)),
    ("HAProxy, trailing",
     {"haproxy.cfg": HAPROXY.format(comment="", trailing="  " + _ignore("app-timeout-over-read-timeout")),
      "gunicorn.conf.py": GUNICORN_BOUND},
     ["haproxy.cfg", "gunicorn.conf.py"], "app-timeout-over-read-timeout", ("haproxy.cfg", 5)),
    ("Kubernetes, a comment over a container",
     {"deploy.yaml": DEPLOYMENT.format(annotations="", comment="        "
                                       + _ignore("no-readiness-probe") + "\n")},
     ["deploy.yaml"], "no-readiness-probe", ("deploy.yaml", 9)),
    ("Kubernetes, the object's annotation",
     {"deploy.yaml": DEPLOYMENT.format(
         annotations=f"  annotations:\n    team: web\n    servertune.io/ignore: "
                     f"\"no-readiness-probe: {WHY}\"\n", comment="")},
     ["deploy.yaml"], "no-readiness-probe", ("deploy.yaml", 7)),
    ("Kubernetes, an annotation of several lines",
     {"deploy.yaml": DEPLOYMENT.format(
         annotations="  annotations:\n    team: web\n    servertune.io/ignore: |\n"
                     f"      no-cpu-limit: the namespace's LimitRange sets it\n"
                     f"      no-readiness-probe: {WHY}\n", comment="")
         .replace('          resources: {limits: {cpu: "2"}}\n', "")},
     ["deploy.yaml"], "no-readiness-probe", ("deploy.yaml", 9)),
]  # fmt: skip


def _check(root: Path, files: dict[str, str], named: list[str]) -> CheckResult:
    for name, text in files.items():
        (root / name).write_text(text)
    machine = Machine.read().model_copy(update={"cores": 2, "cores_source": "--cores"})
    result = check_files([root / n for n in named], machine=machine)
    assert not result.errors, result.errors
    return suppress(result, CheckSettings())


def _without_ignores(text: str) -> str:
    """The text with every ignore taken out (a comment line dropped, a trailing one cut)."""
    kept: list[str] = []
    block = None  # the indent of an annotation's `|` block being dropped
    for line in text.splitlines():
        if block is not None and len(line) - len(line.lstrip()) > block:
            continue
        block = None
        if re.fullmatch(r"\s*[#;] servertune:.*|\s*servertune\.io/ignore:.*", line):
            if line.endswith("|"):
                block = len(line) - len(line.lstrip())
            continue
        kept.append(re.sub(r"\s+[#;] servertune:.*", "", line))
    return "\n".join(kept) + "\n"


@pytest.mark.parametrize(("files", "named", "rule", "where"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_an_ignore_in_the_files_own_syntax_ignores_the_finding_with_its_reason(
    files: dict[str, str], named: list[str], rule: str, where: tuple[str, int], tmp_path: Path
) -> None:
    """The finding is listed as ignored, by the ignore's line and with its reason; without the
    ignore the same finding is active."""
    result = _check(tmp_path, files, named)
    assert rule not in {f.rule for f in result.findings}, result.findings
    assert not {MISSING_REASON, UNUSED_IGNORE} & {f.rule for f in result.findings}
    [ignored] = [s for s in result.suppressed if s.finding.rule == rule]
    assert ignored.suppression.at == Location(tmp_path / where[0], where[1])
    assert ignored.suppression.kind == "inSource"
    assert ignored.suppression.reason == WHY
    bare = tmp_path / "bare"
    bare.mkdir()
    control = _check(bare, {n: _without_ignores(t) for n, t in files.items()}, named)
    assert rule in {f.rule for f in control.findings}
    assert not control.suppressed


def test_an_ignore_covers_the_line_that_follows_not_the_next_ones(tmp_path: Path) -> None:
    """In Python an own-line ignore covers the next statement: a finding two statements down
    stays."""
    text = f"workers = 2\n{_ignore()}\nbind = '127.0.0.1:8000'\nmax_requests = 1000\n"
    result = _check(tmp_path, {"gunicorn.conf.py": text}, ["gunicorn.conf.py"])
    assert JITTER in {f.rule for f in result.findings}
    [unused] = [f for f in result.findings if f.rule == UNUSED_IGNORE]
    assert unused.at == Location(tmp_path / "gunicorn.conf.py", 2)
    assert "no max-requests-without-jitter finding on lines 3-3" in unused.message


def test_an_ignore_names_the_rules_it_ignores_and_no_other(tmp_path: Path) -> None:
    """ignore[workers-over-cores] on a line with two findings ignores that one only."""
    text = f"{_ignore('workers-over-cores')}\ngunicorn app:app -w 4 --max-requests 1000\n"
    result = _check(tmp_path, {"start.sh": "#!/bin/sh\n" + text}, ["start.sh"])
    assert [s.finding.rule for s in result.suppressed] == ["workers-over-cores"]
    assert JITTER in {f.rule for f in result.findings}


def test_an_ignore_without_a_reason_is_a_finding_of_its_own(tmp_path: Path) -> None:
    """`ignore[rule]` with nothing after it: `ignore-without-reason` at the comment (a warning,
    which fails the build by default); the finding it names is still ignored."""
    text = "workers = 2\nmax_requests = 1000  # servertune: ignore[max-requests-without-jitter]\n"
    result = _check(tmp_path, {"gunicorn.conf.py": text}, ["gunicorn.conf.py"])
    [missing] = result.findings
    assert missing.rule == MISSING_REASON
    assert missing.at == Location(tmp_path / "gunicorn.conf.py", 2)
    assert missing.severity.name == "warning"
    assert [s.finding.rule for s in result.suppressed] == [JITTER]


def test_an_annotation_without_a_reason_is_a_finding_of_its_own(tmp_path: Path) -> None:
    """`servertune.io/ignore: "no-readiness-probe"` says no reason: a finding at the annotation."""
    annotations = '  annotations:\n    servertune.io/ignore: "no-readiness-probe"\n'
    files = {"deploy.yaml": DEPLOYMENT.format(annotations=annotations, comment="")}
    result = _check(tmp_path, files, ["deploy.yaml"])
    assert [(f.rule, f.at.line) for f in result.findings] == [(MISSING_REASON, 6)]


def test_an_ignore_that_matches_nothing_is_reported(tmp_path: Path) -> None:
    """An ignore of a rule that finds nothing there, and one of a rule id check does not have,
    are `unused-ignore` findings (as ruff's RUF100), at the ignore's line."""
    text = (
        f"workers = 2\n{_ignore('workers-over-cores')}\nmax_requests = 1000\n"
        f"max_requests_jitter = 50  # servertune: ignore[max-request-jitter] {WHY}\n"
    )
    result = _check(tmp_path, {"gunicorn.conf.py": text}, ["gunicorn.conf.py"])
    unused = [(f.at.line, f.message) for f in result.findings if f.rule == UNUSED_IGNORE]
    assert unused == [
        (2, "ignore[workers-over-cores] matches nothing: no workers-over-cores finding on lines 3-3"),
        (4, "ignore[max-request-jitter] matches nothing: max-request-jitter is not a rule id check has"),
    ]  # fmt: skip


def test_a_directive_without_rule_ids_is_reported(tmp_path: Path) -> None:
    """`# servertune: ignore because` names no rule: reported, never a blanket ignore."""
    text = f"workers = 2\nmax_requests = 1000  # servertune: ignore {WHY}\n"
    result = _check(tmp_path, {"gunicorn.conf.py": text}, ["gunicorn.conf.py"])
    assert {f.rule for f in result.findings} == {JITTER, UNUSED_IGNORE}
    assert not result.suppressed


def test_a_dockerfile_hash_inside_an_instruction_is_not_a_comment(tmp_path: Path) -> None:
    """A Dockerfile's `#` is a comment only at the start of a line: text after an instruction is
    part of it, never an ignore."""
    path = tmp_path / "Dockerfile"
    text = f"FROM python:3.12\nRUN echo hi {_ignore()}\n"
    assert ignores_in(path, text) == []


def test_a_uwsgi_value_keeps_a_trailing_semicolon(tmp_path: Path) -> None:
    """uWSGI comments are whole lines: `; servertune: ...` after a value is part of the value."""
    path = tmp_path / "uwsgi.ini"
    text = f"[uwsgi]\nmodule = app ; servertune: ignore[{JITTER}] {WHY}\n"
    assert ignores_in(path, text) == []


def test_a_reasons_control_characters_are_escaped(tmp_path: Path) -> None:
    """An escape sequence in a reason cannot recolour a terminal or a CI log: it is shown escaped."""
    text = f"workers = 2\nmax_requests = 1000  # servertune: ignore[{JITTER}] ok \x1b[31mred\x07\n"
    result = _check(tmp_path, {"gunicorn.conf.py": text}, ["gunicorn.conf.py"])
    [ignored] = result.suppressed
    assert ignored.suppression.reason == "ok \\x1b[31mred\\x07"
