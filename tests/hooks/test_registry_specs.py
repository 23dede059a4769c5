"""Hookspecs are added when needed: built-in event names stay their own, and plugins see every built-in event."""

from dataclasses import dataclass

from strandslike.hooks import BaseHookEvent, BeforeToolCallEvent, HookRegistry, hookimpl
from strandslike.hooks.registry import BUILTIN_EVENTS, hook_name


@dataclass
class BeforeToolCall(BaseHookEvent):
    """A user event whose snake_case name is the built-in ``before_tool_call``."""

    payload: str = ""


async def test_a_user_event_named_like_a_built_in_one_does_not_take_its_hook_name():
    seen: list[str] = []

    class Plugin:
        @hookimpl
        def before_tool_call(self, event):
            seen.append(type(event).__name__)

    registry = HookRegistry()
    registry.add_callback(BeforeToolCall, lambda event: seen.append("user event callback"))
    registry.register_plugin(Plugin())

    await registry.invoke_callbacks_async(BeforeToolCall(payload="x"))
    await registry.invoke_callbacks_async(
        BeforeToolCallEvent(
            agent=None, selected_tool=None, tool_use={"toolUseId": "t", "name": "n", "input": {}}, invocation_state={}
        )
    )
    assert seen == ["user event callback", "BeforeToolCallEvent"]


def test_the_plugin_manager_of_a_new_registry_knows_every_built_in_event():
    manager = HookRegistry().plugin_manager
    for event_type in BUILTIN_EVENTS:
        assert getattr(manager.hook, hook_name(event_type)).has_spec()
