"""`AgentResult`: what an invocation returns."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..interrupt import Interrupt
from ..types.content import Message
from ..types.streaming import StopReason
from ._metrics import EventLoopMetrics


@dataclass
class AgentResult:
    """The outcome of one invocation.

    Attributes:
        stop_reason: Why the run stopped (``end_turn``, ``interrupt``, ``cancelled``, ...).
        message: The last assistant message (for interrupts raised before a model call, the last message).
        metrics: Cycle, tool and token metrics of the agent.
        state: The invocation's request state.
        interrupts: The interrupts waiting for an answer when ``stop_reason == "interrupt"``.
        structured_output: Reserved for structured output.
        replayed: True when the invocation repeated interrupt answers that were already applied and ran to
            completion: nothing ran (no tool, no model call) and ``message`` is the last assistant message.
    """

    stop_reason: StopReason
    message: Message
    metrics: EventLoopMetrics = field(default_factory=lambda: EventLoopMetrics())
    state: Any = field(default_factory=dict)
    interrupts: Sequence[Interrupt] | None = None
    structured_output: Any = None
    replayed: bool = field(default=False, kw_only=True)

    def __str__(self) -> str:
        """Return the interrupts if any, else the text of the message (each text block followed by a newline)."""
        if self.interrupts:
            return str([interrupt.to_dict() for interrupt in self.interrupts])
        if self.structured_output is not None:
            dump = getattr(self.structured_output, "model_dump_json", None)
            return str(dump()) if callable(dump) else str(self.structured_output)
        content = self.message.get("content", []) if self.message else []
        return "".join(block["text"] + "\n" for block in content if "text" in block)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict (including interrupts, unlike Strands)."""
        data: dict[str, Any] = {
            "type": "agent_result",
            "stop_reason": self.stop_reason,
            "message": self.message,
            "interrupts": [interrupt.to_dict() for interrupt in self.interrupts or ()],
        }
        if self.replayed:
            data["replayed"] = True
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "AgentResult":
        """Rebuild a result from `to_dict` output (metrics start empty)."""
        if data.get("type") != "agent_result":
            raise TypeError(f"AgentResult.from_dict: unexpected type {data.get('type')!r}, expected 'agent_result'")
        interrupts = [Interrupt.from_state_dict(raw) for raw in data.get("interrupts") or ()]
        return cls(
            stop_reason=data["stop_reason"],
            message=data["message"],
            interrupts=interrupts or None,
            replayed=bool(data.get("replayed", False)),
        )
