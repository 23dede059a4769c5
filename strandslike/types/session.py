"""Session data models, mirroring Strands' (``Session``, ``SessionAgent``, ``SessionMessage``)."""

import base64
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from .content import Message

if TYPE_CHECKING:
    from ..agent.agent import Agent


def _now() -> str:
    return datetime.now(UTC).isoformat()


class SessionType(StrEnum):
    """What a session holds (Strands has only ``AGENT``; multi-agent sessions use it too)."""

    AGENT = "AGENT"


def encode_bytes_values(obj: Any) -> Any:
    """Return ``obj`` with every ``bytes`` value replaced by ``{"__bytes_encoded__": true, "data": <base64>}``."""
    if isinstance(obj, bytes):
        return {"__bytes_encoded__": True, "data": base64.b64encode(obj).decode()}
    if isinstance(obj, dict):
        return {key: encode_bytes_values(value) for key, value in obj.items()}
    if isinstance(obj, list):
        return [encode_bytes_values(item) for item in obj]
    return obj


def decode_bytes_values(obj: Any) -> Any:
    """Undo `encode_bytes_values`."""
    if isinstance(obj, dict):
        if obj.get("__bytes_encoded__") is True and "data" in obj:
            return base64.b64decode(obj["data"])
        return {key: decode_bytes_values(value) for key, value in obj.items()}
    if isinstance(obj, list):
        return [decode_bytes_values(item) for item in obj]
    return obj


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {key: value for key, value in data.items() if key in names}


@dataclass
class SessionMessage:
    """A message of a session agent, with its index.

    Attributes:
        message: The message as appended.
        message_id: Its index in the agent's conversation.
        redact_message: Replacement content if the message was redacted.
        created_at: ISO timestamp of creation.
        updated_at: ISO timestamp of the last change.
    """

    message: Message
    message_id: int
    redact_message: Message | None = None
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)

    @classmethod
    def from_message(cls, message: Message, index: int) -> "SessionMessage":
        """Wrap ``message`` as the ``index``-th message."""
        return cls(message=message, message_id=index)

    def to_message(self) -> Message:
        """Return the message, or its redaction if it was redacted."""
        return self.redact_message if self.redact_message is not None else self.message

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SessionMessage":
        """Build from `to_dict` output, ignoring unknown keys."""
        return cls(**decode_bytes_values(_known(cls, data)))

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict (bytes base64-encoded)."""
        encoded: dict[str, Any] = encode_bytes_values(
            {
                "message": self.message,
                "message_id": self.message_id,
                "redact_message": self.redact_message,
                "created_at": self.created_at,
                "updated_at": self.updated_at,
            }
        )
        return encoded


@dataclass
class SessionAgent:
    """The persisted state of one agent of a session.

    Attributes:
        agent_id: The agent's id.
        state: ``agent.state`` contents.
        conversation_manager_state: The conversation manager's `get_state()`.
        _internal_state: Framework state: ``interrupt_state`` and ``model_state``.
        created_at: ISO timestamp of creation.
        updated_at: ISO timestamp of the last change.
    """

    agent_id: str
    state: dict[str, Any]
    conversation_manager_state: dict[str, Any]
    _internal_state: dict[str, Any] = field(default_factory=dict)
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)

    @classmethod
    def from_agent(cls, agent: "Agent") -> "SessionAgent":
        """Capture an agent's persisted state."""
        manager = agent.conversation_manager
        return cls(
            agent_id=agent.agent_id,
            state=agent.state.get(),
            conversation_manager_state=manager.get_state() if manager is not None else {},
            _internal_state={
                "interrupt_state": agent._interrupt_state.to_dict(),
                "model_state": agent._model_state,
            },
        )

    def initialize_internal_state(self, agent: "Agent") -> None:
        """Restore the interrupt and model state into ``agent``."""
        if "interrupt_state" in self._internal_state:
            agent._interrupt_state.load_dict(self._internal_state["interrupt_state"])
        if "model_state" in self._internal_state:
            agent._model_state = dict(self._internal_state["model_state"] or {})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SessionAgent":
        """Build from `to_dict` output, ignoring unknown keys."""
        return cls(**decode_bytes_values(_known(cls, data)))

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict."""
        encoded: dict[str, Any] = encode_bytes_values(
            {
                "agent_id": self.agent_id,
                "state": self.state,
                "conversation_manager_state": self.conversation_manager_state,
                "_internal_state": self._internal_state,
                "created_at": self.created_at,
                "updated_at": self.updated_at,
            }
        )
        return encoded


@dataclass
class Session:
    """A session: a named container of agents and multi-agent states."""

    session_id: str
    session_type: SessionType = SessionType.AGENT
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Session":
        """Build from `to_dict` output, ignoring unknown keys."""
        known = _known(cls, data)
        known["session_type"] = SessionType(known.get("session_type", "AGENT"))
        return cls(**known)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict."""
        return {
            "session_id": self.session_id,
            "session_type": self.session_type.value,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
