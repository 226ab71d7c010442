"""The names a repository is known by: the evidence that an image name is the repository's own.

An image named like the repository (`ghcr.io/paperless-ngx/paperless-ngx` in paperless-ngx) is
taken to be built from its own Dockerfile. The evidence is the repository's name, and only its
name: the folder it is checked out in, and, when that folder is a git repository, the name its
`origin` remote gives it (a checkout in a folder named otherwise). Never an owner's words, nor
one word of a longer folder name: a folder `open-webui+pipelines` holds the repository
`pipelines`, and `ghcr.io/open-webui/open-webui` is another project's image.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from servertune.check import memo

__all__ = ["origin_name", "repository_names", "words"]

#: How long `git remote get-url` may take before the origin's name is left unknown.
_GIT_TIMEOUT_SECONDS = 5.0


def words(name: str) -> list[str]:
    """The words of a name in lower case (`TandoorRecipes+recipes`: `tandoorrecipes`,
    `recipes`)."""
    return [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]


def repository_names(root: Path) -> tuple[str, ...]:
    """The repository's names as written: its folder's name, then its git origin's repository
    name when it has one, read once a run."""

    def names() -> tuple[str, ...]:
        origin = origin_name(root)
        found = (root.absolute().name, *((origin,) if origin is not None else ()))
        return tuple(dict.fromkeys(n for n in found if words(n)))

    return memo.recall(memo.run_table("repository names"), str(root.absolute()), names)


def origin_name(root: Path) -> str | None:
    """The repository name of `git remote get-url origin` (`pipelines` of
    `git@github.com:open-webui/pipelines.git`) when `root` is a git repository's top (a `.git`
    folder, or the `.git` file of a worktree), None otherwise or when git cannot say."""
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "remote", "get-url", "origin"],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):  # no git here, or it hung
        return None
    url = done.stdout.strip().rstrip("/")
    if done.returncode != 0 or not url:
        return None
    # https://host/owner/name.git, git@host:owner/name.git, /srv/git/name: the last part.
    last = re.split(r"[/:\\]", url)[-1]
    return last.removesuffix(".git") or None
