"""Hypercorn and Daphne as servers of the launch graph: their command lines (a Dockerfile's CMD,
a compose `command`, a Procfile entry) read with their own documented options, Hypercorn's TOML
config file (`-c`) read as a file kind of its own, and the nginx front that passes to their
address or socket joined to them, so the cross-layer rules judge them where the values are
known. Each fixture under tests/data/repos/servers-* is a small repository written for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.commands import read_command, server_command, words_of
from servertune.check.daphne import daphne_server
from servertune.check.discover import discover
from servertune.check.graph import Launch, launches
from servertune.check.hypercorn import hypercorn_server, read_hypercorn_config
from servertune.check.model import AppServer, CheckInputError, Location, collect_notes
from servertune.check.readers import reader_for
from servertune.machine import Machine

REPOS = Path(__file__).parent / "data" / "repos"
#: The machine the findings are judged for, whatever machine runs the tests.
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def check_folder(root: Path) -> CheckResult:
    """The library's run on a walked folder, for a 4-core machine."""
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root)


def chains(root: Path) -> tuple[CheckResult, list[tuple[list[str], list[str], Launch]]]:
    """The run, and each launch as (its chain's files, its fronts' files), relative to `root`."""
    result = check_folder(root)
    return result, [
        (
            [at.file.relative_to(root).as_posix() for at in launch.chain],
            [at.file.relative_to(root).as_posix() for at in launch.fronts],
            launch,
        )
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]


def findings(result: CheckResult, root: Path) -> dict[str, tuple[str, str]]:
    """Each finding's rule -> (its file:line relative to `root`, its fix)."""
    return {
        f.rule: (f"{f.at.file.relative_to(root).as_posix()}:{f.at.line}", f.fix)
        for f in result.findings
    }


def words(text: str, file: Path = Path("Procfile")) -> list[tuple[str, Location]]:
    """A command line's words after the server's name, all on line 1 of `file`."""
    return [(w, Location(file, 1)) for w in text.split()]


def test_hypercorn_toml_named_by_the_cmd_is_its_config_behind_the_compose_nginx() -> None:
    """`CMD ["hypercorn", "-c", "deploy/hypercorn.toml", ...]` reads the TOML file the image
    copies: its bind, workers and graceful_timeout, each at its line; the nginx service's
    upstream that passes to api:8000 fronts it, and its pooled connections outlive
    Hypercorn's default 5 s keep-alive, fixed in the TOML file's own words."""
    root = REPOS / "servers-hypercorn-toml"
    result, ((files, fronts, launch),) = chains(root)
    assert files == ["compose.yaml", "Dockerfile", "deploy/hypercorn.toml"]
    assert fronts == ["deploy/nginx.conf"]
    app = launch.app
    assert (app.kind, app.workers.value, [s.value for s in app.sockets]) == (
        "hypercorn",
        3,
        ["0.0.0.0:8000"],
    )
    assert app.graceful_timeout is not None
    assert app.graceful_timeout.at.line == 4
    found = findings(result, root)
    assert found["upstream-keepalive-over-app-keepalive"] == (
        "deploy/hypercorn.toml:1",
        "keep_alive_timeout = 65",
    )
    assert found["grace-period-below-shutdown"][0] == "compose.yaml:2"


def test_hypercorn_options_in_a_compose_command_are_read_and_fixed_as_flags() -> None:
    """`command: hypercorn --bind 0.0.0.0:8000 --workers 4 --graceful-timeout 30 main:app` is
    a Hypercorn of 4 workers on 0.0.0.0:8000 behind the nginx passing to api:8000; its
    30 s graceful timeout outlasts the service's 10 s stop grace, and its keep-alive fix is
    the flag `--keep-alive 65`."""
    root = REPOS / "servers-hypercorn-compose"
    result, ((files, fronts, launch),) = chains(root)
    assert (files, fronts) == (["compose.yaml"], ["nginx/default.conf"])
    assert (launch.app.workers.value, launch.app.workers.at.line) == (4, 4)
    found = findings(result, root)
    assert found["upstream-keepalive-over-app-keepalive"] == ("compose.yaml:4", "--keep-alive 65")
    assert found["grace-period-below-shutdown"] == ("compose.yaml:5", "stop_grace_period: 35s")


def test_daphne_on_a_unix_socket_in_a_procfile_is_behind_the_nginx_passing_to_it() -> None:
    """`web: daphne -u /run/chat/daphne.sock --http-timeout 90 ...` listens on that socket,
    which the nginx site's `proxy_pass http://unix:/run/chat/daphne.sock` reaches; Daphne
    answers 503 at 90 s, after nginx's 60 s proxy_read_timeout has already given up."""
    root = REPOS / "servers-daphne-procfile"
    result, ((files, fronts, launch),) = chains(root)
    assert (files, fronts) == (["Procfile"], ["nginx/chat.conf"])
    assert [s.value for s in launch.app.sockets] == ["unix:/run/chat/daphne.sock"]
    found = findings(result, root)
    assert found["app-timeout-over-read-timeout"] == (
        "nginx/chat.conf:5",
        "proxy_read_timeout 95s;",
    )


def test_daphne_in_a_shell_form_cmd_is_linked_and_its_signal_path_judged() -> None:
    """`CMD daphne -b 0.0.0.0 -p 8001 ...` in shell form is Daphne on 0.0.0.0:8001 behind the
    compose nginx passing to web:8001, and /bin/sh stays PID 1 in front of it."""
    root = REPOS / "servers-daphne-image"
    result, ((files, fronts, launch),) = chains(root)
    assert (files, fronts) == (["compose.yaml", "Dockerfile"], ["nginx.conf"])
    assert [s.value for s in launch.app.sockets] == ["0.0.0.0:8001"]
    assert findings(result, root)["shell-form-command"][0] == "Dockerfile:5"


def test_hypercorn_toml_found_alone_is_read_by_its_own_reader(tmp_path: Path) -> None:
    """A `hypercorn.toml` setting a key Hypercorn reads is claimed by the hypercorn reader,
    its binds (a string or a list) as nginx writes them, Hypercorn's defaults for the rest."""
    path = tmp_path / "hypercorn.toml"
    text = 'bind = "[::]:9000"\ninsecure_bind = ["unix:/run/h.sock", "127.0.0.1"]\n'
    path.write_text(text)
    assert reader_for(path, text).kind == "hypercorn"
    (app,) = reader_for(path, text).read(path, text, None).apps
    assert [s.value for s in app.sockets] == ["[::]:9000", "unix:/run/h.sock", "127.0.0.1:8000"]
    assert app.keepalive is not None
    assert (app.keepalive.value, app.keepalive.default) == (5, True)
    assert app.graceful_timeout is not None
    assert app.graceful_timeout.value == 3


def test_hypercorn_command_line_flags_win_over_its_config(tmp_path: Path) -> None:
    """Hypercorn applies each option given over its `-c` file: `-w2` and `--keep-alive 75`
    replace the file's workers and keep_alive_timeout, `-b` replaces its bind; the default
    bind is 127.0.0.1:8000."""
    toml = tmp_path / "h.toml"
    config = read_hypercorn_config(toml, "workers = 8\nkeep_alive_timeout = 10\nbind = 'a:1'\n")
    app = hypercorn_server(
        tmp_path / "Procfile",
        words("-c h.toml -w2 --keep-alive 75 -b unix:/tmp/h.sock app:app"),
        Location(tmp_path / "Procfile", 1),
        config,
    )
    assert (app.workers.value, app.keepalive and app.keepalive.value) == (2, 75)
    assert [s.value for s in app.sockets] == ["unix:/tmp/h.sock"]
    default = hypercorn_server(Path("Procfile"), words("app:app"), Location(Path("Procfile"), 1))
    assert [s.value for s in default.sockets] == ["127.0.0.1:8000"]


def test_hypercorn_python_config_is_a_not_followed_note_and_no_default_judged() -> None:
    """`-c python:conf.hypercorn` names Python Hypercorn imports: a not-followed note says so,
    and the settings the command line does not give (keep-alive, graceful timeout) are
    unknown, not Hypercorn's defaults."""
    with collect_notes() as notes:
        app = hypercorn_server(
            Path("Procfile"),
            words("-c python:conf.hypercorn --bind 0.0.0.0:8000 app:app"),
            Location(Path("Procfile"), 1),
        )
    assert [n.kind for n in notes] == ["not-followed"]
    assert (app.keepalive, app.graceful_timeout) == (None, None)
    assert [s.value for s in app.sockets] == ["0.0.0.0:8000"]


@pytest.mark.parametrize(
    ("line", "sockets"),
    [
        ("daphne app:application", ["127.0.0.1:8000"]),
        ("daphne -b 0.0.0.0 app:application", ["0.0.0.0:8000"]),
        ("daphne -p 9000 app:application", ["127.0.0.1:9000"]),
        ("daphne -e tcp:port=8002:interface=0.0.0.0 app:application", ["0.0.0.0:8002"]),
        ("daphne --fd 3 app:application", []),
        (
            "daphne -u /run/d.sock -b 10.0.0.1 -p 81 app:application",
            ["10.0.0.1:81", "unix:/run/d.sock"],
        ),
    ],
)
def test_daphne_listens_where_its_cli_fills_in_the_address(line: str, sockets: list[str]) -> None:
    """Daphne's defaults as its `run()` fills them in: no address is 127.0.0.1:8000, `-b`
    alone port 8000, `-p` alone 127.0.0.1; a Twisted `-e` endpoint; `--fd` names none."""
    command = server_command(words_of(line, Location(Path("Procfile"), 1)))
    assert command is not None
    assert command.server == "daphne"
    app: AppServer = read_command(Path("Procfile"), command, {}, shell=True)
    assert [s.value for s in app.sockets] == sockets


def test_an_option_the_server_does_not_have_is_refused_as_it_refuses_it() -> None:
    """`daphne --workers 4` is refused, as Daphne's own parser refuses it, naming the word."""
    with pytest.raises(CheckInputError, match="unrecognized arguments: --workers"):
        daphne_server(Path("Procfile"), words("--workers 4 app:application"), Location(Path("P")))


def test_hypercorn_workers_zero_is_its_own_process_not_a_refused_file() -> None:
    """`hypercorn -w 0` serves in Hypercorn's own process (its run.py), so it is read as one
    process, never refused as a server with no worker."""
    command = server_command(words_of("hypercorn -w 0 app:app", Location(Path("Procfile"), 1)))
    assert command is not None
    app = read_command(Path("Procfile"), command, {}, shell=True)
    assert app.workers.value == 1


@pytest.mark.parametrize(
    ("line", "sockets"),
    [
        ("hypercorn -b :8080 app:app", ["0.0.0.0:8080"]),
        ("hypercorn -b 0.0.0.0 app:app", ["0.0.0.0:8000"]),
        ("hypercorn -b [::]:8081 app:app", ["[::]:8081"]),
        ("hypercorn app:app", ["127.0.0.1:8000"]),
    ],
)
def test_hypercorn_listens_where_its_config_parses_the_bind(line: str, sockets: list[str]) -> None:
    """Hypercorn's `Config._create_sockets` splits a bind at its last colon: an empty host
    (`-b :8080`) binds every interface on that port, a bind without a port is port 8000 (seen
    on nachet-backend's compose `hypercorn -b :8080`, once shown as `[:8080]:8000`)."""
    command = server_command(words_of(line, Location(Path("Procfile"), 1)))
    assert command is not None
    app: AppServer = read_command(Path("Procfile"), command, {}, shell=True)
    assert [s.value for s in app.sockets] == sockets


def test_hypercorn_workers_floored_at_two_follow_the_cpu_count(tmp_path: Path) -> None:
    """`workers = max(2, os.cpu_count())` in a Hypercorn Python config follows the CPU count
    as gunicorn's `workers = multiprocessing.cpu_count() * 2 + 1` does: both are probed with
    the same CPU counts (16 and 64), so the floor, equal on one and two CPUs, is not taken
    for a constant of 2 workers: the value is unknown, said as following the CPU count."""
    from servertune.check.hypercorn import read_hypercorn_python

    text = "import os\nbind = '0.0.0.0:8000'\nworkers = max(2, os.cpu_count())\n"
    path = tmp_path / "hypercorn_config.py"
    path.write_text(text)
    config = read_hypercorn_python(path, text)
    assert "workers" in config.unknown
    assert "workers" not in config.values


def test_daphne_with_no_application_is_refused_as_its_parser_refuses_it() -> None:
    """`daphne` alone, or with options only, is refused (its `application` argument is
    required), never read as a daphne on 127.0.0.1:8000."""
    with pytest.raises(CheckInputError, match="no application"):
        daphne_server(Path("Procfile"), words("-b 0.0.0.0"), Location(Path("P")))
