"""The durable log contract on a local directory: one append-only, checksummed file per log, claimed with ``flock``.

Layout under the storage directory::

    session_<session_id>/session.json                                  the session record (atomic snapshot)
    session_<session_id>/agents/agent_<agent_id>/agent.jsonl           an agent's log (see `_log_file`)
    session_<session_id>/agents/agent_<agent_id>/lock                  flock'ed while the log is claimed
    session_<session_id>/multi_agents/multi_agent_<id>/multi_agent.jsonl   an orchestrator's log
    session_<session_id>/multi_agents/multi_agent_<id>/lock
    session_<session_id>/multi_agents/multi_agent_<id>.json            an orchestrator's state from earlier versions:
                                                                       read, and folded into the log by the next write

- **Claims** are an exclusive, non-blocking ``flock`` on the log's ``lock`` file: it dies with its process (and
  is released with ``LOCK_UN``, not just by closing, so a child forked in the meantime cannot keep it alive).
- **Versions** name exactly what was read: the log's format, inode, the offset just past its last committed
  record and a checksum of the bytes before that offset. A torn tail beyond it is not a change; a committed
  append, a rewrite or a replaced file is.
- **Appends** are one ``write`` of whole lines whose last line commits the batch, after the torn tail (if any) is
  cut off and a lost final newline restored; ``durable=True`` adds ``fdatasync`` (and an ``fsync`` of the
  directory when the file is created). Each repair is logged as a warning.
"""

import fcntl
import logging
import os
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from ..types.exceptions import SessionConflictError, SessionCorruptError, SessionException, SessionStorageError
from ..types.session import Session
from ._file_claim import (
    HELD,
    STALE,
    FileClaim,
    check_still_held,
    claimed_now,
    create_log,
    hold,
    parse_version,
    release,
    repair_tail,
    version_string,
)
from ._files import (
    StorageDir,
    entries,
    open_file,
    read_all,
    read_json,
    read_regular,
    write_all,
    write_atomic,
    write_json_atomic,
)
from ._ids import validate_id
from ._log_file import decode, encode_batch, tail_has_commits, version_window, window_crc
from ._records import MULTI_AGENT_LOG_FORMAT, now
from .log_session_repository import LogSessionRepository
from .session_repository import LogClaim, LogRef, StoredLog

logger = logging.getLogger(__name__)

SESSION_PREFIX = "session_"
AGENT_PREFIX = "agent_"
MULTI_AGENT_PREFIX = "multi_agent_"
SESSION_FORMAT = "strandslike-session/1"
_LOG_NAMES = {"agent": "agent.jsonl", "multi_agent": "multi_agent.jsonl"}
_LABELS = {"agent": "agent log", "multi_agent": "orchestrator log"}


class FileLogStore(LogSessionRepository):
    """Sessions and logs in a local directory (the storage half of `FileSessionManager`)."""

    blocking_io: ClassVar[bool] = False

    def __init__(self, storage_dir: Path, *, fsync: bool = True) -> None:
        super().__init__()
        self.storage_dir = storage_dir
        self.fsync = fsync
        self._storage = StorageDir(storage_dir)
        self._locations: dict[LogRef, tuple[list[str], Path]] = {}

    # -- locations ----------------------------------------------------------------------------------------------------

    def _session_parts(self, session_id: str) -> list[str]:
        return [f"{SESSION_PREFIX}{validate_id(session_id, 'session')}"]

    def _location(self, ref: LogRef) -> tuple[list[str], Path]:
        """Return the directory components and the file of a log (checked once per log, then remembered)."""
        found = self._locations.get(ref)
        if found is None:
            parts = self._log_parts(ref)
            found = self._locations[ref] = (parts, self._storage.path(parts) / _LOG_NAMES[ref.kind])
        return found

    def _log_parts(self, ref: LogRef) -> list[str]:
        if ref.kind == "agent":
            return [
                *self._session_parts(ref.session_id),
                "agents",
                f"{AGENT_PREFIX}{validate_id(ref.owner_id, 'agent')}",
            ]
        owner = validate_id(ref.owner_id, "multi_agent")
        return [*self._session_parts(ref.session_id), "multi_agents", f"{MULTI_AGENT_PREFIX}{owner}"]

    def log_path(self, ref: LogRef) -> Path:
        """Return the file that holds a log."""
        return self._location(ref)[1]

    def describe_log(self, ref: LogRef) -> str:
        """Return the log's file path."""
        return str(self.log_path(ref))

    # -- sessions -----------------------------------------------------------------------------------------------------

    def create_session(self, session: Session, **kwargs: Any) -> Session:
        """Create the session directory and record.

        Raises:
            SessionException: The session exists already (Strands' message; `RepositorySessionManager` then reads
                the record a concurrent creator wrote), or it cannot be written (`SessionStorageError`).
        """
        if self.read_session(session.session_id) is not None:
            raise SessionException(f"Session {session.session_id} already exists")
        parts = self._session_parts(session.session_id)
        path = self._storage.path(parts) / "session.json"
        with self._storage.directory(parts, create=True, durable=self.fsync) as dir_fd:
            assert dir_fd is not None  # created
            try:
                write_json_atomic(
                    dir_fd, "session.json", {**session.to_dict(), "format": SESSION_FORMAT}, durable=self.fsync
                )
            except OSError as exc:
                raise SessionStorageError(str(path), exc) from exc
        return session

    def read_session(self, session_id: str, **kwargs: Any) -> Session | None:
        """Read the session record, or None if the session does not exist.

        Raises:
            SessionCorruptError: The record is corrupt, or the directory holds a strands-agents session.
        """
        parts = self._session_parts(session_id)
        path = self._storage.path(parts) / "session.json"
        with self._storage.directory(parts) as dir_fd:
            data = None if dir_fd is None else read_json(dir_fd, "session.json", path)
        if data is None:
            return None
        if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
            raise SessionCorruptError(
                str(path),
                "was not written by strandslike (a strands-agents session?). Import it with "
                f"`python -m strandslike sessions import-strands {self.storage_dir} --storage-dir NEW_DIR`",
            )
        try:
            return Session.from_dict(data)
        except (TypeError, ValueError) as exc:
            raise SessionCorruptError(str(path), f"is not a session record ({exc})") from None

    def delete_session(self, session_id: str, **kwargs: Any) -> None:
        """Delete a session directory and everything in it.

        Raises:
            SessionException: The session does not exist.
            SessionCorruptError: The session directory is a symlink (it is not followed).
        """
        path = self._storage.path(self._session_parts(session_id))
        try:
            status = os.lstat(path)
        except FileNotFoundError:
            raise SessionException(f"Session {session_id} does not exist") from None
        if not stat.S_ISDIR(status.st_mode):
            raise SessionCorruptError(str(path), "is not a directory (a symlink?); it was not deleted or followed")
        shutil.rmtree(path)
        with self._seen_lock:
            for ref in [ref for ref in self._seen if ref.session_id == session_id]:
                del self._seen[ref]

    def list_sessions(self, **kwargs: Any) -> list[str]:
        """Return the ids of the sessions stored here (real directories holding a session record), sorted."""
        found = []
        with self._storage.directory([]) as root:
            if root is None:
                return []
            for name, status in entries(root):
                session_id = name[len(SESSION_PREFIX) :]
                if not name.startswith(SESSION_PREFIX) or not stat.S_ISDIR(status.st_mode):
                    continue
                try:
                    validate_id(session_id, "session")
                    present = stat.S_ISREG(os.stat(f"{name}/session.json", dir_fd=root, follow_symlinks=False).st_mode)
                except (ValueError, OSError):
                    continue
                if present:
                    found.append(session_id)
        return found

    def list_logs(self, session_id: str, **kwargs: Any) -> list[LogRef]:
        """Return the logs of a session: agents, then orchestrators, each sorted by owner id.

        Raises:
            SessionCorruptError: An entry is a symlink or has a name that is not a valid id.
        """
        refs: list[LogRef] = []
        parts = self._session_parts(session_id)
        for kind, folder, prefix in (
            ("agent", "agents", AGENT_PREFIX),
            ("multi_agent", "multi_agents", MULTI_AGENT_PREFIX),
        ):
            owners: set[str] = set()
            with self._storage.directory([*parts, folder]) as dir_fd:
                if dir_fd is None:
                    continue
                for name, status in entries(dir_fd):
                    if not name.startswith(prefix):
                        continue
                    path = self._storage.path([*parts, folder, name])
                    if stat.S_ISLNK(status.st_mode):
                        raise SessionCorruptError(str(path), "is a symbolic link; it is not followed")
                    owner = name[len(prefix) :]
                    if kind == "multi_agent" and stat.S_ISREG(status.st_mode) and owner.endswith(".json"):
                        owner = owner[: -len(".json")]  # an orchestrator state from an earlier version
                    elif not stat.S_ISDIR(status.st_mode) or not self._holds_log(dir_fd, name, kind):
                        continue
                    try:
                        owners.add(validate_id(owner, kind))
                    except ValueError as exc:
                        raise SessionCorruptError(str(path), f"is not named after a valid id ({exc})") from None
            refs.extend(LogRef(session_id, kind, owner) for owner in sorted(owners))  # type: ignore[arg-type]
        return refs

    @staticmethod
    def _holds_log(dir_fd: int, name: str, kind: str) -> bool:
        wanted = [_LOG_NAMES[kind]] + (["agent.json"] if kind == "agent" else [])
        for file_name in wanted:
            try:
                os.stat(f"{name}/{file_name}", dir_fd=dir_fd, follow_symlinks=False)
                return True
            except OSError:
                continue
        return False

    # -- reading ------------------------------------------------------------------------------------------------------

    def read_log(self, ref: LogRef, **kwargs: Any) -> StoredLog | None:
        """Read a log in one pass: its committed records and the version of exactly those.

        While another process holds the log's claim, what follows its last committed record may be an append in
        progress, so it is dropped without being reported as a repair.

        Raises:
            SessionCorruptError: A line is damaged or not a record, a file is not a regular file, or a symlink was
                planted inside the storage directory.
        """
        stored, _ = self._read_log(ref)
        return stored

    def _read_log(self, ref: LogRef) -> tuple[StoredLog | None, bool]:
        """Return the log and whether its claim was held while the tail needed a repair (then not reported)."""
        parts, path = self._location(ref)
        with self._storage.directory(parts) as dir_fd:
            if dir_fd is None:
                return self._read_legacy_multi_agent(ref), False
            fd = open_file(dir_fd, _LOG_NAMES[ref.kind], path, os.O_RDONLY)
            if fd is None:
                if ref.kind == "agent":
                    self._refuse_strands_agent(dir_fd, path.parent)
                    return None, False
                return self._read_legacy_multi_agent(ref), False
            try:
                data = read_all(fd)
                ino = os.fstat(fd).st_ino
            finally:
                os.close(fd)
            decoded = decode(data, str(path), _LABELS[ref.kind], allow_legacy=ref.kind == "agent")
            repairs = decoded.repairs
            held = bool(repairs) and claimed_now(dir_fd)
            if held:
                repairs = []  # a claim holder may be appending right now: what follows the last commit is in flight
        version = version_string(decoded.legacy, ino, decoded.record_end, decoded.window_crc)
        return StoredLog(decoded.records, version, repairs, location=str(path), unit="line"), held

    @staticmethod
    def _refuse_strands_agent(dir_fd: int, directory: Path) -> None:
        try:
            os.stat("agent.json", dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        raise SessionCorruptError(
            str(directory / "agent.json"),
            "belongs to a strands-agents session. Import it with "
            "`python -m strandslike sessions import-strands SRC_DIR --storage-dir DIR`",
        )

    def _legacy_multi_agent(self, ref: LogRef) -> tuple[dict[str, Any], str, Path] | None:
        """Return the state, version and path of an orchestrator state file from an earlier version, if any."""
        parts, name = _legacy_location(self._session_parts(ref.session_id), validate_id(ref.owner_id, "multi_agent"))
        path = self._storage.path(parts) / name
        with self._storage.directory(parts) as dir_fd:
            found = None if dir_fd is None else read_regular(dir_fd, name, path)
        if found is None:
            return None
        data, status = found
        state = read_json_bytes(data, path)
        if not isinstance(state, dict):
            raise SessionCorruptError(str(path), "is not a JSON object")
        return state, f"legacy:{status.st_ino}:{len(data)}:{window_crc(data, len(data)):08x}", path

    def _read_legacy_multi_agent(self, ref: LogRef) -> StoredLog | None:
        if ref.kind != "multi_agent":
            return None
        legacy = self._legacy_multi_agent(ref)
        if legacy is None:
            return None
        state, version, path = legacy
        return StoredLog(_legacy_records(ref, state), version, [], location=str(path), unit="record")

    # -- claims -------------------------------------------------------------------------------------------------------

    def claim_log(self, ref: LogRef, version: str | None, **kwargs: Any) -> LogClaim:
        """Take the log's lock without waiting and check that the log is still exactly at ``version``.

        Raises:
            SessionConflictError: Another process holds the lock, or the log changed since ``version``.
            SessionCorruptError: A file in the way is a symlink or not a regular file.
        """
        parts, path = self._location(ref)
        dir_fd = self._storage.open_dir(parts, create=True, durable=self.fsync)
        assert dir_fd is not None  # created
        handle: FileClaim | None = None
        try:
            lock_fd = open_file(dir_fd, "lock", path.parent / "lock", os.O_RDWR | os.O_CREAT, writing=True)
            assert lock_fd is not None  # created
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(lock_fd)
                raise SessionConflictError(ref.session_id, ref.owner_id, HELD) from None
            handle = FileClaim(dir_fd, lock_fd, os.fstat(lock_fd).st_ino, path, _LOG_NAMES[ref.kind])
            hold(handle)
            self._check_version(ref, handle, version)
        except BaseException:
            if handle is not None:
                release(handle)
            else:
                os.close(dir_fd)
            raise
        return LogClaim(ref, version, handle)

    def _check_version(self, ref: LogRef, handle: FileClaim, version: str | None) -> None:
        log_fd = open_file(handle.dir_fd, handle.name, handle.path, os.O_RDWR | os.O_APPEND, writing=True)
        handle.log_fd = log_fd
        if version is not None and version.startswith("legacy:"):
            found = self._legacy_multi_agent(ref) if log_fd is None else None
            if found is None or found[1] != version:
                raise SessionConflictError(ref.session_id, ref.owner_id, STALE)
            handle.carried = _legacy_records(ref, found[0])
            handle.legacy_file = _legacy_location(self._session_parts(ref.session_id), ref.owner_id)
            return
        if log_fd is None:
            if version is not None or (ref.kind == "multi_agent" and self._legacy_multi_agent(ref) is not None):
                raise SessionConflictError(ref.session_id, ref.owner_id, STALE)
            return
        if version is None:
            raise SessionConflictError(ref.session_id, ref.owner_id, STALE)
        legacy, ino, record_end, crc = parse_version(ref, version)
        status = os.fstat(log_fd)
        if status.st_ino != ino or status.st_size < record_end:
            raise SessionConflictError(ref.session_id, ref.owner_id, STALE)
        start, length = version_window(record_end)
        window = os.pread(log_fd, length, start)
        rest = os.pread(log_fd, status.st_size - record_end, record_end) if status.st_size > record_end else b""
        if window_crc(window, len(window)) != crc or tail_has_commits(rest, after_record=record_end > 0, legacy=legacy):
            raise SessionConflictError(ref.session_id, ref.owner_id, STALE)
        handle.ino, handle.size, handle.record_end = ino, status.st_size, record_end
        handle.has_records = record_end > 0
        handle.newline_ok = record_end == 0 or rest[:1] == b"\n"
        if legacy:
            data = os.pread(log_fd, record_end, 0)
            handle.carried = decode(data, str(handle.path), "agent log", allow_legacy=True).records

    def release_log(self, claim: LogClaim, **kwargs: Any) -> None:
        """Release the lock (``LOCK_UN``, then close) and the log's descriptors; idempotent."""
        handle = claim.handle
        if isinstance(handle, FileClaim):
            release(handle)

    # -- appending ----------------------------------------------------------------------------------------------------

    def append_log(self, claim: LogClaim, records: Sequence[dict[str, Any]], *, durable: bool, **kwargs: Any) -> None:
        """Append records in one write, committed by the last line; repair the tail first if needed.

        Raises:
            SessionConflictError: The claim was released or lost, or the log was changed by a writer without it;
                nothing was written.
            NotJSONSerializableError: A record cannot be stored; nothing was written.
        """
        if not records:
            return
        handle: FileClaim = claim.handle
        payload = encode_batch(list(records))
        check_still_held(claim.ref, handle)
        if handle.carried is not None:
            self._rewrite(handle, payload)
        elif handle.log_fd is None:
            create_log(claim.ref, handle, payload, durable=durable, fsync=self.fsync)
        else:
            repair_tail(handle)
            write_all(handle.log_fd, payload)
            handle.size += len(payload)
            if durable and self.fsync:
                os.fdatasync(handle.log_fd)
        handle.record_end = handle.size - 1
        handle.has_records = True
        handle.newline_ok = True
        if len(payload) > 64:
            window = payload[-65:-1]
        else:
            assert handle.log_fd is not None
            start, length = version_window(handle.record_end)
            window = os.pread(handle.log_fd, length, start)
        claim.version = version_string(False, handle.ino, handle.record_end, window_crc(window, len(window)))

    def _rewrite(self, handle: FileClaim, payload: bytes) -> None:
        """Write the records of an older format in format 2, followed by ``payload``, and swap the file in."""
        data = b"".join(encode_batch([record]) for record in handle.carried or []) + payload
        write_atomic(handle.dir_fd, handle.name, data, durable=self.fsync)
        if handle.log_fd is not None:
            os.close(handle.log_fd)
        handle.log_fd = open_file(handle.dir_fd, handle.name, handle.path, os.O_RDWR | os.O_APPEND, writing=True)
        assert handle.log_fd is not None
        handle.ino, handle.size = os.fstat(handle.log_fd).st_ino, len(data)
        handle.carried = None
        if handle.legacy_file is not None:
            parts, name = handle.legacy_file
            with self._storage.directory(parts) as parent:
                if parent is not None:
                    try:
                        os.unlink(name, dir_fd=parent)
                    except FileNotFoundError:
                        pass
            handle.legacy_file = None
        logger.warning("path=<%s> | rewrote the log in format 2 (checksummed records)", handle.path)

    # -- operators ----------------------------------------------------------------------------------------------------

    def check_log(self, ref: LogRef, *, repair: bool = False) -> list[str]:
        """Verify one log; return what needs repairing (or, with ``repair``, what was repaired under a claim).

        Raises:
            SessionCorruptError: The log is damaged at rest (never repaired automatically).
            SessionConflictError: ``repair`` and the log is claimed by a running process.
        """
        stored, held = self._read_log(ref)
        if held:
            raise SessionConflictError(ref.session_id, ref.owner_id, HELD)
        if stored is None:
            return []
        findings = list(stored.repairs)
        if stored.version.startswith("1:"):
            findings.append("the log is in format 1 (no checksums); it is rewritten in format 2")
        if stored.version.startswith("legacy:"):
            findings.append("the orchestrator state is an earlier version's JSON file; it is folded into a log")
        if not findings or not repair:
            return findings
        claim = self.claim_log(ref, stored.version)
        try:
            handle: FileClaim = claim.handle
            if handle.carried is not None:
                self._rewrite(handle, b"")
            elif handle.log_fd is not None:
                repair_tail(handle)
                if self.fsync:
                    os.fdatasync(handle.log_fd)
        finally:
            self.release_log(claim)
        return findings


def read_json_bytes(data: bytes, path: Path) -> Any:
    """Parse JSON bytes read from ``path``.

    Raises:
        SessionCorruptError: They are not valid JSON.
    """
    import json

    try:
        return json.loads(data)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SessionCorruptError(str(path), f"is not valid JSON ({type(exc).__name__}: {exc})") from None


def _legacy_records(ref: LogRef, state: dict[str, Any]) -> list[dict[str, Any]]:
    head = {"k": "h", "format": MULTI_AGENT_LOG_FORMAT, "session_id": ref.session_id, "multi_agent_id": ref.owner_id}
    return [{**head, "t": now()}, {"k": "ms", "t": now(), "s": state}]


def _legacy_location(session_parts: list[str], owner_id: str) -> tuple[list[str], str]:
    return [*session_parts, "multi_agents"], f"{MULTI_AGENT_PREFIX}{owner_id}.json"
