"""Interventions (issue 11, item 2): each action's semantics, as Strands 1.62 applies it."""

import logging
from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.hooks import AfterModelCallEvent, AfterToolCallEvent, BeforeToolCallEvent
from strandslike.interventions import Confirm, Deny, Guide, InterventionHandler, Proceed, Transform
from strandslike.models import ScriptedModel, text, tool_call

RUNS: list[Any] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    RUNS.clear()


@tool
def delete_files(paths: list[str]) -> str:
    """Delete files.

    Args:
        paths: The files.
    """
    RUNS.append(paths)
    return f"deleted {len(paths)}"


def result_text(model: ScriptedModel, request: int = 1) -> str:
    """The text of the (first) tool result the model received in request ``request``."""
    block = model.requests[request].messages[-1]["content"][0]["toolResult"]
    return " ".join(part.get("text", "") for part in block["content"])


def handler(name: str, **methods: Any) -> InterventionHandler:
    return type(name.title().replace("-", ""), (InterventionHandler,), {"name": name, **methods})()  # type: ignore[no-any-return]


def one_delete() -> ScriptedModel:
    return ScriptedModel([tool_call("delete_files", paths=["a"]), text("ok")])


async def test_deny_before_a_tool_call_reaches_the_model_and_skips_the_tool():
    model = one_delete()
    agent = Agent(
        model=model,
        tools=[delete_files],
        interventions=[handler("auth", before_tool_call=lambda self, event: Deny(reason="not authorized"))],
    )
    result = await agent.invoke_async("go")
    assert result.stop_reason == "end_turn"
    assert RUNS == []
    assert result_text(model) == "DENIED: not authorized"


async def test_deny_short_circuits_the_handlers_after_it():
    asked: list[str] = []

    def record(name: str, action: Any) -> Any:
        def method(self: Any, event: Any) -> Any:
            asked.append(name)
            return action

        return method

    agent = Agent(
        model=one_delete(),
        tools=[delete_files],
        interventions=[
            handler("first", before_tool_call=record("first", Proceed())),
            handler("second", before_tool_call=record("second", Deny(reason="no"))),
            handler("third", before_tool_call=record("third", Proceed())),
        ],
    )
    await agent.invoke_async("go")
    assert asked == ["first", "second"]


async def test_deny_before_an_invocation_ends_it_without_a_model_call():
    model = ScriptedModel([text("never")])
    agent = Agent(model=model, interventions=[handler("gate", before_invocation=lambda s, e: Deny(reason="closed"))])
    result = await agent.invoke_async("go")
    assert result.stop_reason == "end_turn"
    assert result.message["content"] == [{"text": "DENIED: closed"}]
    assert model.calls == 0


async def test_deny_before_a_model_call_replaces_the_answer():
    model = ScriptedModel([text("never")])
    agent = Agent(model=model, interventions=[handler("gate", before_model_call=lambda s, e: Deny(reason="budget"))])
    result = await agent.invoke_async("go")
    assert result.message["content"] == [{"text": "DENIED: budget"}]
    assert model.calls == 0


async def test_guides_before_a_tool_call_are_gathered_from_every_handler():
    model = one_delete()
    agent = Agent(
        model=model,
        tools=[delete_files],
        interventions=[
            handler("style", before_tool_call=lambda s, e: Guide(feedback="use archive instead")),
            handler("noop", before_tool_call=lambda s, e: Proceed()),
            handler("scope", before_tool_call=lambda s, e: Guide(feedback="one file at a time")),
        ],
    )
    await agent.invoke_async("go")
    assert RUNS == []
    assert result_text(model) == "GUIDANCE: [style] use archive instead\n[scope] one file at a time"


async def test_guide_before_a_model_call_is_injected_as_a_user_message():
    model = ScriptedModel([text("ok")])
    agent = Agent(
        model=model, interventions=[handler("tone", before_model_call=lambda s, e: Guide(feedback="be brief"))]
    )
    await agent.invoke_async("hello")
    assert model.requests[0].messages[-1] == {"role": "user", "content": [{"text": "[tone] be brief"}]}


async def test_guide_after_a_model_call_retries_with_the_feedback():
    calls: list[int] = []

    def after_model_call(self: Any, event: AfterModelCallEvent) -> Any:
        calls.append(1)
        if len(calls) == 1:
            return Guide(feedback="answer in French")
        return Proceed()

    model = ScriptedModel([text("hello"), text("bonjour")])
    agent = Agent(model=model, interventions=[handler("lang", after_model_call=after_model_call)])
    result = await agent.invoke_async("greet")
    assert result.message["content"] == [{"text": "bonjour"}]
    assert model.requests[1].messages[-1] == {"role": "user", "content": [{"text": "[lang] answer in French"}]}
    assert [m["content"][0]["text"] for m in agent.messages if m["role"] == "assistant"] == ["bonjour"]


async def test_transform_replaces_the_tool_input_before_the_call():
    def before_tool_call(self: Any, event: BeforeToolCallEvent) -> Transform:
        def narrow(e: Any) -> None:
            e.tool_use["input"]["paths"] = ["/tmp/a"]

        return Transform(apply=narrow)

    agent = Agent(
        model=one_delete(), tools=[delete_files], interventions=[handler("narrow", before_tool_call=before_tool_call)]
    )
    await agent.invoke_async("go")
    assert RUNS == [["/tmp/a"]]


async def test_transform_replaces_the_tool_result_after_the_call():
    def after_tool_call(self: Any, event: AfterToolCallEvent) -> Transform:
        def redact(e: Any) -> None:
            e.result = {**e.result, "content": [{"text": "[redacted]"}]}

        return Transform(apply=redact)

    model = one_delete()
    agent = Agent(model=model, tools=[delete_files], interventions=[handler("redact", after_tool_call=after_tool_call)])
    await agent.invoke_async("go")
    assert RUNS == [["a"]]
    assert result_text(model) == "[redacted]"


async def test_later_handlers_see_what_a_transform_changed():
    seen: list[Any] = []

    def transform(self: Any, event: Any) -> Transform:
        return Transform(apply=lambda e: e.tool_use["input"].update(paths=["b"]))

    def observe(self: Any, event: Any) -> Proceed:
        seen.append(list(event.tool_use["input"]["paths"]))
        return Proceed()

    agent = Agent(
        model=one_delete(),
        tools=[delete_files],
        interventions=[handler("t", before_tool_call=transform), handler("o", before_tool_call=observe)],
    )
    await agent.invoke_async("go")
    assert seen == [["b"]]


async def test_confirm_pauses_and_the_answer_decides():
    def before_tool_call(self: Any, event: Any) -> Confirm:
        return Confirm(prompt=f"Delete {event.tool_use['input']['paths']}?")

    for answer, runs, text_part in (("y", [["a"]], "deleted 1"), ("no", [], "CONFIRMATION_FAILED: Delete ['a']?")):
        RUNS.clear()
        model = one_delete()
        agent = Agent(
            model=model, tools=[delete_files], interventions=[handler("guard", before_tool_call=before_tool_call)]
        )
        paused = await agent.invoke_async("go")
        assert paused.stop_reason == "interrupt"
        (interrupt,) = paused.interrupts
        assert (interrupt.name, interrupt.reason) == ("guard", "Delete ['a']?")
        assert agent.pending_interrupts == [interrupt]
        done = await agent.invoke_async([interrupt.resume(answer)])
        assert done.stop_reason == "end_turn"
        assert RUNS == runs
        assert result_text(model) == text_part
        assert agent.pending_interrupts == []


async def test_confirm_with_a_preemptive_response_does_not_pause():
    def before_tool_call(self: Any, event: Any) -> Confirm:
        return Confirm(prompt="ok?", response="yes")

    agent = Agent(
        model=one_delete(), tools=[delete_files], interventions=[handler("auto", before_tool_call=before_tool_call)]
    )
    result = await agent.invoke_async("go")
    assert result.stop_reason == "end_turn"
    assert RUNS == [["a"]]


async def test_confirm_with_a_custom_evaluate():
    def before_tool_call(self: Any, event: Any) -> Confirm:
        return Confirm(prompt="ok?", evaluate=lambda answer: answer == {"approve": True})

    agent = Agent(
        model=one_delete(), tools=[delete_files], interventions=[handler("g", before_tool_call=before_tool_call)]
    )
    paused = await agent.invoke_async("go")
    await agent.invoke_async([paused.interrupts[0].resume({"approve": True})])
    assert RUNS == [["a"]]


async def test_confirm_details_are_published_with_the_interrupt():
    def before_tool_call(self: Any, event: Any) -> Confirm:
        return Confirm(prompt="ok?", message="Delete a?", allow_edits=True, metadata={"risk": "high"})

    agent = Agent(
        model=one_delete(), tools=[delete_files], interventions=[handler("g", before_tool_call=before_tool_call)]
    )
    paused = await agent.invoke_async("go")
    (interrupt,) = paused.interrupts
    assert (interrupt.message, interrupt.metadata, interrupt.tool_use_id) == (
        "Delete a?",
        {"risk": "high"},
        "tooluse_1",
    )
    await agent.invoke_async([interrupt.restart(input={"paths": ["b"]})])
    assert RUNS == [["b"]]


async def test_actions_that_do_not_apply_to_an_event_warn(caplog):
    model = ScriptedModel([text("ok")])
    agent = Agent(model=model, interventions=[handler("odd", before_model_call=lambda s, e: Confirm(prompt="?"))])
    with caplog.at_level(logging.WARNING):
        result = await agent.invoke_async("go")
    assert result.message["content"] == [{"text": "ok"}]
    assert "handler=<odd>, event=<before_model_call> | confirm has no effect" in caplog.text
