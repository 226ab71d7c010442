"""Files of kinds check reads that it used to leave unread: systemd `.socket` units (the
listening socket of the service they activate) and `.timer` units (a oneshot job, no server).
Each test writes a small repository of its own for the pattern (seen in liberapay's
`.platform/files/webapp@.socket` and ooni/backend's `api/debian/*.timer`)."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine

MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _check(root: Path) -> CheckResult:
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root)


SOCKET = """\
[Unit]
Description=socket of the app #%i

[Socket]
ListenStream=/run/app/%i.sock
Service=app@%i.service
"""

SERVICE = """\
[Unit]
Requires=app@%i.socket

[Service]
Sockets=app@%i.socket
ExecStart=/srv/venv/bin/gunicorn --workers 3 --bind 127.0.0.1:9000 site.wsgi
"""

NGINX = """\
upstream app { server unix:/run/app/%i.sock; }
server {
    listen 80;
    location / { proxy_pass http://app; }
}
"""


def test_a_socket_unit_is_the_listening_socket_of_the_service_it_activates(
    tmp_path: Path,
) -> None:
    """A `.socket` unit with `ListenStream=` is read, and gunicorn started by the service it
    activates (its `Service=`, the unit's `Sockets=`) listens on the socket's address, not its
    own `--bind`: systemd hands it the socket. The socket unit is in the launch chain, and the
    nginx front that proxies to that address is linked."""
    _write(
        tmp_path,
        {
            "deploy/app@.socket": SOCKET,
            "deploy/app@.service": SERVICE,
            "deploy/nginx.conf": NGINX,
        },
    )
    walk = discover(tmp_path)
    assert tmp_path / "deploy/app@.socket" in walk.files
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    (app,) = result.apps
    assert [s.value for s in app.sockets] == ["unix:/run/app/%i.sock"]
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    chain = [at.file.relative_to(tmp_path).as_posix() for at in launch.chain]
    assert chain[:2] == ["deploy/app@.service", "deploy/app@.socket"]
    assert [at.file.name for at in launch.fronts] == ["nginx.conf"]
    assert not any(n.at.file.name == "app@.socket" for n in result.notes)


def test_a_socket_unit_activates_a_service_unit_kept_as_a_template_of_an_ansible_role(
    tmp_path: Path,
) -> None:
    """An ansible role installs `templates/web.service.j2` (a plain unit, no Jinja in it) as
    `web.service` and copies `files/web.socket` beside it (seen in tournesol-app/tournesol):
    the socket activates the service by the name it is installed under, so gunicorn listens
    on the socket's address, and the socket unit is in its launch chain."""
    _write(
        tmp_path,
        {
            "roles/app/files/web.socket": "[Socket]\nListenStream=/run/web.sock\n",
            "roles/app/templates/web.service.j2": (
                "[Service]\nExecStart=/srv/venv/bin/gunicorn --workers 3 site.wsgi\n"
            ),
        },
    )
    result = _check(tmp_path)
    (app,) = result.apps
    assert [s.value for s in app.sockets] == ["unix:/run/web.sock"]
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert [at.file.name for at in launch.chain][:2] == ["web.service.j2", "web.socket"]


def test_a_socket_unit_of_the_services_name_activates_it_without_sockets(
    tmp_path: Path,
) -> None:
    """With no `Service=` nor `Sockets=`, `web.socket` activates `web.service` (systemd's
    default); a bare port in `ListenStream=` is that port on every address. uWSGI takes the
    socket too. A socket unit whose `Service=` names another service is not this server's:
    gunicorn keeps its own `--bind` there."""
    _write(
        tmp_path,
        {
            "web.socket": "[Socket]\nListenStream=8001\n",
            "web.service": "[Service]\nExecStart=/usr/bin/uwsgi --http-socket :9000 "
            "--module site.wsgi --processes 2\n",
        },
    )
    (app,) = _check(tmp_path).apps
    assert [(s.value, s.at.file.name) for s in app.sockets] == [("0.0.0.0:8001", "web.socket")]
    other = tmp_path / "other"
    _write(
        other,
        {
            "web.socket": "[Socket]\nListenStream=8001\nService=api.service\n",
            "web.service": "[Service]\nExecStart=gunicorn -b 127.0.0.1:9000 site.wsgi\n",
        },
    )
    (app,) = _check(other).apps
    assert [s.value for s in app.sockets] == ["127.0.0.1:9000"]


def test_a_timer_unit_is_read_as_a_oneshot_job_starting_no_server(tmp_path: Path) -> None:
    """A `.timer` unit is read (not left unread): it starts its service on a schedule, a
    oneshot job, which one `starts-no-server` note names."""
    _write(
        tmp_path,
        {
            "debian/upload.timer": "[Unit]\nDescription=upload\n\n[Timer]\nOnCalendar=hourly\n",
            "debian/upload.service": "[Service]\nType=oneshot\nExecStart=/usr/bin/upload\n",
        },
    )
    walk = discover(tmp_path)
    assert tmp_path / "debian/upload.timer" in walk.files
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    (message,) = [
        n.message
        for n in result.notes
        if n.at.file.name == "upload.timer" and n.kind == "starts-no-server"
    ]
    assert "starts upload.service on a schedule (a oneshot job)" in message


def test_bash_helpers_and_nginx_envsh_scripts_are_read_as_shell_by_their_suffix(
    tmp_path: Path,
) -> None:
    """A sourced `*.bash` helper (no shebang) and the nginx image's
    `/docker-entrypoint.d/*.envsh` script (sourced to export variables before the templates
    are rendered) are shell scripts by their suffix: found and read, not left unread
    (CMSgov/bluebutton-web-server's scripts/*.bash, internetstandards/Internet.nl's
    docker/webserver/10-variables.envsh)."""
    _write(
        tmp_path,
        {
            "scripts/support.bash": "start_app() {\n    exec gunicorn -b :8000 site.wsgi\n}\n",
            "webserver/10-vars.envsh": "export UPSTREAM_HOST=app\n",
        },
    )
    walk = discover(tmp_path)
    names = {p.name for p in walk.files}
    assert {"support.bash", "10-vars.envsh"} <= names
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    kinds = {n.at.file.name: n.kind for n in result.notes}
    assert kinds.get("10-vars.envsh") == "starts-no-server"
    assert "not-read" not in {n.kind for n in result.notes}


def test_an_example_copy_of_compose_or_kubernetes_yaml_is_read_but_never_deployed(
    tmp_path: Path,
) -> None:
    """`docker-compose.override.yml.example` and `configmap.yaml.example` (copies a person
    renames and edits; seen in peering-manager/docker and kernelci/kernelci-api) are read as
    the kind their name without `.example` says, then named once as an example: the gunicorn
    the compose example starts is no launch, and the example is no overlay of the real file."""
    _write(
        tmp_path,
        {
            "docker-compose.yml": "services:\n  web:\n    image: web\n"
            "    command: gunicorn -b :8000 site.wsgi\n",
            "docker-compose.override.yml.example": "services:\n  web:\n"
            "    command: gunicorn -b :9000 -w 7 site.wsgi\n",
            "kube/configmap.yaml.example": "apiVersion: v1\nkind: ConfigMap\n"
            "metadata:\n  name: cfg\ndata:\n  port: '8000'\n",
        },
    )
    walk = discover(tmp_path)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=tmp_path)
    (app,) = result.apps
    assert [s.value for s in app.sockets] == [":8000"]
    examples = sorted(n.at.file.name for n in result.notes if "an example to copy" in n.message)
    assert examples == ["configmap.yaml.example", "docker-compose.override.yml.example"]
    assert "not-read" not in {n.kind for n in result.notes}
