"""Jinja templates rendered where the container starts (`servertune.check.jinja`): the
evaluator renders Jinja's statement subset exactly as Jinja does (checked against Jinja
itself), lays the text out on the template's lines, refuses what it does not evaluate and
stays bounded on hostile input; a chain reads the template of a config absent from the files."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servertune.check import check_files
from servertune.check.jinja import MAX_TEMPLATE_CHARS, NotRendered, render
from servertune.machine import Machine
from tests.test_check_launch_chain import REPOS, chains, check_folder

MACHINE = Machine(cores=4, cores_source="the test's machine", somaxconn=4096)

#: Templates of the subset, with the values the files give: each renders as Jinja renders it
#: (undefined names as its ChainableUndefined: false, empty; `a.b` on one is refused here).
SUBSET = [
    ("plain text\nno tags\n", {}),
    ("{% if a %}A{% elif b %}B{% else %}C{% endif %}", {"b": "yes"}),
    ("{% if a %}A{% elif b %}B{% else %}C{% endif %}", {}),
    ("{% if not a %}none{% endif %}|{% if a == 'x' %}x{% endif %}", {"a": "x"}),
    ("{% if a != 'x' and b %}1{% endif %}{% if a or b %}2{% endif %}", {"b": "1"}),
    ("{% if (a or b) and not c %}yes{% else %}no{% endif %}", {"a": "1", "c": ""}),
    ("{% if a is defined %}d{% endif %}{% if z is not defined %}u{% endif %}", {"a": ""}),
    ("{% if a is undefined %}u{% endif %}", {}),
    ("{{ a }}-{{ missing }}-{{ a | default('x') }}-{{ missing|default('y') }}", {"a": "v"}),
    ("{{ empty | default('fallback', true) }}{{ empty | d('kept') }}", {"empty": ""}),
    ("{{ 3 }} {{ 2.5 }} {{ true }} {{ none }} {{ 'it\\'s' }} {{ \"q\" }}", {}),
    ("{{ a or 'other' }} {{ b and 'both' }}", {"a": "", "b": "1"}),
    ("{% for x in items %}[{{ x }}]{% endfor %}end", {}),
    ("{% for k, v in pairs %}{{ k }}{% else %}no pairs{% endfor %}", {}),
    ("{% set port = '8000' %}bind {{ port }}{% set p2 = missing %}{{ p2 }}", {}),
    ("a  \n  {%- if x %}X{% endif -%}  \n  b", {}),
    ("line\n{{- a -}}\nnext {#- note -#} last", {"a": "A"}),
    ("{# a comment {{ with }} tags #}kept", {}),
    ("{% raw %}{{ not evaluated }} {% if %}{% endraw %}!", {}),
    ("{%- raw -%}  x  {%- endraw -%}  y", {}),
    ("{%+ if a %}a{% endif +%}", {"a": "1"}),
    ("{{ '}}' }} and {{ \"%}\" }}", {}),
    ("ends with a newline\n", {}),
    (
        (
            "server {\n{% if ssl %}\n    listen 443 ssl;\n{% else %}\n    listen 80;\n{% endif %}\n"
            "    client_max_body_size {{ SIZE | default('1m') }};\n}\n"
        ),
        {"SIZE": "10m"},
    ),
]


@pytest.mark.parametrize(("template", "variables"), SUBSET)
def test_subset_renders_as_jinja_does(template: str, variables: dict[str, str]) -> None:
    """The text rendered is Jinja's own for the same template and values."""
    expected = (
        jinja2.Environment(undefined=jinja2.ChainableUndefined, autoescape=False)
        .from_string(template)
        .render(**variables)
    )
    assert render(template, variables).flat == expected


def test_rendered_lines_sit_on_the_template_lines_that_wrote_them() -> None:
    """Each rendered line stays on the template line holding most of it (joined lines on
    the longer part), so a reader's line number is the template's."""
    template = (
        "[program:web]\n"  # 1
        "command={% if reload -%}\n"  # 2
        "  gunicorn --reload app:app\n"  # 3
        "{% else -%}\n"  # 4
        "  gunicorn -c /etc/gunicorn.py app:app\n"  # 5
        "{% endif -%}\n"  # 6
        "stopwaitsecs = {{ WAIT }}\n"  # 7
    )
    lines = render(template, {"WAIT": "30"}).text.splitlines()
    assert lines[0] == "[program:web]"
    assert lines[4] == "command=gunicorn -c /etc/gunicorn.py app:app"
    assert lines[6] == "stopwaitsecs = 30"
    assert lines[1:4] == ["", "", ""]


def test_a_continued_line_is_followed_at_once_by_its_continuation() -> None:
    """A rendered line ending in a backslash is never parted from the next by blank lines."""
    template = "run \\\n{% if a -%}\n--a\n{% endif -%}\n--b\n"
    assert render(template).flat == "run \\\n--b"
    assert render(template).text.splitlines() == ["run \\", "--b"]


def test_undefined_names_and_left_out_loops_are_named_at_their_first_line() -> None:
    """Each name the files do not give is named once, at its first line; a `for` over one is
    said to render no item."""
    rendered = render("{% if a %}\n{% endif %}\n{{ b }}{{ a }}\n{% for x in xs %}{% endfor %}\n")
    assert rendered.undefined == (("a", 1), ("b", 3), ("xs", 4))
    assert rendered.omitted_loops == (("xs", 4),)


def test_names_of_a_branch_not_taken_are_not_said() -> None:
    """A name used only where the template does not render is not a value read."""
    assert render("{% if on %}{{ x }}{% endif %}", {"on": ""}).undefined == ()


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("{{ range(3) }}", "a call"),
        ("{{ name | upper }}", "the filter `upper`"),
        ("{% macro m() %}{% endmacro %}", "the statement `macro`"),
        ("{% include 'other.j2' %}", "the statement `include`"),
        ("{% extends 'base.j2' %}", "the statement `extends`"),
        ("{{ a + 1 }}", "'+ 1"),
        ("{{ .Values.image }}", "not a literal"),
        ('{{- include "chart.labels" . }}', "not evaluated here"),
        ("{% for c in word %}{% endfor %}", "a value here"),
        ("{{ word['k'] }}", "an item of it"),
        ("{{ cfg['web']['autostart'] }}", "its renderer's value"),
        ("{% if cfg.web %}on{% endif %}", "its renderer's value"),
        ("{{ x", "never closed"),
        ("{% if x %}", "never closed"),
        ("{# comment", "never closed"),
        ("{% raw %}x", "never closed"),
        ("{% endif %}", "closes no `if`"),
        ("{% if x %}{% endfor %}", "closes no `for`"),
        ("{% if x %}{% else %}{% elif y %}{% endif %}", "after the `else`"),
        ("{% for x in xs %}{% else %}{% else %}{% endfor %}", "not evaluated here"),
        ("{{ multi }}", "several lines"),
        ("{{ 'bad \\q escape' }}", "escape"),
        ("{% %}", "an empty statement"),
        ("{% if a %}" * 100, "nested deeper than 64"),
    ],
)
def test_what_is_not_evaluated_is_refused_with_its_line(template: str, why: str) -> None:
    """A call, another filter, a macro, an include, a value iterated or indexed, a
    malformed tag: NotRendered naming the reason (never a guess)."""
    with pytest.raises(NotRendered) as raised:
        render("first line\n" + template, {"word": "abc", "multi": "a\nb"})
    assert why in raised.value.reason
    assert raised.value.line == 2


#: Longer than any linear reading on a loaded 2-core machine; far shorter than a blow-up.
HANG_S = 20.0


def test_hostile_templates_are_refused_without_hanging() -> None:
    """Blocks nested without end, parentheses nested deep, a template past the size bound
    and a flood of tags are each refused, never hang: linear work takes a fraction of a second
    here, a blow-up would take minutes, so the bound is a hang's, not a speed target (the
    reading speed is measured by `bench check-speed`)."""
    hostile = [
        "{% if a %}" * 100_000,
        "{{ " + "(" * 10_000 + "a" + ")" * 10_000 + " }}",
        "x" * (MAX_TEMPLATE_CHARS + 1),
        "{{ a }}" * 50_000,
        "{{ " + "a." * 5_000 + "b }}",
        "{%" * 100_000,
    ]
    for template in hostile:
        started = time.perf_counter()
        with pytest.raises(NotRendered):
            render(template)
        assert time.perf_counter() - started < HANG_S


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="{}%#-+ \n'\"()|.=!abifelsndorx", max_size=80))
def test_any_text_renders_or_is_refused_never_a_traceback(text: str) -> None:
    """Whatever the text, the evaluator renders it or raises NotRendered, nothing else."""
    try:
        rendered = render(text)
    except NotRendered:
        return
    assert isinstance(rendered.text, str)


def test_supervisord_config_rendered_from_its_template_joins_the_chain() -> None:
    """The entrypoint runs `supervisord -c $APPCONF/supervisord.conf`, absent here, and the
    image holds supervisord.conf.j2 beside it: the chain goes through the template, rendered
    with its undefined names false (the non-reload branch), its `%(ENV_APPCONF)s` from the
    image's ENV, to the gunicorn config, behind the nginx that passes to its socket."""
    root = REPOS / "chain-jinja-supervisord"
    ((files, fronts, launch),) = chains(root)
    assert files == [
        "Dockerfile",
        "entrypoint.sh",
        "conf/supervisord.conf.j2",
        "conf/gunicorn.conf.py",
    ]
    assert fronts == ["conf/nginx.conf"]
    assert launch.chain[2].line == 8  # the template's gunicorn line, not the reload one
    assert launch.app.workers.value == 3
    assert launch.app.reloads is None
    # `{{ STOP_WAIT | default('30') }}`, read at the template's own line.
    assert launch.app.stop_wait is not None
    assert (launch.app.stop_wait.value, launch.app.stop_wait.at.line) == (30.0, 11)
    result = check_folder(root)
    said = {(n.kind, n.at.line): n.message for n in result.notes if n.at.file.name.endswith(".j2")}
    assert set(said) == {
        ("unresolved-variable", 5),
        ("unresolved-variable", 11),
        ("unresolved-variable", 13),
    }
    assert "`debug`" in said[("unresolved-variable", 5)]
    assert "renders no item" in said[("unresolved-variable", 13)]
    assert not [n for n in result.notes if n.kind == "not-followed"]
    (walk,) = result.discovered
    assert walk.templates == ()  # read through the chain, not skipped


def test_template_the_evaluator_cannot_render_leaves_the_link_not_followed() -> None:
    """A template with a call is not rendered: no server is linked through it, its note
    names the line and the reason, and a template no command names stays skipped."""
    root = REPOS / "chain-jinja-unevaluated"
    result = check_folder(root)
    assert result.apps == ()
    (template,) = [n for n in result.notes if n.kind == "template" and "call" in n.message]
    assert (template.at.file.name, template.at.line) == ("supervisord.conf.jinja", 5)
    assert [n for n in result.notes if n.kind == "not-followed"]
    (walk,) = result.discovered
    assert sorted(p.name for p, _ in walk.templates) == [
        "gunicorn.conf.j2",
        "supervisord.conf.jinja",
    ]


def test_a_config_present_in_the_files_is_read_not_its_template(tmp_path: Path) -> None:
    """When the file a command names is here, its template beside it is not read instead."""
    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.12-slim\nCOPY conf/ /srv/conf/\nCMD ["gunicorn", "-c", '
        '"/srv/conf/gunicorn.conf.py", "app:app"]\n'
    )
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "gunicorn.conf.py").write_text(
        "workers = 2\ntimeout = 30\nbind = ':8000'\n"
    )
    (tmp_path / "conf" / "gunicorn.conf.py.j2").write_text(
        "workers = 7\ntimeout = {{ T }}\nbind = ':8000'\n"
    )
    ((files, _, launch),) = chains(tmp_path)
    assert files == ["Dockerfile", "conf/gunicorn.conf.py"]
    assert launch.app.workers.value == 2


def test_j2_renders_the_config_with_the_images_environment() -> None:
    """start.sh runs `j2 /app/conf/app.ini.j2 > /etc/uwsgi/app.ini` before `uwsgi --ini
    /etc/uwsgi/app.ini`: the ini is the template rendered with the image's ENV (WORKERS=4),
    its `default` used for a name the files do not give, each finding at the template's line."""
    root = REPOS / "chain-jinja-j2"
    ((files, _, launch),) = chains(root)
    assert files == ["Dockerfile", "start.sh", "conf/app.ini.j2"]
    assert launch.app.workers.value == 4
    result = check_folder(root)
    (jitter,) = [f for f in result.findings if f.rule == "max-requests-without-jitter"]
    assert (jitter.at.file.name, jitter.at.line) == ("app.ini.j2", 9)
    said = {n.at.line for n in result.notes if n.at.file.name == "app.ini.j2"}
    assert said == {6, 9}  # UWSGI_HARAKIRI (is defined), UWSGI_MAX_REQUESTS (default)
    (walk,) = result.discovered
    assert [p.name for p, _ in walk.templates] == ["extra.ini.j2"]


def test_j2_without_undefined_is_not_rendered_past_a_name_the_files_do_not_give(
    tmp_path: Path,
) -> None:
    """j2 stops on an undefined name unless given --undefined: a template using one the files
    do not set is not read (its value is the container's, or the render fails there)."""
    (tmp_path / "Dockerfile").write_text(
        'FROM python:3.12-slim\nCOPY . /app\nCMD ["/app/start.sh"]\n'
    )
    (tmp_path / "start.sh").write_text(
        "#!/bin/sh\nj2 /app/app.ini.j2 > /tmp/app.ini\nexec uwsgi --ini /tmp/app.ini\n"
    )
    (tmp_path / "app.ini.j2").write_text(
        "[uwsgi]\nhttp-socket = :8000\nprocesses = {{ WORKERS }}\n"
    )
    result = check_folder(tmp_path)
    (why,) = [n for n in result.notes if n.kind == "template"]
    assert (why.at.file.name, why.at.line) == ("app.ini.j2", 3)
    assert "`WORKERS` is not given by the files" in why.message
    assert all(a.workers.at.file.name != "app.ini.j2" for a in result.apps)


def test_strict_undefined_is_refused_where_used_and_allowed_where_tested() -> None:
    """As StrictUndefined: `is defined` and `default` take an undefined name; printing,
    testing or comparing it stops the render."""
    assert (
        render("{{ a | default('x') }}{% if b is defined %}b{% endif %}", strict=True).flat == "x"
    )
    for used in ("{{ a }}", "{% if a %}{% endif %}", "{% if a == 'x' %}{% endif %}"):
        with pytest.raises(NotRendered, match="`a` is not given"):
            render(used, strict=True)


#: Pieces of Jinja the property test below strings together at random.
_PIECES = [
    "{%",
    "%}",
    "{%-",
    "-%}",
    "{{",
    "}}",
    "{{-",
    "-}}",
    "{#",
    "#}",
    "if ",
    "elif ",
    "else",
    "endif",
    "for x in c",
    "endfor",
    "set y = ",
    "raw",
    "endraw",
    "not ",
    " and ",
    " or ",
    "==",
    "!=",
    "|default('d')",
    " is defined",
    "'x'",
    "a",
    "b",
    "y",
    "x",
    "(",
    ")",
    "\n",
    "  ",
    "text",
    "1",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=18))
def test_whatever_renders_here_renders_the_same_in_jinja(pieces: list[str]) -> None:
    """Any template the evaluator renders, Jinja renders too, to the same text."""
    template = "".join(pieces)
    try:
        mine = render(template, {"a": "1", "b": ""}).flat
    except NotRendered:
        return
    environment = jinja2.Environment(undefined=jinja2.ChainableUndefined, autoescape=False)
    assert environment.from_string(template).render(a="1", b="") == mine


def test_nginx_a_supervisord_program_starts_from_a_template_is_the_front() -> None:
    """The rendered supervisord.conf's `[program:nginx]` runs `nginx -c
    %(ENV_APPCONF)s/nginx/nginx.conf`, absent here while the image holds nginx.conf.jnj beside
    it: that template rendered is the front, its `include`s found in the container's folder of
    the `-c` file (upstreams.conf as it is, site.conf from site.conf.j2, rendered), so the
    gunicorn on the upstream's socket is behind the template's `proxy_pass` line and judged
    against its `proxy_read_timeout` default; its undefined names are noted at their lines."""
    root = REPOS / "chain-jinja-nginx-front"
    ((files, fronts, launch),) = chains(root)
    assert files == ["Dockerfile", "boot.sh", "conf/supervisord.conf.jnj", "conf/app.py"]
    assert fronts == ["conf/nginx/site.conf.j2"]
    assert launch.fronts[0].line == 5
    result = check_folder(root)
    # upstreams.conf, a plain snippet, is also read on its own by the walk.
    (front,) = [n for n in result.nginx if n.file.name != "upstreams.conf"]
    assert front.file == root / "conf" / "nginx" / "nginx.conf.jnj"
    assert [p.relative_to(root).as_posix() for p in front.files] == [
        "conf/nginx/nginx.conf.jnj",
        "conf/nginx/upstreams.conf",
        "conf/nginx/site.conf.j2",
    ]
    assert [s.value for s in front.listens] == ["*:8080"]  # `use_tls` undefined: false
    ((rule, at),) = [
        (f.rule, (f.at.file.name, f.at.line)) for f in result.findings if f.at.file.suffix == ".j2"
    ]
    assert (rule, at) == ("app-timeout-over-read-timeout", ("site.conf.j2", 6))
    said = {(n.at.file.name, n.at.line) for n in result.notes if n.kind == "unresolved-variable"}
    assert {("nginx.conf.jnj", 6), ("site.conf.j2", 2), ("site.conf.j2", 6)} <= said
    (walk,) = result.discovered
    assert walk.templates == ()  # each read as what it renders to


def test_nginx_template_the_evaluator_refuses_stays_skipped(tmp_path: Path) -> None:
    """The same front whose main template calls a function is not rendered: no front is
    linked (the gunicorn is behind none), the template's note names its line, and the
    templates it would have included stay skipped."""
    root = tmp_path / "repo"
    shutil.copytree(REPOS / "chain-jinja-nginx-front", root)
    main = root / "conf" / "nginx" / "nginx.conf.jnj"
    main.write_text(main.read_text().replace("listen 8080;", "listen {{ port() }};"))
    ((files, fronts, _),) = chains(root)
    assert files == ["Dockerfile", "boot.sh", "conf/supervisord.conf.jnj", "conf/app.py"]
    assert fronts == []
    result = check_folder(root)
    assert [n.file.name for n in result.nginx] == ["upstreams.conf"]  # read on its own
    (template,) = [n for n in result.notes if n.kind == "template" and "call" in n.message]
    assert (template.at.file.name, template.at.line) == ("nginx.conf.jnj", 9)
    (walk,) = result.discovered
    assert sorted(p.name for p, _ in walk.templates) == ["nginx.conf.jnj", "site.conf.j2"]


def test_nginx_template_that_includes_itself_is_not_followed(tmp_path: Path) -> None:
    """A rendered nginx config whose include names itself (twice, so each level doubles) is a
    cycle: the front is not followed, said at the program's line, and the run stays quick."""
    root = tmp_path / "repo"
    shutil.copytree(REPOS / "chain-jinja-nginx-front", root)
    site = root / "conf" / "nginx" / "site.conf.j2"
    site.write_text(site.read_text() + "include site.conf;\ninclude site.conf;\n")
    started = time.monotonic()
    result = check_folder(root)
    assert time.monotonic() - started < 10
    assert [n.file.name for n in result.nginx] == ["upstreams.conf"]
    (why,) = [n for n in result.notes if n.kind == "not-followed" and "cycle" in n.message]
    assert (why.at.file.name, why.at.line) == ("supervisord.conf.jnj", 8)


def test_looking_for_a_template_beside_a_file_outside_the_tree_says_nothing(
    tmp_path: Path,
) -> None:
    """A Cloud Foundry manifest checked alone runs `./run.sh` from `path: ../../src`, outside
    the tree it is given: one outside-tree note names `./run.sh`, none the template names
    (`run.sh.jnj`, ...) looked for beside it, which the file never wrote."""
    manifests = tmp_path / "ops" / "manifests"
    manifests.mkdir(parents=True)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "run.sh").write_text("#!/bin/sh\nexec gunicorn -w 2 app:app\n")
    manifest = manifests / "manifest.yaml"
    manifest.write_text("applications:\n- name: app\n  path: ../../src\n  command: ./run.sh\n")
    result = check_files([manifest], machine=MACHINE, env={})
    outside = [n.message for n in result.notes if n.kind == "outside-tree"]
    assert outside, result.notes
    assert all("'./run.sh'" in m for m in outside), outside
