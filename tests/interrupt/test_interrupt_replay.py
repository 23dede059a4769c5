"""Replayed resumes (issue 5, point 3, last sentence): a resume that already completed runs nothing again."""

from pathlib import Path
from typing import Any

import pytest
from helpers import answer, answers

from strandslike import Agent, InterruptAlreadyAnsweredError, ToolContext, UnknownInterruptError, tool
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.session import FileSessionManager

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
    RUNS.append(paths)
    return f"deleted {len(paths)}"


@tool(context=True)
def pay(tool_context: ToolContext, amount: int) -> str:
    """Pay.

    Args:
        amount: The amount.
    """
    RUNS.append(("pay", amount))
    tool_context.interrupt("confirm", reason={"amount": amount}, allow_edits=True)
    return f"paid {amount}"


def approve(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "delete_files":
        if event.interrupt("approval", reason=event.tool_use["input"]) != "y":
            event.cancel_tool = "denied"


def two_calls() -> ScriptedModel:
    return ScriptedModel(
        [
            turn(
                tool_call("delete_files", paths=["a"], tool_use_id="t1"),
                tool_call("delete_files", paths=["b"], tool_use_id="t2"),
            ),
            text("done"),
        ]
    )


async def test_replaying_a_completed_resume_runs_nothing():
    model = two_calls()
    agent = Agent(model=model, tools=[delete_files], hooks=[approve])
    paused = await agent.invoke_async("go")
    resume = answers(paused.interrupts, "y")
    done = await agent.invoke_async(resume)
    assert done.stop_reason == "end_turn"
    assert sorted(RUNS) == [["a"], ["b"]]
    calls, messages = model.calls, list(agent.messages)

    again = await agent.invoke_async(resume)

    assert again.stop_reason == "end_turn"
    assert again.replayed is True
    assert done.replayed is False
    assert again.to_dict()["replayed"] is True
    assert "replayed" not in done.to_dict()
    assert again.message == done.message
    assert str(again) == "done\n"
    assert sorted(RUNS) == [["a"], ["b"]]  # no tool ran twice
    assert model.calls == calls  # and the model was not called
    assert agent.messages == messages
    assert not agent._interrupt_state.activated


@pytest.mark.parametrize("order", ["same", "reversed", "one"])
async def test_replaying_in_another_order_or_a_subset_is_still_a_replay(order: str):
    model = two_calls()
    agent = Agent(model=model, tools=[delete_files], hooks=[approve])
    paused = await agent.invoke_async("go")
    resume = answers(paused.interrupts, "y")
    await agent.invoke_async(resume)
    replay = {"same": resume, "reversed": resume[::-1], "one": resume[:1]}[order]
    again = await agent.invoke_async(replay)
    assert again.stop_reason == "end_turn"
    assert len(RUNS) == 2
    assert model.calls == 2


@pytest.mark.parametrize("action", ["resume", "respond", "cancel", "restart"])
async def test_replaying_each_action_runs_nothing(action: str):
    model = ScriptedModel([tool_call("pay", amount=5, tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[pay])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    block = {
        "resume": lambda: interrupt.resume("ok"),
        "respond": lambda: interrupt.respond({"paid": "offline"}),
        "cancel": interrupt.cancel,
        "restart": lambda: interrupt.restart(metadata={"by": "alex"}),
    }[action]()
    await agent.invoke_async([block])
    runs, calls = len(RUNS), model.calls

    again = await agent.invoke_async([block])

    assert again.stop_reason == "end_turn"
    assert (len(RUNS), model.calls) == (runs, calls)


async def test_replaying_with_a_different_answer_is_refused():
    model = two_calls()
    agent = Agent(model=model, tools=[delete_files], hooks=[approve])
    paused = await agent.invoke_async("go")
    first, second = paused.interrupts
    await agent.invoke_async([first.resume("y"), second.resume("y")])

    for changed in (
        [first.resume("n"), second.resume("y")],
        [first.resume("y"), second.resume("n")],
        [first.respond("x")],
        [first.cancel()],
        [answer(first, None)],
    ):
        with pytest.raises(InterruptAlreadyAnsweredError) as info:
            await agent.invoke_async(changed)
        assert info.value.code == "ALREADY_ANSWERED"
        assert isinstance(info.value, ValueError)
    assert sorted(RUNS) == [["a"], ["b"]]
    assert model.calls == 2


async def test_replaying_a_restart_with_other_edited_input_is_refused():
    model = ScriptedModel([tool_call("pay", amount=500, tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[pay])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    await agent.invoke_async([interrupt.restart(input={"amount": 100})])
    assert RUNS == [("pay", 500), ("pay", 100)]
    with pytest.raises(InterruptAlreadyAnsweredError):
        await agent.invoke_async([interrupt.restart(input={"amount": 1})])


async def test_an_identical_replay_plus_an_unknown_id_is_an_unknown_id():
    model = two_calls()
    agent = Agent(model=model, tools=[delete_files], hooks=[approve])
    paused = await agent.invoke_async("go")
    resume = answers(paused.interrupts, "y")
    await agent.invoke_async(resume)
    try:
        with pytest.raises(UnknownInterruptError):
            await agent.invoke_async([*resume, {"interruptResponse": {"interruptId": "v1:other", "response": "y"}}])
    finally:
        assert len(RUNS) == 2


def session_agent(storage: Path, model: ScriptedModel) -> Agent:
    return Agent(
        model=model,
        tools=[delete_files],
        hooks=[approve],
        session_manager=FileSessionManager("replay", storage_dir=storage),
    )


async def test_replaying_against_an_agent_rebuilt_from_its_session_runs_nothing(tmp_path: Path):
    first = session_agent(tmp_path, two_calls())
    paused = await first.invoke_async("go")
    resume = answers(paused.interrupts, "y")
    done = await first.invoke_async(resume)
    assert done.stop_reason == "end_turn"
    first.session_manager.close()
    assert sorted(RUNS) == [["a"], ["b"]]

    model = ScriptedModel([text("should not be called")])
    rebuilt = session_agent(tmp_path, model)
    assert not rebuilt._interrupt_state.activated
    messages = list(rebuilt.messages)

    again = await rebuilt.invoke_async(resume)

    assert again.stop_reason == "end_turn"
    assert again.replayed
    assert again.message["content"] == [{"text": "done"}]
    assert sorted(RUNS) == [["a"], ["b"]]
    assert model.calls == 0
    assert rebuilt.messages == messages

    with pytest.raises(InterruptAlreadyAnsweredError):
        await rebuilt.invoke_async([answer(paused.interrupts[0], "n")])
    assert model.calls == 0


async def test_replaying_while_interrupted_resending_an_applied_answer_with_a_new_one_is_accepted():
    model = two_calls()
    agent = Agent(model=model, tools=[delete_files], hooks=[approve])
    paused = await agent.invoke_async("go")
    first, second = paused.interrupts

    still = await agent.invoke_async([first.resume("y")])  # partial: the other is raised again
    assert [i.id for i in still.interrupts] == [second.id]
    assert RUNS == [["a"]]

    # The client retries with the whole set: the applied answer is a no-op, the new one is applied.
    done = await agent.invoke_async([first.resume("y"), second.resume("y")])
    assert done.stop_reason == "end_turn"
    assert RUNS == [["a"], ["b"]]  # "a" did not run twice
    assert model.calls == 2


async def test_while_interrupted_changing_an_applied_answer_is_refused():
    model = two_calls()
    agent = Agent(model=model, tools=[delete_files], hooks=[approve])
    first, second = (await agent.invoke_async("go")).interrupts
    await agent.invoke_async([first.resume("y")])
    with pytest.raises(InterruptAlreadyAnsweredError):
        await agent.invoke_async([first.resume("n"), second.resume("y")])
    assert agent._interrupt_state.activated
    with pytest.raises(InterruptAlreadyAnsweredError):
        await agent.invoke_async([first.cancel(), second.resume("y")])
    done = await agent.invoke_async([second.resume("y")])
    assert done.stop_reason == "end_turn"
    assert RUNS == [["a"], ["b"]]


async def test_resending_only_applied_answers_while_interrupted_changes_nothing():
    model = two_calls()
    agent = Agent(model=model, tools=[delete_files], hooks=[approve])
    first, second = (await agent.invoke_async("go")).interrupts
    await agent.invoke_async([first.resume("y")])
    still = await agent.invoke_async([first.resume("y")])
    assert still.stop_reason == "interrupt"
    assert [i.id for i in still.interrupts] == [second.id]
    assert RUNS == [["a"]]
    assert model.calls == 1


async def test_a_replay_of_an_earlier_round_while_a_later_round_waits():
    """Documents today's behaviour: once the agent waits on a *later* interrupt, a retried earlier resume is not
    recognised as a replay (agent/agent.py:238 checks replays only when not interrupted) and is refused as an
    unknown id; nothing runs and the later interrupt is still answerable."""
    model = ScriptedModel(
        [
            tool_call("delete_files", paths=["a"], tool_use_id="t1"),
            tool_call("delete_files", paths=["b"], tool_use_id="t2"),
            text("done"),
        ]
    )
    agent = Agent(model=model, tools=[delete_files], hooks=[approve])
    [round_one] = (await agent.invoke_async("go")).interrupts
    [round_two] = (await agent.invoke_async([round_one.resume("y")])).interrupts
    assert round_two.id != round_one.id
    with pytest.raises(UnknownInterruptError):
        await agent.invoke_async([round_one.resume("y")])
    assert RUNS == [["a"]]
    done = await agent.invoke_async([round_two.resume("y")])
    assert done.stop_reason == "end_turn"
    assert RUNS == [["a"], ["b"]]
