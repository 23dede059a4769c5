"""Plugins installed as packages: the ``strandslike`` entry-point group, with ``Agent(load_entry_points=True)``."""

import importlib
import importlib.metadata
import sys
import textwrap

import pytest

from strandslike import Agent
from strandslike.models import ScriptedModel, text
from strandslike.plugins import PluginTypeError

MODULE = textwrap.dedent(
    """
    from strandslike.hooks import BeforeInvocationEvent, BeforeNodeCallEvent, hookimpl
    from strandslike.plugins import MultiAgentPlugin, Plugin, hook

    CALLS = []


    class CountingPlugin(Plugin):
        name = "counting"

        @hook
        def count(self, event: BeforeInvocationEvent) -> None:
            CALLS.append("class")


    class Instance(Plugin):
        name = "instance"

        @hook
        def count(self, event: BeforeInvocationEvent) -> None:
            CALLS.append("instance")


    INSTANCE = Instance()


    class Monitor(MultiAgentPlugin):
        name = "monitor"

        @hook
        def node(self, event: BeforeNodeCallEvent) -> None:
            CALLS.append("node")


    class NeedsArguments(Plugin):
        name = "needs-arguments"

        def __init__(self, required):
            super().__init__()


    @hookimpl
    def before_invocation(event):
        CALLS.append("pluggy")
    """
)


def install(tmp_path, monkeypatch, entries: str, module: str) -> None:
    (tmp_path / f"{module}.py").write_text(MODULE)
    dist = tmp_path / f"{module}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[strandslike]\n" + entries)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()


def test_installed_plugins_of_every_kind_are_attached_in_name_order(tmp_path, monkeypatch):
    module = "slk_ep_all"
    install(
        tmp_path,
        monkeypatch,
        f"b_class = {module}:CountingPlugin\n"
        f"a_instance = {module}:INSTANCE\n"
        f"c_pluggy = {module}\n"
        f"d_multi = {module}:Monitor\n",
        module,
    )
    assert {ep.name for ep in importlib.metadata.entry_points(group="strandslike")} >= {"a_instance", "b_class"}

    plain = Agent(model=ScriptedModel([text("hi")]))
    plain("go")
    calls = importlib.import_module(module).CALLS
    assert calls == []  # opt-in only

    agent = Agent(model=ScriptedModel([text("hi")]), load_entry_points=True)
    agent("go")
    assert calls == ["instance", "class", "pluggy"]  # the multi-agent plugin is skipped for an agent
    assert agent.hooks.plugin_manager.get_plugin("c_pluggy") is sys.modules[module]


def test_a_plugin_also_given_explicitly_is_attached_once(tmp_path, monkeypatch):
    module = "slk_ep_once"
    install(tmp_path, monkeypatch, f"a_instance = {module}:INSTANCE\n", module)
    instance = importlib.import_module(module).INSTANCE

    agent = Agent(model=ScriptedModel([text("hi")]), plugins=[instance], load_entry_points=True)
    agent("go")
    assert sys.modules[module].CALLS == ["instance"]


def test_an_installed_plugin_class_that_needs_arguments_is_a_clear_error(tmp_path, monkeypatch):
    module = "slk_ep_args"
    install(tmp_path, monkeypatch, f"z_needs = {module}:NeedsArguments\n", module)
    with pytest.raises(PluginTypeError, match="cannot be built without arguments"):
        Agent(load_entry_points=True)
