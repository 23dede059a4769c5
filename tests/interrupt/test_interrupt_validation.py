"""Resume validation (issue 5, point 3): every refusal has its own typed error and ``code``, applies nothing, and
leaves the run interrupted and resumable with a correct answer afterwards."""

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers import answer, answers
from log_lines import body_of, checksummed
from pydantic import BaseModel, field_validator

from strandslike import (
    Agent,
    DuplicateInterruptResponseError,
    EditsNotAllowedError,
    InterruptError,
    InterruptExpiredError,
    InvalidPayloadError,
    InvalidResumeError,
    InvalidToolInputError,
    NotInterruptedError,
    NotToolBoundError,
    PartialResumeError,
    PendingInterruptsError,
    SessionMismatchError,
    StaleToolCallError,
    ToolContext,
    UnknownInterruptError,
    tool,
)
from strandslike.hooks import BeforeModelCallEvent, BeforeToolCallEvent, BeforeToolsEvent
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.session import FileSessionManager

RUNS: list[Any] = []


@pytest.fixture(autouse=True)
def _clear_runs():
    RUNS.clear()


class Approval(BaseModel):
    approved: bool


@tool
def delete_files(paths: list[str]) -> str:
    """Delete files.

    Args:
        paths: The files to delete.
    """
    RUNS.append(paths)
    return f"deleted {len(paths)}"


def approve(event: BeforeToolCallEvent) -> None:
    """Strands-style approval without edits."""
    if event.tool_use["name"] == "delete_files":
        reply = event.interrupt("approval", reason=event.tool_use["input"])
        if reply != "y":
            event.cancel_tool = "denied"


def approve_with_edits(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "delete_files":
        event.interrupt("approval", reason=event.tool_use["input"], allow_edits=True)


def delete_agent(hook: Any = approve, **kwargs: Any) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel([tool_call("delete_files", paths=["a"], tool_use_id="t1"), text("done")])
    return Agent(model=model, tools=[delete_files], hooks=[hook], **kwargs), model


async def refused(
    agent: Agent, prompt: Any, error: type[InterruptError], code: str, *, exact: bool = True
) -> InterruptError:
    """Resume with ``prompt``, expect ``error`` with ``code``, and check nothing changed and the run still waits."""
    state = agent._interrupt_state
    before = json.dumps(state.to_dict(), sort_keys=True, default=str)
    messages = json.dumps(agent.messages, sort_keys=True)
    with pytest.raises(error) as info:
        await agent.invoke_async(prompt)
    if exact:
        assert type(info.value) is error
    assert isinstance(info.value, InterruptError)
    assert info.value.code == code
    assert state.activated
    assert json.dumps(state.to_dict(), sort_keys=True, default=str) == before
    assert json.dumps(agent.messages, sort_keys=True) == messages
    return info.value


async def finish(agent: Agent, prompt: Any) -> None:
    done = await agent.invoke_async(prompt)
    assert done.stop_reason == "end_turn"
    assert not agent._interrupt_state.activated


def test_every_error_has_its_own_code():
    codes = {
        PendingInterruptsError: "PENDING_INTERRUPTS",
        PartialResumeError: "PARTIAL_RESUME",
        UnknownInterruptError: "UNKNOWN_INTERRUPT_ID",
        InvalidPayloadError: "INVALID_PAYLOAD",
        InterruptExpiredError: "INTERRUPT_EXPIRED",
        NotToolBoundError: "NOT_TOOL_BOUND",
        EditsNotAllowedError: "EDITS_NOT_ALLOWED",
        InvalidToolInputError: "INVALID_TOOL_INPUT",
        SessionMismatchError: "SESSION_MISMATCH",
        StaleToolCallError: "STALE_TOOL_CALL",
        DuplicateInterruptResponseError: "DUPLICATE_RESPONSE",
        NotInterruptedError: "NOT_INTERRUPTED",
    }
    for error, code in codes.items():
        assert issubclass(error, InterruptError)
        assert error.code == code
    assert len(set(codes.values())) == len(codes)
    assert issubclass(UnknownInterruptError, KeyError)
    assert issubclass(PendingInterruptsError, TypeError)


async def test_unknown_interrupt_id():
    agent, _ = delete_agent()
    [interrupt] = (await agent.invoke_async("go")).interrupts
    error = await refused(
        agent,
        [{"interruptResponse": {"interruptId": "v1:nope", "response": "y"}}],
        UnknownInterruptError,
        "UNKNOWN_INTERRUPT_ID",
    )
    assert isinstance(error, KeyError)
    assert "v1:nope" in str(error)
    # A valid answer beside the unknown one is not applied either.
    await refused(
        agent,
        [interrupt.resume("y"), {"interruptResponse": {"interruptId": "v1:nope", "response": "y"}}],
        UnknownInterruptError,
        "UNKNOWN_INTERRUPT_ID",
    )
    assert RUNS == []
    await finish(agent, [interrupt.resume("y")])
    assert RUNS == [["a"]]


async def test_answer_failing_the_response_type():
    seen: list[Any] = []

    def gate(event: BeforeModelCallEvent) -> None:
        seen.append(event.interrupt("approve", response_type=Approval))

    model = ScriptedModel([text("ok")])
    agent = Agent(model=model, hooks=[gate])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    for bad in ({"approved": "maybe"}, {}, "yes", None):
        error = await refused(agent, [interrupt.resume(bad)], InvalidPayloadError, "INVALID_PAYLOAD")
        assert interrupt.id in str(error)
    assert model.calls == 0
    await finish(agent, [interrupt.resume({"approved": True})])
    assert seen == [Approval(approved=True)]


async def test_answer_failing_the_response_schema_of_a_restored_interrupt(tmp_path: Path):
    """The schema survives persistence: a rebuilt agent (no response_type object at hand) still checks it."""

    def gate(event: BeforeModelCallEvent) -> None:
        event.interrupt("count", response_type=int)

    first = Agent(model=ScriptedModel([]), hooks=[gate], session_manager=FileSessionManager("s", storage_dir=tmp_path))
    [interrupt] = (await first.invoke_async("go")).interrupts
    assert interrupt.response_schema == {"type": "integer"}

    model = ScriptedModel([text("ok")])
    again = Agent(model=model, hooks=[gate], session_manager=FileSessionManager("s", storage_dir=tmp_path))
    assert again._interrupt_state.interrupts[interrupt.id].response_schema == {"type": "integer"}
    await refused(again, [interrupt.resume("seven")], InvalidPayloadError, "INVALID_PAYLOAD")
    await finish(again, [interrupt.resume(7)])


async def test_non_json_answer_is_an_invalid_payload():
    agent, _ = delete_agent()
    [interrupt] = (await agent.invoke_async("go")).interrupts
    error = await refused(
        agent, [interrupt.resume({"when": object()})], InvalidPayloadError, "INVALID_PAYLOAD", exact=False
    )
    assert isinstance(error, TypeError)  # also Strands' NotJSONSerializableError
    await finish(agent, [interrupt.resume("y")])


async def test_expired_interrupt_refuses_answers_but_accepts_cancel():
    def gate(event: BeforeToolCallEvent) -> None:
        event.interrupt("approval", expires_in=0.05)

    agent, _ = delete_agent(gate)
    [interrupt] = (await agent.invoke_async("go")).interrupts
    await anyio.sleep(0.1)
    assert interrupt.expired
    for block in (interrupt.resume("y"), interrupt.respond("done"), interrupt.restart(), answer(interrupt, "y")):
        error = await refused(agent, [block], InterruptExpiredError, "INTERRUPT_EXPIRED")
        assert interrupt.expires_at in str(error)
    assert RUNS == []
    await finish(agent, [interrupt.cancel()])
    assert RUNS == []
    assert agent.messages[2]["content"][0]["toolResult"]["status"] == "error"


async def test_an_unexpired_interrupt_is_answered_normally():
    def gate(event: BeforeToolCallEvent) -> None:
        if event.interrupt("approval", expires_in=60) != "y":
            event.cancel_tool = "denied"

    agent, _ = delete_agent(gate)
    [interrupt] = (await agent.invoke_async("go")).interrupts
    await finish(agent, [interrupt.resume("y")])
    assert RUNS == [["a"]]


async def test_respond_or_restart_on_a_before_model_call_interrupt_is_not_tool_bound():
    def gate(event: BeforeModelCallEvent) -> None:
        event.interrupt("budget")

    model = ScriptedModel([text("ok")])
    agent = Agent(model=model, hooks=[gate])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    assert interrupt.tool_use_id is None
    await refused(agent, [interrupt.respond("x")], NotToolBoundError, "NOT_TOOL_BOUND")
    await refused(agent, [interrupt.restart()], NotToolBoundError, "NOT_TOOL_BOUND")
    assert model.calls == 0
    await finish(agent, [interrupt.resume("go ahead")])
    assert model.calls == 1


async def test_respond_on_a_before_tools_interrupt_is_not_tool_bound():
    def batch(event: BeforeToolsEvent) -> None:
        event.interrupt("batch")

    agent, _ = delete_agent(batch)
    [interrupt] = (await agent.invoke_async("go")).interrupts
    await refused(agent, [interrupt.respond({"all": "done"})], NotToolBoundError, "NOT_TOOL_BOUND")
    await refused(agent, [interrupt.restart(metadata={"m": 1})], NotToolBoundError, "NOT_TOOL_BOUND")
    await finish(agent, [interrupt.resume("ok")])
    assert RUNS == [["a"]]


async def test_restart_with_edited_input_without_allow_edits():
    agent, _ = delete_agent(approve)
    [interrupt] = (await agent.invoke_async("go")).interrupts
    await refused(agent, [interrupt.restart(input={"paths": ["b"]})], EditsNotAllowedError, "EDITS_NOT_ALLOWED")
    assert RUNS == []
    await finish(agent, [interrupt.restart()])  # a restart without edits is fine
    # approve() got the restart's metadata (None), which is not "y": it denied.
    assert RUNS == []


async def test_edits_not_allowed_for_a_tool_interrupt_either():
    @tool(context=True)
    def pay(tool_context: ToolContext, amount: int) -> str:
        """Pay."""
        tool_context.interrupt("confirm")
        RUNS.append(amount)
        return "paid"

    model = ScriptedModel([tool_call("pay", amount=5, tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[pay])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    await refused(agent, [interrupt.restart(input={"amount": 1})], EditsNotAllowedError, "EDITS_NOT_ALLOWED")
    await finish(agent, [interrupt.resume("ok")])
    assert RUNS == [5]


@pytest.mark.parametrize("edited", [{"paths": "a"}, {"paths": [1]}, {}], ids=["type", "item", "missing"])
async def test_restart_with_input_failing_the_tool_schema(edited: dict[str, Any]):
    agent, _ = delete_agent(approve_with_edits)
    [interrupt] = (await agent.invoke_async("go")).interrupts
    error = await refused(agent, [interrupt.restart(input=edited)], InvalidToolInputError, "INVALID_TOOL_INPUT")
    assert "delete_files" in str(error)
    assert RUNS == []
    await finish(agent, [interrupt.restart(input={"paths": ["b"]})])
    assert RUNS == [["b"]]


def session_agent(storage: Path, session_id: str) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel([tool_call("delete_files", paths=[session_id], tool_use_id="t1"), text("done")])
    manager = FileSessionManager(session_id, storage_dir=storage)
    return Agent(model=model, tools=[delete_files], hooks=[approve], session_manager=manager), model


async def test_answer_from_another_session(tmp_path: Path):
    agent_a, _ = session_agent(tmp_path, "a")
    agent_b, _ = session_agent(tmp_path, "b")
    [interrupt_a] = (await agent_a.invoke_async("go")).interrupts
    [interrupt_b] = (await agent_b.invoke_async("go")).interrupts
    assert interrupt_a.id == interrupt_b.id  # same tool-use id and name: same deterministic id
    assert interrupt_b.resume("y")["interruptResponse"]["sessionId"] == "b"

    error = await refused(agent_a, [interrupt_b.resume("y")], SessionMismatchError, "SESSION_MISMATCH")
    assert "'b'" in str(error)
    assert "'a'" in str(error)
    await refused(agent_a, [interrupt_b.cancel()], SessionMismatchError, "SESSION_MISMATCH")
    assert RUNS == []

    await finish(agent_a, [interrupt_a.resume("y")])
    await finish(agent_b, [interrupt_b.resume("y")])
    assert RUNS == [["a"], ["b"]]


async def test_answer_from_another_session_to_an_agent_rebuilt_from_its_session(tmp_path: Path):
    agent_a, _ = session_agent(tmp_path, "a")
    agent_b, _ = session_agent(tmp_path, "b")
    [interrupt_a] = (await agent_a.invoke_async("go")).interrupts
    [interrupt_b] = (await agent_b.invoke_async("go")).interrupts
    agent_a.session_manager.close()
    agent_b.session_manager.close()

    model = ScriptedModel([text("done")])
    rebuilt_a = Agent(
        model=model,
        tools=[delete_files],
        hooks=[approve],
        session_manager=FileSessionManager("a", storage_dir=tmp_path),
    )
    await refused(rebuilt_a, [interrupt_b.resume("y")], SessionMismatchError, "SESSION_MISMATCH")
    restored = rebuilt_a._interrupt_state.interrupts[interrupt_a.id]
    assert restored.resume("y")["interruptResponse"]["sessionId"] == "a"
    await finish(rebuilt_a, [restored.resume("y")])
    assert RUNS == [["a"]]


async def test_a_block_naming_a_session_on_an_agent_without_one_is_refused():
    agent, _ = delete_agent()
    [interrupt] = (await agent.invoke_async("go")).interrupts
    forged = {"interruptResponse": {"interruptId": interrupt.id, "response": "y", "sessionId": "other"}}
    await refused(agent, [forged], SessionMismatchError, "SESSION_MISMATCH")
    await finish(agent, [interrupt.resume("y")])


async def test_tampered_pending_tool_call_is_stale():
    agent, _ = delete_agent(approve)
    [interrupt] = (await agent.invoke_async("go")).interrupts
    pending = agent._interrupt_state.pending_tool_execution
    tool_use = pending.assistant_message["content"][0]["toolUse"]
    tool_use["input"] = {"paths": ["/"]}  # the call is no longer the one that was approved

    for block in (interrupt.resume("y"), interrupt.respond("x"), interrupt.restart()):
        await refused(agent, [block], StaleToolCallError, "STALE_TOOL_CALL")
    assert RUNS == []

    tool_use["input"] = {"paths": ["a"]}
    await finish(agent, [interrupt.resume("y")])
    assert RUNS == [["a"]]


async def test_renamed_pending_tool_call_is_stale():
    agent, _ = delete_agent(approve)
    [interrupt] = (await agent.invoke_async("go")).interrupts
    tool_use = agent._interrupt_state.pending_tool_execution.assistant_message["content"][0]["toolUse"]
    tool_use["name"] = "other_tool"
    await refused(agent, [interrupt.resume("y")], StaleToolCallError, "STALE_TOOL_CALL")
    tool_use["name"] = "delete_files"
    await finish(agent, [interrupt.resume("y")])


async def test_tool_interrupt_with_a_tampered_call_is_stale():
    @tool(context=True)
    def pay(tool_context: ToolContext, amount: int) -> str:
        """Pay."""
        tool_context.interrupt("confirm", reason={"amount": amount})
        RUNS.append(amount)
        return "paid"

    model = ScriptedModel([tool_call("pay", amount=5, tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[pay])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    tool_use = agent._interrupt_state.pending_tool_execution.assistant_message["content"][0]["toolUse"]
    tool_use["input"] = {"amount": 5000}
    await refused(agent, [interrupt.resume("ok")], StaleToolCallError, "STALE_TOOL_CALL")
    assert RUNS == []
    tool_use["input"] = {"amount": 5}
    await finish(agent, [interrupt.resume("ok")])
    assert RUNS == [5]


def _log(storage: Path, session_id: str) -> Path:
    return storage / f"session_{session_id}" / "agents" / "agent_default" / "agent.jsonl"


async def test_crafted_session_log_with_another_pending_call_is_stale(tmp_path: Path):
    agent, _ = session_agent(tmp_path, "s")
    [interrupt] = (await agent.invoke_async("go")).interrupts
    agent.session_manager.close()

    path = _log(tmp_path, "s")
    records = [body_of(line) for line in path.read_text().splitlines()]
    crafted = 0
    for record in records:
        if record["k"] == "s":
            pending = record["a"]["_internal_state"]["interrupt_state"].get("pending_tool_execution")
            if pending:
                pending["assistant_message"]["content"][0]["toolUse"]["input"] = {"paths": ["/etc"]}
                crafted += 1
        if record["k"] == "m" and record["m"]["role"] == "assistant":
            record["m"]["content"][0]["toolUse"]["input"] = {"paths": ["/etc"]}
    assert crafted
    path.write_text("".join(checksummed(record) + "\n" for record in records))  # a forger can checksum too

    model = ScriptedModel([text("done")])
    again = Agent(
        model=model,
        tools=[delete_files],
        hooks=[approve],
        session_manager=FileSessionManager("s", storage_dir=tmp_path),
    )
    assert again._interrupt_state.activated
    await refused(again, [interrupt.resume("y")], StaleToolCallError, "STALE_TOOL_CALL")
    assert RUNS == []
    assert model.calls == 0


async def _two_interrupts(**kwargs: Any) -> tuple[Agent, ScriptedModel, list[Any]]:
    model = ScriptedModel(
        [
            turn(
                tool_call("delete_files", paths=["a"], tool_use_id="t1"),
                tool_call("delete_files", paths=["b"], tool_use_id="t2"),
            ),
            text("done"),
        ]
    )
    agent = Agent(model=model, tools=[delete_files], hooks=[approve], **kwargs)
    paused = await agent.invoke_async("go")
    assert len(paused.interrupts) == 2
    return agent, model, list(paused.interrupts)


async def test_partial_resume_is_refused_under_the_refuse_policy():
    agent, _, (first, second) = await _two_interrupts(partial_resume="refuse")
    error = await refused(agent, [first.resume("y")], PartialResumeError, "PARTIAL_RESUME")
    assert error.missing == [second.id]
    assert RUNS == []
    await finish(agent, [first.resume("y"), second.resume("y")])
    assert sorted(RUNS) == [["a"], ["b"]]


async def test_partial_resume_reraises_by_default():
    agent, model, (first, second) = await _two_interrupts()
    assert agent.partial_resume == "reraise"
    still = await agent.invoke_async([first.resume("y")])
    assert still.stop_reason == "interrupt"
    assert [i.id for i in still.interrupts] == [second.id]
    assert RUNS == [["a"]]
    assert model.calls == 1
    await finish(agent, [second.resume("y")])
    assert sorted(RUNS) == [["a"], ["b"]]


def test_an_unknown_partial_resume_policy_is_refused():
    with pytest.raises(ValueError, match="partial_resume"):
        Agent(model=ScriptedModel([]), partial_resume="ignore")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "prompt", ["new question", [{"text": "hi"}], None, [{"role": "user", "content": [{"text": "x"}]}]]
)
async def test_a_new_prompt_while_interrupted_is_pending_interrupts(prompt: Any):
    agent, model = delete_agent()
    [interrupt] = (await agent.invoke_async("go")).interrupts
    error = await refused(agent, prompt, PendingInterruptsError, "PENDING_INTERRUPTS")
    assert isinstance(error, TypeError)
    assert model.calls == 1
    await finish(agent, [interrupt.resume("y")])


async def test_duplicate_answers_in_one_resume():
    agent, _ = delete_agent()
    [interrupt] = (await agent.invoke_async("go")).interrupts
    await refused(
        agent, [interrupt.resume("y"), interrupt.resume("n")], DuplicateInterruptResponseError, "DUPLICATE_RESPONSE"
    )
    await finish(agent, [interrupt.resume("y")])


async def test_answers_to_an_agent_that_is_not_interrupted():
    agent = Agent(model=ScriptedModel([text("hi")]))
    with pytest.raises(NotInterruptedError) as info:
        await agent.invoke_async(answers([type("I", (), {"id": "v1:x"})()], "y"))
    assert info.value.code == "NOT_INTERRUPTED"


# -- forged resumes -----------------------------------------------------------------------------------------------


async def test_forged_restart_with_input_is_refused():
    agent, _ = delete_agent(approve)
    [interrupt] = (await agent.invoke_async("go")).interrupts
    forged = {
        "interruptResponse": {
            "interruptId": interrupt.id,
            "response": None,
            "action": "restart",
            "input": {"paths": ["/"]},
        }
    }
    await refused(agent, [forged], EditsNotAllowedError, "EDITS_NOT_ALLOWED")
    assert RUNS == []
    await finish(agent, [interrupt.resume("y")])
    assert RUNS == [["a"]]


@pytest.mark.parametrize(
    "body",
    [
        {"response": "y", "action": "approve"},
        {"response": "y", "action": None},
        {"response": "y", "action": "resume", "input": {"paths": ["/"]}},
        {"response": "y", "action": "respond", "input": {"paths": ["/"]}},
        {"response": None, "action": "restart", "input": ["/"]},
        {"response": "y", "action": ["restart"]},
    ],
    ids=["unknown-action", "null-action", "input-with-resume", "input-with-respond", "input-not-object", "list-action"],
)
async def test_malformed_or_forged_blocks_are_invalid(body: dict[str, Any]):
    agent, _ = delete_agent(approve_with_edits)
    [interrupt] = (await agent.invoke_async("go")).interrupts
    forged = {"interruptResponse": {"interruptId": interrupt.id, **body}}
    error = await refused(agent, [forged], InvalidResumeError, "INVALID_PAYLOAD")
    assert isinstance(error, TypeError)
    assert RUNS == []
    await finish(agent, [interrupt.resume("y")])
    assert RUNS == [["a"]]


async def test_forged_restart_on_an_interrupt_not_bound_to_a_tool_is_refused():
    def gate(event: BeforeModelCallEvent) -> None:
        event.interrupt("budget", allow_edits=True)

    model = ScriptedModel([text("ok")])
    agent = Agent(model=model, hooks=[gate])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    forged = {"interruptResponse": {"interruptId": interrupt.id, "response": None, "action": "restart", "input": {}}}
    await refused(agent, [forged], NotToolBoundError, "NOT_TOOL_BOUND")
    await finish(agent, [interrupt.resume("ok")])


# -- the fingerprint after an edit or a hook rewrite ---------------------------------------------------------------

STALE_AFTER_REWRITE = (
    "the fingerprint is taken from the in-flight tool use (strandslike/types/interrupt.py:91, event.tool_use / "
    "tool_context.tool_use, i.e. the edited or hook-rewritten input) but checked against the model's original call "
    "in the paused assistant message (interrupt/_state.py:288-294 via agent/_resume.py:22-30), so every answer, "
    "cancel included, is refused with StaleToolCallError and the run is stuck"
)


async def test_an_approval_hook_can_ask_again_about_edited_input():
    def guard(event: BeforeToolCallEvent) -> None:
        event.interrupt("approval", reason=event.tool_use["input"], allow_edits=True)
        if event.tool_use["input"] != {"paths": ["a"]}:
            if event.interrupt("approve-edited", reason=event.tool_use["input"]) != "y":
                event.cancel_tool = "edited call denied"

    agent, _ = delete_agent(guard)
    [interrupt] = (await agent.invoke_async("go")).interrupts
    again = await agent.invoke_async([interrupt.restart(input={"paths": ["b"]})])
    assert [(i.name, i.reason) for i in again.interrupts] == [("approve-edited", {"paths": ["b"]})]
    await finish(agent, [again.interrupts[0].resume("y")])
    assert RUNS == [["b"]]


async def test_a_tool_restarted_with_edited_input_can_interrupt_again():
    @tool(context=True)
    def pay(tool_context: ToolContext, amount: int) -> str:
        """Pay."""
        tool_context.interrupt("confirm", reason={"amount": amount}, allow_edits=True)
        code = tool_context.interrupt("otp", reason={"amount": amount})
        RUNS.append((amount, code))
        return "paid"

    model = ScriptedModel([tool_call("pay", amount=500, tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[pay])
    [confirm] = (await agent.invoke_async("go")).interrupts
    [otp] = (await agent.invoke_async([confirm.restart(input={"amount": 100})])).interrupts
    assert otp.name == "otp"
    await finish(agent, [otp.resume("123")])
    assert RUNS == [(100, "123")]


async def test_a_hook_that_rewrites_tool_use_before_an_approval_hook_strands_pattern():
    def normalize(event: BeforeToolCallEvent) -> None:
        event.tool_use = {**event.tool_use, "input": {"paths": sorted(event.tool_use["input"]["paths"])}}

    model = ScriptedModel([tool_call("delete_files", paths=["b", "a"], tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[delete_files], hooks=[normalize, approve])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    assert interrupt.reason == {"paths": ["a", "b"]}
    await finish(agent, [answer(interrupt, "y")])  # the plain Strands flow
    assert RUNS == [["a", "b"]]


# -- answers that fit the published schema but not the pydantic type -----------------------------------------------


class Code(BaseModel):
    code: str

    @field_validator("code")
    @classmethod
    def six_digits(cls, value: str) -> str:
        if not (value.isdigit() and len(value) == 6):
            raise ValueError("must be 6 digits")
        return value


PYDANTIC_ONLY = (
    "at resume an answer is checked only against the published JSON Schema (interrupt/_state.py:280-281); the "
    "pydantic validation of response_type (validators, constraints JSON Schema cannot express) runs only when "
    "interrupt() is called again (_state.py:174-175), after the answer was applied: in a hook a pydantic "
    "ValidationError escapes the run and every corrected answer is then refused as ALREADY_ANSWERED (stuck); in a "
    "tool it becomes an error tool result instead of INVALID_PAYLOAD"
)


async def test_an_answer_failing_a_pydantic_validator_in_a_hook_is_an_invalid_payload():
    seen: list[Any] = []

    def gate(event: BeforeModelCallEvent) -> None:
        seen.append(event.interrupt("otp", response_type=Code))

    agent = Agent(model=ScriptedModel([text("ok")]), hooks=[gate])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    await refused(agent, [interrupt.resume({"code": "abc"})], InvalidPayloadError, "INVALID_PAYLOAD")
    await finish(agent, [interrupt.resume({"code": "123456"})])
    assert seen == [Code(code="123456")]


async def test_an_answer_failing_a_pydantic_validator_in_a_tool_is_an_invalid_payload():
    @tool(context=True)
    def verify(tool_context: ToolContext) -> str:
        """Verify."""
        return tool_context.interrupt("otp", response_type=Code).code

    agent = Agent(model=ScriptedModel([tool_call("verify", tool_use_id="t1"), text("ok")]), tools=[verify])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    await refused(agent, [interrupt.resume({"code": "abc"})], InvalidPayloadError, "INVALID_PAYLOAD")
    await finish(agent, [interrupt.resume({"code": "123456"})])
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "123456"}]


async def test_a_restart_with_non_json_metadata_is_an_invalid_payload():
    @tool(context=True)
    def pay(tool_context: ToolContext, amount: int) -> str:
        """Pay."""
        tool_context.interrupt("confirm")
        RUNS.append(tool_context.resumed_metadata)
        return "paid"

    agent = Agent(model=ScriptedModel([tool_call("pay", amount=5, tool_use_id="t1"), text("done")]), tools=[pay])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    forged = {
        "interruptResponse": {"interruptId": interrupt.id, "response": None, "action": "restart", "metadata": {1, 2}}
    }
    await refused(agent, [forged], InvalidPayloadError, "INVALID_PAYLOAD", exact=False)
    await finish(agent, [interrupt.restart(metadata={"ok": True})])
    assert RUNS == [{"ok": True}]
