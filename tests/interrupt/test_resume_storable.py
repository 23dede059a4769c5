"""Validate before anything (issue 9, item 3): everything a resume carries, and everything else an agent is asked to
keep (interrupt details, ``agent.state``, prompts, tool results), is checked with the stores' strict encoder before
anything runs. A refused resume changes nothing, in memory or on disk, and the session still resumes afterwards."""

import json
import os
from pathlib import Path
from typing import Any

import pytest
from helpers import answer
from hostile import raised

from strandslike import Agent, InterruptError, ToolContext, tool
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.session import FileSessionManager
from strandslike.types.exceptions import InvalidPromptError, InvalidStateKeyError, NotJSONSerializableError

RUNS: list[Any] = []
SESSION = "s"


@pytest.fixture(autouse=True)
def _clear_runs():
    RUNS.clear()


@tool(context=True)
def pay(tool_context: ToolContext, amount: int) -> str:
    """Pay.

    Args:
        amount: How much.
    """
    answer = tool_context.interrupt("confirm", reason={"amount": amount}, allow_edits=True)
    RUNS.append((amount, answer, tool_context.resumed_metadata))
    return f"paid {amount}"


@tool
def delete_files(paths: list[str]) -> str:
    """Delete files.

    Args:
        paths: The files.
    """
    RUNS.append(paths)
    return f"deleted {len(paths)}"


def approve(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "delete_files" and event.interrupt("approval", reason=event.tool_use["input"]) != "y":
        event.cancel_tool = "denied"


def pay_agent(storage: Path, *turns: Any) -> Agent:
    script = list(turns) or [tool_call("pay", amount=5, tool_use_id="t1"), text("done")]
    return Agent(
        model=ScriptedModel(script), tools=[pay], session_manager=FileSessionManager(SESSION, storage_dir=storage)
    )


def two_deletes(storage: Path) -> Agent:
    model = ScriptedModel(
        [
            turn(
                tool_call("delete_files", paths=["a"], tool_use_id="t1"),
                tool_call("delete_files", paths=["b"], tool_use_id="t2"),
            ),
            text("done"),
        ]
    )
    return Agent(
        model=model,
        tools=[delete_files],
        hooks=[approve],
        session_manager=FileSessionManager(SESSION, storage_dir=storage),
    )


def on_disk(storage: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for root, _, names in os.walk(storage):
        for name in names:
            path = Path(root, name)
            files[str(path.relative_to(storage))] = path.read_bytes()
    return files


def in_memory(agent: Agent) -> tuple[str, str, str]:
    return (
        json.dumps(agent._interrupt_state.to_dict(), sort_keys=True, default=str),
        json.dumps(agent.messages, sort_keys=True, default=str),
        json.dumps(agent.state.get(), sort_keys=True),
    )


async def refused(agent: Agent, storage: Path, prompt: Any, code: str) -> Exception:
    """Invoke with ``prompt``; expect a typed refusal with ``code`` that changed nothing in memory or on disk."""
    memory, disk = in_memory(agent), on_disk(storage)
    error = await raised(agent.invoke_async(prompt))
    assert getattr(error, "code", None) == code, f"{type(error).__name__}: {error}"
    assert in_memory(agent) == memory
    assert on_disk(storage) == disk
    return error


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


HOSTILE = {
    "int-key": {1: 2},
    "none-key": {None: 1, "a": 2},
    "lone-surrogate": "\ud800",
    "surrogate-inside": {"note": "ok \udfff"},
    "huge-int": 10**5000,
    "nan": float("nan"),
    "deep": nested(150),
    "set": {1, 2},
    "bytes": b"x",
}


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
async def test_a_resume_carrying_an_unstorable_value_changes_nothing_and_the_session_still_resumes(
    tmp_path: Path, value: Any
) -> None:
    agent = pay_agent(tmp_path)
    [interrupt] = (await agent.invoke_async("go")).interrupts
    forged = {"interruptResponse": {"interruptId": interrupt.id, "response": None, "action": "restart"}}
    for prompt in (
        [interrupt.resume(value)],
        [interrupt.respond(value)],
        [{"interruptResponse": {**forged["interruptResponse"], "metadata": value}}],
        [interrupt.restart(input={"amount": 5, "note": value})],
        [interrupt.restart(metadata=value)],
    ):
        error = await refused(agent, tmp_path, prompt, "INVALID_PAYLOAD")
        assert isinstance(error, InterruptError)
        assert isinstance(error, NotJSONSerializableError)  # also a TypeError, as Strands' json.dumps would raise
    assert RUNS == []
    agent.session_manager.close()

    # The session on disk is intact: a fresh agent resumes it, and the tool runs exactly once.
    fresh = pay_agent(tmp_path, text("done"))
    assert fresh._interrupt_state.activated
    done = await fresh.invoke_async([interrupt.restart(metadata={"ok": True})])
    assert done.stop_reason == "end_turn"
    assert RUNS == [(5, None, {"ok": True})]  # interrupt() returns the restart's response; the metadata is context


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
async def test_repeating_an_applied_answer_with_an_unstorable_value_is_refused_not_crashed(
    tmp_path: Path, value: Any
) -> None:
    """Comparing a repeated answer with the applied one encoded the hostile value first (raw ValueError, TypeError
    or RecursionError, observed with 10**5000, {None: 1, "a": 2} and deep nesting)."""
    agent = two_deletes(tmp_path)
    first, second = (await agent.invoke_async("go")).interrupts
    still = await agent.invoke_async([answer(first, "y")])  # partial: the second one is asked again
    assert [i.id for i in still.interrupts] == [second.id]
    assert RUNS == [["a"]]
    await refused(agent, tmp_path, [answer(first, value), answer(second, "y")], "INVALID_PAYLOAD")
    await refused(agent, tmp_path, [answer(second, value)], "INVALID_PAYLOAD")
    done = await agent.invoke_async([answer(first, "y"), answer(second, "y")])
    assert done.stop_reason == "end_turn"
    assert RUNS == [["a"], ["b"]]
    # A replay of the completed answers, with a hostile value, is refused with a typed error too.
    with pytest.raises(InterruptError):
        await agent.invoke_async([answer(first, value), answer(second, "y")])
    assert RUNS == [["a"], ["b"]]


async def test_metadata_with_an_int_key_never_reaches_the_tool(tmp_path: Path) -> None:
    """The observed failure: restart metadata {1: 2} ran the tool, then failed with a raw TypeError while saving,
    and a retry ran the tool again."""
    agent = pay_agent(tmp_path)
    [interrupt] = (await agent.invoke_async("go")).interrupts
    for _ in range(2):  # a retry of the same bad resume is refused the same way
        await refused(agent, tmp_path, [interrupt.restart(metadata={1: 2})], "INVALID_PAYLOAD")
    assert RUNS == []
    done = await agent.invoke_async([interrupt.restart(metadata={"1": 2})])
    assert done.stop_reason == "end_turn"
    assert RUNS == [(5, None, {"1": 2})]


# -- what else an agent keeps ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("details", "code"),
    [
        ({"reason": {1: 2}}, "NOT_JSON_SERIALIZABLE"),
        ({"reason": "\ud800"}, "NOT_JSON_SERIALIZABLE"),
        ({"metadata": {"k": float("inf")}}, "NOT_JSON_SERIALIZABLE"),
        ({"metadata": ["not", "a", "dict"]}, "INVALID_INTERRUPT"),
        ({"message": {"not": "text"}}, "INVALID_INTERRUPT"),
        ({"message": "\udc80"}, "INVALID_INTERRUPT"),
        ({"kind": "app:\ud800"}, "INVALID_INTERRUPT"),
        ({"kind": 5}, "INVALID_INTERRUPT"),
        ({"expires_in": "soon"}, "INVALID_INTERRUPT"),
        ({"allow_edits": "yes"}, "INVALID_INTERRUPT"),
        ({"response_type": object()}, "INVALID_INTERRUPT"),
        ({"name": 5}, "INVALID_INTERRUPT"),
        ({"name": "\ud800"}, "INVALID_INTERRUPT"),
    ],
    ids=lambda value: ascii(value)[:30],
)
async def test_interrupt_details_are_checked_when_raised_by_a_hook(
    tmp_path: Path, details: dict[str, Any], code: str
) -> None:
    def gate(event: BeforeToolCallEvent) -> None:
        event.interrupt(**{"name": "approval", **details})

    model = ScriptedModel([tool_call("delete_files", paths=["a"], tool_use_id="t1"), text("done")])
    manager = FileSessionManager(SESSION, storage_dir=tmp_path)
    agent = Agent(model=model, tools=[delete_files], hooks=[gate], session_manager=manager)
    error = await raised(agent.invoke_async("go"))
    assert getattr(error, "code", None) == code, error
    assert isinstance(error, TypeError | ValueError)
    assert agent._interrupt_state.interrupts == {}
    assert RUNS == []
    agent.session_manager.close()
    # Nothing unstorable reached the session: it restores.
    restored = Agent(model=ScriptedModel([]), session_manager=FileSessionManager(SESSION, storage_dir=tmp_path))
    assert restored.messages[0]["content"] == [{"text": "go"}]


async def test_interrupt_details_raised_inside_a_tool_become_its_error_result(tmp_path: Path) -> None:
    @tool(context=True)
    def ask(tool_context: ToolContext) -> str:
        """Ask."""
        tool_context.interrupt("q", reason={1: 2})
        return "never"

    model = ScriptedModel([tool_call("ask", tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[ask], session_manager=FileSessionManager(SESSION, storage_dir=tmp_path))
    result = await agent.invoke_async("go")
    assert result.stop_reason == "end_turn"
    [block] = agent.messages[2]["content"]
    assert block["toolResult"]["status"] == "error"
    assert "key 1 of type int" in block["toolResult"]["content"][0]["text"]


@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        ("\ud800", 1, InvalidStateKeyError),
        ("", 1, InvalidStateKeyError),
        (5, 1, InvalidStateKeyError),
        ("k", {1: 2}, NotJSONSerializableError),
        ("k", {"x": "\ud800"}, NotJSONSerializableError),
        ("k", 10**5000, NotJSONSerializableError),
    ],
    ids=["surrogate-key", "empty-key", "int-key", "int-key-inside", "surrogate-inside", "huge-int"],
)
async def test_agent_state_refuses_what_no_session_could_store(
    tmp_path: Path, key: Any, value: Any, error: type
) -> None:
    agent = pay_agent(tmp_path, text("ok"))
    await agent.invoke_async("hi")
    before = agent.state.get()
    with pytest.raises(error) as caught:
        agent.state.set(key, value)
    assert isinstance(caught.value, ValueError)  # Strands raises ValueError for both
    assert caught.value.code in ("INVALID_STATE_KEY", "NOT_JSON_SERIALIZABLE")
    assert agent.state.get() == before


@pytest.mark.parametrize(
    "prompt",
    [
        "\ud800",
        [{"text": "fine"}, {"text": "bad \udfff"}],
        [{"role": "user", "content": [{"text": "x", "extra": {1: 2}}]}],
        [{"role": "user", "content": [{"text": "x"}]}, {"role": "robot", "content": []}],
        [{"role": "user", "content": "not a list"}],
        [{"role": "user", "content": ["not a block"]}],
        [{"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}, "x": float("nan")}],
        [{"text": "x", "deep": nested(150)}],
        [{"nonsense": 1}],
        [{}],
        ["text"],
        5,
    ],
    ids=lambda value: ascii(value)[:30],
)
async def test_a_prompt_that_cannot_be_stored_is_refused_before_anything_is_appended(
    tmp_path: Path, prompt: Any
) -> None:
    agent = pay_agent(tmp_path, text("first"), text("second"))
    await agent.invoke_async("hi")
    error = await refused(agent, tmp_path, prompt, "INVALID_PROMPT")
    assert isinstance(error, InvalidPromptError)
    assert isinstance(error, TypeError)
    assert isinstance(error, ValueError)
    assert agent.model.calls == 1  # type: ignore[attr-defined]
    done = await agent.invoke_async("again")
    assert done.stop_reason == "end_turn"
    agent.session_manager.close()
    restored = pay_agent(tmp_path, text("third"))
    assert restored.messages == agent.messages


async def test_a_prompt_with_image_bytes_is_still_accepted(tmp_path: Path) -> None:
    agent = pay_agent(tmp_path, text("nice picture"))
    result = await agent.invoke_async([{"text": "look"}, {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}}])
    assert result.stop_reason == "end_turn"


async def test_initial_messages_are_checked_too() -> None:
    with pytest.raises(InvalidPromptError, match="messages="):
        Agent(model=ScriptedModel([]), messages=[{"role": "user", "content": [{"text": "\ud800"}]}])


# -- tool results that cannot be stored ------------------------------------------------------------------------------

BAD_RESULTS = {
    "int-key-json": {"status": "success", "content": [{"json": {1: 2}}]},
    "surrogate-text": {"status": "success", "content": [{"text": "\ud800"}]},
    "nan-json": {"status": "success", "content": [{"json": {"x": float("nan")}}]},
    "deep-json": {"status": "success", "content": [{"json": nested(150)}]},
    "content-not-list": {"status": "success", "content": "text"},
    "unknown-status": {"status": "maybe", "content": []},
    "object": {"status": "success", "content": [{"json": object()}]},
}


@pytest.mark.parametrize("bad", BAD_RESULTS.values(), ids=BAD_RESULTS.keys())
async def test_a_tool_result_that_cannot_be_stored_becomes_an_error_result_and_the_session_lives_on(
    tmp_path: Path, bad: dict[str, Any]
) -> None:
    @tool
    def report() -> Any:
        """Report."""
        RUNS.append("report")
        return bad

    model = ScriptedModel([tool_call("report", tool_use_id="t1"), text("done"), text("still here")])
    agent = Agent(model=model, tools=[report], session_manager=FileSessionManager(SESSION, storage_dir=tmp_path))
    result = await agent.invoke_async("go")
    assert result.stop_reason == "end_turn"
    assert RUNS == ["report"]  # it ran once; only its result was replaced
    [block] = agent.messages[2]["content"]
    assert block["toolResult"]["status"] == "error"
    assert block["toolResult"]["toolUseId"] == "t1"
    assert "the tool ran, but its result was replaced" in block["toolResult"]["content"][0]["text"]
    agent.session_manager.close()
    restored = Agent(
        model=ScriptedModel([text("still here")]),
        tools=[report],
        session_manager=FileSessionManager(SESSION, storage_dir=tmp_path),
    )
    assert restored.messages == agent.messages
    assert (await restored.invoke_async("more")).stop_reason == "end_turn"
    assert RUNS == ["report"]


async def test_an_after_tool_call_hook_can_still_repair_a_result_before_it_is_checked(tmp_path: Path) -> None:
    @tool
    def report() -> Any:
        """Report."""
        return {"status": "success", "content": [{"json": {1: 2}}]}

    def repair(event: Any) -> None:
        event.result = {**event.result, "content": [{"json": {"1": 2}}]}

    from strandslike.hooks import AfterToolCallEvent

    model = ScriptedModel([tool_call("report", tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[report], hooks=[])
    agent.add_hook(repair, AfterToolCallEvent)
    await agent.invoke_async("go")
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"json": {"1": 2}}]
