import asyncio
import threading

import anyio
import pytest

from strandslike import Agent, AgentResult, tool
from strandslike.agent import AgentState
from strandslike.hooks import AfterInvocationEvent, BeforeInvocationEvent
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.tools.executors import SequentialToolExecutor
from strandslike.types.exceptions import (
    ConcurrencyException,
    MaxTokensReachedException,
    ModelNotConfiguredError,
    NotJSONSerializableError,
)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def test_tool_cycle_appends_messages_in_strands_order():
    model = ScriptedModel([tool_call("add", a=1, b=2, tool_use_id="t1"), text("3")])
    agent = Agent(model=model, tools=[add])
    result = await agent.invoke_async("1+2?")
    assert result.stop_reason == "end_turn"
    assert str(result) == "3\n"
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    assert agent.messages[2]["content"][0]["toolResult"] == {
        "toolUseId": "t1",
        "status": "success",
        "content": [{"text": "3"}],
    }
    assert model.calls == 2
    assert agent.event_loop_metrics.cycle_count == 2
    assert agent.event_loop_metrics.tool_metrics["add"].success_count == 1


def test_sync_call_works_without_a_running_loop():
    agent = Agent(model=ScriptedModel([text("hi")]))
    assert str(agent("hello")) == "hi\n"


async def test_sync_call_works_inside_a_running_loop():
    agent = Agent(model=ScriptedModel([text("hi")]))
    assert str(agent("hello")) == "hi\n"


async def test_agent_without_model_says_how_to_pass_one():
    agent = Agent()
    with pytest.raises(ModelNotConfiguredError, match="ScriptedModel"):
        await agent.invoke_async("hi")
    assert agent.messages == []


def test_model_given_as_a_string_builds_a_bedrock_model(monkeypatch):
    from strandslike.models.bedrock import BedrockModel

    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    agent = Agent(model="us.anthropic.claude")
    assert isinstance(agent.model, BedrockModel)
    assert agent.model.get_config()["model_id"] == "us.anthropic.claude"


@pytest.mark.parametrize("bad", [42, object(), ""])
def test_model_that_is_neither_a_model_nor_an_id_is_refused(bad):
    with pytest.raises(TypeError, match="model"):
        Agent(model=bad)


def test_duplicate_tool_names_replace_as_in_strands():
    @tool(name="add")
    def other(x: int) -> int:
        """Other."""
        return x

    # Decorated tools support hot reload, so in Strands a later tool of the same name replaces the earlier one.
    assert Agent(tools=[add, other]).tool_registry.registry["add"] is other


async def test_second_concurrent_invocation_raises_concurrency_exception():
    agent = Agent(model=ScriptedModel([text("slow", delay=0.2), text("never")]))
    errors = []

    async def second():
        await anyio.sleep(0.05)
        try:
            await agent.invoke_async("again")
        except ConcurrencyException as exc:
            errors.append(str(exc))

    async with anyio.create_task_group() as group:
        group.start_soon(agent.invoke_async, "first")
        group.start_soon(second)
    assert errors == ["Agent is already processing a request. Concurrent invocations are not supported."]


async def test_state_is_json_only_and_copied():
    agent = Agent(model=ScriptedModel([]), state={"a": [1]})
    value = agent.state.get("a")
    value.append(2)
    assert agent.state.get("a") == [1]
    with pytest.raises(NotJSONSerializableError, match=r"agent\.state value for 'bad'"):
        agent.state.set("bad", object())
    agent.state.delete("a")
    assert agent.state.get() == {}
    assert isinstance(Agent(state=AgentState({"k": 1})).state, AgentState)


async def test_callers_invocation_state_is_not_mutated():
    seen = {}

    @tool(context=True)
    def peek(tool_context) -> str:
        """Peek."""
        seen.update(tool_context.invocation_state)
        tool_context.invocation_state["written"] = True
        tool_context.invocation_state["request_state"]["x"] = 1
        return "ok"

    caller_state = {"user": "ann", "request_state": {}}
    agent = Agent(model=ScriptedModel([tool_call("peek"), text("done")]), tools=[peek])
    await agent.invoke_async("go", invocation_state=caller_state)
    assert caller_state == {"user": "ann", "request_state": {}}
    assert seen["user"] == "ann"
    assert seen["agent"] is agent


async def test_stream_async_yields_text_tool_and_result_events():
    model = ScriptedModel([tool_call("add", a=2, b=2), text("four")], chunk_size=2)
    agent = Agent(model=model, tools=[add])
    events = [event async for event in agent.stream_async("2+2")]
    data = "".join(e["data"] for e in events if "data" in e)
    assert data == "four"
    assert any("current_tool_use" in e for e in events)
    assert any(e.get("tool_result", {}).get("status") == "success" for e in events)
    assert [e["message"]["role"] for e in events if "message" in e] == ["user", "assistant", "user", "assistant"]
    assert isinstance(events[-1]["result"], AgentResult)


async def test_stream_async_raises_the_original_error():
    agent = Agent(model=ScriptedModel([RuntimeError("provider down")]))
    with pytest.raises(RuntimeError, match="provider down"):
        async for _ in agent.stream_async("hi"):
            pass


async def test_callback_handler_receives_events_as_keywords():
    seen = []
    agent = Agent(model=ScriptedModel([text("hey")]), callback_handler=lambda **event: seen.append(event))
    await agent.invoke_async("hi")
    assert any(e.get("data") == "hey" for e in seen)


async def test_max_tokens_raises_after_appending_the_partial_message():
    agent = Agent(model=ScriptedModel([text("partial", stop_reason="max_tokens")]))
    with pytest.raises(MaxTokensReachedException):
        await agent.invoke_async("write a book")
    assert agent.messages[-1]["content"] == [{"text": "partial"}]


async def test_cancel_stops_the_model_stream():
    agent = Agent(model=ScriptedModel([text("long answer", delay=0.2)]))

    async def cancel_soon():
        await anyio.sleep(0.05)
        agent.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(cancel_soon)
        result = await agent.invoke_async("go")
    assert result.stop_reason == "cancelled"
    assert result.message["content"] == [{"text": "Cancelled by user"}]


async def test_concurrent_executor_runs_tools_together_and_keeps_tool_use_order():
    finished = []

    @tool
    async def wait(name: str, seconds: float) -> str:
        """Wait."""
        await anyio.sleep(seconds)
        finished.append(name)
        return name

    model = ScriptedModel(
        [turn(tool_call("wait", name="slow", seconds=0.1), tool_call("wait", name="fast", seconds=0.0)), text("ok")]
    )
    agent = Agent(model=model, tools=[wait])
    await agent.invoke_async("go")
    assert finished == ["fast", "slow"]
    results = [b["toolResult"]["content"][0]["text"] for b in agent.messages[2]["content"]]
    assert results == ["slow", "fast"]


async def test_sequential_executor_runs_tools_in_order():
    finished = []

    @tool
    async def wait(name: str, seconds: float) -> str:
        """Wait."""
        await anyio.sleep(seconds)
        finished.append(name)
        return name

    model = ScriptedModel(
        [turn(tool_call("wait", name="slow", seconds=0.05), tool_call("wait", name="fast", seconds=0.0)), text("ok")]
    )
    agent = Agent(model=model, tools=[wait], tool_executor=SequentialToolExecutor())
    await agent.invoke_async("go")
    assert finished == ["slow", "fast"]


async def test_tool_errors_and_unknown_tools_become_error_results():
    @tool
    def explode() -> str:
        """Explode."""
        raise RuntimeError("kaboom")

    model = ScriptedModel(
        [turn(tool_call("explode"), tool_call("missing"), tool_call("add", a="x", b=1)), text("sorry")]
    )
    agent = Agent(model=model, tools=[explode, add])
    result = await agent.invoke_async("go")
    assert result.stop_reason == "end_turn"
    texts = [b["toolResult"]["content"][0]["text"] for b in agent.messages[2]["content"]]
    assert texts[0] == "Error: RuntimeError - kaboom"
    assert texts[1] == "Unknown tool: missing"
    assert texts[2].startswith("Error: Validation failed for input parameters")


async def test_before_invocation_error_still_fires_after_invocation():
    fired = []

    def boom(event: BeforeInvocationEvent) -> None:
        raise RuntimeError("no")

    def after(event: AfterInvocationEvent) -> None:
        fired.append(event.result)

    agent = Agent(model=ScriptedModel([text("x")]), hooks=[boom, after])
    with pytest.raises(RuntimeError, match="no"):
        await agent.invoke_async("hi")
    assert fired == [None]


async def test_dangling_tool_use_is_repaired_before_a_new_prompt():
    history = [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t9", "name": "add", "input": {}}}]},
    ]
    agent = Agent(model=ScriptedModel([text("ok")]), tools=[add], messages=history)
    await agent.invoke_async("new question")
    repaired = agent.messages[2]
    assert repaired["role"] == "user"
    assert repaired["content"][0]["toolResult"]["content"] == [{"text": "Tool was interrupted."}]
    assert repaired["content"][1] == {"text": "new question"}


async def test_dangling_tool_use_runs_without_model_call_when_invoked_with_none():
    history = [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t9", "name": "add", "input": {"a": 1, "b": 1}}}]},
    ]
    model = ScriptedModel([text("two")])
    agent = Agent(model=model, tools=[add], messages=history)
    result = await agent.invoke_async()
    assert str(result) == "two\n"
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "2"}]
    assert model.calls == 1


async def test_direct_tool_call_records_four_messages():
    agent = Agent(model=ScriptedModel([]), tools=[add])
    result = agent.tool.add(a=2, b=3)
    assert result["content"] == [{"text": "5"}]
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    agent.tool.add(a=1, b=1, record_direct_tool_call=False)
    assert len(agent.messages) == 4
    with pytest.raises(AttributeError, match="Tool 'nope' not found"):
        agent.tool.nope()


async def test_invalid_hooks_are_rejected_with_strands_message():
    with pytest.raises(
        ValueError, match=r"Invalid hook: 42\. Must be a HookProvider instance or a callable hook callback\."
    ):
        Agent(hooks=[42])


def test_sync_call_from_another_thread_with_a_loop_running():
    agent = Agent(model=ScriptedModel([text("from thread")]))
    out = []

    async def main():
        thread = threading.Thread(target=lambda: out.append(str(agent("hi"))))
        thread.start()
        await anyio.to_thread.run_sync(thread.join)

    asyncio.run(main())
    assert out == ["from thread\n"]


async def test_stream_async_reports_the_pause_with_an_interrupt_event():
    from strandslike.hooks import BeforeModelCallEvent

    def gate(event: BeforeModelCallEvent) -> None:
        event.interrupt("budget")

    agent = Agent(model=ScriptedModel([text("answer")]), hooks=[gate])
    events = [event async for event in agent.stream_async("go")]
    paused = [event["interrupt_event"] for event in events if "interrupt_event" in event]
    assert [i.name for i in paused[0]["interrupts"]] == ["budget"]
    assert events[-1]["result"].stop_reason == "interrupt"
