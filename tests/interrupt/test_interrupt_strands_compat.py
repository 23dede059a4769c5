"""Strands compatibility is unchanged by the richer interrupts (issue 5: "everything here is additive")."""

import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers import answer, answers

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.session import FileSessionManager

RUNS: list[Any] = []


@pytest.fixture(autouse=True)
def _clear_runs():
    RUNS.clear()


@tool
def weather_tool(city: str) -> str:
    """Get the weather.

    Args:
        city: The city.
    """
    RUNS.append(city)
    return f"sunny in {city}"


@tool(context=True)
def ask_tool(tool_context: ToolContext, question: str) -> str:
    """Ask the user.

    Args:
        question: The question.
    """
    reply = tool_context.interrupt("test_name", reason=question)
    RUNS.append(("ask", reply))
    return f"user said {reply!r}"


def strands_hook(seen: list[Any]):
    def interrupt_callback(event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] == "weather_tool":
            reply = event.interrupt("test_name", "test reason")
            seen.append(reply)
            if reply == "no":
                event.cancel_tool = "User denied"

    return interrupt_callback


def test_interrupt_ids_use_strands_formats():
    # Strands' own executor test pins this id for name "test_name" on tool use "test_tool_id_1".
    assert str(uuid.uuid5(uuid.NAMESPACE_OID, "test_name")) == "78714d6c-613c-5cf4-bf25-7037569941f9"


async def test_hook_and_tool_interrupt_ids_are_strands_ids():
    seen: list[Any] = []
    model = ScriptedModel(
        [
            turn(
                tool_call("weather_tool", city="Paris", tool_use_id="test_tool_id_1"),
                tool_call("ask_tool", question="why?", tool_use_id="test_tool_id_2"),
            ),
            text("done"),
        ]
    )
    agent = Agent(model=model, tools=[weather_tool, ask_tool], hooks=[strands_hook(seen)])
    paused = await agent.invoke_async("go")
    ids = sorted(i.id for i in paused.interrupts)
    assert ids == [
        "v1:before_tool_call:test_tool_id_1:78714d6c-613c-5cf4-bf25-7037569941f9",
        "v1:tool_call:test_tool_id_2:78714d6c-613c-5cf4-bf25-7037569941f9",
    ]
    for interrupt in paused.interrupts:
        assert interrupt.name == "test_name"
        assert interrupt.response is None
    assert {i.reason for i in paused.interrupts} == {"test reason", "why?"}


async def test_the_plain_strands_flow_from_the_guide():
    seen: list[Any] = []
    model = ScriptedModel([tool_call("weather_tool", city="Paris"), text("It is sunny.")])
    agent = Agent(model=model, tools=[weather_tool], hooks=[strands_hook(seen)])

    result = agent("What is the weather?")
    rounds = 0
    while result.stop_reason == "interrupt":
        rounds += 1
        responses = [
            {"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}} for interrupt in result.interrupts
        ]
        result = agent(responses)

    assert rounds == 1
    assert result.stop_reason == "end_turn"
    assert str(result) == "It is sunny.\n"
    assert seen == ["yes"]
    assert RUNS == ["Paris"]


async def test_a_plain_denial_cancels_through_the_hook():
    seen: list[Any] = []
    model = ScriptedModel([tool_call("weather_tool", city="Paris", tool_use_id="t1"), text("ok")])
    agent = Agent(model=model, tools=[weather_tool], hooks=[strands_hook(seen)])
    paused = await agent.invoke_async("go")
    await agent.invoke_async(answers(paused.interrupts, "no"))
    assert RUNS == []
    assert agent.messages[2]["content"][0]["toolResult"] == {
        "toolUseId": "t1",
        "status": "error",
        "content": [{"text": "User denied"}],
    }


@pytest.mark.parametrize("where", ["hook", "tool"])
async def test_none_is_a_legitimate_answer(where: str):
    seen: list[Any] = []
    name, tool_input = ("weather_tool", {"city": "Paris"}) if where == "hook" else ("ask_tool", {"question": "q"})
    model = ScriptedModel([tool_call(name, input=tool_input), text("ok")])
    agent = Agent(model=model, tools=[weather_tool, ask_tool], hooks=[strands_hook(seen)])
    paused = await agent.invoke_async("go")
    done = await agent.invoke_async(answers(paused.interrupts, None))
    assert done.stop_reason == "end_turn"  # not asked again forever
    if where == "hook":
        assert seen == [None]
        assert RUNS == ["Paris"]
    else:
        assert RUNS == [("ask", None)]
    assert model.calls == 2


async def test_partial_resume_reraises_the_rest_by_default():
    seen: list[Any] = []
    model = ScriptedModel(
        [
            turn(
                tool_call("weather_tool", city="Paris", tool_use_id="t1"),
                tool_call("weather_tool", city="Rome", tool_use_id="t2"),
            ),
            text("ok"),
        ]
    )
    agent = Agent(model=model, tools=[weather_tool], hooks=[strands_hook(seen)])
    paused = await agent.invoke_async("go")
    first, second = paused.interrupts
    still = await agent.invoke_async([answer(first, "yes")])
    assert still.stop_reason == "interrupt"
    assert [i.id for i in still.interrupts] == [second.id]
    assert still.interrupts[0].response is None
    assert RUNS == ["Paris"]
    done = await agent.invoke_async([answer(second, "yes")])
    assert done.stop_reason == "end_turn"
    assert RUNS == ["Paris", "Rome"]


async def test_preemptive_response_does_not_pause():
    def hook(event: BeforeToolCallEvent) -> None:
        assert event.interrupt("auto", response="y") == "y"

    model = ScriptedModel([tool_call("weather_tool", city="Paris"), text("ok")])
    agent = Agent(model=model, tools=[weather_tool], hooks=[hook])
    assert (await agent.invoke_async("go")).stop_reason == "end_turn"
    assert RUNS == ["Paris"]


async def test_a_plain_block_resumes_an_agent_rebuilt_from_its_session(tmp_path: Path):
    seen: list[Any] = []

    def build(model: ScriptedModel) -> Agent:
        return Agent(
            model=model,
            tools=[weather_tool],
            hooks=[strands_hook(seen)],
            session_manager=FileSessionManager("compat", storage_dir=tmp_path),
        )

    first = build(ScriptedModel([tool_call("weather_tool", city="Paris", tool_use_id="t1")]))
    [interrupt] = (await first.invoke_async("go")).interrupts
    first.session_manager.close()

    model = ScriptedModel([text("sunny")])
    second = build(model)
    done = await second.invoke_async([{"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}])
    assert done.stop_reason == "end_turn"
    assert RUNS == ["Paris"]
    assert model.calls == 1


async def test_a_plain_block_has_no_action_and_means_resume():
    seen: list[Any] = []
    model = ScriptedModel([tool_call("weather_tool", city="Paris", tool_use_id="t1"), text("ok")])
    agent = Agent(model=model, tools=[weather_tool], hooks=[strands_hook(seen)])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    assert interrupt.resume("yes") == {"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}
    await agent.invoke_async([interrupt.resume("yes")])
    [entry] = [e for e in agent.interrupt_audit if e["event"] == "answered"]
    assert entry["action"] == "resume"
