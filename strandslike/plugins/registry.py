"""`_PluginRegistry`: the plugins attached to one agent.

Attaching a plugin calls its ``init_agent`` (awaited if async), then registers its ``@hook`` methods with
``agent.add_hook`` and its ``@tool`` methods with the agent's tool registry, in that order (Strands 1.62).
"""

import logging
import weakref
from typing import TYPE_CHECKING, Any

from ._discovery import call_init_method
from ._errors import PluginConfigError, PluginTypeError
from .multiagent_plugin import MultiAgentPlugin
from .plugin import Plugin

if TYPE_CHECKING:
    from ..agent.agent import Agent

logger = logging.getLogger(__name__)


def check_plugin(plugin: Any, expected: type, where: str) -> None:
    """Raise `PluginTypeError` unless ``plugin`` is an instance of ``expected`` (`Plugin` or `MultiAgentPlugin`)."""
    if isinstance(plugin, expected):
        return
    if isinstance(plugin, type) and issubclass(plugin, expected):
        raise PluginTypeError(f"{where} got the class {plugin.__name__}; pass an instance: {plugin.__name__}()")
    other = MultiAgentPlugin if expected is Plugin else Plugin
    if isinstance(plugin, other):
        target = (
            "a Graph or Swarm (plugins=[...], GraphBuilder.set_plugins)" if other is MultiAgentPlugin else "an Agent"
        )
        raise PluginTypeError(
            f"{where} takes {expected.__name__} instances; {type(plugin).__name__} is a {other.__name__}, "
            f"attach it to {target} instead"
        )
    raise PluginTypeError(
        f"{where} takes {expected.__name__} instances (subclasses of strandslike.plugins.{expected.__name__}), "
        f"got {type(plugin).__name__} ({plugin!r}). Hook providers and callbacks go in hooks=."
    )


def as_list(items: Any, where: str) -> list[Any]:
    """Return ``items`` (a list, tuple or other iterable of plugins, or None) as a list.

    Raises:
        PluginTypeError: ``items`` is a single plugin, or not iterable.
    """
    if items is None:
        return []
    if isinstance(items, Plugin | MultiAgentPlugin) or isinstance(items, type):
        raise PluginTypeError(f"{where} takes a list of plugins, got a single {type(items).__name__}: use [plugin]")
    try:
        return list(items)
    except TypeError:
        raise PluginTypeError(f"{where} takes a list of plugins, got {type(items).__name__}") from None


class _PluginRegistry:
    """The plugins attached to an agent, by name."""

    def __init__(self, agent: "Agent") -> None:
        self._agent_ref = weakref.ref(agent)
        self._plugins: dict[str, Plugin] = {}

    @property
    def _agent(self) -> "Agent":
        agent = self._agent_ref()
        if agent is None:
            raise ReferenceError("Agent has been garbage collected")
        return agent

    @property
    def plugins(self) -> dict[str, Plugin]:
        """The attached plugins by name, in the order they were attached."""
        return dict(self._plugins)

    def add_all(self, plugins: Any) -> None:
        """Attach each plugin of the list ``plugins`` (None attaches nothing), in order.

        Raises:
            PluginTypeError: ``plugins`` is not a list of `Plugin` instances.
            PluginConfigError: Two plugins share a name.
        """
        for plugin in as_list(plugins, "plugins="):
            self.add_and_init(plugin)

    def add_and_init(self, plugin: Plugin) -> None:
        """Attach ``plugin``: run its ``init_agent``, then register its hooks and tools.

        Raises:
            PluginTypeError: ``plugin`` is not a `Plugin` instance.
            PluginConfigError: A plugin with the same name is already attached (Strands' message).
        """
        check_plugin(plugin, Plugin, "plugins=")
        if plugin.name in self._plugins:
            raise PluginConfigError(f"plugin_name=<{plugin.name}> | plugin already registered")
        logger.debug("plugin_name=<%s> | registering and initializing plugin", plugin.name)
        self._plugins[plugin.name] = plugin
        agent = self._agent
        call_init_method(plugin.init_agent, agent)
        for callback in plugin.hooks:
            for event_type in getattr(callback, "_hook_event_types", []):
                agent.add_hook(callback, event_type)
        if plugin.tools:
            agent.tool_registry.process_tools(list(plugin.tools))


__all__ = ["as_list", "check_plugin"]
