"""`check` reads nothing outside the tree it was given (servertune.check.resolve).

Each case is one way a file names another, written in `tmp_path/repo`, naming a file in
`tmp_path/outside` that holds a value (9973 workers, processes, a port) which would change the
output if it were read. The audit hook records every file opened and every folder listed:
nothing under `outside/` may be among them; the coverage note names the reference as written
and its line; and 9973 appears in none of text, JSON and SARIF. The control runs the same
files with the root widened to `tmp_path`, where the references that check follows do bring
9973 in (so each case could fail), and those it does not follow are no longer noted.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from servertune.check import check_files
from servertune.check.output import FORMATS
from servertune.check.resolve import default_root
from servertune.cli import app
from servertune.sizing import Machine

#: The value only the outside files hold.
SECRET = "9973"

GUNICORN_CONF = f"workers = {SECRET}\n"
#: A site whose read timeout (a finding, with the Procfile's gunicorn behind it) is SECRET.
NGINX_SITE = (
    "server { listen 80; location / { proxy_pass http://127.0.0.1:8000; "
    f"proxy_read_timeout {SECRET}s; }} }}\n"
)
PROCFILE = "web: gunicorn -b 127.0.0.1:8000 -t 30 app:app\n"
DEPLOYMENT = f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  template:
    spec:
      containers:
        - name: web
          image: app
          command: [gunicorn, -w, "{SECRET}", app:app]
"""


@dataclass(frozen=True)
class Case:
    """Files to write (a str is text, a Path a symlink to it under tmp_path), the file given
    to check, and the note expected: its kind, the file and line it is at, the reference."""

    files: dict[str, str | Path]
    given: str
    kind: str
    at: tuple[str, int]
    reference: str
    #: check follows this reference when it is inside the tree (the control sees SECRET).
    followed: bool = True
    #: Files given with it (the app server an nginx site proxies to).
    also: tuple[str, ...] = ()


CASES: dict[str, Case] = {
    "compose-env_file": Case(
        {
            "repo/compose.yaml": "services:\n  web:\n    image: python\n"
            "    command: gunicorn app:app\n    env_file: ../outside/secrets.env\n",
            "outside/secrets.env": f"WEB_CONCURRENCY={SECRET}\n",
        },
        "repo/compose.yaml",
        "outside-tree",
        ("repo/compose.yaml", 5),
        "../outside/secrets.env",
    ),
    "compose-dotenv-symlink": Case(
        {
            "repo/compose.yaml": "services:\n  web:\n    image: python\n"
            "    command: gunicorn -w ${WORKERS:-2} app:app\n",
            "outside/secrets.env": f"WORKERS={SECRET}\n",
            "repo/.env": Path("outside/secrets.env"),
        },
        "repo/compose.yaml",
        "outside-tree",
        ("repo/compose.yaml", 1),
        ".env",
    ),
    "compose-extends": Case(
        {
            "repo/compose.yaml": "services:\n  web:\n    extends:\n"
            "      file: ../outside/base.yaml\n      service: web\n"
            "    command: gunicorn app:app\n",
            "outside/base.yaml": f"services:\n  web:\n    command: gunicorn -w {SECRET} app:app\n",
        },
        "repo/compose.yaml",
        "outside-tree",
        ("repo/compose.yaml", 4),
        "../outside/base.yaml",
        followed=False,
    ),
    "compose-include": Case(
        {
            "repo/compose.yaml": "include:\n  - ../outside/more.yaml\nservices:\n  web:\n"
            "    command: gunicorn app:app\n",
            "outside/more.yaml": f"services:\n  w:\n    command: gunicorn -w {SECRET} app:app\n",
        },
        "repo/compose.yaml",
        "outside-tree",
        ("repo/compose.yaml", 2),
        "../outside/more.yaml",
        followed=False,
    ),
    "compose-build-context": Case(
        {
            "repo/compose.yaml": "services:\n  web:\n    build:\n      context: ../outside\n",
            "outside/Dockerfile": f"FROM python\nCMD gunicorn -w {SECRET} app:app\n",
        },
        "repo/compose.yaml",
        "outside-tree",
        ("repo/compose.yaml", 4),
        "../outside",
    ),
    "compose-build-dockerfile": Case(
        {
            "repo/compose.yaml": "services:\n  web:\n    build:\n      context: .\n"
            "      dockerfile: ../outside/Dockerfile\n",
            "outside/Dockerfile": f"FROM python\nCMD gunicorn -w {SECRET} app:app\n",
        },
        "repo/compose.yaml",
        "outside-tree",
        ("repo/compose.yaml", 5),
        "../outside/Dockerfile",
    ),
    "dockerfile-copy": Case(
        {
            "repo/Dockerfile": "FROM python\nWORKDIR /app\n"
            "COPY ../outside/gunicorn.conf.py /app/gunicorn.conf.py\n"
            "CMD gunicorn -c gunicorn.conf.py app:app\n",
            "outside/gunicorn.conf.py": GUNICORN_CONF,
        },
        "repo/Dockerfile",
        "outside-tree",
        ("repo/Dockerfile", 3),
        "../outside/gunicorn.conf.py",
    ),
    "dockerfile-add": Case(
        {
            "repo/Dockerfile": "FROM python\nWORKDIR /app\nADD ../outside/ /app/\n"
            "CMD gunicorn -c gunicorn.conf.py app:app\n",
            "outside/gunicorn.conf.py": GUNICORN_CONF,
        },
        "repo/Dockerfile",
        "outside-tree",
        ("repo/Dockerfile", 3),
        "../outside/",
    ),
    "dockerfile-walk-up": Case(
        # The Dockerfile given alone in docker/: its folder is the tree; the walk up to the
        # build context the repository's root would be stops there.
        {
            "outside/docker/Dockerfile": "FROM python\nWORKDIR /app\nCOPY . /app/\n"
            "CMD gunicorn -c gunicorn.conf.py app:app\n",
            "outside/gunicorn.conf.py": GUNICORN_CONF,
            "repo/placeholder": "",
        },
        "outside/docker/Dockerfile",
        "config-not-found",
        ("outside/docker/Dockerfile", 4),
        "gunicorn.conf.py",
    ),
    "entrypoint-script-symlink": Case(
        {
            "repo/Dockerfile": 'FROM python\nCOPY start.sh /start.sh\nENTRYPOINT ["/start.sh"]\nCMD ["gunicorn", "app:app"]\n',
            "outside/start.sh": f"#!/bin/sh\nexec gunicorn -w {SECRET} app:app\n",
            "repo/start.sh": Path("outside/start.sh"),
        },
        "repo/Dockerfile",
        "outside-tree",
        ("repo/Dockerfile", 2),
        "start.sh",
    ),
    "supervisord-include": Case(
        {
            "repo/supervisord.conf": "[program:web]\ncommand=gunicorn app:app\n"
            "[include]\nfiles = ../outside/*.conf\n",
            "outside/web.conf": f"[program:w]\ncommand=gunicorn -w {SECRET} app:app\n",
        },
        "repo/supervisord.conf",
        "outside-tree",
        ("repo/supervisord.conf", 4),
        "../outside/*.conf",
        followed=False,
    ),
    "supervisord-command-config": Case(
        {
            "repo/supervisord.conf": "[program:web]\n"
            "command=gunicorn -c ../outside/gunicorn.conf.py app:app\n",
            "outside/gunicorn.conf.py": GUNICORN_CONF,
        },
        "repo/supervisord.conf",
        "outside-tree",
        ("repo/supervisord.conf", 2),
        "../outside/gunicorn.conf.py",
    ),
    "uwsgi-ini": Case(
        {
            "repo/app.ini": "[uwsgi]\nmodule = app\nini = ../outside/base.ini\n",
            "outside/base.ini": f"[uwsgi]\nprocesses = {SECRET}\n",
        },
        "repo/app.ini",
        "outside-tree",
        ("repo/app.ini", 3),
        "../outside/base.ini",
    ),
    "uwsgi-at-file": Case(
        {
            "repo/app.ini": "[uwsgi]\nmodule = app\nprocesses = @(../outside/n)\n",
            "outside/n": f"{SECRET}\n",
        },
        "repo/app.ini",
        "outside-tree",
        ("repo/app.ini", 3),
        "../outside/n",
    ),
    "uwsgi-include": Case(
        {
            "repo/app.ini": "[uwsgi]\nmodule = app\ninclude = ../outside/base.ini\n",
            "outside/base.ini": f"[uwsgi]\nprocesses = {SECRET}\n",
        },
        "repo/app.ini",
        "outside-tree",
        ("repo/app.ini", 3),
        "../outside/base.ini",
        followed=False,
    ),
    "uwsgi-for-glob": Case(
        {
            "repo/app.ini": "[uwsgi]\nmodule = app\nfor-glob = ../outside/*.ini\n"
            "ini = %(_)\nendfor =\n",
            "outside/base.ini": f"[uwsgi]\nprocesses = {SECRET}\n",
        },
        "repo/app.ini",
        "outside-tree",
        ("repo/app.ini", 3),
        "../outside/*.ini",
        followed=False,
    ),
    "uwsgi-if-exists": Case(
        # The value is the tree's; whether it applies would be the outside folder's to say.
        {
            "repo/app.ini": "[uwsgi]\nmodule = app\nif-exists = ../outside/flag\n"
            f"processes = {SECRET}\nendif =\n",
            "outside/flag": "",
        },
        "repo/app.ini",
        "outside-tree",
        ("repo/app.ini", 3),
        "../outside/flag",
    ),
    "uwsgi-symlink": Case(
        {
            "repo/app.ini": "[uwsgi]\nmodule = app\nini = base.ini\n",
            "outside/base.ini": f"[uwsgi]\nprocesses = {SECRET}\n",
            "repo/base.ini": Path("outside/base.ini"),
        },
        "repo/app.ini",
        "outside-tree",
        ("repo/app.ini", 3),
        "base.ini",
    ),
    "uwsgi-ini-from-script": Case(
        {
            "repo/start.sh": "#!/bin/sh\nexec uwsgi --ini ../outside/app.ini\n",
            "outside/app.ini": f"[uwsgi]\nmodule = app\nprocesses = {SECRET}\n",
        },
        "repo/start.sh",
        "outside-tree",
        ("repo/start.sh", 2),
        "../outside/app.ini",
    ),
    "nginx-include": Case(
        {
            "repo/nginx.conf": "events {}\nhttp {\n    include ../outside/site.conf;\n}\n",
            "outside/site.conf": NGINX_SITE,
            "repo/Procfile": PROCFILE,
        },
        "repo/nginx.conf",
        "outside-tree",
        ("repo/nginx.conf", 3),
        "../outside/site.conf",
        also=("repo/Procfile",),
    ),
    "nginx-include-glob": Case(
        {
            "repo/nginx.conf": "events {}\nhttp {\n    include ../outside/*.conf;\n}\n",
            "outside/site.conf": NGINX_SITE,
            "repo/Procfile": PROCFILE,
        },
        "repo/nginx.conf",
        "outside-tree",
        ("repo/nginx.conf", 3),
        "../outside/*.conf",
        also=("repo/Procfile",),
    ),
    "nginx-absolute-include": Case(
        {
            "repo/nginx.conf": "events {}\nhttp {\n    include {tmp}/outside/site.conf;\n}\n",
            "outside/site.conf": NGINX_SITE,
            "repo/Procfile": PROCFILE,
        },
        "repo/nginx.conf",
        "include-not-found",
        ("repo/nginx.conf", 3),
        "{tmp}/outside/site.conf",
        also=("repo/Procfile",),
    ),
    "nginx-symlink": Case(
        {
            "repo/nginx.conf": "events {}\nhttp {\n    include conf.d/*.conf;\n}\n",
            "outside/site.conf": NGINX_SITE,
            "repo/Procfile": PROCFILE,
            "repo/conf.d/link.conf": Path("outside/site.conf"),
        },
        "repo/nginx.conf",
        "outside-tree",
        ("repo/nginx.conf", 3),
        "conf.d/*.conf",
        also=("repo/Procfile",),
    ),
    "nginx-glob-through-symlinked-folder": Case(
        {
            "repo/nginx.conf": "events {}\nhttp {\n    include sites/*/*.conf;\n}\n",
            "outside/site.conf": NGINX_SITE,
            "repo/sites/ok/empty.conf": "# nothing\n",
            "repo/sites/elsewhere": Path("outside"),
            "repo/Procfile": PROCFILE,
        },
        "repo/nginx.conf",
        "outside-tree",
        ("repo/nginx.conf", 3),
        "sites/*/*.conf",
        also=("repo/Procfile",),
    ),
    "gunicorn-c-in-script": Case(
        {
            "repo/start.sh": "#!/bin/sh\nexec gunicorn -c ../outside/gunicorn.conf.py app:app\n",
            "outside/gunicorn.conf.py": GUNICORN_CONF,
        },
        "repo/start.sh",
        "outside-tree",
        ("repo/start.sh", 2),
        "../outside/gunicorn.conf.py",
    ),
    "gunicorn-config-long-flag": Case(
        {
            "repo/Procfile": "web: gunicorn --config=../outside/gunicorn.conf.py app:app\n",
            "outside/gunicorn.conf.py": GUNICORN_CONF,
        },
        "repo/Procfile",
        "outside-tree",
        ("repo/Procfile", 1),
        "../outside/gunicorn.conf.py",
    ),
    "gunicorn-python-config": Case(
        # `python:module` is imported from the server's path: check never imports it.
        {
            "repo/Procfile": "web: gunicorn -c python:outside_conf app:app\n",
            "outside/outside_conf.py": GUNICORN_CONF,
        },
        "repo/Procfile",
        "config-not-found",
        ("repo/Procfile", 1),
        "python:outside_conf",
        followed=False,
    ),
    "procfile-config": Case(
        {
            "repo/Procfile": "release: ./migrate\nweb: gunicorn -c ../outside/g.py app:app\n",
            "outside/g.py": GUNICORN_CONF,
        },
        "repo/Procfile",
        "outside-tree",
        ("repo/Procfile", 2),
        "../outside/g.py",
    ),
    "kustomization-resources": Case(
        {
            "repo/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\n"
            "kind: Kustomization\nresources:\n  - ../outside/deploy.yaml\n",
            "outside/deploy.yaml": DEPLOYMENT,
        },
        "repo/kustomization.yaml",
        "outside-tree",
        ("repo/kustomization.yaml", 4),
        "../outside/deploy.yaml",
        followed=False,
    ),
    "kustomization-patches": Case(
        {
            "repo/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\n"
            "kind: Kustomization\npatches:\n  - path: ../outside/patch.yaml\n",
            "outside/patch.yaml": DEPLOYMENT,
        },
        "repo/kustomization.yaml",
        "outside-tree",
        ("repo/kustomization.yaml", 4),
        "../outside/patch.yaml",
        followed=False,
    ),
}


def _write(tmp_path: Path, case: Case) -> Path:
    for name, content in case.files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            target.symlink_to(tmp_path / content)
        else:
            target.write_text(content.replace("{tmp}", str(tmp_path)))
    return tmp_path / case.given


#: Every path opened or listed while `_OPENED` is a list (the audit hook is for this module's
#: runs only; hooks cannot be removed, so it stays installed and idle).
_OPENED: list[str] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _OPENED is None or event not in ("open", "os.listdir", "os.scandir", "glob.glob"):
        return
    if args and isinstance(args[0], str | bytes | os.PathLike):
        _OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)


def _opened_during(run: Any) -> tuple[list[str], Any]:
    global _OPENED
    _OPENED = []
    try:
        result = run()
    finally:
        opened, _OPENED = _OPENED, None
    return [os.path.realpath(p) for p in opened], result


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> tuple[str, Case]:
    return request.param, CASES[request.param]


def _root_for(name: str, tmp_path: Path) -> tuple[Path, Path]:
    """The tree check is given (repo/, or for the walk-up case the Dockerfile's folder) and the
    folder outside it that holds SECRET."""
    if name == "dockerfile-walk-up":
        return tmp_path / "outside" / "docker", tmp_path / "outside" / "gunicorn.conf.py"
    return tmp_path / "repo", tmp_path / "outside"


def test_nothing_outside_the_tree_is_read_or_printed(
    case: tuple[str, Case], tmp_path: Path
) -> None:
    """Each way a file names another: the outside file is never opened, a note names the
    reference and its line, and its value is in none of text, JSON and SARIF."""
    name, spec = case
    given = _write(tmp_path, spec)
    _, outside = _root_for(name, tmp_path)
    extra = [str(tmp_path / a) for a in spec.also]
    outputs: dict[str, str] = {}
    for fmt in ("text", "json", "sarif"):
        opened, result = _opened_during(
            lambda fmt=fmt: CliRunner().invoke(
                app,
                ["check", str(given), *extra, "--format", fmt, "--cores", "2"],
            )
        )
        assert result.exit_code in (0, 1), result.output
        read_outside = [p for p in opened if p == str(outside) or p.startswith(f"{outside}/")]
        assert read_outside == [], read_outside
        assert SECRET not in result.output, (fmt, result.output)
        outputs[fmt] = result.output
    # One reference is one note, however many lookups went through it.
    assert "more lines" not in outputs["text"], outputs["text"]
    file, line = spec.at
    reference = spec.reference.replace("{tmp}", str(tmp_path))
    where = f"{tmp_path / file}:{line}: [{spec.kind}]"
    assert any(where in row and reference in row for row in outputs["text"].splitlines()), outputs[
        "text"
    ]
    coverage = json.loads(outputs["json"])["coverage"]
    assert any(
        (c["kind"], c["file"], c["line"]) == (spec.kind, str(tmp_path / file), line)
        and reference in c["message"]
        for c in coverage
    ), coverage
    notified = json.loads(outputs["sarif"])["runs"][0]["invocations"][0][
        "toolExecutionNotifications"
    ]
    assert any(
        n["descriptor"]["id"] == spec.kind
        and n["locations"][0]["physicalLocation"]["region"]["startLine"] == line
        and reference in n["message"]["text"]
        for n in notified
    ), notified


def test_the_same_reference_is_followed_when_the_tree_holds_it(
    case: tuple[str, Case], tmp_path: Path
) -> None:
    """Control: with the root widened to tmp_path the reference is inside; what check follows
    brings the outside value in (the case above could fail), what it does not follow is no
    longer said to be outside."""
    _, spec = case
    given = _write(tmp_path, spec)
    given_too = [tmp_path / a for a in spec.also]
    result = check_files([given, *given_too], machine=Machine(cores=2), root=tmp_path)
    report = FORMATS["json"](result)
    if spec.followed:
        assert SECRET in report, report
    assert not any(n.kind == "outside-tree" for n in result.notes), result.notes


def test_the_tree_is_the_files_folder_or_their_repository_close_above(tmp_path: Path) -> None:
    """The default root: the files' common folder (an nginx site file's prefix above
    `sites-available/`); the repository holding it when its `.git` is at most two levels up,
    never one further up (a home folder kept in git)."""
    files = [tmp_path / "a" / "b" / "c.yaml", tmp_path / "a" / "d" / "e.yaml"]
    assert default_root(files) == tmp_path / "a"
    assert default_root([tmp_path / "etc" / "sites-available" / "app"]) == tmp_path / "etc"
    (tmp_path / "repo" / "contrib" / "container").mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    inner = tmp_path / "repo" / "contrib" / "container" / "Dockerfile"
    assert default_root([inner]) == tmp_path / "repo"
    (tmp_path / ".git").mkdir()
    deep = tmp_path / "p" / "q" / "r" / "Dockerfile"
    assert default_root([deep]) == tmp_path / "p" / "q" / "r"


def test_a_file_given_outside_the_others_widens_the_tree(tmp_path: Path) -> None:
    """A file the user names is the user's choice: giving the outside file too makes the common
    folder take it in, and the reference is then read (no outside-tree note)."""
    given = _write(tmp_path, CASES["uwsgi-ini"])
    result = CliRunner().invoke(
        app, ["check", str(given), str(tmp_path / "outside" / "base.ini"), "--cores", "2"]
    )
    assert "[outside-tree]" not in result.output
    assert SECRET in result.output


def test_the_users_own_env_file_is_read_wherever_it_is(tmp_path: Path) -> None:
    """`--env-file` is the user's choice, read wherever it is; the compose file's own
    reference to the same file is still not followed, and said so."""
    given = _write(tmp_path, CASES["compose-env_file"])
    env_file = tmp_path / "outside" / "secrets.env"
    result = CliRunner().invoke(
        app, ["check", str(given), "--env-file", str(env_file), "--cores", "2"]
    )
    assert SECRET in result.output
    assert f"{given}:5: [outside-tree] env_file '../outside/secrets.env'" in result.output
