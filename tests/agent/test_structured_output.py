"""Structured output with `ScriptedModel`: Strands' tool-based flow, forcing, bounded retries, interrupts, sessions."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import answer
from pydantic import BaseModel, Field

from strandslike import Agent, tool
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import ScriptedModel, structured_output_call, text, tool_call, turn
from strandslike.types.exceptions import StructuredOutputException, StructuredOutputValidationError


class Person(BaseModel):
    """A person."""

    name: str
    age: int = Field(ge=0)


@tool
def lookup(name: str) -> str:
    """Look a person up."""
    return f"{name} is 36"


async def test_the_model_calls_the_output_tool_and_the_run_ends_with_the_instance():
    model = ScriptedModel([tool_call("lookup", name="Ada"), structured_output_call(Person, name="Ada", age=36)])
    agent = Agent(model=model, tools=[lookup])
    result = await agent.invoke_async("Who is Ada?", structured_output_model=Person)
    assert result.structured_output == Person(name="Ada", age=36)
    assert result.stop_reason == "tool_use"
    assert [spec["name"] for spec in model.requests[0].tool_specs] == ["lookup", "Person"]
    assert "Person" not in agent.tool_names  # the output tool lives only during the invocation
    assert json.loads(str(result)) == {"name": "Ada", "age": 36}


async def test_a_turn_ended_without_the_tool_is_followed_by_a_forced_call():
    model = ScriptedModel([text("Ada is 36."), structured_output_call(Person, name="Ada", age=36)])
    agent = Agent(model=model)
    result = await agent.invoke_async("Who is Ada?", structured_output_model=Person)
    assert result.structured_output == Person(name="Ada", age=36)
    forced = model.requests[1]
    assert forced.kwargs["tool_choice"] == {"tool": {"name": "Person"}}
    assert [spec["name"] for spec in forced.tool_specs] == ["Person"]
    assert agent.messages[2] == {
        "role": "user",
        "content": [{"text": "You must format the previous response as structured output."}],
    }


async def test_the_agent_default_and_a_custom_prompt():
    model = ScriptedModel([text("Ada."), structured_output_call(Person, name="Ada", age=1)])
    agent = Agent(model=model, structured_output_model=Person, structured_output_prompt="JSON please.")
    result = await agent.invoke_async("Who?")
    assert result.structured_output == Person(name="Ada", age=1)
    assert agent.messages[2]["content"] == [{"text": "JSON please."}]


async def test_a_validation_failure_goes_back_to_the_model_which_fixes_it():
    model = ScriptedModel(
        [structured_output_call(Person, name="Ada", age=-3), structured_output_call(Person, name="Ada", age=36)]
    )
    agent = Agent(model=model)
    result = await agent.invoke_async("Who?", structured_output_model=Person)
    assert result.structured_output == Person(name="Ada", age=36)
    feedback = agent.messages[2]["content"][0]["toolResult"]
    assert feedback["status"] == "error"
    assert "Field 'age'" in feedback["content"][0]["text"]


async def test_repeated_validation_failures_end_in_a_typed_error():
    model = ScriptedModel([structured_output_call(Person, name="Ada", age=-1)] * 3)
    agent = Agent(model=model)
    with pytest.raises(StructuredOutputValidationError, match="3 times") as caught:
        await agent.invoke_async("Who?", structured_output_model=Person)
    assert isinstance(caught.value, StructuredOutputException)
    assert model.calls == 3
    assert agent.messages[-1]["role"] == "user"  # the history stays valid: the last call has its result
    assert "Person" not in agent.tool_names


async def test_forced_json_text_is_accepted_and_invalid_text_is_sent_back():
    model = ScriptedModel([text("Ada"), text("not json"), text('{"name": "Ada", "age": 36}')])
    agent = Agent(model=model)
    result = await agent.invoke_async("Who?", structured_output_model=Person)
    assert result.structured_output == Person(name="Ada", age=36)
    assert "did not produce structured output" in agent.messages[4]["content"][0]["text"]


async def test_parallel_tool_and_output_calls_in_one_turn():
    model = ScriptedModel([turn(tool_call("lookup", name="Ada"), structured_output_call(Person, name="Ada", age=36))])
    agent = Agent(model=model, tools=[lookup])
    result = await agent.invoke_async("Who?", structured_output_model=Person)
    assert result.structured_output == Person(name="Ada", age=36)
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "Ada is 36"}]


def approval(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "lookup" and event.interrupt("approval") != "yes":
        event.cancel_tool = "refused"


async def test_an_interrupted_run_still_ends_with_its_structured_output():
    model = ScriptedModel(
        [tool_call("lookup", name="Ada"), text("Ada is 36."), structured_output_call(Person, name="Ada", age=36)]
    )
    agent = Agent(model=model, tools=[lookup], hooks=[approval])
    paused = await agent.invoke_async("Who?", structured_output_model=Person)
    assert paused.stop_reason == "interrupt"
    assert paused.structured_output is None
    resumed = await agent.invoke_async([answer(paused.interrupts[0], "yes")])  # no model given again
    assert resumed.structured_output == Person(name="Ada", age=36)


async def test_an_interrupt_in_the_same_batch_as_a_valid_output_call_keeps_it():
    model = ScriptedModel([turn(tool_call("lookup", name="Ada"), structured_output_call(Person, name="Ada", age=36))])
    agent = Agent(model=model, tools=[lookup], hooks=[approval])
    paused = await agent.invoke_async("Who?", structured_output_model=Person)
    resumed = await agent.invoke_async([answer(paused.interrupts[0], "yes")])
    assert resumed.structured_output == Person(name="Ada", age=36)
    assert model.calls == 1


def run_child(*args: str) -> dict:
    worker = Path(__file__).with_name("structured_worker.py")
    done = subprocess.run([sys.executable, str(worker), *args], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("command", ["resume", "resume-default"])
def test_a_fresh_process_with_a_session_finishes_the_structured_output(tmp_path, command):
    paused = run_child("pause", str(tmp_path))
    assert paused["stop_reason"] == "interrupt"
    resumed = run_child(command, str(tmp_path), paused["interrupts"][0])
    assert resumed["structured_output"] == {"path": "/tmp/a", "deleted": True}


def test_agent_structured_output_does_not_touch_the_history():
    model = ScriptedModel([structured_output_call(Person, name="Bo", age=4)])
    agent = Agent(model=model, messages=[{"role": "user", "content": [{"text": "Bo is 4."}]}])
    assert agent.structured_output(Person, "Who?") == Person(name="Bo", age=4)
    assert len(agent.messages) == 1
    assert [m["content"][0]["text"] for m in model.requests[0].messages] == ["Bo is 4.", "Who?"]


async def test_structured_output_async_errors():
    agent = Agent(model=ScriptedModel([]))
    with pytest.raises(ValueError, match="No conversation history or prompt provided"):
        await agent.structured_output_async(Person)
    with pytest.raises(TypeError, match="pydantic BaseModel subclass"):
        await agent.structured_output_async(dict, "x")  # type: ignore[type-var]
    paused_agent = Agent(model=ScriptedModel([tool_call("lookup", name="A")]), tools=[lookup], hooks=[approval])
    await paused_agent.invoke_async("go")
    with pytest.raises(RuntimeError, match="cannot call structured output during interrupt"):
        await paused_agent.structured_output_async(Person, "x")


async def test_a_non_model_output_type_is_refused_before_anything_runs():
    model = ScriptedModel([text("x")])
    agent = Agent(model=model)
    with pytest.raises(TypeError, match="structured_output_model"):
        await agent.invoke_async("hi", structured_output_model=int)  # type: ignore[arg-type]
    assert model.calls == 0
