"""A file an image takes from the project's own package where pip installed it
(`.../site-packages/<pkg>/...`), from a wheel no COPY brings in, is the repository's file of
that package. Each fixture is a small repository written here for the cause it pins."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_support import chains, check_folder, write

_DOCKERFILE = """FROM python:3.12-slim
ARG WHEEL_FILE=shop.whl
WORKDIR /app
RUN --mount=type=bind,source=dist/$WHEEL_FILE,target=/tmp/$WHEEL_FILE \\
    pip install /tmp/$WHEEL_FILE
RUN cp /usr/local/lib/python3.12/site-packages/shop/gunicorn.docker.conf.py /app/gunicorn.docker.conf.py
CMD ["gunicorn", "--config", "gunicorn.docker.conf.py", "shop.wsgi"]
"""


@pytest.mark.parametrize(
    ("package", "linked"),
    [("shop", True), ("src/shop", True), ("deploy/shop", False)],
)
def test_a_config_copied_from_the_installed_package_is_the_repository_file(
    tmp_path: Path, package: str, linked: bool
) -> None:
    """`RUN cp /usr/local/lib/python3.12/site-packages/shop/gunicorn.docker.conf.py /app/...`
    after `pip install` of the project's wheel (seen in bugsink's Dockerfile.fromwheel), then
    `gunicorn --config gunicorn.docker.conf.py`: the config is the repository's
    `shop/gunicorn.docker.conf.py` (or `src/shop/...`), its workers read; a folder of that
    name elsewhere is not the package, and the config stays not found."""
    root = write(
        tmp_path,
        {
            "Dockerfile.fromwheel": _DOCKERFILE,
            f"{package}/gunicorn.docker.conf.py": "workers = 5\n",
        },
    )
    found = [c for c in chains(check_folder(root), root) if c[0][0].startswith("Dockerfile")]
    assert found == (
        [(["Dockerfile.fromwheel:7", f"{package}/gunicorn.docker.conf.py:1"], "gunicorn", 5)]
        if linked
        else [(["Dockerfile.fromwheel:7"], "gunicorn", 1)]
    )
