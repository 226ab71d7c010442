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
from pathlib import Path

from servertune.check import memo

__all__ = ["origin_name", "origin_owner", "repository_names", "words"]

#: A git config larger than this is no repository's own (git writes a few hundred bytes).
_CONFIG_MAX_BYTES = 1 << 20


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
    """The repository name of the `origin` remote's url (`pipelines` of
    `git@github.com:open-webui/pipelines.git`) when `root` is a git repository's top (a `.git`
    folder, or the `.git` file of a worktree), None otherwise.

    Read from the repository's own config file, not by running git: check runs nothing of a
    repository it reads, and a config can name programs for git to start."""
    config = _git_config(root)
    if config is None:
        return None
    url = _origin_url(config)
    if not url:
        return None
    # https://host/owner/name.git, git@host:owner/name.git, /srv/git/name: the last part.
    last = re.split(r"[/:\\]", url.rstrip("/"))[-1]
    return last.removesuffix(".git") or None


def origin_owner(root: Path) -> str | None:
    """The owner part of the `origin` remote's url (`open-webui` of
    `git@github.com:open-webui/pipelines.git`), None when `root` has no origin or its url
    names no owner (`/srv/git/name`)."""
    config = _git_config(root)
    url = _origin_url(config) if config is not None else None
    if not url or not re.match(r"\A(?:[a-z+]+://|[\w.-]+@)", url):
        return None
    parts = [p for p in re.split(r"[/:\\]", url.rstrip("/")) if p]
    return parts[-2] if len(parts) >= 3 else None


#: A config section's header (`[remote "origin"]`) and a `key = value` line, as git writes them.
_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_URL = re.compile(r"^\s*url\s*=\s*(.*?)\s*$", re.IGNORECASE)


def _git_config(root: Path) -> str | None:
    """The text of the repository's config: `.git/config`, or for a worktree (`.git` a file
    saying `gitdir: ...`) the config of the repository it belongs to (its `commondir`)."""
    dot_git = root / ".git"
    try:
        if dot_git.is_file():
            line = dot_git.read_text(encoding="utf-8", errors="replace")[:4096].strip()
            if not line.startswith("gitdir:"):
                return None
            git_dir = (root / line.removeprefix("gitdir:").strip()).resolve()
            common = git_dir / "commondir"
            if common.is_file():
                git_dir = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
            dot_git = git_dir
        config = dot_git / "config"
        if not config.is_file() or config.stat().st_size > _CONFIG_MAX_BYTES:
            return None
        return config.read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None


def _origin_url(config: str) -> str | None:
    """The first `url` of the `[remote "origin"]` section, unquoted."""
    inside = False
    for line in config.splitlines():
        section = _SECTION.match(line)
        if section is not None:
            inside = section[1].lower() == "remote" and section[2] == "origin"
            continue
        url = _URL.match(line) if inside else None
        if url is not None:
            return url[1].strip('"') or None
    return None
