"""Replacing a tool's spec: the checks every tool class applies, and a counter registries cache their spec lists by.

``SPEC_GENERATION`` is bumped whenever a tool's spec object is replaced, so a registry holding the tool knows its
cached list of specs is stale.
"""

from ..types.tools import ToolSpec

SPEC_GENERATION = [0]


def replace_tool_spec(tool_name: str, value: ToolSpec, *, rename_hint: str) -> ToolSpec:
    """Check ``value`` as the new spec of the tool ``tool_name``, bump the generation, and return it.

    Raises:
        ValueError: The new spec renames the tool (``rename_hint`` says how to rename it instead) or lacks a
            description or input schema.
    """
    if value.get("name") != tool_name:
        raise ValueError(
            f"cannot change tool name via tool_spec (tool is named {tool_name!r}, the new spec says "
            f"{value.get('name')!r}); {rename_hint}"
        )
    for key in ("description", "inputSchema"):
        if key not in value:
            raise ValueError(f"tool_spec for {tool_name!r} is missing {key!r}; the model needs it")
    SPEC_GENERATION[0] += 1
    return value


__all__ = ["SPEC_GENERATION", "replace_tool_spec"]
