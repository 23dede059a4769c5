"""Interrupt-only tools (Genkit defineInterrupt): `interrupt_tool` and `define_interrupt` (issue 5, point 2)."""

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

from strandslike import Agent, InvalidPayloadError, define_interrupt, interrupt_tool
from strandslike.hooks import AfterToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call


class Question(BaseModel):
    question: str = Field(description="the question to ask")
    options: list[str] = Field(description="the choices to display")


class Answer(BaseModel):
    answer: str


@interrupt_tool
def ask_user(question: str, options: list[str]) -> Answer:
    """Ask the user a clarification question.

    Args:
        question: The question.
        options: The choices.
    """
    raise AssertionError("the body of an interrupt tool never runs")


@interrupt_tool(name="free_text", message="Please answer")
def free_text(question: str):
    """Ask the user anything.

    Args:
        question: The question.
    """
    raise AssertionError("never runs")


ask_choice = define_interrupt("ask_choice", "Ask the user to pick an option.", Question, response_type=Answer)
ask_raw = define_interrupt(
    "ask_raw",
    "Ask with a JSON Schema input.",
    {"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]},
)


def results(agent: Agent, index: int = 2) -> list[dict[str, Any]]:
    return [block["toolResult"] for block in agent.messages[index]["content"]]


@pytest.mark.parametrize("declared", [ask_user, ask_choice], ids=["interrupt_tool", "define_interrupt"])
async def test_calling_an_interrupt_tool_pauses_and_the_answer_is_the_result(declared):
    name = declared.tool_name
    question = {"question": "Which colour?", "options": ["red", "blue"]}
    model = ScriptedModel([tool_call(name, tool_use_id="t1", **question), text("blue it is")])
    agent = Agent(model=model, tools=[declared])

    paused = await agent.invoke_async("paint it")

    assert paused.stop_reason == "interrupt"
    [interrupt] = paused.interrupts
    assert interrupt.name == name
    assert interrupt.reason == question
    assert interrupt.tool_use_id == "t1"
    assert interrupt.kind == "input_required"
    assert interrupt.response_schema == Answer.model_json_schema()
    assert interrupt.id.startswith("v1:tool_call:t1:")

    done = await agent.invoke_async([interrupt.resume({"answer": "blue"})])

    assert done.stop_reason == "end_turn"
    assert results(agent) == [{"toolUseId": "t1", "status": "success", "content": [{"json": {"answer": "blue"}}]}]
    # The model received the answer as the tool result.
    sent = model.requests[-1].messages[-1]["content"][0]["toolResult"]
    assert json.dumps(sent["content"]) == json.dumps([{"json": {"answer": "blue"}}])
    assert model.calls == 2


async def test_the_model_sees_the_interrupt_tool_spec():
    model = ScriptedModel([text("no question")])
    agent = Agent(model=model, tools=[ask_user, ask_choice])
    await agent.invoke_async("hi")
    specs = {spec["name"]: spec for spec in model.requests[0].tool_specs}
    assert specs["ask_user"]["description"].startswith("Ask the user a clarification question.")
    assert set(specs["ask_user"]["inputSchema"]["json"]["properties"]) == {"question", "options"}
    assert specs["ask_choice"]["inputSchema"]["json"] == Question.model_json_schema()
    assert ask_user.tool_type == "interrupt"


async def test_typed_answer_is_validated_and_the_run_stays_resumable():
    model = ScriptedModel([tool_call("ask_choice", tool_use_id="t1", question="q?", options=["a", "b"]), text("ok")])
    agent = Agent(model=model, tools=[ask_choice])
    [interrupt] = (await agent.invoke_async("go")).interrupts

    with pytest.raises(InvalidPayloadError) as info:
        await agent.invoke_async([interrupt.resume({"wrong": 1})])
    assert info.value.code == "INVALID_PAYLOAD"
    assert agent._interrupt_state.activated
    assert model.calls == 1

    done = await agent.invoke_async([interrupt.resume({"answer": "a"})])
    assert done.stop_reason == "end_turn"
    assert results(agent)[0]["content"] == [{"json": {"answer": "a"}}]


async def test_untyped_interrupt_tool_answer_text_and_json():
    model = ScriptedModel(
        [
            tool_call("free_text", tool_use_id="t1", question="name?"),
            tool_call("ask_raw", tool_use_id="t2", topic="x"),
            text("ok"),
        ]
    )
    agent = Agent(model=model, tools=[free_text, ask_raw])
    [first] = (await agent.invoke_async("go")).interrupts
    assert first.message == "Please answer"
    assert first.response_schema is None
    [second] = (await agent.invoke_async([first.resume("Ada")])).interrupts
    assert second.name == "ask_raw"
    assert second.reason == {"topic": "x"}
    done = await agent.invoke_async([second.resume({"free": ["form", 1]})])
    assert done.stop_reason == "end_turn"
    assert results(agent, 2)[0]["content"] == [{"text": "Ada"}]
    assert results(agent, 4)[0]["content"] == [{"json": {"free": ["form", 1]}}]


@pytest.mark.parametrize("declared", [ask_user, ask_choice], ids=["interrupt_tool", "define_interrupt"])
async def test_invalid_input_from_the_model_is_an_error_result_without_a_pause(declared):
    name = declared.tool_name
    model = ScriptedModel([tool_call(name, tool_use_id="t1", question=42), text("sorry")])
    agent = Agent(model=model, tools=[declared])

    done = await agent.invoke_async("go")

    assert done.stop_reason == "end_turn"
    assert not agent._interrupt_state.activated
    assert agent.interrupt_audit == []
    [result] = results(agent)
    assert result["status"] == "error"
    assert "Validation failed" in result["content"][0]["text"]
    assert model.calls == 2


async def test_interrupt_tool_answered_with_respond_and_cancel():
    after: list[AfterToolCallEvent] = []

    def record(event: AfterToolCallEvent) -> None:
        after.append(event)

    model = ScriptedModel(
        [
            {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "t1", "name": "free_text", "input": {"question": "a?"}}},
                    {"toolUse": {"toolUseId": "t2", "name": "free_text", "input": {"question": "b?"}}},
                ],
            },
            text("ok"),
        ]
    )
    agent = Agent(model=model, tools=[free_text], hooks=[record])
    paused = await agent.invoke_async("go")
    by_tool = {i.tool_use_id: i for i in paused.interrupts}
    assert set(by_tool) == {"t1", "t2"}

    await agent.invoke_async([by_tool["t1"].respond("given directly"), by_tool["t2"].cancel()])

    assert results(agent) == [
        {"toolUseId": "t1", "status": "success", "content": [{"text": "given directly"}]},
        {"toolUseId": "t2", "status": "error", "content": [{"text": "Tool call cancelled by user"}]},
    ]
    assert sorted(event.tool_use["toolUseId"] for event in after) == ["t1", "t2"]
