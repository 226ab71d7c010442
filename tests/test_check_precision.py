"""Issue 36: `check` findings a maintainer would accept. One test per class of wrong or
missing finding, on small files written here that reproduce each pattern seen in real
repositories (docs/check.md has the real files and the verdicts)."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.check.model import Finding, Severity
from servertune.sizing import Machine, make_plan
from servertune.workload import Workload

MACHINE = Machine(cores=4, somaxconn=4096)


def _write(directory: Path, files: dict[str, str]) -> list[Path]:
    paths = []
    for name, text in files.items():
        path = directory / name
        path.write_text(text)
        paths.append(path)
    return paths


def _findings(directory: Path, files: dict[str, str], **kwargs: object) -> list[Finding]:
    kwargs.setdefault("machine", MACHINE)
    kwargs.setdefault("env", {})
    return list(check_files(_write(directory, files), **kwargs).findings)  # type: ignore[arg-type]


def _one(findings: list[Finding], rule: str) -> Finding:
    (finding,) = [f for f in findings if f.rule == rule]
    return finding


# 36.3: the worker findings follow the plan servertune would make, or say what they assumed.


def test_workers_over_cores_names_the_workload_it_assumed(tmp_path: Path) -> None:
    """Without --workload the finding says it assumed servertune's default workload and
    offers that plan's processes x threads, not a bare "one process per core"."""
    findings = _findings(tmp_path, {"gunicorn.conf.py": "workers = 9\n"})
    finding = _one(findings, "workers-over-cores")
    assert "servertune's default workload" in finding.message
    assert "for requests that wait on I/O" in finding.message
    default = make_plan(Workload(cores=4), MACHINE)
    assert finding.fix == f"workers = {default.processes} and threads = {default.threads}"


def test_workers_over_cores_follows_an_io_bound_plan(tmp_path: Path) -> None:
    """With an I/O-bound workload given, the fix is that plan's processes and its (many)
    threads, and the message says it is the workload given."""
    plan = make_plan(Workload(cores=4, cpu_fraction=0.05, service_time_ms=200), MACHINE)
    assert plan.threads > 2
    findings = _findings(tmp_path, {"gunicorn.conf.py": "workers = 9\n"}, plan=plan)
    finding = _one(findings, "workers-over-cores")
    assert "the workload given" in finding.message
    assert finding.fix == f"workers = {plan.processes} and threads = {plan.threads}"


# 29.8: a fix in the language of the file the setting is written in.


def test_a_gunicorn_py_reached_through_a_dockerfile_is_fixed_in_python(tmp_path: Path) -> None:
    """`workers = 9` in gunicorn.conf.py, started by a Dockerfile's `gunicorn -c`: the fix is
    a line of the .py (`workers = 4 ...`), not a flag; a flag set on the CMD is fixed as a flag."""
    dockerfile = (
        'FROM python:3.12\nCOPY . .\nCMD ["gunicorn", "-c", "gunicorn.conf.py", "app:app"]\n'
    )
    files = {"Dockerfile": dockerfile, "gunicorn.conf.py": "workers = 9\n"}
    finding = _one(_findings(tmp_path, files), "workers-over-cores")
    assert finding.at.file.name == "gunicorn.conf.py"
    assert finding.fix.startswith("workers = 4")
    flags = 'FROM python:3.12\nCMD ["gunicorn", "-w", "9", "app:app"]\n'
    finding = _one(_findings(tmp_path, {"Dockerfile": flags}), "workers-over-cores")
    assert finding.fix.startswith("--workers 4 and --threads ")


# 36.8: nginx's default proxy_read_timeout under the app server's timeout, in one run.

NGINX_TO_SERVICE = """\
upstream app_server {
    server web:8000 fail_timeout=0;
}
server {
    listen 80;
    location / {
        proxy_pass http://app_server;
    }
}
"""


def test_nginx_reaching_a_container_by_name_is_linked_by_port(tmp_path: Path) -> None:
    """nginx's `server web:8000` reaches the container named `web`, whatever its gunicorn's bind
    line says about hosts (here gunicorn's default): the cross-layer rule fires on the
    default 60 s proxy_read_timeout under a 300 s timeout. Before, the pair was never linked."""
    dockerfile = 'FROM python:3.12\nCMD ["gunicorn", "--timeout", "300", "app:app"]\n'
    files = {"nginx.conf": NGINX_TO_SERVICE, "Dockerfile": dockerfile}
    finding = _one(_findings(tmp_path, files), "app-timeout-over-read-timeout")
    assert (finding.at.file.name, finding.at.line) == ("nginx.conf", 7)  # the proxy_pass
    assert finding.fix == "proxy_read_timeout 305s;"
    assert "proxy_read_timeout 60 s (default)" in finding.message


def test_a_name_links_only_the_app_on_its_port(tmp_path: Path) -> None:
    """A name at port 8000 does not link an app server listening on 9000."""
    conf = 'bind = "0.0.0.0:9000"\ntimeout = 300\n'
    files = {"nginx.conf": NGINX_TO_SERVICE, "gunicorn.conf.py": conf}
    assert not [f for f in _findings(tmp_path, files) if f.rule == "app-timeout-over-read-timeout"]


# 36.5: a single-value option given twice on one command line.


def test_an_option_given_twice_names_both(tmp_path: Path) -> None:
    """`-w $WORKERS -w $THREADS` (seen in a real entrypoint): the second replaces the first
    whatever the variables hold; options that add up (`--bind` twice) are not a finding."""
    script = (
        "#!/bin/sh\nexec gunicorn app:app --bind 0.0.0.0:8000 --bind [::]:8000 \\\n"
        "    -w $WORKERS \\\n    -w $THREADS --timeout 60\n"
    )
    findings = _findings(tmp_path, {"start.sh": script})
    finding = _one(findings, "option-given-twice")
    assert (finding.at.line, finding.related[0].line) == (3, 4)
    assert "`-w $WORKERS` is overridden by `-w $THREADS`" in finding.message
    assert "argparse" in finding.backing
    clean = "#!/bin/sh\nexec gunicorn app:app --bind 0.0.0.0:8000 --bind [::]:8000 -w 2\n"
    assert not [
        f for f in _findings(tmp_path, {"start.sh": clean}) if f.rule == "option-given-twice"
    ]


def test_uwsgi_processes_and_workers_are_one_option(tmp_path: Path) -> None:
    """uWSGI's --workers is its --processes: both on one line is a repeat."""
    dockerfile = (
        'FROM python:3.12\nCMD ["uwsgi", "--http", ":8000", "--processes", "4", '
        '"--die-on-term", "--workers", "2", "--module", "app"]\n'
    )
    finding = _one(_findings(tmp_path, {"Dockerfile": dockerfile}), "option-given-twice")
    assert "`--processes 4` is overridden by `--workers 2`" in finding.message


# 36.6: a shell entrypoint that starts the server without exec.


def test_a_script_without_exec_keeps_the_shell_as_pid_1(tmp_path: Path) -> None:
    """`gunicorn ...` as the script's last line (no exec), the image's ENTRYPOINT: the shell
    stays PID 1 and SIGTERM never reaches gunicorn; the fix is the same line with `exec`.
    Given alone, nothing shows what starts the script (honcho or a Procfile would signal its
    whole group): the same line and fix, as `advice`, saying so."""
    script = "#!/bin/bash\nset -e\npython manage.py migrate\ngunicorn app.wsgi -w 2 --bind :8000\n"
    image = (
        'FROM python:3.12-slim\nCOPY entrypoint.sh /entrypoint.sh\nENTRYPOINT ["/entrypoint.sh"]\n'
    )
    files = {"entrypoint.sh": script, "Dockerfile": image}
    finding = _one(_findings(tmp_path, files), "entrypoint-without-exec")
    assert (finding.at.file.name, finding.at.line) == ("entrypoint.sh", 4)
    assert finding.fix == "exec gunicorn app.wsgi -w 2 --bind :8000"
    assert "docs.docker.com" in finding.backing
    (tmp_path / "alone").mkdir()
    alone = _findings(tmp_path / "alone", {"entrypoint.sh": script})
    assert not [f for f in alone if f.rule == "entrypoint-without-exec"]
    guess = _one(alone, "entrypoint-without-exec-unlaunched")
    assert guess.severity == Severity.advice
    assert guess.at.line == 4
    assert guess.fix == "exec gunicorn app.wsgi -w 2 --bind :8000"
    assert "no file given here starts the script" in guess.message


def test_a_script_that_execs_or_traps_is_not_flagged(tmp_path: Path) -> None:
    """`exec gunicorn`, `exec gosu app gunicorn`, or a script with a `trap`: no finding."""
    for script in (
        "#!/bin/sh\nexec gunicorn app.wsgi -w 2\n",
        "#!/bin/sh\nexec gosu app gunicorn app.wsgi -w 2\n",
        "#!/bin/sh\ntrap 'kill -TERM $child' TERM\ngunicorn app.wsgi -w 2 &\nchild=$!\nwait\n",
    ):
        findings = _findings(tmp_path, {"entrypoint.sh": script})
        assert not [f for f in findings if f.rule == "entrypoint-without-exec"], script


# 36.7: uWSGI 2.0 without die-on-term under a platform that stops with SIGTERM.


def test_uwsgi_from_a_command_line_without_die_on_term(tmp_path: Path) -> None:
    """A Dockerfile's `uwsgi --ini`: SIGTERM reloads; the fix goes in the ini file. With
    die-on-term, or the documented SIGTERM hook, nothing; an ini read alone (systemd, the
    Emperor) is not flagged."""
    ini = "[uwsgi]\nmodule = app\nhttp-socket = :8000\nprocesses = 2\n"
    dockerfile = 'FROM python:3.12\nCOPY . .\nCMD ["uwsgi", "--ini", "uwsgi.ini"]\n'
    findings = _findings(tmp_path, {"Dockerfile": dockerfile, "uwsgi.ini": ini})
    finding = _one(findings, "uwsgi-sigterm-reloads")
    assert finding.fix == (
        "die-on-term = true   and   hook-master-start = unix_signal:15 gracefully_kill_them_all"
    )
    assert "ThingsToKnow" in finding.backing
    for fixed in (
        ini + "die-on-term = true\n",
        ini + "hook-master-start = unix_signal:15 gracefully_kill_them_all\n",
    ):
        findings = _findings(tmp_path, {"Dockerfile": dockerfile, "uwsgi.ini": fixed})
        assert not [f for f in findings if f.rule == "uwsgi-sigterm-reloads"], fixed
    alone = _findings(tmp_path, {"uwsgi.ini": ini})
    assert not [f for f in alone if f.rule == "uwsgi-sigterm-reloads"]


# 36.9: a day-long proxy timeout on `location /`; worker_connections below the proxied load.

DAY_LONG = """\
server {
    listen 80;
    location /ws/ {
        proxy_pass http://127.0.0.1:8000;
        proxy_read_timeout 86400s;
    }
    location / {
        proxy_pass http://127.0.0.1:8000;
        proxy_read_timeout 1d;
        proxy_send_timeout 86400;
    }
}
"""


def test_a_day_long_timeout_on_location_slash(tmp_path: Path) -> None:
    """proxy_read_timeout / proxy_send_timeout of a day on `location /`: two findings whose fix
    keeps the app's timeout + 5 s; the same on the WebSocket's own location: none."""
    conf = 'bind = "127.0.0.1:8000"\ntimeout = 120\ngraceful_timeout = 120\n'
    findings = _findings(tmp_path, {"nginx.conf": DAY_LONG, "gunicorn.conf.py": conf})
    found = [f for f in findings if f.rule == "proxy-timeout-never-gives-up"]
    assert [(f.at.line, f.fix.split(";")[0]) for f in found] == [
        (9, "proxy_read_timeout 125s"),
        (10, "proxy_send_timeout 125s"),
    ]


def test_a_long_timeout_the_app_needs_is_not_flagged(tmp_path: Path) -> None:
    """An app server that lets requests run two hours: nginx waiting that long is the chain."""
    conf = 'bind = "127.0.0.1:8000"\ntimeout = 90000\ngraceful_timeout = 90000\n'
    findings = _findings(tmp_path, {"nginx.conf": DAY_LONG, "gunicorn.conf.py": conf})
    assert not [f for f in findings if f.rule == "proxy-timeout-never-gives-up"]


SMALL_EVENTS = """\
worker_processes 1;
events {
    worker_connections 24;
}
http {
    server {
        listen 80;
        location / {
            proxy_pass http://127.0.0.1:8000;
        }
    }
}
"""


def test_worker_connections_below_twice_the_app_slots(tmp_path: Path) -> None:
    """4 gunicorn processes x 4 threads = 16 requests at once hold 32 connections in nginx:
    worker_connections 24 with one worker process is a finding; 32 is not; gevent workers
    (concurrency not bounded by the files) say nothing."""
    conf = 'bind = "127.0.0.1:8000"\nworkers = 4\nthreads = 4\n'
    findings = _findings(tmp_path, {"nginx.conf": SMALL_EVENTS, "gunicorn.conf.py": conf})
    finding = _one(findings, "worker-connections-below-proxied-load")
    assert (finding.at.line, finding.fix) == (3, "worker_connections 32;")
    enough = SMALL_EVENTS.replace("24", "32")
    findings = _findings(tmp_path, {"nginx.conf": enough, "gunicorn.conf.py": conf})
    assert not [f for f in findings if f.rule == "worker-connections-below-proxied-load"]
    gevent = conf + 'worker_class = "gevent"\n'
    findings = _findings(tmp_path, {"nginx.conf": SMALL_EVENTS, "gunicorn.conf.py": gevent})
    assert not [f for f in findings if f.rule == "worker-connections-below-proxied-load"]


# 29.7: a Deployment with no command runs its image's CMD; a LoadBalancer in front of a bare pod.

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: registry.example.com/web:1.0
          ports:
            - {name: http, containerPort: 8000}
RESOURCES---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  type: LoadBalancer
  selector: {app: web}
  ports:
    - {port: 80, targetPort: http}
"""
IMAGE = 'FROM python:3.12\nCMD ["gunicorn", "-w", "4", "--bind", "0.0.0.0:8000", "app:app"]\n'


def test_a_deployment_without_command_runs_the_dockerfile_given(tmp_path: Path) -> None:
    """The container sets no command: the Dockerfile's gunicorn is what it runs, so its four
    workers are judged against the container's CPU limit of 1 (within gunicorn's documented
    2-4 x cores: advice, the plan for 1 core)."""
    limited = "          resources: {limits: {cpu: '1', memory: 512Mi}}\n"
    files = {"deploy.yaml": DEPLOYMENT.replace("RESOURCES", limited), "Dockerfile": IMAGE}
    finding = _one(_findings(tmp_path, files), "workers-over-cores")
    assert "the CPU limit at " in finding.message
    assert finding.at.file.name == "Dockerfile"
    assert finding.related[0].file.name == "deploy.yaml"


def test_a_loadbalancer_in_front_of_a_pod_with_no_resources_and_no_probes(tmp_path: Path) -> None:
    """A LoadBalancer Service exposes a pod with neither resources nor probes: one warning at
    the container (not three infos), its fix naming the container's own port."""
    files = {"deploy.yaml": DEPLOYMENT.replace("RESOURCES", ""), "Dockerfile": IMAGE}
    findings = _findings(tmp_path, files)
    finding = _one(findings, "exposed-without-resources-or-probes")
    assert (finding.at.file.name, finding.at.line) == ("deploy.yaml", 14)
    assert "port: 8000" in finding.fix
    assert "`web`" in finding.message
    assert not {"no-readiness-probe", "no-cpu-limit"} & {f.rule for f in findings}


def test_uwsgi_whose_image_stops_it_with_sigint_is_not_flagged(tmp_path: Path) -> None:
    """`STOPSIGNAL SIGINT` in the image: docker stop never sends SIGTERM to uWSGI."""
    dockerfile = (
        'FROM python:3.12\nSTOPSIGNAL SIGINT\nCMD ["uwsgi", "--http-socket", ":8000", '
        '"--processes", "2", "--module", "app"]\n'
    )
    findings = _findings(tmp_path, {"Dockerfile": dockerfile})
    assert not [f for f in findings if f.rule == "uwsgi-sigterm-reloads"]
    findings = _findings(tmp_path, {"Dockerfile": dockerfile.replace("SIGINT", "SIGTERM")})
    assert [f.rule for f in findings if f.rule == "uwsgi-sigterm-reloads"] == [
        "uwsgi-sigterm-reloads"
    ]


def test_the_read_timeout_chain_needs_a_timeout_that_ends_requests(tmp_path: Path) -> None:
    """nginx's default 60 s under gunicorn's `timeout = 120`: a finding for sync workers, none
    for gthread, whose `timeout` is a heartbeat that ends no request (issue 36.4's class)."""
    nginx = "server {\n    listen 80;\n    location / {\n        proxy_pass http://127.0.0.1:8000;\n    }\n}\n"
    sync = 'bind = "127.0.0.1:8000"\ntimeout = 120\ngraceful_timeout = 120\n'
    findings = _findings(tmp_path, {"nginx.conf": nginx, "gunicorn.conf.py": sync})
    assert [f.rule for f in findings if f.rule == "app-timeout-over-read-timeout"] == [
        "app-timeout-over-read-timeout"
    ]
    gthread = sync + "threads = 3\n"
    findings = _findings(tmp_path, {"nginx.conf": nginx, "gunicorn.conf.py": gthread})
    assert not [f for f in findings if f.rule == "app-timeout-over-read-timeout"]


def test_a_sidecar_without_command_is_not_the_dockerfile_s_server(tmp_path: Path) -> None:
    """An nginx sidecar with no command beside the app container: only the app container runs
    the Dockerfile's CMD (the sidecar's image is nginx), so one finding, not two."""
    limited = "          resources: {limits: {cpu: '1', memory: 512Mi}}\n"
    sidecar = (
        "        - name: proxy\n          image: nginx:1.27\n"
        "          resources: {limits: {cpu: '1', memory: 64Mi}}\n"
    )
    manifest = DEPLOYMENT.replace("RESOURCES", limited + sidecar)
    findings = _findings(tmp_path, {"deploy.yaml": manifest, "Dockerfile": IMAGE})
    assert [f.rule for f in findings].count("workers-over-cores") == 1


def test_a_daemonized_server_beside_another_foreground_process_is_not_told_to_exec(
    tmp_path: Path,
) -> None:
    """`gunicorn --daemon` then `exec nginx`: exec on the gunicorn line is no fix: not flagged."""
    script = "#!/bin/sh\ngunicorn app.wsgi -w 2 --daemon\nexec nginx -g 'daemon off;'\n"
    findings = _findings(tmp_path, {"entrypoint.sh": script})
    assert not [f for f in findings if f.rule == "entrypoint-without-exec"]


def test_a_setting_missing_from_a_config_file_not_read_is_not_a_finding(tmp_path: Path) -> None:
    """`uwsgi --ini /opt/app/uwsgi.ini` whose file is not among those given: its die-on-term may
    be there, so no uwsgi-sigterm-reloads (nautobot's image sets it in that file)."""
    dockerfile = 'FROM python:3.12\nCMD ["uwsgi", "--ini", "/opt/app/uwsgi.ini"]\n'
    findings = _findings(tmp_path, {"Dockerfile": dockerfile})
    assert not [f for f in findings if f.rule == "uwsgi-sigterm-reloads"]


_POOLED_NGINX = """\
events {}
http {
    upstream app {
        server 127.0.0.1:8001;
        keepalive 16;
    }
    server {
        listen 8000;
        location / {
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
"""


def test_an_upstream_pool_races_a_gthread_keepalive_not_a_sync_worker(tmp_path: Path) -> None:
    """nginx's upstream pool (60 s) over gunicorn's 2 s default: found for gthread; the sync
    worker closes each connection after its response, so nginx pools none to race."""
    files = {"nginx.conf": _POOLED_NGINX, "gunicorn.conf.py": 'bind = "127.0.0.1:8001"\n'}
    quiet = _findings(tmp_path, files)
    assert not [f for f in quiet if f.rule == "upstream-keepalive-over-app-keepalive"]
    files["gunicorn.conf.py"] += 'worker_class = "gthread"\nthreads = 4\n'
    found = _one(_findings(tmp_path, files), "upstream-keepalive-over-app-keepalive")
    assert found.fix == "keepalive = 65"


def test_a_default_keepalive_is_fixed_in_the_config_file_the_command_names(
    tmp_path: Path,
) -> None:
    """supervisord runs `gunicorn -c gunicorn.conf.py` and the config leaves keepalive at its
    default: the fix goes where the project keeps gunicorn's settings (`keepalive = 65` at
    the config's first line), not as a flag on the supervisord command line; with no config
    file named (nor gunicorn's default ./gunicorn.conf.py beside it), the flag."""
    conf = 'bind = "127.0.0.1:8001"\nworker_class = "gthread"\nthreads = 4\n'
    program = "[program:web]\ncommand=gunicorn -c gunicorn.conf.py app:app\n"
    files = {"nginx.conf": _POOLED_NGINX, "gunicorn.conf.py": conf, "supervisord.conf": program}
    found = _one(_findings(tmp_path, files), "upstream-keepalive-over-app-keepalive")
    assert (found.at.file.name, found.at.line, found.fix) == (
        "gunicorn.conf.py",
        1,
        "keepalive = 65",
    )
    assert found.message.startswith("keepalive 2 s (default)")
    bare = "[program:web]\ncommand=gunicorn -k gthread --threads 4 -b 127.0.0.1:8001 app:app\n"
    alone = tmp_path / "alone"
    alone.mkdir()
    found = _one(
        _findings(alone, {"nginx.conf": _POOLED_NGINX, "supervisord.conf": bare}),
        "upstream-keepalive-over-app-keepalive",
    )
    assert (found.at.file.name, found.fix) == ("supervisord.conf", "--keep-alive 65")


def test_uwsgi_processes_from_the_images_env_are_fixed_there_and_cheaper_is_said(
    tmp_path: Path,
) -> None:
    """An image sets `ENV UWSGI_PROCESSES 16` and `ENV UWSGI_CHEAPER 2` for the uWSGI its
    supervisord runs: the worker advice sits at that ENV line and its fix is that variable
    (not `--processes` on the supervisord command), and the thunder-lock advice says up to
    16 processes, 2 at idle, and sits in the ini where its line goes."""
    image = (
        "FROM python:3.12-slim\nCOPY uwsgi.ini /etc/uwsgi/\n"
        "COPY supervisord.conf /etc/supervisor/conf.d/supervisord.conf\n"
        "ENV UWSGI_CHEAPER 2\nENV UWSGI_PROCESSES 16\n"
        'CMD ["/usr/bin/supervisord"]\n'
    )
    program = "[program:uwsgi]\ncommand=/usr/local/bin/uwsgi --ini /etc/uwsgi/uwsgi.ini\n"
    ini = "[uwsgi]\nsocket = /tmp/uwsgi.sock\nmodule = app:application\n"
    files = {"Dockerfile": image, "supervisord.conf": program, "uwsgi.ini": ini}
    found = _findings(tmp_path, files)  # 4 cores
    workers = _one(found, "workers-over-cores")
    assert (workers.at.file.name, workers.at.line) == ("Dockerfile", 5)
    assert workers.fix == "ENV UWSGI_PROCESSES 4 and ENV UWSGI_THREADS 2"
    lock = _one(found, "thunder-lock")
    assert (lock.at.file.name, lock.fix) == ("uwsgi.ini", "thunder-lock = true")
    assert "up to 16 processes (cheaper mode: 2 at idle, more under load)" in lock.message


def test_a_cpu_limit_of_another_service_does_not_judge_this_servers_workers(
    tmp_path: Path,
) -> None:
    """Two compose services run gunicorn; only `admin` declares `cpus: "0.5"`. `web`, with no
    limit of its own, runs on the node's cores, which nobody named: its 9 workers are not
    judged under admin's 0.5 CPU (seen in grafana/oncall, whose engine's uWSGI was judged
    under the grafana service's limit), while admin's own are."""
    files = {
        "Dockerfile": 'FROM python:3.12-slim\nWORKDIR /app\nCMD ["gunicorn", "app:app"]\n',
        "compose.yaml": "services:\n  web:\n    build: .\n"
        "    command: gunicorn --workers 9 --bind 0.0.0.0:8000 app:app\n"
        "  admin:\n    build: .\n"
        "    command: gunicorn --workers 3 --bind 0.0.0.0:8001 app:app\n"
        "    deploy:\n      resources:\n        limits:\n          cpus: '0.5'\n",
    }
    machine = Machine(cores=4, cores_source="this machine (the test's)", somaxconn=4096)
    findings = _findings(tmp_path, files, machine=machine)
    judged = [f for f in findings if f.rule.startswith("workers-over")]
    assert {f.at.line for f in judged} == {7}, judged  # admin's --workers 3, not web's
