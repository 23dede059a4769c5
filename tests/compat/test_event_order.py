"""Lifecycle event order and the writable event fields, against section 2 of the Strands behaviour reference.

Every expectation here was also checked against the real strands-agents 1.62 (same scripts, Strands' own model
replaced by an equivalent scripted one), except where the test says strandslike differs on purpose (README,
"Where strandslike differs from Strands on purpose").
"""

import json
from typing import Any

import pytest

import strandslike.hooks as hooks_module
from strandslike import Agent, tool
from strandslike.hooks import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    AfterToolsEvent,
    BaseHookEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    BeforeToolsEvent,
    HookRegistry,
    MessageAddedEvent,
)
from strandslike.models import ScriptedModel, text, tool_call, turn

LOG: list[str] = []

EVENT_CLASSES: list[type[BaseHookEvent]] = [
    obj
    for name in hooks_module.__all__
    if isinstance(obj := getattr(hooks_module, name), type) and issubclass(obj, BaseHookEvent)
]


class Recorder:
    """Registers one recording callback on every event class exported by `strandslike.hooks`."""

    def __init__(self) -> None:
        self.events: list[BaseHookEvent] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        for event_class in EVENT_CLASSES:
            registry.add_callback(event_class, self.record)

    def record(self, event: BaseHookEvent) -> None:
        self.events.append(event)
        LOG.append(label(event))

    def of(self, event_class: type[BaseHookEvent]) -> list[Any]:
        return [event for event in self.events if type(event) is event_class]


def label(event: BaseHookEvent) -> str:
    name = type(event).__name__
    if isinstance(event, MessageAddedEvent):
        first = next(iter(event.message["content"][0]), "empty") if event.message["content"] else "empty"
        return f"{name}({event.message['role']} {first})"
    return name


@tool
def delete_files(paths: list[str]) -> bool:
    """Delete files."""
    LOG.append("tool delete_files")
    return True


@tool
def archive_files(paths: list[str]) -> str:
    """Archive files."""
    LOG.append("tool archive_files")
    return "archived"


class ToolFailure(Exception):
    pass


@tool
def flaky(mode: str) -> str:
    """Fail in the given way."""
    LOG.append(f"tool flaky {mode}")
    if mode == "value":
        raise ValueError("bad input")
    if mode == "custom":
        raise ToolFailure("disk on fire")
    return "fine"


class HookFailure(RuntimeError):
    pass


@pytest.fixture(autouse=True)
def _clear_log():
    LOG.clear()


def one_tool_model() -> ScriptedModel:
    return ScriptedModel([tool_call("delete_files", tool_use_id="t1", paths=["a"]), text("done")])


def make_agent(model: ScriptedModel, *hooks: Any) -> tuple[Agent, Recorder]:
    recorder = Recorder()
    agent = Agent(model=model, tools=[delete_files, archive_files, flaky], hooks=[recorder, *hooks])
    return agent, recorder


ONE_TOOL_ORDER = [
    "AgentInitializedEvent",
    "BeforeInvocationEvent",
    "MessageAddedEvent(user text)",
    "BeforeModelCallEvent",
    "AfterModelCallEvent",
    "MessageAddedEvent(assistant toolUse)",
    "BeforeToolsEvent",
    "BeforeToolCallEvent",
    "tool delete_files",
    "AfterToolCallEvent",
    "AfterToolsEvent",
    "MessageAddedEvent(user toolResult)",
    "BeforeModelCallEvent",
    "AfterModelCallEvent",
    "MessageAddedEvent(assistant text)",
    "AfterInvocationEvent",
]


# ------------------------------------------------------------------------------------ exact order ----


async def test_exact_order_for_one_invocation_with_one_tool_call():
    agent, recorder = make_agent(one_tool_model())

    result = await agent.invoke_async("go")

    assert result.stop_reason == "end_turn"
    assert LOG == ONE_TOOL_ORDER
    # Dispatch is by exact class: the base classes got nothing.
    assert not [event for event in recorder.events if type(event) in (BaseHookEvent, hooks_module.HookEvent)]
    (before,) = recorder.of(BeforeInvocationEvent)
    assert before.messages == [{"role": "user", "content": [{"text": "go"}]}]
    (after,) = recorder.of(AfterInvocationEvent)
    assert after.result is result
    # AfterModelCallEvent fires before the message is appended.
    first_after_model = recorder.of(AfterModelCallEvent)[0]
    assert first_after_model.stop_response.stop_reason == "tool_use"
    assert first_after_model.stop_response.message is agent.messages[1]
    (after_tools,) = recorder.of(AfterToolsEvent)
    assert after_tools.message is agent.messages[2]


async def test_resume_call_has_no_user_message_and_empty_before_invocation_messages():
    def approve(event: BeforeToolCallEvent) -> None:
        if event.interrupt("approval", reason={"paths": event.tool_use["input"]["paths"]}) != "y":
            event.cancel_tool = True

    model = one_tool_model()
    agent, recorder = make_agent(model, approve)

    paused = await agent.invoke_async("go")

    assert paused.stop_reason == "interrupt"
    assert LOG == [
        "AgentInitializedEvent",
        "BeforeInvocationEvent",
        "MessageAddedEvent(user text)",
        "BeforeModelCallEvent",
        "AfterModelCallEvent",
        "MessageAddedEvent(assistant toolUse)",
        "BeforeToolsEvent",
        "BeforeToolCallEvent",
        # no AfterToolCallEvent for the interrupted tool, but AfterToolsEvent fires (with no results)
        "AfterToolsEvent",
        "AfterInvocationEvent",
    ]
    assert recorder.of(AfterToolsEvent)[0].message == {"role": "user", "content": []}
    assert recorder.of(AfterInvocationEvent)[0].result is paused
    LOG.clear()
    recorder.events.clear()

    resumed = await agent.invoke_async(
        [{"interruptResponse": {"interruptId": paused.interrupts[0].id, "response": "y"}}]
    )

    assert resumed.stop_reason == "end_turn"
    assert LOG == [
        "BeforeInvocationEvent",
        "BeforeToolsEvent",
        "BeforeToolCallEvent",
        "tool delete_files",
        "AfterToolCallEvent",
        "AfterToolsEvent",
        "MessageAddedEvent(user toolResult)",
        "BeforeModelCallEvent",
        "AfterModelCallEvent",
        "MessageAddedEvent(assistant text)",
        "AfterInvocationEvent",
    ]
    assert recorder.of(BeforeInvocationEvent)[0].messages == []
    assert model.calls == 2
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"]


# ------------------------------------------------------------------------------------- cancelling ----


@pytest.mark.parametrize(("cancel", "expected_text"), [(True, "Tool cancelled by hook"), ("not now", "not now")])
async def test_before_tools_cancel_gives_every_tool_an_error_and_after_tools_still_fires(
    cancel: bool | str, expected_text: str
):
    def cancel_batch(event: BeforeToolsEvent) -> None:
        event.cancel = cancel

    model = ScriptedModel(
        [
            turn(
                tool_call("delete_files", tool_use_id="t1", paths=["a"]),
                tool_call("archive_files", tool_use_id="t2", paths=["b"]),
            ),
            text("done"),
        ]
    )
    agent, recorder = make_agent(model, cancel_batch)

    result = await agent.invoke_async("go")

    assert result.stop_reason == "end_turn"
    assert result.message == {"role": "assistant", "content": [{"text": "done"}]}
    expected = {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": tid, "status": "error", "content": [{"text": expected_text}]}}
            for tid in ("t1", "t2")
        ],
    }
    assert agent.messages[2] == expected
    assert LOG[6:10] == [
        "BeforeToolsEvent",
        "AfterToolsEvent",
        "MessageAddedEvent(user toolResult)",
        "BeforeModelCallEvent",
    ]
    assert "tool delete_files" not in LOG
    assert "BeforeToolCallEvent" not in LOG
    assert recorder.of(AfterToolsEvent)[0].message == expected
    assert model.calls == 2


@pytest.mark.parametrize(("cancel", "expected_text"), [(True, "invocation denied by hook"), ("closed", "closed")])
async def test_before_invocation_cancel_ends_the_pass_without_a_model_call(cancel: bool | str, expected_text: str):
    def deny(event: BeforeInvocationEvent) -> None:
        event.cancel = cancel

    model = one_tool_model()
    agent, recorder = make_agent(model, deny)

    result = await agent.invoke_async("go")

    assert result.stop_reason == "end_turn"
    assert result.message == {"role": "assistant", "content": [{"text": expected_text}]}
    json.dumps(result.message)
    assert agent.messages == [result.message]  # the prompt is not appended (as in Strands)
    assert model.calls == 0
    assert LOG == [
        "AgentInitializedEvent",
        "BeforeInvocationEvent",
        "MessageAddedEvent(assistant text)",
        "AfterInvocationEvent",
    ]
    assert recorder.of(AfterInvocationEvent)[0].result is None


@pytest.mark.parametrize(
    ("cancel", "expected_text"), [(True, "model call denied by hook"), ("over budget", "over budget")]
)
async def test_before_model_call_cancel_synthesises_the_assistant_message(cancel: bool | str, expected_text: str):
    def deny(event: BeforeModelCallEvent) -> None:
        event.cancel = cancel

    model = one_tool_model()
    agent, recorder = make_agent(model, deny)

    result = await agent.invoke_async("go")

    assert result.stop_reason == "end_turn"
    assert result.message == {"role": "assistant", "content": [{"text": expected_text}]}
    assert agent.messages == [{"role": "user", "content": [{"text": "go"}]}, result.message]
    assert model.calls == 0
    assert LOG == [
        "AgentInitializedEvent",
        "BeforeInvocationEvent",
        "MessageAddedEvent(user text)",
        "BeforeModelCallEvent",
        "AfterModelCallEvent",
        "MessageAddedEvent(assistant text)",
        "AfterInvocationEvent",
    ]
    (after_model,) = recorder.of(AfterModelCallEvent)
    assert after_model.stop_response.message == result.message
    assert after_model.stop_response.stop_reason == "end_turn"
    assert recorder.of(AfterInvocationEvent)[0].result is result


@pytest.mark.parametrize(("cancel_tool", "expected_text"), [(True, "tool cancelled by user"), ("no", "no")])
async def test_cancel_tool_skips_the_tool_and_reports_the_cancellation(cancel_tool: bool | str, expected_text: str):
    def cancel(event: BeforeToolCallEvent) -> None:
        event.cancel_tool = cancel_tool

    agent, recorder = make_agent(one_tool_model(), cancel)

    result = await agent.invoke_async("go")

    assert result.stop_reason == "end_turn"
    assert "tool delete_files" not in LOG
    assert agent.messages[2]["content"] == [
        {"toolResult": {"toolUseId": "t1", "status": "error", "content": [{"text": expected_text}]}}
    ]
    (after,) = recorder.of(AfterToolCallEvent)
    assert after.cancel_message == expected_text
    assert after.selected_tool is None
    assert after.exception is None
    assert after.duration is None
    assert after.result == {"toolUseId": "t1", "status": "error", "content": [{"text": expected_text}]}


async def test_retry_is_ignored_for_a_cancelled_tool():
    def cancel(event: BeforeToolCallEvent) -> None:
        event.cancel_tool = True

    def retry(event: AfterToolCallEvent) -> None:
        event.retry = True

    agent, recorder = make_agent(one_tool_model(), cancel, retry)

    result = await agent.invoke_async("go")

    assert result.stop_reason == "end_turn"
    assert len(recorder.of(AfterToolCallEvent)) == 1
    assert len(recorder.of(BeforeToolCallEvent)) == 1


# ------------------------------------------------------------------------------------------ retry ----


async def test_after_model_call_retry_calls_the_model_again_and_discards_the_response():
    attempts: list[str] = []

    def retry_once(event: AfterModelCallEvent) -> None:
        attempts.append(event.stop_response.message["content"][0]["text"])
        if len(attempts) == 1:
            event.retry = True

    model = ScriptedModel([text("first draft"), text("second draft")])
    agent, _ = make_agent(model, retry_once)

    result = await agent.invoke_async("go")

    assert model.calls == 2
    assert attempts == ["first draft", "second draft"]
    assert result.stop_reason == "end_turn"
    assert result.message == {"role": "assistant", "content": [{"text": "second draft"}]}
    assert agent.messages == [{"role": "user", "content": [{"text": "go"}]}, result.message]
    # The retried request carried the same history (the discarded answer was never appended).
    assert model.requests[1].messages == model.requests[0].messages


async def test_after_model_call_retry_after_a_model_error():
    seen: list[Any] = []

    def retry_on_error(event: AfterModelCallEvent) -> None:
        seen.append(event.exception)
        if event.exception is not None:
            event.retry = True

    model = ScriptedModel([ConnectionError("throttled"), text("recovered")])
    agent, _ = make_agent(model, retry_on_error)

    result = await agent.invoke_async("go")

    assert model.calls == 2
    assert isinstance(seen[0], ConnectionError)
    assert seen[1] is None
    assert result.message == {"role": "assistant", "content": [{"text": "recovered"}]}


async def test_before_model_call_fires_before_each_retried_model_call():
    """Reference section 2: BeforeModelCallEvent fires before each model call, retries included (Strands 1.62)."""

    def retry_once(event: AfterModelCallEvent) -> None:
        if event.agent.model.calls == 1:
            event.retry = True

    model = ScriptedModel([text("first"), text("second")])
    agent, _ = make_agent(model, retry_once)

    await agent.invoke_async("go")

    assert LOG == [
        "AgentInitializedEvent",
        "BeforeInvocationEvent",
        "MessageAddedEvent(user text)",
        "BeforeModelCallEvent",
        "AfterModelCallEvent",
        "BeforeModelCallEvent",
        "AfterModelCallEvent",
        "MessageAddedEvent(assistant text)",
        "AfterInvocationEvent",
    ]


async def test_after_tool_call_retry_runs_the_tool_again():
    results: list[Any] = []

    def retry_once(event: AfterToolCallEvent) -> None:
        results.append(event.result)
        if len(results) == 1:
            event.retry = True

    agent, recorder = make_agent(one_tool_model(), retry_once)

    result = await agent.invoke_async("go")

    assert result.stop_reason == "end_turn"
    assert LOG.count("tool delete_files") == 2
    assert len(recorder.of(AfterToolCallEvent)) == 2
    assert len(recorder.of(AfterToolsEvent)) == 1
    assert agent.messages[2]["content"] == [
        {"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": "true"}]}}
    ]


async def test_after_tool_call_retry_fires_before_tool_call_again():
    """Strands 1.62 re-enters its whole hook loop (BeforeToolCallEvent -> tool -> AfterToolCallEvent) per attempt."""

    def retry_once(event: AfterToolCallEvent) -> None:
        if LOG.count("tool delete_files") == 1:
            event.retry = True

    agent, _ = make_agent(one_tool_model(), retry_once)

    await agent.invoke_async("go")

    start = LOG.index("BeforeToolsEvent")
    assert LOG[start : LOG.index("AfterToolsEvent") + 1] == [
        "BeforeToolsEvent",
        "BeforeToolCallEvent",
        "tool delete_files",
        "AfterToolCallEvent",
        "BeforeToolCallEvent",
        "tool delete_files",
        "AfterToolCallEvent",
        "AfterToolsEvent",
    ]


# ----------------------------------------------------------------------------- rewriting the call ----


async def test_after_tool_call_result_replacement_reaches_the_message_and_the_model():
    def redact(event: AfterToolCallEvent) -> None:
        event.result = {**event.result, "content": [{"text": "[redacted]"}]}

    model = one_tool_model()
    agent, _ = make_agent(model, redact)

    await agent.invoke_async("go")

    expected = [{"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": "[redacted]"}]}}]
    assert agent.messages[2]["content"] == expected
    assert model.requests[1].messages[-1]["content"] == expected


async def test_replacing_tool_use_with_a_new_name_re_resolves_the_tool():
    def reroute(event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] == "delete_files":
            event.tool_use = {**event.tool_use, "name": "archive_files"}

    agent, recorder = make_agent(one_tool_model(), reroute)

    await agent.invoke_async("go")

    assert "tool archive_files" in LOG
    assert "tool delete_files" not in LOG
    (after,) = recorder.of(AfterToolCallEvent)
    assert after.selected_tool.tool_name == "archive_files"
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "archived"}]


async def test_renaming_tool_use_in_place_re_resolves_the_tool():
    """Reference: if only tool_use["name"] changes the tool is re-resolved; Strands 1.62 does so for in-place edits."""

    def reroute(event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] == "delete_files":
            event.tool_use["name"] = "archive_files"

    agent, recorder = make_agent(one_tool_model(), reroute)

    await agent.invoke_async("go")

    assert "tool delete_files" not in LOG
    assert "tool archive_files" in LOG
    (after,) = recorder.of(AfterToolCallEvent)
    assert after.selected_tool.tool_name == "archive_files"
    # The history names the tool that ran (the tool use dict was edited in place).
    assert agent.messages[1]["content"][0]["toolUse"]["name"] == "archive_files"
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "archived"}]


# ------------------------------------------------------------------------------------- exceptions ----


async def test_after_model_call_callback_error_runs_once_and_keeps_its_type():
    calls: list[Any] = []

    def explode(event: AfterModelCallEvent) -> None:
        calls.append(event.exception)
        raise HookFailure("audit log unavailable")

    model = one_tool_model()
    agent, recorder = make_agent(model, explode)

    with pytest.raises(HookFailure, match="audit log unavailable"):
        await agent.invoke_async("go")

    assert calls == [None]  # Strands 1.62 dispatches the event a second time with exception=e
    # After* callbacks run in reverse registration order, so the raising one ran before the recorder (registered
    # first) and stopped the dispatch: the recorder never saw the event, in either dispatch.
    assert recorder.of(AfterModelCallEvent) == []
    assert model.calls == 1
    assert len(recorder.of(AfterInvocationEvent)) == 1
    assert recorder.of(AfterInvocationEvent)[0].result is None


async def test_after_tool_call_callback_error_runs_once_and_keeps_its_type():
    calls: list[Any] = []

    def explode(event: AfterToolCallEvent) -> None:
        calls.append((event.result["status"], event.exception))
        raise HookFailure("audit log unavailable")

    agent, recorder = make_agent(one_tool_model(), explode)

    with pytest.raises(HookFailure, match="audit log unavailable"):  # Strands wraps it in EventLoopException
        await agent.invoke_async("go")

    assert calls == [("success", None)]  # Strands 1.62 runs it again with an "Error: ..." result
    assert LOG.count("tool delete_files") == 1
    assert recorder.of(AfterToolCallEvent) == []  # the raising callback ran first (reverse order) and stopped it
    assert len(recorder.of(AfterInvocationEvent)) == 1


@pytest.mark.parametrize(
    ("mode", "exception_type", "expected_text"),
    [("value", ValueError, "Error: bad input"), ("custom", ToolFailure, "Error: ToolFailure - disk on fire")],
)
async def test_after_tool_call_exception_carries_the_tools_exception(
    mode: str, exception_type: type[Exception], expected_text: str
):
    model = ScriptedModel([tool_call("flaky", tool_use_id="f1", mode=mode), text("noted")])
    agent, recorder = make_agent(model)

    result = await agent.invoke_async("go")

    assert result.stop_reason == "end_turn"
    (after,) = recorder.of(AfterToolCallEvent)
    assert type(after.exception) is exception_type
    assert after.result == {"toolUseId": "f1", "status": "error", "content": [{"text": expected_text}]}
    assert agent.messages[2]["content"] == [{"toolResult": after.result}]


async def test_successful_tool_has_no_exception():
    model = ScriptedModel([tool_call("flaky", tool_use_id="f1", mode="ok"), text("noted")])
    agent, recorder = make_agent(model)

    await agent.invoke_async("go")

    (after,) = recorder.of(AfterToolCallEvent)
    assert after.exception is None
    assert after.selected_tool.tool_name == "flaky"
    assert after.duration is not None
    assert after.duration >= 0


# ------------------------------------------------------------------------------- tool interrupts ----


async def test_tool_interrupt_skips_after_tool_call_and_after_tools_holds_only_completed_results():
    from strandslike import ToolContext

    @tool(context=True)
    def ask(tool_context: ToolContext, question: str) -> str:
        """Ask the user."""
        LOG.append("tool ask")
        return tool_context.interrupt("question", reason=question)

    model = ScriptedModel(
        [
            turn(
                tool_call("ask", tool_use_id="t1", question="which?"),
                tool_call("archive_files", tool_use_id="t2", paths=["b"]),
            ),
            text("done"),
        ]
    )
    recorder = Recorder()
    agent = Agent(model=model, tools=[ask, archive_files], hooks=[recorder])

    paused = await agent.invoke_async("go")

    assert paused.stop_reason == "interrupt"
    assert [(i.name, i.reason) for i in paused.interrupts] == [("question", "which?")]
    assert [e.tool_use["toolUseId"] for e in recorder.of(AfterToolCallEvent)] == ["t2"]
    (after_tools,) = recorder.of(AfterToolsEvent)
    assert [b["toolResult"]["toolUseId"] for b in after_tools.message["content"]] == ["t2"]
    assert "MessageAddedEvent(user toolResult)" not in LOG
    recorder.events.clear()
    LOG.clear()

    resumed = await agent.invoke_async(
        [{"interruptResponse": {"interruptId": paused.interrupts[0].id, "response": "the blue one"}}]
    )

    assert resumed.stop_reason == "end_turn"
    assert LOG == [
        "BeforeInvocationEvent",
        "BeforeToolsEvent",
        "BeforeToolCallEvent",
        "tool ask",  # only the interrupted tool runs again
        "AfterToolCallEvent",
        "AfterToolsEvent",
        "MessageAddedEvent(user toolResult)",
        "BeforeModelCallEvent",
        "AfterModelCallEvent",
        "MessageAddedEvent(assistant text)",
        "AfterInvocationEvent",
    ]
    # strandslike keeps tool-use order on resume (Strands 1.62 puts the completed result first).
    assert agent.messages[2]["content"] == [
        {"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": "the blue one"}]}},
        {"toolResult": {"toolUseId": "t2", "status": "success", "content": [{"text": "archived"}]}},
    ]
    assert recorder.of(AfterToolsEvent)[0].message is agent.messages[2]
    assert model.calls == 2
