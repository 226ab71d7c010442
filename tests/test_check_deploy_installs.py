"""A file a deploy tool of the repository installs at another path (an ansible `template:` or
`copy:` task, a salt `file.managed` state) is that repository file for a command line naming
the installed path, as a Dockerfile's COPY is. Each fixture is a small repository written here
for the cause it pins."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_support import chains, check_folder, write

_UNIT = """[Unit]
Description=the shop

[Service]
ExecStart=/srv/shop/venv/bin/gunicorn --config /etc/shop.d/gunicorn.py shop.wsgi

[Install]
WantedBy=multi-user.target
"""

_CONFIG = 'bind = "127.0.0.1:8000"\nworkers = 5\ntimeout = 60\n'


@pytest.mark.parametrize(
    ("task", "linked"),
    [
        ("template: src=shop-gunicorn.py.j2 dest=/etc/shop.d/gunicorn.py", True),
        (
            (
                "ansible.builtin.template:\n    src: shop-gunicorn.py.j2\n"
                '    dest: "{{ conf_dir }}/gunicorn.py"'
            ),
            True,
        ),
        ("template:\n    src: shop-gunicorn.py.j2\n    dest: /etc/shop.d/", False),
        ('template:\n    src: "{{ item }}"\n    dest: /etc/shop.d/gunicorn.py', False),
        ("template: src=shop-gunicorn.py.j2 dest=/etc/other.d/gunicorn.py", False),
    ],
)
def test_a_config_an_ansible_task_installs_is_what_the_unit_names(
    tmp_path: Path, task: str, linked: bool
) -> None:
    """`template: src=gunicorn.py.j2 dest=/etc/mmw.d/gunicorn.py` in a role's tasks and the
    unit's `gunicorn --config /etc/mmw.d/gunicorn.py` (seen in WikiWatershed/model-my-watershed):
    the unit's gunicorn reads the role's template (its `templates/` folder), in the key=value
    form or the mapping form, with a `{{ var }}` the role's defaults give a literal. A loop's
    `{{ item }}`, a folder destination under another name or another path install nothing the
    unit names."""
    root = write(
        tmp_path,
        {
            "deploy/roles/shop/defaults/main.yml": "conf_dir: /etc/shop.d\n",
            "deploy/roles/shop/tasks/main.yml": f"- name: install the config\n  {task}\n"
            "- name: install the unit\n  copy:\n    src: shop.service\n"
            "    dest: /etc/systemd/system/shop.service\n",
            "deploy/roles/shop/templates/shop-gunicorn.py.j2": _CONFIG,
            "deploy/roles/shop/files/shop.service": _UNIT,
        },
    )
    found = [c for c in chains(check_folder(root), root) if c[0][0].endswith("shop.service:5")]
    workers = 5 if linked else 1
    assert [(c[1], c[2]) for c in found] == [("gunicorn", workers)]


def test_a_playbook_copy_from_its_own_folder_is_installed_there(tmp_path: Path) -> None:
    """A playbook's own task (`ansible.builtin.copy` with `src: "{{ playbook_dir }}/..."`,
    seen in hotosm/raw-data-api) installs the file at `dest` too; a `remote_src` copy names
    the host's own file, not the repository's, and installs nothing here."""
    play = """- hosts: web
  tasks:
    - name: config
      ansible.builtin.copy:
        src: "{{ playbook_dir }}/conf/shop-gunicorn.py"
        dest: /etc/shop.d/gunicorn.py
    - name: unit
      ansible.builtin.copy:
        src: shop.service
        dest: /etc/systemd/system/shop.service
        remote_src: yes
"""
    root = write(
        tmp_path,
        {
            "infra/setup.yml": play,
            "infra/conf/shop-gunicorn.py": _CONFIG,
            "infra/files/shop.service": _UNIT,
        },
    )
    found = [c for c in chains(check_folder(root), root) if c[0][0].endswith("shop.service:5")]
    assert [(c[1], c[2]) for c in found] == [("gunicorn", 5)]


def test_a_salt_managed_file_is_what_the_unit_names(tmp_path: Path) -> None:
    """A salt state `file.managed` with `- name: /etc/shop.d/gunicorn.py` and `- source:
    salt://shop/gunicorn-conf.py` (the shape of tethysplatform/tethys's docker/salt states)
    installs the file under the salt root (the folder of `top.sls`) at that path; the state's
    Jinja statement lines are left out, not a reason to drop the file."""
    states = """{% set conf = '/etc/shop.d' %}
/etc/shop.d/gunicorn.py:
  file.managed:
    - source: salt://shop/gunicorn-conf.py
    - makedirs: True
shop_unit:
  file.managed:
    - name: /etc/systemd/system/shop.service
    - source: salt://shop/shop.service
"""
    root = write(
        tmp_path,
        {
            "salt/top.sls": "base:\n  '*':\n    - shop\n",
            "salt/shop.sls": states,
            "salt/shop/gunicorn-conf.py": _CONFIG,
            "salt/shop/shop.service": _UNIT,
        },
    )
    found = [c for c in chains(check_folder(root), root) if c[0][0].endswith("shop.service:5")]
    assert [(c[1], c[2]) for c in found] == [("gunicorn", 5)]


@pytest.mark.parametrize(("dest", "production"), [("shop.service", True), ("shop.conf", False)])
def test_a_unit_template_a_playbook_installs_is_a_hosts_service(
    tmp_path: Path, dest: str, production: bool
) -> None:
    """A role's `templates/gunicorn.service.j2` that its task installs at
    `/etc/systemd/system/gunicorn.service` (seen in picoCTF/picoCTF) is a host's service, a
    deployment's launch like a `.service` file: its `--reload` is judged as production's and
    the finding names the installed unit. Installed under another name, it is not known to be
    a unit."""
    unit = _UNIT.replace("/srv/shop/venv", "{{ venv }}").replace(
        "--config /etc/shop.d/gunicorn.py", "--reload -b 127.0.0.1:8000"
    )
    root = write(
        tmp_path,
        {
            "roles/shop/tasks/main.yml": "- name: unit\n  template:\n"
            f"    src: shop.service.j2\n    dest: /etc/systemd/system/{dest}\n",
            "roles/shop/templates/shop.service.j2": unit,
        },
    )
    found = [f.message for f in check_folder(root).findings if f.rule == "reloader-in-production"]
    assert found == (
        [
            (
                "gunicorn --reload is the only launch of the systemd unit shop.service (installed "
                "from shop.service.j2): the reloader watches the files and restarts the workers "
                "on every change, a development server; a production run serves with it and "
                "spends CPU on the watch"
            )
        ]
        if production
        else []
    )
