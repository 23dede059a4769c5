"""`AgentResult`: what an invocation returns."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

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
        structured_output: The validated structured output, when one was asked for.
        checkpoint: Reserved (Strands' durable-execution checkpoint); always None here.
        replayed: True when the invocation repeated interrupt answers that were already applied and ran to
            completion: nothing ran (no tool, no model call) and ``message`` is the last assistant message.
    """

    stop_reason: StopReason
    message: Message
    metrics: EventLoopMetrics = field(default_factory=lambda: EventLoopMetrics())
    state: Any = field(default_factory=dict)
    interrupts: Sequence[Interrupt] | None = None
    structured_output: Any = None
    checkpoint: Any = None
    replayed: bool = field(default=False, kw_only=True)

    def __str__(self) -> str:
        """Return the interrupts if any, else the structured output, else the message's text (Strands' priority).

        Text is each text block, and the text inside each ``citationsContent`` block, followed by a newline.
        """
        if self.interrupts:
            return str([interrupt.to_dict() for interrupt in self.interrupts])
        if self.structured_output:
            dump = getattr(self.structured_output, "model_dump_json", None)
            return str(dump()) if callable(dump) else str(self.structured_output)
        content = self.message.get("content", []) if self.message else []
        parts: list[str] = []
        for block in cast(list[Any], content):  # a message from outside may hold anything
            if not isinstance(block, dict):
                continue
            if "text" in block:
                parts.append(block["text"] + "\n")
            elif "citationsContent" in block:
                cited = block["citationsContent"].get("content", [])
                parts.extend(item["text"] + "\n" for item in cited if isinstance(item, dict) and "text" in item)
        return "".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict: Strands' ``type``, ``message``, ``stop_reason`` and ``checkpoint``.

        Bytes in the message are base64-encoded as sessions store them. An interrupted result also keeps its
        interrupts (Strands drops them), so a persisted node result can be answered after a restart.
        """
        from ..types.session import encode_bytes_values

        data: dict[str, Any] = {
            "type": "agent_result",
            "message": encode_bytes_values(self.message),
            "stop_reason": self.stop_reason,
            "checkpoint": None,
        }
        if self.interrupts:
            data["interrupts"] = [interrupt.to_dict() for interrupt in self.interrupts]
        if self.replayed:
            data["replayed"] = True
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "AgentResult":
        """Rebuild a result from `to_dict` output (metrics and state start empty, as in Strands).

        Raises:
            TypeError: ``data`` is not an agent result (its ``type`` is not ``"agent_result"``).
        """
        from ..types.session import decode_bytes_values

        if not isinstance(data, dict) or data.get("type") != "agent_result":
            found = data.get("type") if isinstance(data, dict) else type(data).__name__
            raise TypeError(f"AgentResult.from_dict: unexpected type {found!r}, expected 'agent_result'")
        interrupts = [Interrupt.from_state_dict(raw) for raw in data.get("interrupts") or ()]
        return cls(
            stop_reason=data.get("stop_reason", "end_turn"),
            message=decode_bytes_values(data.get("message")),
            metrics=EventLoopMetrics(),
            state={},
            interrupts=interrupts or None,
            replayed=bool(data.get("replayed", False)),
        )
