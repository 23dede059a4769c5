"""Plugins: bundles of hooks, tools and setup code for agents (`Plugin`) and orchestrators (`MultiAgentPlugin`).

Attach them with ``Agent(plugins=[...])``, ``Graph(..., plugins=[...])``, ``GraphBuilder().set_plugins([...])`` or
``Swarm(..., plugins=[...])``. Methods decorated with `hook` are registered for the events their annotation names;
a `Plugin`'s ``@tool`` methods become the agent's tools. Plugins installed as packages are found through the
``strandslike`` entry-point group with ``Agent(load_entry_points=True)``.
"""

from ._errors import PluginConfigError, PluginTypeError
from .decorator import hook
from .multiagent_plugin import MultiAgentPlugin
from .plugin import Plugin

__all__ = [
    "MultiAgentPlugin",
    "Plugin",
    "PluginConfigError",
    "PluginTypeError",
    "hook",
]
