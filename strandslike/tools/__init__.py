"""Tools: the `@tool` decorator, the tool base class, tool providers and the registry of an agent's tools.

Names are imported on first use.
"""

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from ..types.events import ToolResultEvent
    from ..types.tools import AgentTool
    from .decorator import DecoratedFunctionTool, tool
    from .registry import ToolRegistry
    from .structured_output.structured_output_utils import convert_pydantic_to_tool_spec
    from .tool_provider import ToolProvider
    from .tools import InvalidToolUseNameException, PythonAgentTool, normalize_schema, normalize_tool_spec

__getattr__, __dir__ = _lazy.lazy_exports(
    __name__,
    {
        "AgentTool": "..types.tools",
        "DecoratedFunctionTool": ".decorator",
        "InvalidToolUseNameException": ".tools",
        "PythonAgentTool": ".tools",
        "ToolProvider": ".tool_provider",
        "ToolRegistry": ".registry",
        "ToolResultEvent": "..types.events",
        "convert_pydantic_to_tool_spec": ".structured_output.structured_output_utils",
        "normalize_schema": ".tools",
        "normalize_tool_spec": ".tools",
        "tool": ".decorator",
    },
)

__all__ = [
    "AgentTool",
    "DecoratedFunctionTool",
    "InvalidToolUseNameException",
    "PythonAgentTool",
    "ToolProvider",
    "ToolRegistry",
    "ToolResultEvent",
    "convert_pydantic_to_tool_spec",
    "normalize_schema",
    "normalize_tool_spec",
    "tool",
]
