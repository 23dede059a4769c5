"""The tools an agent can call, by name."""

import inspect
import re
import types
from collections.abc import Iterable, Iterator
from typing import Any

from ..types.exceptions import ToolNameConflictError
from ..types.tools import AgentTool, ToolSpec
from .decorator import SPEC_GENERATION, DecoratedFunctionTool

# Bedrock's constraint on tool names; other providers accept a superset of it.
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _not_a_tool(obj: Any) -> TypeError:
    """Build the error for something given as a tool that is not one, saying how to fix it."""
    if isinstance(obj, (str, dict, types.ModuleType)) or hasattr(obj, "__fspath__"):
        # Strands can load tools from file paths, modules and {"name", "path"} dicts; strandslike does not.
        return TypeError(
            f"Cannot register {obj!r} as a tool: loading tools from file paths, modules or dicts is not supported. "
            "Import the @tool-decorated functions (or AgentTool instances) and pass them, "
            "e.g. Agent(tools=[my_tool])."
        )
    if inspect.isclass(obj) and issubclass(obj, AgentTool):
        return TypeError(f"Cannot register the class {obj.__name__} as a tool: pass an instance, {obj.__name__}(...).")
    if callable(obj):
        name = getattr(obj, "__qualname__", None) or repr(obj)
        return TypeError(
            f"Cannot register {name} as a tool: it is a plain callable. Decorate it with @tool "
            "(from strandslike import tool) or pass an AgentTool instance."
        )
    return TypeError(
        f"Cannot register {obj!r} (a {type(obj).__name__}) as a tool: pass a function decorated with @tool "
        "or an AgentTool instance."
    )


def _check_name(name: Any) -> None:
    if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
        raise ValueError(
            f"Invalid tool name {name!r}: tool names must be 1 to 64 characters of letters, digits, '_' or '-'. "
            "Rename the tool, e.g. @tool(name='my_tool')."
        )


class ToolRegistry:
    """The tools available to one agent, in registration order.

    Attributes:
        registry: The registered tools by name (Strands exposes the same dict as ``agent.tool_registry.registry``).
    """

    def __init__(self) -> None:
        self.registry: dict[str, AgentTool] = {}
        # (specs, identity of each spec): specs are rebuilt only when a tool was added or a spec object replaced.
        # (specs, spec generation, ids of the spec objects). Decorated tools announce replaced specs through the
        # generation counter; other tools may return a new spec object at any time, so with any of them the ids
        # are compared on every call.
        self._specs_cache: tuple[list[ToolSpec], int, tuple[int, ...]] | None = None
        self._spec_owners_custom = False

    def process_tools(self, tools: Iterable[Any]) -> list[str]:
        """Register tools given as `AgentTool` instances or (nested) lists and tuples of them.

        Everything is checked before anything is registered, so a failed call registers nothing.

        Args:
            tools: The tools, e.g. ``[my_tool, [other_tool, Toolbox().search]]``.

        Returns:
            The names of the tools, in the order given.

        Raises:
            TypeError: An item is not a tool (for example a function missing ``@tool``, or a file path).
            ValueError: A tool name is not 1 to 64 letters, digits, ``_`` or ``-``.
            ToolNameConflictError: Two tools share a name, or a tool reuses the name of another registered tool.
        """
        new: dict[str, AgentTool] = {}
        for agent_tool in self._flatten(tools):
            name = agent_tool.tool_name
            _check_name(name)
            existing = new.get(name) or self.registry.get(name)
            if existing is not None and existing is not agent_tool:
                raise ToolNameConflictError(name)
            new[name] = agent_tool
        for name, agent_tool in new.items():
            self._add(name, agent_tool)
        return list(new)

    def register_tool(self, tool: AgentTool) -> None:
        """Register one tool; registering the same tool object again does nothing.

        Args:
            tool: The tool to add.

        Raises:
            TypeError: ``tool`` is not an `AgentTool`.
            ValueError: The tool name is invalid.
            ToolNameConflictError: Another tool is registered under the same name.
        """
        self.process_tools([tool])

    def unregister_tool(self, name: str) -> AgentTool | None:
        """Remove the tool registered under ``name`` and return it (None if there was none).

        Args:
            name: The tool name.
        """
        removed = self.registry.pop(name, None)
        if removed is not None:
            self._specs_cache = None
        return removed

    def get(self, name: str) -> AgentTool | None:
        """Return the tool registered under ``name``, or None.

        Args:
            name: The tool name.
        """
        return self.registry.get(name)

    @property
    def tool_names(self) -> list[str]:
        """The registered tool names, in registration order."""
        return list(self.registry)

    def get_all_tool_specs(self) -> list[ToolSpec]:
        """Return the specs of all tools, in registration order.

        The list is cached, and the same list object is returned while no tool is added and no tool's spec is
        replaced; treat it as read-only.
        """
        cached = self._specs_cache
        if cached is not None and cached[1] == SPEC_GENERATION[0] and not self._spec_owners_custom:
            return cached[0]
        tools = self.registry.values()
        identity = tuple(id(agent_tool.tool_spec) for agent_tool in tools)
        if cached is None or cached[2] != identity:
            cached = ([agent_tool.tool_spec for agent_tool in tools], SPEC_GENERATION[0], identity)
        self._specs_cache = (cached[0], SPEC_GENERATION[0], identity)
        return cached[0]

    def __getitem__(self, name: str) -> AgentTool:
        return self.registry[name]

    def __contains__(self, name: object) -> bool:
        return name in self.registry

    def __len__(self) -> int:
        return len(self.registry)

    def __iter__(self) -> Iterator[str]:
        return iter(self.registry)

    def _add(self, name: str, agent_tool: AgentTool) -> None:
        if self.registry.get(name) is not agent_tool:
            self.registry[name] = agent_tool
            self._specs_cache = None
            if not isinstance(agent_tool, DecoratedFunctionTool):
                self._spec_owners_custom = True

    @classmethod
    def _flatten(cls, tools: Iterable[Any]) -> Iterator[AgentTool]:
        if isinstance(tools, AgentTool):  # a lone tool where a collection was expected: harmless, accept it
            yield tools
            return
        if isinstance(tools, (str, bytes, dict)) or not isinstance(tools, Iterable):
            raise _not_a_tool(tools)  # a lone path or tool where a collection of tools was expected
        for item in tools:
            if isinstance(item, AgentTool):
                yield item
            elif isinstance(item, (list, tuple)):
                yield from cls._flatten(item)
            else:
                raise _not_a_tool(item)


__all__ = ["ToolRegistry"]
