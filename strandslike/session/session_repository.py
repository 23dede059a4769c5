"""`SessionRepository`: the storage protocol session managers persist through (Strands-compatible)."""

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from ..types.session import Session, SessionAgent, SessionMessage


class SessionRepository(ABC):
    """Stores sessions, their agents, messages and multi-agent states.

    A custom Strands repository works unchanged. Set ``blocking_io = False`` on repositories that never block
    (in-memory ones) so the session manager calls them on the event loop instead of in a worker thread.
    """

    blocking_io: ClassVar[bool] = True

    @abstractmethod
    def create_session(self, session: Session, **kwargs: Any) -> Session:
        """Create a new session."""

    @abstractmethod
    def read_session(self, session_id: str, **kwargs: Any) -> Session | None:
        """Read a session, or return None if there is none under this id."""

    @abstractmethod
    def create_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        """Create an agent in a session."""

    @abstractmethod
    def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> SessionAgent | None:
        """Read an agent, or return None if the session has none under this id."""

    @abstractmethod
    def update_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        """Replace an agent's persisted state."""

    @abstractmethod
    def create_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        """Append a message to an agent's conversation."""

    @abstractmethod
    def read_message(self, session_id: str, agent_id: str, message_id: int, **kwargs: Any) -> SessionMessage | None:
        """Read one message by index."""

    @abstractmethod
    def update_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        """Replace a message (used for redaction)."""

    @abstractmethod
    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> list[SessionMessage]:
        """List an agent's messages in order, skipping ``offset`` and returning at most ``limit``."""

    def create_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        """Create the persisted state of an orchestrator."""
        raise NotImplementedError(f"{type(self).__name__} does not store multi-agent state")

    def read_multi_agent(self, session_id: str, multi_agent_id: str, **kwargs: Any) -> dict[str, Any] | None:
        """Read an orchestrator's persisted state."""
        raise NotImplementedError(f"{type(self).__name__} does not store multi-agent state")

    def update_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        """Replace an orchestrator's persisted state."""
        raise NotImplementedError(f"{type(self).__name__} does not store multi-agent state")
