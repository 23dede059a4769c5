"""Owner-only files under a storage directory, reached without ever following a symlink inside it.

Every path below the storage directory is walked one component at a time with ``O_NOFOLLOW`` relative to the
descriptor of its parent, so a symlink planted anywhere inside (a session directory, an ``agents`` directory, a
log, a lock) is refused instead of followed, and nothing is ever read or written outside the storage directory.
Files are opened with ``O_NONBLOCK`` and checked with ``fstat`` before use, so a FIFO or a device planted in place
of a session file is refused at once instead of hanging the process. The storage directory itself may be a
symlink: the operator chose it.
"""

import errno
import json
import os
import re
import secrets
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..types.exceptions import InvalidStorageDirError, SessionCorruptError

DIR_MODE = 0o700
FILE_MODE = 0o600
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_SYMLINK_HINT = "session files must be regular files, not symlinks; nothing was read or written through it"


# A URI with a scheme (``postgresql://...``), or libpq's ``keyword=value`` form starting with one of its keywords.
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_CONNINFO = re.compile(
    r"\s*(dbname|host|hostaddr|port|user|password|passfile|service|options|sslmode|application_name|"
    r"connect_timeout|target_session_attrs)\s*="
)


def storage_root(storage_dir: str | os.PathLike[str]) -> Path:
    """Return ``storage_dir`` as a path, refusing what is plainly a database DSN or a URL.

    A DSN given where a directory is expected would otherwise become a directory named after it in the current
    directory, and the sessions meant for the database would silently live there.

    Raises:
        InvalidStorageDirError: ``storage_dir`` is empty, or a URL or a ``keyword=value`` connection string.
    """
    text = os.fspath(storage_dir)
    if not isinstance(text, str) or not text.strip():
        raise InvalidStorageDirError(storage_dir, "the storage directory must be a non-empty path")
    if _URI.match(text) or _CONNINFO.match(text):
        raise InvalidStorageDirError(
            storage_dir,
            "this is a database connection string or a URL, not a directory. For PostgreSQL use "
            "strandslike.session.postgres.PostgresSessionManager(session_id, dsn=...) (or --dsn / "
            "--session-dsn on the command line); for a directory whose name really starts like this, "
            "pass its absolute path",
        )
    return Path(text)


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


class StorageDir:
    """A storage directory whose contents are reached through directory descriptors only.

    Attributes:
        root: The storage directory, as given.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, parts: Sequence[str]) -> Path:
        """Return the path of ``parts`` below the root, for messages."""
        return self.root.joinpath(*parts)

    def open_dir(self, parts: Sequence[str], *, create: bool = False, durable: bool = False) -> int | None:
        """Open the directory ``root/parts...``; return its descriptor, or None if it does not exist.

        Args:
            parts: The path components below the root.
            create: Create missing directories (owner-only) instead of returning None.
            durable: With ``create``, ``fsync`` the parent of each directory created, so that its name survives a
                machine crash (POSIX makes a new directory entry durable only through its parent).

        Raises:
            SessionCorruptError: A component is a symlink or not a directory.
        """
        try:
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            if not create:
                return None
            ensure_dir(self.root)
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except NotADirectoryError:
            raise SessionCorruptError(str(self.root), "is not a directory; pass a storage directory") from None
        for depth, name in enumerate(parts):
            try:
                child, created = _open_child_dir(fd, name, create)
                if created and durable:
                    os.fsync(fd)
            except OSError as exc:
                os.close(fd)
                raise _dir_error(self.path(parts[: depth + 1]), exc) from None
            os.close(fd)
            if child is None:
                return None
            fd = child
        return fd

    @contextmanager
    def directory(self, parts: Sequence[str], *, create: bool = False, durable: bool = False) -> Iterator[int | None]:
        """Open ``root/parts...`` for the duration of a ``with`` block (None if it does not exist); see `open_dir`."""
        fd = self.open_dir(parts, create=create, durable=durable)
        try:
            yield fd
        finally:
            if fd is not None:
                os.close(fd)


def _open_child_dir(parent: int, name: str, create: bool) -> tuple[int | None, bool]:
    """Open (or, with ``create``, make) the directory ``name`` in ``parent``; return it and whether it was made."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent), False
    except FileNotFoundError:
        if not create:
            return None, False
    created = True
    try:
        os.mkdir(name, DIR_MODE, dir_fd=parent)
    except FileExistsError:
        created = False  # a concurrent creator made it (and syncs its parent)
    return os.open(name, _DIR_FLAGS, dir_fd=parent), created


def _dir_error(path: Path, exc: OSError) -> SessionCorruptError:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        try:
            link = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            link = exc.errno == errno.ELOOP
        if link:
            return SessionCorruptError(str(path), f"is a symbolic link; {_SYMLINK_HINT}")
        return SessionCorruptError(str(path), "is not a directory; remove it or move it out of the storage directory")
    return SessionCorruptError(str(path), f"cannot be opened ({exc.strerror})")


def open_file(dir_fd: int, name: str, path: Path, flags: int, *, writing: bool = False) -> int | None:
    """Open the regular file ``name`` in ``dir_fd``; return its descriptor, or None if it does not exist.

    Args:
        dir_fd: The directory holding the file.
        name: The file's name.
        path: Its full path, for messages.
        flags: ``os.O_RDONLY``, ``os.O_RDWR | os.O_CREAT``, ...; ``O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC`` are added.
        writing: The file will be written: also refuse a file with other hard links (it could be anyone's).

    Raises:
        SessionCorruptError: It is a symlink, a FIFO, a directory or another non-regular file, or unreadable.
    """
    try:
        fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, FILE_MODE, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SessionCorruptError(str(path), f"is a symbolic link; {_SYMLINK_HINT}") from None
        if exc.errno == errno.EISDIR:
            raise SessionCorruptError(str(path), "is a directory, not a session file; remove it") from None
        detail = f"cannot be opened ({exc.strerror}); session files must be regular files, not symlinks"
        raise SessionCorruptError(str(path), detail) from None
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        os.close(fd)
        raise SessionCorruptError(str(path), "is not a regular file; remove it or move it out of the session")
    if writing and status.st_nlink > 1:
        os.close(fd)
        raise SessionCorruptError(
            str(path), f"has {status.st_nlink} hard links; a session file must have one. Nothing was written"
        )
    return fd


def read_all(fd: int) -> bytes:
    """Read a file from its start to its end."""
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def write_all(fd: int, payload: bytes) -> None:
    """Write ``payload`` with as few ``write`` calls as the kernel allows."""
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_regular(dir_fd: int, name: str, path: Path) -> tuple[bytes, os.stat_result] | None:
    """Read a regular file in full, or return None if it does not exist.

    Raises:
        SessionCorruptError: See `open_file`.
    """
    fd = open_file(dir_fd, name, path, os.O_RDONLY)
    if fd is None:
        return None
    try:
        return read_all(fd), os.fstat(fd)
    finally:
        os.close(fd)


def read_json(dir_fd: int, name: str, path: Path) -> Any:
    """Read a JSON file, or return None if it does not exist.

    Raises:
        SessionCorruptError: The file is not a regular file, unreadable, or not valid JSON.
    """
    found = read_regular(dir_fd, name, path)
    if found is None:
        return None
    try:
        return json.loads(found[0])
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise SessionCorruptError(str(path), f"is not valid JSON ({type(exc).__name__}: {exc})") from None


def write_atomic(dir_fd: int, name: str, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to a temporary file beside ``name``, flush it, and rename it over ``name``.

    A crash at any instant leaves either the old file or the new one, never a mix.
    """
    temp = f".{name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE, dir_fd=dir_fd)
    try:
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(temp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        raise
    if durable:
        os.fsync(dir_fd)


def write_json_atomic(dir_fd: int, name: str, data: Any, *, durable: bool = True) -> None:
    """Write ``data`` as indented JSON with `write_atomic`."""
    write_atomic(dir_fd, name, json.dumps(data, ensure_ascii=False, indent=2).encode(), durable=durable)


def entries(dir_fd: int) -> list[tuple[str, os.stat_result]]:
    """Return the names in a directory with their ``lstat``, sorted (symlinks are not followed)."""
    found = []
    for name in sorted(os.listdir(dir_fd)):
        try:
            found.append((name, os.stat(name, dir_fd=dir_fd, follow_symlinks=False)))
        except FileNotFoundError:
            continue  # removed while listing
    return found


def read_json_path(path: Path) -> Any:
    """Read a JSON file by path (not following a symlink in its last component), or None if it does not exist.

    For files outside a storage directory (a strands-agents session being imported).

    Raises:
        SessionCorruptError: The file is not a regular file, unreadable, or not valid JSON.
    """
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        return read_json(dir_fd, path.name, path)
    finally:
        os.close(dir_fd)
