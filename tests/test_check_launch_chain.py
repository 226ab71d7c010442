"""The launch chain in a folder: what a config is reached through (COPY folders and wildcards,
WORKDIR-relative paths, compose bind mounts, gunicorn's default config file), and which front a
host name reaches (its own compose project only). Each fixture under tests/data/repos/chain-*
is a small repository written for the cause it pins."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.graph import Launch, launch_json, launches
from servertune.check.model import Location, Setting
from servertune.check.together import started_together, with_others
from servertune.machine import Machine
from tests.folder_support import chains as folder_chains
from tests.folder_support import write

REPOS = Path(__file__).parent / "data" / "repos"
#: The machine the findings are judged for, whatever machine runs the tests.
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def check_folder(root: Path) -> CheckResult:
    """The library's run on a walked folder, for a 4-core machine."""
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root)


def chains(root: Path) -> list[tuple[list[str], list[str], Launch]]:
    """Each launch as (its chain's files, its fronts' files), relative to `root`."""
    result = check_folder(root)
    return [
        (
            [at.file.relative_to(root).as_posix() for at in launch.chain],
            [at.file.relative_to(root).as_posix() for at in launch.fronts],
            launch,
        )
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]


def not_found(result: CheckResult) -> list[str]:
    return [n.message for n in result.notes if n.kind == "config-not-found"]


def test_copy_with_a_wildcard_brings_the_config_into_the_image() -> None:
    """`COPY ./etc/*.conf /srv/etc/` puts etc/uwsgi.conf at /srv/etc/uwsgi.conf: the CMD's
    `--ini` is that file, read once, joined to the nginx that passes to it."""
    root = REPOS / "chain-copy-glob"
    ((files, fronts, launch),) = chains(root)
    assert files == ["Dockerfile", "etc/uwsgi.conf"]
    assert fronts == ["etc/nginx.conf"]
    assert launch.app.workers.value == 3
    assert launch_json(launch)["config"] == str(root / "etc" / "uwsgi.conf")
    result = check_folder(root)
    assert not not_found(result)
    # The ini's own words, though a command line names it and its suffix is `.conf`.
    (jitter,) = [f for f in result.findings if f.rule == "max-requests-without-jitter"]
    assert (jitter.at.file.name, jitter.fix) == ("uwsgi.conf", "max-requests-delta = 100")


def test_file_read_alone_finds_what_it_names_in_the_image_that_copies_it() -> None:
    """A supervisord config the image copies (its CMD runs supervisord from its default path,
    so the walk reads the config on its own) names /opt/app/conf/gunicorn.conf.py: the image
    that copies the config holds that file through `COPY deploy/ conf` under WORKDIR /opt/app.
    A script it copies runs `uwsgi --ini etc/app.ini`, relative to the WORKDIR: found through
    `COPY deploy/app.ini etc/`."""
    root = REPOS / "chain-image-holds"
    result = check_folder(root)
    assert not not_found(result)
    found = {launch.app.kind: launch for launch in launches(result.apps, result.links)}
    gunicorn = [at.file.relative_to(root).as_posix() for at in found["gunicorn"].chain]
    assert gunicorn == ["deploy/supervisord.conf", "deploy/gunicorn.conf.py"]
    assert found["gunicorn"].app.workers.value == 3
    uwsgi = [at.file.relative_to(root).as_posix() for at in found["uwsgi"].chain]
    # The image's `ENV UWSGI_THREADS=3` sets an option: its Dockerfile is a link too.
    assert uwsgi == ["Dockerfile", "deploy/worker.sh", "deploy/app.ini"]
    assert found["uwsgi"].app.workers.value == 2
    # ... under the image's ENV: `UWSGI_THREADS=3` is uWSGI's `threads` option.
    assert found["uwsgi"].app.threads.value == 3


def test_compose_bind_mount_is_the_config_the_service_reads() -> None:
    """`./config/app.ini:/etc/uwsgi/app.ini` mounts the ini the service's command names, and
    the front service mounts the nginx folder (long syntax): one chain from the compose
    service through the mounted ini, behind the mounted nginx file."""
    root = REPOS / "chain-compose-volumes"
    result = check_folder(root)
    assert not not_found(result)
    ((files, fronts, launch),) = chains(root)
    assert files == ["compose.yaml", "config/app.ini"]
    assert fronts == ["nginx/default.conf"]
    assert launch.app.workers.value == 4
    assert launch.app.container is not None
    assert launch.app.container.name == "app"


def test_gunicorn_default_config_beside_the_procfile_is_in_its_chain() -> None:
    """gunicorn started without -c reads ./gunicorn.conf.py from its working directory (the
    Procfile's folder on Heroku): one launch whose chain ends in that file, even when it sets
    only logging, not a second launch of the config alone."""
    root = REPOS / "chain-gunicorn-default"
    ((files, _, launch),) = chains(root)
    assert files == ["Procfile", "gunicorn.conf.py"]
    assert launch_json(launch)["config"] == str(root / "gunicorn.conf.py")


def test_dev_compose_labels_do_not_front_the_prod_service() -> None:
    """docker-compose.yml (dev: runserver) and docker-compose.prod.yml (gunicorn) both name a
    service `web` with Traefik labels: each file's Traefik passes to its own `web`, so the dev
    labels front nothing read (runserver is not a server check reads) and the prod gunicorn is
    behind the prod labels only."""
    root = REPOS / "chain-two-stacks"
    ((files, fronts, _),) = chains(root)
    assert files == ["docker-compose.prod.yml"]
    assert fronts == ["docker-compose.prod.yml"]


def test_example_stack_nginx_does_not_reach_another_stack_on_the_same_port() -> None:
    """The example compose file mounts proxy/nginx.conf into its `front` and runs `api` from
    `image:`, which may be the root Dockerfile's (its supervisord config is generated at run
    time) or the contrib one's: not in these files, so the contrib image's gunicorn on 8080
    is not put behind `proxy_pass http://api:8080` (no timeout finding joins the two)."""
    root = REPOS / "chain-example-stack"
    ((files, fronts, _),) = chains(root)
    assert files == ["contrib/backend/Dockerfile", "contrib/backend/gunicorn.conf.py"]
    assert fronts == []
    result = check_folder(root)
    assert not [f for f in result.findings if f.at.file.name == "nginx.conf"]


def test_host_name_of_no_container_reaches_the_image_built_from_that_folder() -> None:
    """nginx passes to `backend:8001`, no compose file names the containers, and two images
    listen on 8001: the one built from backend/ is that host (compose's build-context
    convention), not unified/'s, whose 3600 s timeout would be a finding about nothing."""
    root = REPOS / "chain-folder-name"
    by_folder = {files[0].split("/")[0]: fronts for files, fronts, _ in chains(root)}
    assert by_folder == {"backend": ["proxy/nginx.conf"], "unified": []}
    result = check_folder(root)
    assert not [f for f in result.findings if f.rule == "app-timeout-over-read-timeout"]


def test_honcho_runs_the_procfile_whose_script_starts_gunicorn() -> None:
    """ENTRYPOINT script -> `exec honcho -f /app/Procfile start` -> `web: bin/run_web.sh` ->
    gunicorn: one chain in launch order; honcho signals each process group, so gunicorn under
    the script's shell still gets SIGTERM (no entrypoint-without-exec)."""
    root = REPOS / "chain-honcho"
    ((files, _, launch),) = chains(root)
    assert files == ["Dockerfile", "bin/entrypoint.sh", "Procfile", "bin/run_web.sh"]
    assert launch.app.workers.value == 2
    result = check_folder(root)
    assert not [f for f in result.findings if f.rule == "entrypoint-without-exec"]


def test_shell_forms_that_start_a_server_are_followed() -> None:
    """`web: bash Procfile.sh` is the script's gunicorn (Heroku signals every process of the
    dyno: no entrypoint-without-exec); `eval "$cmd"` runs the command the script built (in a
    branch or not), which starts with `exec`: no entrypoint-without-exec either;
    `exec $(command -v uwsgi) --ini ...` runs uwsgi, and `CMD ["uwsgi-start.sh"]` is the script
    the image copied onto the PATH; `exec su app -c "exec gunicorn ..."` is gunicorn; `-c python:conf.gunicorn_web` in a script
    of bin/ is conf/gunicorn_web.py of the folder above."""
    root = REPOS / "chain-shell-forms"
    by_first = {files[0]: (files, launch) for files, _, launch in chains(root)}
    assert by_first["Procfile"][0] == ["Procfile", "Procfile.sh"]
    assert by_first["eval-start.sh"][1].app.workers.value == 5
    assert by_first["Dockerfile"][0] == ["Dockerfile", "uwsgi-start.sh", "uwsgi.ini"]
    assert by_first["Dockerfile"][1].app.workers.value == 6
    assert by_first["su-start.sh"][1].app.workers.value == 2
    # `-c python:conf.gunicorn_web` from bin/serve.sh: the module is imported from the
    # working directory, the project's root above the script.
    assert by_first["bin/serve.sh"][0] == ["bin/serve.sh", "conf/gunicorn_web.py"]
    result = check_folder(root)
    assert not [f for f in result.findings if f.rule == "entrypoint-without-exec"]
    # `--ini ${SRC_DIR}/docker/uwsgi.ini`: a config not known here, not uWSGI's defaults.
    assert not [f for f in result.findings if f.at.file.name == "unresolved-ini.sh"]
    assert [n.kind for n in result.notes if n.at.file.name == "unresolved-ini.sh"] == [
        "config-not-found",
        "unresolved-variable",
    ]


def test_nginx_file_the_stack_leaves_out_fronts_nothing() -> None:
    """The compose project mounts nginx/site.conf into its `nginx` service by name (and the app
    container mounts the whole folder, not as nginx's): nginx/test_site.conf beside it is
    another setup's, so neither the app's `app:8000` nor the Traefik labels of `nginx` (in the
    default override, merged with compose.yaml) reach it, and its defaults make no finding."""
    root = REPOS / "chain-left-out"
    ((files, fronts, _),) = chains(root)
    assert files == ["deploy/compose.yaml"]
    assert fronts == ["deploy/nginx/site.conf"]
    result = check_folder(root)
    assert [link.nginx.file.name for link in result.balancer_links] == ["site.conf"]
    assert not result.findings


def test_s6_execline_run_script_is_walked_and_its_server_is_pid_1() -> None:
    """An s6-overlay `run` script in execline (`#!/command/execlineb -P`) is read in a folder
    walk, not skipped as a file no reader claims; execline chain-loads each program into the
    next, so gunicorn is never a shell's child (no entrypoint-without-exec)."""
    root = REPOS / "chain-s6"
    result = check_folder(root)
    assert not [n for n in result.notes if n.kind == "not-read"]
    ((files, _, launch),) = chains(root)
    assert files == ["root/etc/s6-overlay/s6-rc.d/svc-web/run"]
    assert launch.app.workers.value == 3
    assert launch.app.without_exec is None


def test_gunicorn_config_not_named_for_gunicorn_is_read_by_its_settings() -> None:
    """wsgi/config.py assigns bind, workers, timeout and accesslog at its top level: a gunicorn
    config a walk reads; app/config.py, an app's settings with one `timeout`, is not."""
    root = REPOS / "chain-unnamed-config"
    assert [p.relative_to(root).as_posix() for p in discover(root).files] == ["wsgi/config.py"]


def test_script_handing_over_to_supervisord_through_its_own_variable() -> None:
    """The image's CMD runs start.sh, which sets SUPERVISORD_CONF and `exec supervisord -c
    "$SUPERVISORD_CONF"`: the chain goes on through that file to the uvicorn it starts."""
    root = REPOS / "chain-supervisord-var"
    ((files, _, launch),) = chains(root)
    assert files == ["Dockerfile", "start.sh", "etc/supervisord.conf"]
    assert launch.app.kind == "uvicorn"
    assert launch.app.workers.value == 2


def test_compose_image_service_is_the_one_unbuilt_image_with_a_command() -> None:
    """The example compose file runs `app` from `image: example/app:1.0` (no build) behind an
    nginx it mounts: the one Dockerfile here that no service builds and that sets a command
    (proxy/Dockerfile, `FROM nginx` and a config, sets none) is that image, so its gunicorn
    is behind `proxy_pass http://app:8080`. Its ENTRYPOINT `exec gosu app "$@"` runs the CMD."""
    root = REPOS / "chain-image-service"
    ((files, fronts, _),) = chains(root)
    assert files == ["Dockerfile", "docker/entrypoint.sh", "docker/serve.sh"]
    assert fronts == ["examples/nginx.conf"]
    result = check_folder(root)
    assert [(f.rule, f.at.file.name) for f in result.findings] == [
        ("app-timeout-over-read-timeout", "nginx.conf")
    ]


def test_supervisord_fcgi_socket_and_script_programs_are_followed() -> None:
    """An `[fcgi-program:uvicorn]` listens on its `socket=` (uvicorn `--fd 0`), where nginx's
    upstream passes; a `[program:web]` running `/bin/sh serve.sh` is that script's gunicorn,
    the supervisord line first in its chain."""
    root = REPOS / "chain-fcgi"
    by_kind = {launch.app.kind: (files, fronts) for files, fronts, launch in chains(root)}
    assert by_kind["uvicorn"] == (["supervisord.conf"], ["nginx.conf"])
    assert by_kind["gunicorn"][0] == ["supervisord-web.conf", "serve.sh"]


def test_a_mounted_repository_and_a_multiline_sh_c_script_are_no_file_name() -> None:
    """`.:/code` mounts the repository and `command` is `sh -c` with a script of several
    lines: its text is never looked up as a file (a name too long for the system), the service
    starts no server check reads, and the run ends normally."""
    root = REPOS / "chain-mount-script"
    result = check_folder(root)
    assert not result.errors
    assert not result.apps


def test_entrypoint_on_the_path_runs_the_cmd_past_a_commented_heredoc() -> None:
    """ENTRYPOINT ["docker-entrypoint.sh"] is the script COPY'd to /usr/local/bin (on the
    PATH); a `# python << END` in a comment opens no here-document, so its last line, `exec
    $@`, runs the CMD's uwsgi with the ini the image holds."""
    root = REPOS / "chain-commented-heredoc"
    ((files, _, launch),) = chains(root)
    assert files == ["Dockerfile", "docker-entrypoint.sh", "web/uwsgi.ini"]
    assert launch.app.workers.value == 3


def test_systemd_unit_found_in_a_walk_starts_its_server_behind_the_nginx() -> None:
    """A walk reads `deploy/shop.service` (a `[Service]` section), not a D-Bus `.service`;
    its `ExecStart=` names `/srv/shop/deploy/gunicorn.conf.py` under `WorkingDirectory=/srv/shop`
    (the checkout), which is the repository's `deploy/gunicorn.conf.py`, and its
    `EnvironmentFile=` the repository's `deploy/shop.env`: one launch, the unit first, with the
    env file's variables, joined to the nginx site that passes to 127.0.0.1:8001."""
    root = REPOS / "chain-systemd"
    walk = discover(root)
    assert sorted(p.relative_to(root).as_posix() for p in walk.files) == [
        "deploy/gunicorn.conf.py",
        "deploy/nginx/shop.conf",
        "deploy/shop.env",
        "deploy/shop.service",
    ]
    ((files, fronts, launch),) = chains(root)
    assert files == ["deploy/shop.service", "deploy/gunicorn.conf.py"]
    assert fronts == ["deploy/nginx/shop.conf"]
    # SHOP_WORKERS=3 comes from the unit's EnvironmentFile= (the config's default is 2).
    assert (launch.app.workers.value, launch.app.stop_wait_name) == (3, "TimeoutStopSec")
    result = check_folder(root)
    assert not not_found(result)
    env = root / "deploy" / "shop.env"
    assert dict(result.env_files)[env] == (root / "deploy" / "shop.service",)
    assert ("app-timeout-over-read-timeout", "shop.conf") in [
        (f.rule, f.at.file.name) for f in result.findings
    ]


def test_ingress_fronts_the_pods_its_service_selects_with_its_annotation_timeout() -> None:
    """An ingress-nginx Ingress (its own file) sends `/` to Service `shop-web` port `http`,
    whose targetPort `web` is the `shop` pods' containerPort 8000: that gunicorn is behind the
    Ingress, not the `reports` pods on the same port. Its front is the Ingress's path only: the Service is no proxy (kube-proxy
    forwards at L4), so its port line is no front. Its `proxy-read-timeout: "30"` is judged
    against gunicorn's 60 s by the rule that judges nginx's proxy_read_timeout, in the
    annotation's words."""
    root = REPOS / "chain-ingress"
    fronted = {launch.app.container.at.line: fronts for _, fronts, launch in chains(root)}  # type: ignore[union-attr]
    assert fronted == {16: ["k8s/ingress.yaml"], 40: []}
    result = check_folder(root)
    (late,) = [f for f in result.findings if f.rule == "app-timeout-over-read-timeout"]
    assert (late.at.file.name, late.at.line) == ("ingress.yaml", 6)
    assert late.fix == 'nginx.ingress.kubernetes.io/proxy-read-timeout: "65"'
    assert "ingress-nginx answers 504" in late.message


def test_gunicorn_a_procfile_starts_on_its_default_bind_is_on_the_platforms_port() -> None:
    """`web: bash start.sh` runs gunicorn with no bind: the Procfile's runner sets PORT, and
    then gunicorn binds 0.0.0.0:$PORT, not 127.0.0.1:8000. The nginx written for a manual
    install (upstream 127.0.0.1:8000) is not its front, and its 60 s read timeout is not held
    against this gunicorn's 120 s; the platform's port is named as known only when it runs."""
    root = REPOS / "chain-heroku"
    ((files, fronts, launch),) = chains(root)
    assert (files, fronts) == (["Procfile", "start.sh"], [])
    assert launch.app.sockets == ()
    result = check_folder(root)
    assert not [f for f in result.findings if f.rule == "app-timeout-over-read-timeout"]
    assert any(
        n.kind == "unresolved-variable" and "0.0.0.0:$PORT" in n.message for n in result.notes
    )


def test_gunicorn_default_bind_follows_the_images_port_not_checks_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gunicorn's default bind is `0.0.0.0:$PORT` when PORT is set: an image's `ENV PORT=5000`
    makes `CMD ["gunicorn", "app:app"]` listen on 0.0.0.0:5000; without it, 127.0.0.1:8000,
    whatever PORT the process running check has."""
    monkeypatch.setenv("PORT", "7777")
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text('FROM python:3.12\nENV PORT=5000\nCMD ["gunicorn", "app:app"]\n')
    (app,) = check_files([dockerfile], machine=MACHINE, root=tmp_path).apps
    assert [s.value for s in app.sockets] == ["0.0.0.0:5000"]
    dockerfile.write_text('FROM python:3.12\nCMD ["gunicorn", "app:app"]\n')
    (app,) = check_files([dockerfile], machine=MACHINE, root=tmp_path).apps
    assert [s.value for s in app.sockets] == ["127.0.0.1:8000"]


def test_plan_advice_for_an_ingress_read_timeout_is_written_as_its_annotation() -> None:
    """With a workload, the plan's read timeout for the Ingress is advised in the annotation's
    words (a quoted number of seconds), not as nginx's `proxy_read_timeout 35s;`."""
    from servertune.check.audit import plan_for_check
    from servertune.workload import Workload

    root = REPOS / "chain-ingress"
    walk = discover(root)
    plan = plan_for_check(Workload(cores=2, service_time_ms=100, cpu_fraction=0.5), MACHINE)
    result = check_files(list(walk.files), machine=MACHINE, plan=plan, root=root)
    (advice,) = [
        f for f in result.findings if f.rule == "plan-differs" and f.at.file.name == "ingress.yaml"
    ]
    assert advice.fix.startswith('nginx.ingress.kubernetes.io/proxy-read-timeout: "')


def test_only_an_ingress_ingress_nginx_serves_is_read_as_its_nginx(tmp_path: Path) -> None:
    """Class `nginx`, or no class (the cluster's default, minikube's and kind's ingress-nginx):
    read as nginx. Class `alb`, or no class but another controller's annotations (Traefik's,
    GKE's): not ingress-nginx's, so no nginx timeouts are made up for it."""
    from servertune.check.ingress import ingress_fronts

    def fronts(head: str, spec: str = "") -> int:
        text = (
            "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: x\n"
            f"{head}spec:\n{spec}  defaultBackend: {{service: {{name: web, port: {{number: 80}}}}}}\n"
        )
        return len(ingress_fronts(tmp_path / "ingress.yaml", text))

    assert fronts("") == 1
    assert fronts("", "  ingressClassName: nginx\n") == 1
    assert fronts("", "  ingressClassName: alb\n") == 0
    assert fronts("  annotations: {nginx.ingress.kubernetes.io/proxy-read-timeout: '90'}\n") == 1
    assert fronts("  annotations: {kubernetes.io/ingress.class: nginx}\n") == 1
    assert fronts("  annotations: {kubernetes.io/ingress.class: alb}\n") == 0
    assert fronts("  annotations: {traefik.ingress.kubernetes.io/router.tls: 'true'}\n") == 0
    assert fronts("  annotations: {networking.gke.io/managed-certificates: web}\n") == 0


def test_a_script_that_runs_another_script_here_is_followed_into_it() -> None:
    """CMD `./boot.sh` -> `./checks.sh && exec ./serve.sh` -> `exec gunicorn ...`: a script run
    by its path from the image's WORKDIR is read as the next link (checks.sh, which starts no
    server, is passed over), and the nginx in front joins the chain."""
    root = REPOS / "chain-script-runs-script"
    ((files, fronts, launch),) = chains(root)
    assert files == ["Dockerfile", "app/boot.sh", "app/serve.sh"]
    assert fronts == ["nginx.conf"]
    assert launch.app.workers.value == 3


def test_a_script_handing_over_to_a_script_not_here_is_not_followed_not_serverless() -> None:
    """`exec ./run-worker.sh` names a script the files read do not hold: what it starts is not
    known, so the note says "not followed" and why, never that the script starts no server."""
    result = check_folder(REPOS / "chain-script-runs-script")
    (note,) = [n for n in result.notes if n.at.file.name == "worker.sh"]
    assert note.kind == "not-followed"
    assert "./run-worker.sh, a script not in the files read" in note.message


def test_python_launcher_the_image_runs_is_read_for_the_command_it_hands_to_the_shell() -> None:
    """CMD `/start.py` builds gunicorn's command line in a list and runs it with
    `os.system(" ".join(cmdline))`: the script is parsed, never run, each option at the line
    that writes it, its `os.environ.get` read from the image's ENV (`WEB_THREADS=4`)."""
    root = REPOS / "chain-python-launcher"
    ((files, fronts, launch),) = chains(root)
    assert files == ["Dockerfile", "deploy/start.py"]
    assert fronts == ["deploy/nginx.conf"]
    assert launch.app.threads.value == 4
    assert launch.app.threads.at.line == 11
    # `'[::]' if os.environ.get('LISTEN_V6') else '0.0.0.0'`: unset in the image, so IPv4.
    assert [s.value for s in launch.app.sockets] == ["0.0.0.0:8080"]
    assert launch.app.request_timeout is not None
    assert launch.app.request_timeout.value == 120


def test_python_launcher_is_never_run(tmp_path: Path) -> None:
    """A launcher whose top level would write a file (and whose `--workers` comes from a
    function of the project's) is parsed only: nothing is written; the server is read, and
    the value only the running code knows is named at the line that builds it."""
    marker = tmp_path / "ran"
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12\nCOPY start.py /start.py\nCMD /start.py\n"
    )
    (tmp_path / "start.py").write_text(
        "#!/usr/bin/env python3\n"
        "import os, subprocess\n"
        "from shop.settings import workers\n"
        f"open({str(marker)!r}, 'w').write('ran')\n"
        "subprocess.run(['gunicorn', '--workers', workers(), 'shop.wsgi'])\n"
    )
    result = check_folder(tmp_path)
    assert not marker.exists()
    (app,) = result.apps
    assert app.kind == "gunicorn"
    assert [(w.value, w.at.line) for w in app.unresolved] == [("--workers workers()", 5)]


def test_envsubst_template_upstream_is_rendered_with_the_proxy_containers_environment() -> None:
    """`server ${APP_UPSTREAM};` in a template the nginx service mounts, whose compose
    `environment` sets `APP_UPSTREAM: web:8000`: rendered as envsubst renders it at start, the
    upstream is the `web` service's gunicorn, and the cross-layer rule judges the template."""
    root = REPOS / "chain-envsubst-front"
    ((files, fronts, _),) = chains(root)
    assert files == ["compose.yaml", "Dockerfile"]
    assert fronts == ["nginx/default.conf.template"]
    result = check_folder(root)
    (late,) = [f for f in result.findings if f.rule == "app-timeout-over-read-timeout"]
    assert (late.at.file.name, late.at.line) == ("default.conf.template", 9)


def test_envsubst_placeholder_two_containers_set_differently_reaches_no_app(
    tmp_path: Path,
) -> None:
    """The same template mounted by two services that set its placeholder to different
    addresses: which one a request takes is not in the files, so nothing is joined."""
    root = REPOS / "chain-envsubst-front"
    (tmp_path / "nginx").mkdir()
    for name in ("Dockerfile", "nginx/default.conf.template"):
        (tmp_path / name).write_text((root / name).read_text())
    (tmp_path / "compose.yaml").write_text(
        "services:\n"
        "  web:\n    build: .\n"
        "  proxy:\n    image: nginx:1.27\n"
        "    volumes: ['./nginx/default.conf.template:/etc/nginx/templates/a.conf.template']\n"
        "    environment: {APP_UPSTREAM: 'web:8000'}\n"
        "  canary:\n    image: nginx:1.27\n"
        "    volumes: ['./nginx/default.conf.template:/etc/nginx/templates/a.conf.template']\n"
        "    environment: {APP_UPSTREAM: 'web-canary:8000'}\n"
    )
    ((_, fronts, _),) = chains(tmp_path)
    assert fronts == []


def test_python_launcher_run_by_the_interpreter_that_execs_the_server(tmp_path: Path) -> None:
    """`CMD ["python3", "-u", "launch.py"]` whose script replaces itself with uvicorn through
    `os.execvp("uvicorn", [...])`: the interpreter's script is the next link, and the server's
    options are read from the list it passes."""
    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.12\nWORKDIR /app\nCOPY . .\nCMD ["python3", "-u", "launch.py"]\n'
    )
    (tmp_path / "launch.py").write_text(
        "import os\n"
        "port = os.getenv('PORT', '9000')\n"
        "os.execvp('uvicorn', ['uvicorn', 'shop.asgi:app', '--host', '0.0.0.0',\n"
        "                      '--port', port, '--workers', '3'])\n"
    )
    ((files, _, launch),) = chains(tmp_path)
    assert files == ["Dockerfile", "launch.py"]
    assert launch.app.kind == "uvicorn"
    assert launch.app.workers.value == 3
    assert [s.value for s in launch.app.sockets] == ["0.0.0.0:9000"]


def test_uvicorn_started_in_the_launchers_own_process_is_read_by_its_keywords(
    tmp_path: Path,
) -> None:
    """`python main.py` whose `__main__` block calls `uvicorn.run("main:app", host=...,
    port=int(os.getenv("PORT", "8080")), workers=2, timeout_keep_alive=30)`: the server runs
    in the script's process with those settings, each at its keyword's line; the image's
    `UVICORN_PORT` sets nothing (only uvicorn's command line reads it)."""
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12\nWORKDIR /app\nENV UVICORN_PORT=9999\nCOPY . .\n"
        'CMD ["python", "main.py"]\n'
    )
    (tmp_path / "main.py").write_text(
        "import os\n"
        "import uvicorn\n"
        "from fastapi import FastAPI\n"
        "app = FastAPI()\n"
        "if __name__ == '__main__':\n"
        "    uvicorn.run(\n"
        "        'main:app',\n"
        "        host='0.0.0.0',\n"
        "        port=int(os.getenv('PORT', '8080')),\n"
        "        workers=2,\n"
        "        timeout_keep_alive=30,\n"
        "    )\n"
    )
    ((files, _, launch),) = chains(tmp_path)
    assert files == ["Dockerfile", "main.py"]
    assert launch.app.kind == "uvicorn"
    assert [s.value for s in launch.app.sockets] == ["0.0.0.0:8080"]
    assert (launch.app.workers.value, launch.app.workers.at.line) == (2, 10)
    assert launch.app.keepalive is not None
    assert (launch.app.keepalive.value, launch.app.keepalive.at.line) == (30, 11)


def test_in_process_server_whose_port_only_the_running_code_knows_has_no_address(
    tmp_path: Path,
) -> None:
    """`uvicorn.run(app, port=settings.port)` with `settings` the project's own: uvicorn,
    whose port is named as not known here, never uvicorn's default 127.0.0.1:8000; settings
    handed over as a mapping the code builds (`**args`) are "not followed"."""
    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.12\nWORKDIR /app\nCOPY . .\nCMD ["python", "serve.py"]\n'
    )
    (tmp_path / "serve.py").write_text(
        "import uvicorn\nfrom shop.config import settings\nfrom shop.app import app\n"
        "uvicorn.run(app, host='0.0.0.0', port=settings.port)\n"
    )
    result = check_folder(tmp_path)
    (app,) = result.apps
    assert (app.kind, app.sockets) == ("uvicorn", ())
    assert [(w.value, w.at.line) for w in app.unresolved] == [("--port settings.port", 4)]
    # Settings handed over as a mapping the code builds are not known either.
    (tmp_path / "serve.py").write_text("import uvicorn\nargs = build_args()\nuvicorn.run(**args)\n")
    result = check_folder(tmp_path)
    assert not result.apps
    (note,) = [n for n in result.notes if n.kind == "not-followed"]
    assert "line 3: `uvicorn.run(**args)`" in note.message


def test_console_script_the_packaging_declares_is_followed_into_its_function() -> None:
    """`sh -c "uv run shop-server --port $SHOP_PORT --workers 2"`: `shop-server` is the
    project's console script (pyproject.toml `shop-server = "shop.server:main"`), whose click
    options take the command's words (`$SHOP_PORT` from the image's ENV) and whose
    `uvicorn.run(...)` is the server, behind the nginx that passes to its port."""
    root = REPOS / "chain-console-script"
    ((files, fronts, launch),) = chains(root)
    assert files == ["Dockerfile", "pyproject.toml", "src/shop/server.py"]
    assert fronts == ["nginx.conf"]
    assert [s.value for s in launch.app.sockets] == ["0.0.0.0:7000"]
    assert launch.app.workers.value == 2
    assert launch.app.keepalive is not None
    assert launch.app.keepalive.value == 20


def test_a_program_the_packaging_does_not_declare_is_not_read_as_its_console_script(
    tmp_path: Path,
) -> None:
    """`shop-worker` is not among the console scripts of pyproject.toml: nothing is read for
    it (a program of the image's), so no server is linked."""
    root = REPOS / "chain-console-script"
    for name in ("pyproject.toml", "src/shop/server.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text((root / name).read_text())
    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.12\nWORKDIR /app\nCOPY . .\nCMD ["shop-worker", "--port", "7000"]\n'
    )
    assert chains(tmp_path) == []


def test_a_script_run_as_a_child_keeps_its_shell_in_front_of_the_server(tmp_path: Path) -> None:
    """CMD `./boot.sh` runs `./checks.sh && ./serve.sh` without `exec`: serve.sh execs
    gunicorn, but boot.sh's shell stays PID 1 and waits, so SIGTERM never reaches gunicorn;
    the fault is boot.sh's line, fixed with `exec ./serve.sh` (never `exec ./checks.sh && ...`).
    With `exec` there (the fixture chain-script-runs-script) nothing is said."""
    (tmp_path / "app").mkdir()
    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.12\nWORKDIR /srv\nCOPY app .\nCMD ["./boot.sh"]\n'
    )
    (tmp_path / "app" / "boot.sh").write_text("#!/bin/sh\n./checks.sh && ./serve.sh\n")
    (tmp_path / "app" / "checks.sh").write_text("#!/bin/sh\npython manage.py check\n")
    (tmp_path / "app" / "serve.sh").write_text(
        "#!/bin/sh\nexec gunicorn -w 2 -b 0.0.0.0:8000 shop.wsgi\n"
    )
    result = check_folder(tmp_path)
    (fault,) = [f for f in result.findings if f.rule == "entrypoint-without-exec"]
    assert (fault.at.file.name, fault.at.line, fault.fix) == ("boot.sh", 2, "exec ./serve.sh")
    fixture = check_folder(REPOS / "chain-script-runs-script")
    assert not [f for f in fixture.findings if f.rule.startswith("entrypoint-without-exec")]


def test_uwsgi_http_router_address_is_what_the_front_reaches(tmp_path: Path) -> None:
    """uWSGI's `--http 0.0.0.0:5000` (its HTTP router) listens beside its `--socket`: an nginx
    `proxy_pass` to port 5000 is that uWSGI's front."""
    (tmp_path / "start.sh").write_text(
        "#!/bin/sh\nUWSGI_OPTS='--socket /tmp/uwsgi.sock --http 0.0.0.0:5000 --module app'\n"
        "exec uwsgi $UWSGI_OPTS --processes 2\n"
    )
    (tmp_path / "nginx.conf").write_text(
        "events {}\nhttp {\n  server {\n    listen 80;\n"
        "    location / { proxy_pass http://127.0.0.1:5000/; }\n  }\n}\n"
    )
    ((files, fronts, launch),) = chains(tmp_path)
    assert [s.value for s in launch.app.sockets] == ["unix:/tmp/uwsgi.sock", "0.0.0.0:5000"]
    assert (files, fronts) == (["start.sh"], ["nginx.conf"])


def test_nginx_image_templates_mounted_by_compose_are_the_fronts_config(tmp_path: Path) -> None:
    """The official nginx image renders /etc/nginx/templates/*.template into conf.d: a
    compose volume mounting a file there (its host path `./nginx/${SETUP:-https}.conf`, a
    default compose fills) makes it the front's config, and its `include
    /etc/nginx/conf.d/...` reads the files mounted or rendered there, so its upstream reaches
    the web service."""
    files = {
        "compose.yaml": "services:\n  nginx:\n    image: nginx:1.27\n    volumes:\n"
        "      - ./nginx/${SETUP:-https}.conf:/etc/nginx/templates/default.conf.template\n"
        "      - ./nginx/upstreams:/etc/nginx/templates/upstreams.template\n"
        "      - ./nginx/locations:/etc/nginx/conf.d/locations\n"
        "  web:\n    build: .\n",
        "Dockerfile": "FROM python:3.12\nCMD exec gunicorn --bind 0.0.0.0:8000 app:app\n",
        "nginx/https.conf": "include /etc/nginx/conf.d/upstreams;\n"
        "server {\n    listen 80;\n    include /etc/nginx/conf.d/locations;\n}\n",
        "nginx/upstreams": "upstream web {\n    server web:8000;\n}\n",
        "nginx/locations": "location / {\n    proxy_pass http://web;\n}\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = check_folder(tmp_path)
    assert not [n for n in result.notes if n.kind == "include-not-found"]
    ((chain, fronts, _),) = chains(tmp_path)
    assert chain == ["compose.yaml", "Dockerfile"]
    assert fronts == ["nginx/locations"]


def test_uwsgi_address_left_as_a_template_placeholder_is_not_known(tmp_path: Path) -> None:
    """`http = ${APP_HTTP}` in a uWSGI ini (a placeholder an install script renders) is an
    address not known here, never listed as the address `${APP_HTTP}`."""
    (tmp_path / "app.ini").write_text(
        "[uwsgi]\nhttp = ${APP_HTTP}\nsocket = /run/app.sock\nmodule = app\n"
    )
    result = check_folder(tmp_path)
    (app,) = result.apps
    assert [s.value for s in app.sockets] == ["unix:/run/app.sock"]


def test_a_line_the_chain_follows_is_not_said_not_followed(tmp_path: Path) -> None:
    """The image copies entrypoint.sh from another stage, so the script read on its own lacks
    the image's `ENV APPCONF` and cannot follow its `supervisord -c $APPCONF/...`; the image's
    reading follows that very line: no `not-followed` note contradicts the launch graph."""
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12-slim AS files\nCOPY . /src\n\nFROM python:3.12-slim\n"
        "ENV APPCONF=/app/conf\nCOPY --from=files /src /app\n"
        'ENTRYPOINT ["/app/entrypoint.sh"]\n'
    )
    (tmp_path / "entrypoint.sh").write_text(
        '#!/bin/sh\nexec supervisord -c "$APPCONF/supervisord.conf"\n'
    )
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "supervisord.conf").write_text(
        "[supervisord]\nnodaemon=true\n\n[program:web]\n"
        "command=gunicorn --workers 2 --bind 0.0.0.0:8000 app:app\n"
    )
    ((files, _, launch),) = chains(tmp_path)
    assert files == ["Dockerfile", "entrypoint.sh", "conf/supervisord.conf"]
    assert launch.app.workers.value == 2
    assert not [n for n in check_folder(tmp_path).notes if n.kind == "not-followed"]


def test_supervisord_values_that_leave_a_program_unreadable_are_read_without(
    tmp_path: Path,
) -> None:
    """start.sh sets EXTRA="--workers" (half of an option, its value set where it runs) and
    execs supervisord, whose program writes `%(ENV_EXTRA)s`: read with that value granian
    would refuse the line, so the program is read without it (unknown), not dropped."""
    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.12-slim\nCOPY . /app\nCMD ["/app/start.sh"]\n'
    )
    (tmp_path / "start.sh").write_text(
        '#!/bin/sh\nEXTRA="--workers"\nexport EXTRA\nexec supervisord -c /app/supervisord.conf\n'
    )
    (tmp_path / "supervisord.conf").write_text(
        "[supervisord]\nnodaemon=true\n\n[program:web]\n"
        "command=granian --interface wsgi --port 8000 %(ENV_EXTRA)s shop.wsgi:application\n"
    )
    ((files, _, launch),) = chains(tmp_path)
    assert files == ["Dockerfile", "start.sh", "supervisord.conf"]
    assert launch.app.kind == "granian"


def test_every_server_of_a_supervisord_config_a_script_runs_joins_the_chain() -> None:
    """start.sh runs `supervisord -c /srv/etc/supervisord.conf`, whose programs start two
    gunicorns (and Celery, nginx): each is linked through the compose service, the image, the
    script and its own program line, in the service's container, behind the nginx location
    that passes to its socket, with its own settings (workers, stopwaitsecs)."""
    root = REPOS / "chain-supervisord-programs"
    found = {
        launch.app.sockets[0].value: (files, fronts, launch)
        for files, fronts, launch in chains(root)
    }
    assert sorted(found) == ["unix:/run/shop/admin.sock", "unix:/run/shop/api.sock"]
    api_files, api_fronts, api = found["unix:/run/shop/api.sock"]
    admin_files, admin_fronts, admin = found["unix:/run/shop/admin.sock"]
    through = ["compose.yaml", "Dockerfile", "start.sh", "etc/supervisord.conf"]
    assert api_files == [*through, "etc/api.py"]
    assert admin_files == [*through, "etc/admin.py"]
    assert (api.chain[3].line, admin.chain[3].line) == (5, 11)  # each its program line
    assert (api_fronts, admin_fronts) == (["etc/nginx.conf"], ["etc/nginx.conf"])
    assert admin.fronts[0].line == 6
    assert api.fronts[0].line == 10
    assert admin.app.container is not None
    assert admin.app.container == api.app.container
    assert (api.app.workers.value, admin.app.workers.value) == (2, 1)
    assert admin.app.stop_wait is not None
    assert admin.app.stop_wait.at.line == 12
    assert api.app.stop_wait is not None
    assert api.app.stop_wait.default


def test_servers_started_beside_another_take_only_the_launch_facts_added_to_it() -> None:
    """A layer above the process manager that rewrites the chain of the server it carries (not
    a prefix of lines) leaves the others unlinked rather than guessed; the facts of the launch
    (container, a shell that does not exec) reach them, their own settings never do."""
    root = REPOS / "chain-supervisord-programs"
    conf, script = root / "etc" / "supervisord.conf", root / "start.sh"
    api = check_folder(root).apps[0]
    bare = replace(api, container=None, launched_by=(Location(conf, 5),), started_with=None)
    other = replace(bare, workers=Setting(7, Location(conf, 11)), launched_by=(Location(conf, 11),))
    carried = with_others([bare, other])
    shell = Setting("supervisord -c /srv/etc/supervisord.conf", Location(script, 4))
    outward = replace(
        carried, launched_by=(Location(script, 4), *carried.launched_by), without_exec=shell
    )
    first, second = started_together([outward])
    assert second.launched_by == (Location(script, 4), Location(conf, 11))
    assert second.without_exec == shell
    assert second.workers.value == 7
    assert first.started_with is None
    assert first.workers == api.workers
    rewritten = replace(carried, launched_by=(Location(script, 4),))
    assert started_together([rewritten]) == [replace(rewritten, started_with=None)]


@pytest.mark.parametrize(
    ("autostart", "image_env", "launched"),
    [
        ("autostart = false", "", False),
        ("autostart = %(ENV_ADMIN_ON)s", "ENV ADMIN_ON=no\n", False),
        ("autostart = %(ENV_ADMIN_ON)s", "", True),  # only the container knows: not false
        ("autostart = true", "", True),
    ],
)
def test_a_program_supervisord_does_not_autostart_is_not_started_by_the_launch(
    tmp_path: Path, autostart: str, image_env: str, launched: bool
) -> None:
    """The admin program's `autostart` false (written, or from the image's ENV): supervisord
    does not start it when the script starts supervisord, so the launch links the api alone
    and admin is read from the config on its own; a value the files do not give is not false."""
    root = tmp_path / "repo"
    shutil.copytree(REPOS / "chain-supervisord-programs", root)
    conf = root / "etc" / "supervisord.conf"
    conf.write_text(conf.read_text().replace("stopwaitsecs = 40", autostart))
    dockerfile = root / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("COPY", image_env + "COPY"))
    found = {launch.app.sockets[0].value: files for files, _, launch in chains(root)}
    assert found["unix:/run/shop/api.sock"][:3] == ["compose.yaml", "Dockerfile", "start.sh"]
    admin = found["unix:/run/shop/admin.sock"]
    assert admin == (
        ["compose.yaml", "Dockerfile", "start.sh", "etc/supervisord.conf", "etc/admin.py"]
        if launched
        else ["etc/supervisord.conf", "etc/admin.py"]
    )


def test_an_include_the_fronts_image_copies_there_is_read(tmp_path: Path) -> None:
    """The proxy's Dockerfile copies nginx.conf to /etc/nginx/ and default.conf to
    /etc/nginx/conf.d/: nginx.conf's `include /etc/nginx/conf.d/*.conf` reads default.conf
    (its pass to `web:8000` joins the gunicorn service), not "include-not-found"; an include
    the image copies nothing to (`mime.types`, nginx's own) is still said not found."""
    (tmp_path / "proxy").mkdir()
    (tmp_path / "proxy" / "Dockerfile").write_text(
        "FROM nginx:1.27\nENV NGINX_DIR=/etc/nginx\n"
        "COPY nginx.conf ${NGINX_DIR}/nginx.conf\nCOPY default.conf ${NGINX_DIR}/conf.d/\n"
    )
    (tmp_path / "proxy" / "nginx.conf").write_text(
        "events {}\nhttp {\n  include /etc/nginx/mime.types;\n"
        "  include /etc/nginx/conf.d/*.conf;\n}\n"
    )
    (tmp_path / "proxy" / "default.conf").write_text(
        "server {\n  listen 80;\n  location / {\n    proxy_pass http://web:8000;\n"
        "    proxy_read_timeout 120s;\n  }\n}\n"
    )
    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.12-slim\nCOPY . /app\nCMD ["gunicorn", "-b", "0.0.0.0:8000", "-t", "60", "app:app"]\n'
    )
    (tmp_path / "compose.yaml").write_text(
        "services:\n  web:\n    build: .\n  proxy:\n    build: proxy\n"
    )
    result = check_folder(tmp_path)
    assert {(link.nginx.file.name, link.passing.at.file.name) for link in result.links} >= {
        ("nginx.conf", "default.conf")
    }
    missing = [n.message for n in result.notes if n.kind == "include-not-found"]
    assert [m for m in missing if "conf.d" in m] == []
    assert [m for m in missing if "mime.types" in m]


_DEBUG_AND_PROD = """\
FROM python:3.12-slim AS base
STOPSIGNAL SIGINT

FROM base AS debug
CMD ["python", "-m", "debugpy", "--listen", "0.0.0.0:5678", "--wait-for-client", \\
    "-m", "uvicorn", "app.main:api", "--host", "0.0.0.0", "--port", "5000"]

FROM base AS prod
CMD ["uvicorn", "app.main:api", "--host", "0.0.0.0", "--port", "5000", "--workers", "8"]
"""


def test_debugpy_runs_the_server_module_and_each_stage_is_its_own_launch(tmp_path: Path) -> None:
    """`python -m debugpy --listen ... -m uvicorn ...` is uvicorn under the debugger, so the
    compose service built with `target: ${TARGET_TAG:-debug}` starts it; the final stage's
    8-worker uvicorn, which shares only the base stage's STOPSIGNAL line with it, stays a
    launch of its own."""
    (tmp_path / "Dockerfile").write_text(_DEBUG_AND_PROD)
    (tmp_path / "compose.yaml").write_text(
        "services:\n  backend:\n    build:\n      context: .\n      target: ${TARGET_TAG:-debug}\n"
    )
    started = sorted(
        (launch.app.container.name if launch.app.container else "-", launch.app.workers.value)
        for *_, launch in chains(tmp_path)
    )
    assert started == [("-", 8), ("backend", 1)]


def test_a_relative_entrypoint_is_found_from_the_workdir_in_force(tmp_path: Path) -> None:
    """`WORKDIR /home/app/backend` then `ENTRYPOINT ["../entrypoint.sh", "prod"]`: the script
    the COPY put at /home/app/entrypoint.sh, whose `prod)` arm (the ENTRYPOINT's own word)
    starts 3 gunicorn workers, not the `dev)` arm's 1."""
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.12-slim\nWORKDIR /home/app\nCOPY entrypoint.sh ./entrypoint.sh\n"
        'WORKDIR /home/app/backend\nENTRYPOINT ["../entrypoint.sh", "prod"]\n'
    )
    (tmp_path / "entrypoint.sh").write_text(
        '#!/bin/sh\ncase "$1" in\n  dev)\n    exec gunicorn -w 1 --reload app:app\n    ;;\n'
        "  prod)\n    exec gunicorn -w 3 app:app\n    ;;\nesac\n"
    )
    found = [(files, launch.app.workers.value) for files, _, launch in chains(tmp_path)]
    assert found == [(["Dockerfile", "entrypoint.sh"], 3)]


def test_supervisord_program_under_a_checkout_directory_reads_the_repositorys_config(
    tmp_path: Path,
) -> None:
    """deploy/supervisor/prod/app.conf runs `/home/deploy/shop/venv/bin/gunicorn -c
    /home/deploy/shop/deploy/gunicorn_config.py` with `directory=/home/deploy/shop`, the
    deployed checkout: the config is the repository's deploy/gunicorn_config.py (5 workers on
    :5050), one launch from the program through the config, and no config-not-found note.
    (Seen in DOAJ/doaj's deploy/supervisor.)"""
    root = write(
        tmp_path,
        {
            "deploy/supervisor/prod/app.conf": (
                "[program:app]\n"
                "command=/home/deploy/shop/venv/bin/gunicorn -c "
                "/home/deploy/shop/deploy/gunicorn_config.py shop.app:app\n"
                "directory=/home/deploy/shop\nstopasgroup=true\n"
            ),
            "deploy/gunicorn_config.py": 'bind = "0.0.0.0:5050"\nworkers = 5\n',
        },
    )
    result = check_folder(root)
    assert folder_chains(result, root) == [
        (
            ["deploy/supervisor/prod/app.conf:2", "deploy/gunicorn_config.py:1"],
            "gunicorn",
            5,
        )
    ]
    assert not [n for n in result.notes if n.kind == "config-not-found"]


def test_supervisord_program_through_a_folder_named_for_the_repository_is_its_file(
    tmp_path: Path,
) -> None:
    """A supervisord program with no `directory=` that runs `sh /data/shop/api/tools/start.sh`
    (the image's entrypoint clones the repository `shop` into /data/shop when the container
    starts): the folder named for the repository is its checkout, so the script is the
    repository's api/tools/start.sh and the program's chain runs through it to its gunicorn.
    A path through a folder of any other name is not looked for (seen in openspug/spug's
    docs/docker/spug.ini)."""
    root = write(
        tmp_path / "shop",
        {
            "docker/app.ini": "[program:api]\ncommand = sh /data/shop/api/tools/start.sh\n\n"
            "[program:other]\ncommand = sh /data/other/api/tools/start.sh\n",
            "api/tools/start.sh": "#!/bin/sh\nexec gunicorn -w 3 -b 127.0.0.1:9001 shop.wsgi\n",
        },
    )
    assert folder_chains(check_folder(root), root) == [
        (["docker/app.ini:2", "api/tools/start.sh:2"], "gunicorn", 3)
    ]


def test_image_that_git_clones_its_own_repository_runs_the_repository_entrypoint(
    tmp_path: Path,
) -> None:
    """An image built from no context that `git clone`s the repository checked here (`RUN git
    clone --branch main --depth 1 https://github.com/acme/shop.git` under `WORKDIR /app`, then
    `ENTRYPOINT ["/app/shop/docker/entrypoint.sh"]`) runs the repository's own
    docker/entrypoint.sh: the chain goes through it to its uvicorn. The clone of any other
    project (`tools`) holds nothing here: its script stays not followed (seen in
    JaneliaSciComp/SAM_service's docker/Dockerfile)."""
    entrypoint = "#!/bin/sh\nexec uvicorn shop.main:app --host 0.0.0.0 --workers 2\n"
    root = write(
        tmp_path / "shop",
        {
            "docker/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\n"
            "RUN git clone --branch main --depth 1 https://github.com/acme/shop.git\n"
            'ENTRYPOINT ["/app/shop/docker/entrypoint.sh"]\n',
            "docker/entrypoint.sh": entrypoint,
            "other/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\n"
            "RUN git clone https://github.com/acme/tools.git\n"
            'ENTRYPOINT ["/app/tools/docker/entrypoint.sh"]\n',
        },
    )
    result = check_folder(root)
    assert folder_chains(result, root) == [
        (["docker/Dockerfile:4", "docker/entrypoint.sh:2"], "uvicorn", 2)
    ]
    assert [n.at.file.as_posix() for n in result.notes if n.kind == "not-followed"] == [
        str(root / "other/Dockerfile")
    ]


def test_a_server_stage_below_an_idle_last_stage_is_a_launch(tmp_path: Path) -> None:
    """`FROM python AS base ... CMD gunicorn ...` then `FROM base AS dev` with `CMD tail -f
    /dev/null` (a container kept idle for `docker exec`): the last stage starts nothing, so
    the base stage's gunicorn, what `docker build --target base` runs, is the Dockerfile's
    launch, with the base stage's environment, and a note says which stage was read (seen in
    MozillaFoundation/foundation.mozilla.org). A stage below that starts no server either (a
    `celery worker`) adds no launch."""
    write(
        tmp_path / "worker",
        {
            "Dockerfile": "FROM python:3.12-slim AS base\n"
            'CMD ["celery", "-A", "app", "worker"]\n\n'
            'FROM base AS dev\nCMD ["sleep", "infinity"]\n',
        },
    )
    assert folder_chains(check_folder(tmp_path / "worker"), tmp_path / "worker") == []
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim AS base\n"
            'ENV GUNICORN_CMD_ARGS="--workers 3 --bind 0.0.0.0:8000"\n'
            'CMD ["gunicorn", "app.wsgi:application"]\n\n'
            "FROM base AS dev\nUSER root\n"
            'CMD ["tail", "-f", "/dev/null"]\n',
        },
    )
    result = check_folder(tmp_path)
    assert [(kind, workers) for _, kind, workers in folder_chains(result, tmp_path)] == [
        ("gunicorn", 3)
    ]
    chosen = [n for n in result.notes if n.kind == "server-chosen"]
    assert [(n.at.line, "--target base" in n.message) for n in chosen] == [(7, True)]


def test_file_copied_from_a_stage_into_a_folder_is_that_stages_context_file(
    tmp_path: Path,
) -> None:
    """`COPY --from=builder /install/deploy/uwsgi.ini .` puts the builder's file into WORKDIR
    under its own name; the builder got it from the build context by `COPY . .` under
    `WORKDIR /install`, so the CMD's `--ini uwsgi.ini` is deploy/uwsgi.ini, read and joined to
    the nginx that passes to it, never config-not-found. Seen in dod-ccpo/atst."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12 AS builder\nWORKDIR /install\nCOPY . .\n"
            "RUN pip install .\n\nFROM python:3.12-slim\nWORKDIR /app\n"
            "COPY --from=builder /install/deploy/uwsgi.ini .\n"
            'CMD ["uwsgi", "--ini", "uwsgi.ini"]\n',
            "deploy/uwsgi.ini": "[uwsgi]\nmodule = app\nprocesses = 4\nsocket = :8000\n",
            "deploy/nginx.conf": "server {\n  listen 80;\n  location / {\n"
            "    include uwsgi_params;\n    uwsgi_pass 127.0.0.1:8000;\n  }\n}\n",
        },
    )
    assert not not_found(check_folder(tmp_path))
    ((files, fronts, launch),) = chains(tmp_path)
    assert files == ["Dockerfile", "deploy/uwsgi.ini"]
    assert fronts == ["deploy/nginx.conf"]
    assert launch.app.workers.value == 4


def test_copied_symlink_is_read_as_the_file_it_names(tmp_path: Path) -> None:
    """A COPY'd `uwsgi.ini` that is a symlink to deploy/azure/uwsgi.ini is that file: the
    launch's config is deploy/azure/uwsgi.ini, joined to its front once, not a second
    'uwsgi.ini' launch beside the walk's own reading of it. Seen in dod-ccpo/atst."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\n"
            'CMD ["uwsgi", "--ini", "uwsgi.ini"]\n',
            "deploy/azure/uwsgi.ini": "[uwsgi]\nmodule = app\nprocesses = 4\n"
            "socket = /run/u.sock\n",
            "deploy/docker/nginx.conf": "server {\n  listen 80;\n  location / {\n"
            "    uwsgi_pass unix:///run/u.sock;\n  }\n}\n",
        },
    )
    (tmp_path / "uwsgi.ini").symlink_to("deploy/azure/uwsgi.ini")
    ((files, fronts, _),) = chains(tmp_path)
    assert files == ["Dockerfile", "deploy/azure/uwsgi.ini"]
    assert fronts == ["deploy/docker/nginx.conf"]


def test_relative_config_under_an_unknown_base_workdir_is_under_the_whole_copy(
    tmp_path: Path,
) -> None:
    """`FROM base-web` (an image built elsewhere, its WORKDIR not known here), `COPY . /app`
    and `CMD uwsgi --ini api.ini`: the relative ini is taken as under the one copy of the
    whole build context, the context's api.ini, never "not in the build context". Seen in
    ministryofjustice/money-to-prisoners-api."""
    write(
        tmp_path,
        {
            "Dockerfile": "FROM base-web\nCOPY ./requirements requirements\nCOPY . /app\n"
            "CMD venv/bin/python manage.py migrate && venv/bin/uwsgi --ini api.ini\n",
            "requirements/base.txt": "django\n",
            "api.ini": "[uwsgi]\nmodule = app\nprocesses = 2\nhttp-socket = :8080\n",
        },
    )
    assert not not_found(check_folder(tmp_path))
    ((files, _, launch),) = chains(tmp_path)
    assert files == ["Dockerfile", "api.ini"]
    assert launch.app.workers.value == 2
