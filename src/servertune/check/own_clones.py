"""An image that `git clone`s its own repository holds the repository's files where it cloned it.

Some images build from no context at all: `RUN git clone --branch main https://github.com/
acme/shop.git` under `WORKDIR /app`, then `ENTRYPOINT ["/app/shop/docker/entrypoint.sh"]`
(JaneliaSciComp/SAM_service's docker/Dockerfile). The entrypoint is the checked repository's own
`docker/entrypoint.sh`, at the commit the build clones: the repository's file stands for it, as
a `COPY . /app/shop` would. Only a clone whose URL names the repository itself (`repository_names`:
the checkout's folder or its `origin` remote) is that evidence; a clone of any other project
(`paintera-sam` beside it) holds files that are not here. A `cd` earlier in the same RUN moves
where the clone lands, and is not followed.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from pathlib import Path

from servertune.check.repository_names import repository_names, words
from servertune.check.run_folders import clone_target

__all__ = ["own_clone_folders"]


def own_clone_folders(text: str, workdir: str, root: Path) -> list[str]:
    """The absolute image folders a RUN's text clones the repository at `root` into: `git
    clone [options] URL [DIR]`, DIR (else the URL's last part without `.git`) relative to
    `workdir`. A part after a `cd`, or with a variable in its URL or DIR, is not read."""
    names = {"".join(words(name)) for name in repository_names(root)}
    folders: list[str] = []
    for part in re.split(r"&&|\|\||;|\n", text):
        try:
            argv = shlex.split(part, comments=True)
        except ValueError:
            continue
        if argv[:1] == ["cd"]:
            break  # where later clones land depends on that folder
        target = clone_target(argv)
        if target is None or any("$" in word for word in target):
            continue
        url, folder = target
        last = re.split(r"[/:]", url.rstrip("/"))[-1].removesuffix(".git")
        if "".join(words(last)) not in names or not _is_url(url):
            continue
        folders.append(posixpath.normpath(posixpath.join(workdir, folder)))
    return folders


def _is_url(word: str) -> bool:
    """A remote repository's address (`https://...`, `git@host:owner/name`, `ssh://...`)."""
    return bool(re.match(r"\A(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", word))
