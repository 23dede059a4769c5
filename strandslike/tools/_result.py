"""The final value a tool's ``stream()`` yields when it wants to report the exception behind an error result."""

from dataclasses import dataclass

from ..types.tools import ToolResult


@dataclass
class ToolResultEvent:
    """A tool result together with the exception that produced it, if any.

    Decorated tools yield this as their last value so `AfterToolCallEvent.exception` can carry the original
    exception (harness-sdk#1566). Tools may also yield a plain `ToolResult` dict last; both are accepted.
    """

    result: ToolResult
    exception: Exception | None = None
