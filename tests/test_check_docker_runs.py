"""A script's `docker run IMAGE [CMD ARGS...]` of an image the repository builds starts that
Dockerfile's image: a launch whose chain is the `docker run` line, then the image's command,
with what `docker run` changes (the words after IMAGE replace CMD, `--entrypoint` replaces
ENTRYPOINT and drops CMD, `-e` adds to ENV, `-w` and bind mounts place the files). Seen in
code-kern-ai/refinery-gateway's `start` (`docker build -t graphql-dev -f dev.Dockerfile .`,
then a migration's `docker run --entrypoint alembic` and the server's `docker run`); each
fixture is a small repository written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

DOCKERFILE = (
    "FROM python:3.12\nWORKDIR /app\nCOPY . /app\n"
    'CMD ["gunicorn", "--workers", "2", "--bind", "0.0.0.0:8000", "app:app"]\n'
)

START = """#!/bin/bash
docker build -t shop-local -f deploy.Dockerfile . > /dev/null 2>&1
docker run -d --name shop-db -p 5432:5432 postgres:16

docker run --rm \\
  --name shop-migration \\
  --entrypoint /usr/local/bin/alembic \\
  shop-local upgrade head

docker run -d --rm \\
  -p 8000:8000 \\
  -e APP_MODE=local \\
  shop-local > /dev/null 2>&1
"""


def test_a_script_running_an_image_it_builds_starts_that_dockerfiles_command(
    tmp_path: Path,
) -> None:
    """`docker build -t shop-local -f deploy.Dockerfile .` then `docker run ... shop-local`:
    the run line (10), then the Dockerfile's CMD (4), is the launch of its gunicorn; the
    migration's `--entrypoint alembic` run starts no server and is no launch, nor is the
    library image no file here builds (`postgres:16`)."""
    root = write(tmp_path, {"start": START, "deploy.Dockerfile": DOCKERFILE})
    (root / "start").chmod(0o755)
    result = check_folder(root)
    assert chains(result, root) == [(["start:10", "deploy.Dockerfile:4"], "gunicorn", 2)]


def test_the_words_after_the_image_replace_its_cmd(tmp_path: Path) -> None:
    """`docker run IMAGE gunicorn --workers 5 ...`: the container runs those words, not the
    image's CMD, so the launch has 5 workers, from the run line alone."""
    start = (
        "#!/bin/sh\ndocker build -t shop -f deploy.Dockerfile .\n"
        "docker run -it --rm -w /app shop gunicorn --workers 5 app:app\n"
    )
    root = write(tmp_path, {"run.sh": start, "deploy.Dockerfile": DOCKERFILE})
    result = check_folder(root)
    assert chains(result, root) == [
        (["deploy.Dockerfile:4"], "gunicorn", 2),
        (["run.sh:3"], "gunicorn", 5),
    ]


def test_a_bind_mount_puts_the_scripts_config_where_the_command_reads_it(
    tmp_path: Path,
) -> None:
    """`-v ./deploy/gunicorn.conf.py:/srv/gunicorn.conf.py` with `--workdir /srv`: the image's
    `gunicorn -c gunicorn.conf.py` reads the mounted file (workers = 7), which the image
    itself does not hold."""
    dockerfile = (
        'FROM python:3.12\nWORKDIR /app\nCMD ["gunicorn", "-c", "gunicorn.conf.py", "app:app"]\n'
    )
    start = (
        "#!/bin/sh\ndocker build -t shop -f deploy.Dockerfile .\n"
        "docker run -d --workdir /srv -v ./deploy/gunicorn.conf.py:/srv/gunicorn.conf.py:ro shop\n"
    )
    root = write(
        tmp_path,
        {
            "run.sh": start,
            "deploy.Dockerfile": dockerfile,
            "deploy/gunicorn.conf.py": "workers = 7\nbind = '0.0.0.0:8000'\n",
        },
    )
    result = check_folder(root)
    assert (["run.sh:3", "deploy.Dockerfile:3", "deploy/gunicorn.conf.py:1"], "gunicorn", 7) in (
        chains(result, root)
    )
