"""Module-based tools (a ``TOOL_SPEC`` and a function) and the tool spec normalization Strands applies.

Mirrors ``strands.tools.tools``: `PythonAgentTool` wraps a function called as ``func(tool_use, **invocation_state)``
that returns a `ToolResult`; `normalize_tool_spec` fills the defaults every model provider expects.
"""

import inspect
import logging
import re
from collections.abc import Callable
from typing import Any

import anyio.to_thread

from ..types.events import ToolResultEvent
from ..types.tools import AgentTool, ToolGenerator, ToolSpec, ToolUse
from ._generation import replace_tool_spec

logger = logging.getLogger(__name__)

# JSON Schema composition keywords: a property using them gets no default type.
_COMPOSITION_KEYWORDS = ("anyOf", "oneOf", "allOf", "not")
# Deeper schemas are refused (a hostile provider could otherwise exhaust the stack while they are normalized).
_MAX_SCHEMA_DEPTH = 64
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_\-]{1,}$")
_TOOL_NAME_MAX_LENGTH = 64


class InvalidToolUseNameException(Exception):
    """A tool use names a tool with an invalid name (Strands name)."""


def validate_tool_use(tool: ToolUse) -> None:
    """Check a tool use requested by the model.

    Raises:
        InvalidToolUseNameException: The tool name is missing, too long or has characters outside ``[a-zA-Z0-9_-]``.
    """
    validate_tool_use_name(tool)


def validate_tool_use_name(tool: ToolUse) -> None:
    """Check the name of a tool use (Strands' rule: ``[a-zA-Z0-9_-]``, at most 64 characters).

    Raises:
        InvalidToolUseNameException: The name is missing or invalid.
    """
    if "name" not in tool:
        raise InvalidToolUseNameException("tool name missing")
    name = tool["name"]
    if not _TOOL_NAME.match(name):
        raise InvalidToolUseNameException(f"tool_name=<{name}> | invalid tool name pattern")
    if len(name) > _TOOL_NAME_MAX_LENGTH:
        raise InvalidToolUseNameException(
            f"tool_name=<{name}>, tool_name_max_length=<{_TOOL_NAME_MAX_LENGTH}> | invalid tool name length"
        )


def _normalize_property(name: str, definition: Any, depth: int) -> dict[str, Any]:
    if not isinstance(definition, dict):
        return {"type": "string", "description": f"Property {name}"}
    if definition.get("type") == "object" and "properties" in definition:
        return normalize_schema(definition, _depth=depth + 1)
    normalized = definition.copy()
    if "$ref" in normalized:  # a referenced definition carries its own type and description
        return normalized
    if not any(keyword in normalized for keyword in _COMPOSITION_KEYWORDS):
        normalized.setdefault("type", "string")
    normalized.setdefault("description", f"Property {name}")
    return normalized


def normalize_schema(schema: dict[str, Any], *, _depth: int = 0) -> dict[str, Any]:
    """Return a copy of a JSON schema with Strands' defaults: ``type``, ``properties``, ``required``, descriptions.

    Raises:
        ValueError: The schema nests objects more than 64 levels deep.
    """
    if _depth > _MAX_SCHEMA_DEPTH:
        raise ValueError(f"tool inputSchema nesting exceeds {_MAX_SCHEMA_DEPTH} levels")
    normalized = schema.copy()
    normalized.setdefault("type", "object")
    normalized.setdefault("properties", {})
    normalized.setdefault("required", [])
    normalized["properties"] = {
        name: _normalize_property(name, definition, _depth) for name, definition in normalized["properties"].items()
    }
    return normalized


def normalize_tool_spec(tool_spec: ToolSpec) -> ToolSpec:
    """Return a copy of a tool spec whose input schema is ``{"json": <normalized schema>}``.

    Raises:
        ValueError: The input schema nests objects more than 64 levels deep.
    """
    normalized = tool_spec.copy()
    input_schema = normalized.get("inputSchema")
    if isinstance(input_schema, dict):
        if "json" in input_schema:
            normalized["inputSchema"] = {**input_schema, "json": normalize_schema(input_schema["json"])}
        else:
            normalized["inputSchema"] = {"json": normalize_schema(input_schema)}
    return normalized


class PythonAgentTool(AgentTool):
    """A module-based tool: a ``TOOL_SPEC`` and a function called as ``func(tool_use, **invocation_state)``.

    The function returns the `ToolResult` (``{"toolUseId", "status", "content"}``); a coroutine function is awaited,
    a plain one runs in a worker thread.
    """

    _announces_spec_changes = True  # a replaced spec bumps SPEC_GENERATION

    def __init__(self, tool_name: str, tool_spec: ToolSpec, tool_func: Callable[..., Any]) -> None:
        """Wrap ``tool_func`` under ``tool_name`` with ``tool_spec``."""
        super().__init__()
        self._tool_name = tool_name
        self._tool_spec = tool_spec
        self._tool_func = tool_func

    @property
    def tool_name(self) -> str:
        """The name the model calls the tool by."""
        return self._tool_name

    @property
    def tool_spec(self) -> ToolSpec:
        """The spec sent to the model."""
        return self._tool_spec

    @tool_spec.setter
    def tool_spec(self, value: ToolSpec) -> None:
        """Replace the spec; the name cannot change this way.

        Raises:
            ValueError: The new spec renames the tool or lacks a description or input schema.
        """
        self._tool_spec = replace_tool_spec(
            self._tool_name, value, rename_hint="give the tool's TOOL_SPEC or function another name instead"
        )

    @property
    def supports_hot_reload(self) -> bool:
        """Module-based tools may be reloaded from their file; always True."""
        return True

    @property
    def tool_type(self) -> str:
        """Always ``"python"``."""
        return "python"

    async def stream(self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any) -> ToolGenerator:
        """Call the function with the tool use and the invocation state; yield its result as a `ToolResultEvent`.

        Args:
            tool_use: The tool use to execute.
            invocation_state: Passed to the function as keyword arguments (``agent`` among them).
            **kwargs: Reserved for future arguments.
        """
        if inspect.iscoroutinefunction(self._tool_func):
            result = await self._tool_func(tool_use, **invocation_state)
        else:
            result = await anyio.to_thread.run_sync(lambda: self._tool_func(tool_use, **invocation_state))
        yield ToolResultEvent(result)


__all__ = [
    "InvalidToolUseNameException",
    "PythonAgentTool",
    "normalize_schema",
    "normalize_tool_spec",
    "validate_tool_use",
    "validate_tool_use_name",
]
