"""Entrypoints that start the server through their own arguments: `set -- SERVER ...` in the
`case` arm the image's CMD selects, then `exec "$@"`; wrappers that hand their arguments to
another program (`su -c "exec $*"`); supervisors that start every service of a folder
(`runsvdir DIR`). Each fixture is a small repository written here; the public project named
is where the pattern was seen."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

DISPATCH = """#!/bin/sh
set -eu

case "${1:-api}" in
  api)
    set -- daphne \\
      --bind 0.0.0.0 \\
      --port 8000 \\
      shop.asgi:application
    ;;
  worker)
    set -- celery --app shop worker --loglevel INFO
    ;;
esac

exec "$@"
"""


def test_set_in_the_arm_the_cmd_selects_is_what_exec_runs(tmp_path: Path) -> None:
    """`case "${1:-api}" in api) set -- daphne ...;; worker) set -- celery ...;; esac; exec
    "$@"` under `CMD ["api"]`: the `api` arm's `set --` rebinds the arguments, the `worker`
    arm's does not (it is another run's), so the image runs daphne on 0.0.0.0:8000. Seen in
    ResearchHub/researchhub-backend."""
    root = write(
        tmp_path,
        {
            "docker/entrypoint.sh": DISPATCH,
            "Dockerfile": "FROM python:3.13-slim\nWORKDIR /app\nCOPY . .\n"
            "COPY docker/entrypoint.sh /usr/local/bin/entrypoint\n"
            'ENTRYPOINT ["/usr/local/bin/entrypoint"]\nCMD ["api"]\n',
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:5", "docker/entrypoint.sh:6"], "daphne", 1)]
    assert [s.value for s in result.apps[0].sockets] == ["0.0.0.0:8000"]


def test_runsvdir_in_a_base_stage_runs_the_services_a_later_stage_copies(
    tmp_path: Path,
) -> None:
    """`CMD ["runsvdir", "/opt/shop/services"]` in the `base` stage, inherited by `web`
    (which copies svc/ there: svc/web/run execs gunicorn) and by the last stage `worker`
    (whose service runs a job): the folder is runsvdir's, not a script missing from the build
    context; the worker's services start no server check reads, so the `web` stage is read
    as `docker build --target web` builds it, a `server-chosen` note saying so. Seen in
    ocf/ocfweb."""
    root = write(
        tmp_path,
        {
            "svc/web/run": "#!/bin/sh\nexec gunicorn -b 127.0.0.1:8080 -w 2 shop.wsgi\n",
            "wk/worker/run": "#!/bin/sh\nexec python -m shop.jobs\n",
            "Dockerfile": 'FROM python:3.12 AS base\nCMD ["runsvdir", "/opt/shop/services"]\n\n'
            "FROM base AS web\nCOPY svc/ /opt/shop/services/\n\n"
            "FROM base AS worker\nCOPY wk/ /opt/shop/services/\n",
        },
    )
    result = check_folder(root)
    assert chains(result, root) == [(["Dockerfile:2", "svc/web/run:2"], "gunicorn", 2)]
    messages = [n.message for n in result.notes if n.at.file.name == "Dockerfile"]
    assert not any("build context" in m for m in messages)
    assert any("docker build --target web" in m for m in messages)


def test_su_c_of_the_arguments_starts_whatever_command_it_is_given(tmp_path: Path) -> None:
    """`exec su -p app -c "exec $*"` (and `sh -c "$*"`) runs the script's arguments as
    `exec "$@"` does: under a CMD running gunicorn it is that gunicorn; with no command given
    it "starts whatever command it is given", never plainly no server. Seen in
    pythonitalia/pycon."""
    entrypoint = '#!/bin/sh\nset -e\nchown -R app:app /tmp\nexec su -p app -c "exec $*"\n'
    root = write(
        tmp_path,
        {
            "entrypoint.sh": entrypoint,
            "Dockerfile": "FROM python:3.12\nCOPY ./entrypoint.sh /entrypoint.sh\n"
            'ENTRYPOINT ["/entrypoint.sh"]\n'
            'CMD ["gunicorn", "-w", "5", "-b", "0.0.0.0:8000", "shop.wsgi"]\n',
        },
    )
    assert chains(check_folder(root), root) == [
        (["Dockerfile:3", "entrypoint.sh:4"], "gunicorn", 5)
    ]
    (root / "Dockerfile").unlink()
    for line in ('exec su -p app -c "exec $*"', 'exec sh -c "$*"'):
        (root / "entrypoint.sh").write_text(f"#!/bin/sh\n{line}\n")
        (note,) = [n for n in check_folder(root).notes if n.at.file.name == "entrypoint.sh"]
        assert "starts whatever command it is given" in note.message


def test_a_daemonized_uwsgi_in_a_script_nothing_starts_is_a_host_daemon(tmp_path: Path) -> None:
    """`uwsgi --http ... --daemonize LOG` in a script no file here starts: uWSGI detaches
    (no child of the shell, so no `exec` fix and no background-without-trap fault), and no
    supervisor or platform sends a daemon SIGTERM (it is stopped by its pidfile), so
    uwsgi-sigterm-reloads, whose premise is that SIGTERM, is no finding either. Seen in
    SEED-platform/seed's bin/start_uwsgi.sh."""
    root = write(
        tmp_path,
        {
            "bin/start_uwsgi.sh": "#!/bin/bash\n/usr/local/bin/uwsgi --http 127.0.0.1:8000 "
            "--module wsgi --daemonize /var/log/uwsgi.log --pidfile /tmp/uwsgi.pid -p 2\n"
        },
    )
    findings = {(f.rule, f.severity.name) for f in check_folder(root).findings}
    assert not {r for r, _ in findings} & {
        "uwsgi-sigterm-reloads",
        "entrypoint-without-exec-unlaunched",
        "background-server-without-trap",
    }


def test_the_exec_fix_of_a_server_followed_by_a_retry_block_is_shell(tmp_path: Path) -> None:
    """`cd app && gunicorn ... || { echo ...; sleep 5; launch; }` run without `exec`: the
    fix puts `exec` before gunicorn (the block then never runs, which it says), never
    `|| exec {`. Seen in rdmorganiser/rdmo-docker-compose's drun.sh."""
    script = (
        "#!/bin/bash\nlaunch() {\n"
        "  cd /app && gunicorn --bind 0.0.0.0:8080 config.wsgi:application || {\n"
        '    echo "retry"\n    sleep 5\n    launch\n  }\n}\nlaunch\n'
    )
    root = write(
        tmp_path,
        {
            "drun.sh": script,
            "Dockerfile": 'FROM python:3.12\nCOPY drun.sh /drun.sh\nCMD ["/drun.sh"]\n',
        },
    )
    (finding,) = [f for f in check_folder(root).findings if f.rule == "entrypoint-without-exec"]
    assert finding.fix.startswith(
        "cd /app && exec gunicorn --bind 0.0.0.0:8080 config.wsgi:application   (with `exec`"
    )
    assert "exec {" not in finding.fix


def test_a_shell_form_cmd_is_its_own_launch_so_uwsgis_sigterm_finding_stays_a_warning(
    tmp_path: Path,
) -> None:
    """A Dockerfile's shell-form `CMD uwsgi ...` is started by the image itself: the
    image is what a container runs, so uwsgi-sigterm-reloads there is a warning, never the
    note kept for a script no file here starts. Seen in bartTC/dpaste's Dockerfile."""
    root = write(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nRUN pip install uwsgi\nCOPY . /app\n"
            "WORKDIR /app\nCMD uwsgi --http 0.0.0.0:8000 --module app.wsgi -p 2\n"
        },
    )
    findings = {(f.rule, f.severity.name) for f in check_folder(root).findings}
    assert ("uwsgi-sigterm-reloads", "warning") in findings
    assert ("uwsgi-sigterm-reloads", "info") not in findings
