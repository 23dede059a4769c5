"""A claim on one log file of the file store: the ``flock``'ed lock file, the log's descriptor, where it ends.

The store (`_file_store`) takes claims and appends under them; this module keeps what a claim holds and the
operations that check, repair and release it:

- a claim is an exclusive, non-blocking ``flock`` on the log's ``lock`` file; it dies with its process, and is
  released with ``LOCK_UN`` (closing alone would leave it to a child forked meanwhile holding a copy);
- a child forked without exec drops the claims it inherits at once (closing, never unlocking), so nothing in it
  can free or keep the parent's claim;
- before an append, the claim checks that its lock file and log are still the ones it claimed and that nobody
  wrote the log without the claim;
- the first append of a claim cuts a torn tail and restores a lost final newline, and logs each repair.
"""

import fcntl
import logging
import os
import stat
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..types.exceptions import SessionConflictError
from ._files import write_all
from .session_repository import LogRef

logger = logging.getLogger(__name__)

HELD = "another process is running this agent"
STALE = "the session was changed by another process since this agent loaded it"


@dataclass(eq=False)
class FileClaim:
    """What a claim holds: the log's directory, the flock'ed lock file, and where the log ends."""

    dir_fd: int
    lock_fd: int
    lock_ino: int
    path: Path
    name: str
    log_fd: int | None = None
    ino: int = 0
    size: int = 0  # the file's size as this claim knows it
    record_end: int = 0
    has_records: bool = False
    newline_ok: bool = True
    carried: list[dict[str, Any]] | None = None  # records of an older format, rewritten by the next append
    legacy_file: tuple[list[str], str] | None = None  # an earlier version's state file, removed once carried over
    released: bool = False

    def __del__(self) -> None:
        # A claim dropped without release_log (its holder's code failed) must not lock the log for the life of a
        # long-running process.
        try:
            release(self)
        except Exception:  # at interpreter exit os may be gone; the process is ending anyway
            pass


# The claims this process holds. A child forked without exec (multiprocessing's default start method) inherits
# their descriptors, and an flock lives as long as any copy: the child closes its copies at once and marks the
# claims released, so that nothing in the child (release_log, garbage collection) can unlock the parent's claim.
_HELD_CLAIMS: "weakref.WeakSet[FileClaim]" = weakref.WeakSet()


def _drop_inherited_claims() -> None:
    for claim in list(_HELD_CLAIMS):
        claim.released = True
        for fd in (claim.lock_fd, claim.log_fd, claim.dir_fd):
            if fd is not None:
                try:
                    os.close(fd)  # closing (never LOCK_UN) drops the child's copy and leaves the parent's claim
                except OSError:
                    pass
    _HELD_CLAIMS.clear()


os.register_at_fork(after_in_child=_drop_inherited_claims)


def hold(claim: FileClaim) -> None:
    """Register a claim just taken (so a forked child drops it)."""
    _HELD_CLAIMS.add(claim)


def release(claim: FileClaim) -> None:
    """Unlock and close everything a claim holds (idempotent)."""
    if claim.released:
        return
    claim.released = True
    _HELD_CLAIMS.discard(claim)
    try:
        fcntl.flock(claim.lock_fd, fcntl.LOCK_UN)  # a forked child holding a copy of the descriptor must not keep it
    finally:
        os.close(claim.lock_fd)
        if claim.log_fd is not None:
            os.close(claim.log_fd)
        os.close(claim.dir_fd)


def claimed_now(dir_fd: int) -> bool:
    """Whether some process holds the claim of the log in ``dir_fd`` at this instant (without keeping any lock)."""
    try:
        fd = os.open("lock", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def check_still_held(ref: LogRef, claim: FileClaim) -> None:
    """Refuse to append under a claim that was released, or whose lock file or log was replaced or written.

    Raises:
        SessionConflictError: The claim is void; nothing may be written under it.
    """
    if claim.released:
        raise SessionConflictError(ref.session_id, ref.owner_id, "this claim was released; nothing was written")
    try:
        lock_now = os.stat("lock", dir_fd=claim.dir_fd, follow_symlinks=False).st_ino
    except FileNotFoundError:
        lock_now = -1
    changed = lock_now != claim.lock_ino
    if claim.log_fd is not None and not changed:
        try:
            entry = os.stat(claim.name, dir_fd=claim.dir_fd, follow_symlinks=False).st_ino
        except FileNotFoundError:
            entry = -1
        changed = entry != claim.ino or os.fstat(claim.log_fd).st_size != claim.size
    if changed:
        raise SessionConflictError(
            ref.session_id,
            ref.owner_id,
            "the claim was lost: its lock file or log was replaced or written by a process that did not claim it",
        )


def create_log(ref: LogRef, claim: FileClaim, payload: bytes, *, durable: bool, fsync: bool) -> None:
    """Create the log with its first append (a claim taken at version None).

    Raises:
        SessionConflictError: Someone created the log meanwhile without the claim.
    """
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(claim.name, flags, 0o600, dir_fd=claim.dir_fd)
    except FileExistsError:
        raise SessionConflictError(ref.session_id, ref.owner_id, STALE) from None
    claim.log_fd = fd
    write_all(fd, payload)
    if durable and fsync:
        os.fdatasync(fd)
    if fsync:
        os.fsync(claim.dir_fd)  # the new file's name survives a machine crash once the log is non-empty
    claim.ino, claim.size = os.fstat(fd).st_ino, len(payload)


def repair_tail(claim: FileClaim) -> None:
    """Cut what follows the last committed record and restore its final newline, if needed (logged)."""
    assert claim.log_fd is not None
    needs_newline = claim.has_records and not claim.newline_ok
    cut = claim.record_end if needs_newline else (claim.record_end + 1 if claim.has_records else 0)
    if claim.size == cut and not needs_newline:
        return
    dropped = claim.size - cut - (1 if needs_newline and claim.size > claim.record_end else 0)
    os.ftruncate(claim.log_fd, cut)
    if needs_newline:
        write_all(claim.log_fd, b"\n")
        cut += 1
    claim.size = cut
    if dropped > 0:
        logger.warning("path=<%s> | cut a torn record of %d bytes off the end of the log", claim.path, dropped)
    if needs_newline:
        logger.warning("path=<%s> | restored the final newline of the last record", claim.path)


def version_string(legacy: bool, ino: int, record_end: int, crc: int) -> str:
    """Return the version of a log: its format, inode, committed end and the checksum of the bytes before it."""
    return f"{1 if legacy else 2}:{ino}:{record_end}:{crc:08x}"


def parse_version(ref: LogRef, version: str) -> tuple[bool, int, int, int]:
    """Split a version made by `version_string`.

    Raises:
        SessionConflictError: The version was not issued by the file store.
    """
    try:
        fmt, ino, end, crc = version.split(":")
        if fmt not in ("1", "2"):
            raise ValueError(fmt)
        return fmt == "1", int(ino), int(end), int(crc, 16)
    except (ValueError, AttributeError):
        raise SessionConflictError(
            ref.session_id, ref.owner_id, f"version {version!r} was not issued by this store"
        ) from None
