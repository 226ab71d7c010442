"""A Kubernetes container whose `command` is a chain of wrappers (an image's entrypoint script,
`tini --`, `bash SCRIPT`) with the server in `args`: the kubelet appends `args` to `command`,
so the server runs through them. A wrapper script the files do not hold is named in a
`not-followed` note, never read as a container that starts no server. Seen in
DIRACGrid/diracx-charts' Deployment. Each fixture is a small repository written here."""

from __future__ import annotations

from pathlib import Path

from tests.folder_support import chains, check_folder, write

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  template:
    spec:
      containers:
        - name: api
          image: example/api:1
          command: COMMAND
          args:
            - uvicorn
            - --factory
            - app.main:create_app
            - --host=0.0.0.0
            - --port=8000
"""


def test_server_in_args_after_unread_entrypoint_scripts_is_a_launch(tmp_path: Path) -> None:
    """`command: [/usr/local/bin/entry.sh, tini, --, bash, /entrypoint.sh]` with uvicorn in
    `args`: the launch is the uvicorn of `args`, and a note names the two scripts of the image
    that were not followed."""
    manifest = DEPLOYMENT.replace(
        "COMMAND", '["/usr/local/bin/entry.sh", "tini", "--", "bash", "/entrypoint.sh"]'
    )
    root = write(tmp_path, {"deploy.yaml": manifest})
    result = check_folder(root)
    assert chains(result, root) == [(["deploy.yaml:8"], "uvicorn", 1)]
    notes = [n.message for n in result.notes if n.kind == "not-followed"]
    assert len(notes) == 1
    assert "`/usr/local/bin/entry.sh`, `/entrypoint.sh`" in notes[0]


def test_known_wrapper_alone_runs_its_args_without_a_note(tmp_path: Path) -> None:
    """`command: [tini, --]`: tini runs the `args` it is handed, so the uvicorn there is the
    launch, with nothing left unread to note."""
    root = write(tmp_path, {"deploy.yaml": DEPLOYMENT.replace("COMMAND", '["tini", "--"]')})
    result = check_folder(root)
    assert chains(result, root) == [(["deploy.yaml:8"], "uvicorn", 1)]
    assert not [n for n in result.notes if n.kind == "not-followed"]


def test_a_mounted_wrapper_script_runs_the_args_only_when_it_passes_them_on(
    tmp_path: Path,
) -> None:
    """A wrapper script mounted from a ConfigMap of the files is read: one ending in
    `exec "$@"` runs the uvicorn of `args` (with no note: nothing was left unread), one that
    never runs its arguments does not start it, and no launch is made up for that one."""
    volume = (
        "          volumeMounts:\n"
        "            - {name: start, mountPath: /start.sh, subPath: KEY}\n"
        "      volumes:\n"
        "        - name: start\n"
        "          configMap: {name: start}\n"
    )
    passes = DEPLOYMENT.replace("COMMAND", '["/start.sh"]') + volume.replace("KEY", "pass.sh")
    drops = DEPLOYMENT.replace("COMMAND", '["/start.sh"]').replace(
        "{name: api}", "{name: worker}"
    ) + volume.replace("KEY", "drop.sh")
    config_map = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: start}\ndata:\n"
        '  pass.sh: |\n    #!/bin/sh\n    ulimit -n 8192\n    exec "$@"\n'
        "  drop.sh: |\n    #!/bin/sh\n    exec python worker.py\n"
    )
    root = write(tmp_path, {"api.yaml": passes, "worker.yaml": drops, "config.yaml": config_map})
    result = check_folder(root)
    assert [(chain[0], kind) for chain, kind, _ in chains(result, root)] == [
        ("api.yaml:8", "uvicorn")
    ]
    assert not [n for n in result.notes if n.kind == "not-followed"]
