import functools
import importlib
import importlib.metadata
import sys
from typing import Union

import pytest

from strandslike.hooks import (
    AfterInvocationEvent,
    AfterToolCallEvent,
    AgentInitializedEvent,
    BaseHookEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    HookOrder,
    HookProvider,
    HookRegistry,
    MessageAddedEvent,
    hookimpl,
)
from strandslike.hooks.registry import hook_name


class FakeAgent:
    def __init__(self):
        from strandslike.interrupt._state import _InterruptState

        self._interrupt_state = _InterruptState()


def before_call(agent=None):
    agent = agent or FakeAgent()
    return BeforeToolCallEvent(agent, None, {"toolUseId": "t1", "name": "x", "input": {}}, {})


def recorder(log, label):
    def callback(event):
        log.append(label)

    return callback


async def test_lower_order_runs_first_and_after_events_reverse_within_an_order_group():
    registry = HookRegistry()
    log = []
    for i in range(3):
        registry.add_callback(AfterInvocationEvent, recorder(log, i))
    registry.add_callback(AfterInvocationEvent, recorder(log, "-50"), order=-50)
    registry.add_callback(AfterInvocationEvent, recorder(log, "+50"), order=50)
    await registry.invoke_callbacks_async(AfterInvocationEvent(agent=None))
    assert log == ["-50", 2, 1, 0, "+50"]


async def test_before_events_run_in_registration_order():
    registry = HookRegistry()
    log = []
    for i in range(3):
        registry.add_callback(BeforeInvocationEvent, recorder(log, i))
    registry.add_callback(BeforeInvocationEvent, recorder(log, "last"), order=HookOrder.SDK_LAST)
    registry.add_callback(BeforeInvocationEvent, recorder(log, "first"), order=HookOrder.SDK_FIRST)
    await registry.invoke_callbacks_async(BeforeInvocationEvent(agent=None))
    assert log == ["first", 0, 1, 2, "last"]


def test_hook_order_constants_match_strands():
    assert (HookOrder.SDK_FIRST, HookOrder.INTERVENTION_OUTPUT, HookOrder.DEFAULT) == (-100, -90, 0)
    assert (HookOrder.MODEL_ROUTING, HookOrder.INTERVENTION_INPUT, HookOrder.SDK_LAST) == (50, 90, 100)


async def test_infinite_orders_are_allowed():
    registry = HookRegistry()
    log = []
    registry.add_callback(BeforeInvocationEvent, recorder(log, "inf"), order=float("inf"))
    registry.add_callback(BeforeInvocationEvent, recorder(log, "-inf"), order=float("-inf"))
    await registry.invoke_callbacks_async(BeforeInvocationEvent(agent=None))
    assert log == ["-inf", "inf"]


async def test_dispatch_is_by_exact_event_class():
    class MyEvent(BeforeInvocationEvent):
        pass

    registry = HookRegistry()
    log = []
    registry.add_callback(BeforeInvocationEvent, recorder(log, "parent"))
    await registry.invoke_callbacks_async(MyEvent(agent=None))
    assert log == []
    registry.add_callback(MyEvent, recorder(log, "child"))
    await registry.invoke_callbacks_async(MyEvent(agent=None))
    assert log == ["child"]


async def test_custom_event_classes_with_the_same_name_get_distinct_hooks():
    def make():
        class Custom(BaseHookEvent):
            pass

        return Custom

    first, second = make(), make()
    registry = HookRegistry()
    log = []
    registry.add_callback(first, recorder(log, "first"))
    registry.add_callback(second, recorder(log, "second"))
    await registry.invoke_callbacks_async(second())
    assert log == ["second"]


async def test_type_inference_from_annotation_and_union():
    registry = HookRegistry()
    log = []

    def single(event: BeforeInvocationEvent) -> None:
        log.append(("single", type(event).__name__))

    def union(event: BeforeInvocationEvent | AfterInvocationEvent) -> None:
        log.append(("union", type(event).__name__))

    def old_union(event: Union[MessageAddedEvent, AfterInvocationEvent]) -> None:  # noqa: UP007
        log.append(("old", type(event).__name__))

    registry.add_callback(None, single)
    registry.add_callback(None, union)
    registry.add_callback(None, old_union)
    await registry.invoke_callbacks_async(BeforeInvocationEvent(agent=None))
    await registry.invoke_callbacks_async(AfterInvocationEvent(agent=None))
    assert log == [
        ("single", "BeforeInvocationEvent"),
        ("union", "BeforeInvocationEvent"),
        ("old", "AfterInvocationEvent"),
        ("union", "AfterInvocationEvent"),
    ]


async def test_type_inference_on_methods_and_callable_objects():
    log = []

    class Hooks:
        def on_before(self, event: BeforeInvocationEvent) -> None:
            log.append("method")

    class Callable:
        async def __call__(self, event: BeforeInvocationEvent) -> None:
            log.append("async __call__")

    registry = HookRegistry()
    registry.add_callback(None, Hooks().on_before)
    registry.add_callback(None, Callable())
    await registry.invoke_callbacks_async(BeforeInvocationEvent(agent=None))
    assert log == ["method", "async __call__"]


@pytest.mark.parametrize(
    ("callback", "message"),
    [
        (lambda: None, "callback has no parameters | cannot infer event type"),
        (lambda event: None, "parameter=<event> has no type hint | cannot infer event type"),
    ],
)
def test_type_inference_errors(callback, message):
    with pytest.raises(ValueError, match=message.replace("|", r"\|")):
        HookRegistry().add_callback(None, callback)


def test_type_inference_rejects_non_events_and_none_in_unions():
    def not_event(event: int) -> None: ...

    def with_none(event: BeforeInvocationEvent | None) -> None: ...

    def bad_member(event: BeforeInvocationEvent | int) -> None: ...

    def broken(event: "DoesNotExist") -> None: ...  # noqa: F821

    registry = HookRegistry()
    with pytest.raises(ValueError, match=r"type hint must be a subclass of BaseHookEvent"):
        registry.add_callback(None, not_event)
    with pytest.raises(ValueError, match="None is not a valid event type in union"):
        registry.add_callback(None, with_none)
    with pytest.raises(ValueError, match="Invalid type in union"):
        registry.add_callback(None, bad_member)
    with pytest.raises(ValueError, match="failed to get type hints for callback"):
        registry.add_callback(None, broken)


def test_event_type_list_validation():
    registry = HookRegistry()
    with pytest.raises(ValueError, match="event_type list cannot be empty"):
        registry.add_callback([], lambda event: None)
    with pytest.raises(ValueError, match=r"Invalid event type: <class 'int'> \| must be a subclass of BaseHookEvent"):
        registry.add_callback([BeforeInvocationEvent, int], lambda event: None)


async def test_event_type_list_registers_each_once():
    registry = HookRegistry()
    log = []
    registry.add_callback([BeforeInvocationEvent, AfterInvocationEvent, BeforeInvocationEvent], recorder(log, "x"))
    await registry.invoke_callbacks_async(BeforeInvocationEvent(agent=None))
    await registry.invoke_callbacks_async(AfterInvocationEvent(agent=None))
    assert log == ["x", "x"]


async def test_same_callback_registered_twice_runs_twice():
    registry = HookRegistry()
    log = []
    callback = recorder(log, "x")
    registry.add_callback(BeforeInvocationEvent, callback)
    registry.add_callback(BeforeInvocationEvent, callback)
    await registry.invoke_callbacks_async(BeforeInvocationEvent(agent=None))
    assert log == ["x", "x"]


def test_agent_initialized_event_rejects_async_callbacks():
    async def callback(event: AgentInitializedEvent) -> None: ...

    with pytest.raises(ValueError, match="AgentInitializedEvent can only be registered with a synchronous callback"):
        HookRegistry().add_callback(AgentInitializedEvent, callback)
    with pytest.raises(ValueError, match="synchronous callback"):
        HookRegistry().add_callback(AgentInitializedEvent, functools.partial(callback))


def test_sync_dispatch_refuses_async_callbacks():
    registry = HookRegistry()

    async def callback(event: BeforeInvocationEvent) -> None: ...

    registry.add_callback(None, callback)
    with pytest.raises(RuntimeError, match="use invoke_callbacks_async to invoke async callback"):
        registry.invoke_callbacks(BeforeInvocationEvent(agent=None))


async def test_async_callbacks_are_awaited_in_turn():
    registry = HookRegistry()
    log = []

    async def first(event: BeforeInvocationEvent) -> None:
        log.append("first")

    registry.add_callback(None, first)
    registry.add_callback(BeforeInvocationEvent, recorder(log, "second"))
    await registry.invoke_callbacks_async(BeforeInvocationEvent(agent=None))
    assert log == ["first", "second"]


async def test_callback_exception_propagates_once_naming_event_and_callback():
    registry = HookRegistry()
    log = []

    def boom(event: BeforeInvocationEvent) -> None:
        raise LookupError("nope")

    registry.add_callback(None, boom)
    registry.add_callback(BeforeInvocationEvent, recorder(log, "after boom"))
    with pytest.raises(LookupError, match="nope") as info:
        await registry.invoke_callbacks_async(BeforeInvocationEvent(agent=None))
    assert any("boom" in note and "BeforeInvocationEvent" in note for note in info.value.__notes__)
    assert log == []


async def test_every_callback_runs_on_an_interrupted_event_and_all_interrupts_are_collected():
    registry = HookRegistry()
    log = []

    def first(event: BeforeToolCallEvent) -> None:
        log.append("first")
        event.interrupt("a", reason="why a")

    def second(event: BeforeToolCallEvent) -> None:
        log.append("second")
        event.interrupt("b")

    registry.add_callback(None, first)
    registry.add_callback(None, second)
    _, interrupts = await registry.invoke_callbacks_async(before_call())
    assert log == ["first", "second"]
    assert [i.name for i in interrupts] == ["a", "b"]
    assert interrupts[0].reason == "why a"


async def test_same_interrupt_name_twice_on_one_event_is_an_error():
    registry = HookRegistry()
    event = before_call()

    def first(event: BeforeToolCallEvent) -> None:
        event.interrupt("same")

    registry.add_callback(None, first)
    registry.add_callback(None, first)
    # The second call finds the stored interrupt and raises it again under the same name.
    with pytest.raises(ValueError, match=r"interrupt_name=<same> \| interrupt name used more than once"):
        await registry.invoke_callbacks_async(event)


async def test_interrupt_from_a_non_interruptible_event_is_a_clear_error():
    from strandslike.interrupt import Interrupt, InterruptException

    registry = HookRegistry()

    def sneaky(event: AfterToolCallEvent) -> None:
        raise InterruptException(Interrupt("x", "x"))

    registry.add_callback(None, sneaky)
    event = AfterToolCallEvent(
        None,
        None,
        {"toolUseId": "t", "name": "n", "input": {}},
        {},
        {"toolUseId": "t", "status": "success", "content": []},
    )
    with pytest.raises(TypeError, match="AfterToolCallEvent, which is not interruptible"):
        await registry.invoke_callbacks_async(event)


async def test_pluggy_plugin_objects_with_hookimpls():
    log = []

    class Plugin:
        @hookimpl
        def before_invocation(self, event):
            log.append("plain")

        @hookimpl(tryfirst=True)
        def after_invocation(self, event):
            log.append("tryfirst after")

    registry = HookRegistry()
    registry.add_callback(AfterInvocationEvent, recorder(log, "strands-style after"), order=-100.5)
    registry.add_callback(AfterInvocationEvent, recorder(log, "default after"))
    registry.register_plugin(Plugin())
    await registry.invoke_callbacks_async(BeforeInvocationEvent(agent=None))
    await registry.invoke_callbacks_async(AfterInvocationEvent(agent=None))
    assert log == ["plain", "strands-style after", "tryfirst after", "default after"]


def test_plugin_with_unknown_hook_name_is_rejected_and_not_registered():
    class Plugin:
        @hookimpl
        def before_everything(self, event): ...

    registry = HookRegistry()
    with pytest.raises(ValueError, match="before_everything"):
        registry.register_plugin(Plugin())
    assert not registry.has_callbacks()


def test_hook_names_are_snake_case_without_event_suffix():
    assert hook_name(BeforeToolCallEvent) == "before_tool_call"
    assert hook_name(BeforeModelCallEvent) == "before_model_call"
    assert hook_name(AgentInitializedEvent) == "agent_initialized"


async def test_hook_provider_protocol_and_add_hook():
    log = []

    class Provider(HookProvider):
        def register_hooks(self, registry, **kwargs):
            registry.add_callback(BeforeInvocationEvent, recorder(log, "provider"))

    registry = HookRegistry()
    registry.add_hook(Provider())
    assert isinstance(Provider(), HookProvider)
    await registry.invoke_callbacks_async(BeforeInvocationEvent(agent=None))
    assert log == ["provider"]


async def test_entry_point_plugins_are_opt_in(tmp_path, monkeypatch):
    module = tmp_path / "slk_demo_plugin.py"
    module.write_text(
        "from strandslike.hooks import hookimpl\n"
        "calls = []\n"
        "@hookimpl\n"
        "def before_invocation(event):\n"
        "    calls.append('entry point')\n"
    )
    dist = tmp_path / "slk_demo_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: slk-demo-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[strandslike]\ndemo = slk_demo_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    assert any(ep.name == "demo" for ep in importlib.metadata.entry_points(group="strandslike"))

    plain = HookRegistry()
    await plain.invoke_callbacks_async(BeforeInvocationEvent(agent=None))
    opted_in = HookRegistry()
    assert opted_in.load_entry_points() == 1
    await opted_in.invoke_callbacks_async(BeforeInvocationEvent(agent=None))
    assert sys.modules["slk_demo_plugin"].calls == ["entry point"]
