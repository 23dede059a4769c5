from typing import Any

import pytest
from helpers import answer, answers

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import (
    AfterInvocationEvent,
    AfterToolCallEvent,
    AfterToolsEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    BeforeToolsEvent,
)
from strandslike.interrupt import (
    InterruptAlreadyAnsweredError,
    InvalidPayloadError,
    NotInterruptedError,
    PendingInterruptsError,
    UnknownInterruptError,
)
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.testing import EventRecorder
from strandslike.tools.executors import SequentialToolExecutor
from strandslike.types.exceptions import NotJSONSerializableError

RUNS: list[str] = []


@tool(context=True)
def ask(tool_context: ToolContext, topic: str) -> str:
    """Ask the user about a topic."""
    RUNS.append(f"ask:{topic}")
    reply = tool_context.interrupt(f"ask-{topic}", reason={"topic": topic})
    return f"{topic}={reply}"


@tool
def plain(x: int) -> int:
    """Return x."""
    RUNS.append(f"plain:{x}")
    return x


@pytest.fixture(autouse=True)
def _clear_runs():
    RUNS.clear()


def approval_hook(log: list[str] | None = None):
    def approve(event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "plain":
            return
        reply = event.interrupt("approve", reason={"input": event.tool_use["input"]})
        if log is not None:
            log.append(reply)
        if reply != "y":
            event.cancel_tool = "denied"

    return approve


async def test_hook_interrupt_pauses_and_resumes_without_calling_the_model_again():
    model = ScriptedModel([tool_call("plain", x=7, tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[plain], hooks=[approval_hook()])
    paused = await agent.invoke_async("go")
    assert paused.stop_reason == "interrupt"
    assert [i.name for i in paused.interrupts] == ["approve"]
    assert paused.interrupts[0].reason == {"input": {"x": 7}}
    assert paused.message["content"][0]["toolUse"]["toolUseId"] == "t1"
    assert agent.messages[-1]["role"] == "assistant"  # no tool result yet
    assert RUNS == []
    calls = model.calls
    resumed = await agent.invoke_async(answers(paused.interrupts, "y"))
    assert resumed.stop_reason == "end_turn"
    assert RUNS == ["plain:7"]
    assert model.calls == calls + 1  # only the final turn; the tool-use turn was not requested again


async def test_cancel_tool_after_denial_gives_an_error_result():
    agent = Agent(model=ScriptedModel([tool_call("plain", x=1), text("ok")]), tools=[plain], hooks=[approval_hook()])
    paused = await agent.invoke_async("go")
    await agent.invoke_async(answers(paused.interrupts, "n"))
    result = agent.messages[2]["content"][0]["toolResult"]
    assert result["status"] == "error"
    assert result["content"] == [{"text": "denied"}]
    assert RUNS == []


async def test_every_hook_runs_and_all_interrupts_return_together():
    ran = []

    def first(event: BeforeToolCallEvent) -> None:
        ran.append("first")
        event.interrupt("first")

    def second(event: BeforeToolCallEvent) -> None:
        ran.append("second")
        event.interrupt("second")

    agent = Agent(model=ScriptedModel([tool_call("plain", x=1), text("ok")]), tools=[plain], hooks=[first, second])
    paused = await agent.invoke_async("go")
    assert ran == ["first", "second"]
    assert [i.name for i in paused.interrupts] == ["first", "second"]


async def test_one_hook_can_interrupt_again_after_its_answer():
    def twice(event: BeforeToolCallEvent) -> None:
        event.interrupt("first")
        event.interrupt("second")

    agent = Agent(model=ScriptedModel([tool_call("plain", x=1), text("ok")]), tools=[plain], hooks=[twice])
    paused = await agent.invoke_async("go")
    assert [i.name for i in paused.interrupts] == ["first"]
    paused = await agent.invoke_async(answers(paused.interrupts, "a"))
    assert [i.name for i in paused.interrupts] == ["second"]
    done = await agent.invoke_async(answers(paused.interrupts, "b"))
    assert done.stop_reason == "end_turn"
    assert RUNS == ["plain:1"]


async def test_preemptive_response_does_not_pause():
    def hook(event: BeforeToolCallEvent) -> None:
        assert event.interrupt("auto", response="y") == "y"

    agent = Agent(model=ScriptedModel([tool_call("plain", x=1), text("ok")]), tools=[plain], hooks=[hook])
    assert (await agent.invoke_async("go")).stop_reason == "end_turn"


async def test_concurrent_tools_all_run_each_may_interrupt_and_completed_results_are_kept():
    log = EventRecorder(AfterToolCallEvent, AfterToolsEvent)
    model = ScriptedModel(
        [
            turn(
                tool_call("ask", topic="a", tool_use_id="t1"),
                tool_call("plain", x=5, tool_use_id="t2"),
                tool_call("ask", topic="b", tool_use_id="t3"),
            ),
            text("finished"),
        ]
    )
    agent = Agent(model=model, tools=[ask, plain], hooks=[log])
    paused = await agent.invoke_async("go")
    assert paused.stop_reason == "interrupt"
    assert sorted(i.name for i in paused.interrupts) == ["ask-a", "ask-b"]
    assert sorted(RUNS) == ["ask:a", "ask:b", "plain:5"]
    # AfterToolCallEvent fires only for the completed tool; AfterToolsEvent always fires.
    assert log.names == ["AfterToolCallEvent", "AfterToolsEvent"]
    assert agent._interrupt_state.pending_tool_execution.completed_tool_results[0]["toolUseId"] == "t2"

    RUNS.clear()
    calls = model.calls
    done = await agent.invoke_async(answers(paused.interrupts, "ok"))
    assert done.stop_reason == "end_turn"
    assert sorted(RUNS) == ["ask:a", "ask:b"]  # the completed tool did not run again
    assert model.calls == calls + 1
    ids = [block["toolResult"]["toolUseId"] for block in agent.messages[2]["content"]]
    assert ids == ["t1", "t2", "t3"]  # tool-use order, not completion order
    texts = [block["toolResult"]["content"][0]["text"] for block in agent.messages[2]["content"]]
    assert texts == ["a=ok", "5", "b=ok"]


async def test_partial_resume_reraises_the_unanswered_interrupt():
    model = ScriptedModel([turn(tool_call("ask", topic="a"), tool_call("ask", topic="b")), text("ok")])
    agent = Agent(model=model, tools=[ask])
    paused = await agent.invoke_async("go")
    first = next(i for i in paused.interrupts if i.name == "ask-a")
    again = await agent.invoke_async([answer(first, "yes")])
    assert [i.name for i in again.interrupts] == ["ask-b"]
    assert model.calls == 1
    done = await agent.invoke_async(answers(again.interrupts, "no"))
    assert done.stop_reason == "end_turn"


async def test_sequential_executor_stops_at_the_first_interrupt():
    model = ScriptedModel([turn(tool_call("ask", topic="a"), tool_call("plain", x=2)), text("ok")])
    agent = Agent(model=model, tools=[ask, plain], tool_executor=SequentialToolExecutor())
    paused = await agent.invoke_async("go")
    assert RUNS == ["ask:a"]
    await agent.invoke_async(answers(paused.interrupts, "y"))
    assert RUNS == ["ask:a", "ask:a", "plain:2"]


async def test_none_is_a_legitimate_answer():
    agent = Agent(model=ScriptedModel([tool_call("ask", topic="x"), text("ok")]), tools=[ask])
    paused = await agent.invoke_async("go")
    done = await agent.invoke_async(answers(paused.interrupts, None))
    assert done.stop_reason == "end_turn"
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "x=None"}]


async def test_new_prompt_while_interrupted_is_a_type_error_and_changes_nothing():
    agent = Agent(model=ScriptedModel([tool_call("ask", topic="x"), text("ok")]), tools=[ask])
    paused = await agent.invoke_async("go")
    before = list(agent.messages)
    with pytest.raises(TypeError, match="must resume from interrupt with list of interruptResponse's") as info:
        await agent.invoke_async("something else")
    assert isinstance(info.value, PendingInterruptsError)
    assert agent.messages == before
    assert (await agent.invoke_async(answers(paused.interrupts, "y"))).stop_reason == "end_turn"


async def test_unknown_id_is_a_key_error_and_nothing_is_half_applied():
    agent = Agent(
        model=ScriptedModel([turn(tool_call("ask", topic="a"), tool_call("ask", topic="b")), text("ok")]), tools=[ask]
    )
    paused = await agent.invoke_async("go")
    bad = [answer(paused.interrupts[0], "y"), {"interruptResponse": {"interruptId": "forged", "response": "y"}}]
    with pytest.raises(KeyError) as info:
        await agent.invoke_async(bad)
    assert isinstance(info.value, UnknownInterruptError)
    assert all(not i.answered for i in agent._interrupt_state.interrupts.values())
    assert (await agent.invoke_async(answers(paused.interrupts, "y"))).stop_reason == "end_turn"


async def test_answers_to_an_agent_that_is_not_interrupted_explain_sessions():
    agent = Agent(model=ScriptedModel([text("x")]))
    with pytest.raises(ValueError, match="use session management") as info:
        await agent.invoke_async([{"interruptResponse": {"interruptId": "x", "response": "y"}}])
    assert isinstance(info.value, NotInterruptedError)


async def test_changing_an_answered_interrupt_is_rejected():
    def twice(event: BeforeToolCallEvent) -> None:
        event.interrupt("first")
        event.interrupt("second")

    agent = Agent(model=ScriptedModel([tool_call("plain", x=1), text("ok")]), tools=[plain], hooks=[twice])
    first = (await agent.invoke_async("go")).interrupts[0]
    second = (await agent.invoke_async([answer(first, "a")])).interrupts[0]
    with pytest.raises(InterruptAlreadyAnsweredError):
        await agent.invoke_async([answer(first, "changed"), answer(second, "b")])
    assert agent._interrupt_state.activated
    assert (await agent.invoke_async([answer(second, "b")])).stop_reason == "end_turn"


async def test_non_json_response_is_refused():
    agent = Agent(model=ScriptedModel([tool_call("ask", topic="x"), text("ok")]), tools=[ask])
    paused = await agent.invoke_async("go")
    with pytest.raises(InvalidPayloadError, match="JSON-serializable") as info:
        await agent.invoke_async([answer(paused.interrupts[0], {1, 2})])
    assert info.value.code == "INVALID_PAYLOAD"
    assert (await agent.invoke_async(answers(paused.interrupts, "y"))).stop_reason == "end_turn"


async def test_non_json_reason_is_refused_when_raised():
    def hook(event: BeforeToolCallEvent) -> None:
        event.interrupt("bad", reason=object())

    agent = Agent(model=ScriptedModel([tool_call("plain", x=1)]), tools=[plain], hooks=[hook])
    with pytest.raises(NotJSONSerializableError, match="reason of interrupt 'bad'"):
        await agent.invoke_async("go")


async def test_failed_resume_run_stays_resumable_with_the_same_answers():
    attempts = []

    @tool(context=True)
    def flaky(tool_context: ToolContext) -> str:
        """Fails once after its approval."""
        reply = tool_context.interrupt("go-ahead")
        attempts.append(reply)
        return "ran"

    def fail_once(event: AfterToolCallEvent) -> None:
        if len(attempts) == 1:
            raise RuntimeError("transient")

    agent = Agent(model=ScriptedModel([tool_call("flaky"), text("ok")]), tools=[flaky], hooks=[fail_once])
    paused = await agent.invoke_async("go")
    with pytest.raises(RuntimeError, match="transient"):
        await agent.invoke_async(answers(paused.interrupts, "y"))
    assert agent._interrupt_state.activated
    done = await agent.invoke_async(answers(paused.interrupts, "y"))
    assert done.stop_reason == "end_turn"
    assert attempts == ["y", "y"]


async def test_before_tools_interrupt_stops_before_any_tool_without_after_tools():
    log = EventRecorder(AfterToolsEvent)

    def batch(event: BeforeToolsEvent) -> None:
        if event.interrupt("batch") != "y":
            event.cancel = "Batch cancelled by user"

    model = ScriptedModel([turn(tool_call("plain", x=1), tool_call("plain", x=2)), text("ok")])
    agent = Agent(model=model, tools=[plain], hooks=[batch, log])
    paused = await agent.invoke_async("go")
    assert [i.name for i in paused.interrupts] == ["batch"]
    assert RUNS == []
    assert log.names == []
    await agent.invoke_async(answers(paused.interrupts, "n"))
    texts = [b["toolResult"]["content"][0]["text"] for b in agent.messages[2]["content"]]
    assert texts == ["Batch cancelled by user"] * 2
    assert RUNS == []


async def test_before_model_call_is_interruptible_and_the_call_happens_on_resume():
    def gate(event: BeforeModelCallEvent) -> None:
        event.interrupt("budget", reason="costly call")

    model = ScriptedModel([text("answer")])
    agent = Agent(model=model, hooks=[gate])
    paused = await agent.invoke_async("go")
    assert paused.stop_reason == "interrupt"
    assert model.calls == 0
    done = await agent.invoke_async(answers(paused.interrupts, "ok"))
    assert str(done) == "answer\n"
    assert model.calls == 1


async def test_after_invocation_resume_can_answer_interrupts():
    def auto(event: AfterInvocationEvent) -> None:
        if event.result is not None and event.result.stop_reason == "interrupt":
            event.resume = answers(event.result.interrupts, "y")

    agent = Agent(
        model=ScriptedModel([tool_call("plain", x=3), text("ok")]), tools=[plain], hooks=[approval_hook(), auto]
    )
    result = await agent.invoke_async("go")
    assert result.stop_reason == "end_turn"
    assert RUNS == ["plain:3"]


async def test_tool_interrupt_from_a_method_tool_and_interrupt_ids_are_deterministic():
    class DeleteTool:
        def __init__(self, app_name: str) -> None:
            self.app_name = app_name

        @tool(context=True)
        def delete_files(self, tool_context: ToolContext, paths: list[str]) -> bool:
            """Delete files."""
            approval = tool_context.interrupt(f"{self.app_name}-approval", reason={"paths": paths})
            return approval.lower() == "y"

    def build() -> Agent:
        return Agent(
            model=ScriptedModel([tool_call("delete_files", paths=["a"], tool_use_id="t1"), text("ok")]),
            tools=[DeleteTool("myapp").delete_files],
        )

    first = (await build().invoke_async("go")).interrupts[0]
    second = (await build().invoke_async("go")).interrupts[0]
    assert first.id == second.id
    assert first.id.startswith("v1:tool_call:t1:")


async def test_after_tools_end_turn_stops_without_a_model_call():
    def end(event: AfterToolsEvent) -> None:
        event.end_turn = "enough"

    model = ScriptedModel([tool_call("plain", x=1), text("never")])
    agent = Agent(model=model, tools=[plain], hooks=[end])
    result = await agent.invoke_async("go")
    assert str(result) == "enough\n"
    assert model.calls == 1


async def test_result_str_lists_interrupts():
    agent = Agent(model=ScriptedModel([tool_call("ask", topic="x")]), tools=[ask])
    paused = await agent.invoke_async("go")
    rendered: Any = str(paused)
    assert "ask-x" in rendered
    assert paused.interrupts[0].id in rendered
