"""`_MultiAgentPluginRegistry`: the plugins attached to one Graph or Swarm.

Attaching a plugin calls its ``init_multi_agent`` (awaited if async), then registers its ``@hook`` methods with
``orchestrator.add_hook`` (Strands 1.62).
"""

import logging
import weakref
from typing import TYPE_CHECKING, Any

from ._discovery import call_init_method
from ._errors import PluginConfigError
from .multiagent_plugin import MultiAgentPlugin
from .registry import as_list, check_plugin

if TYPE_CHECKING:
    from ..multiagent.base import MultiAgentBase

logger = logging.getLogger(__name__)


class _MultiAgentPluginRegistry:
    """The plugins attached to an orchestrator, by name."""

    def __init__(self, orchestrator: "MultiAgentBase") -> None:
        self._orchestrator_ref = weakref.ref(orchestrator)
        self._plugins: dict[str, MultiAgentPlugin] = {}

    @property
    def _orchestrator(self) -> "MultiAgentBase":
        orchestrator = self._orchestrator_ref()
        if orchestrator is None:
            raise ReferenceError("Orchestrator has been garbage collected")
        return orchestrator

    @property
    def plugins(self) -> dict[str, MultiAgentPlugin]:
        """The attached plugins by name, in the order they were attached."""
        return dict(self._plugins)

    def add_all(self, plugins: Any) -> None:
        """Attach each plugin of the list ``plugins`` (None attaches nothing), in order.

        Raises:
            PluginTypeError: ``plugins`` is not a list of `MultiAgentPlugin` instances.
            PluginConfigError: Two plugins share a name.
        """
        for plugin in as_list(plugins, "plugins="):
            self.add_and_init(plugin)

    def add_and_init(self, plugin: MultiAgentPlugin) -> None:
        """Attach ``plugin``: run its ``init_multi_agent``, then register its hooks.

        Raises:
            PluginTypeError: ``plugin`` is not a `MultiAgentPlugin` instance.
            PluginConfigError: A plugin with the same name is already attached (Strands' message).
        """
        check_plugin(plugin, MultiAgentPlugin, "plugins=")
        if plugin.name in self._plugins:
            raise PluginConfigError(f"plugin_name=<{plugin.name}> | plugin already registered")
        logger.debug("plugin_name=<%s> | registering and initializing multi-agent plugin", plugin.name)
        self._plugins[plugin.name] = plugin
        orchestrator = self._orchestrator
        call_init_method(plugin.init_multi_agent, orchestrator)
        for callback in plugin.hooks:
            for event_type in getattr(callback, "_hook_event_types", []):
                orchestrator.add_hook(callback, event_type)
