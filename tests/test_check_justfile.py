"""justfile recipes as launchers: `just RECIPE` run by an image, and a justfile read on its own
(its recipes that start a server), with just's `{{ }}` interpolation, parameters, dependencies,
exports, `set dotenv-load` and shebang recipes. Each fixture is a small repository written
here; the pattern was seen in bitcart/bitcart (`prod-api: gunicorn -c gunicorn.conf.py
main:app`, run by bitcart-docker's compose as `just prod-api-up`)."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

_JUSTFILE = """\
set dotenv-load
set no-exit-message := true

export WEB_CONCURRENCY := env("WORKERS", "3")
host := "0.0.0.0"

[private]
default:
    @just --list --justfile {{ justfile() }}

# run the api in development
[group("Services")]
dev-api:
    uvicorn main:app --reload

# run the api in production
[group("Services")]
@prod-api port="8000": db-migrate
    -echo "starting on {{ port }}"
    gunicorn -c gunicorn.conf.py main:app --bind {{host}}:{{ port }}

db-migrate:
    alembic upgrade head

prod-api-up: db-migrate (prod-api "9000")
"""


def test_a_justfile_read_alone_starts_each_recipes_server(tmp_path: Path) -> None:
    """A justfile is read, not skipped as a Jinja template for its `{{ justfile() }}`: each
    recipe whose own lines start a server is a launch from that line (the development
    `uvicorn --reload` one too), the recipe's `{{host}}:{{ port }}` filled from the
    justfile's variable and the parameter's default, its `export WEB_CONCURRENCY` from
    `env("WORKERS", "3")` the workers of both (uvicorn reads it too); a recipe that only runs
    others adds no launch."""
    write(tmp_path, {"justfile": _JUSTFILE, "gunicorn.conf.py": "timeout = 60\n"})
    result = check_folder(tmp_path)
    assert not result.discovered[0].templates
    assert sorted(chains(result, tmp_path)) == [
        (["justfile:14"], "uvicorn", 3),
        (["justfile:20", "gunicorn.conf.py:1"], "gunicorn", 3),
    ]
    gunicorn = next(a for a in result.apps if a.kind == "gunicorn")
    assert [s.value for s in gunicorn.sockets] == ["0.0.0.0:8000"]


def test_just_run_by_an_image_runs_the_recipe_after_its_dependencies(tmp_path: Path) -> None:
    """`CMD ["just", "prod-api-up"]`: just runs `db-migrate`, then `prod-api` with the
    argument its dependency gives (`(prod-api "9000")`), each line its own shell; the
    `.env` that `set dotenv-load` loads gives `env("WORKERS", ...)` its 5. One launch of
    gunicorn, the Dockerfile's line first in its chain (not a second one for the justfile read
    alone), and the `.env` is loaded by the justfile."""
    write(
        tmp_path,
        {
            "justfile": _JUSTFILE,
            "gunicorn.conf.py": "timeout = 60\n",
            ".env": "WORKERS=5\n",
            "Dockerfile": "FROM python:3.12-slim\nCOPY . /app\nWORKDIR /app\n"
            'CMD ["just", "prod-api-up"]\n',
        },
    )
    result = check_folder(tmp_path)
    gunicorn = [c for c in chains(result, tmp_path) if c[1] == "gunicorn"]
    assert gunicorn == [(["Dockerfile:4", "justfile:20", "gunicorn.conf.py:1"], "gunicorn", 5)]
    app = next(a for a in result.apps if a.kind == "gunicorn" and len(a.launched_by) > 1)
    assert [s.value for s in app.sockets] == ["0.0.0.0:9000"]
    assert (tmp_path / ".env", (tmp_path / "justfile",)) in result.env_files


def test_a_shebang_recipe_is_one_script(tmp_path: Path) -> None:
    """A recipe whose body starts with `#!/usr/bin/env bash` is one script (its `if ... fi`
    spans lines): the uvicorn it execs is the launch; a compose `command: just serve`
    runs it."""
    write(
        tmp_path,
        {
            "Justfile": "serve:\n    #!/usr/bin/env bash\n    set -euo pipefail\n"
            '    if [ -n "${DEBUG:-}" ]; then\n        echo debug\n    fi\n'
            "    exec uvicorn main:app --workers 2 --host 0.0.0.0 --port 7000\n",
            "compose.yaml": "services:\n  api:\n    build: .\n    command: just serve\n",
            "Dockerfile": "FROM python:3.12-slim\nCOPY . /app\nWORKDIR /app\n",
        },
    )
    result = check_folder(tmp_path)
    (app,) = result.apps
    assert app.kind == "uvicorn"
    assert app.workers.value == 2
    assert [s.value for s in app.sockets] == ["0.0.0.0:7000"]
    assert app.launched_by[0].file == tmp_path / "compose.yaml"
