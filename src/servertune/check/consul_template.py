"""consul-template's (and envconsul's) exec mode: the command a config's `exec` block runs.

`consul-template -config /etc/app.hcl` renders the config's templates, then runs the command
of its `exec { command = [...] }` block as its child, forwarding signals to it (consul-template's
docs/modes.md, "Exec Mode"). A program given such a config (`consul-template`, or a base
image's wrapper of it, `run-consul-template -config FILE`) starts that command: the config's
text says so, whatever the program's name.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence

from servertune.check.commands import ConfigFile, FindConfig, Word
from servertune.check.model import Location

__all__ = ["exec_command"]

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


def exec_command(words: Sequence[Word], find_config: FindConfig) -> list[Word] | None:
    """The words the `exec` block of the config `words` give with `-config FILE` runs, each
    at the block's `command` line; None when no config found here holds one."""
    for index, word in enumerate(words[1:], start=1):
        flag, equals, value = word.text.partition("=")
        if flag not in _CONFIG_FLAGS:
            continue
        if not equals:
            value = words[index + 1].text if index + 1 < len(words) else ""
        found = find_config(value, word.at) if value else None
        command = _block_command(found) if found is not None else None
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
