"""Resume actions and their builders (issue 5, point 2): resume, respond, restart (with and without edits), cancel."""

from typing import Any

import pytest
from helpers import answer
from pydantic import BaseModel

from strandslike import Agent, InvalidPayloadError, ToolContext, tool
from strandslike.hooks import (
    AfterNodeCallEvent,
    AfterToolCallEvent,
    BeforeModelCallEvent,
    BeforeNodeCallEvent,
    BeforeToolCallEvent,
    BeforeToolsEvent,
    HookProvider,
    HookRegistry,
)
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.multiagent import GraphBuilder, Status

RUNS: list[Any] = []


@pytest.fixture(autouse=True)
def _clear_runs():
    RUNS.clear()


@tool
def delete_files(paths: list[str]) -> str:
    """Delete files.

    Args:
        paths: The files to delete.
    """
    RUNS.append(("delete_files", paths))
    return f"deleted {len(paths)}"


@tool(context=True)
def transfer(tool_context: ToolContext, to: str, amount: int) -> str:
    """Transfer money.

    Args:
        to: The account.
        amount: The amount.
    """
    RUNS.append(
        {
            "input": {"to": to, "amount": amount},
            "is_resumed": tool_context.is_resumed,
            "resumed_metadata": tool_context.resumed_metadata,
            "original_input": tool_context.original_input,
        }
    )
    reply = tool_context.interrupt("confirm", reason={"to": to, "amount": amount}, allow_edits=True)
    return f"sent {amount} to {to} ({reply})"


def approval_hook(*, allow_edits: bool = False, seen: list[Any] | None = None):
    """Guards delete_files behind an interrupt; records the input it sees every time it runs."""

    def approve(event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "delete_files":
            return
        if seen is not None:
            seen.append(event.tool_use["input"])
        reply = event.interrupt("approval", reason=event.tool_use["input"], allow_edits=allow_edits)
        if reply not in ("y", None) and not isinstance(reply, dict):
            event.cancel_tool = "denied"

    return approve


class AfterCalls(HookProvider):
    def __init__(self) -> None:
        self.events: list[AfterToolCallEvent] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(AfterToolCallEvent, self.events.append)


def tool_result(agent: Agent, index: int = 2) -> dict[str, Any]:
    [block] = agent.messages[index]["content"]
    return block["toolResult"]


def last_request_results(model: ScriptedModel) -> list[dict[str, Any]]:
    return [block["toolResult"] for block in model.requests[-1].messages[-1]["content"] if "toolResult" in block]


# -- resume -------------------------------------------------------------------------------------------------------


async def test_resume_builder_gives_the_value_to_interrupt():
    seen: list[Any] = []
    model = ScriptedModel([tool_call("delete_files", paths=["a"], tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[delete_files], hooks=[approval_hook(seen=seen)])
    paused = await agent.invoke_async("go")
    [interrupt] = paused.interrupts
    block = interrupt.resume("y")
    assert block["interruptResponse"]["interruptId"] == interrupt.id
    assert block["interruptResponse"]["response"] == "y"
    assert block["interruptResponse"].get("action", "resume") == "resume"

    done = await agent.invoke_async([block])
    assert done.stop_reason == "end_turn"
    assert RUNS == [("delete_files", ["a"])]
    assert tool_result(agent)["content"] == [{"text": "deleted 1"}]


async def test_resume_with_a_plain_strands_block_still_works():
    model = ScriptedModel([tool_call("delete_files", paths=["a"]), text("done")])
    agent = Agent(model=model, tools=[delete_files], hooks=[approval_hook()])
    paused = await agent.invoke_async("go")
    done = await agent.invoke_async([{"interruptResponse": {"interruptId": paused.interrupts[0].id, "response": "n"}}])
    assert done.stop_reason == "end_turn"
    assert RUNS == []
    assert tool_result(agent) == {"toolUseId": "tooluse_1", "status": "error", "content": [{"text": "denied"}]}


# -- respond ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "content"),
    [
        ({"approved": True, "approver": "alex"}, [{"json": {"approved": True, "approver": "alex"}}]),
        ("handled elsewhere", [{"text": "handled elsewhere"}]),
    ],
)
async def test_respond_from_a_hook_interrupt_is_the_tool_result_and_the_tool_does_not_run(output, content):
    after = AfterCalls()
    model = ScriptedModel([tool_call("delete_files", paths=["a"], tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[delete_files], hooks=[approval_hook(), after])
    paused = await agent.invoke_async("go")
    [interrupt] = paused.interrupts
    assert interrupt.respond(output)["interruptResponse"]["action"] == "respond"

    done = await agent.invoke_async([interrupt.respond(output)])

    assert done.stop_reason == "end_turn"
    assert RUNS == []  # the tool did not run
    expected = {"toolUseId": "t1", "status": "success", "content": content}
    assert tool_result(agent) == expected
    assert last_request_results(model) == [expected]  # the model read the given output
    [event] = after.events
    assert event.result == expected
    assert event.tool_use["toolUseId"] == "t1"


async def test_respond_to_a_tool_interrupt_skips_the_tool():
    after = AfterCalls()
    model = ScriptedModel([tool_call("transfer", to="robin", amount=50, tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[transfer], hooks=[after])
    paused = await agent.invoke_async("go")
    assert len(RUNS) == 1
    done = await agent.invoke_async([paused.interrupts[0].respond({"status": "approved offline"})])
    assert done.stop_reason == "end_turn"
    assert len(RUNS) == 1  # not run again
    assert tool_result(agent)["content"] == [{"json": {"status": "approved offline"}}]
    assert [event.result["content"] for event in after.events] == [[{"json": {"status": "approved offline"}}]]


async def test_respond_with_a_full_tool_result_keeps_its_status():
    model = ScriptedModel([tool_call("delete_files", paths=["a"], tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[delete_files], hooks=[approval_hook()])
    paused = await agent.invoke_async("go")
    output = {"status": "error", "content": [{"text": "quota exceeded"}]}
    await agent.invoke_async([paused.interrupts[0].respond(output)])
    assert tool_result(agent) == {"toolUseId": "t1", "status": "error", "content": [{"text": "quota exceeded"}]}
    assert RUNS == []


async def test_after_tool_call_hook_can_rewrite_a_responded_result():
    def rewrite(event: AfterToolCallEvent) -> None:
        event.result = {**event.result, "content": [{"text": "rewritten"}]}

    model = ScriptedModel([tool_call("delete_files", paths=["a"], tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[delete_files], hooks=[approval_hook(), rewrite])
    paused = await agent.invoke_async("go")
    await agent.invoke_async([paused.interrupts[0].respond("given")])
    assert tool_result(agent)["content"] == [{"text": "rewritten"}]


# -- restart ------------------------------------------------------------------------------------------------------


async def test_restart_without_input_runs_the_tool_again_with_resumed_metadata():
    model = ScriptedModel([tool_call("transfer", to="robin", amount=50, tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[transfer])
    paused = await agent.invoke_async("go")
    [interrupt] = paused.interrupts
    block = interrupt.restart(metadata={"approved_by": "alex"})
    assert block["interruptResponse"]["action"] == "restart"
    assert "input" not in block["interruptResponse"]

    done = await agent.invoke_async([block])

    assert done.stop_reason == "end_turn"
    assert RUNS == [
        {"input": {"to": "robin", "amount": 50}, "is_resumed": False, "resumed_metadata": None, "original_input": None},
        {
            "input": {"to": "robin", "amount": 50},
            "is_resumed": True,
            "resumed_metadata": {"approved_by": "alex"},
            "original_input": RUNS[1]["original_input"],  # checked in the next test
        },
    ]
    result = tool_result(agent)
    # interrupt() in the restarted call returns the restart's response (None here), never its metadata.
    assert result == {"toolUseId": "t1", "status": "success", "content": [{"text": "sent 50 to robin (None)"}]}
    assert model.calls == 2


async def test_restart_response_is_what_interrupt_returns_in_the_restarted_call():
    model = ScriptedModel([tool_call("transfer", to="robin", amount=50, tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[transfer])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    block = interrupt.restart(input={"to": "robin", "amount": 40}, metadata={"by": "alex"}, response="approved")
    assert block["interruptResponse"]["response"] == "approved"
    assert block["interruptResponse"]["metadata"] == {"by": "alex"}

    await agent.invoke_async([block])

    assert RUNS[-1]["resumed_metadata"] == {"by": "alex"}
    assert {"text": "sent 40 to robin (approved)"} in tool_result(agent)["content"]


class Approval(BaseModel):
    approved: bool
    note: str = ""


@tool(context=True)
def typed_transfer(tool_context: ToolContext, to: str, amount: float) -> str:
    """Transfer money after a typed approval.

    Args:
        to: The account.
        amount: The amount.
    """
    decision = tool_context.interrupt(
        "approve-transfer", reason={"to": to, "amount": amount}, response_type=Approval, allow_edits=True
    )
    RUNS.append({"decision": decision, "metadata": tool_context.resumed_metadata, "input": (to, amount)})
    return f"sent {amount} to {to}" if decision.approved else "not sent"


async def test_a_typed_interrupt_restarted_with_edits_gets_the_typed_response_not_the_metadata():
    model = ScriptedModel([tool_call("typed_transfer", to="Robin", amount=50, tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[typed_transfer])
    [interrupt] = (await agent.invoke_async("pay Robin 50")).interrupts

    done = await agent.invoke_async(
        [interrupt.restart(input={"to": "Robin", "amount": 40}, metadata={"by": "alex"}, response={"approved": True})]
    )

    assert done.stop_reason == "end_turn"
    [run] = RUNS
    assert run["decision"] == Approval(approved=True)  # the typed answer, validated into the response type
    assert run["metadata"] == {"by": "alex"}  # the metadata stays context, on the tool context only
    assert run["input"] == ("Robin", 40)
    assert {"text": "sent 40.0 to Robin"} in tool_result(agent)["content"]


@pytest.mark.parametrize("metadata", [None, {"approved": True}])
async def test_a_typed_interrupt_restarted_without_a_fitting_response_is_refused_and_stays_resumable(metadata):
    model = ScriptedModel([tool_call("typed_transfer", to="Robin", amount=50, tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[typed_transfer])
    [interrupt] = (await agent.invoke_async("pay Robin 50")).interrupts

    for response in (None, {"approved": "maybe"}):
        with pytest.raises(InvalidPayloadError, match=r"restart answers the interrupt too") as info:
            await agent.invoke_async(
                [interrupt.restart(input={"to": "Robin", "amount": 40}, metadata=metadata, response=response)]
            )
        assert info.value.code == "INVALID_PAYLOAD"
    assert RUNS == []
    assert agent._interrupt_state.activated

    await agent.invoke_async([interrupt.restart(input={"to": "Robin", "amount": 40}, response={"approved": False})])
    assert RUNS[0]["decision"] == Approval(approved=False)
    assert {"text": "not sent"} in tool_result(agent)["content"]


async def test_restart_without_input_leaves_original_input_unset():
    model = ScriptedModel([tool_call("transfer", to="robin", amount=50, tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[transfer])
    paused = await agent.invoke_async("go")
    await agent.invoke_async([paused.interrupts[0].restart()])
    assert RUNS[-1]["is_resumed"] is True
    assert RUNS[-1]["original_input"] is None


async def test_restarted_tool_can_interrupt_again_under_a_new_name_and_then_be_resumed():
    calls: list[tuple[bool, Any]] = []

    @tool(context=True)
    def deploy(tool_context: ToolContext, env: str) -> str:
        """Deploy."""
        calls.append((tool_context.is_resumed, tool_context.resumed_metadata))
        if not tool_context.is_resumed:
            tool_context.interrupt("approve", reason={"env": env})
        code = tool_context.interrupt("otp", reason="enter the one-time code", response_type=int)
        return f"deployed {env} with {code}"

    model = ScriptedModel([tool_call("deploy", env="prod", tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[deploy])
    first = await agent.invoke_async("go")
    assert [i.name for i in first.interrupts] == ["approve"]

    second = await agent.invoke_async([first.interrupts[0].restart(metadata={"ok": True})])
    assert second.stop_reason == "interrupt"
    assert [i.name for i in second.interrupts] == ["otp"]
    assert second.interrupts[0].tool_use_id == "t1"
    assert agent._interrupt_state.activated

    done = await agent.invoke_async([second.interrupts[0].resume(123456)])
    assert done.stop_reason == "end_turn"
    assert calls == [(False, None), (True, {"ok": True}), (True, {"ok": True})]
    assert tool_result(agent)["content"] == [{"text": "deployed prod with 123456"}]
    assert model.calls == 2


async def test_restart_with_edited_input_runs_the_edited_call_and_keeps_the_original():
    model = ScriptedModel([tool_call("transfer", to="robin", amount=500, tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[transfer])
    paused = await agent.invoke_async("go")
    [interrupt] = paused.interrupts
    block = interrupt.restart(input={"to": "robin", "amount": 100}, metadata={"lowered": True})
    assert block["interruptResponse"]["input"] == {"to": "robin", "amount": 100}

    await agent.invoke_async([block])

    assert RUNS[-1] == {
        "input": {"to": "robin", "amount": 100},
        "is_resumed": True,
        "resumed_metadata": {"lowered": True},
        "original_input": {"to": "robin", "amount": 500},
    }
    result = tool_result(agent)
    assert result["status"] == "success"
    assert {"text": "sent 100 to robin (None)"} in result["content"]  # no response given: interrupt() returns None
    # The model is told the call ran with other input than it asked for.
    assert any("edited" in block.get("text", "") for block in result["content"])
    # The assistant message keeps the model's own call.
    assert agent.messages[1]["content"][0]["toolUse"]["input"] == {"to": "robin", "amount": 500}


async def test_edited_input_goes_back_through_before_tool_call_hooks():
    seen: list[Any] = []
    other: list[Any] = []

    def observer(event: BeforeToolCallEvent) -> None:
        other.append(event.tool_use["input"])

    model = ScriptedModel([tool_call("delete_files", paths=["a", "b"], tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[delete_files], hooks=[approval_hook(allow_edits=True, seen=seen), observer])
    paused = await agent.invoke_async("go")
    [interrupt] = paused.interrupts
    assert interrupt.tool_use_id == "t1"

    await agent.invoke_async([interrupt.restart(input={"paths": ["a"]})])

    assert seen == [{"paths": ["a", "b"]}, {"paths": ["a"]}]  # the approval hook saw what really runs
    assert other == [{"paths": ["a", "b"]}, {"paths": ["a"]}]
    assert RUNS == [("delete_files", ["a"])]


async def test_a_hook_can_refuse_edited_input_it_sees():
    def guard(event: BeforeToolCallEvent) -> None:
        event.interrupt("approval", reason=event.tool_use["input"], allow_edits=True)
        if "/etc/passwd" in event.tool_use["input"]["paths"]:
            event.cancel_tool = "refused: protected path"

    model = ScriptedModel([tool_call("delete_files", paths=["a"], tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[delete_files], hooks=[guard])
    paused = await agent.invoke_async("go")
    await agent.invoke_async([paused.interrupts[0].restart(input={"paths": ["/etc/passwd"]})])
    assert RUNS == []
    result = tool_result(agent)
    assert result["status"] == "error"
    assert any("refused: protected path" in block.get("text", "") for block in result["content"])


# -- cancel -------------------------------------------------------------------------------------------------------


async def test_cancel_of_a_hook_interrupt_does_not_run_the_tool_and_the_model_sees_a_cancelled_result():
    after = AfterCalls()
    model = ScriptedModel([tool_call("delete_files", paths=["a"], tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[delete_files], hooks=[approval_hook(), after])
    paused = await agent.invoke_async("go")
    [interrupt] = paused.interrupts
    block = interrupt.cancel()
    assert block["interruptResponse"]["action"] == "cancel"

    done = await agent.invoke_async([block])

    assert done.stop_reason == "end_turn"
    assert RUNS == []
    expected = {"toolUseId": "t1", "status": "error", "content": [{"text": "Tool call cancelled by user"}]}
    assert tool_result(agent) == expected
    assert last_request_results(model) == [expected]
    [event] = after.events
    assert event.cancel_message == "Tool call cancelled by user"
    assert event.result == expected


async def test_cancel_of_a_tool_interrupt_does_not_run_the_tool_again():
    model = ScriptedModel([tool_call("transfer", to="robin", amount=5, tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[transfer])
    paused = await agent.invoke_async("go")
    await agent.invoke_async([paused.interrupts[0].cancel()])
    assert len(RUNS) == 1
    assert tool_result(agent) == {
        "toolUseId": "t1",
        "status": "error",
        "content": [{"text": "Tool call cancelled by user"}],
    }


async def test_cancel_one_of_two_concurrent_tool_interrupts_keeps_the_other():
    model = ScriptedModel(
        [
            turn(
                tool_call("delete_files", paths=["a"], tool_use_id="t1"),
                tool_call("delete_files", paths=["b"], tool_use_id="t2"),
            ),
            text("done"),
        ]
    )
    agent = Agent(model=model, tools=[delete_files], hooks=[approval_hook()])
    paused = await agent.invoke_async("go")
    by_tool = {i.tool_use_id: i for i in paused.interrupts}
    await agent.invoke_async([by_tool["t1"].cancel(), by_tool["t2"].resume("y")])
    results = agent.messages[2]["content"]
    assert [r["toolResult"]["toolUseId"] for r in results] == ["t1", "t2"]
    assert results[0]["toolResult"]["status"] == "error"
    assert results[1]["toolResult"]["content"] == [{"text": "deleted 1"}]
    assert RUNS == [("delete_files", ["b"])]


async def test_cancel_of_a_before_tools_interrupt_cancels_the_batch():
    def batch(event: BeforeToolsEvent) -> None:
        event.interrupt("batch-approval", reason=len(event.message["content"]))

    model = ScriptedModel(
        [
            turn(
                tool_call("delete_files", paths=["a"], tool_use_id="t1"),
                tool_call("delete_files", paths=["b"], tool_use_id="t2"),
            ),
            text("done"),
        ]
    )
    agent = Agent(model=model, tools=[delete_files], hooks=[batch])
    paused = await agent.invoke_async("go")
    [interrupt] = paused.interrupts
    assert interrupt.tool_use_id is None

    done = await agent.invoke_async([interrupt.cancel()])

    assert done.stop_reason == "end_turn"
    assert RUNS == []
    results = [block["toolResult"] for block in agent.messages[2]["content"]]
    assert [(r["toolUseId"], r["status"]) for r in results] == [("t1", "error"), ("t2", "error")]
    assert all("cancelled by user" in r["content"][0]["text"] for r in results)
    assert model.calls == 2


async def test_cancel_of_a_before_model_call_interrupt_ends_the_turn_without_calling_the_model():
    def gate(event: BeforeModelCallEvent) -> None:
        event.interrupt("budget", reason="the next call costs money")

    model = ScriptedModel([text("never")])
    agent = Agent(model=model, hooks=[gate])
    paused = await agent.invoke_async("go")
    done = await agent.invoke_async([paused.interrupts[0].cancel()])
    assert done.stop_reason == "end_turn"
    assert model.calls == 0
    assert "cancelled by user" in done.message["content"][0]["text"]
    assert agent.messages[-1] is done.message or agent.messages[-1] == done.message
    assert not agent._interrupt_state.activated


class NodeGate(HookProvider):
    def __init__(self) -> None:
        self.after: list[str] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.gate)
        registry.add_callback(AfterNodeCallEvent, lambda event: self.after.append(event.node_id))

    def gate(self, event: BeforeNodeCallEvent) -> None:
        if event.node_id == "worker":
            event.interrupt("run-node", reason={"node": event.node_id})


async def test_cancel_of_a_before_node_call_interrupt_fails_the_node():
    model = ScriptedModel([text("never")])
    worker = Agent(name="worker", model=model)
    builder = GraphBuilder()
    builder.add_node(worker, "worker")
    gate = NodeGate()
    builder.set_hook_providers([gate])
    graph = builder.build()

    paused = await graph.invoke_async("task")
    assert paused.status == Status.INTERRUPTED
    [interrupt] = paused.interrupts

    done = await graph.invoke_async([interrupt.cancel()])

    assert done.status == Status.FAILED
    node = done.results["worker"]
    assert node.status == Status.FAILED
    assert "cancelled by user" in str(node.result)
    assert model.calls == 0
    assert gate.after == ["worker"]


async def test_cancel_builder_block_shape():
    model = ScriptedModel([tool_call("delete_files", paths=["a"]), text("done")])
    agent = Agent(model=model, tools=[delete_files], hooks=[approval_hook()])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    block = interrupt.cancel()["interruptResponse"]
    assert block["interruptId"] == interrupt.id
    assert block["response"] is None
    assert "input" not in block
    # Also accepted as a plain hand-built block.
    await agent.invoke_async(
        [{"interruptResponse": {"interruptId": interrupt.id, "response": None, "action": "cancel"}}]
    )
    assert RUNS == []
    assert answer(interrupt, None)["interruptResponse"].keys() == {"interruptId", "response"}


async def test_a_hooks_typed_question_is_answered_by_a_restart_without_a_response():
    """A hook asks whether the call may run; restarting the call says yes, so no typed answer is needed."""
    seen: list[Any] = []

    def guard(event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] == "delete_files":
            seen.append(event.interrupt("approval", response_type=Approval, allow_edits=True))

    model = ScriptedModel([tool_call("delete_files", paths=["a", "b"], tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[delete_files], hooks=[guard])
    [interrupt] = (await agent.invoke_async("go")).interrupts

    done = await agent.invoke_async([interrupt.restart(input={"paths": ["a"]}, metadata={"by": "alex"})])

    assert done.stop_reason == "end_turn"
    assert seen == [None]  # the restart answered without a response: None, never the metadata
    assert RUNS == [("delete_files", ["a"])]


async def test_a_hooks_typed_question_checks_a_restart_response_when_one_is_given():
    seen: list[Any] = []

    def guard(event: BeforeToolCallEvent) -> None:
        seen.append(event.interrupt("approval", response_type=Approval, allow_edits=True))

    model = ScriptedModel([tool_call("delete_files", paths=["a"], tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[delete_files], hooks=[guard])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    with pytest.raises(InvalidPayloadError):
        await agent.invoke_async([interrupt.restart(response={"approved": "perhaps"})])
    assert RUNS == []
    await agent.invoke_async([interrupt.restart(response={"approved": True, "note": "ok"})])
    assert seen == [Approval(approved=True, note="ok")]
