"""Valid files a folder walk reads never end it in exit 2: a value only the deployment knows
is an unresolved value, a line the platform ignores is a finding, and the rest is still read."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.machine import Machine
from tests.folder_support import write

MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)
START = "#!/bin/sh\nexec gunicorn --workers 3 --bind 0.0.0.0:$PORT app:app\n"


def check_folder(root: Path) -> CheckResult:
    """The library's run on a walked folder, for a 4-core machine."""
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk])


def test_cloud_foundry_manifest_variables_are_unknown_values(tmp_path: Path) -> None:
    """A Cloud Foundry manifest's `((name))` values are `cf push --vars-file` variables
    (https://docs.cloudfoundry.org/devguide/deploy-apps/manifest-attributes.html): the app is
    still read, with its instance count an unresolved value rather than a usage error (seen in GSA's
    catalog.data.gov: `instances: ((web-instances))`, `memory: ((memory_quota))`)."""
    root = write(
        tmp_path,
        {
            "manifest.yml": (
                "applications:\n"
                "  - name: ((app))-web\n"
                "    instances: ((web-instances))\n"
                "    memory: ((memory_quota))\n"
                "    command: ./start.sh\n"
                "    env:\n"
                "      SITE: https://((route))\n"
            ),
            "start.sh": START,
        },
    )
    result = check_folder(root)
    assert not result.errors
    (app,) = result.apps
    assert app.kind == "gunicorn"
    assert app.container is not None
    assert app.container.platform == "cloudfoundry"
    assert app.container.replicas is None
    assert any(
        n.kind == "unresolved-variable" and n.at.line == 3 and "((web-instances))" in n.message
        for n in result.notes
    )


def test_nginx_time_a_start_script_fills_is_a_note(tmp_path: Path) -> None:
    """`proxy_read_timeout TIMEOUTs;` whose bare word a start script's `sed -i` replaces is
    not an nginx time as written: a note on that line, read as if absent, and the front is
    still joined to its app (seen in OpenDataServices' cove: `APP_TIMEOUT_SECONDSs`)."""
    root = write(
        tmp_path,
        {
            "nginx.conf": (
                "server {\n  listen 80;\n  location / {\n"
                "    proxy_pass http://127.0.0.1:8000;\n"
                "    proxy_read_timeout TIMEOUTs;\n  }\n}\n"
            ),
            "start.sh": (
                '#!/bin/sh\nsed -i "s/TIMEOUT/$T/" /etc/nginx/conf.d/default.conf\n'
                "exec gunicorn --bind 127.0.0.1:8000 app:app\n"
            ),
        },
    )
    result = check_folder(root)
    assert not result.errors
    assert any(
        n.kind == "unresolved-variable" and n.at.line == 5 and "TIMEOUTs" in n.message
        for n in result.notes
    )
    (config,) = result.nginx
    assert config.passes[0].read_timeout.default


def test_procfile_line_without_colon_is_a_finding(tmp_path: Path) -> None:
    """A Procfile line not of the form `type: command` declares no process on Heroku
    (https://devcenter.heroku.com/articles/procfile): a warning at that line, and the other
    lines still read (seen in MonochromeCMS' monochrome-api: `web gunicorn ...`)."""
    root = write(
        tmp_path,
        {
            "Procfile": "web gunicorn app:app\nworker: gunicorn --workers 2 app:app\n",
        },
    )
    result = check_folder(root)
    assert not result.errors
    (finding,) = [f for f in result.findings if f.rule == "ignored-by-platform"]
    assert finding.at.line == 1
    assert finding.severity.name == "warning"
    assert [a.file.name for a in result.apps] == ["Procfile"]


def test_ingress_nginx_timeout_with_unit_is_a_finding(tmp_path: Path) -> None:
    """ingress-nginx reads `proxy-read-timeout` as an integer number of seconds and ignores
    `'360s'`, its default 60 s applying: a warning at the annotation, and the Ingress still
    read with 60 s (seen in IFRCGo's go-api Helm chart)."""
    root = write(
        tmp_path,
        {
            "ingress.yaml": (
                "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: api\n"
                "  annotations:\n"
                "    nginx.ingress.kubernetes.io/proxy-read-timeout: '360s'\n"
                "spec:\n  rules:\n    - http:\n        paths:\n          - path: /\n"
                "            pathType: Prefix\n            backend:\n              service:\n"
                "                name: api\n                port:\n                  number: 80\n"
            ),
        },
    )
    result = check_folder(root)
    assert not result.errors
    (finding,) = [f for f in result.findings if f.rule == "ignored-by-platform"]
    assert finding.at.line == 6
    assert "60 s" in finding.message
    (front,) = result.nginx
    assert front.passes[0].read_timeout.value == 60
