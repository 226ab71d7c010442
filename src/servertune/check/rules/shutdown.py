"""Shutdown: SIGTERM reaches the server, which finishes running requests before the platform kills
it (graceful timeout, stop/termination grace period, uWSGI's SIGTERM).
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Iterator
from dataclasses import replace

from servertune.check.base_shells import sh_words
from servertune.check.commands import WRAPPERS, dockerfile_name
from servertune.check.hypercorn import HYPERCORN_DOCS
from servertune.check.model import (
    S6_INIT,
    AppServer,
    Container,
    Finding,
    Location,
    Setting,
    Severity,
)
from servertune.check.platforms import CLOUDFOUNDRY_STOP_GRACE_S
from servertune.check.rules.backing import GUNICORN_DOCS
from servertune.check.rules.context import Context
from servertune.check.rules.rule import Rule, check_rule
from servertune.check.rules.spelling import as_shown, assignment, figure
from servertune.check.rules.timeouts import caps_requests


def _stop_grace_name(box: Container) -> str:
    if box.words is not None and box.words.grace_name is not None:
        return box.words.grace_name
    return "stop_grace_period" if box.platform == "compose" else "terminationGracePeriodSeconds"


def _grace_fix(box: Container, seconds: int) -> str:
    """The line that sets the container's stop grace to `seconds`, in its platform's words."""
    if box.words is not None and box.words.grace_fix is not None:
        return box.words.grace_fix.format(seconds)
    unit = "s" if box.platform == "compose" else ""
    return f"{_stop_grace_name(box)}: {seconds}{unit}"


def _stopper(box: Container) -> str:
    """Who stops the container on a stop or deploy."""
    if box.words is not None:
        return box.words.stopped_by
    return "docker compose" if box.platform == "compose" else "Kubernetes"


@check_rule(
    "graceful-below-timeout",
    Severity.warning,
    "a reload kills requests the timeout still allows",
    GUNICORN_DOCS + "#graceful-timeout; " + GUNICORN_DOCS + "#timeout (for sync workers "
    "only: other worker classes send a heartbeat while their requests run)",
    kind="fault",
)
def graceful_below_timeout(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        graceful, timeout = app.graceful_timeout, app.request_timeout
        if graceful is None or timeout is None or not caps_requests(app):
            continue
        if not 0 < graceful.value < timeout.value:
            continue
        if not _signal_arrives(app):
            continue  # no graceful stop at all: the rule about the signal says it
        waits = _platform_wait(app)
        if waits is None or waits <= graceful.value:
            # The platform kills first (a pod's grace, compose's 10 s), or the files do not
            # say what stops it (Docker's 10 s, Heroku's 30 s, systemd's 90 s): a longer
            # graceful_timeout would change nothing a user sees.
            continue
        fix = assignment(app, "graceful", figure(timeout.value))
        box = app.container
        grace = box.grace_period_s if box is not None else None
        where = grace.at if grace is not None else app.stop_wait.at if app.stop_wait else None
        bound = f"; the platform would wait {figure(waits)} s ({where}) after SIGTERM"
        if box is not None and grace is not None and grace.value < timeout.value:
            # The platform's SIGKILL comes first whatever gunicorn waits: raise both.
            name = _stop_grace_name(box)
            bound += f", but its {name} {as_shown(grace, ' s')} ends before the timeout"
            fix += ", and " + _grace_fix(box, math.ceil(timeout.value) + 5)
        # At the line that sets a value: graceful_timeout's when written, else the timeout's
        # (a default has no line of its own; line 1 may be a licence comment).
        at = timeout.at if graceful.default else graceful.at
        other = timeout.at
        yield rule.finding(
            at,
            f"graceful_timeout {as_shown(graceful, ' s')} is below the sync workers' timeout "
            f"{as_shown(timeout, ' s')}{bound}: every reload or deploy kills requests that were "
            "allowed to run longer",
            fix,
            ((other,) if not graceful.default else ()) + ((where,) if where is not None else ()),
        )


def _exec_fix(line: str) -> str:
    """The line with `exec`. A pipeline (`gunicorn ... 2>&1 | tee LOG`) is never exec'ed:
    `exec` would run in the pipeline's own subshell, and the shell would stay PID 1. Its fix
    drops the pipe (the container keeps the output), or, in bash, sends the shell's output
    through a process substitution first. (A `trap` would not do: `$!` of a background
    pipeline is its last command, `tee`, not the server.)"""
    head, joint, line = _last_of_list(line)
    if joint in ("||", "&&") and line.startswith(("{", "(")):
        # `cd app && gunicorn ... || { echo retry; sleep 5; launch; }`: the server is before
        # the block, which runs when it ends; `exec` there means the block never runs.
        return (
            f"{_exec_fix(head)}   (with `exec`, the `{joint} {line[0]} ... ` block after it no "
            "longer runs: the container's restart policy takes the place of a retry)"
        )
    if joint:
        # `configure && gunicorn`: the list's last command is the server; exec goes there.
        return f"{head} {joint} {_exec_fix(line)}"
    server, bar, rest = line.partition(" | ")
    if not bar:
        return _with_exec(line)
    server = re.sub(r"\s*2>&1\s*$", "", server)
    return (
        f"{_with_exec(server)}   (without `| {rest.strip()}`: the container's log keeps the "
        f"output); or, to keep the file too, in bash: exec > >({rest.strip()}) 2>&1   then   "
        f"{_with_exec(server)}"
    )


def _last_of_list(line: str) -> tuple[str, str, str]:
    """(what comes before, the operator, the last command) of a shell list on one line
    (`a && b`, `a || b`, `a; b`), operators inside quotes or a command substitution
    (`$(nproc || echo 4)`) not counted; ("", "", line) for a single command."""
    quote, cut = "", None
    index, depth = 0, 0  # depth: inside `$( ... )`, whose list is its subshell's
    while index < len(line):
        char = line[index]
        if depth:
            depth += {"(": 1, ")": -1}.get(char, 0)
        elif line.startswith("$(", index) and quote != "'":
            depth, index = 1, index + 1
        elif quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"':
                index += 1
        elif char in "'\"":
            quote = char
        elif char == "\\":
            index += 1
        elif line.startswith(("&&", "||"), index):
            cut = (index, 2)
            index += 1
        elif char == ";":
            cut = (index, 1)
        index += 1
    if cut is None or not line[cut[0] + cut[1] :].strip():
        return "", "", line  # (a trailing `;` ends the one command)
    start, size = cut
    return line[:start].rstrip(), line[start : start + size], line[start + size :].strip()


#: `VAR=value` words before a command (quoted values kept whole): the shell's assignments.
_ASSIGNMENTS = re.compile(r"\A((?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|\"[^\"]*\"|[^\s'\"])*\s+)+)")


#: `exec sh -c "` up to the first word of the string the exec'ed shell runs.
_EXECED_SHELL = re.compile(r"""exec\s+\S*\b(?:ba|da|a)?sh\s+(?:-\w+\s+)*-\w*c\s+["']\s*""")


def _with_exec(command: str) -> str:
    """`exec` before the command, after its `VAR=value` assignments: `VAR=1 exec cmd` passes
    VAR to cmd, where `exec VAR=1 cmd` asks the shell to run a program named `VAR=1`."""
    if command.startswith("eval "):
        # `exec eval ...` finds no program named eval (a builtin): the evaluated text execs.
        return f"eval exec {command.removeprefix('eval ').lstrip()}"
    if (shell := _EXECED_SHELL.match(command)) is not None:
        # `exec /bin/sh -c "gunicorn ..."`: the shell already execs; its `-c` string runs the
        # server as its child, so `exec` goes first in the string (bird-house/birdhouse-deploy).
        return f"{shell[0]}exec {command[shell.end() :]}"
    assignments = _ASSIGNMENTS.match(command)
    if assignments is None:
        return f"exec {command}"
    return f"{assignments[1]}exec {command[assignments.end() :]}"


def _signal_arrives(app: AppServer) -> bool:
    """SIGTERM reaches the server and it stops gracefully on it, as far as the files say."""
    without_exec = app.without_exec is not None and app.group_signalled is None
    dropped = without_exec or app.shell_form or app.backgrounded
    return not dropped and _stops_gracefully(app)


def _platform_wait(app: AppServer) -> float | None:
    """How long the platform waits after SIGTERM before SIGKILL, as the files declare it (or
    its documented default): the pod's grace less its preStop sleep, compose's
    stop_grace_period, supervisord's stopwaitsecs; None when the files do not say."""
    box = app.container
    if box is not None and box.grace_period_s is not None:
        prestop = box.prestop_s.value if box.prestop_s is not None else 0.0
        return box.grace_period_s.value - prestop
    return app.stop_wait.value if app.stop_wait is not None else None


def _shown(text: str) -> str:
    """A command in a message: whole up to 100 characters, else its start and an ellipsis
    outside the quotes (the fix always carries it whole)."""
    return repr(text) if len(text) <= 100 else repr(text[:97]) + "..."


_DOCKER_PID1 = (
    "https://docs.docker.com/reference/dockerfile/#entrypoint (a starter script ensures the "
    "final executable receives the Unix signals by using exec)"
)


_POD_TERMINATION = (
    "https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination"
)

_CF_SHUTDOWN = (
    "https://docs.cloudfoundry.org/devguide/deploy-apps/app-lifecycle.html#shutdown (Cloud "
    f"Foundry sends the app's process SIGTERM, then SIGKILL {CLOUDFOUNDRY_STOP_GRACE_S} s "
    "later); "
    "https://github.com/cloudfoundry-attic/lattice-release/issues/190 (a start command "
    "`sleep 1 && app` never passed SIGTERM to the app; with `exec` it did)"
)


@check_rule(
    "entrypoint-without-exec",
    Severity.warning,
    "a shell script (or Python launcher) starts the server as its child: SIGTERM never reaches it",
    _DOCKER_PID1 + "; " + _POD_TERMINATION,
    kind="fault",
)
def entrypoint_without_exec(rule: Rule, c: Context) -> Iterator[Finding]:
    for app, line in _without_exec(c, started=True):
        if app.without_exec_fix is not None:
            yield rule.finding(
                line.at,
                f"the Python launcher runs {app.kind} as its child ({_shown(line.value)}): "
                "Python stays the process the container's stop signals (its PID 1), and a "
                "Python that is PID 1 with no SIGTERM handler ignores SIGTERM and never passes "
                f"it on, so `docker stop` or a rollout never reaches {app.kind}: no graceful "
                "shutdown, in-flight requests are cut by the SIGKILL at the end of the grace "
                "period",
                app.without_exec_fix,
            )
            continue
        if app.container is not None and app.container.platform == "cloudfoundry":
            # Cloud Foundry's own shutdown page, not Docker's PID 1, is the proof here.
            yield replace(
                rule.finding(
                    line.at,
                    f"the script runs {app.kind} as a child of the shell ({_shown(line.value)}): "
                    "Cloud Foundry sends SIGTERM to the start command's own process, the shell, "
                    "which does not pass it on, so `cf stop`, a restart or a rolling deploy never "
                    f"reaches {app.kind}: no graceful shutdown, in-flight requests are cut by the "
                    f"SIGKILL {CLOUDFOUNDRY_STOP_GRACE_S} s later",
                    _exec_fix(line.value),
                ),
                backing=_CF_SHUTDOWN,
            )
            continue
        parent = _shell_parent(app, app.kind)
        if parent is None:
            finding = rule.finding(line.at, _pid1_shell(app.kind, line, ""), _exec_fix(line.value))
            yield _with_parents(finding, _parents_without_exec(app, line))
            continue
        what, backing = parent
        finding = rule.finding(
            line.at,
            f"the script runs {app.kind} as a child of the shell ({_shown(line.value)}): {what}",
            _exec_fix(line.value),
            docs=backing,
        )
        yield _with_parents(finding, _parents_without_exec(app, line))
    yield from _managers_finding(rule, c)


def _parents_without_exec(app: AppServer, line: Setting[str]) -> list[Setting[str]]:
    """The earlier scripts of the launch chain whose step runs the next script as a child
    (`./conf/uwsgi/start.sh`, `bash start.sh`, without `exec`): each keeps a shell in front
    of the server as well, so `exec` on the server's line alone leaves the first one PID 1."""
    found: list[Setting[str]] = []
    children = [step.file for step in app.launched_by[1:]] + [line.at.file]
    for step, child in zip(app.launched_by, children, strict=True):
        try:
            lines = step.file.read_text(errors="replace").splitlines()
        except OSError:
            continue
        if not 0 < step.line <= len(lines) or not _last_command(lines[step.line :]):
            # Something runs after it (seqr's `sleep` keeping the container up): `exec`
            # there would skip it, so it is no fix.
            continue
        text = lines[step.line - 1].strip()
        words = text.split()
        if words[:1] in (["sh"], ["bash"]):
            words = words[1:]
        if words and child != step.file and words[0].rsplit("/", 1)[-1] == child.name:
            found.append(Setting(text, step))
    return found


def _last_command(after: list[str]) -> bool:
    """Whether nothing runs after a script's line, given the lines that follow it: only
    blanks, comments and block ends until the end of the file or of its `case` arm or `if`
    branch."""
    for text in after:
        word = text.strip().split(maxsplit=1)[0] if text.strip() else ""
        if word in ("", "fi", "esac", "done", "}") or word.startswith("#"):
            continue
        return word in (";;", "else", "elif")
    return True


def _with_parents(finding: Finding, parents: list[Setting[str]]) -> Finding:
    """The finding whose fix names every script of the chain that needs `exec`, not only the
    server's line (eHealthAfrica/aether's entrypoint.sh runs conf/uwsgi/start.sh without it)."""
    if not parents:
        return finding
    # Named by file name, the line under `see`: copies of the chain (one per image) then
    # say the same and fold into one finding.
    where = ", ".join(f"{p.at.file.name} runs {_shown(p.value)}" for p in parents)
    fixes = "; ".join(f"in {p.at.file.name}: {_with_exec(p.value)}" for p in parents)
    return replace(
        finding,
        message=f"{finding.message} ({where} without `exec` too: its shell stays in front of "
        "this one, so both need it)",
        fix=f"{finding.fix}   and {fixes}",
        related=finding.related + tuple(p.at for p in parents if p.at not in finding.related),
    )


def _pid1_shell(kind: str, line: Setting[str], manager: str) -> str:
    """A shell that is the container's PID 1 running `line` (the server, or the process
    `manager` that runs it) as its child."""
    runs = f"{manager} (which runs {kind})" if manager else kind
    return (
        f"the script runs {runs} as a child of the shell ({_shown(line.value)}): the shell "
        "stays PID 1, and a shell that is PID 1 neither dies of SIGTERM nor passes it on, "
        f"so `docker stop` or a rollout never reaches {manager or kind}: no graceful shutdown, "
        "in-flight requests are cut by the SIGKILL at the end of the grace period"
    )


def _manager_started(app: AppServer, line: Setting[str]) -> bool:
    """Something the files show starts the script whose `line` runs the process manager: a
    container, or a launch step in another file before that line (a Procfile the manager
    reads comes after it)."""
    if app.container is not None:
        return True
    steps = [step.file for step in app.launched_by]
    before = steps[: steps.index(line.at.file)] if line.at.file in steps else steps
    return any(file != line.at.file for file in before)


def _managers_without_exec(
    c: Context, *, started: bool = True
) -> Iterator[tuple[AppServer, Setting[str], str]]:
    """Each script that runs supervisord (or a Procfile runner) as its shell's child, once
    per line, with the manager's name: the manager never gets the stop signal, nor do the
    servers it runs. `started`: those the files show something starting (else the others,
    where no image of a walked tree holds the script)."""
    said: set[Location] = set()
    for app in c.apps:
        line = app.manager_without_exec
        if line is None or line.at in said or app.reloads is not None:
            continue
        if _manager_started(app, line) != started:
            continue
        if not started and c.walked and not app.script_in_image:
            continue  # a developer's launcher (superdesk/superdesk's run.sh): no image has it
        said.add(line.at)
        manager = next(
            (w for w in ("supervisord", "honcho", "foreman") if w in line.value.split()), "it"
        )
        yield app, line, manager


def _managers_finding(rule: Rule, c: Context) -> Iterator[Finding]:
    """`entrypoint-without-exec` for each started script that runs a process manager."""
    for app, line, manager in _managers_without_exec(c):
        parent = _shell_parent(replace(app, supervised=None), manager)
        what = (
            _pid1_shell(app.kind, line, manager)
            if parent is None
            else f"the script runs {manager} (which runs {app.kind}) as a child of the shell "
            f"({_shown(line.value)}): {parent[0]}"
        )
        yield rule.finding(line.at, what, _exec_fix(line.value), docs=parent[1] if parent else "")


#: The kernel ends a PID namespace's other processes with SIGKILL when its init exits.
_PID_NAMESPACES = (
    "https://man7.org/linux/man-pages/man7/pid_namespaces.7.html (if the init process of a PID "
    "namespace terminates, the kernel terminates all of the processes in the namespace via "
    "SIGKILL)"
)

_DUMB_INIT = (
    "https://github.com/Yelp/dumb-init (by default signals go to the child's whole process "
    "group; a signal like SIGTERM received by a shell isn't forwarded to subprocesses)"
)

_SUPERVISORD_STOPASGROUP = (
    "http://supervisord.org/configuration.html#program-x-section-settings (stopsignal goes to "
    "the program's process; to its whole group only with stopasgroup)"
)


def _shell_parent(app: AppServer, kind: str) -> tuple[str, str] | None:
    """What happens to SIGTERM when the shell that runs `kind` as its child is not PID 1 (a
    supervisord program's shell, or the child of an init the container runs: `tini`,
    `dumb-init`, compose's `init: true`), and the backing for it; None for a PID-1 shell."""
    if app.supervised is not None:
        what = (
            f"supervisord stops the program {app.supervised.value} ({app.supervised.at}) by "
            "sending its stop signal to that shell alone, which, not PID 1, dies of it at once "
            f"without passing it on; supervisord counts the program stopped, and {kind}, left "
            "running, never gets the signal and is SIGKILLed with the container: no graceful "
            "shutdown, in-flight requests are cut"
        )
        return what, _SUPERVISORD_STOPASGROUP
    compose = app.container.init if app.container is not None else None
    init = app.init or (Setting("tini", compose.at) if compose is not None else None)
    if init is None:
        return None
    if init.value == S6_INIT:
        return _s6_parent(init.at, kind)
    words = init.value.split()
    name = (
        "compose's `init: true` (tini)"
        if compose is not None and app.init is None
        else (f"`{init.value}`")
    )
    group = (words[0] == "dumb-init" and not {"-c", "--single-child"} & set(words)) or (
        words[0] in ("tini", "docker-init") and "-g" in words
    )
    gets = (
        f"it passes SIGTERM to the shell's whole process group, so {kind} gets it too, but the "
        "shell dies of it at once"
        if group
        else f"it passes SIGTERM to its child alone, the shell, which, not PID 1, dies of it at "
        f"once without passing it on to {kind}"
    )
    what = (
        f"the shell is not PID 1: {name} ({init.at}) is, and {gets}; the init exits with its "
        f"child, and the kernel SIGKILLs {kind} as the container's PID 1 ends: no graceful "
        "shutdown, in-flight requests are cut"
    )
    return (
        what,
        (_DUMB_INIT if words[0] == "dumb-init" else _TINI) + "; " + _PID_NAMESPACES,
    )


def _s6_parent(at: Location, kind: str) -> tuple[str, str]:
    """What happens to SIGTERM when an s6-overlay service's `run` script runs `kind` as the
    shell's child (code4romania/redirectioneaza's backend service), and the backing."""
    what = (
        f"the shell is not PID 1: s6-overlay's /init ({at}) is, and s6-supervise stops the "
        "service by signalling the run script's own process, the shell, which, not PID 1, "
        f"dies of it at once without passing it on; {kind} gets SIGTERM only at the end of "
        "the container's shutdown, when s6-overlay signals every process left, and is "
        "SIGKILLed S6_KILL_GRACETIME later (3 s unless the image sets it): a drain longer "
        "than that is cut"
    )
    return what, _S6_OVERLAY + "; " + _S6_SUPERVISE


def _without_exec(c: Context, *, started: bool) -> Iterator[tuple[AppServer, Setting[str]]]:
    """The servers a script runs as its child, with that line; `started`: those whose script
    the files show a container, pod, unit or process manager starting (else only the ones
    nothing shown starts). The fault promises the shell is PID 1; with no launcher in the files that is a
    guess: a script run by honcho or a Procfile has its whole group signalled."""
    for app in c.apps:
        line = app.without_exec
        if line is None or app.group_signalled is not None or app.reloads is not None:
            # A Procfile's runner signals the script's whole group: SIGTERM reaches the
            # server through the shell (Heroku's dyno manager, honcho, foreman). A --reload
            # server is a developer's: no deploy's requests to drain.
            continue
        if _launched(app, line) == started:
            yield app, line


def _launched(app: AppServer, line: Setting[str]) -> bool:
    """Whether a file shown here starts the script holding `line` (a compose service's or
    manifest's own `sh -c` list: its container is the launcher)."""
    return (
        app.container is not None
        or any(step.file != line.at.file for step in app.launched_by)
        # A script the Dockerfile writes (`RUN echo ... > /entrypoint.sh`) is read only where
        # the image's command runs it: its CMD, a step of the same file, starts it.
        or (dockerfile_name(line.at.file) and any(s != line.at for s in app.launched_by))
    )


@check_rule(
    "entrypoint-without-exec-unlaunched",
    Severity.info,
    "a shell script nothing here starts runs the server without `exec`: as a container's "
    "entrypoint, SIGTERM would never reach it",
    _DOCKER_PID1 + "; " + _POD_TERMINATION,
    kind="fault",
)
def entrypoint_without_exec_unlaunched(rule: Rule, c: Context) -> Iterator[Finding]:
    # Advice, not a fault: nothing here starts the script, so it is as likely a host's
    # hand-run start script or an installer (signalled as a group, or never stopped by a
    # container) as a container's entrypoint; the line and its fix are worth knowing, no more.
    for finding in _unlaunched_scripts(rule, c):
        yield replace(finding, severity=Severity.advice)


def _unlaunched_scripts(rule: Rule, c: Context) -> Iterator[Finding]:
    for app, line, manager in _managers_without_exec(c, started=False):
        yield rule.finding(
            line.at,
            f"the script runs {manager} (which runs {app.kind}) as a child of the shell "
            f"({_shown(line.value)}), and no file given here starts the script: if a container "
            "runs it as its entrypoint, the shell is PID 1, which neither dies of SIGTERM nor "
            f"passes it on, and `docker stop` never reaches {manager}. Check it with the "
            "Dockerfile or manifest that starts it",
            _exec_fix(line.value),
        )
    for app, line in _without_exec(c, started=False):
        if c.walked and not app.script_in_image:
            continue  # no image in the repository holds the script: no container runs it
        if app.without_exec_fix is not None:
            yield rule.finding(
                line.at,
                f"the Python launcher runs {app.kind} as its child ({_shown(line.value)}), "
                "and no file given here starts it: if a container runs it as its entrypoint, "
                "Python is PID 1, which ignores SIGTERM with no handler and never passes it "
                f"on, and `docker stop` never reaches {app.kind}. Check it with the Dockerfile "
                "or manifest that starts it",
                app.without_exec_fix,
            )
            continue
        yield rule.finding(
            line.at,
            f"the script runs {app.kind} as a child of the shell ({_shown(line.value)}), and no "
            "file given here starts the script: if a container runs it as its entrypoint, the "
            "shell is PID 1, which neither dies of SIGTERM nor passes it on, and `docker stop` "
            f"never reaches {app.kind}; run by honcho, foreman or a Procfile, its whole group "
            "is signalled and nothing is lost. Check it with the Dockerfile or manifest that "
            "starts it",
            _exec_fix(line.value),
        )


_DOCKER_SHELL_FORM = (
    "https://docs.docker.com/reference/build-checks/json-args-recommended/ (shell form: the "
    "executable runs as a child process to a shell, which doesn't pass signals); "
    "https://docs.docker.com/reference/dockerfile/#entrypoint (shell form: the executable "
    "will not be the container's PID 1 and will not receive a SIGTERM from docker stop)"
)


@check_rule(
    "shell-form-command",
    Severity.warning,
    "a shell-form CMD or ENTRYPOINT starts the server under /bin/sh: SIGTERM never reaches it",
    _DOCKER_SHELL_FORM + "; " + _POD_TERMINATION,
    kind="fault",
)
def shell_form_command(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        written = app.shell_form
        if written is None or app.reloads is not None:
            continue  # (a --reload server is a developer's: no deploy's requests to drain)
        instruction, _, written_text = written.value.partition(" ")
        # Docker's parser removes each escaped newline before the shell sees the text: the
        # command (and the fix, on one line) is the joined text.
        text = re.sub(r"[ \t]*\\\n\s*", " ", written_text)
        try:
            words = shlex.split(text, comments=True)
        except ValueError:  # the reader split it already; kept for the type checker
            continue
        # Exec form when the shell has nothing to expand; else `exec` keeps the shell's
        # expansion and hands PID 1 to the server. A list (`a && b`) keeps its shell, with
        # `exec` before its last command: exec form would pass `&&` to the first program.
        joined = text
        last = list(re.finditer(r"(&&|\|\||;)\s*", joined))
        child = _child_program(joined[last[-1].end() :] if last else joined)
        if last and any(w in ("&&", "||", ";") or w.endswith(";") for w in words):
            found = last[-1]
            head, rest = joined[: found.start()].rstrip(), joined[found.end() :]
            fix = f"{instruction} {head} {found[1]} {_with_exec(rest)}"
        elif re.search(r"[$`*?~]", text):
            fix = f"{instruction} {_with_exec(text)}"
        else:
            fix = f"{instruction} {json.dumps(words)}"
        runs = f"{child} (which runs {app.kind})" if child not in ("", app.kind) else app.kind
        init = app.container.init if app.container is not None else None
        if init is not None:
            # Docker's init is PID 1 and signals its one child, the shell: not PID 1, the
            # shell dies of SIGTERM at once, the init exits with it (tini's README), and the
            # kernel SIGKILLs the rest of the container's processes as its PID 1 ends.
            what = (
                f"{instruction} in shell form runs `/bin/sh -c {_shown(text)}` under compose's "
                f"`init: true` ({init.at}): the init (tini) is PID 1 and passes SIGTERM to "
                f"/bin/sh alone, which is not PID 1 and dies of it at once without passing it "
                f"on to {runs}; the init exits with its child, and {app.kind} is SIGKILLed as "
                "the container ends, with requests in flight"
            )
        else:
            what = (
                f"{instruction} in shell form runs `/bin/sh -c {_shown(text)}`: /bin/sh "
                f"({app.shell_form_sh or sh_words('')}) stays PID 1 with {runs} as its child, "
                "and a shell "
                "that is PID 1 neither passes SIGTERM on nor dies of it, so `docker stop` or a "
                f"rollout never reaches {app.kind}: it is SIGKILLed at the end of the grace "
                "period (10 s by default), with requests in flight"
            )
        finding = rule.finding(
            written.at, what, fix + _and_uwsgi_stop(app), docs=_TINI if init else ""
        )
        yield _group_signalled(app, finding)


def _group_signalled(app: AppServer, finding: Finding) -> Finding:
    """The warning as a note when what stops the server signals every process, not PID 1
    alone (Heroku's dyno manager for an image heroku.yml builds): the shell in front of it
    then keeps no signal from it, and the fix only tidies."""
    if app.group_signalled is None:
        return finding
    return replace(
        finding,
        severity=Severity.info,
        message=f"{finding.message} (a note, not a warning: what stops it here is "
        f"{app.group_signalled.value}, so {app.kind} gets SIGTERM all the same; the fix "
        "matters wherever else the image runs)",
    )


#: Docker's init (`init: true`, `docker run --init`) is tini.
_S6_OVERLAY = (
    "https://github.com/just-containers/s6-overlay#customizing-s6-overlay-behaviour "
    "(S6_KILL_GRACETIME, default 3000: how long s6 waits, at the end of the shutdown procedure "
    "when all the processes have received a TERM signal, for them to die before sending a KILL "
    "signal)"
)
_S6_SUPERVISE = (
    "https://skarnet.org/software/s6/s6-svc.html (-d: sends the service a SIGTERM and a "
    "SIGCONT, to its process: the run script's, or what it execs into)"
)
_TINI = (
    "https://docs.docker.com/reference/compose-file/services/#init; "
    "https://github.com/krallin/tini (signals go to the child; when it exits, Tini exits as "
    "well); https://github.com/krallin/tini/issues/180 (the kernel SIGKILLs the processes "
    "left in the PID namespace when tini returns)"
)


def _and_uwsgi_stop(app: AppServer) -> str:
    """For uWSGI whose config was not read (so uwsgi-sigterm-reloads cannot say it): the
    stop it needs once SIGTERM reaches it, as part of the same fix; uWSGI 2.0 reloads on
    SIGTERM without die-on-term."""
    if app.kind != "uwsgi" or app.die_on_term is not None or app.missing_config is None:
        return ""
    return (
        f"   and, unless {app.missing_config.value} (not read here) sets them, in it: "
        f"{_UWSGI_GRACEFUL_STOP}   (uWSGI 2.0 reloads on SIGTERM without die-on-term)"
    )


def _child_program(command: str) -> str:
    """The program of the shell's last command when it is another program that runs the
    server (`/usr/bin/supervisord -c ...` is supervisord), past `exec` and `VAR=value`
    words; "" for the server itself, a wrapper that execs it (`poetry run`, `gosu`), Python,
    or a command that cannot be split."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return ""
    words = [w for w in words if w != "exec" and not re.match(r"\A[A-Za-z_]\w*=", w)]
    program = words[0].rsplit("/", 1)[-1] if words else ""
    return "" if program in WRAPPERS or program.startswith("python") else program


_DOCKER_MULTI_SERVICE = (
    "https://docs.docker.com/engine/containers/multi-service_container/ (several processes "
    "in one container: a wrapper script or a process manager that passes signals on)"
)


#: `& pid=$!` after a backgrounded command: the script keeps the server's pid in `pid`.
_PID_KEPT = re.compile(r"&\s*(?P<name>[A-Za-z_]\w*)=\$!\s*;?\s*\Z")


@check_rule(
    "background-server-without-trap",
    Severity.warning,
    "a script starts the server in the background with no trap: SIGTERM never reaches it",
    _DOCKER_PID1 + "; " + _DOCKER_MULTI_SERVICE + "; " + _POD_TERMINATION,
    kind="fault",
)
def background_server_without_trap(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        line = app.backgrounded
        if line is None or app.reloads is not None:
            continue
        by_config = app.daemonizes is not None and app.daemonizes.at.file != line.at.file
        if by_config and not _launched(app, line):
            # A host's start script whose server detaches by its own config (uWSGI's
            # `daemonize = LOG`): stopped by its pidfile (`uwsgi --stop`), never by a signal to
            # the script (Slicer/slicer_download's bin/start and bin/stop).
            continue
        # A line that keeps the pid itself (`cmd & pid=$!`): the fix keeps its name.
        kept = _PID_KEPT.search(line.value)
        pid = kept["name"] if kept else "APP_PID"
        written = line.value[: kept.start()] if kept else line.value
        # In the foreground of its own `&`, not daemonized: `$!` is then the server's pid.
        started = " ".join(w for w in written.rstrip("&").split() if w not in ("-D", "--daemon"))
        yield rule.finding(
            line.at,
            f"the script starts {app.kind} in the background ({_shown(line.value)}) and has no "
            "`trap`: SIGTERM from `docker stop` or a rollout goes to PID 1 (the shell, or the "
            f"process it execs last), never to {app.kind}, which is SIGKILLed with the "
            "container, cutting its requests in flight",
            f"{started} & {pid}=$!   then   trap 'kill -TERM ${pid}' TERM INT   and the "
            "other process in the background too, with `wait` last (bash runs a trap only "
            "between commands, and `wait` returns for it); or a process manager (supervisord) "
            "that stops each program with its own signal",
        )


_UWSGI_THINGS_TO_KNOW = (
    "https://uwsgi-docs.readthedocs.io/en/latest/ThingsToKnow.html (till uWSGI 2.1, SIGTERM "
    "brutally reloads the stack; enable die-on-term); "
    "https://github.com/unbit/uwsgi/issues/849 (a graceful stop on SIGTERM: hook-master-start "
    "= unix_signal:15 gracefully_kill_them_all); "
    "https://uwsgi-docs.readthedocs.io/en/latest/Management.html (the signal table)"
)


@check_rule(
    "uwsgi-sigterm-reloads",
    Severity.warning,
    "uWSGI 2.0 under a container platform reloads on SIGTERM instead of stopping",
    _UWSGI_THINGS_TO_KNOW + "; " + _POD_TERMINATION,
    kind="fault",
)
def uwsgi_sigterm_reloads(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        if app.kind != "uwsgi" or not (app.command_line or app.container is not None):
            continue  # an ini on its own: started by systemd or the Emperor, who send others
        if app.die_on_term is not None or app.missing_config is not None:
            continue  # set, or perhaps set in the config file the command names but was not read
        if _daemonized(app):
            # `--daemonize LOG`: the master forks away from whatever started it, so no
            # supervisor, container or platform sends it SIGTERM (it is stopped by its pidfile
            # or `--stop`): the rule's premise does not hold (SEED-platform/seed).
            continue
        if stop_signal(app) != "TERM":
            # Stopped with another signal (supervisord's `stopsignal = USR1` prints uWSGI's
            # stats and waits for the SIGKILL on purpose): SIGTERM never comes; KILL, INT and
            # QUIT are stop-signal-quick-shutdown's.
            continue
        platform = (
            _stopper(app.container)
            if app.container is not None
            else "whatever runs this command (docker stop, Kubernetes, Heroku and "
            "supervisord's default stopsignal all send SIGTERM)"
        )
        # The fix goes into the config file when there is one: at its first line (`[uwsgi]`),
        # where die-on-term and the hook are added; else on the command line.
        at = app.config_file or app.workers.at
        dropped = _sigterm_dropped(app)
        when = (
            f"once {dropped} passes SIGTERM on (the finding there), uWSGI is stopped with it "
            f"by {platform}, and "
            if dropped
            else f"uWSGI started by a command line is stopped with SIGTERM by {platform}: "
        )
        finding = rule.finding(
            at,
            f"{when}in every uWSGI 2.0 release (2.1, unreleased, changes the default) SIGTERM "
            "brutally reloads the workers instead of stopping, so the stop waits out the grace "
            "period and ends in SIGKILL, with in-flight requests cut twice",
            _UWSGI_GRACEFUL_STOP
            if app.config_file is not None or app.workers.at.file.suffix == ".ini"
            else f"--die-on-term --hook-master-start 'unix_signal:15 {_GRACEFULLY}'   (or "
            f"in its ini file: {_UWSGI_GRACEFUL_STOP})",
        )
        yield _unlaunched(app, finding)


def _daemonized(app: AppServer) -> bool:
    """uWSGI's own `--daemonize` / `--daemonize2` on the line that starts it, or `daemonize =`
    in its config: it detaches."""
    line = app.detached or app.backgrounded
    if app.daemonizes is not None and app.daemonizes.value:
        return True  # `daemonize = LOG` in its config detaches it the same way
    return line is not None and any(
        w.partition("=")[0] in ("--daemonize", "--daemonize2") for w in line.value.split()
    )


def _unlaunched(app: AppServer, finding: Finding) -> Finding:
    """The warning as a note when the server's only start is a script no file here starts
    (a host's start script): a fault in a file nothing starts is a note at most."""
    link = app.without_exec or app.backgrounded or app.shell_form or app.detached
    # A shell-form CMD / ENTRYPOINT is the image's own start: a container runs it.
    if link is None or link is app.shell_form or _launched(app, link):
        return finding
    return replace(
        finding,
        severity=Severity.info,
        message=f"{finding.message} (a note, not a warning: no file given here starts "
        f"{link.at.file.name}, so what stops it is not known)",
    )


def _sigterm_dropped(app: AppServer) -> str:
    """The link of the chain that keeps SIGTERM from the server, as `file:line` words (the
    shell script without `exec`, the shell-form CMD, the backgrounded line); empty when
    SIGTERM reaches it."""
    if app.without_exec is not None and app.group_signalled is None:
        return f"the script ({app.without_exec.at})"
    if app.shell_form is not None:
        return f"the shell-form command ({app.shell_form.at})"
    if app.backgrounded is not None:
        return f"the script ({app.backgrounded.at})"
    return ""


#: uWSGI 2.0's graceful stop on SIGTERM: die-on-term alone stops at once (SIGTERM is then
#: SIGINT's "kill the entire stack", cutting requests in flight: seen on uWSGI 2.0.30); the
#: master hook makes SIGTERM drain them within worker-reload-mercy (60 s by default).
_GRACEFULLY = "gracefully_kill_them_all"
_UWSGI_GRACEFUL_STOP = (
    f"die-on-term = true   and   hook-master-start = unix_signal:15 {_GRACEFULLY}"
)


@check_rule(
    "uwsgi-sigterm-cuts-requests",
    Severity.warning,
    "uWSGI 2.0 with die-on-term stops at once on SIGTERM, killing requests in flight",
    _UWSGI_THINGS_TO_KNOW + "; " + _POD_TERMINATION,
    kind="fault",
)
def uwsgi_sigterm_cuts_requests(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        if app.kind != "uwsgi" or not (app.command_line or app.container is not None):
            continue  # an ini on its own: started by systemd or the Emperor, who send others
        if app.die_on_term is None or not app.die_on_term.value or stop_signal(app) != "TERM":
            continue  # no die-on-term (uwsgi-sigterm-reloads), or stopped with another signal
        if app.sigterm_drains is not None or app.reloads is not None:
            continue
        if app.front_drains_first is not None:
            # supervisord stops the nginx in front first, gracefully, and only then the
            # server: nothing is in flight when SIGTERM comes (JobtechSwe/sokannonser-api).
            continue
        if app.front_stops_with is not None:
            # The nginx in front gets the same SIGTERM at the same moment and shuts down at
            # once (its fast shutdown): a drain would answer into closed connections.
            continue
        yield rule.finding(
            app.die_on_term.at,
            "die-on-term makes SIGTERM uWSGI 2.0's immediate stop (the signal table's \"kill "
            'the entire uWSGI stack", as SIGINT): the workers are killed with their requests '
            "in flight, so every deploy or rollout cuts them (a 502 behind nginx) instead of "
            "letting them finish",
            f"hook-master-start = unix_signal:15 {_GRACEFULLY}   (beside die-on-term: SIGTERM "
            "then lets each worker finish its request, within worker-reload-mercy, 60 s by "
            "default)",
        )


_K8S_TERMINATION = (
    "https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination"
)


_COMPOSE_STOP = "https://docs.docker.com/reference/compose-file/services/#stop_grace_period"


@check_rule(
    "grace-period-below-shutdown",
    Severity.warning,
    "the container is killed before preStop and the app server's graceful shutdown have finished",
    "terminationGracePeriodSeconds counts from the start of preStop; SIGKILL follows when it "
    f"ends: {_K8S_TERMINATION}; compose's stop_grace_period (10 s by default): {_COMPOSE_STOP}",
    kind="fault",
)
def grace_period_below_shutdown(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        box = app.container
        if box is None or box.grace_period_s is None or app.graceful_timeout is None:
            continue
        grace = box.grace_period_s
        if box.platform != "kubernetes" and app.graceful_timeout.default:
            # Both at their defaults: nobody chose a shutdown time to keep; a stop_grace_period
            # written shorter than the default graceful timeout is a chosen fast stop.
            continue
        if not _signal_arrives(app):
            continue  # no graceful stop to wait for: the rule about the signal says it
        prestop = box.prestop_s.value if box.prestop_s is not None else 0.0
        needed = prestop + app.graceful_timeout.value
        wait = app.stop_wait
        if wait is not None and wait.value < min(grace.value, needed):
            # A process manager inside (honcho's 5 s KILL_WAIT, supervisord's stopwaitsecs)
            # kills the server first: a longer grace alone cannot help, and
            # stop-wait-below-graceful names the wait to change first.
            continue
        if grace.value < needed:
            related = (app.graceful_timeout.at,) + (
                (box.prestop_s.at,) if box.prestop_s is not None else ()
            )
            name = _stop_grace_name(box)
            wanted = math.ceil(needed) + 5
            before = f"preStop {figure(prestop)} s + " if box.platform == "kubernetes" else ""
            when = (
                "on every rollout the kubelet kills"
                if box.platform == "kubernetes"
                else "on every stop or redeploy docker kills"
                if box.platform == "compose"
                else f"on every stop or redeploy {_stopper(box)} kills"
            )
            yield rule.finding(
                grace.at,
                f"{name} {as_shown(grace, ' s')} is below {before}the graceful timeout "
                f"{as_shown(app.graceful_timeout, ' s')}: {when} "
                "requests the server was still allowed to finish",
                _grace_fix(box, wanted),
                related,
                backing=box.words.grace_doc if box.words is not None else None,
            )


_SUPERVISORD_STOP = (
    "http://supervisord.org/configuration.html#program-x-section-settings (stopsignal: TERM "
    "by default; stopwaitsecs: 10 by default, then a final SIGKILL)"
)

#: Each process manager's word on its wait after the stop signal, by the name of its setting
#: (supervisord's otherwise).
_STOP_WAIT_DOCS = {
    "TimeoutStopSec": "https://www.freedesktop.org/software/systemd/man/latest/systemd.service."
    "html#TimeoutStopSec= (then SIGKILL; DefaultTimeoutStopSec 90 s); "
    "https://www.freedesktop.org/software/systemd/man/latest/systemd.kill.html#KillSignal=",
    "honcho's KILL_WAIT": "https://github.com/nickstenning/honcho/blob/main/honcho/manager.py "
    "(KILL_WAIT = 5: once a process exits, the others get SIGTERM, then SIGKILL 5 s later; "
    "each process runs in its own process group, signalled with killpg)",
    "foreman's -t timeout": "https://ddollar.github.io/foreman/ (start -t, --timeout: how long "
    "processes have to shut down gracefully before SIGKILL, 5 s by default)",
}

#: Each server's own word on what it waits for after SIGTERM.
_GRACEFUL_DOCS = {
    "gunicorn": f"{GUNICORN_DOCS}#graceful-timeout",
    "uvicorn": "https://www.uvicorn.org/settings/#timeouts (--timeout-graceful-shutdown)",
    "granian": "https://github.com/emmett-framework/granian#options (--workers-kill-timeout)",
    "hypercorn": f"{HYPERCORN_DOCS} (graceful_timeout, --graceful-timeout)",
}


@check_rule(
    "stop-wait-below-graceful",
    Severity.warning,
    "the process manager SIGKILLs the server before its graceful shutdown may end",
    _SUPERVISORD_STOP + "; the server's graceful timeout (" + GUNICORN_DOCS + "#graceful-timeout)",
    kind="fault",
)
def stop_wait_below_graceful(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        wait, graceful = app.stop_wait, app.graceful_timeout
        if wait is None or graceful is None or graceful.value <= 0:
            continue
        if wait.default and graceful.default:
            continue  # both left at their defaults: nobody chose a shutdown time to keep
        if not _stops_gracefully(app):
            # No graceful wait at all (stop-signal-quick-shutdown says a quick one), or a
            # signal the server does not stop on (`stopsignal = USR1`): the wait is the stop.
            continue
        # What the server still finishes after SIGTERM: its graceful timeout, or less when
        # its request timeout ends every request sooner.
        bound, why = graceful.value, f"graceful timeout {as_shown(graceful, ' s')}"
        timeout = app.request_timeout
        if timeout is not None and caps_requests(app) and 0 < timeout.value < bound:
            bound, why = timeout.value, f"request timeout {as_shown(timeout, ' s')}"
        if wait.value >= bound:
            continue
        fix = (app.stop_wait_fix or f"{app.stop_wait_name} = {{}}").format(math.ceil(bound) + 5)
        box = app.container
        if box is not None and box.grace_period_s is not None:
            platform = _platform_wait(app)
            if platform is not None and platform < bound:
                # The container's own grace comes next: the two fixes go together
                # (grace-period-below-shutdown holds back while this wait is the shorter).
                extra = (box.prestop_s.value if box.prestop_s is not None else 0.0) + bound
                wanted = _grace_fix(box, math.ceil(extra) + 10)
                fix += f"   and with it {wanted} ({box.grace_period_s.at})"
        elif box is None and bound > _DOCKER_STOP_GRACE_S and _in_image(app):
            # An image's process manager, run by whatever starts the container: `docker stop`
            # SIGKILLs it all 10 s after SIGTERM unless told to wait longer, so the longer
            # wait alone would still end at 10 s.
            need = math.ceil(bound) + 10
            fix += (
                f"   and with it the container's stop timeout past it (Docker's is "
                f"{figure(_DOCKER_STOP_GRACE_S)} s by default): `docker stop -t {need}` or "
                f"`docker run --stop-timeout {need}`, compose's stop_grace_period: {need}s, "
                f"Kubernetes' terminationGracePeriodSeconds: {need}"
            )
        finding = rule.finding(
            wait.at,
            f"{app.stop_wait_name} {as_shown(wait, ' s')} is below {app.kind}'s {why}: on "
            f"every stop or restart the process manager SIGKILLs {app.kind} {figure(wait.value)} "
            f"s after the stop signal, cutting requests {app.kind} was still allowed to finish",
            fix,
            (graceful.at,),
            backing=_STOP_WAIT_DOCS.get(app.stop_wait_name, _SUPERVISORD_STOP)
            + "; "
            + _GRACEFUL_DOCS.get(app.kind, f"{GUNICORN_DOCS}#graceful-timeout")
            + ("; " + _DOCKER_STOP if "docker stop -t" in fix else ""),
        )
        yield _deliberate_wait(finding, app)


def _deliberate_wait(finding: Finding, app: AppServer) -> Finding:
    """The finding as a note when the stop wait was written short on purpose (`stopwaitsecs =
    5`, `TimeoutStopSec=5`) against a graceful timeout nobody set, and no request timeout is
    set either: nothing in the files says a request runs longer than the wait chosen. A
    graceful timeout or timeout written longer keeps it a warning."""
    wait, graceful, timeout = app.stop_wait, app.graceful_timeout, app.request_timeout
    if wait is None or wait.default or graceful is None or not graceful.default:
        return finding
    if timeout is not None and not timeout.default:
        return finding
    return replace(
        finding,
        severity=Severity.info,
        message=f"{finding.message} (a note, not a warning: the wait was written, and the "
        f"graceful timeout is {app.kind}'s default, with no timeout set: nothing here says a "
        "request runs that long)",
    )


#: `docker stop`'s wait after SIGTERM before SIGKILL (compose's DOCKER_STOP_GRACE_S: that
#: module needs PyYAML, which `check` without compose files does not).
_DOCKER_STOP_GRACE_S = 10.0

_DOCKER_STOP = (
    "https://docs.docker.com/reference/cli/docker/container/stop/ (--timeout: seconds to wait "
    "before killing the container, 10 by default)"
)


def _in_image(app: AppServer) -> bool:
    """Whether a Dockerfile's command starts the server (its container, whatever runs it)."""
    return any(dockerfile_name(at.file) for at in app.launched_by)


_GUNICORN_SIGNALS = (
    "https://docs.gunicorn.org/en/stable/signals.html (TERM: graceful shutdown, waiting for "
    "workers to finish their requests up to graceful_timeout; INT, QUIT: quick shutdown)"
)


#: Signals written by number (`STOPSIGNAL 3`, `stopsignal` takes names only), by name: the
#: numbers signal(7) gives every Linux architecture servertune's images run on.
_SIGNAL_NAMES = {"1": "HUP", "2": "INT", "3": "QUIT", "9": "KILL", "15": "TERM"}


def stop_signal(app: AppServer) -> str:
    """The name (without SIG) of the signal the server is stopped with: the one the files name
    (supervisord's `stopsignal`, systemd's `KillSignal=`, a Dockerfile's `STOPSIGNAL`, compose's
    `stop_signal`), else TERM, every platform's default."""
    signal = app.stop_signal
    if signal is None:
        return "TERM"
    return _SIGNAL_NAMES.get(signal.value, signal.value)


def _stops_gracefully(app: AppServer) -> bool:
    """Whether the server's stop signal starts a graceful stop: SIGTERM (uWSGI's with the hook,
    a rule of its own), or SIGINT for the ASGI servers, which shut down gracefully on either
    (gunicorn's INT and QUIT are its quick shutdown, uWSGI's its "kill the entire stack"). Not
    SIGKILL, and not a signal the server does not stop on at all (USR1: uWSGI's stats)."""
    name = stop_signal(app)
    return name == "TERM" or (name == "INT" and app.kind not in ("gunicorn", "uwsgi"))


_UWSGI_SYSTEMD = (
    "https://uwsgi-docs.readthedocs.io/en/latest/Systemd.html (the unit uWSGI documents for "
    "systemd: KillSignal=SIGQUIT)"
)


def _die_on_term_written(app: AppServer) -> bool:
    """Whether uWSGI's own config or command line turns `die-on-term` on (not a master hook
    on signal 15, nor a value read from the stop signal's line): with it uWSGI swaps
    SIGTERM and SIGQUIT (core/master.c: SIGQUIT becomes `reap_them_all`, the brutal reload)."""
    die, signal = app.die_on_term, app.stop_signal
    if die is None or not die.value or (signal is not None and die.at == signal.at):
        return False
    try:
        line = die.at.file.read_text(errors="replace").splitlines()[die.at.line - 1]
    except (OSError, IndexError):
        return False
    return bool(re.search(r"die[-_]on[-_]term", line))


def _uwsgi_quit(rule: Rule, app: AppServer, signal: Setting[str], fix: str) -> Finding:
    """uWSGI stopped with SIGQUIT. Without die-on-term it is uWSGI's documented stop (its
    systemd page's `KillSignal=SIGQUIT`, the signal table's "kill the entire uWSGI stack"):
    a chosen quick stop, said as advice naming the graceful way. With die-on-term uWSGI
    swaps SIGTERM and SIGQUIT, so SIGQUIT brutally reloads it and the stop ends only when
    its manager kills it: wrong by uWSGI's own docs, a warning."""
    die = app.die_on_term
    if die is not None and _die_on_term_written(app):
        return rule.finding(
            signal.at,
            f"SIGQUIT does not stop this uWSGI: die-on-term ({die.at}) swaps SIGTERM and "
            "SIGQUIT, so SIGQUIT brutally reloads the workers (the signal table's SIGTERM "
            "without die-on-term) and the stop ends only when the manager kills it, with the "
            "requests in flight",
            fix,
        )
    finding = rule.finding(
        signal.at,
        "SIGQUIT stops uWSGI at once (uWSGI's own systemd unit uses it; the signal table's "
        '"kill the entire uWSGI stack"): a quick stop by uWSGI\'s recipe, which cuts the '
        "requests in flight; a graceful stop is SIGTERM with die-on-term and the master hook "
        "(die-on-term alone makes SIGTERM the same immediate stop)",
        fix,
    )
    return replace(finding, severity=Severity.advice)


@check_rule(
    "stop-signal-quick-shutdown",
    Severity.warning,
    "the server is stopped with a signal that gives it no graceful stop (SIGKILL; gunicorn's or "
    "uWSGI's quick shutdown on INT or QUIT)",
    _GUNICORN_SIGNALS
    + "; "
    + _UWSGI_THINGS_TO_KNOW
    + "; "
    + _SUPERVISORD_STOP
    + "; "
    + _UWSGI_SYSTEMD
    + "; "
    "https://docs.docker.com/reference/dockerfile/#stopsignal; signal(7) (SIGKILL cannot be "
    "caught, blocked, or ignored): https://man7.org/linux/man-pages/man7/signal.7.html",
    kind="fault",
)
def stop_signal_quick_shutdown(rule: Rule, c: Context) -> Iterator[Finding]:
    for app in c.apps:
        signal, name = app.stop_signal, stop_signal(app)
        if signal is None or app.reloads is not None:
            continue  # (a --reload server is a developer's: no deploy's requests to drain)
        if name != "KILL" and (
            app.kind not in ("gunicorn", "uwsgi") or name not in ("INT", "QUIT")
        ):
            continue
        fix = app.stop_signal_fix or "stop it with SIGTERM"
        if app.kind == "uwsgi":
            # uWSGI 2.0's SIGTERM drains only with the master hook (and reloads without
            # die-on-term). A die_on_term read from the stop signal's own line is that
            # signal, not the config's option: SIGTERM would still reload without it.
            hook = f"hook-master-start = unix_signal:15 {_GRACEFULLY}"
            set_ = (
                app.die_on_term is not None
                and app.die_on_term.value
                and app.die_on_term.at != signal.at
            )
            fix += f"   and in uWSGI's config: {hook if set_ else _UWSGI_GRACEFUL_STOP}"
        if name == "KILL":
            wait = (
                f" ({app.stop_wait_name} {figure(app.stop_wait.value)} s never applies)"
                if app.stop_wait is not None and app.stop_wait_name
                else ""
            )
            yield rule.finding(
                signal.at,
                f"SIGKILL stops {app.kind} with no graceful stop at all{wait}: it cannot be "
                "caught, so the workers die at once with their requests in flight on every "
                "stop, restart or deploy",
                fix,
            )
        elif app.kind == "uwsgi" and name == "QUIT":
            yield _uwsgi_quit(rule, app, signal, fix)
        elif app.kind == "uwsgi":
            # uWSGI 2.0's signal table: INT "kills the entire uWSGI stack" at once,
            # die-on-term or not; only SIGTERM with the master hook drains.
            yield rule.finding(
                signal.at,
                f"SIG{name} stops uWSGI at once (the signal table's \"kill the entire uWSGI "
                'stack", with or without die-on-term): the workers are killed with their '
                "requests in flight, so every stop or deploy cuts them",
                fix,
            )
        else:
            yield rule.finding(
                signal.at,
                f"SIG{name} stops gunicorn with its quick shutdown: the workers exit at once, "
                "without waiting for their requests (graceful_timeout applies to SIGTERM "
                "only), so every stop or deploy cuts requests in flight",
                fix,
            )
