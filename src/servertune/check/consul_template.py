"""consul-template's (and envconsul's) exec mode: the command a config's `exec` block runs.

`consul-template -config /etc/app.hcl` renders the config's templates, then runs the command
of its `exec { command = [...] }` block as its child, forwarding signals to it (consul-template's
docs/modes.md, "Exec Mode"). A program given such a config (`consul-template`, or a base
image's wrapper of it, `run-consul-template -config FILE`) starts that command: the config's
text says so, whatever the program's name. The config's `template { source = ...
destination = ... }` blocks are rendered before the command runs, so a config the command
names by a destination is that template's rendering: the source is read for it (a `.ctmpl` read for
links only, `value_templates.read_links`; metabrainz/listenbrainz-server's `uwsgi
/etc/uwsgi/uwsgi.ini`, rendered from `uwsgi.ini.ctmpl`).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence

from servertune.check.commands import ConfigFile, FindConfig, Word
from servertune.check.model import Location

__all__ = ["exec_command", "rendering"]

#: The options that name consul-template's and envconsul's config file.
_CONFIG_FLAGS = ("-config", "--config")
#: An `exec {` block's start, at a line's start (HCL).
_EXEC_BLOCK = re.compile(r"^[ \t]*exec[ \t]*\{", re.M)
#: The block's `command = [...]` (a list of strings) or `command = "..."`.
_COMMAND = re.compile(
    r"^[ \t]*command[ \t]*=[ \t]*(?:\[(?P<list>[^\]]*)\]|\"(?P<string>(?:[^\"\\]|\\.)*)\")",
    re.M,
)
_STRING = re.compile(r"\"((?:[^\"\\]|\\.)*)\"")
#: A `template {` block's start, and its `source` / `destination` strings.
_TEMPLATE_BLOCK = re.compile(r"^[ \t]*template[ \t]*\{", re.M)
_PATH = re.compile(r"^[ \t]*(?P<key>source|destination)[ \t]*=[ \t]*\"(?P<path>[^\"]+)\"", re.M)


def exec_command(words: Sequence[Word], find_config: FindConfig) -> list[Word] | None:
    """The words the `exec` block of the config `words` give with `-config FILE` runs, each
    at the block's `command` line; None when no config found here holds one."""
    for found in _configs(words, find_config):
        command = _block_command(found)
        if command is not None:
            return command
    return None


def _block_command(config: ConfigFile) -> list[Word] | None:
    """The command of `config`'s first `exec` block, as words; a string is split as the
    shell splits it (consul-template runs it through `sh -c`)."""
    block = _EXEC_BLOCK.search(config.text)
    if block is None:
        return None
    end = config.text.find("\n}", block.end())
    body = config.text[block.end() : end if end >= 0 else len(config.text)]
    found = _COMMAND.search(body)
    if found is None:
        return None
    line = config.first_line + config.text.count("\n", 0, block.end() + found.start())
    at = Location(config.file, line)
    try:
        if found["list"] is not None:
            texts = [json.loads(f'"{s}"') for s in _STRING.findall(found["list"])]
        else:
            texts = shlex.split(json.loads(f'"{found["string"]}"'))
    except ValueError:
        return None
    return [Word(text, at) for text in texts] or None


def rendering(words: Sequence[Word], find_config: FindConfig) -> FindConfig:
    """`find_config` for the command of the config `words` give with `-config FILE`: a
    destination of one of its `template` blocks is found as the block's source."""
    config = next((c for c in _configs(words, find_config)), None)
    rendered = _rendered(config.text) if config is not None else {}
    if not rendered:
        return find_config

    def find(wanted: str, at: Location | None = None, /) -> ConfigFile | None:
        source = rendered.get(wanted)
        found = find_config(source, at) if source is not None else None
        return found if found is not None else find_config(wanted, at)

    return find


def _configs(words: Sequence[Word], find_config: FindConfig) -> list[ConfigFile]:
    """The configs found here that `words` name with `-config FILE`, in order."""
    found: list[ConfigFile] = []
    for index, word in enumerate(words[1:], start=1):
        flag, equals, value = word.text.partition("=")
        if flag not in _CONFIG_FLAGS:
            continue
        if not equals:
            value = words[index + 1].text if index + 1 < len(words) else ""
        config = find_config(value, word.at) if value else None
        if config is not None and _EXEC_BLOCK.search(config.text):
            found.append(config)
    return found


def _rendered(text: str) -> dict[str, str]:
    """Each `template` block's destination, with the source it is rendered from."""
    found: dict[str, str] = {}
    for block in _TEMPLATE_BLOCK.finditer(text):
        end = text.find("\n}", block.end())
        paths = {
            m["key"]: m["path"]
            for m in _PATH.finditer(text[block.end() : end if end >= 0 else len(text)])
        }
        if "source" in paths and "destination" in paths:
            found.setdefault(paths["destination"], paths["source"])
    return found
