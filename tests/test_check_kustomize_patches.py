"""A manifest a kustomization names under `patches`, `patchesStrategicMerge` or
`patchesJson6902` is a patch kustomize merges into the resource it targets
(https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/patches/): its partial
Deployment is no workload of its own, no launch and no finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.folder_support import chains, check_folder, write

BASE = {
    "k8s/base/kustomization.yaml": "resources:\n  - deployment.yaml\n",
    "k8s/base/deployment.yaml": (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n"
        "  selector:\n    matchLabels: {app: web}\n  template:\n"
        "    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n"
        "        - name: web\n          image: example/web:1\n"
        "          command: [gunicorn, --workers, '3', --bind, '0.0.0.0:8080', app:app]\n"
        "          resources: {limits: {cpu: '2'}}\n"
    ),
}
#: The overlay's patch, as seen in PokeAPI/pokeapi's kustomize/ga: an initContainer and a
#: mount added to the base's container, which names no image and no command of its own.
PATCH = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n"
    "    spec:\n      initContainers:\n        - name: fetch\n          image: alpine:3\n"
    "          command: [ls]\n      containers:\n        - name: web\n"
    "          command: [gunicorn, app:app]\n"
    "          volumeMounts:\n            - {mountPath: /data, name: data}\n"
)


@pytest.mark.parametrize(
    "listed",
    [
        "patches:\n  - path: web-patch.yaml\n    target: {kind: Deployment}\n",
        "patchesStrategicMerge:\n  - web-patch.yaml\n",
        "patches:\n  - path: patches/../web-patch.yaml\n",
    ],
)
def test_a_patch_a_kustomization_names_is_not_a_second_deployment(
    tmp_path: Path, listed: str
) -> None:
    """Only the base's container is a launch, with no finding at the patch; its command is
    the one the patch gives it (`gunicorn app:app`, one worker, the patch's line in its chain),
    the overlay being the only one that builds the base."""
    write(
        tmp_path,
        {
            **BASE,
            "k8s/ga/kustomization.yaml": f"resources:\n  - ../base\n{listed}",
            "k8s/ga/web-patch.yaml": PATCH,
        },
    )
    result = check_folder(tmp_path)
    assert chains(result, tmp_path) == [
        (["k8s/base/deployment.yaml:13", "k8s/ga/web-patch.yaml:14"], "gunicorn", 1)
    ]
    assert not [f for f in result.findings if f.at.file.name == "web-patch.yaml"]


def test_a_manifest_no_kustomization_names_as_a_patch_is_read(tmp_path: Path) -> None:
    """The same file beside a kustomization that lists it under `resources` is a workload."""
    write(
        tmp_path,
        {"k8s/ga/kustomization.yaml": "resources:\n  - web.yaml\n", "k8s/ga/web.yaml": PATCH},
    )
    result = check_folder(tmp_path)
    assert [c[1] for c in chains(result, tmp_path)] == ["gunicorn"]


#: A task worker the base runs with the image's command (a server), which every overlay
#: turns into a worker process, as seen in dbca-wa/ibms's kustomize/overlays/{prod,uat}.
WORKER = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: worker\nspec:\n"
    "  selector:\n    matchLabels: {app: worker}\n  template:\n"
    "    metadata:\n      labels: {app: worker}\n    spec:\n      containers:\n"
    "        - name: worker\n          image: example/web:1\n"
    "          command: [gunicorn, --bind, '0.0.0.0:8080', app:app]\n"
)
WORKER_PATCH = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: worker\nspec:\n  template:\n"
    "    spec:\n      containers:\n        - name: worker\n"
    "          command: ['python']\n          args: ['manage.py', 'db_worker']\n"
)
#: The same change as a JSON 6902 patch.
WORKER_OPS = (
    "- op: replace\n  path: /spec/template/spec/containers/0/command\n  value: [python]\n"
    "- op: add\n  path: /spec/template/spec/containers/0/args\n"
    "  value: [manage.py, db_worker]\n"
)


@pytest.mark.parametrize(
    ("uat", "launches"),
    [
        ("patches:\n  - path: worker.yaml\n", []),
        (
            "patches:\n  - path: worker.yaml\n    target: {kind: Deployment, name: worker}\n",
            [],
        ),
        ("patchesStrategicMerge:\n  - worker.yaml\n", []),
        ("", ["gunicorn"]),  # uat deploys the base's command: it is one of those run
    ],
)
def test_a_command_every_overlay_patches_is_read_from_the_patch(
    tmp_path: Path, uat: str, launches: list[str]
) -> None:
    """A base workload whose container command every overlay building the base replaces
    (a strategic-merge patch of the same kind, name and container; or a JSON 6902 `replace`
    of `/spec/template/spec/containers/0/command`) runs the overlays' command, here no server:
    no gunicorn launch and no readiness finding on it. Where one overlay keeps the base's
    command, the base's launch stays."""
    uat_patch = WORKER_OPS if "target" in uat else WORKER_PATCH
    write(
        tmp_path,
        {
            "k8s/base/kustomization.yaml": "resources:\n  - worker.yaml\n",
            "k8s/base/worker.yaml": WORKER,
            "k8s/overlays/prod/kustomization.yaml": "resources:\n  - ../../base\n"
            "patchesStrategicMerge:\n  - worker.yaml\n",
            "k8s/overlays/prod/worker.yaml": WORKER_PATCH,
            "k8s/overlays/uat/kustomization.yaml": f"resources:\n  - ../../base\n{uat}",
            "k8s/overlays/uat/worker.yaml": uat_patch,
        },
    )
    result = check_folder(tmp_path)
    assert [c[1] for c in chains(result, tmp_path)] == launches
    if not launches:
        assert not [f for f in result.findings if f.at.file.name == "worker.yaml"]
