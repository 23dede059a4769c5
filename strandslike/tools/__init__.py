"""Tools: the `@tool` decorator, the tool base class and the registry of an agent's tools."""

from ..types.tools import AgentTool
from ._result import ToolResultEvent
from .decorator import DecoratedFunctionTool, tool
from .registry import ToolRegistry

__all__ = ["AgentTool", "DecoratedFunctionTool", "ToolRegistry", "ToolResultEvent", "tool"]
