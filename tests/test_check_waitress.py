"""waitress as a server of the launch graph: `waitress-serve` (and `python -m waitress`, and the
`waitress-serve-3` Alpine's py3-waitress installs) read with the runner's own getopt options and
`Adjustments` defaults (Pylons/waitress runner.py, adjustments.py), joined to the nginx passing
to its address, so the cross-layer rules judge it: one process of `--threads` threads, its
`--channel-timeout` the idle timeout nginx's pooled connections must stay under. Seen in
rr-/szurubooru (`exec waitress-serve-3 --listen "*:${PORT}" --threads ${THREADS} ...`), which
check only called "a launcher". The fixture under tests/data/repos/servers-waitress-image is a
small repository written for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.commands import read_command, server_command, words_of
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.check.model import AppServer, CheckInputError, Location
from servertune.machine import Machine

REPOS = Path(__file__).parent / "data" / "repos"
#: The machine the findings are judged for, whatever machine runs the tests.
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def read(line: str) -> AppServer:
    """The server a Procfile-like command line starts, as a shell runs it."""
    command = server_command(words_of(line, Location(Path("Procfile"), 1)))
    assert command is not None
    return read_command(Path("Procfile"), command, {}, shell=True)


def test_waitress_serve_in_an_image_is_linked_to_its_nginx_and_judged_through_it() -> None:
    """`CMD ["waitress-serve", "--port=8000", "--threads=8", "shop.wsgi:app"]` is waitress, one
    process of 8 threads on 0.0.0.0:8000, behind the compose nginx passing to web:8000; its
    default channel_timeout (120 s) closes idle connections before the upstream pool's 180 s,
    a fault fixed with `--channel-timeout`."""
    root = REPOS / "servers-waitress-image"
    walk = discover(root)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    app = launch.app
    assert isinstance(app, AppServer)
    assert app.kind == "waitress"
    assert [at.file.relative_to(root).as_posix() for at in launch.chain] == [
        "compose.yaml",
        "Dockerfile",
    ]
    assert [at.file.relative_to(root).as_posix() for at in launch.fronts] == ["nginx/site.conf"]
    assert [s.value for s in app.sockets] == ["0.0.0.0:8000"]
    assert (app.workers.value, app.threads.value, app.threads.default) == (1, 8, False)
    assert app.keepalive is not None
    assert (app.keepalive.value, app.keepalive.default) == (120, True)
    (finding,) = [f for f in result.findings if f.rule == "upstream-keepalive-over-app-keepalive"]
    assert (finding.at.file.name, finding.at.line, finding.fix) == (
        "Dockerfile",
        5,
        "--channel-timeout 185",
    )


@pytest.mark.parametrize(
    ("line", "sockets"),
    [
        ("waitress-serve app:app", ["0.0.0.0:8080"]),
        ("waitress-serve --host 127.0.0.1 app:app", ["127.0.0.1:8080"]),
        ("waitress-serve --port=9000 app:app", ["0.0.0.0:9000"]),
        ("waitress-serve --listen=*:6666 --listen=[::1]:81 app:app", ["0.0.0.0:6666", "[::1]:81"]),
        ("waitress-serve --listen=localhost app:app", ["localhost:8080"]),
        ("waitress-serve --unix-socket=/run/w.sock app:app", ["unix:/run/w.sock"]),
        ("python -m waitress --port=8001 app:app", ["0.0.0.0:8001"]),
        ("waitress-serve-3 --list=*:7000 app:app", ["0.0.0.0:7000"]),
    ],
)
def test_waitress_listens_where_its_adjustments_put_it(line: str, sockets: list[str]) -> None:
    """waitress' defaults as `Adjustments` fills them in: no address is 0.0.0.0:8080, `--host`
    or `--port` alone completed by the other's default, each `--listen` one address (`*`
    every address, no port 8080), `--unix-socket` that socket; `python -m waitress` and
    Alpine's `waitress-serve-3` are the same runner, and getopt takes a unique prefix."""
    app = read(line)
    assert app.kind == "waitress"
    assert [s.value for s in app.sockets] == sockets


def test_waitress_defaults_are_its_documented_adjustments() -> None:
    """With no option: 4 threads in one process, idle connections closed after 120 s, a listen
    backlog of 1024, no request timeout and no graceful stop; the options replace each."""
    default = read("waitress-serve app:app")
    assert (default.workers.value, default.threads.value, default.backlog.value) == (1, 4, 1024)
    assert default.keepalive is not None
    assert default.keepalive.value == 120
    assert (default.request_timeout, default.graceful_timeout) == (None, None)
    tuned = read("waitress-serve --threads 16 --channel-timeout=75 --backlog=2048 app:app")
    assert (tuned.threads.value, tuned.backlog.value) == (16, 2048)
    assert tuned.keepalive is not None
    assert tuned.keepalive.value == 75


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("waitress-serve --workers=4 app:app", "option --workers not recognized"),
        ("waitress-serve -p 8000 app:app", "option -p not recognized"),
        ("waitress-serve --threads=many app:app", "--threads=many"),
        ("waitress-serve --ipv4=yes app:app", "--ipv4 must not have an argument"),
        ("waitress-serve app:app --port=8000", "Specify one application only"),
        ("waitress-serve --listen=*:80 --port=81 app:app", "may not be set if listen is set"),
        ("waitress-serve --unix-socket=/w.sock --port=81 app:app", "unix_socket may not be set"),
    ],
)
def test_a_command_line_waitress_refuses_is_refused_as_it_refuses_it(line: str, why: str) -> None:
    """An option waitress has not, a short option, a count that is not a number, a value on a
    flag, an option after the app (getopt stops at the app, so it is a second app) and the
    addresses `Adjustments` will not mix are refused with waitress' own reason, never read
    as something else."""
    with pytest.raises(CheckInputError, match=why):
        read(line)


@pytest.mark.parametrize("option", ["--list=127.0.0.1:$PORT", "--po=$PORT", "--listen=*:$PORT"])
def test_an_address_through_a_prefix_of_a_waitress_option_is_not_the_default(
    tmp_path: Path, option: str
) -> None:
    """`waitress-serve --list=127.0.0.1:$PORT app:app` with PORT set nowhere: waitress's getopt
    takes `--list` for `--listen` (`--po` for `--port`: prefixes only they have), so the
    address is the one the running server gets, not known here: the launch claims no socket
    and joins no nginx passing to waitress's default 8080, as with the option written in
    full."""
    (tmp_path / "Dockerfile").write_text(
        f"FROM python:3.12-slim\nCOPY . .\nCMD exec waitress-serve {option} app:app\n"
    )
    (tmp_path / "nginx.conf").write_text(
        "server {\n listen 80;\n location / { proxy_pass http://127.0.0.1:8080; }\n}\n"
    )
    walk = discover(tmp_path)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert (launch.app.kind, launch.app.sockets, launch.fronts) == ("waitress", (), ())
