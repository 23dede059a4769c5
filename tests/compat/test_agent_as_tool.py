"""Issue 12, item 8: AgentResult as Strands renders and persists it, and agents used as tools (Agent.as_tool)."""

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from agent_tool_workers import build, child_argv, first_turns, make_delete_tool, resume_turns, runs

from strandslike import Agent, tool
from strandslike.agent import AgentResult
from strandslike.hooks import BeforeToolCallEvent
from strandslike.interrupt import Interrupt
from strandslike.models import ScriptedModel, text, tool_call, turn


def name_uuid(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_OID, name))


# -- AgentResult ---------------------------------------------------------------------------------------------


def test_str_includes_citation_text() -> None:
    message: Any = {
        "role": "assistant",
        "content": [
            {"text": "Intro."},
            {"citationsContent": {"citations": [{"title": "doc"}], "content": [{"text": "Cited."}, {"text": "More."}]}},
            {"toolUse": {"toolUseId": "t", "name": "x", "input": {}}},
        ],
    }
    assert str(AgentResult("end_turn", message)) == "Intro.\nCited.\nMore.\n"


def test_str_priority_interrupts_then_text() -> None:
    result = AgentResult(
        "interrupt", {"role": "assistant", "content": [{"text": "hidden"}]}, interrupts=[Interrupt("i", "n")]
    )
    assert str(result) == str([{"id": "i", "name": "n", "reason": None, "response": None}])


def test_to_dict_and_from_dict_round_trip_as_strands() -> None:
    message: Any = {"role": "assistant", "content": [{"reasoningContent": {"redactedContent": b"\x00secret"}}]}
    data = AgentResult("end_turn", message, state={"k": "v"}).to_dict()
    assert data == {
        "type": "agent_result",
        "message": {
            "role": "assistant",
            "content": [{"reasoningContent": {"redactedContent": {"__bytes_encoded__": True, "data": "AHNlY3JldA=="}}}],
        },
        "stop_reason": "end_turn",
        "checkpoint": None,
    }
    json.dumps(data)  # JSON-ready
    restored = AgentResult.from_dict(data)
    assert restored.message == message
    assert restored.stop_reason == "end_turn"
    assert restored.state == {}
    assert restored.metrics.cycle_count == 0


def test_an_interrupted_result_keeps_its_interrupts() -> None:
    interrupt = Interrupt("i", "approval", {"tool": "x"})
    data = AgentResult("interrupt", {"role": "assistant", "content": []}, interrupts=[interrupt]).to_dict()
    assert data["interrupts"] == [interrupt.to_dict()]
    assert AgentResult.from_dict(data).interrupts == [interrupt]


@pytest.mark.parametrize("data", [{"type": "multiagent_result"}, {}, {"type": None}])
def test_from_dict_refuses_other_types(data: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match=r"AgentResult\.from_dict: unexpected type"):
        AgentResult.from_dict(data)


# -- as_tool --------------------------------------------------------------------------------------------------


async def test_as_tool_spec_and_result() -> None:
    inner = Agent(model=ScriptedModel([text("Paris.")]), name="geo", description="Answers geography questions.")
    agent_tool = inner.as_tool()
    assert agent_tool.tool_name == "geo"
    assert agent_tool.tool_type == "agent"
    assert agent_tool.tool_spec["description"] == "Answers geography questions."
    assert agent_tool.tool_spec["inputSchema"]["json"]["required"] == ["input"]
    outer = Agent(
        model=ScriptedModel([tool_call("geo", input="Capital of France?"), text("It is Paris.")]), tools=[agent_tool]
    )
    result = await outer.invoke_async("Ask geo")
    assert str(result) == "It is Paris.\n"
    assert outer.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "Paris.\n"}]
    # The inner agent keeps its last run's conversation until its next call resets it (preserve_context=False).
    assert [m["role"] for m in inner.messages] == ["user", "assistant"]


async def test_preserve_context_false_resets_between_calls() -> None:
    inner = Agent(model=ScriptedModel([text("one"), text("two")]), name="helper", state={"count": 0})
    outer = Agent(
        model=ScriptedModel([tool_call("helper", input="a"), tool_call("helper", input="b"), text("done")]),
        tools=[inner.as_tool()],
    )
    await outer.invoke_async("go")
    assert [m["content"][0]["text"] for m in inner.model.requests[1].messages] == ["b"]
    assert [m["role"] for m in inner.messages] == ["user", "assistant"]


async def test_preserve_context_true_keeps_the_conversation() -> None:
    inner = Agent(model=ScriptedModel([text("one"), text("two")]), name="helper")
    outer = Agent(
        model=ScriptedModel([tool_call("helper", input="a"), tool_call("helper", input="b"), text("done")]),
        tools=[inner.as_tool(preserve_context=True)],
    )
    await outer.invoke_async("go")
    assert len(inner.model.requests[1].messages) == 3


def test_an_agent_in_tools_is_wrapped_and_names_default_to_the_agent() -> None:
    inner = Agent(model=ScriptedModel([]), name="researcher")
    outer = Agent(tools=[inner])
    assert outer.tool_names == ["researcher"]
    assert outer.tool_registry.registry["researcher"].agent is inner  # type: ignore[attr-defined]
    assert inner.as_tool(name="other").tool_name == "other"


def test_preserve_context_false_with_a_session_manager_is_refused(tmp_path: Path) -> None:
    from strandslike.session import FileSessionManager

    inner = Agent(model=ScriptedModel([]), session_manager=FileSessionManager("x", storage_dir=tmp_path))
    with pytest.raises(ValueError, match="preserve_context=False cannot be used"):
        inner.as_tool(name="inner")
    assert inner.as_tool(name="inner", preserve_context=True).tool_name == "inner"


async def test_delegate_ends_the_turn_with_the_inner_answer() -> None:
    inner = Agent(model=ScriptedModel([text("Your balance is 42.")]), name="billing", description="Billing.")
    model = ScriptedModel([tool_call("billing", input="balance?")])  # no second outer turn: none is needed
    outer = Agent(model=model, tools=[inner.as_tool(delegate=True)])
    assert (
        outer.tool_registry.registry["billing"].tool_spec["description"].endswith("the only tool called in the turn.")
    )
    result = await outer.invoke_async("What is my balance?")
    assert result.stop_reason == "end_turn"
    assert str(result) == "Your balance is 42.\n"
    assert model.calls == 1


async def test_delegate_mixed_with_other_tools_is_cancelled() -> None:
    @tool
    def other() -> str:
        """Other."""
        return "ran"

    inner = Agent(model=ScriptedModel([]), name="billing")
    model = ScriptedModel([turn(tool_call("billing", input="x"), tool_call("other")), text("ok")])
    outer = Agent(model=model, tools=[inner.as_tool(delegate=True), other])
    await outer.invoke_async("go")
    results = [b["toolResult"] for b in outer.messages[2]["content"]]
    assert all(
        r["status"] == "error" and "delegation tool must be the only" in r["content"][0]["text"] for r in results
    )


# -- interrupts through an agent used as a tool ----------------------------------------------------------------


async def test_an_inner_interrupt_reaches_the_outer_caller_and_resumes(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    outer, inner = build(
        tmp_path / "store", log, [*first_turns()[0], *resume_turns()[0]], [*first_turns()[1], *resume_turns()[1]]
    )
    paused = await outer.invoke_async("Clean up a.txt")
    assert paused.stop_reason == "interrupt"
    inner_id = f"v1:tool_call:inner-1:{name_uuid('approve-delete')}"
    (interrupt,) = paused.interrupts
    assert interrupt == Interrupt(f"v1:agent_as_tool:outer-1:{inner_id}", "approve-delete", {"path": "a.txt"})
    assert interrupt.message == "Delete a.txt?"
    assert interrupt.tool_use_id == "outer-1"
    assert runs(log) == []

    done = await outer.invoke_async([interrupt.resume("y")])
    assert done.stop_reason == "end_turn"
    assert str(done) == "All done.\n"
    assert runs(log) == [{"deleted": "a.txt"}]
    tool_result = outer.messages[2]["content"][0]["toolResult"]
    assert tool_result["content"] == [{"text": "a.txt is gone.\n"}]
    assert inner.model.calls == 2  # the inner agent's first turn was not asked again
    assert not outer._interrupt_state.activated


async def test_an_inner_hook_interrupt_is_relayed_too() -> None:
    @tool
    def launch() -> str:
        """Launch."""
        return "launched"

    def approve(event: BeforeToolCallEvent) -> None:
        if event.interrupt("approve-launch") != "go":
            event.cancel_tool = "not approved"

    inner = Agent(
        model=ScriptedModel([tool_call("launch", tool_use_id="i1"), text("Launched.")]),
        name="ops",
        tools=[launch],
        hooks=[approve],
    )
    outer = Agent(
        model=ScriptedModel([tool_call("ops", input="launch", tool_use_id="o1"), text("ok")]), tools=[inner.as_tool()]
    )
    paused = await outer.invoke_async("go")
    assert [i.id for i in paused.interrupts] == [
        f"v1:agent_as_tool:o1:v1:before_tool_call:i1:{name_uuid('approve-launch')}"
    ]
    done = await outer.invoke_async([paused.interrupts[0].resume("go")])
    assert done.stop_reason == "end_turn"
    assert inner.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "launched"}]


async def test_cancelling_the_relayed_interrupt_does_not_resume_the_inner_agent(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    outer, _ = build(tmp_path / "store", log, [*first_turns()[0], text("Cancelled.")], first_turns()[1])
    paused = await outer.invoke_async("Clean up a.txt")
    done = await outer.invoke_async([paused.interrupts[0].cancel()])
    assert done.stop_reason == "end_turn"
    assert outer.messages[2]["content"][0]["toolResult"]["status"] == "error"
    assert runs(log) == []


def test_the_resume_works_in_a_fresh_process_with_sessions(tmp_path: Path) -> None:
    storage, log = tmp_path / "store", tmp_path / "runs.log"

    def child(command: str, **extra: Any) -> dict[str, Any]:
        argv = child_argv(command, storage=str(storage), log=str(log), **extra)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    paused = child("pause")
    assert paused["stop_reason"] == "interrupt"
    inner_id = f"v1:tool_call:inner-1:{name_uuid('approve-delete')}"
    assert [i["id"] for i in paused["interrupts"]] == [f"v1:agent_as_tool:outer-1:{inner_id}"]
    assert runs(log) == []

    done = child("resume", answer="y")  # a new process: fresh outer and inner agents, only the outer's session
    assert done == {"stop_reason": "end_turn", "text": "All done.\n", "interrupts": []}
    assert runs(log) == [{"deleted": "a.txt"}]

    # The outer conversation on disk is complete; a third process sees the tool result and the answer.
    outer, _ = build(storage, log, [], [])
    assert [m["role"] for m in outer.messages] == ["user", "assistant", "user", "assistant"]
    assert outer.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "a.txt is gone.\n"}]
    assert not outer._interrupt_state.activated


def test_a_refusing_answer_in_a_fresh_process(tmp_path: Path) -> None:
    storage, log = tmp_path / "store", tmp_path / "runs.log"
    for command, extra in (("pause", {}), ("resume", {"answer": "n"})):
        argv = child_argv(command, storage=str(storage), log=str(log), **extra)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
    outer, _ = build(storage, log, [], [])
    assert outer.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "a.txt is gone.\n"}]
    assert runs(log) == []  # "n": the inner tool kept the file


def test_make_delete_tool_is_a_plain_tool(tmp_path: Path) -> None:
    assert make_delete_tool(tmp_path / "x").tool_name == "delete_file"
