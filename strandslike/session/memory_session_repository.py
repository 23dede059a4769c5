"""`InMemorySessionRepository`: sessions kept in memory, for tests and short-lived processes."""

import copy
import itertools
import json
import threading
from collections.abc import Sequence
from typing import Any, ClassVar

from ..types.exceptions import NotJSONSerializableError, SessionConflictError, SessionException
from ..types.session import Session
from .log_session_repository import LogSessionRepository
from .session_repository import LogClaim, LogRef, StoredLog

_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


class InMemorySessionRepository(LogSessionRepository):
    """A `SessionRepository` holding every log in memory; records are copied in and out like a real store.

    It implements the durable log contract (``supports_claims``): claims are exclusive within the process (one
    repository can serve several managers and agents, which is how a "new Agent per request" server is tested)
    and versions are counters. Nothing survives the process, so ``durable`` has nothing more to do. It never
    blocks, so session managers call it on the event loop.
    """

    blocking_io: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}
        self._logs: dict[LogRef, list[bytes]] = {}  # each record as its JSON, so no caller can change it later
        self._versions: dict[LogRef, int] = {}
        self._claims: dict[LogRef, object] = {}
        self._counter = itertools.count(1)

    # -- sessions -----------------------------------------------------------------------------------------------------

    def create_session(self, session: Session, **kwargs: Any) -> Session:
        """Create a new session.

        Raises:
            SessionException: It already exists.
        """
        with self._lock:
            if session.session_id in self._sessions:
                raise SessionException(f"Session {session.session_id} already exists")
            self._sessions[session.session_id] = copy.deepcopy(session)
        return session

    def read_session(self, session_id: str, **kwargs: Any) -> Session | None:
        """Read a session."""
        with self._lock:
            return copy.deepcopy(self._sessions.get(session_id))

    def delete_session(self, session_id: str, **kwargs: Any) -> None:
        """Delete a session and every log in it (held claims become invalid)."""
        with self._lock:
            self._sessions.pop(session_id, None)
            for ref in [ref for ref in self._logs if ref.session_id == session_id]:
                del self._logs[ref]
                self._versions.pop(ref, None)
        with self._seen_lock:
            for ref in [ref for ref in self._seen if ref.session_id == session_id]:
                del self._seen[ref]

    # -- the log contract ---------------------------------------------------------------------------------------------

    def read_log(self, ref: LogRef, **kwargs: Any) -> StoredLog | None:
        """Return a copy of every record of a log and its version, or None if it does not exist."""
        with self._lock:
            lines = self._logs.get(ref)
            if lines is None:
                return None
            version = self._versions[ref]
            data = b"[" + b",".join(lines) + b"]"
        return StoredLog(json.loads(data), str(version))

    def claim_log(self, ref: LogRef, version: str | None, **kwargs: Any) -> LogClaim:
        """Claim a log if nobody holds it and it is still at ``version``.

        Raises:
            SessionConflictError: It is claimed, or it changed since ``version``.
        """
        with self._lock:
            if ref in self._claims:
                raise _conflict(ref, "another agent is running it right now")
            current = self._versions.get(ref)
            if (None if current is None else str(current)) != version:
                raise _conflict(ref, "it was changed by another writer since this agent read it")
            token = object()
            self._claims[ref] = token
        return LogClaim(ref, version, token)

    def append_log(self, claim: LogClaim, records: Sequence[dict[str, Any]], *, durable: bool, **kwargs: Any) -> None:
        """Append records (all or none) under a held claim.

        Raises:
            SessionConflictError: The claim was released or the log changed under it; nothing was written.
        """
        if not records:
            return
        encoded = [_encode(record) for record in records]
        ref = claim.ref
        with self._lock:
            if self._claims.get(ref) is not claim.handle:
                raise _conflict(ref, "this claim was released or lost")
            current = self._versions.get(ref)
            if (None if current is None else str(current)) != claim.version:
                raise _conflict(ref, "it was changed under this claim")
            self._logs.setdefault(ref, []).extend(encoded)
            version = next(self._counter)
            self._versions[ref] = version
            claim.version = str(version)

    def release_log(self, claim: LogClaim, **kwargs: Any) -> None:
        """Give the claim up (idempotent)."""
        with self._lock:
            if self._claims.get(claim.ref) is claim.handle:
                del self._claims[claim.ref]

    def list_logs(self, session_id: str, **kwargs: Any) -> list[LogRef]:
        """Return the logs of a session: agents, then orchestrators, each sorted by owner id."""
        with self._lock:
            refs = [ref for ref in self._logs if ref.session_id == session_id]
        return sorted(refs, key=lambda ref: (ref.kind != "agent", ref.owner_id))

    def list_sessions(self, **kwargs: Any) -> list[str]:
        """Return the ids of every session, sorted."""
        with self._lock:
            return sorted(self._sessions)


def _encode(record: dict[str, Any]) -> bytes:
    if type(record) is not dict or not isinstance(record.get("k"), str):
        raise ValueError(f"{record!r:.80} is not a log record: a record must be a JSON object with a string 'k'")
    try:
        return _ENCODER.encode(record).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError) as exc:
        raise NotJSONSerializableError("A session record", record, f"{type(exc).__name__}: {exc}") from None


def _conflict(ref: LogRef, detail: str) -> SessionConflictError:
    return SessionConflictError(
        ref.session_id, ref.owner_id, f"the {ref.kind.replace('_', '-')} log cannot be claimed: {detail}"
    )
