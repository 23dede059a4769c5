"""Typed errors for every malformed input (issue 9, item 4): a stable ``code``, a bounded message saying what was
wrong, never a raw builtin exception (``KeyError``, ``TypeError``, ``RecursionError``...), and nothing changed."""

import importlib
import json
import os
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import answer
from hostile import UNSTORABLE, malformed_resumes, nested, raised
from pydantic import BaseModel, field_validator

from strandslike import Agent, InterruptError, NotInterruptedError, tool
from strandslike.hooks import BeforeModelCallEvent, BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.session import FileSessionManager
from strandslike.types.exceptions import StrandslikeError

RUNS: list[Any] = []


@pytest.fixture(autouse=True)
def _clear_runs():
    RUNS.clear()


@tool
def delete_files(paths: list[str]) -> str:
    """Delete files.

    Args:
        paths: The files.
    """
    RUNS.append(paths)
    return "deleted"


def approve(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "delete_files" and event.interrupt("approval", allow_edits=True) != "y":
        event.cancel_tool = "denied"


def delete_agent(**kwargs: Any) -> Agent:
    model = ScriptedModel([tool_call("delete_files", paths=["a"], tool_use_id="t1"), text("done")])
    return Agent(model=model, tools=[delete_files], hooks=[approve], **kwargs)


def check_typed(error: BaseException, code: str) -> None:
    """A refusal: a `StrandslikeError` with ``code``, and a message that is bounded and can be printed anywhere."""
    assert isinstance(error, StrandslikeError), f"untyped {type(error).__name__}: {error!s:.200}"
    assert error.code == code, f"{type(error).__name__} ({error.code}): {error!s:.300}"
    message = str(error)
    assert len(message) < 3000, message[:300]
    message.encode("utf-8")  # no lone surrogate
    for invisible in ("\n", "\u2028", "\u202e"):
        assert invisible not in message


# -- an agent that is not interrupted -----------------------------------------------------------------------------

NOT_INTERRUPTED = [
    [{"interruptResponse": "y"}],
    [{"interruptResponse": None}],
    [{"interruptResponse": {}}],
    [{"interruptResponse": {"response": 1}}],
    [{"interruptResponse": {"interruptId": ["x"], "response": 1}}],
    [{"interruptResponse": {"interruptId": {"a": 1}, "response": 1}}],
    [{"interruptResponse": {"interruptId": "x"}}],
    [{"interruptResponse": {"interruptId": "x", "response": 1}}, {"text": "hi"}],
    [{"text": "hi"}, {"interruptResponse": {"interruptId": "x", "response": 1}}],
    [{"interruptResponse": {"interruptId": "x", "response": nested(5000)}}],
    [{"interruptResponse": {"interruptId": "x", "response": 1, "action": nested(5000)}}],
]


@pytest.mark.parametrize("prompt", NOT_INTERRUPTED, ids=[f"case{index}" for index in range(len(NOT_INTERRUPTED))])
async def test_resume_blocks_for_an_agent_that_is_not_interrupted(tmp_path: Path, prompt: Any) -> None:
    """Raw KeyError/TypeError from agent/_resume.py and agent/_prompt.py before; now Strands' ValueError, typed."""
    agent = delete_agent(session_manager=FileSessionManager("s", storage_dir=tmp_path))
    with pytest.raises(NotInterruptedError) as caught:
        await agent.invoke_async(prompt)
    check_typed(caught.value, "NOT_INTERRUPTED")
    assert isinstance(caught.value, ValueError)
    assert agent.messages == []
    assert agent.model.calls == 0  # type: ignore[attr-defined]
    # The agent is untouched and works.
    [interrupt] = (await agent.invoke_async("go")).interrupts
    await agent.invoke_async([interrupt.resume("y")])
    assert RUNS == [["a"]]


# -- an interrupted agent ---------------------------------------------------------------------------------------------


def snapshot(agent: Agent) -> str:
    return json.dumps([agent._interrupt_state.to_dict(), agent.messages, agent.state.get()], sort_keys=True)


@pytest.mark.parametrize("with_session", [False, True], ids=["memory", "file-session"])
async def test_every_malformed_resume_is_refused_with_its_code_and_changes_nothing(
    tmp_path: Path, with_session: bool
) -> None:
    manager = FileSessionManager("s", storage_dir=tmp_path) if with_session else None
    agent = delete_agent(session_manager=manager)
    [interrupt] = (await agent.invoke_async("go")).interrupts
    before = snapshot(agent)
    disk = on_disk(tmp_path)
    for label, prompt, code in malformed_resumes(interrupt.id):
        if with_session and label == "other-session":
            prompt = [{"interruptResponse": {**prompt[0]["interruptResponse"], "sessionId": "other"}}]
        error = await raised(agent.invoke_async(prompt))
        try:
            check_typed(error, code)
        except AssertionError as failure:
            raise AssertionError(f"{label}: {failure}") from None
        assert snapshot(agent) == before, label
        assert on_disk(tmp_path) == disk, label
    assert RUNS == []
    assert agent.model.calls == 1  # type: ignore[attr-defined]
    done = await agent.invoke_async([interrupt.resume("y")])
    assert done.stop_reason == "end_turn"
    assert RUNS == [["a"]]


def on_disk(storage: Path) -> dict[str, bytes]:
    return {
        str(Path(root, name)): Path(root, name).read_bytes() for root, _, names in os.walk(storage) for name in names
    }


async def test_builtin_bases_are_kept_for_code_written_against_strands() -> None:
    agent = delete_agent()
    [interrupt] = (await agent.invoke_async("go")).interrupts
    with pytest.raises(KeyError):
        await agent.invoke_async([answer(type("I", (), {"id": "nope"})(), "y")])
    with pytest.raises(TypeError):
        await agent.invoke_async("new prompt")
    with pytest.raises(TypeError):
        await agent.invoke_async([{"interruptResponse": {"interruptId": 5, "response": "y"}}])
    with pytest.raises(TypeError):  # unstorable answers are TypeErrors (json.dumps') and ValueErrors (Strands' state)
        await agent.invoke_async([interrupt.resume({1: 2})])
    with pytest.raises(ValueError, match="must be JSON-serializable"):
        await agent.invoke_async([interrupt.resume({1: 2})])


async def test_a_misspelt_key_is_refused_not_ignored() -> None:
    """{"acton": "cancel"} silently meant "resume with None" before: the approval hook ran the tool."""
    agent = delete_agent()
    [interrupt] = (await agent.invoke_async("go")).interrupts
    with pytest.raises(InterruptError, match="unknown key 'acton'"):
        await agent.invoke_async(
            [{"interruptResponse": {"interruptId": interrupt.id, "response": 1, "acton": "cancel"}}]
        )
    assert RUNS == []


async def test_a_huge_unknown_id_gives_a_short_message() -> None:
    agent = delete_agent()
    await agent.invoke_async("go")
    with pytest.raises(InterruptError) as caught:
        await agent.invoke_async([{"interruptResponse": {"interruptId": "x" * 10_000_000, "response": 1}}])
    assert re.fullmatch(r"interrupt_id=<'x+\.\.\.x+'> \| no interrupt found", str(caught.value))


# -- schemas and types that cannot be checked the usual way ----------------------------------------------------------


async def test_a_self_referential_response_schema_refuses_instead_of_recursing() -> None:
    def gate(event: BeforeModelCallEvent) -> None:
        event.interrupt("count", response_type=int)

    agent = Agent(model=ScriptedModel([text("ok")]), hooks=[gate])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    # A schema that refers to itself endlessly (as a crafted or corrupted session could hold).
    agent._interrupt_state.interrupts[interrupt.id].response_schema = {"anyOf": [{"$ref": "#"}, {"type": "integer"}]}
    before = snapshot(agent)
    with pytest.raises(InterruptError) as caught:
        await agent.invoke_async([interrupt.resume(nested(90))])
    check_typed(caught.value, "INVALID_PAYLOAD")
    assert "could not be checked against the schema" in str(caught.value)
    assert snapshot(agent) == before


async def test_a_broken_response_schema_refuses_answers_but_still_allows_cancel() -> None:
    def gate(event: BeforeToolCallEvent) -> None:
        event.interrupt("count", response_type=int)

    agent = Agent(
        model=ScriptedModel([tool_call("delete_files", paths=["a"], tool_use_id="t1"), text("ok")]),
        tools=[delete_files],
        hooks=[gate],
    )
    [interrupt] = (await agent.invoke_async("go")).interrupts
    agent._interrupt_state.interrupts[interrupt.id].response_schema = {"type": 5}
    with pytest.raises(InterruptError) as caught:
        await agent.invoke_async([interrupt.resume(3)])
    check_typed(caught.value, "INVALID_PAYLOAD")
    done = await agent.invoke_async([interrupt.cancel()])
    assert done.stop_reason == "end_turn"
    assert RUNS == []


class Node(BaseModel):
    children: list["Node"] = []


async def test_a_deep_answer_to_a_recursive_response_type_never_raises_recursion_error() -> None:
    seen: list[Any] = []

    def gate(event: BeforeModelCallEvent) -> None:
        seen.append(event.interrupt("tree", response_type=Node))

    agent = Agent(model=ScriptedModel([text("ok")]), hooks=[gate])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    deep: dict[str, Any] = {"children": []}
    for _ in range(49):  # 99 levels of JSON, just within the stores' limit of 100
        deep = {"children": [deep]}
    for value in (deep, {"children": [deep]}, UNSTORABLE["deep-dict"]):
        try:
            done = await agent.invoke_async([interrupt.resume(value)])
        except InterruptError as error:
            check_typed(error, "INVALID_PAYLOAD")
        else:
            assert done.stop_reason == "end_turn"
            break
    assert len(seen) == 1


class Otp(BaseModel):
    code: str

    @field_validator("code")
    @classmethod
    def six_digits(cls, value: str) -> str:
        if not (value.isdigit() and len(value) == 6):
            raise ValueError("must be 6 digits")
        return value


def otp_gate(seen: list[Any]) -> Any:
    def gate(event: BeforeModelCallEvent) -> None:
        seen.append(event.interrupt("otp", response_type=Otp))

    return gate


async def test_a_restored_typed_interrupt_checks_its_validators_before_anything_is_applied(tmp_path: Path) -> None:
    """The schema says only "a string"; the validator says six digits. A fresh agent (a server's next request) used
    to apply the answer, fail inside the hook, and persist the rejection; now it refuses before anything."""
    seen: list[Any] = []
    first = Agent(
        model=ScriptedModel([text("ok")]),
        hooks=[otp_gate(seen)],
        session_manager=FileSessionManager("s", storage_dir=tmp_path),
    )
    [interrupt] = (await first.invoke_async("go")).interrupts
    first.session_manager.close()

    fresh = Agent(
        model=ScriptedModel([text("ok")]),
        hooks=[otp_gate(seen)],
        session_manager=FileSessionManager("s", storage_dir=tmp_path),
    )
    before, disk = snapshot(fresh), on_disk(tmp_path)
    with pytest.raises(InterruptError) as caught:
        await fresh.invoke_async([interrupt.resume({"code": "abc"})])
    check_typed(caught.value, "INVALID_PAYLOAD")
    assert "must be 6 digits" in str(caught.value)
    assert snapshot(fresh) == before
    assert on_disk(tmp_path) == disk
    assert seen == []
    done = await fresh.invoke_async([interrupt.resume({"code": "123456"})])
    assert done.stop_reason == "end_turn"
    assert seen == [Otp(code="123456")]


async def test_a_type_reference_in_a_session_never_imports_anything(tmp_path: Path) -> None:
    """The reference is looked up among loaded modules only, and only trusted while it still gives the schema."""
    from strandslike.interrupt._response_types import restored_validator

    assert restored_validator("os:system", {"type": "string"}) is None  # not a type
    assert restored_validator("not_a_loaded_module_xyz:Thing", {}) is None
    assert "not_a_loaded_module_xyz" not in __import__("sys").modules
    assert restored_validator(f"{Otp.__module__}:Otp", {"type": "integer"}) is None  # the schema changed
    assert restored_validator(f"{Otp.__module__}:Otp", Otp.model_json_schema()) is not None


# -- codes ----------------------------------------------------------------------------------------------------------


def _all_subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _all_subclasses(sub)
    return found


# Errors a caller of an agent or orchestrator may have to act on; each has its own code, listed in the README.
LISTED = {
    "EventStreamDecodeError",
    "InvalidIdError",
    "InvalidModelConfigError",
    "InvalidRetryStrategyError",
    "ProviderNotInstalledError",
    "StructuredOutputValidationError",
    "InvalidInterruptError",
    "InvalidPromptError",
    "InvalidStateKeyError",
    "ModelNotConfiguredError",
    "NotJSONSerializableError",
    "SessionConflictError",
    "SessionCorruptError",
    "ToolNameConflictError",
}


def test_every_error_has_a_stable_code_and_the_readme_lists_them() -> None:
    import strandslike.interrupt

    # Packages export their names lazily: import every module so that every error class is defined.
    for module in pkgutil.walk_packages(strandslike.__path__, "strandslike."):
        importlib.import_module(module.name)

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Interrupts beyond Strands", 1)[1].split("\n## ", 1)[0]
    interrupt_errors = _all_subclasses(strandslike.interrupt.InterruptError)
    for error in _all_subclasses(StrandslikeError):
        assert re.fullmatch(r"[A-Z][A-Z_]+", error.code), (error, error.code)
        if error.__module__ == "strandslike.types.exceptions":
            assert error.code != "STRANDSLIKE_ERROR", f"{error.__name__} has no code of its own"
        if error in interrupt_errors or error.__name__ in LISTED:
            assert error.code != "STRANDSLIKE_ERROR", f"{error.__name__} has no code of its own"
            assert f"`{error.code}`" in section, f"the README does not list {error.code} ({error.__name__})"
    assert {error.__name__ for error in _all_subclasses(StrandslikeError)} >= LISTED
