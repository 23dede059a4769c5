"""Plugins (issue 11, item 1): Strands 1.62's `Plugin`, `@hook`, ``Agent(plugins=[...])`` and their registration."""

import asyncio
from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.hooks import (
    AfterInvocationEvent,
    AgentInitializedEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    HookOrder,
)
from strandslike.interventions import InterventionHandler, Proceed
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.plugins import MultiAgentPlugin, Plugin, PluginConfigError, PluginTypeError, hook


class Recorder(Plugin):
    name = "recorder"

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    @hook
    def on_invocation(self, event: BeforeInvocationEvent) -> None:
        self.seen.append("before_invocation")

    @hook
    async def on_model(self, event: BeforeModelCallEvent | AfterInvocationEvent) -> None:
        await asyncio.sleep(0)
        self.seen.append(type(event).__name__)

    @tool
    def shout(self, words: str) -> str:
        """Shout words.

        Args:
            words: What to shout.
        """
        self.seen.append(f"shout {words}")
        return words.upper()


async def test_hooks_and_tools_of_a_plugin_are_registered_and_run():
    plugin = Recorder()
    model = ScriptedModel([tool_call("shout", words="hi"), text("done")])
    agent = Agent(model=model, plugins=[plugin])

    result = await agent.invoke_async("go")

    assert result.stop_reason == "end_turn"
    assert "shout" in agent.tool_names
    assert plugin.seen == [
        "before_invocation",
        "BeforeModelCallEvent",
        "shout hi",
        "BeforeModelCallEvent",
        "AfterInvocationEvent",
    ]
    assert model.requests[1].messages[-1]["content"][0]["toolResult"]["content"] == [{"text": "HI"}]


def test_hook_infers_union_types_and_marks_the_function():
    assert Recorder.on_model._hook_event_types == [BeforeModelCallEvent, AfterInvocationEvent]  # type: ignore[attr-defined]

    @hook()
    def plain(event: BeforeToolCallEvent) -> None:
        pass

    assert plain._hook_event_types == [BeforeToolCallEvent]  # type: ignore[attr-defined]


def test_hook_without_an_event_annotation_is_refused():
    with pytest.raises(ValueError, match="has no type hint"):

        @hook
        def bad(self, event) -> None:  # type: ignore[no-untyped-def]
            pass


def test_decorated_methods_are_found_parents_first_and_overrides_once():
    class Base(Plugin):
        name = "base"

        @hook
        def first(self, event: BeforeInvocationEvent) -> None:
            pass

        @hook
        def second(self, event: BeforeInvocationEvent) -> None:
            pass

    class Child(Base):
        name = "child"

        @hook
        def second(self, event: BeforeInvocationEvent) -> None:  # overrides: registered once, the child's
            pass

        @hook
        def third(self, event: BeforeInvocationEvent) -> None:
            pass

    plugin = Child()
    assert [h.__func__.__qualname__ for h in plugin.hooks] == [
        "test_decorated_methods_are_found_parents_first_and_overrides_once.<locals>.Base.first",
        "test_decorated_methods_are_found_parents_first_and_overrides_once.<locals>.Child.second",
        "test_decorated_methods_are_found_parents_first_and_overrides_once.<locals>.Child.third",
    ]


def test_a_subclass_that_skips_super_init_still_has_its_hooks():
    class Lazy(Plugin):
        name = "lazy"

        def __init__(self, label: str) -> None:  # no super().__init__()
            self.label = label

        @hook
        def on_invocation(self, event: BeforeInvocationEvent) -> None:
            pass

    agent = Agent(plugins=[Lazy("x")])
    assert len(agent.hooks.get_callbacks_for(BeforeInvocationEvent(agent))) == 1


def test_init_agent_runs_before_the_decorated_hooks_are_registered():
    order: list[str] = []

    class Setup(Plugin):
        name = "setup"

        def init_agent(self, agent: Any) -> None:
            order.append(f"init sees {len(agent.hooks.get_callbacks_for(BeforeInvocationEvent(agent)))} hooks")
            agent.add_hook(self.custom)

        def custom(self, event: BeforeInvocationEvent) -> None:
            order.append("custom")

        @hook
        def decorated(self, event: BeforeInvocationEvent) -> None:
            order.append("decorated")

    agent = Agent(model=ScriptedModel([text("hi")]), plugins=[Setup()])
    agent("go")
    assert order == ["init sees 0 hooks", "custom", "decorated"]


@pytest.mark.parametrize("inside_a_running_loop", [False, True])
def test_async_init_agent_completes_before_the_agent_is_returned(inside_a_running_loop):
    class AsyncSetup(Plugin):
        name = "async-setup"

        async def init_agent(self, agent: Any) -> None:
            await asyncio.sleep(0)
            agent.state.set("ready", True)

    if inside_a_running_loop:

        async def build() -> Agent:
            return Agent(plugins=[AsyncSetup()])

        agent = asyncio.run(build())
    else:
        agent = Agent(plugins=[AsyncSetup()])
    assert agent.state.get("ready") is True


def test_registration_order_is_hooks_then_interventions_then_plugins():
    order: list[str] = []

    def user_hook(event: BeforeInvocationEvent) -> None:
        order.append("hook")

    class Handler(InterventionHandler):
        name = "handler"

        def before_invocation(self, event: Any, **kwargs: Any) -> Proceed:
            order.append("intervention")
            return Proceed()

    class Late(Plugin):
        name = "late"

        @hook
        def on_invocation(self, event: BeforeInvocationEvent) -> None:
            order.append("plugin")

    class Initialized(Plugin):
        name = "initialized"

        @hook
        def on_init(self, event: AgentInitializedEvent) -> None:
            order.append("initialized")

    agent = Agent(
        model=ScriptedModel([text("hi")]),
        hooks=[user_hook],
        interventions=[Handler()],
        plugins=[Late(), Initialized()],
    )
    assert order == ["initialized"]  # AgentInitializedEvent fires after every plugin is attached
    agent("go")
    # Interventions run at HookOrder.INTERVENTION_INPUT (90): after hooks and plugins of the default order.
    assert order == ["initialized", "hook", "plugin", "intervention"]
    assert HookOrder.INTERVENTION_INPUT > HookOrder.DEFAULT


def test_duplicate_plugin_names_are_refused_with_strands_message():
    with pytest.raises(PluginConfigError, match=r"plugin_name=<recorder> \| plugin already registered"):
        Agent(plugins=[Recorder(), Recorder()])
    assert issubclass(PluginConfigError, ValueError)


@pytest.mark.parametrize(
    ("plugins", "message"),
    [
        ([Recorder], "pass an instance: Recorder()"),
        ([object()], "takes Plugin instances"),
        (Recorder(), "takes a list of plugins"),
        (42, "takes a list of plugins"),
    ],
)
def test_things_that_are_not_plugins_are_refused(plugins, message):
    with pytest.raises(PluginTypeError, match=message):
        Agent(plugins=plugins)


def test_a_multi_agent_plugin_given_to_an_agent_says_where_it_belongs():
    class Monitor(MultiAgentPlugin):
        name = "monitor"

    with pytest.raises(PluginTypeError, match="attach it to a Graph or Swarm"):
        Agent(plugins=[Monitor()])


def test_a_plugin_tool_replaces_a_decorated_tool_of_the_same_name():
    # Strands 1.62: a plugin's tools go through `process_tools`; a `@tool` supports hot reload, so one of the same
    # name is replaced rather than refused.
    @tool
    def shout(words: str) -> str:
        """Shout.

        Args:
            words: Words.
        """
        return words

    plugin = Recorder()
    agent = Agent(tools=[shout], plugins=[plugin])
    assert agent.tool_names == ["shout"]
    assert agent.tool.shout(words="hi")["content"] == [{"text": "HI"}]
    assert plugin.seen[-1] == "shout hi"


def test_the_plugin_registry_does_not_keep_the_agent_alive():
    import gc
    import weakref

    agent = Agent(plugins=[Recorder()])
    ref = weakref.ref(agent)
    del agent
    gc.collect()
    assert ref() is None
