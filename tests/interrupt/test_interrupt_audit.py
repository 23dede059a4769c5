"""The audit trail (issue 5, point 4): raised → answered → outcome, kept with the session across restarts."""

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import BeforeModelCallEvent, BeforeToolCallEvent, BeforeToolsEvent
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.session import FileSessionManager

RUNS: list[Any] = []
SESSION = "audit"


@pytest.fixture(autouse=True)
def _clear_runs():
    RUNS.clear()


@tool
def delete_files(paths: list[str]) -> str:
    """Delete files.

    Args:
        paths: The files to delete.
    """
    RUNS.append(paths)
    return f"deleted {len(paths)}"


@tool(context=True)
def pay(tool_context: ToolContext, amount: int) -> str:
    """Pay.

    Args:
        amount: The amount.
    """
    RUNS.append(("pay", amount))
    tool_context.interrupt("confirm", reason={"amount": amount})
    return f"paid {amount}"


def approve_deletes(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "delete_files":
        if event.interrupt("approval", reason={"paths": event.tool_use["input"]["paths"]}) != "y":
            event.cancel_tool = "denied"


def three_calls() -> ScriptedModel:
    return ScriptedModel(
        [
            turn(
                tool_call("delete_files", paths=["a"], tool_use_id="t1"),
                tool_call("delete_files", paths=["b"], tool_use_id="t2"),
                tool_call("pay", amount=5, tool_use_id="t3"),
            ),
            text("done"),
        ]
    )


def make_agent(storage: Path | None = None, model: ScriptedModel | None = None) -> Agent:
    manager = FileSessionManager(SESSION, storage_dir=storage) if storage is not None else None
    return Agent(
        model=model or three_calls(),
        tools=[delete_files, pay],
        hooks=[approve_deletes],
        session_manager=manager,
    )


async def run_three(agent: Agent) -> dict[str, Any]:
    """Interrupt three calls; answer t1 with resume, t2 with respond, t3 (a tool interrupt) with cancel."""
    paused = await agent.invoke_async("go")
    by_tool = {i.tool_use_id: i for i in paused.interrupts}
    assert set(by_tool) == {"t1", "t2", "t3"}
    done = await agent.invoke_async(
        [by_tool["t1"].resume("y"), by_tool["t2"].respond({"deleted": "by operator"}), by_tool["t3"].cancel()]
    )
    assert done.stop_reason == "end_turn"
    return by_tool


def entries_for(audit: list[dict[str, Any]], interrupt_id: str) -> list[dict[str, Any]]:
    return [entry for entry in audit if entry["interrupt_id"] == interrupt_id]


def check_trail(audit: list[dict[str, Any]], by_tool: dict[str, Any]) -> None:
    t1, t2, t3 = by_tool["t1"], by_tool["t2"], by_tool["t3"]

    raised_1, answered_1, outcome_1 = entries_for(audit, t1.id)
    assert raised_1["event"] == "raised"
    assert raised_1["name"] == "approval"
    assert "approve_deletes" in raised_1["by"]
    assert "BeforeToolCallEvent" in raised_1["by"]
    assert raised_1["reason"] == {"paths": ["a"]}
    assert answered_1["event"] == "answered"
    assert (answered_1["action"], answered_1["answer"]) == ("resume", "y")
    assert outcome_1["event"] == "outcome"
    assert outcome_1["result"] == {"toolUseId": "t1", "status": "success", "content": [{"text": "deleted 1"}]}

    raised_2, answered_2, outcome_2 = entries_for(audit, t2.id)
    assert raised_2["reason"] == {"paths": ["b"]}
    assert (answered_2["action"], answered_2["answer"]) == ("respond", {"deleted": "by operator"})
    assert outcome_2["result"] == {
        "toolUseId": "t2",
        "status": "success",
        "content": [{"json": {"deleted": "by operator"}}],
    }

    raised_3, answered_3, outcome_3 = entries_for(audit, t3.id)
    assert raised_3["by"] == "tool pay"
    assert raised_3["name"] == "confirm"
    assert raised_3["reason"] == {"amount": 5}
    assert (answered_3["action"], answered_3["answer"]) == ("cancel", None)
    assert outcome_3["action"] == "cancel"
    assert outcome_3["result"] == {
        "toolUseId": "t3",
        "status": "error",
        "content": [{"text": "Tool call cancelled by user"}],
    }

    # Each interrupt's life is in order, and the trail as a whole is in time order.
    for trail in (entries_for(audit, i.id) for i in (t1, t2, t3)):
        assert [entry["event"] for entry in trail] == ["raised", "answered", "outcome"]
    times = [entry["time"] for entry in audit]  # seconds since the epoch
    assert all(isinstance(stamp, float) for stamp in times)
    assert times == sorted(times)
    assert abs(times[-1] - datetime.now().timestamp()) < 60
    assert len(audit) == 9
    json.dumps(audit)


async def test_audit_trail_of_resume_respond_and_cancel():
    agent = make_agent()
    by_tool = await run_three(agent)
    check_trail(agent.interrupt_audit, by_tool)
    assert RUNS == [("pay", 5), ["a"]]  # t2 was responded, t3 cancelled: neither ran again


async def test_interrupt_audit_is_a_copy():
    agent = make_agent()
    await run_three(agent)
    trail = agent.interrupt_audit
    trail[0]["event"] = "tampered"
    trail.clear()
    assert agent.interrupt_audit[0]["event"] == "raised"


async def test_audit_for_a_restart_with_edited_input():
    def guard(event: BeforeToolCallEvent) -> None:
        event.interrupt("approval", reason=event.tool_use["input"], allow_edits=True)

    model = ScriptedModel([tool_call("delete_files", paths=["a", "b"], tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[delete_files], hooks=[guard])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    await agent.invoke_async([interrupt.restart(input={"paths": ["a"]}, metadata={"by": "alex"})])
    raised, answered, outcome = agent.interrupt_audit
    assert raised["event"] == "raised"
    assert answered["action"] == "restart"
    assert answered["answer"] is None  # the restart's response; its metadata is recorded apart
    assert answered["metadata"] == {"by": "alex"}
    assert answered["edited_input"] == {"paths": ["a"]}
    assert outcome["action"] == "restart"
    assert outcome["result"]["status"] == "success"
    assert RUNS == [["a"]]


async def test_audit_survives_a_restart_of_the_process(tmp_path: Path):
    agent = make_agent(tmp_path)
    by_tool = await run_three(agent)
    trail = agent.interrupt_audit
    agent.session_manager.close()

    rebuilt = make_agent(tmp_path, ScriptedModel([]))
    assert rebuilt.interrupt_audit == trail
    check_trail(rebuilt.interrupt_audit, by_tool)


async def test_audit_survives_a_restart_while_interrupted(tmp_path: Path):
    agent = make_agent(tmp_path)
    paused = await agent.invoke_async("go")
    raised = agent.interrupt_audit
    assert [entry["event"] for entry in raised] == ["raised"] * 3
    agent.session_manager.close()

    rebuilt = make_agent(tmp_path, ScriptedModel([text("done")]))
    assert rebuilt.interrupt_audit == raised
    by_tool = {i.tool_use_id: i for i in paused.interrupts}
    await rebuilt.invoke_async(
        [by_tool["t1"].resume("y"), by_tool["t2"].respond({"deleted": "by operator"}), by_tool["t3"].cancel()]
    )
    check_trail(rebuilt.interrupt_audit, by_tool)
    rebuilt.session_manager.close()

    third = make_agent(tmp_path, ScriptedModel([]))
    check_trail(third.interrupt_audit, by_tool)


def log_records(storage: Path) -> list[dict[str, Any]]:
    path = storage / f"session_{SESSION}" / "agents" / "agent_default" / "agent.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_session_log_stores_each_audit_entry_once_as_its_own_record(tmp_path: Path):
    agent = make_agent(tmp_path)
    paused = await agent.invoke_async("go")
    by_tool = {i.tool_use_id: i for i in paused.interrupts}
    agent.session_manager.close()

    # A second process resumes: audit records written before must not be written again.
    rebuilt = make_agent(tmp_path, ScriptedModel([text("done")]))
    await rebuilt.invoke_async(
        [by_tool["t1"].resume("y"), by_tool["t2"].respond({"deleted": "by operator"}), by_tool["t3"].cancel()]
    )
    trail = rebuilt.interrupt_audit

    records = log_records(tmp_path)
    audit_records = [record["e"] for record in records if record["k"] == "a"]
    assert audit_records == trail  # every entry once, in order
    assert len({json.dumps(entry, sort_keys=True) for entry in audit_records}) == len(audit_records)
    snapshots = [record for record in records if record["k"] == "s"]
    assert snapshots
    for snapshot in snapshots:
        interrupt_state = snapshot["a"]["_internal_state"].get("interrupt_state", {})
        assert "audit" not in interrupt_state  # the snapshot does not repeat the trail
        assert "raised" not in json.dumps(interrupt_state)


async def test_sessions_without_interrupts_write_no_audit_records(tmp_path: Path):
    agent = Agent(model=ScriptedModel([text("hi")]), session_manager=FileSessionManager(SESSION, storage_dir=tmp_path))
    await agent.invoke_async("hello")
    assert agent.interrupt_audit == []
    assert [record for record in log_records(tmp_path) if record["k"] == "a"] == []


async def test_audit_of_an_interrupt_answered_over_two_resumes():
    model = ScriptedModel(
        [
            turn(
                tool_call("delete_files", paths=["a"], tool_use_id="t1"),
                tool_call("delete_files", paths=["b"], tool_use_id="t2"),
            ),
            text("done"),
        ]
    )
    agent = Agent(model=model, tools=[delete_files], hooks=[approve_deletes])
    first, second = (await agent.invoke_async("go")).interrupts
    await agent.invoke_async([first.resume("y")])
    await agent.invoke_async([first.resume("y"), second.resume("n")])  # a retry that repeats the first answer
    events = [(entry["interrupt_id"], entry["event"]) for entry in agent.interrupt_audit]
    assert events.count((first.id, "answered")) == 1  # the repeated answer is not recorded twice
    assert events.count((first.id, "outcome")) == 1
    assert events.count((first.id, "raised")) == 1
    assert events.count((second.id, "raised")) == 1
    [outcome_2] = [e for e in agent.interrupt_audit if e["interrupt_id"] == second.id and e["event"] == "outcome"]
    assert outcome_2["result"]["content"] == [{"text": "denied"}]


@pytest.mark.parametrize("where", ["before_tools", "before_model_call"])
async def test_audit_records_the_cancellation_of_a_non_tool_interrupt(where: str):
    def batch(event: BeforeToolsEvent) -> None:
        event.interrupt("batch")

    def gate(event: BeforeModelCallEvent) -> None:
        event.interrupt("gate")

    if where == "before_tools":
        agent = Agent(
            model=ScriptedModel([tool_call("delete_files", paths=["a"]), text("done")]),
            tools=[delete_files],
            hooks=[batch],
        )
    else:
        agent = Agent(model=ScriptedModel([text("never")]), hooks=[gate])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    await agent.invoke_async([interrupt.cancel()])
    assert [entry["event"] for entry in agent.interrupt_audit] == ["raised", "answered", "outcome"]


async def test_the_sessions_command_shows_the_audit_trail(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    from strandslike.cli import main

    agent = make_agent(tmp_path)
    by_tool = await run_three(agent)
    agent.session_manager.close()
    capsys.readouterr()

    assert main(["sessions", "show", "--storage-dir", str(tmp_path), SESSION, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert "raised" in json.dumps(shown)
    assert by_tool["t3"].id in json.dumps(shown)

    assert main(["sessions", "show", "--storage-dir", str(tmp_path), SESSION, "--full"]) == 0
    printed = capsys.readouterr().out
    assert "raised" in printed
    assert "cancel" in printed
