"""Template markers: the lines that make a file a template (Jinja, Helm, Go templates, ERB),
whose rendered text is not in the repository. The walk skips such a file with one note
(`discover`), and a file that names one (a platform's `dockerfile = 'Dockerfile'`) does not
follow it (`platforms`)."""

from __future__ import annotations

import re

__all__ = ["template_line"]

#: Jinja / Helm / Go template markers: `{{ x }}`, `{%- if %}`, `{{- include ... }}`; and ERB's
#: `<%= ENV["PORT"] %>` on one line (the Heroku nginx buildpack's `nginx.conf.erb`).
_TEMPLATE = re.compile(r"\{\{-?\s*[^}]|\{%-?\s*\w|<%[=-]?[^%\n]*%>")


def template_line(text: str, *, dockerfile: bool = False) -> int | None:
    """The first line holding a Jinja / Helm / ERB template marker, None when there is none.

    An expression (`{{ x }}`) on a `#` comment line does not count: rendered or not, it only
    changes the comment (an env file's `# resolve {{user.<key>}} placeholders` is not a
    template), whereas a statement (`{% if %}`) steers the lines after it wherever it stands.
    In a Dockerfile (`dockerfile`), a marker in a `RUN` instruction's shell text does not
    count either: the build writes it into a file (`RUN sed 's/<head>/<head>{% block head
    %}/' ...` makes a Django template), and the Dockerfile itself is what it says.
    """
    running = _run_lines(text) if dockerfile else frozenset()
    for match in _TEMPLATE.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        if match.group().startswith("{{") and text[start : match.start()].lstrip().startswith("#"):
            continue
        line = text.count("\n", 0, match.start()) + 1
        if line not in running:
            return line
    return None


def _run_lines(text: str) -> frozenset[int]:
    """The lines (1-based) of a Dockerfile's `RUN` instructions, their continuations included."""
    found: set[int] = set()
    inside = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not inside:
            inside = line.lstrip().upper().startswith("RUN ")
        if inside:
            found.add(number)
            inside = line.rstrip().endswith("\\")
    return frozenset(found)
