"""`FileSessionManager`: sessions in a local directory, the embedded default.

Layout under ``storage_dir``::

    session_<session_id>/session.json                       the session record (atomic snapshot)
    session_<session_id>/agents/agent_<agent_id>/agent.jsonl  the agent's append-only log (see `_agent_log`)
    session_<session_id>/agents/agent_<agent_id>/lock         held while an invocation persists the agent
    session_<session_id>/multi_agents/multi_agent_<id>.json   an orchestrator's state (atomic snapshot)

Appending a message appends one line; the agent snapshot (state, interrupt state, conversation manager state)
is appended only when it changed. Restoring reads each file once. Snapshots are written to a temporary file,
flushed and renamed; the log tolerates a torn last record.

Writes are batched: while an invocation runs, its records are kept in memory (in order) and written with one
``write`` when it ends, or sooner in a worker thread once 64 KiB are waiting; a crash mid-invocation therefore
loses at most that invocation's unwritten records, and restores a prefix of the conversation. Once an
invocation returns with interrupts, the log has been flushed to disk (``fsync``, in a worker thread), so an
interrupt handed to a caller is never lost. Nothing else blocks the event loop: taking the lock is a
non-blocking ``flock``.

Concurrency: an invocation takes an exclusive lock on its agent (``flock``) and checks that the log is exactly
as this process last saw it. A second process resuming the same session at the same time, or one holding a
stale copy, gets `SessionConflictError` before anything runs or is written. Different sessions and different
agents never block each other. Files and directories are created readable by their owner only.
"""

import fcntl
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import anyio

from ..hooks.events import (
    AfterInvocationEvent,
    AfterMultiAgentInvocationEvent,
    AfterNodeCallEvent,
    MessageAddedEvent,
)
from ..types.exceptions import SessionConflictError, SessionCorruptError, SessionException
from ..types.session import Session, SessionAgent, SessionMessage
from ._agent_log import FORMAT, TAIL_BYTES, LoadedLog, LogWriter, encode_record, now, read_log
from ._files import FILE_MODE, ensure_dir, fsync_dir, read_json, write_json_atomic
from ._ids import validate_id
from .repository_session_manager import RepositorySessionManager
from .session_repository import SessionRepository

if TYPE_CHECKING:
    from ..agent.agent import Agent

logger = logging.getLogger(__name__)

SESSION_PREFIX = "session_"
AGENT_PREFIX = "agent_"
MULTI_AGENT_PREFIX = "multi_agent_"
SESSION_FORMAT = "strandslike-session/1"


def default_storage_dir() -> Path:
    """Return ``~/.strandslike/sessions``, private to the current user."""
    return Path.home() / ".strandslike" / "sessions"


class _AgentFiles:
    """The open log, lock and last-seen version of one agent."""

    def __init__(self, agent_id: str, directory: Path) -> None:
        self.agent_id = agent_id
        self.directory = directory
        self.log_path = directory / "agent.jsonl"
        self.lock_path = directory / "lock"
        self.writer: LogWriter | None = None
        self.lock_fd: int | None = None
        self.held_for_invocation = False
        # (inode, size, mtime_ns) of the log as last read or written by us: another writer changes at least one.
        # The last bytes of the log are part of it too: timestamps are only as fine as the kernel's clock tick.
        self.version: tuple[int, int, int, bytes] | None = None
        self.good_size = 0
        self.audit_written = 0
        self.pending: list[bytes] = []  # records of the running invocation, not written yet
        self.pending_size = 0

    def remember(self, loaded: LoadedLog | None) -> None:
        self.version = None if loaded is None else (loaded.inode, loaded.size, loaded.mtime_ns, loaded.tail)
        self.good_size = 0 if loaded is None else loaded.good_size
        self.audit_written = 0 if loaded is None else len(loaded.audit)


FLUSH_BYTES = 64 * 1024  # records of an invocation waiting in memory before they are written early


class FileSessionManager(RepositorySessionManager, SessionRepository):
    """Persist agents (and orchestrators) in a directory; a fresh process with the same ids resumes them."""

    # The hooks call the repository on the event loop: during an invocation appends only fill a buffer, and the
    # writes that may block (a large batch, an fsync) are sent to a worker thread explicitly below.
    blocking_io: ClassVar[bool] = False  # type: ignore[misc]

    def __init__(self, session_id: str, storage_dir: str | os.PathLike[str] | None = None, **kwargs: Any) -> None:
        """Open or create session ``session_id`` under ``storage_dir`` (default ``~/.strandslike/sessions``).

        Raises:
            ValueError: ``session_id`` is not a safe id (path separators, ``..``, control characters, too long).
            SessionCorruptError: The session's files are corrupt or were not written by strandslike.
        """
        validate_id(session_id, "session")
        self.storage_dir = Path(storage_dir) if storage_dir is not None else default_storage_dir()
        ensure_dir(self.storage_dir)
        self._agents: dict[tuple[str, str], _AgentFiles] = {}
        self._loaded: dict[Path, LoadedLog] = {}
        self._files_lock = threading.Lock()
        super().__init__(session_id=session_id, session_repository=self, **kwargs)

    # -- paths ------------------------------------------------------------------------------------------------

    def _session_path(self, session_id: str) -> Path:
        return self.storage_dir / f"{SESSION_PREFIX}{validate_id(session_id, 'session')}"

    def _agent_files(self, session_id: str, agent_id: str) -> _AgentFiles:
        key = (session_id, agent_id)
        with self._files_lock:
            files = self._agents.get(key)
            if files is None:
                directory = (
                    self._session_path(session_id) / "agents" / f"{AGENT_PREFIX}{validate_id(agent_id, 'agent')}"
                )
                files = self._agents[key] = _AgentFiles(agent_id, directory)
            return files

    def _multi_agent_path(self, session_id: str, multi_agent_id: str) -> Path:
        name = f"{MULTI_AGENT_PREFIX}{validate_id(multi_agent_id, 'multi_agent')}.json"
        return self._session_path(session_id) / "multi_agents" / name

    # -- sessions ---------------------------------------------------------------------------------------------

    def create_session(self, session: Session, **kwargs: Any) -> Session:
        """Create the session directory and record; an existing record (a concurrent creator) is kept."""
        path = self._session_path(session.session_id) / "session.json"
        existing = self.read_session(session.session_id)
        if existing is not None:
            return existing
        write_json_atomic(path, {**session.to_dict(), "format": SESSION_FORMAT})
        return session

    def read_session(self, session_id: str, **kwargs: Any) -> Session | None:
        """Read the session record, or None if the session does not exist.

        Raises:
            SessionCorruptError: The record is corrupt, or the directory holds a strands-agents session.
        """
        path = self._session_path(session_id) / "session.json"
        data = read_json(path)
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
        """
        import shutil

        path = self._session_path(session_id)
        if not path.is_dir():
            raise SessionException(f"Session {session_id} does not exist")
        shutil.rmtree(path)

    # -- agents -----------------------------------------------------------------------------------------------

    def _load(self, session_id: str, agent_id: str) -> LoadedLog | None:
        files = self._agent_files(session_id, agent_id)
        if files.version is not None and files.log_path in self._loaded:
            # Restoring reads the agent record, then its messages: both must come from one read, remembered with
            # the version of exactly that read. Re-reading here when another process had appended in between paired
            # the old interrupt state with the newer version, which then passed the claim, and two servers applied
            # two answers to one interrupt (issue 9). A change by another process is found by the claim instead.
            return self._loaded[files.log_path]
        legacy = files.directory / "agent.json"
        loaded = read_log(files.log_path)
        if loaded is None and legacy.exists():
            raise SessionCorruptError(
                str(legacy),
                "belongs to a strands-agents session. Import it with "
                "`python -m strandslike sessions import-strands SRC_DIR --storage-dir DIR`",
            )
        files.remember(loaded)
        if loaded is not None:
            self._loaded[files.log_path] = loaded
        return loaded

    def create_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        """Start the agent's log with a header and a first snapshot."""
        files = self._agent_files(session_id, session_agent.agent_id)
        ensure_dir(files.directory)
        records = self._snapshot_records(files, session_agent)
        if files.good_size == 0:  # a new log (or one whose header was torn): start it with the header
            header = {"k": "h", "format": FORMAT, "session_id": session_id, "agent_id": files.agent_id, "t": now()}
            records.insert(0, header)
        self._append(files, records)

    def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> SessionAgent | None:
        """Replay the agent's log and return its latest snapshot."""
        loaded = self._load(session_id, agent_id)
        return None if loaded is None else loaded.agent

    def update_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        """Append a snapshot of the agent."""
        files = self._agent_files(session_id, session_agent.agent_id)
        self._append(files, self._snapshot_records(files, session_agent))

    @staticmethod
    def _snapshot_records(files: _AgentFiles, session_agent: SessionAgent) -> list[dict[str, Any]]:
        """Return the new audit entries as their own records, then the snapshot without the audit trail."""
        session_agent.updated_at = now()
        data = session_agent.to_dict()
        interrupt_state = data.get("_internal_state", {}).get("interrupt_state")
        audit = interrupt_state.pop("audit", []) if isinstance(interrupt_state, dict) else []
        records: list[dict[str, Any]] = [{"k": "a", "e": entry} for entry in audit[files.audit_written :]]
        files.audit_written = max(files.audit_written, len(audit))
        records.append({"k": "s", "t": session_agent.updated_at, "a": data})
        return records

    # -- messages ---------------------------------------------------------------------------------------------

    def create_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        """Append a message record."""
        record = {
            "k": "m",
            "i": session_message.message_id,
            "t": session_message.created_at,
            "m": session_message.message,
        }
        self._append(self._agent_files(session_id, agent_id), [record])

    def read_message(self, session_id: str, agent_id: str, message_id: int, **kwargs: Any) -> SessionMessage | None:
        """Read one message by index."""
        if not isinstance(message_id, int):
            raise ValueError(f"message_id=<{message_id}> | message id must be an integer")
        loaded = self._load(session_id, agent_id)
        if loaded is None:
            return None
        return next((message for message in loaded.messages if message.message_id == message_id), None)

    def update_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        """Append a redaction record for a message."""
        record = {"k": "r", "i": session_message.message_id, "t": now(), "m": session_message.redact_message}
        self._append(self._agent_files(session_id, agent_id), [record])

    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> list[SessionMessage]:
        """List the agent's messages in order."""
        loaded = self._load(session_id, agent_id)
        if loaded is None:
            return []
        end = None if limit is None else offset + limit
        return loaded.messages[offset:end]

    # -- multi-agent ------------------------------------------------------------------------------------------

    def create_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        """Write an orchestrator's state."""
        self.update_multi_agent(session_id, multi_agent)

    def read_multi_agent(self, session_id: str, multi_agent_id: str, **kwargs: Any) -> dict[str, Any] | None:
        """Read an orchestrator's state."""
        data = read_json(self._multi_agent_path(session_id, multi_agent_id))
        if data is not None and not isinstance(data, dict):
            raise SessionCorruptError(str(self._multi_agent_path(session_id, multi_agent_id)), "is not a JSON object")
        return data

    def update_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        """Atomically replace an orchestrator's state."""
        write_json_atomic(self._multi_agent_path(session_id, multi_agent.id), multi_agent.serialize_state())

    # -- invocations: lock, version check, durability ---------------------------------------------------------

    def begin_invocation(self, agent: "Agent", **kwargs: Any) -> None:
        """Take the agent's lock and check nobody changed its log since this process read or wrote it.

        Raises:
            SessionConflictError: Another process holds the lock or changed the session.
        """
        files = self._agent_files(self.session_id, agent.agent_id)
        if files.held_for_invocation:
            return
        self._acquire(files)
        files.held_for_invocation = True

    def end_invocation(self, agent: "Agent", **kwargs: Any) -> None:
        """Persist the agent and the invocation's records; flush to disk if it waits on interrupts; release the lock."""
        files = self._agent_files(self.session_id, agent.agent_id)
        if not files.held_for_invocation:
            return  # begin_invocation failed: this process must not write
        try:
            self.sync_agent(agent)
            self._flush(files)
            if agent._interrupt_state.activated and files.writer is not None:
                files.writer.sync()
        finally:
            files.held_for_invocation = False
            self._release(files)

    async def _on_message_added(self, event: MessageAddedEvent) -> None:
        self._message_added(event.message, event.agent)  # buffered while the invocation holds the lock
        files = self._agent_files(self.session_id, event.agent.agent_id)
        if files.pending_size >= FLUSH_BYTES:
            await anyio.to_thread.run_sync(self._flush, files)

    async def _on_after_invocation(self, event: AfterInvocationEvent) -> None:
        files = self._agent_files(self.session_id, event.agent.agent_id)
        if event.agent._interrupt_state.activated or files.pending_size >= FLUSH_BYTES:
            await anyio.to_thread.run_sync(self.end_invocation, event.agent)  # an fsync or a large write
        else:
            self.end_invocation(event.agent)  # one small batched write to the page cache

    async def _on_multi_agent_changed(self, event: AfterNodeCallEvent | AfterMultiAgentInvocationEvent) -> None:
        await anyio.to_thread.run_sync(self.sync_multi_agent, event.source)  # an atomic, fsynced snapshot

    def _flush(self, files: _AgentFiles) -> None:
        """Write the invocation's buffered records with one ``write``."""
        if not files.pending:
            return
        payload = b"".join(files.pending)
        files.pending, files.pending_size = [], 0
        self._write(files, payload)

    def _acquire(self, files: _AgentFiles) -> None:
        ensure_dir(files.directory)
        try:
            fd = os.open(files.lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
        except OSError as exc:
            detail = f"cannot be opened ({exc.strerror}); the lock must be a regular file, not a symlink"
            raise SessionCorruptError(str(files.lock_path), detail) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            _log_conflict(self.session_id, files.agent_id, "another process is running this agent")
            raise SessionConflictError(
                self.session_id, files.agent_id, "another process is running this agent"
            ) from None
        files.lock_fd = fd
        current = _version(files.log_path)
        if current != files.version:
            self._release(files)
            _log_conflict(self.session_id, files.agent_id, "the session changed since this agent loaded it")
            raise SessionConflictError(
                self.session_id, files.agent_id, "the session was changed by another process since this agent loaded it"
            )
        if current is not None and files.good_size < current[1]:  # a crash left a torn record: cut it off
            self._writer(files).truncate(files.good_size)
            files.version = _version(files.log_path)

    def _release(self, files: _AgentFiles) -> None:
        if files.lock_fd is not None:
            # Unlock explicitly: a child forked meanwhile (by another thread, or multiprocessing) holds a copy of
            # the descriptor, and closing ours alone would leave the lock held until that copy is closed.
            fcntl.flock(files.lock_fd, fcntl.LOCK_UN)
            os.close(files.lock_fd)
            files.lock_fd = None

    def _writer(self, files: _AgentFiles) -> LogWriter:
        if files.writer is None:
            files.writer = LogWriter(files.log_path)
        return files.writer

    def _append(self, files: _AgentFiles, records: list[dict[str, Any]]) -> None:
        """Append records: buffered during an invocation, else written at once under a temporary lock."""
        payload = b"".join(encode_record(record) for record in records)
        self._loaded.pop(files.log_path, None)
        if files.held_for_invocation:
            files.pending.append(payload)
            files.pending_size += len(payload)
            return
        temporary = files.lock_fd is None
        if temporary:
            self._acquire(files)
        try:
            self._write(files, payload)
        finally:
            if temporary:
                self._release(files)

    def _write(self, files: _AgentFiles, payload: bytes) -> None:
        created = not files.log_path.exists()
        writer = self._writer(files)
        writer.append(payload)
        after = writer.stat()
        previous_tail = files.version[3] if files.version is not None else b""
        files.version = (after.st_ino, after.st_size, after.st_mtime_ns, (previous_tail + payload)[-TAIL_BYTES:])
        files.good_size = after.st_size
        if created:
            fsync_dir(files.directory)

    def describe_agent_storage(self, agent_id: str) -> str:
        """Return the path of an agent's log, for error messages."""
        return str(self._agent_files(self.session_id, agent_id).log_path)

    def close(self) -> None:
        """Close open log files and locks."""
        for files in self._agents.values():
            self._release(files)
            if files.writer is not None:
                files.writer.close()
                files.writer = None


def _version(path: Path) -> tuple[int, int, int, bytes] | None:
    """Return the log's (inode, size, mtime_ns, last bytes), or None if it does not exist."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        status = os.fstat(fd)
        tail = os.pread(fd, TAIL_BYTES, max(0, status.st_size - TAIL_BYTES))
    finally:
        os.close(fd)
    return (status.st_ino, status.st_size, status.st_mtime_ns, tail)


def _log_conflict(session_id: str, agent_id: str, why: str) -> None:
    logger.warning("session_id=<%s>, agent_id=<%s> | refused to run the agent: %s", session_id, agent_id, why)
