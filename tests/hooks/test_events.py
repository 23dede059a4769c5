import pytest

from strandslike.hooks import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterMultiAgentInvocationEvent,
    AfterNodeCallEvent,
    AfterToolCallEvent,
    AfterToolsEvent,
    AgentInitializedEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeMultiAgentInvocationEvent,
    BeforeNodeCallEvent,
    BeforeToolCallEvent,
    BeforeToolsEvent,
    MessageAddedEvent,
    MultiAgentInitializedEvent,
)
from strandslike.interrupt import InterruptException
from strandslike.types.interrupt import name_uuid

TOOL_USE = {"toolUseId": "t1", "name": "x", "input": {}}
RESULT = {"toolUseId": "t1", "status": "success", "content": []}
MESSAGE = {"role": "assistant", "content": []}

WRITABLE = [
    (AgentInitializedEvent(None), set()),
    (BeforeInvocationEvent(None), {"messages", "cancel"}),
    (AfterInvocationEvent(None), {"resume"}),
    (MessageAddedEvent(None, MESSAGE), set()),
    (BeforeModelCallEvent(None), {"cancel"}),
    (AfterModelCallEvent(None), {"retry"}),
    (BeforeToolsEvent(None, MESSAGE), {"cancel"}),
    (AfterToolsEvent(None, MESSAGE), {"end_turn"}),
    (BeforeToolCallEvent(None, None, TOOL_USE, {}), {"selected_tool", "tool_use", "cancel_tool"}),
    (AfterToolCallEvent(None, None, TOOL_USE, {}, RESULT), {"result", "retry"}),
    (MultiAgentInitializedEvent(None), set()),
    (BeforeMultiAgentInvocationEvent(None), set()),
    (AfterMultiAgentInvocationEvent(None), set()),
    (BeforeNodeCallEvent(None, "n"), {"cancel_node"}),
    (AfterNodeCallEvent(None, "n"), set()),
]


@pytest.mark.parametrize(("event", "writable"), WRITABLE, ids=lambda v: type(v).__name__)
def test_only_documented_fields_are_writable(event, writable):
    for name in [*list(vars(event)), "brand_new_attribute"]:
        if name.startswith("_"):
            continue
        if name in writable:
            setattr(event, name, getattr(event, name, None))
        else:
            with pytest.raises(AttributeError, match=f"Property {name} is not writable"):
                setattr(event, name, 1)


def test_nested_objects_stay_mutable():
    event = BeforeToolCallEvent(None, None, {"toolUseId": "t", "name": "x", "input": {"a": 1}}, {})
    event.tool_use["input"]["a"] = 2
    event.invocation_state["k"] = "v"
    assert event.tool_use["input"] == {"a": 2}


def test_after_events_reverse_their_callbacks():
    reversed_events = {type(e).__name__ for e, _ in WRITABLE if e.should_reverse_callbacks}
    assert reversed_events == {
        "AfterInvocationEvent",
        "AfterModelCallEvent",
        "AfterToolsEvent",
        "AfterToolCallEvent",
        "AfterMultiAgentInvocationEvent",
        "AfterNodeCallEvent",
    }


def test_interrupt_ids_follow_strands_formats():
    class Owner:
        from strandslike.interrupt._state import _InterruptState

        _interrupt_state = _InterruptState()

    owner = Owner()
    uid = name_uuid("approve")
    cases = [
        (BeforeToolCallEvent(owner, None, TOOL_USE, {}), f"v1:before_tool_call:t1:{uid}"),
        (BeforeToolsEvent(owner, MESSAGE), f"v1:before_tools:{uid}"),
        (BeforeModelCallEvent(owner), f"v1:before_model_call:{uid}"),
        (BeforeNodeCallEvent(owner, "node"), f"v1:before_node_call:{name_uuid('node')}:{uid}"),
    ]
    for event, expected in cases:
        with pytest.raises(InterruptException) as info:
            event.interrupt("approve")
        assert info.value.interrupt.id == expected


def test_positional_construction_matches_strands_field_order():
    event = BeforeNodeCallEvent("source", "node", {"k": 1})
    assert (event.source, event.node_id, event.invocation_state) == ("source", "node", {"k": 1})
    call = AfterToolCallEvent("agent", None, TOOL_USE, {}, RESULT)
    assert call.exception is None
    assert call.cancel_message is None
    assert call.retry is False
