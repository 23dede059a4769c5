"""`FileSessionManager`: sessions in a local directory, the embedded default.

Each agent, and each orchestrator, of a session is one append-only, checksummed JSON-lines log (the file layout
and format are described in `strandslike.session._file_store` and `_log_file`); the session record is a small
JSON file replaced atomically. Appending costs the same whatever the conversation's length, and restoring reads
each log once.

Writes are batched: while an invocation runs, its records are kept in memory, in order, and appended with one
``write``: before a tool body starts (with the tool's intent record, ``fdatasync``'ed, in a worker thread; tools
of one batch share that write), sooner once 64 KiB wait, and when the invocation ends (``fdatasync``'ed if it
returns with interrupts, so an interrupt handed to a caller is never lost). Taking the claim is a non-blocking
``flock``; nothing else blocks the event loop.

Concurrency: an invocation claims its agent's log (``flock``) at the version this process read, so a second
process resuming the same session at the same time, or one holding a stale copy, gets `SessionConflictError`
before anything runs or is written. Different sessions and different agents never block each other. Files and
directories are created readable by their owner only, and no symlink, FIFO or other planted file inside the
storage directory is ever followed or opened as a session file.
"""

import os
from pathlib import Path
from typing import Any, ClassVar

from ..types.exceptions import SessionStorageError
from ._file_store import AGENT_PREFIX, MULTI_AGENT_PREFIX, SESSION_FORMAT, SESSION_PREFIX, FileLogStore
from ._files import ensure_dir, storage_root
from ._ids import validate_id
from .repository_session_manager import RepositorySessionManager
from .session_repository import LogRef

__all__ = ["AGENT_PREFIX", "MULTI_AGENT_PREFIX", "SESSION_FORMAT", "SESSION_PREFIX", "FileSessionManager"]


def default_storage_dir() -> Path:
    """Return ``~/.strandslike/sessions``, private to the current user."""
    return Path.home() / ".strandslike" / "sessions"


class FileSessionManager(RepositorySessionManager, FileLogStore):
    """Persist agents (and orchestrators) in a directory; a fresh process with the same ids resumes them."""

    # The hooks call the store on the event loop: during an invocation appends only fill a buffer, and the writes
    # that may block (an fsync, a large batch) are sent to a worker thread.
    blocking_io: ClassVar[bool] = False  # type: ignore[misc]

    def __init__(
        self,
        session_id: str,
        storage_dir: str | os.PathLike[str] | None = None,
        *,
        fsync: bool = True,
        **kwargs: Any,
    ) -> None:
        """Open or create session ``session_id`` under ``storage_dir`` (default ``~/.strandslike/sessions``).

        Args:
            session_id: The session.
            storage_dir: The storage directory (created owner-only if missing).
            fsync: Flush durable writes to disk (tool intents, interrupted invocations, orchestrator states).
                False keeps every guarantee against a crash of the process, but not against a crash of the
                machine or a power loss; for tests, tmpfs, or disks whose cache survives power loss.
            **kwargs: Reserved for future arguments.

        Raises:
            ValueError: ``session_id`` is not a safe id (path separators, ``..``, control characters, too long).
            InvalidStorageDirError: ``storage_dir`` is a database DSN or a URL, not a directory (a `ValueError`).
            SessionCorruptError: The session's files are corrupt, planted (symlinks, FIFOs) or not strandslike's.
            SessionStorageError: The storage directory cannot be created.
        """
        validate_id(session_id, "session")
        root = storage_root(storage_dir) if storage_dir is not None else default_storage_dir()
        try:
            ensure_dir(root)
        except OSError as exc:  # a file in the way, no permission: a SessionException, as in Strands
            raise SessionStorageError(str(root), exc) from exc
        FileLogStore.__init__(self, root, fsync=fsync)
        RepositorySessionManager.__init__(self, session_id=session_id, session_repository=self, **kwargs)

    def describe_agent_storage(self, agent_id: str) -> str:
        """Return the path of an agent's log, for error messages."""
        return str(self.log_path(LogRef(self.session_id, "agent", agent_id)))
