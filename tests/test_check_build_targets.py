"""The stage of a Dockerfile that the repository's own build commands build is the image read
for that Dockerfile's launch: `docker build --target NAME` in a Makefile, a justfile, a shell
script or a CI workflow's `run:`, docker/build-push-action's `target:` / `build-args:` /
`file:`. A plain build makes the last stage, which a development stage often is. Seen in
repositories whose Makefile builds `--target production` and whose Dockerfile ends in a
`development` stage (ITISFoundation/osparc-simcore's services end so). Each repository is
written in the test."""

from __future__ import annotations

import time
from pathlib import Path

from tests.folder_support import chains, check_folder, write

_DOCKERFILE = (
    "FROM python:3.12-slim AS base\n"
    "WORKDIR /app\n"
    "COPY . .\n"
    "\n"
    "FROM base AS production\n"
    'CMD ["gunicorn", "-w", "4", "app:app"]\n'
    "\n"
    "FROM base AS dev\n"
    'CMD ["gunicorn", "-w", "1", "app:app"]\n'
)
_MAKEFILE = "image:\n\tdocker build \\\n\t\t--target production \\\n\t\t-t acme/app .\n"


def _chosen(root: Path) -> list[str]:
    return [n.message for n in check_folder(root).notes if n.kind == "server-chosen"]


def test_a_makefile_target_is_the_stage_read(tmp_path: Path) -> None:
    """A Makefile's `docker build --target production ... .` (its words over `\\`-continued
    lines) builds the ./Dockerfile's `production` stage: that stage's CMD is the launch read
    (4 workers), not the last stage's, and a `server-chosen` note names the Makefile's line
    that chose it. A Dockerfile a compose service builds (`build: .`, no target) is that
    service's image: the Makefile does not change it, and no note says it did."""
    root = write(tmp_path / "alone", {"Dockerfile": _DOCKERFILE, "Makefile": _MAKEFILE})
    assert chains(check_folder(root), root) == [(["Dockerfile:6"], "gunicorn", 4)]
    (note,) = _chosen(root)
    assert "read as the stage 'production'" in note
    assert "Makefile:3" in note

    files = {"Dockerfile": _DOCKERFILE, "Makefile": _MAKEFILE}
    composed = write(
        tmp_path / "compose", {**files, "compose.yaml": "services:\n  web:\n    build: .\n"}
    )
    assert [(c[-1], w) for c, _, w in chains(check_folder(composed), composed)] == [
        ("Dockerfile:9", 1)
    ]
    assert not [n for n in _chosen(composed) if "build command" in n]


def test_a_workflow_build_argument_picks_the_selecting_stage(tmp_path: Path) -> None:
    """A last stage that is only `FROM ${SERVICE}` builds the stage its build argument names:
    docker/build-push-action's `build-args:` block giving `SERVICE=web` (its `context:` the
    folder of the Dockerfile) chooses `web`, the note naming the workflow's line, not one
    saying the stage is only a possible choice. A workflow that does not read so is never
    refused."""
    root = write(
        tmp_path,
        {
            "api/Dockerfile": (
                "FROM python:3.12-slim AS web\nWORKDIR /app\nCOPY . .\n"
                'CMD ["gunicorn", "-w", "3", "app:app"]\n\n'
                'FROM python:3.12-slim AS worker\nCMD ["celery", "-A", "app", "worker"]\n\n'
                "FROM ${SERVICE}\n"
            ),
            ".github/workflows/publish.yml": (
                "on: push\n"
                "jobs:\n"
                "  build:\n"
                "    runs-on: ubuntu-latest\n"
                "    steps:\n"
                "      - uses: actions/checkout@v4\n"
                "      - name: Build\n"
                "        uses: docker/build-push-action@v6\n"
                "        with:\n"
                "          context: ./api\n"
                "          build-args: |\n"
                "            PYTHON=3.12\n"
                "            SERVICE=web\n"
                "          tags: ghcr.io/acme/api:latest\n"
                "      - run: echo done\n"
            ),
        },
    )
    assert chains(check_folder(root), root) == [(["api/Dockerfile:4"], "gunicorn", 3)]
    (note,) = _chosen(root)
    assert ".github/workflows/publish.yml:13" in note  # its `SERVICE=web`

    # A workflow that does not read as expected (a matrix target, a `with:` cut short, tabs,
    # text that is no YAML) chooses nothing and is never an error, read in milliseconds.
    odd = write(
        tmp_path / "odd",
        {
            "Dockerfile": _DOCKERFILE,
            ".github/workflows/matrix.yml": (
                "jobs:\n  b:\n    steps:\n      - uses: docker/build-push-action@v5\n"
                "        with:\n          target: ${{ matrix.target }}\n"
            ),
            ".github/workflows/broken.yml": "- uses: docker/build-push-action@v5\n\twith: [\n",
            ".github/workflows/empty.yml": "docker build --target\n",
        },
    )
    started = time.perf_counter()
    result = check_folder(odd)
    assert time.perf_counter() - started < 5
    assert not result.errors
    assert chains(result, odd) == [(["Dockerfile:9"], "gunicorn", 1)]


def test_two_targets_keep_the_plain_reading_and_name_both(tmp_path: Path) -> None:
    """Two build commands building the same Dockerfile as different stages (a script's
    `--target dev`, a workflow's `target: production`) make two images: the Dockerfile is
    read as before (its last stage), with a note naming each command's line."""
    root = write(
        tmp_path,
        {
            "Dockerfile": _DOCKERFILE,
            "scripts/dev.sh": "#!/bin/sh\ndocker build --target dev -t acme/dev .\n",
            ".github/workflows/ci.yml": (
                "jobs:\n  b:\n    steps:\n"
                "      - uses: docker/build-push-action@v5\n"
                "        with:\n          target: production\n"
            ),
        },
    )
    assert chains(check_folder(root), root) == [(["Dockerfile:9"], "gunicorn", 1)]
    (note,) = _chosen(root)
    assert "`--target dev` at scripts/dev.sh:2" in note
    assert "`--target production` at .github/workflows/ci.yml:6" in note


def test_a_scripts_docker_build_context_is_the_images_context(tmp_path: Path) -> None:
    """docker/manage (a shell script with no suffix) builds `docker build -t app -f
    ./api/Dockerfile ..` from its own folder: the image's build context is the repository's
    root, which holds the `./api` its COPY names and the entrypoint the image runs, though
    docker/ alone would have held the COPY's other source too; a `build-context` note names the
    script's line (seen in bcgov/vc-authn-oidc)."""
    files = {
        "docker/manage": "#!/bin/bash\nbuild() {\n  docker build \\\n    -t 'app' \\\n"
        "    -f './api/Dockerfile' '..'\n}\n",
        "docker/api/Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY README.md ./\n"
        'COPY ./api .\nENTRYPOINT ["./entrypoint.sh"]\n',
        "docker/README.md": "docker\n",
        "README.md": "root\n",
        "api/entrypoint.sh": "#!/bin/sh\nexec uvicorn main:app --port 5000\n",
    }
    root = write(tmp_path / "proj", files)
    result = check_folder(root)
    assert (["docker/api/Dockerfile:5", "api/entrypoint.sh:2"], "uvicorn", 1) in chains(
        result, root
    )
    said = [n.message for n in result.notes if n.kind == "build-context"]
    assert any("docker/manage:3" in m for m in said)
