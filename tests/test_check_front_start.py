"""The files a front's container makes when it starts (`echo ... >`, `envsubst <src >dst`,
`cp`) before it starts nginx are what its config's absolute `include`s read: the chain joins
the app the written upstream names, with that container's environment, on evidence in the
files only. Each repository is written here for the form it pins."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launches
from tests.folder_support import check_folder, write

_APP = 'FROM python:3.12-slim\nCOPY . /app\nCMD ["gunicorn", "-b", "0.0.0.0:8000", "shop.wsgi"]\n'
_PROXY_IMAGE = """\
FROM nginx:1.27
COPY nginx/nginx.conf nginx/tls.conf /etc/nginx/
COPY proxy/start.sh /start.sh
ENV APP_PASS=app
ENTRYPOINT ["/start.sh"]
"""
_NGINX = """\
events {}
http {
  upstream app {
    include /run/front/upstream;
  }
  server {
    listen 8080;
    location / {
      include /run/front/pass;
    }
  }
}
"""
#: The script picks the config by a variable, writes the upstream and the pass, starts nginx.
_START = """\
#!/bin/sh
set -e
if [ "$USE_TLS" = true ]; then
  CONF=/etc/nginx/tls.conf
else
  CONF=/etc/nginx/nginx.conf
fi
echo "server ${APP_HOST}:${APP_PORT};" > /run/front/upstream
echo "proxy_pass http://${APP_PASS};" > /run/front/pass
exec nginx -c $CONF -g "daemon off;"
"""


def _compose(environment: str) -> str:
    return (
        "services:\n"
        "  web:\n    build: .\n"
        "  proxy:\n    build:\n      context: .\n      dockerfile: Dockerfile.proxy\n"
        f"    environment:\n{environment}"
    )


def _front(root: Path, environment: str, start: str = _START) -> Path:
    return write(
        root,
        {
            "Dockerfile": _APP,
            "Dockerfile.proxy": _PROXY_IMAGE,
            "compose.yaml": _compose(environment),
            "nginx/nginx.conf": _NGINX,
            "nginx/tls.conf": _NGINX,
            "proxy/start.sh": start,
        },
    )


def _fronts(root: Path) -> list[list[str]]:
    result = check_folder(root)
    return [
        sorted({f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.fronts})
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]


def test_upstream_and_pass_echoed_by_the_start_script_join_the_app(tmp_path: Path) -> None:
    """`echo "server ${APP_HOST}:${APP_PORT};" > /run/front/upstream` and `echo "proxy_pass
    http://${APP_PASS};" > /run/front/pass` before `exec nginx -c $CONF`: the configs the
    proxy's image copies include those files, rendered with the service's environment
    (`${APP_PORT:-8000}` as compose takes it unset) and the image's ENV (APP_PASS): the pass
    the script writes reaches the `web` service's gunicorn, in both configs the `if` picks
    from, and the upstream's server line is the script's."""
    root = _front(tmp_path, "      APP_HOST: web\n      APP_PORT: ${APP_PORT:-8000}\n")
    assert _fronts(root) == [["proxy/start.sh:9"]]
    result = check_folder(root)
    servers = {
        (f"{ln.server.at.file.name}:{ln.server.at.line}", ln.server.value) for ln in result.links
    }
    assert servers == {("start.sh:8", "web:8000")}
    assert {ln.nginx.file.name for ln in result.links} == {"nginx.conf", "tls.conf"}
    assert not [n for n in result.notes if n.kind == "include-not-found"]


def test_a_written_value_not_known_here_joins_nothing_and_says_so(tmp_path: Path) -> None:
    """The upstream's port comes from a variable no file sets: the include is read with it
    unknown (an unresolved-variable note at the script's line), and nothing is joined."""
    root = _front(tmp_path, "      APP_HOST: web\n")
    assert _fronts(root) == [[]]
    result = check_folder(root)
    unresolved = [n for n in result.notes if n.kind == "unresolved-variable"]
    assert any("$APP_PORT" in n.message and n.at.line == 8 for n in unresolved)


def test_a_config_the_scripts_container_does_not_hold_reads_nothing_it_made(
    tmp_path: Path,
) -> None:
    """The script writes /run/front/upstream in the proxy's container only: an nginx config
    of another image (or of none) that includes the same path reads nothing of it."""
    root = _front(tmp_path, "      APP_HOST: web\n      APP_PORT: '8000'\n")
    write(
        root,
        {
            "Dockerfile.proxy": _PROXY_IMAGE.replace(
                "nginx/nginx.conf nginx/tls.conf", "nginx/tls.conf"
            )
        },
    )
    result = check_folder(root)
    assert {ln.nginx.file.name for ln in result.links} == {"tls.conf"}
    (missing,) = [
        n for n in result.notes if n.kind == "include-not-found" and "upstream" in n.message
    ]
    assert missing.at.file.name == "nginx.conf"


def test_a_script_that_starts_no_nginx_makes_nothing_for_it(tmp_path: Path) -> None:
    """The same lines in a script that hands over to a program other than nginx: nothing it
    writes is taken for nginx's, and the includes stay not found."""
    root = _front(
        tmp_path,
        "      APP_HOST: web\n      APP_PORT: '8000'\n",
        _START.replace('exec nginx -c $CONF -g "daemon off;"', "exec caddy run"),
    )
    assert _fronts(root) == [[]]


def test_site_rendered_by_envsubst_into_the_included_folder(tmp_path: Path) -> None:
    """`envsubst '$APP_ADDR' < /tmp/site.conf > /etc/nginx/conf.d/site.conf && nginx` with the
    site bind-mounted at /tmp/site.conf: the main config's `include /etc/nginx/conf.d/*.conf`
    reads the site rendered with the service's `APP_ADDR`, at the site's own lines; nginx's
    `$host` is left to nginx."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _APP,
            "proxy/Dockerfile": "FROM nginx:1.27\nCOPY nginx.conf /etc/nginx/nginx.conf\n"
            "COPY start.sh /srv/start.sh\n",
            "proxy/nginx.conf": "events {}\nhttp {\n  keepalive_timeout 30s;\n"
            "  include /etc/nginx/conf.d/*.conf;\n}\n",
            "proxy/start.sh": "#!/bin/bash\nenvsubst '$APP_ADDR' < /tmp/site.conf > "
            "/etc/nginx/conf.d/site.conf && nginx -g 'daemon off;'\n",
            "proxy/site.tmpl": "server {\n  listen 80;\n  location / {\n"
            "    proxy_pass http://$APP_ADDR;\n    proxy_set_header Host $host;\n  }\n}\n",
            "compose.yaml": "services:\n  web:\n    build: .\n"
            "  proxy:\n    build: proxy\n    command: /srv/start.sh\n"
            "    volumes: ['./proxy/site.tmpl:/tmp/site.tmpl', './proxy/site.tmpl:/tmp/site.conf']\n"
            "    environment: ['APP_ADDR=web:8000']\n",
        },
    )
    result = check_folder(root)
    (link,) = result.links
    assert link.nginx.file.name == "nginx.conf"
    assert (link.passing.at.file.name, link.passing.at.line) == ("site.tmpl", 4)
    assert link.passing.target == "web:8000"


def test_a_written_file_that_includes_itself_ends(tmp_path: Path) -> None:
    """`echo "include /run/front/upstream;" > /run/front/upstream`: the file the config
    includes includes itself; reading it ends (nginx would refuse it), nothing is joined."""
    root = _front(
        tmp_path,
        "      APP_HOST: web\n      APP_PORT: '8000'\n",
        _START.replace(
            'echo "server ${APP_HOST}:${APP_PORT};"', 'echo "include /run/front/upstream;"'
        ),
    )
    assert _fronts(root) == [[]]


def _unbraced_front(root: Path, site: str, environment: str = "BACKEND_ADDR=web:8000") -> None:
    """A proxy service whose start script renders its mounted site with `envsubst
    '$BACKEND_ADDR'` (nginx's own `$host` left alone), in front of a gunicorn service."""
    (root / "proxy").mkdir()
    (root / "compose.yaml").write_text(
        "services:\n"
        "  web:\n    build: .\n"
        "  proxy:\n    build: proxy\n    command: /srv/start.sh\n"
        "    volumes: ['./proxy/site.conf:/tmp/site.conf']\n"
        f"    environment:\n      - {environment}\n"
    )
    (root / "Dockerfile").write_text(
        'FROM python:3.12-slim\nCOPY . /app\nCMD ["gunicorn", "-b", "0.0.0.0:8000", "shop.wsgi"]\n'
    )
    (root / "proxy" / "Dockerfile").write_text("FROM nginx:1.27\nCOPY start.sh /srv/start.sh\n")
    (root / "proxy" / "start.sh").write_text(
        "#!/bin/sh\nenvsubst '$BACKEND_ADDR' < /tmp/site.conf > /etc/nginx/conf.d/site.conf\n"
        "exec nginx -g 'daemon off;'\n"
    )
    (root / "proxy" / "site.conf").write_text(site)


def test_unbraced_envsubst_name_in_a_pass_is_rendered_with_the_fronts_environment(
    tmp_path: Path,
) -> None:
    """`proxy_pass http://$BACKEND_ADDR;` in a site the proxy's container renders with
    envsubst, whose compose `environment` sets `BACKEND_ADDR=web:8000`: the pass reaches the
    `web` service's gunicorn, as `${BACKEND_ADDR}` would."""
    _unbraced_front(
        tmp_path,
        "server {\n  listen 80;\n  location / {\n    proxy_pass http://$BACKEND_ADDR;\n"
        "    proxy_set_header Host $host;\n  }\n}\n",
    )
    assert _fronts(tmp_path) == [["proxy/site.conf:4"]]


def test_unbraced_name_the_front_does_not_set_and_nginx_variables_reach_no_app(
    tmp_path: Path,
) -> None:
    """A `$NAME` the proxy's environment does not set stays unknown, and a pass through
    nginx's own variables (`set $backend cache:9000;` with a container variable of that very
    name set to web:8000, `$http_host`) is nginx's, never rendered: nothing is joined,
    nothing guessed."""
    _unbraced_front(
        tmp_path,
        "server {\n  listen 80;\n  set $backend cache:9000;\n"
        "  location / { proxy_pass http://$OTHER_ADDR; }\n"
        "  location /a { proxy_pass http://$backend; }\n"
        "  location /b { proxy_pass http://$http_host; }\n}\n",
        environment="backend=web:8000",
    )
    assert _fronts(tmp_path) == [[]]


def test_pass_a_template_renders_is_not_judged_as_written(tmp_path: Path) -> None:
    """The rules judge a templated pass only through the app it reaches: a
    `proxy_pass http://$BACKEND_ADDR;` with an hour-long read timeout whose name is not
    set here joins nothing and raises nothing about its location."""
    _unbraced_front(
        tmp_path,
        "server {\n  listen 80;\n  location / {\n    proxy_pass http://$BACKEND_ADDR;\n"
        "    proxy_read_timeout 3600s;\n  }\n}\n",
        environment="UNRELATED=1",
    )
    result = check_folder(tmp_path)
    assert not result.links
    assert not [f for f in result.findings if f.at.file.name == "site.conf"]


#: A front's start script that renders the template its first argument names, then nginx.
_RUN_NGINX = """\
#!/bin/sh
export API_HOST="${API_HOST:-api}"
envsubst '$API_HOST' < "/etc/nginx/conf.d/$1" > /etc/nginx/conf.d/app.conf
exec nginx -g 'daemon off;'
"""
_SITE = """\
upstream api {
  server ${API_HOST}:8000;
}
server {
  listen 80;
  location / {
    proxy_pass http://api;
  }
}
"""


def _stage_compose(template: str) -> str:
    """A stack of its own: the api, and an nginx that copies the mounted templates, makes the
    start script runnable (its CRs dropped) and runs it with `template`."""
    return (
        "services:\n"
        "  api:\n    build: .\n"
        "  nginx:\n    image: nginx:1.27-alpine\n"
        "    volumes:\n      - ./nginx:/nginx-templates:ro\n"
        "    command: >\n"
        '      /bin/sh -c "cp -a /nginx-templates/. /etc/nginx/conf.d/\n'
        "      && sed 's/\\r$$//' /etc/nginx/conf.d/run-nginx.sh > /tmp/run-nginx.sh\n"
        "      && chmod +x /tmp/run-nginx.sh\n"
        f'      && /tmp/run-nginx.sh {template}"\n'
    )


def _stages(root: Path, dev_template: str, site: str = _SITE) -> Path:
    return write(
        root,
        {
            "Dockerfile": _APP,
            "compose.yaml": _stage_compose(dev_template),
            "compose.prod.yaml": _stage_compose("app.conf.template.prod"),
            "nginx/run-nginx.sh": _RUN_NGINX,
            "nginx/app.conf.template": site,
            "nginx/app.conf.template.prod": site,
        },
    )


def _fronts_by_file(root: Path) -> dict[str, list[str]]:
    result = check_folder(root)
    return {
        f"{launch.chain[0].file.name}": sorted(
            {f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.fronts}
        )
        for launch in launches(result.apps, result.links, result.balancer_links)
    }


def test_a_start_script_renders_only_the_template_its_command_names(tmp_path: Path) -> None:
    """Two stacks mount the same folder of templates; each nginx runs (through `sh -c`, a
    copy of the script with its CRs dropped) `run-nginx.sh TEMPLATE`, which renders
    "/etc/nginx/conf.d/$1": each api is behind the template its own stack's command passes,
    never behind the other stack's."""
    root = _stages(tmp_path, "app.conf.template")
    assert _fronts_by_file(root) == {
        "compose.yaml": ["nginx/app.conf.template:7"],
        "compose.prod.yaml": ["nginx/app.conf.template.prod:7"],
    }


def test_a_template_named_by_a_value_not_known_here_is_not_chosen(tmp_path: Path) -> None:
    """The dev stack's command passes `$SITE`, which no file sets: which template it renders
    is not known, so neither template is ruled out for it (nothing guessed); the prod stack
    still renders its own only. (The upstream is written out here: a `${API_HOST}` the dev
    start renders with values not known here would join nothing.)"""
    root = _stages(tmp_path, "$$SITE", _SITE.replace("${API_HOST}", "api"))
    fronts = _fronts_by_file(root)
    assert fronts["compose.prod.yaml"] == ["nginx/app.conf.template.prod:7"]
    assert fronts["compose.yaml"] == [
        "nginx/app.conf.template.prod:7",
        "nginx/app.conf.template:7",
    ]


def test_a_template_server_is_rendered_with_the_start_scripts_own_default(
    tmp_path: Path,
) -> None:
    """`server ${API_HOST}:8000` rendered by a start script that exports
    `API_HOST="${API_HOST:-api}"` first: the front passes to `api`, the stack's service."""
    root = _stages(tmp_path, "app.conf.template")
    result = check_folder(root)
    assert {ln.server.value for ln in result.links} == {"api:8000"}
