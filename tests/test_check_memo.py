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
