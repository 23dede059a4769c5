"""`LogSessionRepository`: Strands' record API (layer 1) built on the durable log contract (layer 2).

A store that keeps logs (files, a database table, an object store) subclasses this and implements only sessions
(`create_session`, `read_session`, `delete_session`) and the log contract (`read_log`, `claim_log`, `append_log`,
`release_log`, `list_logs`, `list_sessions`). Everything Strands' API offers (`create_agent`, `read_agent`,
`list_messages`, `update_message`, `read_multi_agent`, ...) is then provided here, from the same records and the
same replayer the session manager uses, so code that calls those methods directly (tests, tools, the CLI,
``sessions import-strands``) sees exactly what a restored agent sees.

Layer-1 writes are blind writes in Strands' API, but here each takes a short claim at the version this object
last read or wrote (reading the log first if it never did), so a write based on a stale read is refused with
`SessionConflictError` instead of silently interleaving with another writer.
"""

import threading
from dataclasses import dataclass
from typing import Any, ClassVar

from ..types.exceptions import SessionException
from ..types.session import SessionAgent, SessionMessage
from ._ids import validate_id
from ._multi_agent_log import replay_multi_agent
from ._records import (
    StoredAgent,
    header,
    message_record,
    multi_agent_record,
    redaction_record,
    replay_agent,
    snapshot_records,
)
from .session_repository import LogRef, SessionRepository, StoredLog


@dataclass
class _Seen:
    """What this object last read or wrote of one log."""

    version: str | None
    has_records: bool
    audit_written: int = 0


class LogSessionRepository(SessionRepository):
    """A `SessionRepository` that keeps every agent and orchestrator as a log; layer 1 comes for free.

    Subclasses implement sessions and the log contract (see `SessionRepository`); the conformance suite
    `strandslike.testing.session_conformance` checks them.
    """

    supports_claims: ClassVar[bool] = True

    def __init__(self) -> None:
        self._seen: dict[LogRef, _Seen] = {}
        self._seen_lock = threading.Lock()

    # -- helpers ------------------------------------------------------------------------------------------------------

    def describe_log(self, ref: LogRef) -> str:
        """Return where a log is stored, for error messages (stores override this with a path or a key)."""
        return f"session {ref.session_id!r}, {ref.kind.replace('_', '-')} {ref.owner_id!r}"

    @staticmethod
    def agent_ref(session_id: str, agent_id: str) -> LogRef:
        """Return the log of an agent, after checking both ids.

        Raises:
            ValueError: An id is not safe (see `validate_id`).
        """
        return LogRef(validate_id(session_id, "session"), "agent", validate_id(agent_id, "agent"))

    @staticmethod
    def multi_agent_ref(session_id: str, multi_agent_id: str) -> LogRef:
        """Return the log of an orchestrator, after checking both ids.

        Raises:
            ValueError: An id is not safe.
        """
        return LogRef(validate_id(session_id, "session"), "multi_agent", validate_id(multi_agent_id, "multi_agent"))

    def _read(self, ref: LogRef) -> StoredLog | None:
        stored = self.read_log(ref)
        with self._seen_lock:
            self._seen[ref] = _Seen(
                None if stored is None else stored.version, stored is not None and bool(stored.records)
            )
        return stored

    def load_agent(self, session_id: str, agent_id: str) -> StoredAgent | None:
        """Read an agent's log once and replay it: snapshot, messages, audit trail, tool attempts and repairs.

        Returns None if the agent has no log.

        Raises:
            SessionCorruptError: The log is damaged or not an agent log.
        """
        ref = self.agent_ref(session_id, agent_id)
        stored = self._read(ref)
        if stored is None:
            return None
        replayed = replay_agent(stored, self.describe_log(ref))
        with self._seen_lock:
            seen = self._seen.get(ref)
            if seen is not None and seen.version == stored.version:
                seen.audit_written = len(replayed.audit)
        return replayed

    def _short_write(self, ref: LogRef, build: Any, *, durable: bool = False, missing: str | None = None) -> None:
        """Append ``build(seen)``'s records under a claim at the version this object last saw.

        Raises:
            SessionException: ``missing`` is given (an update, in Strands' API) and the log has no records yet; the
                message is ``missing``.
        """
        with self._seen_lock:
            seen = self._seen.get(ref)
        if seen is None:
            if ref.kind == "agent":
                self.load_agent(ref.session_id, ref.owner_id)  # learns the audit trail's length too
            else:
                self._read(ref)
            with self._seen_lock:
                seen = self._seen[ref]
        if missing is not None and not seen.has_records:
            raise SessionException(missing)
        claim = self.claim_log(ref, seen.version)
        try:
            records = build(seen)
            if not seen.has_records:
                records.insert(0, header(ref))
            self.append_log(claim, records, durable=durable)
            seen.version = claim.version
            seen.has_records = True
        finally:
            self.release_log(claim)

    # -- layer 1: agents ----------------------------------------------------------------------------------------------

    def create_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        """Start the agent's log with a header and a snapshot (append a snapshot if it exists)."""
        self._write_agent(session_id, session_agent, None)

    def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> SessionAgent | None:
        """Replay the agent's log and return its latest snapshot (with its audit trail)."""
        replayed = self.load_agent(session_id, agent_id)
        return None if replayed is None else replayed.agent

    def update_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        """Append a snapshot of the agent (and the audit entries not stored yet).

        Raises:
            SessionException: The agent does not exist (Strands' message).
        """
        missing = f"Agent {session_agent.agent_id} in session {session_id} does not exist"
        self._write_agent(session_id, session_agent, missing)

    def _write_agent(self, session_id: str, session_agent: SessionAgent, missing: str | None) -> None:
        ref = self.agent_ref(session_id, session_agent.agent_id)

        def build(seen: _Seen) -> list[dict[str, Any]]:
            records, seen.audit_written, _ = snapshot_records(session_agent, seen.audit_written)
            return records

        self._short_write(ref, build, missing=missing)

    # -- layer 1: messages --------------------------------------------------------------------------------------------

    def create_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        """Append a message record."""
        self._short_write(self.agent_ref(session_id, agent_id), lambda seen: [message_record(session_message)[0]])

    def read_message(self, session_id: str, agent_id: str, message_id: int, **kwargs: Any) -> SessionMessage | None:
        """Read one message by index."""
        if not isinstance(message_id, int):
            raise ValueError(f"message_id=<{message_id}> | message id must be an integer")
        replayed = self.load_agent(session_id, agent_id)
        if replayed is None:
            return None
        return next((message for message in replayed.messages if message.message_id == message_id), None)

    def update_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        """Append a redaction record: the message now reads as ``redact_message`` (or ``message`` if that is unset).

        Raises:
            SessionException: The message does not exist (Strands' message).
        """
        replacement = (
            session_message.redact_message if session_message.redact_message is not None else session_message.message
        )
        ref = self.agent_ref(session_id, agent_id)
        # Read without changing the version this object last saw: a write based on a stale read is still refused.
        stored = self.read_log(ref)
        replayed = None if stored is None else replay_agent(stored, self.describe_log(ref))
        if replayed is None or all(message.message_id != session_message.message_id for message in replayed.messages):
            raise SessionException(f"Message {session_message.message_id} does not exist")
        self._short_write(ref, lambda seen: [redaction_record(session_message.message_id, replacement)])

    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> list[SessionMessage]:
        """List the agent's messages in order, skipping ``offset`` and returning at most ``limit``."""
        replayed = self.load_agent(session_id, agent_id)
        if replayed is None:
            return []
        end = None if limit is None else offset + limit
        return replayed.messages[offset:end]

    # -- layer 1: orchestrators ---------------------------------------------------------------------------------------

    def create_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        """Start an orchestrator's log with its state."""
        self._write_multi_agent(session_id, multi_agent, None)

    def read_multi_agent(self, session_id: str, multi_agent_id: str, **kwargs: Any) -> dict[str, Any] | None:
        """Return an orchestrator's latest state."""
        ref = self.multi_agent_ref(session_id, multi_agent_id)
        stored = self._read(ref)
        return None if stored is None else replay_multi_agent(stored, self.describe_log(ref))

    def update_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        """Append an orchestrator's state (durably: an orchestration that pauses must find it again).

        Raises:
            SessionException: The orchestrator has no state yet (Strands' message).
        """
        missing = f"MultiAgent state {multi_agent.id} in session {session_id} does not exist"
        self._write_multi_agent(session_id, multi_agent, missing)

    def _write_multi_agent(self, session_id: str, multi_agent: Any, missing: str | None) -> None:
        ref = self.multi_agent_ref(session_id, multi_agent.id)
        state = multi_agent.serialize_state()
        self._short_write(ref, lambda seen: [multi_agent_record(state, ref.owner_id)[0]], durable=True, missing=missing)

    def delete_session(self, session_id: str, **kwargs: Any) -> None:
        """Delete a session and everything in it.

        Raises:
            SessionException: The session does not exist.
        """
        raise SessionException(f"{type(self).__name__} cannot delete sessions")
