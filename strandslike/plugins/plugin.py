"""`Plugin`: a reusable bundle of hooks, tools and setup code, attached with ``Agent(plugins=[...])``."""

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..tools.decorator import DecoratedFunctionTool
from ._discovery import discover_hooks, discover_tools

if TYPE_CHECKING:
    from ..agent.agent import Agent


class Plugin(ABC):
    """Base class of agent plugins.

    A subclass sets ``name`` (unique among the agent's plugins) and may define ``@hook`` methods (registered for
    the events their annotation names), ``@tool`` methods (added to the agent's tools) and an ``init_agent``
    method (sync or async) for any other setup. Decorated methods are found in declaration order, a parent
    class's first; an overridden method is registered once, in the subclass's version.

    Example:
        ```python
        from strandslike import tool
        from strandslike.hooks import BeforeModelCallEvent
        from strandslike.plugins import Plugin, hook


        class MyPlugin(Plugin):
            name = "my-plugin"

            @hook
            def on_model_call(self, event: BeforeModelCallEvent) -> None:
                print(f"Model called: {event}")

            @tool
            def my_tool(self, param: str) -> str:
                '''A tool that does something.'''
                return f"Result: {param}"
        ```
    """

    @property
    @abstractmethod
    def name(self) -> str:
        """A stable identifier of the plugin, unique among an agent's plugins."""

    def __init__(self) -> None:
        """Discover the decorated hooks and tools (once, also when a class is both a Plugin and a MultiAgentPlugin)."""
        if "_hooks" not in self.__dict__:
            self._hooks: list[Callable[..., Any]] = discover_hooks(self, self.name)
        if "_tools" not in self.__dict__:
            self._tools: list[DecoratedFunctionTool[..., Any]] = discover_tools(self, self.name)

    @property
    def hooks(self) -> list[Callable[..., Any]]:
        """The plugin's ``@hook`` methods, bound to it."""
        if "_hooks" not in self.__dict__:  # a subclass __init__ that did not call super().__init__()
            self._hooks = discover_hooks(self, self.name)
        return self._hooks

    @property
    def tools(self) -> list[DecoratedFunctionTool[..., Any]]:
        """The plugin's ``@tool`` methods, bound to it."""
        if "_tools" not in self.__dict__:
            self._tools = discover_tools(self, self.name)
        return self._tools

    def init_agent(self, agent: "Agent") -> Awaitable[None] | None:
        """Set the plugin up on ``agent``; called before its hooks and tools are registered.

        Override it (sync or ``async``) for setup beyond the decorated hooks and tools; no ``super()`` call needed.

        Args:
            agent: The agent the plugin is attached to.
        """
        return None


__all__ = ["Plugin"]
