"""The interrupts guide's BeforeToolsEvent batch approval, written in Python.

The guide shows this example in TypeScript only; the hook below is its line-by-line Python equivalent
(``event.message["content"]`` blocks, ``event.interrupt(name, reason=...)``, ``event.cancel``), registered with
``agent.add_hook`` as in Strands 1.62 (verified against the real strands-agents).
"""

import json
import uuid
from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.hooks import AfterToolsEvent, BeforeToolCallEvent, BeforeToolsEvent
from strandslike.models import ScriptedModel, text, tool_call, turn

RUNS: list[str] = []

# ---------------------------------------------------------------- guide code (Python equivalent) ----


@tool
def delete_files(paths: list[str]) -> bool:
    """Delete files at the given paths."""
    RUNS.append(f"delete:{','.join(paths)}")
    return True


@tool
def inspect_files(paths: list[str]) -> dict[str, Any]:
    """Inspect files at the given paths."""
    RUNS.append(f"inspect:{','.join(paths)}")
    return {}


def batch_approval(event: BeforeToolsEvent) -> None:
    dangerous_tools = [
        block["toolUse"]
        for block in event.message["content"]
        if "toolUse" in block and block["toolUse"]["name"] in ["delete_files"]
    ]

    if len(dangerous_tools) > 0:
        response = event.interrupt("batch_approval", reason=f"Approve {len(dangerous_tools)} dangerous tool calls?")
        if not response["approved"]:
            event.cancel = "Batch cancelled by user"


def make_agent(model: ScriptedModel) -> Agent:
    agent = Agent(model=model, tools=[delete_files, inspect_files], callback_handler=None)
    agent.add_hook(batch_approval)
    return agent


def run_until_done(agent: Agent, prompt: str, approved: bool) -> Any:
    result = agent(prompt)
    while result.stop_reason == "interrupt":
        responses = [
            # In a real app, collect user input here
            {"interruptResponse": {"interruptId": interrupt.id, "response": {"approved": approved}}}
            for interrupt in result.interrupts
        ]
        result = agent(responses)
    return result


# ------------------------------------------------------------------------------------------ tests ----

BATCH_ID = f"v1:before_tools:{uuid.uuid5(uuid.NAMESPACE_OID, 'batch_approval')}"


@pytest.fixture(autouse=True)
def _reset_runs():
    RUNS.clear()


def batch_model() -> ScriptedModel:
    return ScriptedModel(
        [
            turn(
                tool_call("delete_files", tool_use_id="d1", paths=["a/b/c.txt"]),
                tool_call("inspect_files", tool_use_id="i1", paths=["x.txt"]),
                tool_call("delete_files", tool_use_id="d2", paths=["d/e/f.txt"]),
            ),
            text("Batch handled."),
        ]
    )


class AfterToolsLog:
    def __init__(self, agent: Agent) -> None:
        self.messages: list[Any] = []
        agent.add_hook(self.record, AfterToolsEvent)

    def record(self, event: AfterToolsEvent) -> None:
        self.messages.append(json.loads(json.dumps(event.message)))


def test_batch_interrupt_pauses_before_any_tool_runs():
    model = batch_model()
    agent = make_agent(model)
    after_tools = AfterToolsLog(agent)
    tool_calls: list[str] = []
    agent.add_hook(lambda event: tool_calls.append(event.tool_use["toolUseId"]), BeforeToolCallEvent)

    result = agent("Clean up")

    assert result.stop_reason == "interrupt"
    assert [(i.name, i.reason, i.id) for i in result.interrupts] == [
        ("batch_approval", "Approve 2 dangerous tool calls?", BATCH_ID)
    ]
    assert RUNS == []
    assert tool_calls == []  # not even BeforeToolCallEvent fired
    assert after_tools.messages == []  # as in Strands, a BeforeToolsEvent interrupt does not fire AfterToolsEvent
    assert result.message is agent.messages[-1]
    assert [block["toolUse"]["toolUseId"] for block in result.message["content"]] == ["d1", "i1", "d2"]
    json.dumps(result.message)


def test_batch_approved_runs_every_tool_once():
    model = batch_model()
    agent = make_agent(model)
    after_tools = AfterToolsLog(agent)

    result = run_until_done(agent, "Clean up", approved=True)

    assert result.stop_reason == "end_turn"
    assert result.message == {"role": "assistant", "content": [{"text": "Batch handled."}]}
    json.dumps(result.message)
    assert sorted(RUNS) == ["delete:a/b/c.txt", "delete:d/e/f.txt", "inspect:x.txt"]
    assert len(after_tools.messages) == 1
    results = [block["toolResult"] for block in agent.messages[2]["content"]]
    assert [(r["toolUseId"], r["status"]) for r in results] == [("d1", "success"), ("i1", "success"), ("d2", "success")]
    assert model.calls == 2


def test_batch_denied_cancels_the_whole_batch_and_after_tools_still_fires():
    model = batch_model()
    agent = make_agent(model)
    after_tools = AfterToolsLog(agent)

    result = run_until_done(agent, "Clean up", approved=False)

    assert result.stop_reason == "end_turn"
    assert result.message == {"role": "assistant", "content": [{"text": "Batch handled."}]}
    assert RUNS == []  # cancelling the batch cancels inspect_files too
    expected = {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": tid, "status": "error", "content": [{"text": "Batch cancelled by user"}]}}
            for tid in ("d1", "i1", "d2")
        ],
    }
    assert agent.messages[2] == expected
    assert after_tools.messages == [expected]
    assert model.calls == 2


def test_batch_without_dangerous_tools_is_not_interrupted():
    model = ScriptedModel([tool_call("inspect_files", tool_use_id="i1", paths=["x.txt"]), text("Looked.")])
    agent = make_agent(model)

    result = agent("Look")

    assert result.stop_reason == "end_turn"
    assert RUNS == ["inspect:x.txt"]


def test_a_later_batch_asks_again():
    """BeforeToolsEvent ids have no batch component; each batch must still get its own question."""
    model = ScriptedModel(
        [
            tool_call("delete_files", tool_use_id="d1", paths=["a"]),
            tool_call("delete_files", tool_use_id="d2", paths=["b"]),
            text("Done."),
        ]
    )
    agent = make_agent(model)

    first = agent("go")
    assert first.stop_reason == "interrupt"
    second = agent([{"interruptResponse": {"interruptId": first.interrupts[0].id, "response": {"approved": True}}}])

    assert second.stop_reason == "interrupt"
    assert second.interrupts[0].id == BATCH_ID
    assert RUNS == ["delete:a"]
    final = agent([{"interruptResponse": {"interruptId": BATCH_ID, "response": {"approved": False}}}])
    assert final.stop_reason == "end_turn"
    assert RUNS == ["delete:a"]
    assert agent.messages[4]["content"][0]["toolResult"]["content"] == [{"text": "Batch cancelled by user"}]


def test_batch_approval_then_a_tool_interrupt_in_the_same_batch():
    """The batch answer is kept while the batch's tools interrupt in turn (verified against Strands 1.62)."""
    from strandslike import ToolContext

    @tool(context=True)
    def delete_files(tool_context: ToolContext, paths: list[str]) -> bool:
        """Delete files at the given paths, after a per-call confirmation."""
        RUNS.append("delete:start")
        if tool_context.interrupt("myapp-approval", reason={"paths": paths}).lower() != "y":
            return False
        RUNS.append("delete:done")
        return True

    model = ScriptedModel([tool_call("delete_files", tool_use_id="d1", paths=["a"]), text("Done.")])
    agent = Agent(model=model, tools=[delete_files], callback_handler=None)
    agent.add_hook(batch_approval)

    first = agent("go")
    assert [i.name for i in first.interrupts] == ["batch_approval"]
    second = agent([{"interruptResponse": {"interruptId": first.interrupts[0].id, "response": {"approved": True}}}])
    assert [i.name for i in second.interrupts] == ["myapp-approval"]
    third = agent([{"interruptResponse": {"interruptId": second.interrupts[0].id, "response": "y"}}])

    assert third.stop_reason == "end_turn"
    assert third.message == {"role": "assistant", "content": [{"text": "Done."}]}
    assert RUNS == ["delete:start", "delete:start", "delete:done"]
    assert model.calls == 2
