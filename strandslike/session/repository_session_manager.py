"""`RepositorySessionManager`: a session manager over any `SessionRepository`.

Over a repository that implements the durable log contract (``supports_claims = True``: `FileSessionManager`,
`InMemorySessionRepository`, a `LogSessionRepository` subclass) it keeps the exactly-once promise: one consistent
read per restore, a claim per invocation, tool intents durable before tool bodies run, one write per invocation
where possible (see `docs/exactly-once.md`). Over a custom Strands repository (layer 1 only) it persists as
Strands does and warns at construction (`UnclaimedSessionWarning`) that those guarantees do not hold.
"""

import logging
import warnings
from typing import TYPE_CHECKING, Any

import anyio

from ..hooks.events import (
    AfterInvocationEvent,
    AfterMultiAgentInvocationEvent,
    BeforeMultiAgentInvocationEvent,
    MessageAddedEvent,
)
from ..hooks.registry import HookRegistry
from ..types.content import Message
from ..types.exceptions import SessionConflictError, SessionException, UnclaimedSessionWarning
from ..types.session import Session, SessionType
from ._ids import validate_id
from ._log_persistence import FLUSH_BYTES, LogPersistence
from ._record_persistence import RecordPersistence
from .session_manager import SessionManager
from .session_repository import SessionRepository

if TYPE_CHECKING:
    from ..agent.agent import Agent


class RepositorySessionManager(SessionManager):
    """Persists agents through a `SessionRepository`; creates the session if it does not exist yet.

    What is persisted: every message, ``agent.state``, the interrupt state (open interrupts, answers given so
    far, and the pending tool batch with the results of completed tools), the interrupt audit trail, the model
    state, the conversation manager's state and, with a repository that supports claims, the start and end of
    every tool body. The agent snapshot is written only when one of these changed.
    """

    def __init__(self, session_id: str, session_repository: SessionRepository, **kwargs: Any) -> None:
        """Open (or create) session ``session_id`` in ``session_repository``.

        Raises:
            ValueError: ``session_id`` is not a safe id.

        Warns:
            UnclaimedSessionWarning: The repository does not implement the durable log contract.
        """
        self.session_id = validate_id(session_id, "session")
        self.session_repository = session_repository
        self.blocking_io = getattr(session_repository, "blocking_io", True)
        self.supports_claims = bool(getattr(session_repository, "supports_claims", False))
        if not self.supports_claims:
            warnings.warn(UnclaimedSessionWarning(type(session_repository).__name__, session_id), stacklevel=2)
        session = session_repository.read_session(session_id)
        self._is_new_session = session is None
        if session is None:
            session = Session(session_id=session_id, session_type=SessionType.AGENT)
            try:
                session_repository.create_session(session)
            except SessionException:
                # Another process created it in between (repositories refuse to create a session twice).
                found = session_repository.read_session(session_id)
                if found is None:
                    raise
                session, self._is_new_session = found, False
        self.session = session
        self._persistence: LogPersistence | RecordPersistence = (
            LogPersistence(self, self._fingerprint)
            if self.supports_claims
            else RecordPersistence(self, self._fingerprint)
        )

    # -- the Strands API ----------------------------------------------------------------------------------------------

    def initialize(self, agent: "Agent", **kwargs: Any) -> None:
        """Restore ``agent`` from the session, or create it there with its current messages.

        Raises:
            SessionException: Another agent with the same id was already initialized by this manager.
            SessionCorruptError: The stored agent is damaged.
        """
        self._persistence.initialize(agent, self._is_new_session)
        self._is_new_session = False

    def append_message(self, message: Message, agent: "Agent", **kwargs: Any) -> None:
        """Persist ``message`` as the agent's next message (buffered while an invocation runs)."""
        self._persistence.append_message(message, agent)

    def redact_latest_message(self, redact_message: Message, agent: "Agent", **kwargs: Any) -> None:
        """Persist a redaction of the latest message.

        Raises:
            SessionException: No message was persisted yet.
        """
        self._persistence.redact_latest_message(redact_message, agent)

    def sync_agent(self, agent: "Agent", **kwargs: Any) -> None:
        """Persist the agent's snapshot if its state, interrupt state, model state or manager state changed."""
        self._persistence.sync_agent(agent)

    def initialize_multi_agent(self, source: Any, **kwargs: Any) -> None:
        """Restore an orchestrator (and its node agents) from the session, or store it if it is new.

        With a repository that supports claims, the node agents' tool bodies are journaled in the orchestrator's
        log (intent durable before each body starts), and each node agent's tool journal gets the attempts an
        earlier process left unfinished, so a node tool whose process died is never run again silently.
        """
        self._persistence.initialize_multi_agent(source, self._is_new_session)
        self._is_new_session = False

    def sync_multi_agent(self, source: Any, **kwargs: Any) -> None:
        """Persist an orchestrator's state (its run, interrupts and node agents)."""
        self._persistence.sync_multi_agent(source)

    # -- invocations --------------------------------------------------------------------------------------------------

    def begin_invocation(self, agent: "Agent", *, log_refusal: bool = True, **kwargs: Any) -> None:
        """Claim the agent's session before anything runs (nested calls are counted; the outermost claims).

        Args:
            agent: The agent.
            log_refusal: Log a refused claim as a warning (a caller that handles it, by rebuilding the agent from
                the session, passes False).
            **kwargs: Ignored (Strands' signature).

        Raises:
            SessionConflictError: Another process runs the agent, or changed its session since this agent read it.
        """
        if isinstance(self._persistence, LogPersistence):
            try:
                self._persistence.begin(agent)
            except SessionConflictError as exc:
                if log_refusal:
                    self._log_refusal(exc, "agent")
                raise

    def end_invocation(self, agent: "Agent", **kwargs: Any) -> None:
        """Persist the invocation's records (durably if the agent waits on interrupts); release the outermost claim."""
        if isinstance(self._persistence, LogPersistence):
            self._persistence.end(agent)
        else:
            self.sync_agent(agent)

    def is_synced(self, agent: "Agent", **kwargs: Any) -> bool:
        """Whether ``agent`` is exactly what its log holds, between invocations.

        True when the manager keeps the durable log contract (``supports_claims``), no invocation of the agent holds
        its claim, every record of it was written, none of its writes failed, and its snapshot (state, interrupt,
        model and conversation-manager state) has not changed since it was written or read. The live agent is then
        what a restore of the session at the version this manager remembers would build, so a server may keep it
        between requests: the next `begin_invocation` claims the log at that version, and refuses
        (`SessionConflictError`) if anyone wrote the log meanwhile, in which case the agent must be rebuilt.
        """
        return isinstance(self._persistence, LogPersistence) and self._persistence.is_synced(agent)

    async def _on_message_added(self, event: MessageAddedEvent) -> None:
        persistence = self._persistence
        if isinstance(persistence, LogPersistence) and persistence.holds_claim(event.agent):
            self._message_added(event.message, event.agent)  # buffered: no I/O
            log = persistence.agents[event.agent.agent_id]
            if log.pending_size >= FLUSH_BYTES:
                await persistence.flush_async(log)
            return
        await self._io(self._message_added, event.message, event.agent)

    async def _on_after_invocation(self, event: AfterInvocationEvent) -> None:
        await self.end_invocation_async(event.agent)

    async def end_invocation_async(self, agent: "Agent", **kwargs: Any) -> None:
        """`end_invocation` from an event loop: called directly when it cannot block, else in a worker thread.

        It cannot block when the repository does no blocking I/O (``blocking_io`` False) and what is left to write
        is neither durable (an fsync) nor large: a small write to the page cache, or none at all.
        """
        persistence = self._persistence
        if isinstance(persistence, LogPersistence) and not self.blocking_io and not persistence.ends_durably(agent):
            self.end_invocation(agent)  # one small write to the page cache, or only the claim's release
            return
        await anyio.to_thread.run_sync(self.end_invocation, agent)

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Wire the manager to the lifecycle events; orchestrators are also claimed for each invocation."""
        super().register_hooks(registry, **kwargs)
        registry.add_callback(BeforeMultiAgentInvocationEvent, self._on_before_multi_agent_invocation)

    async def _on_before_multi_agent_invocation(self, event: BeforeMultiAgentInvocationEvent) -> None:
        await self._io(self.begin_multi_agent_invocation, event.source)

    async def _on_multi_agent_changed(self, event: Any) -> None:
        persistence = self._persistence
        try:
            if isinstance(persistence, LogPersistence) and type(self).sync_multi_agent is _SYNC_MULTI_AGENT:
                # The state is captured here, on the event loop, while the orchestration's other nodes wait; only
                # the durable write runs in a worker thread.
                await persistence.sync_multi_agent_async(event.source)
            else:
                await anyio.to_thread.run_sync(self.sync_multi_agent, event.source)  # a durable write
        finally:
            if isinstance(event, AfterMultiAgentInvocationEvent):
                self.end_multi_agent_invocation(event.source)

    def begin_multi_agent_invocation(self, source: Any, **kwargs: Any) -> None:
        """Claim an orchestrator's session before it runs, as `begin_invocation` does for an agent.

        Called by the orchestrator's `BeforeMultiAgentInvocationEvent` (and by a server around a whole request;
        nested calls count, the outermost claims).

        Raises:
            SessionConflictError: Another process runs the orchestration, or changed it since it was restored.
        """
        if isinstance(self._persistence, LogPersistence):
            try:
                self._persistence.begin_multi_agent(source)
            except SessionConflictError as exc:
                self._log_refusal(exc, "orchestration")
                raise

    def _log_refusal(self, exc: SessionConflictError, what: str) -> None:
        # Logged under the concrete manager's module (strandslike.session.file_session_manager for file sessions).
        logging.getLogger(type(self).__module__).warning(
            "session_id=<%s>, agent_id=<%s> | refused to run the %s: %s", exc.session_id, exc.agent_id, what, exc.detail
        )

    def end_multi_agent_invocation(self, source: Any, **kwargs: Any) -> None:
        """Release what `begin_multi_agent_invocation` claimed (the state was persisted as the run went)."""
        if isinstance(self._persistence, LogPersistence):
            self._persistence.end_multi_agent(source)

    def describe_agent_storage(self, agent_id: str) -> str:
        """Return where an agent is stored, for error messages."""
        return f"session {self.session_id!r}, agent {agent_id!r}"

    def close(self) -> None:
        """Release the claims this manager still holds (an invocation interrupted by a crash of its caller)."""
        if isinstance(self._persistence, LogPersistence):
            self._persistence.close()

    def _fingerprint(self, agent: "Agent") -> tuple[int, int, Any, Any]:
        manager = agent.conversation_manager
        return (
            agent.state.version,
            agent._interrupt_state.version,
            manager.get_state() if manager is not None else None,
            agent._model_state,
        )


_SYNC_MULTI_AGENT = RepositorySessionManager.sync_multi_agent
