"""`check` reads an NGINX Unit config as the Python app server it configures: each Python
application's processes and threads, the listeners that reach it (directly or through routes),
and Unit's keep-alive (`settings.http.idle_timeout`, 180 s by default); the script that starts
`unitd` and loads the file into its control socket (`curl --data-binary @FILE`) is the launch,
and a front passing to a listener's port links to it. Rules built on another server's defaults
or servertune's measurements of other servers say nothing about it. (No unitd on this machine:
the fixtures follow Unit's documented configuration, https://unit.nginx.org/configuration/.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from servertune.check import CheckInputError, check_files
from servertune.check.model import Location, NothingToCheck, Setting
from servertune.check.readers import reader_for
from servertune.check.unit import DEFAULT_BACKLOG, DEFAULT_IDLE_TIMEOUT_S, read_unit
from servertune.cli import app
from tests.folder_support import chains, check_folder, write

#: A Unit config as projects write one: listeners passing through named routes (one serving
#: static files first), a status listener to something else, an application with a dynamic
#: process pool and threads.
UNIT = """\
{
  "listeners": {
    "*:8080": {"pass": "routes/main", "backlog": 1024},
    "127.0.0.1:8081": {"pass": "routes/status"}
  },
  "routes": {
    "main": [
      {"match": {"uri": "/static/*"}, "action": {"share": "/srv$uri"}},
      {"action": {"pass": "applications/web"}}
    ],
    "status": [{"action": {"proxy": "http://unix:/run/unit.sock"}}]
  },
  "applications": {
    "web": {
      "type": "python 3.12",
      "path": "/srv/app",
      "module": "app.wsgi",
      "processes": {"max": 4, "spare": 1, "idle_timeout": 20},
      "threads": 2
    }
  }
}
"""


def test_a_python_application_with_its_processes_threads_and_listeners(tmp_path: Path) -> None:
    """`processes.max` is the most it runs, `threads` its threads, the listeners whose routes
    reach it its sockets (not the status one), each at its line; Unit's idle_timeout (180 s)
    is its keep-alive."""
    path = tmp_path / "unit.json"
    path.write_text(UNIT)
    (web,) = read_unit(path, UNIT)
    assert web.kind == "unit"
    assert web.workers == Setting(4, Location(path, 18))
    assert web.threads == Setting(2, Location(path, 19))
    assert [(s.value, s.at.line) for s in web.sockets] == [("*:8080", 3)]
    assert web.backlog == Setting(1024, Location(path, 3))
    assert web.keepalive == Setting(DEFAULT_IDLE_TIMEOUT_S, Location(path, 1), default=True)
    assert web.request_timeout is None
    assert web.config_file == Location(path, 1)


def test_unit_defaults_and_the_direct_listener_form(tmp_path: Path) -> None:
    """No processes nor threads: one of each (Unit's defaults), marked defaults; a listener
    passing straight to `applications/NAME`; `settings.http.idle_timeout` read; a listener's
    backlog left out is Unit's 511."""
    text = (
        '{"settings": {"http": {"idle_timeout": 30}},\n'
        ' "listeners": {"0.0.0.0:8000": {"pass": "applications/api"}},\n'
        ' "applications": {"api": {"type": "python", "module": "api", "protocol": "asgi"}}}\n'
    )
    path = tmp_path / "config.json"
    path.write_text(text)
    (api,) = read_unit(path, text)
    assert (api.workers.value, api.workers.default) == (1, True)
    assert (api.threads.value, api.threads.default) == (1, True)
    assert [s.value for s in api.sockets] == ["0.0.0.0:8000"]
    assert api.keepalive == Setting(30.0, Location(path, 1))
    assert api.backlog.value == DEFAULT_BACKLOG
    assert api.interface == "asgi"


def test_a_config_of_no_python_application_starts_no_server(tmp_path: Path) -> None:
    """A PHP application only: nothing check reads, said as such (not an error)."""
    text = '{"listeners": {"*:80": {"pass": "applications/blog"}}, "applications": {"blog": {"type": "php", "root": "/www"}}}'
    path = tmp_path / "unit.json"
    path.write_text(text)
    with pytest.raises(NothingToCheck, match="no Python application"):
        read_unit(path, text)


@pytest.mark.parametrize(
    ("application", "said"),
    [
        ('{"type": "python", "processes": "four"}', "processes 'four'"),
        ('{"type": "python", "processes": {"max": 0}}', "processes.max 0"),
        ('{"type": "python", "threads": true}', "threads True"),
    ],
)
def test_values_unit_refuses_are_one_line_naming_the_line(
    tmp_path: Path, application: str, said: str
) -> None:
    """A process or thread count Unit refuses: one error naming the file and the line."""
    text = (
        '{"listeners": {"*:80": {"pass": "applications/a"}},\n"applications": {"a": '
        + application
        + "}}"
    )
    path = tmp_path / "unit.json"
    path.write_text(text)
    with pytest.raises(CheckInputError, match=f"unit.json:2: {said}"):
        read_unit(path, text)


def test_claimed_by_its_content_among_json_files(tmp_path: Path) -> None:
    """A JSON object with Unit's top-level keys is Unit's; other JSON stays unread data."""
    assert reader_for(tmp_path / "nginx-unit.json", UNIT).kind == "unit"
    assert reader_for(tmp_path / "package.json", '{"name": "x"}').kind == "data"


DOCKERFILE = """\
FROM python:3.12-slim
COPY unit.json /etc/unit/config.json
COPY launch.sh /launch.sh
CMD ["/launch.sh"]
"""
LAUNCH = """\
#!/bin/sh
UNIT_CONFIG="${UNIT_CONFIG-/etc/unit/config.json}"
load_configuration() {
  curl --request PUT --data-binary "@${UNIT_CONFIG}" \\
    --unix-socket /run/unit.sock http://localhost/config
}
load_configuration &
exec unitd --no-daemon --control unix:/run/unit.sock
"""
NGINX = """\
upstream app {
    server 127.0.0.1:8080;
    keepalive 8;
    keepalive_timeout %ds;
}
server {
    listen 80;
    location / {
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_pass http://app;
    }
}
"""


def _repository(tmp_path: Path, nginx_keepalive: int = 60) -> Path:
    return write(
        tmp_path,
        {
            "Dockerfile": DOCKERFILE,
            "launch.sh": LAUNCH,
            "unit.json": UNIT,
            "nginx/app.conf": NGINX % nginx_keepalive,
        },
    )


def test_the_script_that_starts_unitd_and_loads_the_file_is_the_launch(tmp_path: Path) -> None:
    """Dockerfile -> the script's `exec unitd` line -> the JSON its curl loads (found through
    the image's COPY) -> Unit's application, once (the JSON read on its own is the same
    server), with nginx in front of its listener."""
    root = _repository(tmp_path)
    result = check_folder(root)
    assert not result.errors
    assert chains(result, root) == [(["Dockerfile:4", "launch.sh:8", "unit.json:1"], "unit", 4)]
    (link,) = result.links
    assert link.app.kind == "unit"
    output = CliRunner().invoke(app, ["check", "--cores", "4", str(root)]).output
    assert "-> unit 4 x 2 on *:8080; behind " + str(root / "nginx/app.conf") in output


def test_nginx_pooling_longer_than_units_idle_timeout_is_found_in_units_words(
    tmp_path: Path,
) -> None:
    """nginx's upstream keepalive_timeout 200 s past Unit's default 180 s: the 502 race, at
    Unit's config with the fix in its JSON; 60 s (under 180 s) is silent."""
    root = _repository(tmp_path, nginx_keepalive=200)
    (finding,) = [
        f for f in check_folder(root).findings if f.rule == "upstream-keepalive-over-app-keepalive"
    ]
    assert finding.at == Location(root / "unit.json", 1)
    assert finding.fix == '"settings": {"http": {"idle_timeout": 205}}'
    root60 = _repository(tmp_path / "quiet")
    assert not [
        f
        for f in check_folder(root60).findings
        if f.rule == "upstream-keepalive-over-app-keepalive"
    ]


def test_rules_of_other_servers_say_nothing_about_unit(tmp_path: Path) -> None:
    """4 processes on 2 cores with a workload given: no workers-over-cores advice (servertune
    measured no Unit layout) and no plan comparison (it writes no Unit config); nothing
    names a gunicorn or uWSGI setting. nginx's own plan advice is still given."""
    from servertune.check.audit import plan_for_check
    from servertune.machine import Machine
    from servertune.workload import Workload

    root = _repository(tmp_path)
    machine = Machine(cores=2, cores_source="the test's machine", somaxconn=4096)
    plan = plan_for_check(Workload(cores=2, service_time_ms=100, cpu_fraction=0.5), machine)
    files = [root / "Dockerfile", root / "launch.sh", root / "unit.json", root / "nginx/app.conf"]
    result = check_files(files, machine=machine, plan=plan, root=root)
    assert not result.errors
    about_unit = [f for f in result.findings if f.at.file.name in ("unit.json", "launch.sh")]
    assert about_unit == []
    assert {f.rule for f in result.findings} & {"plan-differs"}, "nginx's side still compared"


def test_unitd_with_no_config_loaded_here_is_not_followed(tmp_path: Path) -> None:
    """A script that runs unitd and loads nothing (Unit runs its state directory's config):
    a not-followed note at the unitd line, never "starts no server"."""
    root = write(tmp_path, {"run.sh": "#!/bin/sh\nexec unitd --no-daemon\n"})
    result = check_folder(root)
    assert [(n.kind, n.at) for n in result.notes] == [
        ("not-followed", Location(root / "run.sh", 2))
    ]


@pytest.mark.parametrize(
    "text",
    [
        '{"applications": [], "listeners": {}}',
        '{"settings": {"http": 5}, "applications": {}}',
        "[1, 2]",
        "{",
    ],
)
def test_hostile_unit_json_is_one_error_line(tmp_path: Path, text: str) -> None:
    """A Unit config of the wrong shape or not JSON at all: one CheckInputError, no traceback."""
    path = tmp_path / "unit.json"
    path.write_text(text)
    with pytest.raises(CheckInputError, match=r"unit\.json"):
        read_unit(path, text)
