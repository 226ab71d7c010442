"""A CI script of the repository (`ci/build.sh`, a root `*.sh`, `scripts/*.sh`, `.travis.yml`)
that runs `docker build -t NAME -f FILE` says which Dockerfile builds an image a manifest runs,
with the variables it assigns one literal filled (`export PROJECT_NAME=acme` makes
`eu.gcr.io/${PROJECT_NAME}/shop-backend` the name `eu.gcr.io/acme/shop-backend`); the CI's
own (`${TRAVIS_COMMIT}`) stay unknown. Seen in akvo/akvo-rsr (`ci/build.sh` building
`rsr-backend` from `Dockerfile-prod` beside `Dockerfile-nginx` and `Dockerfile-prod-no-code`).
Each fixture is a small repository written here."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import launches
from tests.folder_support import check_folder, write

BUILD = """\
#!/usr/bin/env bash
set -eu
export PROJECT_NAME=acme
docker build -t acme/base:prod -f Dockerfile-base .
docker build --rm=false -t eu.gcr.io/${PROJECT_NAME}/shop-backend:${TRAVIS_COMMIT} -f Dockerfile-prod .
docker build -t eu.gcr.io/${PROJECT_NAME}/shop-nginx:${TRAVIS_COMMIT} -f Dockerfile-nginx .
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
spec:
  template:
    spec:
      containers:
        - name: shop-backend
          image: eu.gcr.io/acme/shop-backend:${TRAVIS_COMMIT}
"""


def test_a_ci_script_building_the_image_ties_it_to_its_dockerfile(tmp_path: Path) -> None:
    """The k8s container running `eu.gcr.io/acme/shop-backend:${TRAVIS_COMMIT}` runs what
    `Dockerfile-prod` starts, as ci/build.sh's `docker build -t
    eu.gcr.io/${PROJECT_NAME}/shop-backend:... -f Dockerfile-prod` says (PROJECT_NAME=acme)."""
    root = write(
        tmp_path,
        {
            "ci/build.sh": BUILD,
            "Dockerfile-base": 'FROM python:3.12\nCMD ["gunicorn", "shop.wsgi", "-w", "2"]\n',
            "Dockerfile-prod": 'FROM acme/base:prod\nCMD ["gunicorn", "shop.wsgi", "-w", "3"]\n',
            "Dockerfile-nginx": 'FROM nginx:1.25\nCMD ["nginx", "-g", "daemon off;"]\n',
            "deploy/deployment.yml": DEPLOYMENT,
        },
    )
    result = check_folder(root)
    chains = [
        [at.file.relative_to(root).as_posix() for at in launch.chain]
        for launch in launches(result.apps, result.links, result.balancer_links)
    ]
    assert ["deploy/deployment.yml", "Dockerfile-prod"] in chains
