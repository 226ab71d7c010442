"""Templates whose structure is templated (Jinja `{% if %}` / `{% for %}` around lines, a line
that is only an expression, a Go / consul-template `{{ define }}`) are read for links only:
what they bind, start or pass to joins the launch graph, and nothing in them is judged."""

from __future__ import annotations

from pathlib import Path

from tests.test_check_launch_chain import chains, check_folder

_GUNICORN = 'bind = "unix:/var/lib/app/app.sock"\nworkers = 4\ntimeout = 300\n'

_NGINX = """\
events {}
http {
    {% if ssl_certfile %}
    ssl_certificate {{ ssl_certfile }};
    {% endif %}
    upstream app {
        server unix:/var/lib/app/app.sock fail_timeout=0;
    }
    server {
        listen {{ listen | default('0.0.0.0:9999') }};
        location /api/ {
            proxy_pass http://app/;
            proxy_read_timeout 5s;
        }
        {% for endpoint in endpoints %}
        {{ endpoint["part"] }}
        location {{ endpoint["location"] }} {
            proxy_pass {{ endpoint["url"] }};
        }
        {% endfor %}
    }
}
"""


def test_an_nginx_front_templated_in_its_structure_joins_the_server(tmp_path: Path) -> None:
    """An nginx config template with `{% if %}` / `{% for %}` blocks and a line that is only an
    expression, copied with the image's whole context and rendered by a generator at start,
    is read for links only: its literal `upstream` is the front of the gunicorn binding that
    socket, one note says it was read for links only at its first templated line, and no
    finding is raised from it though its timeout is shorter than gunicorn's (seen in
    openstack/skyline-apiserver's `templates/nginx.conf.j2`)."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "gunicorn.py").write_text(_GUNICORN)
    (tmp_path / "app" / "templates").mkdir(parents=True)
    (tmp_path / "app" / "templates" / "nginx.conf.j2").write_text(_NGINX)
    (tmp_path / "start.sh").write_text(
        "#!/bin/sh\napp-nginx-generator --output-file /etc/nginx/nginx.conf\nnginx\n"
    )
    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.12\nCOPY ./ /opt/app/\nCOPY start.sh /usr/local/bin/start.sh\nCMD ["start.sh"]\n'
    )
    assert [(c[-1:], f) for c, f, _ in chains(tmp_path)] == [
        (["etc/gunicorn.py"], ["app/templates/nginx.conf.j2"])
    ]
    result = check_folder(tmp_path)
    assert not [f for f in result.findings if f.at.file.name == "nginx.conf.j2"]
    assert not [
        f for f in result.findings if any(r.file.name == "nginx.conf.j2" for r in f.related)
    ]
    said = [n for n in result.notes if n.at.file.name == "nginx.conf.j2" and n.kind == "template"]
    assert [(n.at.line, "read for links only" in n.message) for n in said] == [(3, True)]


def test_a_uwsgi_ctmpl_is_the_config_a_consul_template_exec_starts(tmp_path: Path) -> None:
    """A consul-template config rendering `uwsgi.ini.ctmpl` (a Go template with a `{{ define }}`)
    to `/etc/uwsgi/uwsgi.ini` and exec-ing `uwsgi /etc/uwsgi/uwsgi.ini` starts uWSGI with that
    template, read for links only: the chain ends at the template, which is its config, and
    its socket is read (seen in metabrainz/listenbrainz-server's `uwsgi.ini.ctmpl`)."""
    (tmp_path / "uwsgi").mkdir()
    (tmp_path / "uwsgi" / "uwsgi.ini.ctmpl").write_text(
        '{{- define "KEY" -}}\n    {{ key (printf "configs/uwsgi/%s" .) }}\n{{- end -}}\n'
        "[uwsgi]\nmaster = true\nsocket = 0.0.0.0:3031\nmodule = app.server\n"
        'processes = {{template "KEY" "processes"}}\n'
    )
    (tmp_path / "uwsgi" / "consul-template-uwsgi.conf").write_text(
        'template {\n    source = "/etc/uwsgi/uwsgi.ini.ctmpl"\n'
        '    destination = "/etc/uwsgi/uwsgi.ini"\n}\n\n'
        'exec {\n    command = ["uwsgi", "/etc/uwsgi/uwsgi.ini"]\n}\n'
    )
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12\n"
        "COPY uwsgi/uwsgi.ini.ctmpl /etc/uwsgi/uwsgi.ini.ctmpl\n"
        "COPY uwsgi/consul-template-uwsgi.conf /etc/consul-template-uwsgi.conf\n"
        'CMD ["consul-template", "-config", "/etc/consul-template-uwsgi.conf"]\n'
    )
    ((chain, _, launch),) = chains(tmp_path)
    assert chain == ["Dockerfile", "uwsgi/consul-template-uwsgi.conf", "uwsgi/uwsgi.ini.ctmpl"]
    assert launch.app.kind == "uwsgi"
    assert [s.value for s in launch.app.sockets] == ["0.0.0.0:3031"]


def test_reading_for_links_keeps_every_branch_and_drops_what_only_an_expression_writes() -> None:
    """Every branch of an `if` is kept once on its own lines, a `for` body once, a line that is
    only an expression and a Go `define` body are dropped, other values are unresolved; the
    first templated line is the structure's. A values-only template is not read this way."""
    from servertune.check.value_templates import read_links

    read = read_links(
        "a\n{% if x %}\nb {{ y }}\n{% else %}\nc\n{% endif %}\n  {{ whole_line }}\n"
        '{{ define "K" }}\nd\n{{ end }}\n'
    )
    assert read is not None
    assert read.text.split("\n") == ["a", "", "b ${y}", "", "c", "", "", "", "", "", ""]
    assert read.structure == 2
    assert read_links("a = {{ y }}\n") is None
