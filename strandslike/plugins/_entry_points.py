"""Load the plugins installed as packages, from the ``strandslike`` entry-point group, into one agent.

An entry point may name a `Plugin` subclass (instantiated without arguments), a `Plugin` instance, or a pluggy
plugin (a module or object with ``@hookimpl`` functions named after events), which is registered on the agent's
hook registry as `HookRegistry.load_entry_points` would. Entry points are loaded in name order, so the hook order
does not depend on the order packages were installed in. A plugin whose name is already attached (because it was
also passed in ``plugins=``) is skipped; a `MultiAgentPlugin` is for orchestrators and is skipped too.
"""

import importlib.metadata
import logging
from typing import TYPE_CHECKING, Any

from ..hooks.registry import PROJECT
from ._errors import PluginTypeError
from .multiagent_plugin import MultiAgentPlugin
from .plugin import Plugin

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from .registry import _PluginRegistry

logger = logging.getLogger(__name__)


def load_entry_point_plugins(agent: "Agent", plugins: "_PluginRegistry", group: str = PROJECT) -> int:
    """Attach every plugin of the entry-point ``group`` to ``agent``; return how many were attached.

    Raises:
        PluginTypeError: An entry point names a `Plugin` class that cannot be built without arguments.
        ValueError: A pluggy plugin implements a hook that names no event.
    """
    manager = agent.hooks.plugin_manager
    count = 0
    for entry_point in sorted(importlib.metadata.entry_points(group=group), key=lambda ep: ep.name):
        if manager.get_plugin(entry_point.name) is not None or manager.is_blocked(entry_point.name):
            continue
        loaded = entry_point.load()
        plugin = _as_plugin(loaded, entry_point.name)
        if plugin is None:
            if isinstance(loaded, MultiAgentPlugin) or (
                isinstance(loaded, type) and issubclass(loaded, MultiAgentPlugin)
            ):
                logger.debug("entry_point=<%s> | multi-agent plugin skipped for an agent", entry_point.name)
                continue
            agent.hooks.register_plugin(loaded, name=entry_point.name)
        elif plugin.name in plugins.plugins:
            logger.debug("entry_point=<%s>, plugin=<%s> | already attached", entry_point.name, plugin.name)
            continue
        else:
            plugins.add_and_init(plugin)
        count += 1
    return count


def _as_plugin(loaded: Any, entry_point: str) -> Plugin | None:
    if isinstance(loaded, Plugin):
        return loaded
    if isinstance(loaded, type) and issubclass(loaded, Plugin):
        try:
            return loaded()
        except TypeError as exc:
            raise PluginTypeError(
                f"entry point {entry_point!r} names the plugin class {loaded.__name__}, which cannot be built "
                f"without arguments ({exc}); point the entry point at an instance instead"
            ) from None
    return None
