"""How a session manager persists agents through Strands' record API alone (layer 1: a custom repository).

Such a repository cannot be claimed and cannot be read consistently, so nothing here can keep two processes from
resuming one session at once, and tool intents are not recorded: `RepositorySessionManager` warns about it
(`UnclaimedSessionWarning`) when it is built. Everything else works as with Strands.
"""

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..types.content import Message
from ..types.exceptions import SessionException
from ..types.session import SessionAgent, SessionMessage
from ._ids import validate_id
from ._restore import restore_agent

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from .repository_session_manager import RepositorySessionManager


class RecordPersistence:
    """Persists the agents and orchestrators of one `RepositorySessionManager` through layer 1."""

    def __init__(self, manager: "RepositorySessionManager", fingerprint: Callable[["Agent"], Any]) -> None:
        self.manager = manager
        self.repository = manager.session_repository
        self.session_id = manager.session_id
        self._fingerprint = fingerprint
        self._latest_message: dict[str, SessionMessage | None] = {}
        self._synced: dict[str, Any] = {}

    def initialize(self, agent: "Agent", is_new_session: bool) -> None:
        """Restore ``agent`` from the session, or create it there with its current messages.

        Raises:
            SessionException: Another agent with the same id was already initialized by this manager.
        """
        agent_id = validate_id(agent.agent_id, "agent")
        if agent_id in self._latest_message:
            raise SessionException("The `agent_id` of an agent must be unique in a session.")
        self._latest_message[agent_id] = None
        agent.tool_journal.scope = f"{self.session_id}/{agent_id}"
        stored = None if is_new_session else self.repository.read_agent(self.session_id, agent_id)
        if stored is None:
            self.repository.create_agent(self.session_id, SessionAgent.from_agent(agent))
            latest = None
            for index, message in enumerate(agent.messages):
                latest = SessionMessage.from_message(message, index)
                self.repository.create_message(self.session_id, agent_id, latest)
            self._latest_message[agent_id] = latest
        else:
            self._restore(agent, stored)
        self._synced[agent_id] = copy.deepcopy(self._fingerprint(agent))

    def _restore(self, agent: "Agent", stored: SessionAgent) -> None:
        where = self.manager.describe_agent_storage(agent.agent_id)
        messages = self.repository.list_messages(self.session_id, agent.agent_id)
        if messages:
            self._latest_message[agent.agent_id] = messages[-1]
        restore_agent(agent, stored, messages, where, lambda tool_use_id: None)

    def append_message(self, message: Message, agent: "Agent") -> None:
        """Persist ``message`` as the agent's next message."""
        latest = self._latest_message.get(agent.agent_id)
        session_message = SessionMessage.from_message(message, 0 if latest is None else latest.message_id + 1)
        self.repository.create_message(self.session_id, agent.agent_id, session_message)
        self._latest_message[agent.agent_id] = session_message

    def redact_latest_message(self, redact_message: Message, agent: "Agent") -> None:
        """Persist a redaction of the latest message.

        Raises:
            SessionException: No message was persisted yet.
        """
        latest = self._latest_message.get(agent.agent_id)
        if latest is None:
            raise SessionException("No message to redact.")
        latest.redact_message = redact_message
        self.repository.update_message(self.session_id, agent.agent_id, latest)

    def sync_agent(self, agent: "Agent") -> None:
        """Rewrite the agent record if its state, interrupt state, model state or manager state changed."""
        fingerprint = self._fingerprint(agent)
        if fingerprint == self._synced.get(agent.agent_id):
            return
        self.repository.update_agent(self.session_id, SessionAgent.from_agent(agent))
        self._synced[agent.agent_id] = copy.deepcopy(fingerprint)

    def initialize_multi_agent(self, source: Any, is_new_session: bool) -> None:
        """Restore an orchestrator (and its node agents) from the session, or store it if it is new."""
        validate_id(source.id, "multi_agent")
        stored = None if is_new_session else self.repository.read_multi_agent(self.session_id, source.id)
        if stored is None:
            self.repository.create_multi_agent(self.session_id, source)
        else:
            source.deserialize_state(stored)

    def sync_multi_agent(self, source: Any) -> None:
        """Persist an orchestrator's state."""
        self.repository.update_multi_agent(self.session_id, source)
