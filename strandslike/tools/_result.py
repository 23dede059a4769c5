"""The final value a tool's ``stream()`` yields (kept here for imports that predate `strandslike.types.events`)."""

from ..types.events import ToolResultEvent

__all__ = ["ToolResultEvent"]
