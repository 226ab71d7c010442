"""A walk's cost grows with its files, not with their square: what linking asks again and
again (a file's YAML, an image's COPY sources, where an image keeps a file) is worked out once
per run (`servertune.check.memo`), and an answer recalled says its coverage notes again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from servertune.bench.scenarios.check_speed import PROJECT_FILES, build_repository
from servertune.check import check_files, dockerfile, kubernetes, memo, resolve
from servertune.check.discover import discover
from servertune.check.model import CheckInputError, Location, collect_notes, note
from servertune.machine import Machine

MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)


def _walk_counting(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Counter[str], int]:
    """Check the walked folder `root`, counting YAML parses and the COPY lookups of images;
    also the number of YAML files the walk reads."""
    calls: Counter[str] = Counter()

    def counted(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return function(*args, **kwargs)

        return wrapper

    loader_init = kubernetes._Loader.__init__
    with monkeypatch.context() as patched:
        patched.setattr(kubernetes._Loader, "__init__", counted("yaml parse", loader_init))
        patched.setattr(dockerfile, "_sources", counted("COPY sources", dockerfile._sources))
        patched.setattr(dockerfile, "_locate", counted("COPY lookups", dockerfile._locate))
        walk = discover(root)
        result = check_files(list(walk.files), machine=MACHINE, discovered=[walk])
    assert not result.errors
    return calls, sum(1 for p in walk.files if p.suffix in (".yml", ".yaml"))


def test_a_walk_twice_as_big_costs_twice_as_much(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the generated repository of `check-speed` (projects that name each other's kinds of
    files), each YAML file is parsed once, and doubling the projects at most doubles the
    images' COPY lookups (they were quadratic: every script's words looked for in every
    image, every compose file parsed again for each other file)."""
    small, small_yaml = _walk_counting(
        build_repository(tmp_path / "small", 3 * PROJECT_FILES), monkeypatch
    )
    big, big_yaml = _walk_counting(
        build_repository(tmp_path / "big", 6 * PROJECT_FILES), monkeypatch
    )
    assert small["yaml parse"] == small_yaml
    assert big["yaml parse"] == big_yaml == 2 * small_yaml
    for step in ("COPY sources", "COPY lookups"):
        assert 0 < big[step] <= 2.2 * small[step], (step, small[step], big[step])


_SUPERVISORD = """\
[supervisord]
nodaemon=true

[program:worker]
directory=/srv/app
command=/srv/app/bin/worker.sh --queue default

[program:web]
directory=/srv/app
command=gunicorn -c deploy/gunicorn.conf.py app:app
"""


def test_a_chain_from_several_launchers_asks_the_tree_each_question_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three launcher scripts each run `supervisord -c supervisord.conf` (the shape of
    bunkerity/bunkerweb's all-in-one image, where check took 15 s on 32 files): the chain
    through that config is followed from each, but whether a path its programs name is in
    the tree (`commands.beside`, up every folder of the checkout for every command) is
    worked out once per run for each path and the line naming it, not once per launcher.
    Each launcher still reaches the gunicorn config."""
    (tmp_path / "deploy").mkdir()
    (tmp_path / "bin").mkdir()
    (tmp_path / "supervisord.conf").write_text(_SUPERVISORD)
    (tmp_path / "deploy" / "gunicorn.conf.py").write_text('bind = "0.0.0.0:8000"\nworkers = 2\n')
    (tmp_path / "bin" / "worker.sh").write_text(
        '#!/bin/sh\nset -e\necho starting\nexec celery-worker --queue "$2"\n'
    )
    for index in (1, 2, 3):
        launcher = f"#!/bin/sh\necho launcher {index}\nexec supervisord -c supervisord.conf\n"
        (tmp_path / f"start-{index}.sh").write_text(launcher)
    asked: Counter[tuple[str, str, Location]] = Counter()
    admit = resolve.admit

    def counted(target: Path, reference: str, at: Location, what: str) -> Path | None:
        asked[(str(target), reference, at)] += 1
        return admit(target, reference, at, what)

    monkeypatch.setattr(resolve, "admit", counted)
    walk = discover(tmp_path)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk])
    launched = sorted(str(app.launched_by[0].file.name) for app in result.apps)
    assert launched == ["start-1.sh", "start-2.sh", "start-3.sh"]
    assert asked
    assert max(asked.values()) == 1, asked.most_common(3)


def test_an_answer_recalled_records_its_notes_again() -> None:
    """The notes working an answer out recorded are recorded again, in order, each time it is
    recalled, so a file's coverage does not depend on which file asked first."""
    worked: list[str] = []
    at = Location(Path("Dockerfile"), 3)

    def answer() -> int:
        worked.append("once")
        note("outside-tree", at, "COPY '../x': outside the tree check reads: not read")
        return 42

    with memo.one_run(), collect_notes() as notes:
        table = memo.run_table("test")
        assert [memo.recall(table, "key", answer) for _ in range(3)] == [42, 42, 42]
    assert worked == ["once"]
    assert [n.message for n in notes] == ["COPY '../x': outside the tree check reads: not read"] * 3


def test_nothing_is_kept_outside_a_run_nor_an_error() -> None:
    """Outside a run there is no table (each call works its answer out); an error is raised
    again by working it out again, never kept."""
    assert memo.run_table("test") is None
    assert not memo.in_run()
    attempts: list[int] = []

    def failing() -> int:
        attempts.append(1)
        raise CheckInputError("Dockerfile: cannot read")

    with memo.one_run():
        table = memo.run_table("test")
        for _ in range(2):
            with pytest.raises(CheckInputError):
                memo.recall(table, "key", failing)
    assert len(attempts) == 2
    assert memo.run_table("test") is None


def _counting_calls(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> Counter[str]:
    """Count the calls of `module.name` by their first argument (as a string)."""
    calls: Counter[str] = Counter()
    function = getattr(module, name)

    def counted(first: Any, *args: Any, **kwargs: Any) -> Any:
        calls[str(first)] += 1
        return function(first, *args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def _check_walk(root: Path) -> None:
    walk = discover(root)
    check_files(list(walk.files), machine=MACHINE, discovered=[walk])


_WRITING_SCRIPT = """\
#!/bin/bash
inst_dir=/usr/local/lib/shop
cat > $inst_dir/start <<EOF
#!/bin/bash
exec gunicorn -b 127.0.0.1:8000 shop.wsgi:application
EOF
cat > /etc/nginx/conf.d/shop.conf <<EOF
server { listen 80; location / { proxy_pass http://127.0.0.1:8000; } }
EOF
"""
_UNIT = "[Service]\nExecStart=/usr/local/lib/shop/start\n"


def test_a_setup_script_s_here_documents_are_read_once_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An installer writing a start script and nginx's site with here-documents (the shape of
    mail-in-a-box's setup/management.sh) is asked for what it writes by the unit reader, the
    front reader and every command's lookup: its here-documents are parsed once a run."""
    from servertune.check import written_files

    (tmp_path / "setup").mkdir()
    (tmp_path / "conf").mkdir()
    (tmp_path / "setup" / "install.sh").write_text(_WRITING_SCRIPT)
    (tmp_path / "conf" / "shop.service").write_text(_UNIT)
    parsed = _counting_calls(monkeypatch, written_files, "scripts_written")
    _check_walk(tmp_path)
    assert parsed[str(tmp_path / "setup" / "install.sh")] == 1, parsed


_KUSTOMIZATION = """\
resources:
  - deployment.yml
configMapGenerator:
  - name: uwsgi-config
    files:
      - uwsgi.ini
"""
_CONTAINER = """\
        - name: NAME
          volumeMounts:
            - name: uwsgi-config
              mountPath: /opt/shop/uwsgi.ini
              subPath: uwsgi.ini
"""
_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
spec:
  template:
    spec:
      containers:
CONTAINERS      volumes:
        - name: uwsgi-config
          configMap:
            name: uwsgi-config
"""


def _kustomized(root: Path, containers: int) -> Path:
    root.mkdir()
    boxes = "".join(_CONTAINER.replace("NAME", f"shop-{n}") for n in range(containers))
    (root / "deployment.yml").write_text(_DEPLOYMENT.replace("CONTAINERS", boxes))
    (root / "kustomization.yaml").write_text(_KUSTOMIZATION)
    (root / "uwsgi.ini").write_text("[uwsgi]\nmodule = shop.wsgi\nsocket = :8000\n")
    return root / "kustomization.yaml"


def test_a_kustomization_s_generators_are_read_once_for_every_container(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three containers (no `image:`, a kustomize overlay sets it) mounting the ConfigMap a
    `configMapGenerator` makes (dod-ccpo/atst's deploy/azure): the kustomization beside them
    is parsed no more often than beside one container, once a run for its generators."""
    parsed = _counting_calls(monkeypatch, kubernetes, "_documents")
    three = _kustomized(tmp_path / "three", 3)
    _check_walk(three.parent)
    one = _kustomized(tmp_path / "one", 1)
    _check_walk(one.parent)
    assert parsed[str(three)] == parsed[str(one)], parsed


_CHART_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
spec:
  template:
    spec:
      containers:
CONTAINERS"""
_CHART_CONTAINER = '        - name: NAME\n          image: "{{ .Values.NAME.image }}"\n'


def _chart(root: Path, containers: int) -> str:
    """A chart of `containers` containers whose `image:` its values write, and its values."""
    names = [f"shop{n}" for n in range(containers)]
    values = "".join(f"{name}:\n  image: {root.name}\n" for name in names)
    boxes = "".join(_CHART_CONTAINER.replace("NAME", name) for name in names)
    (root / "chart" / "templates").mkdir(parents=True)
    (root / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: shop\nversion: 1.0.0\n")
    (root / "chart" / "values.yaml").write_text(values)
    (root / "chart" / "templates" / "deployment.yaml").write_text(
        _CHART_DEPLOYMENT.replace("CONTAINERS", boxes)
    )
    (root / "Dockerfile").write_text(
        "FROM python:3.12-slim\nRUN pip install gunicorn\nCMD gunicorn -b :8000 shop.wsgi\n"
    )
    return values


def test_a_chart_s_values_are_read_once_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chart template with three containers whose `image:` its values write (the shape of
    infiniflow/ragflow's chart): the chart's values.yaml is loaded no more often than with
    one such container, not once more per container asking whether its values name an
    owner's image."""
    import yaml

    loaded = _counting_calls(monkeypatch, yaml, "safe_load")
    three = _chart(tmp_path / "three", 3)
    _check_walk(tmp_path / "three")
    one = _chart(tmp_path / "one", 1)
    _check_walk(tmp_path / "one")
    assert loaded[three] == loaded[one], loaded


_STAGES = """\
FROM python:3.12-slim AS development
RUN pip install gunicorn
COPY . /app
CMD gunicorn -b :8000 app:app

FROM nginx:1.25 AS production
COPY nginx/default.conf /etc/nginx/conf.d/default.conf
"""
_TARGET_COMPOSE = """\
services:
  web:
    build: {context: ., target: development}
  api:
    build: {context: ., target: development}
  proxy:
    image: nginx:1.25
    volumes:
      - ./nginx/default.conf:/etc/nginx/conf.d/default.conf
      - ./nginx/other.conf:/etc/nginx/conf.d/other.conf
"""


def test_linking_reads_a_build_target_s_stage_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two services building the `development` stage of one Dockerfile whose last stage
    copies nginx's config (xerrors/Yuxi-Know's dev compose file), two fronts: linking asks
    which services' images hold each front, and reads that stage once for the run, not once
    per service and front."""
    from servertune.check import audit

    (tmp_path / "nginx").mkdir()
    (tmp_path / "Dockerfile").write_text(_STAGES)
    (tmp_path / "compose.yaml").write_text(_TARGET_COMPOSE)
    for name, (port, host) in {"default": (80, "web"), "other": (81, "api")}.items():
        site = f"server {{ listen {port}; location / {{ proxy_pass http://{host}:8000; }} }}\n"
        (tmp_path / "nginx" / f"{name}.conf").write_text(site)
    stages: Counter[str | None] = Counter()
    read_image, linked = dockerfile.read_image, audit._linked
    linking = [False]

    def counted(*args: Any, **kwargs: Any) -> Any:
        if linking[0]:
            stages[args[3] if len(args) > 3 else kwargs.get("target")] += 1
        return read_image(*args, **kwargs)

    def flagged(*args: Any, **kwargs: Any) -> Any:
        linking[0] = True
        try:
            return linked(*args, **kwargs)
        finally:
            linking[0] = False

    monkeypatch.setattr(dockerfile, "read_image", counted)
    monkeypatch.setattr(audit, "_linked", flagged)
    _check_walk(tmp_path)
    assert stages["development"] == 1, stages


def test_the_rules_look_for_a_compose_file_s_production_twin_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three services of `docker-compose.yml` each start with `sh -c` without exec, beside a
    `docker-compose.prod.yml` that runs alone (xerrors/Yuxi-Know): each stop finding is
    advice naming the production file, which is looked for (and its services read) once for
    the compose file, not once per finding."""
    from servertune.check import audit, overlay

    services = "".join(
        f'  {name}:\n    build: .\n    command: sh -c "pip install -e . ; uvicorn app:app"\n'
        for name in ("api", "worker", "admin")
    )
    (tmp_path / "Dockerfile").write_text("FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n")
    (tmp_path / "docker-compose.yml").write_text(f"services:\n{services}")
    (tmp_path / "docker-compose.prod.yml").write_text(
        'services:\n  api:\n    build: .\n    command: ["uvicorn", "app:app"]\n'
    )
    looked: Counter[str] = Counter()
    base_of, run_rules = overlay.base_of, audit.run_rules
    judging = [False]

    def counted(path: Path, services: Any) -> Path | None:
        if judging[0]:
            looked[path.name] += 1
        return base_of(path, services)

    def flagged(*args: Any, **kwargs: Any) -> Any:
        judging[0] = True
        try:
            return run_rules(*args, **kwargs)
        finally:
            judging[0] = False

    monkeypatch.setattr(overlay, "base_of", counted)
    monkeypatch.setattr(audit, "run_rules", flagged)
    walk = discover(tmp_path)
    result = check_files(list(walk.files), machine=MACHINE, discovered=[walk])
    advice = [f for f in result.findings if "docker-compose.prod.yml beside" in f.message]
    assert len(advice) == 3
    assert looked["docker-compose.prod.yml"] == 1, looked
