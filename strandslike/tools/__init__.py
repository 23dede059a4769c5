"""Tools: the `@tool` decorator, the tool base class and the registry of an agent's tools.

Names are imported on first use.
"""

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from ..types.events import ToolResultEvent
    from ..types.tools import AgentTool
    from .decorator import DecoratedFunctionTool, tool
    from .registry import ToolRegistry

__getattr__, __dir__ = _lazy.lazy_exports(
    __name__,
    {
        "AgentTool": "..types.tools",
        "DecoratedFunctionTool": ".decorator",
        "ToolRegistry": ".registry",
        "ToolResultEvent": "..types.events",
        "tool": ".decorator",
    },
)

__all__ = ["AgentTool", "DecoratedFunctionTool", "ToolRegistry", "ToolResultEvent", "tool"]
