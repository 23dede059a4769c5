"""Callbacks reach pluggy only when pluggy is involved, and the call order is the same before and after."""

from strandslike.hooks import (
    AfterInvocationEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    HookOrder,
    HookRegistry,
    hookimpl,
)


def recorder(log, label):
    def callback(event):
        log.append(label)

    return callback


def register_mixed(registry, log):
    registry.add_callback(AfterInvocationEvent, recorder(log, "after 0"))
    registry.add_callback(BeforeInvocationEvent, recorder(log, "before 0"))
    registry.add_callback(AfterInvocationEvent, recorder(log, "after first"), order=HookOrder.SDK_FIRST)
    registry.add_callback([BeforeInvocationEvent, AfterInvocationEvent], recorder(log, "both"))
    registry.add_callback(BeforeInvocationEvent, recorder(log, "before last"), order=HookOrder.SDK_LAST)
    registry.add_callback(AfterInvocationEvent, recorder(log, "after 1"))


async def dispatch(registry, log):
    log.clear()
    await registry.invoke_callbacks_async(BeforeInvocationEvent(agent=None))
    await registry.invoke_callbacks_async(AfterInvocationEvent(agent=None))
    return list(log)


async def test_the_call_order_is_the_same_before_and_after_the_plugin_manager_is_handed_out():
    log: list[str] = []
    registry = HookRegistry()
    register_mixed(registry, log)
    before = await dispatch(registry, log)
    assert before == ["before 0", "both", "before last", "after first", "after 1", "both", "after 0"]

    manager = registry.plugin_manager
    assert len(manager.get_plugins()) == 7  # every callback is a pluggy plugin now (the list one counts twice)
    assert len(manager.hook.after_invocation.get_hookimpls()) == 4
    assert await dispatch(registry, log) == before


async def test_callbacks_added_after_the_plugin_manager_was_handed_out_keep_the_order():
    log: list[str] = []
    registry = HookRegistry()
    registry.add_callback(BeforeInvocationEvent, recorder(log, "early"))
    manager = registry.plugin_manager
    registry.add_callback(BeforeInvocationEvent, recorder(log, "late"))
    registry.add_callback(BeforeInvocationEvent, recorder(log, "first"), order=-1)
    assert await dispatch(registry, log) == ["first", "early", "late"]
    assert len(manager.hook.before_invocation.get_hookimpls()) == 3


async def test_a_plugin_registered_later_is_ordered_among_the_earlier_callbacks():
    log: list[str] = []

    class Plugin:
        @hookimpl
        def before_invocation(self, event):
            log.append("plugin")

        @hookimpl(trylast=True)
        def before_model_call(self, event):
            log.append("plugin last")

    registry = HookRegistry()
    registry.add_callback(BeforeInvocationEvent, recorder(log, "callback"))
    registry.add_callback(BeforeModelCallEvent, recorder(log, "model callback"), order=HookOrder.SDK_LAST + 1)
    registry.register_plugin(Plugin())
    registry.add_callback(BeforeInvocationEvent, recorder(log, "callback after the plugin"))
    await registry.invoke_callbacks_async(BeforeInvocationEvent(agent=None))
    await registry.invoke_callbacks_async(BeforeModelCallEvent(agent=None, invocation_state={}))
    assert log == ["callback", "plugin", "callback after the plugin", "plugin last", "model callback"]


def test_has_callbacks_counts_callbacks_not_yet_in_pluggy():
    registry = HookRegistry()
    assert not registry.has_callbacks()
    registry.add_callback(BeforeInvocationEvent, lambda event: None)
    assert registry.has_callbacks()
    assert registry.get_callbacks_for(AfterInvocationEvent(agent=None)) == []
    assert registry.plugin_manager.get_plugins()
    assert registry.has_callbacks()
