"""Upstart jobs (`/etc/init/*.conf`) are launchers: their `exec` stanza or `script` block is the
command that starts the server, and Upstart's `kill timeout` is the stop wait."""

from __future__ import annotations

from pathlib import Path

from tests.test_check_launch_chain import chains, check_folder

_JOB = """\
description "app"
start on runlevel [2345]
stop on runlevel [06]
respawn
env APP_WORKERS=3
chdir /srv/app
{main}
"""


def test_an_upstart_exec_stanza_starts_the_server_with_upstarts_stop_wait(tmp_path: Path) -> None:
    """`exec gunicorn ...` in an Upstart job is the launch, at the `exec` line, with the job's
    `env` values and Upstart's 5 s `kill timeout` as the stop wait (init(5))."""
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "app.conf").write_text(
        _JOB.format(main="exec gunicorn -w $APP_WORKERS --graceful-timeout 20 app.wsgi")
    )
    found = chains(tmp_path)
    assert [c for c, _, _ in found] == [["deploy/app.conf"]]
    launch = found[0][2]
    assert launch.chain[0].line == 7
    result = check_folder(tmp_path)
    app = next(a for a in result.apps if a.kind == "gunicorn")
    assert app.workers.value == 3
    assert app.stop_wait is not None
    assert app.stop_wait.value == 5.0
    assert any(f.rule == "stop-wait-below-graceful" for f in result.findings)


def test_an_upstart_script_block_is_read_as_the_shell_script_it_is(tmp_path: Path) -> None:
    """The lines between `script` and `end script` are a shell script the job runs: the
    server it starts is the launch, while a `pre-start script` block starts nothing."""
    (tmp_path / "init").mkdir()
    (tmp_path / "init" / "web.conf").write_text(
        _JOB.format(
            main="pre-start script\n  mkdir -p /run/app\nend script\n"
            "kill timeout 60\n"
            "script\n  . /srv/app/venv/bin/activate\n"
            "  exec uvicorn --workers 2 app:app\nend script"
        )
    )
    found = chains(tmp_path)
    assert [c for c, _, _ in found] == [["init/web.conf"]]
    app = next(a for a in check_folder(tmp_path).apps if a.kind == "uvicorn")
    assert app.stop_wait is not None
    assert app.stop_wait.value == 60.0


def test_an_upstart_emperor_runs_the_vassal_an_ansible_role_links_into_its_folder(
    tmp_path: Path,
) -> None:
    """`exec uwsgi --emperor /etc/uwsgi` in an Upstart job the role copies runs the ini the
    role's template task installs at `{{ app_dir }}uwsgi.ini`, which a `file: state=link`
    task links as `/etc/uwsgi/app.ini`: the ini is the launch the job starts (seen in
    Cadasta/cadasta-platform's provisioning role)."""
    role = tmp_path / "provision" / "roles" / "web"
    for folder in ("tasks", "files", "templates"):
        (role / folder).mkdir(parents=True)
    (role / "files" / "uwsgi.conf").write_text(
        'description "uWSGI Emperor"\nstart on runlevel [2345]\nrespawn\n\n'
        "exec uwsgi --emperor /etc/uwsgi\n"
    )
    (role / "templates" / "uwsgi.ini").write_text(
        "[uwsgi]\nmodule = app.wsgi\nmaster = true\nprocesses = 4\nsocket = {{ app_dir }}app.sock\n"
    )
    (role / "tasks" / "main.yml").write_text(
        "- copy: src=uwsgi.conf dest=/etc/init/uwsgi.conf\n"
        '- template: src=uwsgi.ini dest="{{ app_dir }}uwsgi.ini"\n'
        "- file: path=/etc/uwsgi/app.ini\n"
        '        src="{{ app_dir }}uwsgi.ini"\n'
        "        state=link\n"
    )
    found = chains(tmp_path)
    assert [c for c, _, _ in found] == [
        ["provision/roles/web/files/uwsgi.conf", "provision/roles/web/templates/uwsgi.ini"]
    ]


def test_a_config_the_job_names_on_the_host_is_the_checkouts_file(tmp_path: Path) -> None:
    """`exec uwsgi --ini /var/www/portal/deploy/uwsgi.ini` names the checkout's own
    `deploy/uwsgi.ini` on the host: the launch reads it, as a systemd unit's command line does
    (seen in HamWAN/hamwan-portal's `deploy/uwsgi.conf`)."""
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "uwsgi.ini").write_text("[uwsgi]\nmodule = app.wsgi\nprocesses = 4\n")
    (tmp_path / "deploy" / "uwsgi.conf").write_text(
        'description "uwsgi portal"\nstart on runlevel [2345]\nstop on runlevel [06]\n\n'
        "exec uwsgi --ini /var/www/portal/deploy/uwsgi.ini\n"
    )
    found = chains(tmp_path)
    assert [c for c, _, _ in found] == [["deploy/uwsgi.conf", "deploy/uwsgi.ini"]]
