"""Template markers: the lines that make a file a template (Jinja, Helm, Go templates, ERB),
whose rendered text is not in the repository. The walk skips such a file with one note
(`discover`), and a file that names one (a platform's `dockerfile = 'Dockerfile'`) does not
follow it (`platforms`)."""

from __future__ import annotations

import re

__all__ = ["SHEBANG", "percent_line", "placeholder_line", "template_line"]

#: A shebang of a shell, or of execline (s6-overlay's `run` scripts: `#!/command/execlineb -P`,
#: a chain of words the script reader follows to the program it ends in).
SHEBANG = re.compile(r"#!.*\b((ba|da|z|k)?sh|execlineb)\b")

#: Jinja / Helm / Go template markers: `{{ x }}`, `{%- if %}`, `{{- include ... }}`; and ERB's
#: `<%= ENV["PORT"] %>` on one line (the Heroku nginx buildpack's `nginx.conf.erb`).
_TEMPLATE = re.compile(r"\{\{-?\s*[^}]|\{%-?\s*\w|<%[=-]?[^%\n]*%>")


#: An OpenShift Template's non-string parameter reference, `${{NAME}}`: no spaces, a name
#: alone, as `oc process` replaces it; data of the Template, not a Jinja expression.
_PARAMETER = re.compile(r"\$\{\{[A-Za-z_][A-Za-z0-9_]*\}\}")


def template_line(text: str, *, dockerfile: bool = False) -> int | None:
    """The first line holding a Jinja / Helm / ERB template marker, None when there is none.

    An expression (`{{ x }}`) on a `#` comment line does not count: rendered or not, it only
    changes the comment (an env file's `# resolve {{user.<key>}} placeholders` is not a
    template), whereas a statement (`{% if %}`) steers the lines after it wherever it stands.
    In a Dockerfile (`dockerfile`), a marker in a `RUN` instruction's shell text does not
    count either: the build writes it into a file (`RUN sed 's/<head>/<head>{% block head
    %}/' ...` makes a Django template), and the Dockerfile itself is what it says. In a
    shell script (by its shebang), a marker inside a shell quote does not count: it is text
    a command is given (`sed -i 's|{{'$KEY'}}|...|' /config/settings.py` fills a placeholder
    of another file), whereas a template's marker stands where the shell reads words.
    In any other file, a Go template's field or variable (`'{{.Name}}'`, `"{{ $labels.x }}"`)
    inside a quoted value is data: a template another program fills at run time (docker's
    logging `tag`, an Alertmanager subject; internetstandards/Internet.nl), not a marker of
    this file. Helm's objects (`{{ .Values.x }}`), a Jinja expression (`"{{ image }}"`, an
    Ansible variable) and a statement (`{% if %}`, `{{- range }}`) still mark a template.
    """
    running = _run_lines(text) if dockerfile else frozenset()
    shell = bool(SHEBANG.match(text))
    quoted: tuple[tuple[int, int], ...] | None = None  # read once, at the first marker
    for match in _TEMPLATE.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        if _PARAMETER.match(text, max(match.start() - 1, 0)):
            continue  # an OpenShift Template's `${{NAME}}` parameter (`openshift_templates`)
        if match.group().startswith("{{") and text[start : match.start()].lstrip().startswith("#"):
            continue
        if shell:
            quoted = _quoted_spans(text) if quoted is None else quoted
            if any(begin <= match.start() < end for begin, end in quoted):
                continue
        elif _go_action(text, match.start()) and _in_quotes(text[start : match.start()]):
            continue
        line = text.count("\n", 0, match.start()) + 1
        if line not in running:
            return line
    return None


#: A Go template action (`{{.Name}}`, `{{ $labels.instance }}`, `{{index .Container.Labels
#: "x"}}`): a field or variable standing as a word of it, which Jinja's syntax has no use for.
_GO_ACTION = re.compile(r"\{\{-?(?P<body>[^{}\n]*?)-?\}\}")
_GO_WORD = re.compile(r"(?:\A|[\s(])(?:\$?\.[A-Za-z_]|\$[A-Za-z_])")
#: The objects Helm gives its charts' templates (the Helm docs' "Built-in Objects").
_HELM_OBJECT = re.compile(r"\$?\.(?:Values|Release|Chart|Capabilities|Template|Files|Subcharts)\b")


def _go_action(text: str, at: int) -> bool:
    """Whether the marker at `at` is a Go template action that is not Helm's."""
    action = _GO_ACTION.match(text, at)
    return (
        action is not None
        and bool(_GO_WORD.search(action["body"]))
        and not _HELM_OBJECT.search(action["body"])
    )


def _in_quotes(before: str) -> bool:
    """Whether a line's text `before` a point leaves it inside a quoted string: an odd number of
    `'` or `"` opened before it, the other quote inside counting as text (YAML's and dotenv's
    quotes; a doubled `''` in YAML closes and reopens, which leaves the count's parity)."""
    quote = ""
    escaped = False
    for char in before:
        if escaped:
            escaped = False
        elif char == "\\" and quote == '"':
            escaped = True
        elif quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
    return bool(quote)


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


def _quoted_spans(text: str) -> tuple[tuple[int, int], ...]:
    """The (start, end) offsets of a shell script's quoted strings, as sh reads them: `'...'`
    (nothing escapes inside), `"..."` (a backslash escapes), a backslash escaping one character
    outside, a `#` starting a word commenting out the rest of the line."""
    spans: list[tuple[int, int]] = []
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char == "\\":
            index += 2
        elif char == "#" and (index == 0 or text[index - 1] in " \t\n;&|("):
            newline = text.find("\n", index)
            index = size if newline < 0 else newline
        elif char in "'\"":
            end = text.find("'", index + 1) if char == "'" else _double_end(text, index + 1)
            end = size if end < 0 else end
            spans.append((index, end))
            index = end + 1
        else:
            index += 1
    return tuple(spans)


#: A line that is nothing but a shell-style placeholder (`${POSTGRES_EXPOSED_PORT}`,
#: `$EXTRA_VOLUMES`), which a script substitutes (envsubst) with whole YAML lines.
_WHOLE_PLACEHOLDER = re.compile(r"^[ \t]*\$(?:\{\w+(?:[:?+-][^}\n]*)?\}|\w+)[ \t]*$", re.M)


#: A `%`-placeholder a script's `%` substitution fills (`processes = %nb_processes`,
#: `/var/log/nginx/%{hostname}-access.log`): a name of three characters or more starting
#: lowercase, or any name in braces. uWSGI's magic variables are one letter (`%n`, `%d`) or
#: `%(name)`, strftime's and printf's one letter (`%Y`, `%s`), a URL's escape two hex digits
#: (`%2F`, `%e2`): none is this.
_PERCENT = re.compile(r"(?<![%\w])%(?:\{[A-Za-z_]\w*\}|[a-z_][a-z0-9_]{2,})")


def percent_line(text: str) -> int | None:
    """The first line outside a `#` comment holding a `%`-placeholder (`_PERCENT`), None when
    there is none: in a `.tpl` / `.tmpl` file, the mark of a template a script renders
    (modoboa/modoboa-installer's `files/uwsgi/modoboa.ini.tpl`)."""
    for number, line in enumerate(text.splitlines(), 1):
        if not line.lstrip().startswith(("#", ";")) and _PERCENT.search(line):
            return number
    return None


def placeholder_line(text: str) -> int | None:
    """The first line of YAML `text` that is only a `${VAR}` placeholder, when the YAML does
    not parse at that line or the next (a compose file a script renders before it is YAML:
    rdmorganiser/rdmo-docker-compose's `dc_master.yaml`); None otherwise. A placeholder the
    YAML reads as text (a line of a block scalar's script) is not a template's."""
    import yaml

    lines = [text.count("\n", 0, m.start()) + 1 for m in _WHOLE_PLACEHOLDER.finditer(text)]
    if not lines:
        return None
    try:
        for _ in yaml.compose_all(text, Loader=yaml.SafeLoader):
            pass
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        failed = mark.line + 1 if mark is not None else 0
        return lines[0] if any(failed in (line, line + 1) for line in lines) else None
    except yaml.YAMLError:
        return None
    return None


def _double_end(text: str, index: int) -> int:
    """The offset of the `"` that closes a double-quoted string whose text starts at `index`
    (the length of `text` when none does). A `$(...)` inside is a command of its own, whose
    quotes do not close the string (`"x $(docker ps --format "{{.ID}}") y"`,
    SEED-platform/seed)."""
    size = len(text)
    while index < size and text[index] != '"':
        if text[index] == "\\":
            index += 2
        elif text.startswith("$(", index):
            index = _substitution_end(text, index + 2) + 1
        else:
            index += 1
    return min(index, size)


def _substitution_end(text: str, index: int) -> int:
    """The offset of the `)` that closes a `$(` whose command starts at `index`, skipping
    quoted strings and nested parentheses (the length of `text` when none does)."""
    size, depth = len(text), 1
    while index < size:
        char = text[index]
        if char == "\\":
            index += 1
        elif char == "'":
            end = text.find("'", index + 1)
            index = size if end < 0 else end
        elif char == '"':
            index = _double_end(text, index + 1)
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return size
