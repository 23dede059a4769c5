"""strandslike.testing's helpers and fixtures, used from this suite (the plugin is loaded as for any user)."""

import os
from typing import Any

import pytest

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import AfterInvocationEvent, BeforeNodeCallEvent, BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.multiagent import GraphBuilder, Status
from strandslike.session import FileSessionManager
from strandslike.testing import (
    EventRecorder,
    SessionStore,
    StillInterruptedError,
    answer_all,
    pending_interrupts,
    run_until_done,
    run_until_done_async,
)

CALLS: list[Any] = []


@pytest.fixture(autouse=True)
def _clear():
    CALLS.clear()


@tool(context=True)
def ask_twice(tool_context: ToolContext) -> str:
    """Ask two questions."""
    color = tool_context.interrupt("color")
    size = tool_context.interrupt("size")
    CALLS.append((color, size))
    return f"{color} {size}"


def test_answer_all_takes_a_result_or_interrupts_and_values_functions_or_names(scripted_model):
    model = scripted_model(turn(tool_call("ask_twice", tool_use_id="a"), tool_call("ask_twice", tool_use_id="b")))
    agent = Agent(model=model, tools=[ask_twice])
    paused = agent("go")
    first, second = paused.interrupts
    assert answer_all(paused, "red") == [first.resume("red"), second.resume("red")]
    assert answer_all([second], lambda interrupt: interrupt.cancel()) == [second.cancel()]
    assert answer_all(paused, lambda interrupt: interrupt.tool_use_id) == [first.resume("a"), second.resume("b")]
    assert answer_all(paused, by_name={"color": "blue"}) == [first.resume("blue"), second.resume("blue")]
    with pytest.raises(
        ValueError, match=r"No answer for interrupt 'color' .* add 'color' to by_name \(it answers: x\)"
    ):
        answer_all(paused, by_name={"x": 1})
    assert pending_interrupts(paused) == [first, second]


def test_run_until_done_answers_every_round(scripted_model):
    agent = Agent(model=scripted_model(tool_call("ask_twice"), text("ok")), tools=[ask_twice])
    result = run_until_done(agent, "go", by_name={"color": "red", "size": "L"})
    assert str(result) == "ok\n"
    assert CALLS == [("red", "L")]
    assert pending_interrupts(result) == []
    scripted_model.assert_all_played()


async def test_run_until_done_async_and_its_round_limit(scripted_model):
    agent = Agent(model=scripted_model(tool_call("ask_twice"), text("ok")), tools=[ask_twice])
    with pytest.raises(StillInterruptedError, match=r"after 1 rounds of answers; it now waits on: size \(v1:tool_call"):
        await run_until_done_async(agent, "go", "x", max_rounds=1)
    agent = Agent(model=ScriptedModel([tool_call("ask_twice"), text("ok")]), tools=[ask_twice])
    assert (await run_until_done_async(agent, "go", "x")).stop_reason == "end_turn"


def test_run_until_done_on_a_graph_with_a_node_hook(scripted_model, event_recorder):
    def gate(event: BeforeNodeCallEvent) -> None:
        if event.interrupt("go-ahead") != "yes":
            event.cancel_node = "no"

    class Gate:
        def register_hooks(self, registry: Any, **kwargs: Any) -> None:
            registry.add_callback(BeforeNodeCallEvent, gate)

    builder = GraphBuilder()
    builder.add_node(Agent(model=scripted_model(text("done"))), "only")
    builder.set_hook_providers([Gate(), event_recorder])
    result = run_until_done(builder.build(), "go", "yes")
    assert result.status == Status.COMPLETED
    assert event_recorder.names.count("BeforeNodeCallEvent") == 2


def test_event_recorder_records_the_agent_lifecycle(scripted_model, event_recorder):
    Agent(model=scripted_model(text("hi")), hooks=[event_recorder])("hello")
    assert event_recorder.names == [
        "AgentInitializedEvent",
        "BeforeInvocationEvent",
        "MessageAddedEvent",
        "BeforeModelCallEvent",
        "AfterModelCallEvent",
        "MessageAddedEvent",
        "AfterInvocationEvent",
    ]
    [after] = event_recorder.of(AfterInvocationEvent)
    assert after.result is not None
    event_recorder.clear()
    assert event_recorder.events == []
    only = EventRecorder(BeforeToolCallEvent)
    Agent(model=ScriptedModel([text("hi")]), hooks=[only])("hello")
    assert only.events == []


def test_session_store_is_a_path_and_closes_its_managers(session_store: SessionStore, scripted_model):
    assert os.fspath(session_store) == str(session_store.path)
    assert (session_store / "x").parent == session_store.path
    manager = session_store.manager("one")
    Agent(model=scripted_model(text("hi")), session_manager=manager)("hello")
    other = FileSessionManager("two", storage_dir=session_store)
    other.close()
    assert session_store.session_ids() == ["one", "two"]
    session_store.close()
    # Closed: a new agent on the same session can take the session's lock at once.
    again = Agent(model=ScriptedModel([text("hi again")]), session_manager=session_store.manager("one"))
    assert str(again("hello")) == "hi again\n"
    assert len(again.messages) == 4


def test_scripted_model_factory_accepts_turns_or_one_list(scripted_model):
    a = scripted_model(text("x"), text("y"))
    b = scripted_model([text("x"), text("y")], model_id="m")
    assert a.remaining == b.remaining == 2
    assert b.get_config()["model_id"] == "m"
    assert scripted_model.models == [a, b]
