"""`InMemorySessionRepository`: sessions kept in memory, for tests and short-lived processes."""

import copy
import threading
from typing import Any, ClassVar, TypeVar

from ..types.exceptions import SessionException
from ..types.session import Session, SessionAgent, SessionMessage
from .session_repository import SessionRepository


class InMemorySessionRepository(SessionRepository):
    """A `SessionRepository` holding everything in dicts; records are copied in and out like a real store.

    It never blocks, so session managers call it on the event loop. One instance can serve several managers
    (and agents) in the same process, which is how a "new Agent per request" server can be tested.
    """

    blocking_io: ClassVar[bool] = False

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}
        self._agents: dict[tuple[str, str], SessionAgent] = {}
        self._messages: dict[tuple[str, str], list[SessionMessage]] = {}
        self._multi_agents: dict[tuple[str, str], dict[str, Any]] = {}

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
        """Delete a session and everything in it."""
        with self._lock:
            self._sessions.pop(session_id, None)
            for store in (self._agents, self._messages, self._multi_agents):
                for key in [key for key in store if key[0] == session_id]:
                    del store[key]

    def create_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        """Create an agent in a session."""
        with self._lock:
            self._require(session_id)
            self._agents[(session_id, session_agent.agent_id)] = _copy(session_agent)
            self._messages.setdefault((session_id, session_agent.agent_id), [])

    def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> SessionAgent | None:
        """Read an agent."""
        with self._lock:
            agent = self._agents.get((session_id, agent_id))
            return None if agent is None else _copy(agent)

    def update_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        """Replace an agent's state, keeping its creation time."""
        with self._lock:
            key = (session_id, session_agent.agent_id)
            previous = self._agents.get(key)
            if previous is None:
                raise SessionException(f"Agent {session_agent.agent_id} in session {session_id} does not exist")
            updated = _copy(session_agent)
            updated.created_at = previous.created_at
            self._agents[key] = updated

    def create_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        """Append a message."""
        with self._lock:
            self._messages.setdefault((session_id, agent_id), []).append(_copy(session_message))

    def read_message(self, session_id: str, agent_id: str, message_id: int, **kwargs: Any) -> SessionMessage | None:
        """Read one message by index."""
        with self._lock:
            for message in self._messages.get((session_id, agent_id), []):
                if message.message_id == message_id:
                    return _copy(message)
        return None

    def update_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        """Replace a message.

        Raises:
            SessionException: The message does not exist.
        """
        with self._lock:
            messages = self._messages.get((session_id, agent_id), [])
            for position, message in enumerate(messages):
                if message.message_id == session_message.message_id:
                    messages[position] = _copy(session_message)
                    return
        raise SessionException(f"Message {session_message.message_id} does not exist")

    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> list[SessionMessage]:
        """List messages in order."""
        with self._lock:
            messages = self._messages.get((session_id, agent_id), [])
            end = None if limit is None else offset + limit
            return [_copy(message) for message in messages[offset:end]]

    def create_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        """Store an orchestrator's state."""
        self.update_multi_agent(session_id, multi_agent)

    def read_multi_agent(self, session_id: str, multi_agent_id: str, **kwargs: Any) -> dict[str, Any] | None:
        """Read an orchestrator's state."""
        with self._lock:
            return copy.deepcopy(self._multi_agents.get((session_id, multi_agent_id)))

    def update_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        """Replace an orchestrator's state."""
        with self._lock:
            self._multi_agents[(session_id, multi_agent.id)] = copy.deepcopy(multi_agent.serialize_state())

    def _require(self, session_id: str) -> None:
        if session_id not in self._sessions:
            raise SessionException(f"Session {session_id} does not exist")


R = TypeVar("R", SessionAgent, SessionMessage)


def _copy(record: R) -> R:
    # A round trip through the record's dict form behaves like real storage (bytes encoded, copies detached).
    return type(record).from_dict(record.to_dict())
