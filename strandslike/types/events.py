"""Stream event types a tool's ``stream()`` yields and the agent stream carries (Strands' ``strands.types.events``).

An event is a dict whose items are its payload, so ``{"type": "tool_result", "tool_result": {...}}`` compares
equal to the `ToolResultEvent` carrying that result; the extra attributes (the exception behind an error result)
take no part in equality.
"""

from typing import Any, cast

from .tools import ToolResult


class TypedEvent(dict[str, Any]):
    """Base class of the typed stream events: a dict of its payload."""

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        """Create the event with ``data`` as its items."""
        super().__init__(data or {})

    @property
    def is_callback_event(self) -> bool:
        """Whether the event is passed to the agent's callback handler (most are)."""
        return True

    def as_dict(self) -> dict[str, Any]:
        """Return the event as a plain dict."""
        return {**self}


class ToolResultEvent(TypedEvent):
    """The last event of a tool call: ``{"type": "tool_result", "tool_result": result}``.

    Decorated tools yield it with the exception behind an error result, so `AfterToolCallEvent.exception` can
    carry it (harness-sdk#1566). A tool may also yield a plain `ToolResult` dict last; both are accepted.
    """

    def __init__(self, tool_result: ToolResult, exception: Exception | None = None) -> None:
        """Wrap ``tool_result``, with the exception that produced it if any."""
        super().__init__({"type": "tool_result", "tool_result": tool_result})
        self._exception = exception

    @property
    def exception(self) -> Exception | None:
        """The exception the tool raised, behind an error result."""
        return self._exception

    @property
    def tool_result(self) -> ToolResult:
        """The tool result sent back to the model."""
        return cast(ToolResult, self["tool_result"])

    @property
    def result(self) -> ToolResult:
        """The tool result (the name strandslike used before it mirrored Strands' event)."""
        return self.tool_result

    @property
    def tool_use_id(self) -> str:
        """The id of the tool use this result answers."""
        return self.tool_result["toolUseId"]

    @property
    def is_callback_event(self) -> bool:
        """Results reach callback handlers as ``{"tool_result": ...}`` once hooks have run, not from here."""
        return False


__all__ = ["ToolResultEvent", "TypedEvent"]
