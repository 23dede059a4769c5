"""How a session manager persists agents and orchestrators through the durable log contract (layer 2).

Per agent, one `_AgentLog` holds the version of exactly what this process read or wrote, the claim while an
invocation runs, and the records of that invocation not written yet:

- restoring reads the log once (`SessionRepository.read_log`) and remembers that read's version;
- `BeforeInvocationEvent` claims the log at that version, so a second process, or a copy of the agent restored
  before another process changed the session, gets `SessionConflictError` before anything runs;
- records are buffered during the invocation and appended with as few writes as possible: the buffer is
  written before a tool body starts (durably, with the tool's intent record: the tool journal's sink), early once
  it holds `FLUSH_BYTES`, and when the invocation ends (durably if the agent waits on interrupts), before the
  claim is released and the `AgentResult` returned;
- writes outside an invocation (a new agent's first records, direct tool calls, `sync_agent` called by hand)
  take a short claim of their own.

A write that fails leaves the agent ahead of its log, so every later write of that agent is refused with
`SessionException` until a fresh agent is built from the session.
"""

import copy
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from ..tools.journal import ToolAttempt
from ..types.exceptions import SessionConflictError, SessionException
from ..types.session import SessionAgent, SessionMessage
from ._ids import validate_id
from ._multi_agent_persistence import MultiAgentLogs
from ._records import (
    header,
    intent_record,
    message_record,
    outcome_record,
    redaction_record,
    replay_agent,
    snapshot_records,
)
from ._restore import restore_agent, unanswered_tool_uses
from .session_repository import LogClaim, LogRef, SessionRepository

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from .repository_session_manager import RepositorySessionManager

logger = logging.getLogger(__name__)

FLUSH_BYTES = 64 * 1024  # buffered records of an invocation written early, in a worker thread, past this size


class _AgentLog:
    """One agent's log as this manager persists it."""

    def __init__(self, ref: LogRef, version: str | None, has_records: bool) -> None:
        self.ref = ref
        self.version = version
        self.has_records = has_records
        self.audit_written = 0
        self.latest: SessionMessage | None = None
        self.synced: Any = None
        self.claim: LogClaim | None = None
        self.depth = 0
        self.pending: list[dict[str, Any]] = []
        self.pending_size = 0
        self.pending_durable = False
        self.state_pending = False  # an orchestrator's state record waits in the buffer
        self.state_pending_for: str | None = None  # the node path whose tool batch captured it (None: another write)
        self.buffered = 0  # records buffered so far
        self.durable = 0  # of those, how many are durable
        self.buffer_lock = threading.Lock()  # short: guards the buffer
        self.write_lock = threading.Lock()  # held through an append, so appends keep their order
        self.failed: BaseException | None = None


class _JournalSink:
    """Makes an agent's tool intents durable before the tool bodies run (`strandslike.tools.journal.JournalSink`)."""

    def __init__(self, persistence: "LogPersistence", log: _AgentLog, agent: "Agent") -> None:
        self._persistence = persistence
        self._log = log
        self._agent = agent

    async def tool_started(self, attempt: ToolAttempt) -> None:
        """Write everything pending and the intent record durably; return only then."""
        persistence, log = self._persistence, self._log
        persistence.sync_agent(self._agent)  # the snapshot with the answers just applied goes first
        needed = persistence.buffer(log, [intent_record(attempt)], 0, durable=True)
        await anyio.lowlevel.checkpoint()  # the other tools of the batch add their intents: one write for all
        await persistence.flush_async(log, durable=True, needed=needed)

    def tool_finished(self, attempt: ToolAttempt) -> None:
        """Buffer how the body ended (written with the next write)."""
        self._persistence.write(self._log, [outcome_record(attempt)], 0)


class LogPersistence:
    """Persists the agents and orchestrators of one `RepositorySessionManager` through the log contract."""

    def __init__(self, manager: "RepositorySessionManager", fingerprint: Callable[["Agent"], Any]) -> None:
        self.manager = manager
        self.repository: SessionRepository = manager.session_repository
        self.session_id = manager.session_id
        self._fingerprint = fingerprint
        self.agents: dict[str, _AgentLog] = {}
        self.orchestrators = MultiAgentLogs(self)

    def where(self, ref: LogRef) -> str:
        """Return where a log is stored, for errors."""
        describe = getattr(self.repository, "describe_log", None)
        return describe(ref) if callable(describe) else f"session {ref.session_id!r}, {ref.kind} {ref.owner_id!r}"

    # -- restoring ----------------------------------------------------------------------------------------------------

    def initialize(self, agent: "Agent", is_new_session: bool) -> None:
        """Restore ``agent`` from one read of its log, or start the log with its current state and messages.

        Raises:
            SessionException: Another agent with the same id was already initialized by this manager.
            SessionCorruptError: The log is damaged or not an agent log.
        """
        agent_id = validate_id(agent.agent_id, "agent")
        if agent_id in self.agents:
            raise SessionException("The `agent_id` of an agent must be unique in a session.")
        ref = LogRef(self.session_id, "agent", agent_id)
        stored = None if is_new_session else self.repository.read_log(ref)
        replayed = None if stored is None else replay_agent(stored, self.where(ref))
        log = _AgentLog(ref, None if stored is None else stored.version, bool(stored and stored.records))
        journal = agent.tool_journal
        journal.scope = f"{self.session_id}/{agent_id}"
        if replayed is None or replayed.agent is None:
            self.agents[agent_id] = log
            records: list[dict[str, Any]] = []
            snapshot, log.audit_written, _ = snapshot_records(SessionAgent.from_agent(agent), 0)
            records.extend(snapshot)
            start = 0 if replayed is None else len(replayed.messages)
            for index, message in enumerate(agent.messages, start=start):
                log.latest = SessionMessage.from_message(message, index)
                records.append(message_record(log.latest)[0])
            log.synced = copy.deepcopy(self._fingerprint(agent))
            self.write(log, records, 0)
        else:
            for repair in replayed.repairs:
                logger.warning("session_id=<%s>, agent_id=<%s> | %s", self.session_id, agent_id, repair)
            if replayed.attempts:
                journal.restore(replayed.open_attempts(unanswered_tool_uses(replayed.messages)))
            restore_agent(agent, replayed.agent, replayed.messages, self.where(ref), journal.restored)
            log.audit_written = len(replayed.audit)
            log.latest = replayed.messages[-1] if replayed.messages else None
            log.synced = copy.deepcopy(self._fingerprint(agent))
            self.agents[agent_id] = log
        journal.sink = _JournalSink(self, log, agent)

    def _log(self, agent: "Agent") -> _AgentLog:
        log = self.agents.get(agent.agent_id)
        if log is None:
            raise SessionException(
                f"agent_id=<{agent.agent_id}> | this agent was not initialized by session {self.session_id!r}; "
                "pass the session manager to the Agent when you build it"
            )
        return log

    # -- writing ------------------------------------------------------------------------------------------------------

    def buffer(
        self,
        log: _AgentLog,
        records: list[dict[str, Any]],
        size: int,
        *,
        durable: bool = False,
        state: bool = False,
        state_for: str | None = None,
    ) -> int:
        """Add records to the log's buffer; return how many records were buffered so far (a sequence number).

        ``state`` says the records hold an orchestrator's state (`_AgentLog.state_pending` until written), captured
        for the tool batch of the node at ``state_for`` (`_AgentLog.state_pending_for`), or for another write (None).
        """
        with log.buffer_lock:
            log.pending.extend(records)
            log.pending_size += size
            log.pending_durable = log.pending_durable or durable
            if state:
                log.state_pending, log.state_pending_for = True, state_for
            log.buffered += len(records)
            return log.buffered

    def write(self, log: _AgentLog, records: list[dict[str, Any]], size: int) -> None:
        """Buffer records while the log is claimed for an invocation; otherwise write them now (a short claim)."""
        if log.failed is not None:
            raise _failed(log)
        self.buffer(log, records, size)
        if log.claim is None:
            self.flush(log)

    def flush(self, log: _AgentLog, durable: bool = False, needed: int = 0) -> None:
        """Append the buffered records under the claim (or a short claim of its own), in order.

        Args:
            log: The agent's log.
            durable: Return only once they survive a machine crash.
            needed: The sequence number that must be durable when this returns (a tool's intent).

        Raises:
            SessionException: This or an earlier write failed; the agent is ahead of its log.
        """
        with log.write_lock:
            if log.failed is not None:
                raise _failed(log)
            with log.buffer_lock:
                records, log.pending, log.pending_size = log.pending, [], 0
                durable = durable or log.pending_durable
                log.pending_durable = log.state_pending = False
                log.state_pending_for = None
                upto = log.buffered
            if records:
                self._append(log, records, durable)
                if durable:
                    log.durable = upto
            if needed > log.durable:
                raise SessionException(f"session_id=<{self.session_id}> | a tool's intent record is not durable")

    def _append(self, log: _AgentLog, records: list[dict[str, Any]], durable: bool) -> None:
        if not log.has_records:
            records.insert(0, header(log.ref))
        try:
            if log.claim is not None:
                self.repository.append_log(log.claim, records, durable=durable)
                log.version = log.claim.version
            else:
                claim = self.repository.claim_log(log.ref, log.version)
                try:
                    self.repository.append_log(claim, records, durable=durable)
                    log.version = claim.version
                finally:
                    self.repository.release_log(claim)
        except BaseException as exc:
            log.failed = exc
            raise
        log.has_records = True

    async def flush_async(self, log: _AgentLog, *, durable: bool = False, needed: int = 0) -> None:
        """`flush` from the event loop: in a worker thread when it may block (an fsync, a large batch)."""
        if durable or self.manager.blocking_io or log.pending_size >= FLUSH_BYTES:
            await anyio.to_thread.run_sync(self.flush, log, durable, needed)
        else:
            self.flush(log, durable, needed)

    def holds_claim(self, agent: "Agent") -> bool:
        """Whether the agent's log is claimed for a running invocation (writes are then buffered)."""
        log = self.agents.get(agent.agent_id)
        return log is not None and log.claim is not None

    def pending_size(self, agent: "Agent") -> int:
        """How many bytes of records wait in the agent's buffer (approximately)."""
        log = self.agents.get(agent.agent_id)
        return 0 if log is None else log.pending_size

    # -- the Strands API ----------------------------------------------------------------------------------------------

    def append_message(self, message: Any, agent: "Agent") -> None:
        """Persist ``message`` as the agent's next message."""
        log = self._log(agent)
        session_message = SessionMessage.from_message(message, 0 if log.latest is None else log.latest.message_id + 1)
        record, size = message_record(session_message)
        log.latest = session_message
        self.write(log, [record], size)

    def redact_latest_message(self, redact_message: Any, agent: "Agent") -> None:
        """Persist a redaction of the latest message.

        Raises:
            SessionException: No message was persisted yet.
        """
        log = self._log(agent)
        if log.latest is None:
            raise SessionException("No message to redact.")
        record = redaction_record(log.latest.message_id, redact_message)
        log.latest.redact_message = redact_message
        self.write(log, [record], 0)

    def sync_agent(self, agent: "Agent") -> None:
        """Persist a snapshot of the agent if its state, interrupt, model or conversation-manager state changed."""
        log = self._log(agent)
        fingerprint = self._fingerprint(agent)
        if fingerprint == log.synced:
            return
        records, audit_written, size = snapshot_records(SessionAgent.from_agent(agent), log.audit_written)
        log.audit_written = audit_written
        log.synced = copy.deepcopy(fingerprint)
        self.write(log, records, size)

    # -- invocations --------------------------------------------------------------------------------------------------

    def begin(self, agent: "Agent") -> None:
        """Claim the agent's log at the version this process last read or wrote (nested calls count up).

        Raises:
            SessionConflictError: Another process holds the claim or changed the log since.
            SessionException: An earlier write of this agent failed.
        """
        log = self._log(agent)
        if log.failed is not None:
            raise _failed(log)
        if log.depth == 0:
            log.claim = self.repository.claim_log(log.ref, log.version)
        log.depth += 1

    def end(self, agent: "Agent") -> None:
        """Write the invocation's records (durably if the agent waits on interrupts); release the outermost claim."""
        log = self.agents.get(agent.agent_id)
        if log is None or log.depth == 0:
            return  # begin failed or never ran: this process must not write
        try:
            if log.failed is None:
                self.sync_agent(agent)
                self.flush(log, durable=agent._interrupt_state.activated)
        finally:
            log.depth -= 1
            if log.depth == 0 and log.claim is not None:
                claim, log.claim = log.claim, None
                self.repository.release_log(claim)

    def is_synced(self, agent: "Agent") -> bool:
        """Whether the agent's log holds everything the agent holds, between invocations.

        No claim held, nothing buffered, no failed write, no change to its snapshot since it was written or read.
        """
        log = self.agents.get(agent.agent_id)
        return (
            log is not None
            and log.claim is None
            and log.failed is None
            and not log.pending
            and self._fingerprint(agent) == log.synced
        )

    def ends_durably(self, agent: "Agent") -> bool:
        """Whether ending the invocation now may block: a large write, or records to write durably (an fsync).

        An agent that waits on interrupts ends with a durable write of what is left; with nothing left (its own
        invocation already wrote it, durably), ending only releases the claim.
        """
        log = self.agents.get(agent.agent_id)
        if log is None:
            return agent._interrupt_state.activated
        if log.pending_size >= FLUSH_BYTES:
            return True
        return agent._interrupt_state.activated and (bool(log.pending) or self._fingerprint(agent) != log.synced)

    # -- orchestrators (see `strandslike.session._multi_agent_persistence`) -------------------------------------------

    def initialize_multi_agent(self, source: Any, is_new_session: bool) -> None:
        """Restore an orchestrator (and its node agents' tool attempts) from one read of its log, or start the log."""
        self.orchestrators.initialize(source, is_new_session)

    def sync_multi_agent(self, source: Any) -> None:
        """Append an orchestrator's state (durably): under its claim if held, else under a short claim."""
        self.orchestrators.sync(source)

    async def sync_multi_agent_async(self, source: Any) -> None:
        """`sync_multi_agent` from the event loop (the state is captured there, written in a worker thread)."""
        await self.orchestrators.sync_async(source)

    def begin_multi_agent(self, source: Any) -> None:
        """Claim an orchestrator's log for an invocation (nested calls count up).

        Raises:
            SessionConflictError: Another process holds the claim or changed the orchestration since.
        """
        self.orchestrators.begin(source)

    def end_multi_agent(self, source: Any) -> None:
        """Release the outermost claim of an orchestrator's log (its state was appended as it ran)."""
        self.orchestrators.end(source)

    def failed(self, log: _AgentLog) -> SessionException:
        """Return the error that refuses every write of a log after one failed."""
        return _failed(log)

    def close(self) -> None:
        """Release the claims this manager still holds."""
        for log in [*self.agents.values(), *self.orchestrators.logs.values()]:
            if log.claim is not None:
                claim, log.claim, log.depth = log.claim, None, 0
                self.repository.release_log(claim)


def _failed(log: _AgentLog) -> SessionException:
    if isinstance(log.failed, SessionConflictError):
        return SessionConflictError(
            log.ref.session_id,
            log.ref.owner_id,
            f"an earlier write of this {log.ref.kind.replace('_', '-')} was refused ({log.failed.detail})",
        )
    return SessionException(
        f"session_id=<{log.ref.session_id}>, {log.ref.kind}_id=<{log.ref.owner_id}> | an earlier write of this "
        f"{log.ref.kind.replace('_', '-')} failed ({type(log.failed).__name__}: {log.failed}), so the live object is "
        "ahead of its session and nothing more is written from it. Build a fresh one from the session and retry."
    )
