"""An image built FROM a well-known base image whose own CMD starts the server (tiangolo's
uvicorn-gunicorn, meinheld-gunicorn and uwsgi-nginx families) runs that documented command:
check follows it to the server, joins the file the repository COPYs where the base image's
start script reads its config, applies the image's and compose's ENV to it, and says in the
chain that the command is the base image's (the FROM line). An unknown base image is still
"not followed". Each repository here is written by the test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import servertune
from servertune.check import check_files
from servertune.check.audit import CheckResult
from servertune.check.discover import discover
from servertune.check.graph import describe, launches
from servertune.check.model import AppServer
from servertune.machine import Machine
from tests.folder_support import write

#: The machine the findings are judged for, whatever machine runs the tests.
MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)

#: The FastAPI app the images copy to /app/app/main.py.
APP = "from fastapi import FastAPI\n\napp = FastAPI()\n"


def check(root: Path) -> CheckResult:
    walk = discover(root)
    return check_files(list(walk.files), machine=MACHINE, discovered=[walk], root=root, env={})


def served(result: CheckResult) -> list[AppServer]:
    return [launch.app for launch in launches(result.apps, result.links, result.balancer_links)]


def chains(result: CheckResult, root: Path) -> list[list[str]]:
    return [
        [f"{at.file.relative_to(root).as_posix()}:{at.line}" for at in launch.chain]
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]


def unfollowed(result: CheckResult) -> list[str]:
    return [n.message for n in result.notes if n.kind == "not-followed"]


def test_an_image_from_uvicorn_gunicorn_fastapi_with_no_cmd_runs_its_gunicorn(
    tmp_path: Path,
) -> None:
    """A Dockerfile FROM tiangolo/uvicorn-gunicorn-fastapi that only sets ENV and COPYs the
    app (seen in mindee/doctr's api/Dockerfile, ExpDev07/coronavirus-tracker-api) runs the
    base image's /start.sh: gunicorn with uvicorn workers, on the base's 0.0.0.0:80, the
    launch shown at the FROM line; nothing is said "not followed"."""
    root = write(
        tmp_path / "api",
        {
            "Dockerfile": "FROM tiangolo/uvicorn-gunicorn-fastapi:python3.11-slim\n"
            "ENV VARIABLE_NAME APP\nCOPY ./app /app/app\nEXPOSE 80\n",
            "app/main.py": APP,
        },
    )
    result = check(root)
    (app,) = served(result)
    assert app.kind == "gunicorn"
    assert app.worker_class is not None
    assert app.worker_class.value == "uvicorn.workers.UvicornWorker"
    assert [s.value for s in app.sockets] == ["0.0.0.0:80"]
    assert "workers" in app.unknown  # the image's config counts the cores it runs on
    assert chains(result, root) == [["Dockerfile:1"]]
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert "Dockerfile:1 (inherited from tiangolo/uvicorn-gunicorn: /start.sh)" in describe(launch)
    assert unfollowed(result) == []


def test_an_unknown_base_image_is_still_not_followed_beside_a_known_one(tmp_path: Path) -> None:
    """Of two images, the one FROM tiangolo/uvicorn-gunicorn starts its gunicorn; the one FROM
    an owner's look-alike image (not declared as well known) starts nothing check can follow:
    it says so, and invents no launch for it."""
    root = write(
        tmp_path / "api",
        {
            "Dockerfile": "FROM tiangolo/uvicorn-gunicorn:python3.11\nCOPY ./app /app/app\n",
            "other/Dockerfile": "FROM acme/uvicorn-gunicorn-fastapi:1.0\nCOPY . /app/app\n",
            "app/main.py": APP,
        },
    )
    result = check(root)
    assert chains(result, root) == [["Dockerfile:1"]]
    assert any("acme/uvicorn-gunicorn-fastapi" in m for m in unfollowed(result))


def test_the_gunicorn_conf_copied_to_app_is_the_launch_config(tmp_path: Path) -> None:
    """start.sh reads /app/gunicorn_conf.py when the image holds it: the repository's
    ./gunicorn_conf.py COPYed there is the launch's config (its bind and workers)."""
    root = write(
        tmp_path / "api",
        {
            "Dockerfile": "FROM tiangolo/uvicorn-gunicorn:python3.11\n"
            "COPY ./gunicorn_conf.py /app/gunicorn_conf.py\nCOPY ./app /app/app\n",
            "gunicorn_conf.py": 'bind = "0.0.0.0:8080"\nworkers = 3\n',
            "app/main.py": APP,
        },
    )
    result = check(root)
    (app,) = served(result)
    assert app.kind == "gunicorn"
    assert chains(result, root) == [["Dockerfile:1", "gunicorn_conf.py:1"]]
    assert app.workers.value == 3
    assert [s.value for s in app.sockets] == ["0.0.0.0:8080"]


def test_a_compose_command_running_the_base_images_start_script_starts_gunicorn(
    tmp_path: Path,
) -> None:
    """A compose service built FROM a copy of the uvicorn-gunicorn image (its tag from an ARG)
    whose command waits for the database and then runs `/start.sh` (seen in
    NASA-IMPACT/veda-backend) starts the base image's gunicorn, on the PORT and with the WEB_CONCURRENCY its environment sets."""
    root = write(
        tmp_path / "stack",
        {
            "docker-compose.yml": "services:\n  api:\n    build:\n      context: .\n"
            "      dockerfile: Dockerfile.api\n    environment:\n      - PORT=8081\n"
            "      - WEB_CONCURRENCY=3\n"
            "    command: bash -c 'sleep 2 && /start.sh'\n",
            "Dockerfile.api": "ARG PYTHON_VERSION=3.12\n"
            "FROM ghcr.io/vincentsarago/uvicorn-gunicorn:${PYTHON_VERSION}\nCOPY ./app /app/app\n",
            "app/main.py": APP,
        },
    )
    result = check(root)
    (app,) = served(result)
    assert app.kind == "gunicorn"
    assert [s.value for s in app.sockets] == ["0.0.0.0:8081"]
    assert app.workers.value == 3
    assert chains(result, root)[0][-1] == "Dockerfile.api:2"  # the FROM line


def test_meinheld_gunicorn_runs_gunicorn_with_meinheld_workers(tmp_path: Path) -> None:
    """tiangolo/meinheld-gunicorn-flask's /start.sh runs gunicorn with meinheld's worker."""
    root = write(
        tmp_path / "site",
        {
            "Dockerfile": "FROM tiangolo/meinheld-gunicorn-flask:python3.9\nCOPY ./app /app\n",
            "app/main.py": "from flask import Flask\n\napp = Flask(__name__)\n",
        },
    )
    (app,) = served(check(root))
    assert app.kind == "gunicorn"
    assert app.worker_class is not None
    assert app.worker_class.value == "egg:meinheld#gunicorn_worker"


def test_uwsgi_nginx_flask_runs_uwsgi_with_the_ini_copied_to_app(tmp_path: Path) -> None:
    """tiangolo/uwsgi-nginx-flask runs uWSGI (under supervisord) with the ini its UWSGI_INI
    names, /app/uwsgi.ini: the repository's uwsgi.ini COPYed there is the launch's config.
    Its `processes = 4` does not decide the workers: uWSGI reads its UWSGI_* variables in the
    environment's order, and the image's ENV sets UWSGI_CHEAPER=2 and UWSGI_PROCESSES=16
    after UWSGI_INI, so they override the ini (measured with uWSGI 2.0: UWSGI_INI of
    `processes = 1` then UWSGI_PROCESSES=3 spawns 3 workers). This test expected 4 before
    that order was measured: up to 16 workers, 2 at idle, as the image documents."""
    root = write(
        tmp_path / "site",
        {
            "Dockerfile": "FROM tiangolo/uwsgi-nginx-flask:python3.12\nCOPY ./app /app\n",
            "app/uwsgi.ini": "[uwsgi]\nmodule = main\ncallable = app\nprocesses = 4\n",
            "app/main.py": "from flask import Flask\n\napp = Flask(__name__)\n",
        },
    )
    result = check(root)
    (app,) = served(result)
    assert app.kind == "uwsgi"
    assert chains(result, root)[0][0] == "Dockerfile:1"
    assert app.config_file is not None
    assert app.config_file.file == root / "app/uwsgi.ini"
    assert app.workers.value == 16
    assert app.cheaper is not None
    assert app.cheaper.value == 2


def test_uwsgi_processes_set_by_the_image_decide_the_uwsgi_nginx_workers(tmp_path: Path) -> None:
    """`ENV UWSGI_PROCESSES=4` in an image FROM tiangolo/uwsgi-nginx replaces the base's 16
    (the image's documented knob), so the launch runs 4 workers whatever /app/uwsgi.ini says."""
    root = write(
        tmp_path / "site",
        {
            "Dockerfile": "FROM tiangolo/uwsgi-nginx:python3.12\nENV UWSGI_PROCESSES=4\n"
            "COPY ./app /app\n",
            "app/uwsgi.ini": "[uwsgi]\nmodule = main\ncallable = app\nprocesses = 1\n",
            "app/main.py": "def app(environ, start_response):\n    return []\n",
        },
    )
    (app,) = served(check(root))
    assert app.workers.value == 4


#: Checks the folder in argv[1] and prints each launch's workers, in a fresh interpreter (its
#: own hash seed).
_WORKERS_IN_A_FRESH_PROCESS = """
import sys
from pathlib import Path
from servertune.check import check_files
from servertune.check.discover import discover
from servertune.check.graph import launches
from servertune.machine import Machine

root = Path(sys.argv[1])
walk = discover(root)
machine = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)
result = check_files(list(walk.files), machine=machine, discovered=[walk], root=root, env={})
print([launch.app.workers.value for launch in launches(result.apps, result.links)])
"""


def test_an_entrypoint_script_with_an_if_block_keeps_the_images_uwsgi_variables_in_order(
    tmp_path: Path,
) -> None:
    """The image's environment passes through its ENTRYPOINT script (`if [ -f ... ]; then ...
    fi`, a branch the files do not decide, then `exec "$@"`) to the base's /start.sh in the
    order the image sets it: UWSGI_INI before the base's UWSGI_PROCESSES=16, so the image runs
    16 workers whatever the ini's `processes = 1` says, and no one-process-one-thread info.
    Before, the block's end rebuilt the variables in a set's order, which the hash seed
    changes, so some runs read the ini last and said 1 x 1; hence each seed in a fresh
    interpreter (seen in Sage-Bionetworks/schematic's schematic_api/Dockerfile)."""
    root = write(
        tmp_path / "api",
        {
            "Dockerfile": "FROM tiangolo/uwsgi-nginx-flask:python3.10\n"
            "ENV UWSGI_INI=/app/uwsgi.ini\nCOPY ./uwsgi.ini /app/uwsgi.ini\n"
            "COPY ./entrypoint.sh /entrypoint2.sh\n"
            'ENTRYPOINT ["/entrypoint2.sh"]\nCMD ["/start.sh"]\n',
            "entrypoint.sh": "#!/bin/sh\nset -e\nif [ -f /app/nginx.conf ]; then\n"
            '    cp /app/nginx.conf /etc/nginx/nginx.conf\nfi\nexec "$@"\n',
            "uwsgi.ini": "[uwsgi]\nmodule = main\ncallable = app\nprocesses = 1\nthreads = 1\n",
            "main.py": "from flask import Flask\n\napp = Flask(__name__)\n",
        },
    )
    result = check(root)
    (app,) = served(result)
    assert app.workers.value == 16
    assert not [f for f in result.findings if f.rule == "one-process-one-thread"]
    source = str(Path(servertune.__file__).resolve().parents[1])
    for seed in range(6):
        env = {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": source}
        run = subprocess.run(
            [sys.executable, "-c", _WORKERS_IN_A_FRESH_PROCESS, str(root)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        assert run.stdout.strip() == "[16]", f"PYTHONHASHSEED={seed}"


def test_the_uwsgi_nginx_images_own_ini_gives_the_socket_its_nginx_passes_to(
    tmp_path: Path,
) -> None:
    """The uwsgi-nginx images run `uwsgi --ini /etc/uwsgi/uwsgi.ini`, their own ini, read after
    the app's: `socket = /tmp/uwsgi.sock` and the hook that makes SIGTERM drain the workers. So
    the repository's nginx server COPYed into /etc/nginx/conf.d with `uwsgi_pass
    unix:///tmp/uwsgi.sock` is the launch's front, and the app ini's `die-on-term = true` is
    no cut-requests warning: the image's hook makes SIGTERM graceful (seen in
    Sage-Bionetworks/schematic's schematic_api/Dockerfile and certificate.conf)."""
    root = write(
        tmp_path / "site",
        {
            "Dockerfile": "FROM tiangolo/uwsgi-nginx-flask:python3.10\n"
            "COPY ./certificate.conf /etc/nginx/conf.d/\nCOPY ./uwsgi.ini /app/\n"
            "COPY ./main.py /app/\nEXPOSE 443\n",
            "certificate.conf": "server {\n    listen 443 ssl;\n    location / {\n"
            "        include uwsgi_params;\n        uwsgi_pass unix:///tmp/uwsgi.sock;\n"
            "    }\n}\n",
            "uwsgi.ini": "[uwsgi]\nmodule = main\ncallable = app\nmaster = true\n"
            "die-on-term = true\n",
            "main.py": "from flask import Flask\n\napp = Flask(__name__)\n",
        },
    )
    result = check(root)
    (launch,) = launches(result.apps, result.links, result.balancer_links)
    assert [s.value for s in launch.app.sockets] == ["unix:/tmp/uwsgi.sock"]
    assert [at.file.name for at in launch.fronts] == ["certificate.conf"]
    assert not [f for f in result.findings if f.rule == "uwsgi-sigterm-cuts-requests"]


def test_a_config_copied_onto_the_base_images_workdir_is_the_one_start_sh_reads(
    tmp_path: Path,
) -> None:
    """`COPY ./devops/gunicorn_conf.py /app` FROM tiangolo/meinheld-gunicorn: /app is the base
    image's WORKDIR, a folder the image has, so Docker copies the file into it as
    /app/gunicorn_conf.py, the first path the image's /start.sh looks for (then
    /app/app/gunicorn_conf.py, then its own /gunicorn_conf.py). The launch reads that config,
    one launch, no "/gunicorn_conf.py: not in the build context" (seen in
    cmu-delphi/delphi-epidata)."""
    root = write(
        tmp_path / "api",
        {
            "devops/Dockerfile": "FROM tiangolo/meinheld-gunicorn:python3.8\n"
            "COPY ./devops/gunicorn_conf.py /app\nCOPY ./src /app/server\n"
            'ENTRYPOINT ["/entrypoint.sh"]\nCMD ["/start.sh"]\n',
            "devops/gunicorn_conf.py": "bind = '0.0.0.0:8080'\nworkers = 3\n",
            "src/main.py": "app = object()\n",
        },
    )
    result = check(root)
    (app,) = served(result)
    assert [s.value for s in app.sockets] == ["0.0.0.0:8080"]
    assert app.workers.value == 3
    assert chains(result, root) == [["devops/Dockerfile:1", "devops/gunicorn_conf.py:1"]]
    assert not [n for n in result.notes if "gunicorn_conf" in n.message]


def test_a_cmd_of_an_app_and_server_flags_is_arguments_for_an_unknown_bases_entrypoint(
    tmp_path: Path,
) -> None:
    """`CMD ["shop.wsgi:application", "--workers=2"]` FROM an owner's image check does not
    know: no program is named `shop.wsgi:application`, so the words are the arguments the base
    image's ENTRYPOINT runs its server with (seen in praekeltfoundation/ndoh-hub, on
    docker-django-bootstrap). check says the link is not followed, naming the base image, at
    the CMD's line, for the Dockerfile and the compose service that builds it, and never that
    the image or the compose file starts no server."""
    root = write(
        tmp_path / "hub",
        {
            "Dockerfile": "FROM ghcr.io/acme/django-base:py3.12\nCOPY . /app\n"
            'CMD ["shop.wsgi:application", "--workers=2", "--threads=4"]\n',
            "docker-compose.yml": "services:\n  web:\n    build: .\n"
            '    ports:\n      - "8000:8000"\n',
            "shop/wsgi.py": "application = object()\n",
        },
    )
    result = check(root)
    assert served(result) == []
    (message,) = unfollowed(result)
    assert message.startswith(f"{root / 'Dockerfile'}:3: not followed:")
    assert "arguments for the base image's entrypoint (ghcr.io/acme/django-base:py3.12)" in message
    assert not [n for n in result.notes if n.kind == "starts-no-server"]


def test_a_cmd_of_an_app_on_a_known_python_base_is_not_called_base_arguments(
    tmp_path: Path,
) -> None:
    """The same CMD FROM python:3.12, whose ENTRYPOINT is known to run its CMD as a program,
    is not said to be a base image's arguments."""
    root = write(
        tmp_path / "hub",
        {
            "Dockerfile": "FROM python:3.12\nCOPY . /app\n"
            'CMD ["shop.wsgi:application", "--workers=2"]\n',
            "shop/wsgi.py": "application = object()\n",
        },
    )
    result = check(root)
    assert not [m for m in unfollowed(result) if "base image's entrypoint" in m]


#: An image FROM the uvicorn-gunicorn family whose own CMD is a script of the repository.
_OWN_ENTRYPOINT = (
    "FROM tiangolo/uvicorn-gunicorn-fastapi:python3.11\nCOPY ./app /app/app\n"
    "COPY ./gunicorn_conf.py /app/gunicorn_conf.py\n"
    'COPY entrypoint.sh /entrypoint.sh\nCMD ["/entrypoint.sh"]\n'
)


def test_an_entrypoint_script_that_execs_the_base_images_start_script_starts_its_gunicorn(
    tmp_path: Path,
) -> None:
    """An image's own CMD script that ends in `exec /start.sh` runs the start script the
    uvicorn-gunicorn base image holds: the chain is the CMD, the script's line, then the FROM
    line that brings /start.sh (said to be the base's), with the config the base picks
    (/app/gunicorn_conf.py, COPYed there) as when the CMD is inherited; the script is not
    said to start no server."""
    for line in ("exec /start.sh", "bash /start.sh"):
        root = write(
            tmp_path / line.split()[0],
            {
                "Dockerfile": _OWN_ENTRYPOINT,
                "entrypoint.sh": f"#!/bin/bash\nset -e\necho starting\n{line}\n",
                "gunicorn_conf.py": 'bind = "0.0.0.0:8080"\nworkers = 3\n',
                "app/main.py": APP,
            },
        )
        result = check(root)
        (app,) = served(result)
        assert app.kind == "gunicorn"
        assert app.workers.value == 3
        assert [s.value for s in app.sockets] == ["0.0.0.0:8080"]
        assert chains(result, root) == [
            ["Dockerfile:5", "entrypoint.sh:4", "Dockerfile:1", "gunicorn_conf.py:1"]
        ]
        (launch,) = launches(result.apps, result.links, result.balancer_links)
        assert "entrypoint.sh:4 -> " in describe(launch)
        assert "Dockerfile:1 (inherited from tiangolo/uvicorn-gunicorn: /start.sh)" in describe(
            launch
        )
        assert not [n for n in result.notes if n.kind == "starts-no-server"]


def test_a_migration_module_before_exec_start_sh_is_not_the_launchs_answer(
    tmp_path: Path,
) -> None:
    """`python -m migrate` before `exec /start.sh` is a step that ends; the server is the
    base's gunicorn the exec line starts, not "a launcher of a server" left not followed."""
    root = write(
        tmp_path / "api",
        {
            "Dockerfile": _OWN_ENTRYPOINT,
            "entrypoint.sh": "#!/bin/bash\nset -e\npython -m migrate\nexec /start.sh\n",
            "gunicorn_conf.py": "workers = 2\n",
            "app/main.py": APP,
        },
    )
    result = check(root)
    (app,) = served(result)
    assert app.kind == "gunicorn"
    assert unfollowed(result) == []


def test_a_run_written_entrypoint_running_start_sh_is_followed_and_needs_exec(
    tmp_path: Path,
) -> None:
    """An /entrypoint.sh the Dockerfile writes with `RUN echo ... > /entrypoint.sh` that runs
    the base's `/start.sh` without `exec` (seen in MaastrichtU-IDS/translator-openpredict's
    src/openpredict_model/Dockerfile) starts the base's gunicorn: the chain is the CMD, the
    line that writes its `/start.sh`, the FROM line; the shell it leaves as PID 1 is the image's fault (a warning,
    since the CMD starts the script), not advice about a script nothing starts."""
    root = write(
        tmp_path / "api",
        {
            "Dockerfile": "FROM tiangolo/uvicorn-gunicorn-fastapi:python3.8\nENV PORT=8808\n"
            "COPY . .\n"
            'RUN echo "#!/bin/bash" > /entrypoint.sh && \\\n'
            '    echo "dvc pull" >> /entrypoint.sh && \\\n'
            '    echo "/start.sh" >> /entrypoint.sh && \\\n'
            "    chmod +x /entrypoint.sh\n"
            'CMD [ "/entrypoint.sh" ]\n',
            "app/main.py": APP,
        },
    )
    result = check(root)
    (app,) = served(result)
    assert app.kind == "gunicorn"
    assert [s.value for s in app.sockets] == ["0.0.0.0:8808"]
    assert chains(result, root) == [["Dockerfile:8", "Dockerfile:6", "Dockerfile:1"]]
    rules = {f.rule for f in result.findings}
    assert "entrypoint-without-exec" in rules
    assert "entrypoint-without-exec-unlaunched" not in rules
