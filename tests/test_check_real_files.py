"""Constructs of public projects' deployment files that check once misread: each read as the
tool that runs it reads it (the corpus holds the projects' own files; these pin the rule)."""

from __future__ import annotations

from pathlib import Path

from servertune.check import check_files
from servertune.sizing import Machine

MACHINE = Machine(cores=64, somaxconn=4096)

ENTRYPOINT = """\
#!/bin/sh
exec gunicorn app.wsgi --workers 3 --timeout 90 --graceful-timeout 90 --access-logfile - "$@"
"""


def _subdir_image(root: Path) -> Path:
    """`docker/Dockerfile` built from the repository's root, as taiga-back's is."""
    (root / "docker").mkdir()
    (root / "docker" / "entrypoint.sh").write_text(ENTRYPOINT)
    dockerfile = root / "docker" / "Dockerfile"
    dockerfile.write_text(
        'FROM python:3.12-slim\nCOPY . /srv\nWORKDIR /srv\nENTRYPOINT ["./docker/entrypoint.sh"]\n'
    )
    return dockerfile


def test_a_dockerfile_in_a_subdirectory_finds_its_entrypoint_from_the_repository_root(
    tmp_path: Path,
) -> None:
    """`COPY . /srv` + `ENTRYPOINT ["./docker/entrypoint.sh"]` in docker/Dockerfile: the script
    is found one directory up (where `docker build -f docker/Dockerfile .` takes it from),
    the repository's root: check reads within the repository holding the files given."""
    (tmp_path / ".git").mkdir()
    result = check_files([_subdir_image(tmp_path)], machine=MACHINE, env={})
    (app,) = result.apps
    assert (app.kind, app.workers.value) == ("gunicorn", 3)
    assert app.request_timeout is not None
    assert app.request_timeout.value == 90


def test_the_build_context_is_never_looked_for_above_a_repository(tmp_path: Path) -> None:
    """A directory holding `.git` is the highest a build context can be: nothing above it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").mkdir()
    dockerfile = _subdir_image(tmp_path)  # the script sits in tmp_path/docker, above `repo`
    inner = repo / "docker"
    inner.mkdir()
    (inner / "Dockerfile").write_text(dockerfile.read_text())
    result = check_files([inner / "Dockerfile"], machine=MACHINE, env={})
    assert result.apps == ()
    (nothing,) = result.notes
    # Issue 44: a link that cannot be followed is said so, never "starts no server".
    assert nothing.kind == "not-followed"
    assert "not in the build context" in nothing.message


def test_a_lone_dash_is_a_value_and_the_callers_arguments_are_named(tmp_path: Path) -> None:
    """`--access-logfile - "$@"`: `-` is stdout (gunicorn's own reading), and the caller's
    unknown arguments are left out and named, never taken as the flag's value."""
    script = tmp_path / "entrypoint.sh"
    script.write_text(ENTRYPOINT)
    result = check_files([script], machine=MACHINE, env={})
    assert result.findings == ()
    assert [n.rule for n in result.notes] == ["unresolved-variable"]
    assert "'$@'" in result.notes[0].message
    assert result.apps[0].workers.value == 3


MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
        - name: web
          image: web
          env:
            - {name: TIMEOUT, value: "90"}
          command:
            - gunicorn
            - --workers=$(GUNICORN_WORKERS)
            - --timeout
            - $(TIMEOUT)
            - --graceful-timeout
            - $(GRACE)
            - app.wsgi
"""


def test_a_kubelet_variable_no_manifest_here_defines_is_left_out_and_named(
    tmp_path: Path,
) -> None:
    """A kustomize base whose `$(GUNICORN_WORKERS)` an overlay sets: the word (and its flag)
    are left out and named, a defined `$(TIMEOUT)` is expanded as the kubelet does."""
    manifest = tmp_path / "web.yaml"
    manifest.write_text(MANIFEST)
    result = check_files([manifest], machine=MACHINE, env={})
    (app,) = result.apps
    assert app.request_timeout is not None
    assert app.request_timeout.value == 90
    unresolved = [n for n in result.notes if n.rule == "unresolved-variable"]
    assert [(f.at.line, f.message.split("'")[1]) for f in unresolved] == [
        (14, "--workers=$(GUNICORN_WORKERS)"),
        (18, "--graceful-timeout $(GRACE)"),
    ]
    assert "sets GUNICORN_WORKERS" in unresolved[0].fix


def test_a_prefix_the_script_makes_empty_is_dropped_as_the_shell_drops_it(tmp_path: Path) -> None:
    """`CMDPREFIX="${CMDPREFIX:-}"` then `${CMDPREFIX} gunicorn ...` runs gunicorn (Socorro);
    a prefix with a value, or none known, is not looked past."""
    script = tmp_path / "run.sh"
    body = "${CMDPREFIX} gunicorn --workers=3 app:app\n"
    script.write_text('#!/bin/bash\nCMDPREFIX="${CMDPREFIX:-}"\n' + body)
    (app,) = check_files([script], machine=MACHINE, env={}).apps
    assert app.workers.value == 3
    script.write_text('#!/bin/bash\nCMDPREFIX="/usr/local/bin/profile-me"\n' + body)
    (nothing,) = check_files([script], machine=MACHINE, env={}).notes
    assert (
        "no command line of gunicorn, uvicorn, granian, Hypercorn, Daphne, waitress, uWSGI"
        in nothing.message
    )


def test_a_python_module_config_is_named_by_its_file(tmp_path: Path) -> None:
    """gunicorn's `-c python:pkg.settings` is a module: the fix names `pkg/settings.py`."""
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\nexec gunicorn -c python:pkg.settings app:app\n")
    (finding,) = check_files([script], machine=MACHINE, env={}).notes
    assert finding.rule == "config-not-found"
    assert finding.fix.startswith("servertune check pkg/settings.py ")
