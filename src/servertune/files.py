"""Writing output files all at once or not at all."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

__all__ = ["SpecialFileError", "links_to_nothing", "refuse_special_file", "write_atomically"]

#: What each kind of file that is neither regular nor a directory is called in an error.
_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class SpecialFileError(OSError):
    """The output path names a device, FIFO, socket (or a symlink to one): never replaced."""


def refuse_special_file(path: Path) -> None:
    """Raise SpecialFileError if `path` exists and is neither a regular file nor a directory.

    The atomic rename replaces whatever is at the path: as root, `--out /dev/full` would swap the
    device node for a TOML file, and a FIFO another program reads from would silently vanish.
    A symlink is followed: a link to a regular file is replaced like one (it always was).
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        # A dangling symlink is replaced like a missing file; a missing file is created.
        return
    except OSError:
        return  # unreadable: the write itself reports why
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise SpecialFileError(
        errno.EEXIST, f"{kind} is in the way; only a regular file is ever replaced", str(path)
    )


def write_atomically(files: Mapping[str, str | bytes], directory: Path) -> list[Path]:
    """Write every file or none (text is written as UTF-8), never replacing a special file.

    Every file is first written in full to a temporary name in `directory` (same filesystem, so
    the final rename is atomic). Files about to be replaced are kept under a backup name until
    all renames succeeded; on any failure the new files are removed and the old ones restored.
    """
    # The directories this call creates go again if it fails: nothing is left half-written.
    created = [d for d in (directory, *directory.parents) if not d.exists()]
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except BaseException:
        _remove_empty(created)
        raise
    for name in files:
        # os.replace onto a directory fails with EISDIR or EPERM ("Operation not permitted"):
        # say what is in the way, before anything is written.
        if (directory / name).is_dir():
            raise IsADirectoryError(
                errno.EISDIR, "a directory of that name is in the way", str(directory / name)
            )
        refuse_special_file(directory / name)
    staged: list[tuple[Path, Path]] = []
    backups: list[tuple[Path, Path]] = []
    done: list[Path] = []
    try:
        for name, text in files.items():
            fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
            tmp = Path(tmp_name)
            staged.append((tmp, directory / name))
            data = text.encode() if isinstance(text, str) else text
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            tmp.chmod(0o644)
        for _, final in staged:
            refuse_special_file(final)  # again: it may have appeared while the files were staged
            if final.exists():
                backup = final.with_name(f".{final.name}.bak")
                backup.unlink(missing_ok=True)  # a stale one from an interrupted run
                os.link(final, backup)
                backups.append((backup, final))
        for tmp, final in staged:
            os.replace(tmp, final)
            done.append(final)
    except BaseException:
        restored = {final for _, final in backups}
        for path in done:
            if path not in restored:
                path.unlink(missing_ok=True)
        for backup, final in backups:
            os.replace(backup, final)
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        _remove_empty(created)
        raise
    for backup, _ in backups:
        backup.unlink(missing_ok=True)
    return done


def _remove_empty(directories: list[Path]) -> None:
    """Remove `directories` (deepest first), as far as they are empty."""
    for directory in directories:
        try:
            directory.rmdir()
        except OSError:
            return


def links_to_nothing(path: Path) -> bool:
    """A symbolic link whose target is missing or loops (where mkdir says "File exists" and
    Python 3.11's resolve() raises); False for anything the OS refuses to look at (a name too
    long)."""
    try:
        return path.is_symlink() and not path.exists()
    except OSError:
        return False
