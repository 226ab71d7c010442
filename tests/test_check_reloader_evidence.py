"""Issue 44 §3 (corpus8a/8b cause L): whether a reloader (`uvicorn --reload`) runs in
production is decided from evidence in the files. A systemd unit (a host's service), an image
whose Dockerfile has a development twin beside it, a pod or a compose file named for
production is a deployment's launch: its reloader is a warning. A stage's development name
counts only for the stage built, not for the stages built FROM it."""

from __future__ import annotations

from pathlib import Path

from servertune.check.graph import describe, launches
from tests.folder_support import check_folder, write

UNIT = (
    "[Unit]\nDescription=API\n\n[Service]\nWorkingDirectory=/opt/api\n"
    "ExecStart=/opt/api/.venv/bin/uvicorn api.main:app --reload\n\n"
    "[Install]\nWantedBy=multi-user.target\n"
)


def test_a_reloader_in_a_systemd_unit_is_a_production_warning(tmp_path: Path) -> None:
    """A systemd unit whose ExecStart runs `uvicorn --reload` (seen in hotosm/raw-data-api's
    unit, installed by its production playbook) is a host's service: one reloader-in-production
    warning at the ExecStart line, and the launch graph calls it a production launch; the same
    unit named for development (`api-dev.service`) is a developer's and draws none."""
    result = check_folder(write(tmp_path / "prod", {"infra/systemd/api.service": UNIT}))
    (found,) = [f for f in result.findings if f.rule == "reloader-in-production"]
    assert (found.at.file.name, found.at.line, found.severity.name) == ("api.service", 6, "warning")
    assert "the systemd unit api.service" in found.message
    (line,) = [describe(one) for one in launches(result.apps, result.links)]
    assert "a production launch (reloads on code changes" in line
    dev = check_folder(write(tmp_path / "dev", {"systemd/api-dev.service": UNIT}))
    assert not [f for f in dev.findings if f.rule == "reloader-in-production"]


BASE = "FROM python:3.12\nCOPY . /app\nWORKDIR /app\n"


def test_an_image_with_a_development_twin_beside_it_is_production_s(tmp_path: Path) -> None:
    """backend/Dockerfile runs entrypoint.sh, which ends in `uvicorn --reload`, while
    backend/Dockerfile.dev beside it is the development image (seen in airweave-ai/airweave):
    the reloader in the image that is not the development one is a warning naming the twin;
    with no twin the same image's reloader stays a note."""
    script = "#!/bin/sh\nset -e\nexec uvicorn main:app --host 0.0.0.0 --reload\n"
    image = BASE + 'CMD ["/app/entrypoint.sh"]\n'
    files = {"backend/Dockerfile": image, "backend/entrypoint.sh": script}
    alone = check_folder(write(tmp_path / "alone", files))
    (note,) = [f for f in alone.findings if f.rule == "reloader-in-production"]
    assert note.severity.name == "info"
    twin = {**files, "backend/Dockerfile.dev": BASE + 'CMD ["uvicorn", "main:app", "--reload"]\n'}
    result = check_folder(write(tmp_path / "twin", twin))
    (found,) = [
        f
        for f in result.findings
        if f.rule == "reloader-in-production" and f.at.file.name == "entrypoint.sh"
    ]
    assert found.severity.name == "warning"
    assert "Dockerfile.dev beside Dockerfile" in found.message


STAGES = (
    "FROM python:3.12 AS api-dev\nCOPY . /app\nWORKDIR /app\n"
    'CMD ["gunicorn", "-w", "2", "--graceful-timeout", "3600", "-b", "0.0.0.0:8000", "app:app"]\n'
    "FROM api-dev AS api-test\nRUN pip install pytest\n"
    "FROM api-test AS api\n"
)


def test_a_dev_stage_name_does_not_mark_the_stages_built_from_it(tmp_path: Path) -> None:
    """The final stage `api` inherits its CMD from `FROM python AS api-dev` (seen in
    Syslifters/sysreptor's published image): a compose service building the final stage runs
    a production launch whose faults are judged (the graceful 3600 s over docker's 10 s stop);
    a service whose `build.target` is `api-dev` is a development launch, not judged."""
    service = "services:\n  app:\n    build: .\n"
    result = check_folder(
        write(tmp_path / "final", {"Dockerfile": STAGES, "compose.yaml": service})
    )
    assert [f.rule for f in result.findings] == ["grace-period-below-shutdown"]
    target = "services:\n  app:\n    build:\n      context: .\n      target: api-dev\n"
    dev = check_folder(write(tmp_path / "target", {"Dockerfile": STAGES, "compose.yaml": target}))
    assert not [f for f in dev.findings if f.rule == "grace-period-below-shutdown"]
    (line,) = [describe(one) for one in launches(dev.apps, dev.links)]
    assert "faults not judged" in line


def test_a_compose_service_running_the_published_image_is_production_s(tmp_path: Path) -> None:
    """docker-compose.yml pulls the released image (`image:`, no `build:`) built from
    backend/Dockerfile and runs its `uvicorn --reload` with no source folder mounted (seen in
    PySpur-Dev/pyspur, whose image names the repository: `pyspur-backend`): a
    reloader-in-production warning; the same service mounting ./backend over the app (a
    developer's live source) draws none."""
    image = BASE + 'CMD ["uvicorn", "main:app", "--host", "0.0.0.0", "--reload"]\n'
    service = "services:\n  backend:\n    image: acme/shop-backend:latest\n"
    files = {"backend/Dockerfile": image, "docker-compose.yml": service}
    result = check_folder(write(tmp_path / "released" / "shop", files))
    found = [f for f in result.findings if f.rule == "reloader-in-production"]
    assert [f.severity.name for f in found] == ["warning"]
    assert "published image acme/shop-backend:latest" in found[0].message
    mounted = service + "    volumes:\n      - ./backend:/app\n"
    live = check_folder(write(tmp_path / "live" / "shop", {**files, "docker-compose.yml": mounted}))
    assert not [f for f in live.findings if f.rule == "reloader-in-production"]


def test_gunicorn_s_reload_in_a_systemd_unit_stays_a_note(tmp_path: Path) -> None:
    """gunicorn's `--reload` in a host's unit is a watcher thread in workers that still serve
    as written, so no request is lost: reloader-in-production is a note there (as judged on
    okfn-brasil/serenata-de-amor's production overlay), while the launch is still called a
    production one."""
    unit = UNIT.replace("uvicorn api.main:app --reload", "gunicorn -w 2 --reload api.wsgi:app")
    result = check_folder(write(tmp_path, {"systemd/api.service": unit}))
    (found,) = [f for f in result.findings if f.rule == "reloader-in-production"]
    assert found.severity.name == "info"
    (line,) = [describe(one) for one in launches(result.apps, result.links)]
    assert "a production launch (reloads on code changes" in line
