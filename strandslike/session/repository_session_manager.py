"""`RepositorySessionManager`: a session manager over any `SessionRepository`."""

import copy
import logging
from typing import TYPE_CHECKING, Any

from ..agent.state import AgentState
from ..types.content import ContentBlock, Message, Messages
from ..types.exceptions import SessionCorruptError, SessionException
from ..types.session import Session, SessionAgent, SessionMessage, SessionType
from ._ids import validate_id
from .session_manager import SessionManager
from .session_repository import SessionRepository

if TYPE_CHECKING:
    from ..agent.agent import Agent

logger = logging.getLogger(__name__)


class RepositorySessionManager(SessionManager):
    """Persists agents through a `SessionRepository`; creates the session if it does not exist yet.

    What is persisted: every message (appended as it is added), ``agent.state``, the interrupt state (open
    interrupts, answers given so far, and the pending tool batch with the results of completed tools), the model
    state and the conversation manager's state. The agent record is rewritten only when one of these changed.
    """

    def __init__(self, session_id: str, session_repository: SessionRepository, **kwargs: Any) -> None:
        """Open (or create) session ``session_id`` in ``session_repository``.

        Raises:
            ValueError: ``session_id`` is not a safe id.
        """
        self.session_id = validate_id(session_id, "session")
        self.session_repository = session_repository
        self.blocking_io = getattr(session_repository, "blocking_io", True)
        session = session_repository.read_session(session_id)
        self._is_new_session = session is None
        if session is None:
            session = Session(session_id=session_id, session_type=SessionType.AGENT)
            session_repository.create_session(session)
        self.session = session
        self._latest_message: dict[str, SessionMessage | None] = {}
        self._synced: dict[str, tuple[int, int, Any, Any]] = {}

    def initialize(self, agent: "Agent", **kwargs: Any) -> None:
        """Restore ``agent`` from the session, or create it there with its current messages.

        Raises:
            SessionException: Another agent with the same id was already initialized by this manager.
        """
        agent_id = validate_id(agent.agent_id, "agent")
        if agent_id in self._latest_message:
            raise SessionException("The `agent_id` of an agent must be unique in a session.")
        self._latest_message[agent_id] = None
        stored = None if self._is_new_session else self.session_repository.read_agent(self.session_id, agent_id)
        if stored is None:
            self.session_repository.create_agent(self.session_id, SessionAgent.from_agent(agent))
            latest = None
            for index, message in enumerate(agent.messages):
                latest = SessionMessage.from_message(message, index)
                self.session_repository.create_message(self.session_id, agent_id, latest)
            self._latest_message[agent_id] = latest
        else:
            self._restore(agent, stored)
        self._remember_sync(agent)
        self._is_new_session = False

    def _restore(self, agent: "Agent", stored: SessionAgent) -> None:
        agent.state = AgentState(stored.state)
        stored.initialize_internal_state(agent)
        prepend: Messages = []
        offset = 0
        manager = agent.conversation_manager
        if manager is not None and stored.conversation_manager_state.get("__name__"):
            try:
                prepend = manager.restore_from_session(stored.conversation_manager_state) or []
            except (AttributeError, KeyError, TypeError, ValueError) as exc:
                where = self.describe_agent_storage(agent.agent_id)
                detail = f"holds a conversation manager state that cannot be restored ({exc})"
                raise SessionCorruptError(where, detail) from None
            offset = manager.removed_message_count
        session_messages = self.session_repository.list_messages(self.session_id, agent.agent_id, offset=offset)
        if session_messages:
            self._latest_message[agent.agent_id] = session_messages[-1]
        messages = prepend + [session_message.to_message() for session_message in session_messages]
        agent.messages = repair_tool_use(messages)

    def append_message(self, message: Message, agent: "Agent", **kwargs: Any) -> None:
        """Persist ``message`` as the agent's next message."""
        latest = self._latest_message.get(agent.agent_id)
        session_message = SessionMessage.from_message(message, 0 if latest is None else latest.message_id + 1)
        self.session_repository.create_message(self.session_id, agent.agent_id, session_message)
        self._latest_message[agent.agent_id] = session_message

    def redact_latest_message(self, redact_message: Message, agent: "Agent", **kwargs: Any) -> None:
        """Persist a redaction of the latest message.

        Raises:
            SessionException: No message was persisted yet.
        """
        latest = self._latest_message.get(agent.agent_id)
        if latest is None:
            raise SessionException("No message to redact.")
        latest.redact_message = redact_message
        self.session_repository.update_message(self.session_id, agent.agent_id, latest)

    def sync_agent(self, agent: "Agent", **kwargs: Any) -> None:
        """Rewrite the agent record if its state, interrupt state, model state or manager state changed."""
        if self._fingerprint(agent) == self._synced.get(agent.agent_id):
            return
        self.session_repository.update_agent(self.session_id, SessionAgent.from_agent(agent))
        self._remember_sync(agent)

    def initialize_multi_agent(self, source: Any, **kwargs: Any) -> None:
        """Restore an orchestrator (and its node agents) from the session, or store it if it is new."""
        validate_id(source.id, "multi_agent")
        stored = None if self._is_new_session else self.session_repository.read_multi_agent(self.session_id, source.id)
        if stored is None:
            self.session_repository.create_multi_agent(self.session_id, source)
        else:
            source.deserialize_state(stored)
        self._is_new_session = False

    def sync_multi_agent(self, source: Any, **kwargs: Any) -> None:
        """Persist an orchestrator's state (its run, interrupts and node agents)."""
        self.session_repository.update_multi_agent(self.session_id, source)

    def describe_agent_storage(self, agent_id: str) -> str:
        """Return where an agent is stored, for error messages."""
        return f"session {self.session_id!r}, agent {agent_id!r}"

    def _fingerprint(self, agent: "Agent") -> tuple[int, int, Any, Any]:
        manager = agent.conversation_manager
        return (
            agent.state.version,
            agent._interrupt_state.version,
            manager.get_state() if manager is not None else None,
            agent._model_state,
        )

    def _remember_sync(self, agent: "Agent") -> None:
        self._synced[agent.agent_id] = copy.deepcopy(self._fingerprint(agent))


def _interrupted_result(tool_use_id: str) -> ContentBlock:
    return {"toolResult": {"toolUseId": tool_use_id, "status": "error", "content": [{"text": "Tool was interrupted."}]}}


def _interrupted_note(block: ContentBlock) -> ContentBlock:
    if "toolUse" not in block:
        return block
    tool_use = block["toolUse"]
    return {"text": f"[Call of tool {tool_use['name']} ({tool_use['toolUseId']}) was interrupted before it returned.]"}


def repair_tool_use(messages: Messages) -> Messages:
    """Return ``messages`` with every tool use paired with exactly one result, as Strands' restore does.

    A tool use whose result is missing (a crash or timeout mid-tool) gets an error result ``"Tool was
    interrupted."`` in the user message that follows it (or, when an assistant message follows, becomes a text
    note, so no message is inserted and stored indices stay aligned); results that answer no tool use are
    dropped. A trailing assistant tool use is left as it is: either the agent waits on an interrupt for it, or the
    next prompt repairs it in the same user message.
    """
    work = list(messages)
    repaired: Messages = []
    index = 0
    while index < len(work):
        message = work[index]
        index += 1
        if message["role"] == "user" and any("toolResult" in block for block in message["content"]):
            previous = repaired[-1] if repaired else None
            if previous is None or not any("toolUse" in block for block in previous["content"]):
                logger.warning("message_index=<%d> | dropping tool results that answer no tool use", index - 1)
                kept = [block for block in message["content"] if "toolResult" not in block]
                if kept:
                    repaired.append({**message, "content": kept})
                continue
        repaired.append(message)
        uses = [block["toolUse"]["toolUseId"] for block in message["content"] if "toolUse" in block]
        if message["role"] != "assistant" or not uses or index >= len(work):
            continue  # no tool use, or a trailing one: waiting on an interrupt or repaired with the next prompt
        following = work[index]
        results = {
            block["toolResult"]["toolUseId"]: block
            for block in following["content"]
            if following["role"] == "user" and "toolResult" in block
        }
        if len(results) == len(uses) and all(use in results for use in uses):
            continue
        missing = [use for use in uses if use not in results]
        logger.warning(
            "message_index=<%d>, tool_use_ids=<%s> | repaired tool uses that never got a result (a crash or "
            "timeout mid-tool): the model will see them as interrupted",
            index - 1,
            ", ".join(missing),
        )
        if following["role"] == "user":
            content: list[ContentBlock] = [results.get(use) or _interrupted_result(use) for use in uses]
            extra = [block for block in following["content"] if "toolResult" not in block]
            work[index] = {**following, "content": content + extra}
        else:
            # No user message follows to carry results, and inserting one would shift the stored indices the
            # conversation manager counts with: turn the unanswered tool uses into a note instead.
            repaired[-1] = {**message, "content": [_interrupted_note(block) for block in message["content"]]}
    return repaired
