"""What `servertune check` reads and reports: settings with their file:line, app servers, nginx sites, findings.

The readers (one module per config format) turn a file into these values; the rules read only
these values, so a rule never knows which parser produced a number.
"""

from __future__ import annotations

import contextvars
import enum
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Literal, TypeVar

__all__ = [
    "ASSUMED_UNSET",
    "DEVELOPMENT_SERVER_DEPLOYED",
    "FRONT_PORT_MISSED",
    "IGNORED_BY_PLATFORM",
    "S6_INIT",
    "SERVERS",
    "SERVERS_READ",
    "UNCALLED",
    "AppServer",
    "Balancer",
    "CheckInputError",
    "Container",
    "Finding",
    "Location",
    "NginxConfig",
    "NotSupported",
    "Note",
    "PassTarget",
    "PlatformWords",
    "Probe",
    "RuleKind",
    "Setting",
    "Severity",
    "StartedWith",
    "Upstream",
    "collect_notes",
    "evaluating_for",
    "evaluation_cores",
    "note",
    "note_nothing_to_check",
    "server_program",
]

#: The app servers whose command lines and configs check reads, as messages name them.
SERVERS_READ = "gunicorn, uvicorn, granian, Hypercorn, Daphne, waitress, uWSGI"
#: The servers whose command lines `check` reads, by their own program (and module) names.
SERVERS = ("gunicorn", "uvicorn", "granian", "uwsgi", "hypercorn", "daphne", "waitress")
#: The names distributions install a server's program under besides its own: Debian and
#: Ubuntu's python3-gunicorn `/usr/bin/gunicorn3`, Fedora's `gunicorn-3` / `gunicorn-3.9`,
#: Debian's uwsgi-core binary (`/usr/bin/uwsgi` is an alternative pointing to it) and the links
#: uwsgi-plugin-python3 installs to run it with the Python plugin (`uwsgi_python3`,
#: `uwsgi_python311`): the same server, its options the same. waitress's console script is
#: `waitress-serve` (its setup.cfg: `waitress-serve = waitress.runner:run`), which Alpine's
#: py3-waitress installs as `waitress-serve-3` too (rr-/szurubooru's image runs that).
_DISTRIBUTION_PROGRAMS = re.compile(
    r"\A(?:(?P<gunicorn>gunicorn)-?3(?:\.[0-9]+)?|(?P<uwsgi>uwsgi)(?:-core|_python[0-9]*)"
    r"|(?P<waitress>waitress)-serve(?:-?3)?)\Z"
)


def server_program(name: str) -> str | None:
    """The server of SERVERS a program `name` (no folder) runs: its own name, or one its
    distribution installs it under (`gunicorn3`, `uwsgi_python3`); None for any other."""
    if name in SERVERS:
        return name
    if name == "pyuwsgi":
        # The pyuwsgi wheel: uWSGI built as a Python extension, its program taking uWSGI's
        # options (bartTC/dpaste's `pyuwsgi --http=:$PORT`).
        return "uwsgi"
    found = _DISTRIBUTION_PROGRAMS.match(name)
    if found is None:
        return None
    return found.group("gunicorn") or found.group("uwsgi") or found.group("waitress")


T = TypeVar("T")


class CheckInputError(ValueError):
    """A file cannot be read as the config it claims to be: one line naming the file and why."""


class NothingToCheck(CheckInputError):
    """A file read as what it is that starts no server check reads (a worker's Dockerfile, a
    Procfile of background processes). Beside files that do, it is just one more file read;
    alone, there is nothing to check."""


class NotFollowed(NothingToCheck):
    """A launch whose next link is not in the files read (a script the image does not hold, a
    program named by a variable set nowhere here): what it starts is not known, which is not
    the same as starting no server. One `not-followed` coverage note saying why."""


class NotSupported(CheckInputError):
    """A file of a kind check knows and does not read (an NGINX Unit config): one coverage
    note, not an error."""


class Severity(enum.IntEnum):
    """How bad a finding is; `--fail-on` compares with this order.

    `error`, `warning` and `info` grade faults: a mechanism by which requests or a graceful
    stop are lost, by the server's or platform's own documentation. `advice` is below them all:
    servertune's plan for a workload, which the files are free to differ from; it is printed
    apart and fails a build only with `--fail-on advice`."""

    advice = 0
    info = 1
    warning = 2
    error = 3


#: What a rule is, declared once with it (`check_rule(..., kind=...)`): a fault it finds
#: (graded error / warning / info), servertune's advice (always `Severity.advice`), or
#: coverage (what check could not see: a note, never a finding).
RuleKind = Literal["fault", "advice", "coverage"]


@dataclass(frozen=True)
class Location:
    """Where a setting was written (line 1 when it is a default or set outside the file)."""

    file: Path
    line: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Setting(Generic[T]):
    """A value as the server will use it, where it was written, and whether it is the default."""

    value: T
    at: Location
    default: bool = False


@dataclass(frozen=True)
class Probe:
    """A Kubernetes readiness / liveness / startup probe: what it asks and how patiently."""

    kind: Literal["readiness", "liveness", "startup"]
    at: Location
    #: What it probes (`httpGet /health :http`, `tcpSocket 8000`, `exec ...`), to compare two.
    target: str
    initial_delay_s: int
    period_s: int
    timeout_s: int
    failure_threshold: int
    #: The port it connects to (`httpGet` / `tcpSocket`), a named port resolved through the
    #: container's `ports`; None for another handler, another host, or a name not declared.
    port: int | None = None


@dataclass(frozen=True)
class PlatformWords:
    """How an application platform (Fly.io, Render, ...) spells what the rules fix, in its own
    file's syntax, and who stops the container: set by the platform's reader, so a rule reads
    the fact and prints the platform's words without knowing the platform."""

    #: Who stops the container on a deploy (`Fly.io`).
    stopped_by: str
    #: The setting that sets the stop grace period (`kill_timeout`), and its line with `{}`
    #: for the seconds (`kill_timeout = {}`); None when the platform fixes it.
    grace_name: str | None = None
    grace_fix: str | None = None
    #: Its documentation: the default and what happens when it ends.
    grace_doc: str = ""
    #: How the CPU and memory limits are spelled (`[[vm]] cpus`).
    cpu_name: str = "cpus"
    memory_name: str = "memory"


@dataclass(frozen=True)
class Container:
    """The container an app server runs in: its CPU and memory requests and limits (cores and
    MiB), the pod's grace period, the preStop wait and the probes, each where it was written.

    Every platform that runs containers fills the fields it has (`platform` says which, so a
    fix is written in that platform's words): a Kubernetes pod all of them, a compose service
    its `cpus` / `mem_limit` / `deploy.resources` and `deploy.replicas`."""

    name: str
    at: Location
    platform: Literal[
        "kubernetes",
        "compose",
        "fly",
        "render",
        "heroku",
        "cloudfoundry",
        "appengine",
        "ecs",
        "railway",
        "digitalocean",
        "nomad",
    ] = "kubernetes"
    cpu_limit: Setting[float] | None = None
    cpu_request: Setting[float] | None = None
    memory_limit_mb: Setting[float] | None = None
    memory_request_mb: Setting[float] | None = None
    #: The pod's terminationGracePeriodSeconds (Kubernetes' default 30 s when absent).
    grace_period_s: Setting[float] | None = None
    #: A preStop that waits (`sleep` handler or `exec sleep N`): seconds before SIGTERM.
    prestop_s: Setting[float] | None = None
    probes: tuple[Probe, ...] = ()
    #: Some container of the pod has a readiness probe (the pod is Ready only when all are).
    pod_ready_probe: bool = False
    #: Timeouts of the Ingresses / HTTPRoutes that route to this pod (through a Service of the
    #: same files): (what it is, e.g. `nginx.ingress.kubernetes.io/proxy-read-timeout`, seconds).
    route_timeouts: tuple[tuple[str, Setting[float]], ...] = ()
    #: The pod's replica count when the manifest sets it.
    replicas: Setting[int] | None = None
    #: Cloud load balancers in front of the pod (a Service's or an Ingress's annotations),
    #: each as (what it is, its idle timeout in seconds where the annotation sets it).
    load_balancers: tuple[tuple[str, Setting[float]], ...] = ()
    #: A Service of type LoadBalancer that selects the pod: its name, where it is written.
    exposed_by: Setting[str] | None = None
    #: The pod's labels, which a Service's selector matches (an Ingress reaches the pod so).
    labels: tuple[tuple[str, str], ...] = ()
    #: The container's named ports (`name: http, containerPort: 8000`), a targetPort may name.
    named_ports: tuple[tuple[str, int], ...] = ()
    #: The `net.core.somaxconn` the container is given (compose `sysctls`, the pod's
    #: `securityContext.sysctls`): the cap on every listen backlog inside it.
    somaxconn: Setting[int] | None = None
    #: An application platform's own words (None for Kubernetes and compose).
    words: PlatformWords | None = None
    #: Compose's `init: true`: Docker's init (tini) is the container's PID 1, runs the
    #: image's command as its one child and forwards the stop signal to that child alone.
    init: Setting[bool] | None = None
    #: The lines of an image built here (its ENTRYPOINT / CMD) that this container's own
    #: `entrypoint` / `command` replaces: that image's command does not run here.
    replaces: tuple[Location, ...] = ()
    #: What in the manifest says a developer's cluster, in words: `imagePullPolicy: Never`
    #: (the image is built into minikube's or kind's own Docker, never pulled), a manifest
    #: under a folder for one (`development.development_folder`).
    development: Setting[str] | None = None
    #: The name that marks a compose service's file for production's stack: the file's
    #: (`docker-compose.prod.yml`) or a folder's of the tree holding it
    #: (`development.production_name`).
    production: str | None = None
    #: The image a compose service pulls as published (`image:`, no `build:`) while it mounts
    #: no folder of the repository over it: a release run as released, not a developer's
    #: live source; None otherwise.
    published: str | None = None
    #: The Dockerfile stage a compose service builds (`build.target`); None for the final
    #: stage, or for a container that builds nothing here.
    stage: str | None = None
    #: The compose service this one `extends` (its file, its name): that service read on its
    #: own is this launch's base, not another launch (mitodl/mit-learn's `web`).
    extends: tuple[Path, str] | None = None
    #: The pod spec a Kubernetes container is one of (its containers share its volumes).
    pod: Location | None = None
    #: The container ports a compose service's `ports:` publishes (each entry's target, short
    #: or long syntax, at its line); None when an entry holds a variable or is not read.
    ports: tuple[Setting[int], ...] | None = ()


#: gunicorn's sync worker as `worker_class` / `-k` may name it.
SYNC_WORKER_CLASSES = frozenset({"sync", "egg:gunicorn#sync", "gunicorn.workers.sync.SyncWorker"})


@dataclass(frozen=True)
class AppServer:
    """One app-server config (gunicorn, its ASGI workers, uWSGI, a uvicorn / granian command
    line, or an NGINX Unit application), reduced to the numbers the rules compare."""

    kind: Literal[
        "gunicorn", "uwsgi", "uvicorn", "granian", "unit", "hypercorn", "daphne", "waitress"
    ]
    file: Path
    workers: Setting[int]
    threads: Setting[int]
    #: The addresses it listens on, as nginx would write them (`127.0.0.1:8001`, `unix:/x.sock`).
    sockets: tuple[Setting[str], ...]
    #: uWSGI map-socket: each socket served by its own worker(s), not shared by all.
    mapped_sockets: bool
    #: gunicorn `keepalive`, uvicorn `--timeout-keep-alive` (None for uWSGI, which speaks the
    #: uwsgi protocol to nginx, and granian, which has no idle timeout to set).
    keepalive: Setting[float] | None
    #: gunicorn `timeout` / uWSGI `harakiri` (0: never); None where the server has none
    #: (uvicorn, granian).
    request_timeout: Setting[float] | None
    graceful_timeout: Setting[float] | None
    max_requests: Setting[int]
    max_requests_jitter: Setting[int]
    backlog: Setting[int]
    worker_class: Setting[str] | None = None
    #: The file computes `workers` from the CPU count the host reports (not the cgroup's quota).
    workers_follow_cpu_count: bool = False
    #: When it does: the count it computes on typical nodes, as (node cores, workers), e.g.
    #: ((16, 33), (64, 129)) for `cpu_count() * 2 + 1`; () when not known.
    workers_on_nodes: tuple[tuple[int, int], ...] = ()
    #: The environment variable the file reads its worker count from first
    #: (`int(os.environ.get("APPRISE_WORKER_COUNT", cpu_count() * 2 + 1))`): the project's own
    #: knob, which a fix keeps; "" when the count reads none.
    workers_env: str = ""
    thunder_lock: Setting[bool] | None = None
    #: uWSGI's `cheaper`: the processes kept at idle, `workers` being the most under load.
    cheaper: Setting[int] | None = None
    #: How it calls the app: 'asgi' for an event loop per process (gunicorn with uvicorn's
    #: worker class), whose thread count means nothing; compared with the plan of that interface.
    interface: Literal["wsgi", "asgi"] = "wsgi"
    #: uvicorn's `--loop` (auto, asyncio, uvloop): uvloop turns TCP_NODELAY on for every
    #: connection it accepts, asyncio's loop does not on uvicorn's workers' sockets. None for
    #: other servers.
    event_loop: Setting[str] | None = None
    #: The container it runs in (a Kubernetes manifest, a compose service), None for a file
    #: read on its own.
    container: Container | None = None
    #: Command-line words only the running container can expand (`--bind :$PORT`): left out.
    unresolved: tuple[Setting[str], ...] = ()
    #: Config paths named through a variable no file read sets, read with it expanded to
    #: empty as the shell does (`${SCRIPTPATH}/uwsgi.ini` as `/uwsgi.ini`), which names a file
    #: the image or repository provides: (the word as written, the path read).
    emptied: tuple[Setting[tuple[str, str]], ...] = ()
    #: An image of the run copies the script that runs it without `exec` (the file, its folder
    #: or the whole build context): a container may run that script as its entrypoint.
    script_in_image: bool = False
    #: The fields of this server (`threads`, `keepalive`, ...) whose value the files write
    #: but check could not work out (`threads = int(getenv("T", f() * 2))`, `--timeout-keep-alive
    #: $KA`): read as the server's default for the launch graph, never judged by a rule.
    unknown: frozenset[str] = frozenset()
    #: Words a Dockerfile's exec-form CMD / ENTRYPOINT hands the server as written
    #: (`"${GUNICORN_WORKERS:-4}"`): no shell runs, so nothing expands them.
    unexpanded: tuple[Setting[str], ...] = ()
    #: An exec-form CMD / ENTRYPOINT whose one string is the whole command line, as written
    #: (`uwsgi --ini uwsgi.ini`): Docker runs a program of that name; read split, a guess.
    one_string_exec: Setting[str] | None = None
    #: A config file the command line names (`gunicorn -c`, `uwsgi --ini`) that is not among
    #: the files read: its settings were not checked.
    missing_config: Setting[str] | None = None
    #: The config file its command line names (or gunicorn's default `./gunicorn.conf.py`),
    #: found and read: a step of its launch chain even when it sets nothing the rules read.
    config_file: Location | None = None
    #: The Python launcher that holds the server's command line (`uvicorn.run(...)`'s
    #: keywords, a `subprocess` argv), at its call: a step that starts the server, never its
    #: config (a gunicorn `BaseApplication`'s options dict is: `pylauncher.loads_config`).
    launcher: Path | None = None
    #: The other files the config reads in place as parts of this one instance (uWSGI's
    #: `ini =`, `include`, a `for-glob` loop's files): steps of its launch chain, never
    #: launches of their own, even those setting nothing the rules read.
    config_parts: tuple[Path, ...] = ()
    #: Started by a command line (its settings are spelled as flags in a fix: `--workers 2`).
    command_line: bool = False
    #: A supervisor process listens on the sockets before the workers have imported the app
    #: (gunicorn's arbiter without `preload_app`): a TCP connection is accepted by the kernel
    #: while no worker can answer it yet. Not uvicorn (`--workers N` binds in the parent but
    #: listens in each worker once the app is loaded) nor granian 2.8 on Linux (each worker
    #: opens its own socket after loading the app).
    listens_before_app: bool = False
    #: Started through a launcher that sets TCP_NODELAY on the listening socket before the
    #: server binds (servertune's uvicorn.sh: `python -c CODE uvicorn ...`).
    listener_nodelay: bool = False
    #: Single-value options its command line gives twice, as (first, last) words: the server's
    #: parser keeps the last, so whatever the first says is silently dropped.
    repeated_options: tuple[tuple[Setting[str], Setting[str]], ...] = ()
    #: Command-line words that hold an option and its value in one argument (`"--bind
    #: 0.0.0.0:8000"`, an exec-form item or a quoted word): the server's parser never sees
    #: the option.
    joined_options: tuple[Setting[str], ...] = ()
    #: gunicorn's `-p`/`--pid` (its pidfile) given a bare number (`-p 8000`): written as a
    #: port, it names the file gunicorn writes its pid to. The number as written.
    numeric_pidfile: Setting[str] | None = None
    #: The script line that starts the server as a child of the shell (no `exec`): the shell
    #: stays the container's PID 1 and never passes SIGTERM on. None when it `exec`s.
    without_exec: Setting[str] | None = None
    #: When `without_exec` is a Python launcher's call (`os.system(...)`, `subprocess.run`),
    #: the `os.execvp(...)` that replaces it: Python, not a shell, stays PID 1. None for a
    #: shell's line, whose fix is `exec` before it.
    without_exec_fix: str | None = None
    #: The line of a process manager that runs the script and signals every process of the
    #: script's group, not only the shell (a Procfile's `web:` line: Heroku's dyno manager
    #: signals every process of the dyno, honcho and foreman kill each entry's process group):
    #: SIGTERM reaches the server without `exec`. None when nothing read says so.
    group_signalled: Setting[str] | None = None
    #: The init an image's command runs as the container's PID 1 before the rest (`tini --`,
    #: `tini -g --`, `dumb-init`), as written: the script's shell is its child, not PID 1.
    init: Setting[str] | None = None
    #: The supervisord program (`[program:web]`, at its command) whose script's shell starts
    #: the server as its child: supervisord's stop signal goes to that shell, not PID 1.
    supervised: Setting[str] | None = None
    #: The script line that runs a process manager (supervisord, honcho) as a child of the
    #: shell (no `exec`): the stop signal never reaches the manager, nor the servers it runs.
    manager_without_exec: Setting[str] | None = None
    #: Settings written with a value known only where the server runs (uWSGI's `processes =
    #: ${UWSGI_PROCESSES}` left unrendered), read with the default: no rule judges that default.
    unknown_settings: frozenset[str] = frozenset()
    #: The sockets (as in `sockets`) that speak the uwsgi protocol, not HTTP (uWSGI's
    #: `socket`; every bind of a gunicorn with `protocol = "uwsgi"`): only a `uwsgi_pass`
    #: reaches a server there; an HTTP front does not.
    uwsgi_protocol: tuple[str, ...] = ()
    #: The sockets written as one value of a template read as its kind that no file gives
    #: (uWSGI's `socket = {{ uwsgi_socket }}`, read as `${uwsgi_socket}`), each with its
    #: option: not known, so not in `sockets`, but a front's pass written as that same value
    #: may be joined to it by that name (`chain`).
    template_sockets: tuple[tuple[str, Setting[str]], ...] = ()
    #: The image's shell-form CMD / ENTRYPOINT that starts the server (`CMD gunicorn ...`),
    #: as (instruction, text): `/bin/sh -c` stays PID 1 with the server as its child. None
    #: for the exec form, `exec` in the text, or a shell that execs a lone command (bash).
    shell_form: Setting[str] | None = None
    #: What that shell is, for the message (`dockerfile.sh_of`): `dash, in the Debian-based
    #: base image python:3.12`, or the assumption made when the base's name does not say.
    shell_form_sh: str = ""
    #: A process manager's wait between its stop signal and SIGKILL, where no container
    #: holds it (supervisord's `stopwaitsecs`, 10 s by default), and how it is spelled there.
    stop_wait: Setting[float] | None = None
    stop_wait_name: str = ""
    #: How that wait is raised where it is set, `{}` for the seconds ("" : `NAME = {}`).
    stop_wait_fix: str = ""
    #: The signal it is stopped with when the files name one (supervisord's `stopsignal`, a
    #: Dockerfile's `STOPSIGNAL`), as written without `SIG`: `TERM`, `INT`, `QUIT`, ...
    stop_signal: Setting[str] | None = None
    #: The line that makes it SIGTERM, as that file writes it (`stopsignal = TERM`).
    stop_signal_fix: str = ""
    #: The script line that starts the server in the background (`&`) or daemonized
    #: (`--daemon`) with no `trap` in the script: the shell or the foreground process is PID 1
    #: and gets SIGTERM; the server never does, and dies with the container by SIGKILL.
    backgrounded: Setting[str] | None = None
    #: The script line that daemonizes the server (`uwsgi --daemonize LOG`, `gunicorn -D`) as
    #: the script's last command: the server detaches from a script that then ends, so no
    #: process of the script stays in front of it (a host's start script).
    detached: Setting[str] | None = None
    #: Where its own settings daemonize it (gunicorn `daemon = True` / `-D`, uWSGI
    #: `daemonize = LOG`): its master forks to the background and the command that started it
    #: returns, so a script goes on to its next line.
    daemonizes: Setting[bool] | None = None
    #: `${VAR:word}` in its command line with a word that is not a number: the shell's
    #: substring expansion (bash) or an error (dash), not the default `${VAR:-word}` means.
    substrings: tuple[Setting[str], ...] = ()
    #: Numbers its parser cuts at the first character that is not a digit (uWSGI's atoi
    #: reads `processes = 1e3` as 1, `harakiri = 2.5` as 2), as (option, value as written,
    #: the number the server takes): what runs is not what the line says.
    cut_numbers: tuple[tuple[str, Setting[str], int], ...] = ()
    #: uWSGI options whose value keeps a comment written after it (its ini has none), where
    #: that changes what runs, as (option, value as written, the value before the comment).
    inline_comments: tuple[tuple[str, Setting[str], str], ...] = ()
    #: uWSGI's SIGTERM handling: `die-on-term` (or a hook making SIGTERM a graceful stop),
    #: None when the config leaves uWSGI 2.0's default (SIGTERM = brutal reload).
    die_on_term: Setting[bool] | None = None
    #: uWSGI's master hook that makes SIGTERM a graceful stop (`hook-master-start =
    #: unix_signal:15 gracefully_kill_them_all`): the workers finish their requests first.
    #: None without it, where die-on-term's SIGTERM kills them at once.
    sigterm_drains: Setting[bool] | None = None
    #: How many connections one process takes before it pushes back: uvicorn's
    #: `--limit-concurrency` (past it, a 503; idle keep-alive connections count), granian's
    #: `--backpressure` (past it, connections wait unaccepted). None: no limit.
    concurrency_limit: Setting[int] | None = None
    #: It restarts on every code change (gunicorn `reload` / `--reload`): a development
    #: server, whose stop is a developer's `docker compose down`, not a deploy's.
    reloads: Setting[bool] | None = None
    #: Names a gunicorn config file assigns that are no setting but spell one's command-line
    #: flag (`keep_alive` for `--keep-alive`): each as written, its line, and the setting it
    #: was likely meant for (`keepalive`). gunicorn ignores them; not settings of the launch
    #: (their lines place no chain step).
    misspelled: tuple[tuple[str, Location, str, bool], ...] = ()
    #: The test of the branch its script's server line sits in when that test is on the
    #: script's first argument and no file read gives it (`elif [[ "$1" = 'web-prod' ]]`
    #: with the image's CMD left to the deployment): that branch was assumed, and the launch
    #: graph says so. (where the test is written, the test as written); None otherwise.
    assumed_branch: tuple[Location, str] | None = None
    #: The value of a variable no file read sets that runs this server line instead of the
    #: one read when it is unset (`AYON_SERVER_TYPE=granian` for the `elif [ $SERVER_TYPE =
    #: "granian" ]` branch of a script whose `SERVER_TYPE=${AYON_SERVER_TYPE:-gunicorn}`):
    #: a launch a deployment picks by setting it (`scripts.other_arms`); None for a line
    #: that runs as the files are.
    when: str | None = None
    #: The lines that start it before its own file (a Dockerfile's ENTRYPOINT and CMD, a
    #: compose `command`), in launch order: the launch graph's first steps.
    launched_by: tuple[Location, ...] = ()
    #: The vassal folder (or glob) of `--emperor DIR` / `emperor = DIR` as written: this uWSGI
    #: is an emperor, which runs each vassal config there as a uWSGI instance of its own
    #: (`check.emperor`); None for any other server.
    emperor: Setting[str] | None = None
    #: The folder it changes to before loading the app (uWSGI's `chdir`), as written; ""
    #: when none is written.
    chdir: str = ""
    #: The line that starts an nginx the same launch stops together with the server, with
    #: the same SIGTERM at the same moment (a sibling runit or s6 service's `run` script:
    #: my_init, runsvdir and s6 bring every service down at once; a Procfile line's
    #: `bin/start-nginx`: Heroku signals every process of the dyno): nginx's fast shutdown on
    #: SIGTERM closes the connections a graceful drain would answer. None when nothing read
    #: says so (a front in another container, pod or host outlives the server's stop). As
    #: (line, text): no setting of the server's, nor a step of its launch chain.
    front_stops_with: tuple[Location, str] | None = None
    #: The stopsignal line of an nginx program the same supervisord stops before the server,
    #: and stops gracefully (`stopsignal = QUIT`, with a higher `priority`: supervisord stops
    #: programs from the highest priority down, each stopped before the next): nginx has
    #: answered every request in flight before the server gets its signal. None otherwise.
    front_drains_first: Setting[str] | None = None
    #: What runs the first of those lines when it is an image's FROM (the image sets no
    #: command): the base image's process, as the launch graph names it; None otherwise.
    started_by_base: str | None = None
    #: The other servers the same launch starts (the other programs of the supervisord
    #: config a script runs), as found there: `together.started_together` gives each the
    #: chain and the container this one reaches. Not part of what the server is.
    started_with: StartedWith | None = field(default=None, compare=False, repr=False)

    @property
    def sync_worker(self) -> bool:
        """gunicorn's default sync worker: one request at a time, and the connection closed
        after each response (it sends `Connection: close`, so `keepalive` does nothing). With
        threads > 1 gunicorn runs gthread instead (its `threads` setting's docs)."""
        if self.kind != "gunicorn" or self.interface == "asgi":
            return False
        worker = self.worker_class.value if self.worker_class is not None else "sync"
        return worker in SYNC_WORKER_CLASSES and self.threads.value == 1


@dataclass(frozen=True)
class StartedWith:
    """Servers one launch starts beside another (a supervisord config's other programs), each
    with its chain from that config on, and that other server as it was found beside them (so
    what the outer layers add to it on the way out can be added to each of them)."""

    servers: tuple[AppServer, ...]
    first: AppServer
    #: The nginx configs the same launch starts from templates rendered where it starts (a
    #: supervisord program's `nginx -c FILE`, FILE rendered from FILE.jnj): fronts no walk reads.
    fronts: tuple[NginxConfig, ...] = ()


@dataclass(frozen=True)
class PassTarget:
    """A `proxy_pass` / `uwsgi_pass` in a location, with the timeout nginx applies to it."""

    protocol: Literal["http", "uwsgi"]
    #: An upstream name or an address (`127.0.0.1:8001`, `unix:/x.sock`).
    target: str
    at: Location
    read_timeout: Setting[float]
    #: `proxy_http_version 1.1` in effect: only then does nginx reuse pooled upstream connections.
    http11: bool = False
    #: The location it is in, as written (`/`, `~ ^/ws/`, `@proxy_to_app`); "" outside one.
    location: str = ""
    #: proxy_send_timeout / uwsgi_send_timeout in effect (nginx's default 60 s).
    send_timeout: Setting[float] | None = None
    #: Where its timeouts are written when not in an nginx file: the annotation prefix of the
    #: Ingress it is read from (`nginx.ingress.kubernetes.io/`, ingress-nginx's, whose timeout
    #: values are unitless seconds); its `target` is then a Kubernetes Service and its port.
    annotations: str = ""
    #: The `root` in effect where it is written (its location's, else its server's or http's),
    #: as written; "" with none. The folder the site is served from, which tells apart servers
    #: that share one socket path on different hosts (`nearest_servers`).
    root: str = ""
    #: Its address names variables the config computes where nginx runs (`set_by_lua_block`,
    #: `map`, `perl_set`) and no template's: not known here, joined only by the image that
    #: runs it (`image_fronts`).
    computed: bool = False
    #: The `include` lines that bring it into the config read when it is written in an
    #: included file (a snippet), the nearest first; () when the file read writes it. Not part
    #: of its identity: the snippet read alone passes the same way.
    included_from: tuple[Location, ...] = field(default=(), compare=False)
    #: Its read timeout is written in the block it is in (its own location's choice), not
    #: inherited from the server or http block.
    own_read_timeout: bool = field(default=False, compare=False)

    def timeout_name(self, which: Literal["read", "send"]) -> str:
        """The read (or send) timeout as its file names it: `proxy_read_timeout`, or the
        Ingress annotation `nginx.ingress.kubernetes.io/proxy-read-timeout`."""
        if self.annotations:
            return f"{self.annotations}proxy-{which}-timeout"
        return f"{self.protocol.replace('http', 'proxy')}_{which}_timeout"

    def timeout_written(self, which: Literal["read", "send"], seconds: str) -> str:
        """That timeout set to `seconds` (a figure) as its file writes it: `proxy_read_timeout
        125s;`, or `nginx.ingress.kubernetes.io/proxy-read-timeout: "125"`."""
        if self.annotations:
            return f'{self.timeout_name(which)}: "{seconds}"'
        return f"{self.timeout_name(which)} {seconds}s;"


@dataclass(frozen=True)
class Upstream:
    """An nginx `upstream` block: its servers and its idle keep-alive pool."""

    name: str
    at: Location
    servers: tuple[Setting[str], ...]
    #: `keepalive N` (None: no pool, a new connection per request).
    keepalive: Setting[int] | None
    #: The pool's idle limit (`keepalive_timeout` inside the block; nginx's default 60 s).
    keepalive_timeout: Setting[float]


@dataclass(frozen=True)
class NginxConfig:
    """An nginx config with its includes, reduced to the chain's numbers."""

    file: Path
    files: tuple[Path, ...]
    #: The client-side `keepalive_timeout` of each server block (or http's / the default).
    keepalive_timeouts: tuple[Setting[float], ...]
    upstreams: dict[str, Upstream]
    passes: tuple[PassTarget, ...]
    listen_backlogs: tuple[Setting[int], ...] = ()
    #: The addresses its servers listen on (`127.0.0.1:8000`, `*:80`, `[::]:80`, `unix:/x`).
    listens: tuple[Setting[str], ...] = ()
    #: Includes that name a file not present here (e.g. `proxy_params` beside a lone site file).
    missing_includes: tuple[Setting[str], ...] = ()
    #: `events { worker_connections N; }` (nginx's default 512 when the events block leaves
    #: it out); None for a site file with no events block: set elsewhere.
    worker_connections: Setting[int] | None = None
    #: `worker_processes N` (nginx's default 1); None for `auto` (one per core).
    worker_processes: Setting[int] | None = None
    #: The passes whose target names a template's variable (`proxy_pass http://$BACKEND;`,
    #: rendered by envsubst where the container starts): only for linking, once rendered
    #: with the front's environment; never judged as written.
    templated_passes: tuple[PassTarget, ...] = ()
    #: Read from a ConfigMap a pod mounts (`config_maps`): a host name it passes to is
    #: resolved by the cluster's DNS, so it reaches a Kubernetes Service, never a compose one.
    in_cluster: bool = False
    #: The pod spec whose container mounts it (`in_cluster`): a unix socket it passes to is
    #: a file on a volume of that pod's containers only.
    pod: Location | None = None
    #: The `keepalive_timeouts` places of server blocks that pass nothing on (no proxy_pass,
    #: uwsgi_pass, fastcgi_pass, grpc_pass, scgi_pass, memcached_pass): they serve files.
    static_keepalives: tuple[Location, ...] = ()
    #: A file of locations or of a location's lines, read alone (`nginx._location_snippet`):
    #: its passes are joined only where no config read here includes it, which passes there
    #: under that site's settings.
    snippet: bool = False
    #: Its main file writes an `http { }` block: nginx's own config, not a site file that
    #: one includes by a glob (`conf.d/*.conf`).
    main: bool = False


#: The balancers that proxy through Go's http.Transport, which retries an idempotent request
#: on a new connection when a reused one fails before any answer (Go's net/http
#: `Transport.RoundTrip`: "if the request is idempotent ... and the connection was reused").
GO_TRANSPORT_BALANCERS = frozenset({"traefik", "caddy"})


@dataclass(frozen=True)
class Balancer:
    """A load balancer or reverse proxy config (an HAProxy backend, a Caddy `reverse_proxy`, a
    Traefik service) reduced to the chain's numbers: where it sends requests, and how long it
    may keep an idle connection to those servers open."""

    kind: Literal["haproxy", "caddy", "traefik", "apache"]
    file: Path
    #: The backend's (or listen section's) name.
    name: str
    at: Location
    #: Its servers' addresses, as nginx and the app servers write theirs.
    servers: tuple[Setting[str], ...]
    #: The longest a connection to a server may stay idle (inf: never closed for idleness);
    #: None when it keeps no idle connection to a server.
    idle: Setting[float] | None
    #: Which settings that idle time comes from, in words.
    idle_source: str
    #: `timeout server` (or an unconditional `http-request set-timeout server`): how long it
    #: waits for a server's answer (None: unset, forever).
    server_timeout: Setting[float] | None = None
    #: The statement that sets it, as a fix writes it.
    server_timeout_directive: str = "timeout server"
    #: That statement set, `{}` for the seconds, where the proxy writes it otherwise than
    #: `DIRECTIVE {}s` (Apache's `ProxyTimeout {}`, whole seconds); "": `DIRECTIVE {}s`.
    server_timeout_fix: str = ""
    #: Each server's `maxconn` (its own, else `default-server`'s), in `servers`' order;
    #: None: no limit of its own.
    maxconns: tuple[Setting[int] | None, ...] = ()
    #: What HAProxy does with a server connection once its request is answered: "closed"
    #: (TCP mode, where the client's connection is the server's, or `option http-server-close`
    #: / `httpclose`), "session" (`http-reuse never`: kept for the same client's next request),
    #: else the `http-reuse` strategy under which it joins the server's idle pool ("safe",
    #: "aggressive", "always").
    keeps: str = "closed"
    #: Each server's `pool-max-conn` (its own, else `default-server`'s), in `servers`' order:
    #: how many idle connections its pool may hold; None: unbounded (-1, HAProxy's default).
    pools: tuple[Setting[int] | None, ...] = ()
    #: What it is in a finding's words (`Caddy reverse_proxy in site example.com`); "" for an
    #: HAProxy backend, named `HAProxy backend `NAME``.
    label: str = ""
    #: Where its defaults are documented, for a finding's `why` (Caddy's, Traefik's docs).
    docs: str = ""

    @property
    def title(self) -> str:
        """What it is, as a finding names it."""
        return self.label or f"HAProxy backend `{self.name}`"


@dataclass(frozen=True)
class Finding:
    """One problem: rule id, severity, where, what goes wrong, the fix to write, and the proof."""

    rule: str
    severity: Severity
    at: Location
    message: str
    fix: str
    backing: str
    #: Other places involved (the other side of a cross-layer comparison).
    related: tuple[Location, ...] = field(default=())


#: The note kind a reader records for a line or value the platform or proxy that reads it
#: ignores (a Procfile line with no `type:`, ingress-nginx's `'360s'`): valid input to check,
#: a fault of the deployment, turned into the `ignored-by-platform` rule's warning.
IGNORED_BY_PLATFORM = "ignored-by-platform"
#: The note kind a reader records for a framework's development server (`flask run`, `manage.py
#: runserver`) started where a deployment runs it (an image's own command, a compose file named
#: for production), turned into the `development-server-in-production` rule's warning.
DEVELOPMENT_SERVER_DEPLOYED = "development-server-in-production"
#: The note kind linking records for a front passing to a compose service of its project by
#: name at a port none of that service's servers binds (all binds known), turned into the
#: `front-port-mismatch` rule's warning.
FRONT_PORT_MISSED = "front-port-mismatch"
#: `AppServer.init` of a server an s6-overlay service's `run` script starts: `/init` is PID 1
#: and s6-supervise, not an init's signal forwarding, stops the script.
S6_INIT = "s6-overlay /init"

#: The kinds of coverage note: what check could not see, and why. A note is not a finding: it
#: never changes the exit status (a team removes a hook that fails on what it could
#: not read). Each kind's title, for the summary and for SARIF's notifications.
NOTE_KINDS = {
    "include-not-found": "an include (nginx, uWSGI) names a file that is not here: not checked",
    "unresolved-variable": "a value known only when it runs (the container's variables): not checked",
    "config-not-found": "a command line names a config file not among the files read: not checked",
    "env-file-not-found": "an env file a compose file or systemd unit loads is not here: read without it",
    "outside-tree": "a file named by another lies outside the tree check was given: never read",
    "not-supported": "a file of a kind check does not read",
    "starts-no-server": "a file that starts no server check reads (a worker, a database, a builder)",
    "server-chosen": "a script that starts different servers on different paths: one was read",
    "joined-by-name": "a front joined by a name and a port alone (no manifest here says what answers)",
    "matched-by-name": "a deployed config a host unit names, read as the repository's only file of its name",
    "executed": "a gunicorn config loaded through gunicorn (--execute-gunicorn-config)",
    "not-followed": "a launch whose next link is not here (a script the image lacks): unknown",
    "development-launch": "a framework's development server (flask run, runserver): not sized",
    "template": "a Jinja / Helm template found in a folder: what it renders to is not here",
    "not-read": "files found in a folder, named like a kind check reads, that no reader claims",
    "overlay": "a compose file read merged over the base file it completes (-f base -f overlay)",
    "build-context": "a Dockerfile built from a folder above its own, which holds its COPY sources",
    "server-version": "a value the server installed here refuses, another version may take: not checked",
    # Recorded by a reader as a note, reported as the `ignored-by-platform` rule's finding.
    IGNORED_BY_PLATFORM: "a line or value the platform running it ignores, its default applies",
    DEVELOPMENT_SERVER_DEPLOYED: "a framework's development server a deployment runs",
    FRONT_PORT_MISSED: "a front passing to a compose service at a port its server does not bind",
}


@dataclass(frozen=True)
class Note:
    """Coverage: one thing check could not see (or chose not to), where, and why."""

    kind: str
    at: Location
    message: str
    #: How to let check see it (a rule's fix, for the notes that come from rules).
    fix: str = ""

    @property
    def rule(self) -> str:
        """The kind, under the name a finding's is read by (a note and a finding list alike)."""
        return self.kind


#: The notes of the `check` run in progress; readers deep in a file (an env_file, a `%(...)`)
#: add to it through `note()` without every reader's return type carrying them.
#: How a `server-chosen` note ends when the server was chosen as the one that runs with the
#: variables no file sets unset (`scripts`): said by the reading that kept it, not by one
#: the launch graph drops for a longer chain that decides it.
ASSUMED_UNSET = "which runs when the variables no file here sets are unset"
#: How a `server-chosen` note ends when each server line is in a function no line of the
#: file calls (a library a script sources): a launch that calls one says which runs.
UNCALLED = "each in a function no line of this file calls (a caller's call picks one)"

_NOTES: contextvars.ContextVar[list[Note] | None] = contextvars.ContextVar(
    "servertune_check_notes", default=None
)


def note(kind: str, at: Location, message: str, fix: str = "") -> None:
    """Record a coverage note in the run in progress (none: a reader called on its own)."""
    if kind not in NOTE_KINDS:
        raise ValueError(f"unknown note kind {kind!r}")
    notes = _NOTES.get()
    if notes is not None:
        notes.append(Note(kind, at, message, fix))


def note_nothing_to_check(path: Path, why: NothingToCheck) -> None:
    """The note a file's reading that found nothing to check makes: not followed at the link
    that could not be followed (the script's line, the CMD's), which the message starts with,
    else at the file; `starts-no-server` when nothing was left unfollowed."""
    if not isinstance(why, NotFollowed):
        note("starts-no-server", Location(path), str(why))
        return
    file, _, line = str(why).partition(": ")[0].rpartition(":")
    at = Location(Path(file), int(line)) if line.isdigit() and file else Location(path)
    note("not-followed", at, str(why))


@contextmanager
def collect_notes() -> Iterator[list[Note]]:
    """Collect the notes `note()` records while the block runs."""
    notes: list[Note] = []
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


_REFUSED: contextvars.ContextVar[list[tuple[Location, str]] | None] = contextvars.ContextVar(
    "servertune_check_refused", default=None
)


def refuse_line(at: Location, message: str) -> None:
    """A line the tool that runs the file refuses too (a Dockerfile's `LABEL` before its first
    FROM): an error of the run in progress, at its line, while the rest of the file is read as
    it would be without that line; raised as CheckInputError when no run collects them (a
    reader called on its own)."""
    refused = _REFUSED.get()
    if refused is None:
        raise CheckInputError(f"{at}: {message}")
    refused.append((at, message))


@contextmanager
def collect_refused() -> Iterator[list[tuple[Location, str]]]:
    """Collect the lines `refuse_line()` records while the block runs."""
    refused: list[tuple[Location, str]] = []
    token = _REFUSED.set(refused)
    try:
        yield refused
    finally:
        _REFUSED.reset(token)


#: The core count a config's own CPU-count expressions (`multiprocessing.cpu_count()` in a
#: gunicorn config, `%k` in uWSGI) are evaluated for: `--cores` when given, else the CPU limit
#: the deployment files declare, else this machine's (a finding must not flip with
#: the machine that runs check). Set by `check_files` for the run in progress.
_CORES: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "servertune_check_cores", default=None
)


def evaluation_cores() -> int:
    """The cores CPU-count expressions evaluate to in the run in progress (else this host's)."""
    cores = _CORES.get()
    if cores is not None:
        return cores
    import os

    return os.cpu_count() or 1


@contextmanager
def evaluating_for(cores: int | None) -> Iterator[None]:
    """Evaluate CPU-count expressions for `cores` while the block runs (None: this host's)."""
    token = _CORES.set(cores)
    try:
        yield
    finally:
        _CORES.reset(token)
