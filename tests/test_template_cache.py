"""Compiled templates (servertune.templating): compiled once per user, loaded after, recompiled
when a template changes, and never the reason a render fails."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import jinja2
import pytest

from servertune import templating
from servertune.render import render_target
from servertune.sizing import plan_for
from servertune.workload import Workload


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private XDG_CACHE_HOME, and a fresh Jinja2 environment before and after the test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    templating._environment.cache_clear()
    yield tmp_path / "cache"
    templating._environment.cache_clear()


def _no_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a template was compiled")

    monkeypatch.setattr(jinja2.Environment, "_compile", refuse)


def test_a_second_run_loads_the_compiled_templates(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first render compiles and stores; a fresh environment (the next run) renders the
    same text without compiling anything."""
    plan = plan_for(Workload(cores=4))
    first = render_target("uwsgi", plan)
    directory = templating.template_cache_dir()
    assert directory is not None
    assert directory.is_relative_to(cache_home)
    assert list(directory.glob("__jinja2_*.cache"))
    assert directory.stat().st_mode & 0o777 == 0o700
    templating._environment.cache_clear()
    _no_compiling(monkeypatch)
    assert render_target("uwsgi", plan) == first


def test_an_edited_template_is_compiled_again(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache is keyed on each template's source: an editable install's edit shows at once."""
    templates = tmp_path / "templates"
    shutil.copytree(templating.template_dir(), templates)
    monkeypatch.setattr(templating, "template_dir", lambda: templates)
    plan = plan_for(Workload(cores=4))
    before = render_target("uwsgi", plan)
    source = templates / "uwsgi.ini.j2"
    source.write_text(source.read_text() + "# edited\n")
    templating._environment.cache_clear()
    assert render_target("uwsgi", plan) == before + "# edited\n"


def test_a_cache_that_cannot_be_made_or_is_not_ours_alone_is_not_used(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache home that is a file: no cache, the render compiles. A cache directory others may
    write: not loaded from, since Jinja2 runs what it holds."""
    plan = plan_for(Workload(cores=4))
    expected = render_target("uwsgi", plan)
    templating._environment.cache_clear()
    cache_home.mkdir(parents=True, exist_ok=True)
    blocker = cache_home.parent / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert templating.template_cache_dir() is None
    assert render_target("uwsgi", plan) == expected
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    directory = templating.template_cache_dir()
    assert directory is not None
    directory.chmod(0o770)
    assert templating.template_cache_dir() is None


def test_an_unreadable_cache_entry_is_a_compile_not_an_error(cache_home: Path) -> None:
    """A truncated or garbled compiled template (a full disk, another tool) is compiled again."""
    plan = plan_for(Workload(cores=4))
    expected = render_target("uwsgi", plan)
    directory = templating.template_cache_dir()
    assert directory is not None
    for entry in directory.glob("__jinja2_*.cache"):
        entry.write_bytes(entry.read_bytes()[:40])
    templating._environment.cache_clear()
    assert render_target("uwsgi", plan) == expected
