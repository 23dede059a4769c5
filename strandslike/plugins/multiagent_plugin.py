"""`MultiAgentPlugin`: the orchestrator counterpart of `Plugin`, attached to a Graph or a Swarm."""

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ._discovery import discover_hooks

if TYPE_CHECKING:
    from ..multiagent.base import MultiAgentBase


class MultiAgentPlugin(ABC):
    """Base class of orchestrator plugins: ``@hook`` methods and an ``init_multi_agent`` setup method.

    Attach one with ``Graph(..., plugins=[...])``, ``GraphBuilder().set_plugins([...])`` or
    ``Swarm(..., plugins=[...])``. Orchestrators have no tools, so ``@tool`` methods are not collected. A class may
    derive from both `Plugin` and `MultiAgentPlugin` to work at both levels.

    Example:
        ```python
        from strandslike.hooks import AfterNodeCallEvent, BeforeNodeCallEvent
        from strandslike.plugins import MultiAgentPlugin, hook


        class MonitoringPlugin(MultiAgentPlugin):
            name = "monitoring"

            @hook
            def on_before_node(self, event: BeforeNodeCallEvent) -> None:
                print(f"Node {event.node_id} starting")

            @hook
            def on_after_node(self, event: AfterNodeCallEvent) -> None:
                print(f"Node {event.node_id} completed")
        ```
    """

    @property
    @abstractmethod
    def name(self) -> str:
        """A stable identifier of the plugin, unique among an orchestrator's plugins."""

    def __init__(self) -> None:
        """Discover the decorated hooks (once, also when a class is both a Plugin and a MultiAgentPlugin)."""
        if "_hooks" not in self.__dict__:
            self._hooks: list[Callable[..., Any]] = discover_hooks(self, self.name)

    @property
    def hooks(self) -> list[Callable[..., Any]]:
        """The plugin's ``@hook`` methods, bound to it."""
        if "_hooks" not in self.__dict__:
            self._hooks = discover_hooks(self, self.name)
        return self._hooks

    def init_multi_agent(self, orchestrator: "MultiAgentBase") -> Awaitable[None] | None:
        """Set the plugin up on ``orchestrator``; called before its hooks are registered.

        Args:
            orchestrator: The Graph or Swarm the plugin is attached to.
        """
        return None


__all__ = ["MultiAgentPlugin"]
