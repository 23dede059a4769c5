"""The tool stream events besides the result (Strands' private ``strands.types._events``)."""

from typing import Any, cast

from ..interrupt._interrupt import Interrupt
from .events import ToolResultEvent, TypedEvent
from .tools import ToolUse


class ToolStreamEvent(TypedEvent):
    """A value a tool yielded while running: ``{"type": "tool_stream", "tool_stream_event": {...}}``."""

    def __init__(self, tool_use: ToolUse, tool_stream_data: Any) -> None:
        """Wrap what the tool yielded, with the tool use that produced it."""
        super().__init__({"type": "tool_stream", "tool_stream_event": {"tool_use": tool_use, "data": tool_stream_data}})

    @property
    def tool_use_id(self) -> str:
        """The id of the tool use that produced this event."""
        return cast(ToolUse, self["tool_stream_event"]["tool_use"])["toolUseId"]


class ToolInterruptEvent(TypedEvent):
    """A tool call paused by interrupts: ``{"tool_interrupt_event": {"tool_use": ..., "interrupts": [...]}}``."""

    def __init__(self, tool_use: ToolUse, interrupts: list[Interrupt]) -> None:
        """Report the interrupts that paused ``tool_use``."""
        super().__init__({"tool_interrupt_event": {"tool_use": tool_use, "interrupts": interrupts}})

    @property
    def tool_use_id(self) -> str:
        """The id of the interrupted tool use."""
        return cast(ToolUse, self["tool_interrupt_event"]["tool_use"])["toolUseId"]

    @property
    def interrupts(self) -> list[Interrupt]:
        """The interrupts."""
        return cast(list[Interrupt], self["tool_interrupt_event"]["interrupts"])


__all__ = ["ToolInterruptEvent", "ToolResultEvent", "ToolStreamEvent"]
