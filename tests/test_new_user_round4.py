"""What a new user hit in round 4 (issue 47): each test pins one item's fix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from servertune.workload import Workload


@pytest.mark.parametrize("app", ["módulo:app", "pkg.módulo:aplicación", "приложение:app"])
def test_a_unicode_identifier_is_a_valid_app(app: str) -> None:
    """Item 6: `--app 'módulo:app'` names a module Python imports (str.isidentifier)."""
    assert Workload(app=app).app == app


@pytest.mark.parametrize(
    "app", ["²x:app", "mód ulo:app", "x:class", "módulo:ap\np", "a:b:c", "wsgi:\u0430pp"]
)
def test_what_is_not_an_identifier_is_still_refused(app: str) -> None:
    """Item 6: widening to Unicode lets no digit-like start, space, keyword, newline or
    look-alike (a Cyrillic a among Latin letters) in."""
    with pytest.raises(ValueError, match="app"):
        Workload(app=app)


def test_gunicorn_loads_a_generated_config_for_a_unicode_module(tmp_path: Path) -> None:
    """Item 6: the config `gen` writes for `módulo:aplicación` is one gunicorn loads the app from."""
    (tmp_path / "módulo.py").write_text(
        'def aplicación(environ, start_response):\n    start_response("200 OK", [])\n'
        '    return [b"ok"]\n'
    )
    conf = tmp_path / "gunicorn.conf.py"
    gen = subprocess.run(
        [sys.executable, "-m", "servertune", "gen", "gunicorn", "--cores", "2",
         "--app", "módulo:aplicación", "--app-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert gen.returncode == 0, gen.stderr
    conf.write_text(gen.stdout)
    gunicorn = Path(sys.executable).parent / "gunicorn"
    checked = subprocess.run(
        [str(gunicorn), "-c", str(conf), "--check-config"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr
