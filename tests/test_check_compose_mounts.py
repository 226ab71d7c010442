"""A compose bind mount `./x:/p` makes the container path /p the repository file x for that
service: the script its `entrypoint:` names, and the configs its launch reads. A compose file
given with `-f` from a folder above it (its base not in the tree) writes its mounts from that
folder. Each repository is written in the test."""

from __future__ import annotations

from pathlib import Path

from servertune.check.rules.shutdown import _with_exec
from tests.folder_support import chains, check_folder, fronts, write

#: A component's compose fragment, given with `-f` from the folder two levels up: its mount
#: paths are written from there (seen in bird-house/birdhouse-deploy).
_COMPONENT = {
    "deploy/components/api/docker-compose-extra.yml": (
        "services:\n  api:\n    image: ${API_IMAGE}\n    entrypoint: /entrypoint\n"
        "    volumes:\n      - ./components/api/entrypoint:/entrypoint:ro\n"
    ),
    "deploy/components/api/entrypoint": (
        "#!/bin/sh\nexec gunicorn -b 0.0.0.0:2000 --workers 3 api.wsgi\n"
    ),
}


def test_a_fragments_mounts_are_written_from_the_folder_above_it(tmp_path: Path) -> None:
    """`./components/api/entrypoint:/entrypoint:ro` in deploy/components/api/'s compose
    fragment names deploy/components/api/entrypoint (nothing from the fragment's own folder):
    the service's `entrypoint: /entrypoint` runs that script, which starts gunicorn, so the
    launch is compose service -> mounted script -> gunicorn, never "starts no server"."""
    root = write(tmp_path / "repo", _COMPONENT)
    result = check_folder(root)
    assert chains(result, root) == [
        (
            [
                "deploy/components/api/docker-compose-extra.yml:2",
                "deploy/components/api/entrypoint:2",
            ],
            "gunicorn",
            3,
        )
    ]
    assert not [n for n in result.notes if n.kind == "starts-no-server" and "yml" in str(n.at)]


def test_fragments_written_from_one_folder_are_one_project(tmp_path: Path) -> None:
    """A proxy fragment written from the same folder above (`./components/api/proxy/conf.d:
    /etc/nginx/conf.d`) runs in the api fragment's project: its nginx passes to `api:2000`,
    the api service's gunicorn, and is that launch's front."""
    root = write(
        tmp_path / "repo",
        {
            **_COMPONENT,
            "deploy/components/api/proxy/docker-compose-extra.yml": (
                "services:\n  proxy:\n    image: nginx:1.27\n    volumes:\n"
                "      - ./components/api/proxy/conf.d:/etc/nginx/conf.d:ro\n"
            ),
            "deploy/components/api/proxy/conf.d/api.conf": (
                "server {\n  listen 80;\n  location / {\n    proxy_pass http://api:2000;\n  }\n}\n"
            ),
        },
    )
    assert fronts(root)["api"] == ["deploy/components/api/proxy/conf.d/api.conf:4"]


def test_exec_goes_into_the_string_of_an_execed_shell() -> None:
    """`exec /bin/sh -c "gunicorn ..."` already execs the shell; the server is the `-c`
    string's child, so the fix puts `exec` first in the string, never `exec exec`."""
    assert _with_exec('exec /bin/sh -c "gunicorn -b :8000 app:app"') == (
        'exec /bin/sh -c "exec gunicorn -b :8000 app:app"'
    )


#: A service running the project's image by a bare name (`image: shop:latest`, no `build:`),
#: mounting its own gunicorn config over the image's (seen in AntaresSimulatorTeam/AntaREST).
_BARE = {
    "docker-compose.yml": (
        "services:\n  web:\n    image: shop:latest\n    volumes:\n"
        "      - ./deploy/gunicorn.py:/conf/gunicorn.py\n"
    ),
    "Dockerfile": (
        "FROM python:3.12-slim\nCOPY ./conf/ /conf/\nCOPY ./start.sh /start.sh\n"
        'ENTRYPOINT ["/start.sh"]\n'
    ),
    "start.sh": "#!/bin/sh\nexec gunicorn --config /conf/gunicorn.py shop.wsgi:app\n",
    "conf/gunicorn.py": "bind = '0.0.0.0:5000'\nworkers = 2\n",
    "deploy/gunicorn.py": "bind = '0.0.0.0:5000'\nworkers = 6\n",
}


def test_a_bare_image_name_a_build_command_tags_is_that_dockerfiles(tmp_path: Path) -> None:
    """`docker build -t shop .` in the Makefile ties `image: shop:latest` to the Dockerfile:
    the service runs its ENTRYPOINT's script, and the config that script names, /conf/
    gunicorn.py, is the file the service bind-mounts there (6 workers), not the image's."""
    root = write(tmp_path / "shop", {**_BARE, "Makefile": "build:\n\tdocker build -t shop .\n"})
    launched = chains(check_folder(root), root)
    assert (
        ["docker-compose.yml:2", "Dockerfile:4", "start.sh:2", "deploy/gunicorn.py:1"],
        "gunicorn",
        6,
    ) in launched


def test_a_bare_image_name_of_the_repository_is_its_own_dockerfile(tmp_path: Path) -> None:
    """With no build file tagging `shop`, the bare name of the repository is the repository's
    own image, its root Dockerfile, as a name with an owner (`acme/shop`) is, with the config
    the service mounts (seen in AntaresSimulatorTeam/AntaREST: `image: antarest:latest`
    beside its only Dockerfile)."""
    root = write(tmp_path / "shop", _BARE)
    launched = chains(check_folder(root), root)
    assert (
        ["docker-compose.yml:2", "Dockerfile:4", "start.sh:2", "deploy/gunicorn.py:1"],
        "gunicorn",
        6,
    ) in launched


def test_a_bare_image_name_two_dockerfiles_could_build_is_not_followed(tmp_path: Path) -> None:
    """With no root Dockerfile, two Dockerfiles that set a command and no build file tagging
    `shop`, the files do not say which one builds it: a not-followed note at the `image:`
    line says so, never "no service starts a server"."""
    files = {**_BARE, "web.Dockerfile": _BARE["Dockerfile"]}
    del files["Dockerfile"]
    files["worker.Dockerfile"] = 'FROM python:3.12-slim\nCMD ["celery", "-A", "shop"]\n'
    root = write(tmp_path / "shop", files)
    result = check_folder(root)
    kinds = {n.kind for n in result.notes if n.at.file.name == "docker-compose.yml"}
    assert "not-followed" in kinds
    assert "starts-no-server" not in kinds


def test_a_path_under_a_parent_folder_at_the_root_is_the_mounted_file(tmp_path: Path) -> None:
    """`BASE_DIR=$(dirname "$CUR_DIR")` for a script in /scripts is `/`, so `$BASE_DIR/conf/
    gunicorn.py` is `//conf/gunicorn.py`, which Linux resolves as /conf/gunicorn.py: the file
    the service mounts there (seen in AntaresSimulatorTeam/AntaREST's scripts/start.sh)."""
    files = {
        **_BARE,
        "Dockerfile": (
            "FROM python:3.12-slim\nCOPY ./conf/ /conf/\nCOPY ./scripts /scripts\n"
            'ENTRYPOINT ["/scripts/start.sh"]\n'
        ),
        "scripts/start.sh": (
            '#!/bin/bash\nCUR_DIR=$(cd "$(dirname "$0")" && pwd)\n'
            'BASE_DIR=$(dirname "$CUR_DIR")\n'
            "exec gunicorn --config $BASE_DIR/conf/gunicorn.py shop.wsgi:app\n"
        ),
        "Makefile": "build:\n\tdocker build -t shop .\n",
    }
    del files["start.sh"]
    root = write(tmp_path / "shop", files)
    launched = chains(check_folder(root), root)
    assert (
        ["docker-compose.yml:2", "Dockerfile:4", "scripts/start.sh:4", "deploy/gunicorn.py:1"],
        "gunicorn",
        6,
    ) in launched
