"""Owner-only files and atomic snapshot writes."""

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from ..types.exceptions import SessionCorruptError

DIR_MODE = 0o700
FILE_MODE = 0o600


def ensure_dir(path: Path) -> None:
    """Create ``path`` and any missing parents, each readable by its owner only.

    ``Path.mkdir(parents=True)`` would give the parents the umask's mode, so each level is created here.
    """
    missing = []
    while not path.is_dir():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        directory.mkdir(mode=DIR_MODE, exist_ok=True)


def fsync_dir(path: Path) -> None:
    """Flush a directory entry change (a create or rename) to disk."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_json_atomic(path: Path, data: Any, *, durable: bool = True) -> None:
    """Write ``data`` as JSON to a temporary file beside ``path``, flush it, and rename it over ``path``.

    A crash at any instant leaves either the old file or the new one, never a mix.
    """
    ensure_dir(path.parent)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=2)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    if durable:
        fsync_dir(path.parent)


def read_regular_file(path: Path) -> tuple[bytes, os.stat_result] | None:
    """Read a session file in full, or return None if it does not exist.

    Raises:
        SessionCorruptError: The path is a symlink, a directory or another non-regular file, or unreadable.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        detail = f"cannot be opened ({exc.strerror}); session files must be regular files, not symlinks"
        raise SessionCorruptError(str(path), detail) from None
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        os.close(fd)
        raise SessionCorruptError(str(path), "is not a regular file; remove it or move it out of the session")
    with os.fdopen(fd, "rb") as handle:
        return handle.read(), status


def read_json(path: Path) -> Any:
    """Read a JSON file, or return None if it does not exist.

    Raises:
        SessionCorruptError: The file is not a regular file, unreadable, or not valid JSON.
    """
    found = read_regular_file(path)
    if found is None:
        return None
    try:
        return json.loads(found[0])
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SessionCorruptError(str(path), f"is not valid JSON ({exc})") from None
