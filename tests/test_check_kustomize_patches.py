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
    """The overlay's patch is noted as a kustomize patch, and only the base's container is a
    launch, with no finding at the patch."""
    write(
        tmp_path,
        {
            **BASE,
            "k8s/ga/kustomization.yaml": f"resources:\n  - ../base\n{listed}",
            "k8s/ga/web-patch.yaml": PATCH,
        },
    )
    result = check_folder(tmp_path)
    assert chains(result, tmp_path) == [(["k8s/base/deployment.yaml:13"], "gunicorn", 3)]
    assert not [f for f in result.findings if f.at.file.name == "web-patch.yaml"]
    said = [n.message for n in result.notes if n.at.file.name == "web-patch.yaml"]
    assert any("a kustomize patch" in m for m in said), said


def test_a_manifest_no_kustomization_names_as_a_patch_is_read(tmp_path: Path) -> None:
    """The same file beside a kustomization that lists it under `resources` is a workload."""
    write(
        tmp_path,
        {"k8s/ga/kustomization.yaml": "resources:\n  - web.yaml\n", "k8s/ga/web.yaml": PATCH},
    )
    result = check_folder(tmp_path)
    assert [c[1] for c in chains(result, tmp_path)] == ["gunicorn"]
