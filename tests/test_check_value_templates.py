"""Jinja templates whose templating is only in values (an ansible role's units and site, a
salt state's supervisord program) are read as the file they install as, not skipped."""

from __future__ import annotations

from pathlib import Path

from servertune.check.source import read_text, template_text
from servertune.check.value_templates import installed_name, read_values
from tests.test_check_launch_chain import chains, check_folder

_SERVICE = """\
[Unit]
Description=gunicorn daemon
Requires=app.socket

[Service]
User= {{ app_user }}
{# the venv the role made #}
ExecStart={{ venv }}/bin/gunicorn -k gthread -w {{ workers }} --timeout {{ timeout | default(60) }} 'api:create_app()'

[Install]
WantedBy=multi-user.target
"""

_SOCKET = """\
[Unit]
Description=gunicorn socket

[Socket]
ListenStream=/run/app/socket
ListenStream={{ listen_on }}

[Install]
WantedBy=sockets.target
"""

_SITE = """\
# {{ ansible_managed }}
server {
    server_name {{ server_name }};
    {% if enable_ssl | bool -%}
    listen 443 ssl;
    ssl_certificate /etc/ssl/certs/{{ crt }};
    {% else %}
    listen 80;
    {% endif %}
    location /api/ {
        proxy_set_header Host {{ flask_host }};
        proxy_pass http://unix:/run/app/socket:;
    }
}
"""


def _role(root: Path) -> None:
    templates = root / "ansible" / "web" / "templates"
    templates.mkdir(parents=True)
    (templates / "app.service.j2").write_text(_SERVICE)
    (templates / "app.socket.j2").write_text(_SOCKET)
    (templates / "site.nginx.j2").write_text(_SITE)


def test_an_ansible_role_unit_pair_and_site_are_read_and_joined(tmp_path: Path) -> None:
    """A role's `app.service.j2` starting gunicorn is read as the unit, paired with the
    `app.socket.j2` it installs beside it (their names without `.j2`), and the nginx site
    template passing to that socket is its front; each unresolved value and the `if` whose
    first branch was read are said, and nothing of them is skipped as a template (seen in
    picoCTF/picoCTF's ansible role)."""
    _role(tmp_path)
    found = chains(tmp_path)
    assert [(c, f) for c, f, _ in found] == [
        (
            ["ansible/web/templates/app.service.j2", "ansible/web/templates/app.socket.j2"],
            ["ansible/web/templates/site.nginx.j2"],
        )
    ]
    result = check_folder(tmp_path)
    notes = [n for n in result.notes if n.at.file.name.endswith(".j2")]
    assert not [n for n in notes if "was not read" in n.message]
    unresolved = " ".join(n.message for n in notes if n.kind == "unresolved-variable")
    assert "{{ workers }}" in unresolved
    assert "{{ listen_on }}" in unresolved
    assert "{{ timeout }}" not in unresolved  # its default is the value read
    assert any("first branch" in n.message and n.at.line == 4 for n in notes)


def test_a_salt_supervisord_program_template_starts_daphne(tmp_path: Path) -> None:
    """A supervisord config template whose program command holds Jinja values and an inline
    `{% if %}` is read as supervisord's, and the daphne it starts is a launch (seen in
    tethysplatform/tethys's salt templates)."""
    (tmp_path / "gen_templates").mkdir()
    (tmp_path / "gen_templates" / "asgi_service").write_text(
        "[fcgi-program:asgi]\n"
        "socket=tcp://127.0.0.1:{{ port }}\n"
        "directory={{ src }}\n"
        'command=bash -c "{% if not micromamba %}source {{ conda }}/bin/activate && '
        "{% endif %}{{ prefix }}/bin/daphne -u /run/asgi%(process_num)d.sock --fd 0 "
        'app.asgi:application"\n'
        "numprocs={{ processes }}\n"
        "process_name=asgi%(process_num)d\n"
    )
    found = chains(tmp_path)
    assert [(c, launch.app.kind) for c, _, launch in found] == [
        (["gen_templates/asgi_service"], "daphne")
    ]


def test_a_template_whose_lines_are_generated_is_not_read() -> None:
    """A template whose structure is templated (a whole line written by an expression, an
    include, a macro) is not read as its kind: it stays one skipped template."""
    assert read_values("[Service]\n{{ exec_line }}\n") is None
    assert read_values("server {\n{% include 'x.j2' %}\n}\n") is None
    assert read_values("[Service]\nExecStart={% if a %}x\n") is None  # never closed


def test_values_branches_and_comments_keep_the_template_lines() -> None:
    """`{{ x | default('v') }}` reads as `v`, `{{ x }}` as `${x}`, a comment is dropped, an
    `if` keeps its first branch, a `for` body is read once, and every line keeps its number."""
    found = read_values(
        "a={{ x | default('v') }}\n{# c\nd #}\nb={{ y.z }}\n"
        "{% if q %}\nfirst\n{% else %}\nsecond\n{% endif %}\n{% for i in l %}\nrow={{ i }}\n{% endfor %}\n"
    )
    assert found is not None
    assert found.text.splitlines() == [
        "a=v",
        "",
        "",
        "b=${y_z}",
        "",
        "first",
        "",
        "",
        "",
        "",
        "row=${i}",
        "",
    ]
    assert found.branches == (5,)
    assert installed_name("app.socket.j2") == "app.socket"


def test_a_runs_reading_of_a_template_ends_with_the_run(tmp_path: Path) -> None:
    """A template is read as its kind only inside the run that chose to: after it, the file
    reads as itself again, so another run in the same process (a file named on its own, a
    walk where an image holds it) never sees this run's reading."""
    _role(tmp_path)
    service = tmp_path / "ansible" / "web" / "templates" / "app.service.j2"
    assert check_folder(tmp_path).apps
    assert read_text(service) == _SERVICE
    assert template_text(service, read_text(service)) == _SERVICE


def test_a_template_an_image_holds_is_left_to_its_render_where_the_container_starts(
    tmp_path: Path,
) -> None:
    """A value-only template an image of the run copies is not read in place: where the
    container starts a command renders it (`check.jinja`), which reads it when a command
    names it; here none does, so it stays one skipped template and no server is read from it."""
    _role(tmp_path)
    (tmp_path / "Dockerfile").write_text("FROM debian:12\nCOPY ansible/ /srv/ansible/\n")
    result = check_folder(tmp_path)
    assert result.apps == ()
    (walk,) = result.discovered
    assert sorted(p.name for p, _ in walk.templates) == [
        "app.service.j2",
        "app.socket.j2",
        "site.nginx.j2",
    ]


def test_a_role_an_image_carries_with_its_whole_build_context_is_still_read(
    tmp_path: Path,
) -> None:
    """An image copying its whole build context (`COPY . /docker-entrypoint-initdb.d/`)
    carries the role's templates too, but no file of the run names them or what they render
    to: the role is still read as its units, and counted among the files read (seen in
    tournesol-app/tournesol, whose database image copies the whole repository)."""
    _role(tmp_path)
    (tmp_path / "Dockerfile").write_text("FROM postgres:16\nCOPY . /docker-entrypoint-initdb.d/\n")
    ((chain, _, _),) = chains(tmp_path)
    assert chain[0] == "ansible/web/templates/app.service.j2"
    (walk,) = check_folder(tmp_path).discovered
    assert {p.name for p in walk.files} >= {"app.service.j2", "app.socket.j2", "site.nginx.j2"}
    assert walk.templates == ()


_PLAY = """\
- name: Set up the host
  hosts: all
  vars:
    app:
      domain: 'api.example.net'
      bind_port: '8000'
    haproxy_port: 8001
  tasks:
    - name: Caddy's site
      ansible.builtin.template:
        src: "{{ playbook_dir }}/templates/Caddyfile.j2"
        dest: /etc/caddy/Caddyfile
"""

_UNIT = """\
[Unit]
Description=api

[Service]
ExecStart=/opt/venv/bin/uvicorn api.main:app --host 127.0.0.1 --port {port}

[Install]
WantedBy=multi-user.target
"""


def test_caddy_and_haproxy_templates_are_read_with_their_plays_values(tmp_path: Path) -> None:
    """An ansible playbook's `templates/Caddyfile.j2` whose site address and upstream port are
    Jinja values (`{{ app.domain }} { reverse_proxy 127.0.0.1:{{ app.bind_port }} }`, as seen
    in hotosm/raw-data-api) is read as the Caddyfile it installs as, as an `haproxy.cfg.j2`
    is read as HAProxy's, each value taken from the play's `vars:` beside `templates/`, where
    it is a literal: each is the front of the uvicorn its unit starts on that port."""
    deploy = tmp_path / "infra" / "ansible"
    (deploy / "templates").mkdir(parents=True)
    (deploy / "setup.yml").write_text(_PLAY)
    (deploy / "templates" / "Caddyfile.j2").write_text(
        "{{ app.domain }} {\n  reverse_proxy 127.0.0.1:{{ app.bind_port }}\n}\n"
    )
    (deploy / "templates" / "haproxy.cfg.j2").write_text(
        "defaults\n  mode http\n  timeout client 30s\n  timeout server 30s\n"
        "  timeout connect 5s\n\nfrontend www\n  bind :80\n  default_backend api\n\n"
        "backend api\n  server one 127.0.0.1:{{ haproxy_port }}\n"
    )
    (tmp_path / "infra" / "api.service").write_text(_UNIT.format(port=8000))
    (tmp_path / "infra" / "api2.service").write_text(_UNIT.format(port=8001))
    found = {tuple(c): f for c, f, _ in chains(tmp_path)}
    assert found[("infra/api.service",)] == ["infra/ansible/templates/Caddyfile.j2"]
    assert found[("infra/api2.service",)] == ["infra/ansible/templates/haproxy.cfg.j2"]


def test_a_roles_defaults_fill_its_templates_and_two_values_fill_none(tmp_path: Path) -> None:
    """A role's `defaults/main.yml` gives `listen_on: "127.0.0.1:8000"` and `workers` twice
    (`defaults/` says 3, `vars/` says 5), as seen with picoCTF/picoCTF's pico-web role: its
    `gunicorn.socket.j2` and `gunicorn.service.j2` read `{{ listen_on }}` as 127.0.0.1:8000,
    while `{{ workers }}`, which the files give two values, is left unresolved."""
    role = tmp_path / "ansible" / "web"
    (role / "templates").mkdir(parents=True)
    (role / "defaults").mkdir()
    (role / "vars").mkdir()
    (role / "defaults" / "main.yml").write_text('listen_on: "127.0.0.1:8000"\nworkers: 3\n')
    (role / "vars" / "main.yml").write_text("workers: 5\n")
    (role / "templates" / "app.service.j2").write_text(
        "[Service]\nExecStart=/opt/venv/bin/gunicorn -w {{ workers }} api:app\n"
    )
    (role / "templates" / "app.socket.j2").write_text(
        "[Socket]\nListenStream={{ listen_on }}\n\n[Install]\nWantedBy=sockets.target\n"
    )
    result = check_folder(tmp_path)
    (app,) = result.apps
    assert [s.value for s in app.sockets] == ["127.0.0.1:8000"]
    unresolved = " ".join(n.message for n in result.notes if n.kind == "unresolved-variable")
    assert "{{ workers }}" in unresolved
    assert "listen_on" not in unresolved


def test_a_role_at_the_root_fills_templates_in_subfolders_with_chained_defaults(
    tmp_path: Path,
) -> None:
    """A role kept as the repository itself (`defaults/`, `templates/`, `tasks/` at its root, as
    seen in openwisp/ansible-openwisp2) fills the templates in folders below `templates/`
    (`templates/nginx/site.j2`) too, and a default written from another
    (`app_socket: "{{ app_path }}/uwsgi.sock"`) is filled from it: the uWSGI ini's socket, read
    for links only, is /opt/app/uwsgi.sock, the nginx site that passes to it is its front, and
    the supervisord program `templates/supervisor/web.j2` (installed without a suffix) is read."""
    (tmp_path / "defaults").mkdir()
    (tmp_path / "templates" / "nginx").mkdir(parents=True)
    (tmp_path / "templates" / "supervisor").mkdir()
    (tmp_path / "defaults" / "main.yml").write_text(
        'app_path: "/opt/app"\napp_socket: "{{ app_path }}/uwsgi.sock"\n'
        'asgi_socket: "{{ app_path }}/asgi.sock"\n'
    )
    (tmp_path / "templates" / "uwsgi.ini.j2").write_text(
        "[uwsgi]\nchdir={{ app_path }}\nmodule=app.wsgi\nsocket={{ app_socket }}\n"
        "{% if extra %}\n{{ extra }}\n{% endif %}\n"
    )
    (tmp_path / "templates" / "nginx" / "site.j2").write_text(
        "upstream app { server unix:{{ app_socket }}; }\n"
        "server {\n  listen 80;\n  location / { uwsgi_pass app; include uwsgi_params; }\n}\n"
    )
    (tmp_path / "templates" / "supervisor" / "web.j2").write_text(
        "[program:asgi]\ndirectory={{ app_path }}\n"
        "command={{ app_path }}/env/bin/daphne -u {{ asgi_socket }} app.asgi:application\n"
    )
    found = {tuple(c): f for c, f, _ in chains(tmp_path)}
    assert found[("templates/uwsgi.ini.j2",)] == ["templates/nginx/site.j2"]
    (asgi,) = [launch for c, _, launch in chains(tmp_path) if c == ["templates/supervisor/web.j2"]]
    assert [s.value for s in asgi.app.sockets] == ["unix:/opt/app/asgi.sock"]


def test_whitespace_control_joins_a_supervisord_command_split_over_lines(tmp_path: Path) -> None:
    """A supervisord program template whose `command=` spreads over continuation lines, a
    `{%- if -%}` ... `{% endif -%}` wrapping a prefix, is read as Jinja writes it: the
    whitespace control joins the lines, so the line that starts with `{{ venv }}` is a value,
    not a line the expression writes, and the gunicorn it starts is a launch; only a `{% for
    %}` templates another key (seen in dimagi/commcare-cloud's supervisor_django.conf.j2)."""
    templates = tmp_path / "roles" / "web" / "templates"
    templates.mkdir(parents=True)
    (templates / "supervisor_web.conf.j2").write_text(
        "[program:{{ project }}-web]\n"
        "directory={{ code_home }}/\n"
        'environment={% for k, v in env | dictsort %}{{ k }}="{{ v }}",'
        "{% endfor %}\n"
        "\n"
        "command={{ command_prefix }}\n"
        "    {%- if tracing -%}\n"
        "    {{ venv }}/bin/ddtrace-run {% endif -%}\n"
        "    {{ venv }}/bin/gunicorn\n"
        "    site.wsgi:application\n"
        "    -k gevent\n"
        "    --workers {{ item.workers }}\n"
        "    --bind 0.0.0.0:{{ port }}\n"
        "user={{ user }}\n"
    )
    found = chains(tmp_path)
    assert [(c, launch.app.kind) for c, _, launch in found] == [
        (["roles/web/templates/supervisor_web.conf.j2"], "gunicorn")
    ]


def test_whitespace_control_keeps_the_template_lines() -> None:
    """Lines joined by `{%-` / `-%}` / `{{-` read as one line on the first of them, and the line
    breaks taken out are written after it, so every later line keeps its number."""
    found = read_values("a={{ x }}\n  {%- if y -%}\n  b {% endif -%}\n  c\nd={{- z }}\ne\n")
    assert found is not None
    assert found.text.splitlines() == ["a=${x}b c", "", "", "", "d=${z}", "e"]


_PLAYED_COMPOSE = """\
services:
  api:
    image: 'example/api:{{ api_tag }}'
    build: ../..
    volumes:
      - {{ stage_dir }}/conf.yaml:/code/conf.yaml
  proxy:
    image: {{ proxy_image }}
    volumes:
      - {{ stage_dir }}/httpd-confs:/etc/apache2/sites-enabled
    ports:
      - "80:80"
    depends_on:
      - api
"""

_PLAYED_VHOST = """\
<VirtualHost *:80>
    ServerName {{ api_host }}
    ProxyPreserveHost On
    ProxyPass / http://api:8080/
    ProxyPassReverse / http://api:8080/
</VirtualHost>
"""


def _played(root: Path, play: bool) -> None:
    """A provisioning folder whose templates a playbook beside them renders (`play`), or the
    same templates with no play."""
    root.mkdir()
    (root / "Dockerfile").write_text(
        'FROM python:3.12\nCMD ["gunicorn", "app.main:app", "--bind", "0.0.0.0:8080"]\n'
    )
    (root / "provision" / "templates").mkdir(parents=True)
    if play:
        (root / "provision" / "stage.yaml").write_text(
            "- hosts: api\n  tasks:\n    - template: src=templates/docker-compose.yaml dest=/srv\n"
        )
    (root / "provision" / "templates" / "docker-compose.yaml").write_text(_PLAYED_COMPOSE)
    (root / "provision" / "templates" / "httpd-vhost.conf").write_text(_PLAYED_VHOST)


def test_an_ansible_compose_template_and_apache_vhost_are_read_and_joined(
    tmp_path: Path,
) -> None:
    """A compose file in the `templates/` of a playbook's folder, `{{ }}` only in its values, is
    read as the compose file the play installs (its service starts the image this repository
    builds), and an Apache vhost template beside it, `ProxyPass / http://api:8080/`, is that
    service's front: neither is skipped as a template (seen in geneontology/go-fastapi). The same
    compose template with no play to render it (a scaffold another project fills) is still
    skipped, never read as this repository's deployment."""
    _played(tmp_path / "played", play=True)
    _played(tmp_path / "scaffold", play=False)
    assert [c for c, _, _ in chains(tmp_path / "scaffold")] == [["Dockerfile"]]
    found = chains(tmp_path / "played")
    assert [(c, f) for c, f, _ in found] == [
        (
            ["provision/templates/docker-compose.yaml", "Dockerfile"],
            ["provision/templates/httpd-vhost.conf"],
        )
    ]


def test_cloud_foundry_nginx_buildpack_templates_are_named_as_its(tmp_path: Path) -> None:
    """An nginx.conf the Cloud Foundry nginx buildpack renders (its folder's `buildpack.yml`
    configures `nginx:`; `{{port}}`, `{{env "NAME"}}`) says its values come from the buildpack
    where the app is staged, `{{env "NAME"}}` named as the variable NAME, not as ansible or salt
    variables (seen in GSA/datagov-harvester's proxy)."""
    proxy = tmp_path / "proxy"
    proxy.mkdir()
    (proxy / "buildpack.yml").write_text("---\nnginx:\n  version: mainline\n")
    (proxy / "nginx.conf").write_text(
        "events {}\nhttp {\n  server {\n    listen {{port}};\n"
        '    server_name {{env "EXTERNAL_ROUTE"}};\n    location / {\n'
        "      proxy_pass http://app.internal:8080;\n    }\n  }\n}\n"
    )
    result = check_folder(tmp_path)
    (said,) = [
        n.message for n in result.notes if n.kind == "unresolved-variable" and "`{{" in n.message
    ]
    assert "Cloud Foundry nginx buildpack" in said
    assert "ansible" not in said
    assert "`{{ EXTERNAL_ROUTE }}` (line 5)" in said


def test_a_role_site_an_image_carries_with_its_whole_context_is_still_read(
    tmp_path: Path,
) -> None:
    """An ansible role's nginx site template (`templates/default.j2`, Jinja only in values) is
    read as nginx and fronts the role's gunicorn unit template, though a Dockerfile beside it
    copies the whole repository (`COPY . /app`) and removes nginx's own `sites-enabled/default`:
    the play renders the role's templates on its hosts, the container does not (seen in
    dfirtrack/dfirtrack's ansible role)."""
    role = tmp_path / "ansible" / "roles" / "web"
    (role / "tasks").mkdir(parents=True)
    (role / "tasks" / "main.yml").write_text(
        "- template:\n    src: default.j2\n    dest: /etc/nginx/sites-available/default\n"
    )
    (role / "templates").mkdir()
    (role / "templates" / "default.j2").write_text(
        "server {\n    listen 80;\n    server_name {{ fqdn }};\n"
        "    location / {\n        proxy_pass http://localhost:5000;\n"
        "        proxy_read_timeout 90;\n    }\n}\n"
    )
    (role / "templates" / "app.service.j2").write_text(
        "[Service]\nUser={{ user }}\n"
        "ExecStart={{ venv }}/bin/gunicorn --workers 4 --bind localhost:5000 app.wsgi\n"
    )
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / "Dockerfile").write_text(
        "FROM python:3.12\nCOPY . /app\nRUN rm /etc/nginx/sites-enabled/default\n"
        'CMD ["gunicorn", "--bind", "0.0.0.0:8000", "app.wsgi"]\n'
    )
    found = [(c, f) for c, f, _ in chains(tmp_path)]
    assert (
        ["ansible/roles/web/templates/app.service.j2"],
        ["ansible/roles/web/templates/default.j2"],
    ) in found


_VASSAL = "[uwsgi]\nmodule = app.wsgi\nmaster = true\nharakiri = 60\nsocket = {{ uwsgi_socket }}\n"
_UWSGI_SITE = (
    "upstream django {\n    server unix:{{ uwsgi_socket }};\n}\n"
    "server {\n    listen 80;\n    location / {\n        uwsgi_pass django;\n"
    "        uwsgi_read_timeout 30;\n    }\n}\n"
)


def test_a_site_and_an_ini_with_the_same_template_socket_are_joined_by_that_name(
    tmp_path: Path,
) -> None:
    """An ansible role's nginx site passing to `unix:{{ uwsgi_socket }}` and its uWSGI ini
    binding `socket = {{ uwsgi_socket }}` name one socket, whatever value the play gives: the
    site is the ini's front (a `joined-by-name` note says why), so its `uwsgi_read_timeout 30`
    under `harakiri = 60` is found (seen in Cadasta/cadasta-platform's provisioning role)."""
    templates = tmp_path / "roles" / "web" / "templates"
    templates.mkdir(parents=True)
    (templates / "uwsgi.ini").write_text(_VASSAL)
    (templates / "nginx-site").write_text(_UWSGI_SITE)
    found = [(c, f) for c, f, _ in chains(tmp_path)]
    assert found == [(["roles/web/templates/uwsgi.ini"], ["roles/web/templates/nginx-site"])]
    result = check_folder(tmp_path)
    assert any(n.kind == "joined-by-name" for n in result.notes)
    assert any(f.rule == "app-timeout-over-read-timeout" for f in result.findings)


def test_a_template_socket_two_servers_share_joins_neither(tmp_path: Path) -> None:
    """Two inis binding `{{ uwsgi_socket }}` (two roles, or two environments): which one the
    site reaches is not in the files, so it is joined to neither."""
    for role in ("web", "api"):
        templates = tmp_path / "roles" / role / "templates"
        templates.mkdir(parents=True)
        (templates / "uwsgi.ini").write_text(_VASSAL)
    (tmp_path / "roles" / "web" / "templates" / "nginx-site").write_text(_UWSGI_SITE)
    assert all(not f for _, f, _ in chains(tmp_path))
