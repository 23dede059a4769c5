"""Richer interrupts (issue 5, point 1): the new fields, ``kind``, ``tool_use_id``, ``response_type``, expiry."""

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from helpers import answer
from pydantic import BaseModel

from strandslike import Agent, Interrupt, InvalidPayloadError, ToolContext, tool
from strandslike.hooks import BeforeModelCallEvent, BeforeToolCallEvent, BeforeToolsEvent
from strandslike.models import ScriptedModel, text, tool_call

STRANDS_KEYS = {"id", "name", "reason", "response"}


class Approval(BaseModel):
    approved: bool
    note: str = ""


@tool
def plain(x: int) -> int:
    """Return x."""
    return x


def model_hook(**options: Any):
    """A BeforeModelCallEvent hook that interrupts once with ``options`` and records what interrupt() returns."""
    seen: list[Any] = []

    def hook(event: BeforeModelCallEvent) -> None:
        seen.append(event.interrupt("question", reason={"q": 1}, **options))

    hook.seen = seen  # type: ignore[attr-defined]
    return hook


async def test_every_new_field_is_on_the_interrupt_and_in_to_dict():
    seen: list[Any] = []

    @tool(context=True)
    def transfer(tool_context: ToolContext, amount: int) -> str:
        """Transfer money."""
        seen.append(
            tool_context.interrupt(
                "confirm",
                reason={"amount": amount},
                message="Transfer 5?",
                response_type=Approval,
                expires_in=60,
                allow_edits=True,
                metadata={"risk": "high"},
                kind="myapp:transfer",
            )
        )
        return "sent"

    agent = Agent(
        model=ScriptedModel([tool_call("transfer", amount=5, tool_use_id="t1"), text("ok")]), tools=[transfer]
    )
    before = datetime.now(UTC)
    paused = await agent.invoke_async("go")

    [interrupt] = paused.interrupts
    assert interrupt.name == "confirm"
    assert interrupt.reason == {"amount": 5}
    assert interrupt.response is None
    assert interrupt.message == "Transfer 5?"
    assert interrupt.response_schema == Approval.model_json_schema()
    assert interrupt.tool_use_id == "t1"
    assert interrupt.metadata == {"risk": "high"}
    assert interrupt.kind == "myapp:transfer"
    expires = datetime.fromisoformat(interrupt.expires_at)
    assert before + timedelta(seconds=59) <= expires <= datetime.now(UTC) + timedelta(seconds=61)

    data = interrupt.to_dict()
    assert data == {
        "id": interrupt.id,
        "name": "confirm",
        "reason": {"amount": 5},
        "response": None,
        "message": "Transfer 5?",
        "response_schema": Approval.model_json_schema(),
        "expires_at": interrupt.expires_at,
        "tool_use_id": "t1",
        "metadata": {"risk": "high"},
        "kind": "myapp:transfer",
    }
    # Bookkeeping (allow_edits, fingerprint, ...) is not part of the public record.
    assert "allow_edits" not in data
    assert "fingerprint" not in data
    # The result prints the same records.
    assert paused.to_dict()["interrupts"] == [data]


def test_a_bare_interrupt_gives_exactly_strands_four_keys():
    assert Interrupt("id-1", "approval", {"x": 1}).to_dict() == {
        "id": "id-1",
        "name": "approval",
        "reason": {"x": 1},
        "response": None,
    }


@pytest.mark.parametrize("where", ["before_model_call", "before_tool_call"])
async def test_a_plain_strands_interrupt_gives_exactly_the_four_keys(where: str):
    def on_model(event: BeforeModelCallEvent) -> None:
        event.interrupt("approval", reason={"why": "check"})

    def on_tool(event: BeforeToolCallEvent) -> None:
        event.interrupt("approval", reason={"why": "check"})

    hook = on_model if where == "before_model_call" else on_tool
    agent = Agent(
        model=ScriptedModel([tool_call("plain", x=1, tool_use_id="t1"), text("ok")]), tools=[plain], hooks=[hook]
    )
    paused = await agent.invoke_async("go")
    [interrupt] = paused.interrupts
    assert set(interrupt.to_dict()) == STRANDS_KEYS
    assert str(paused) == str([{"id": interrupt.id, "name": "approval", "reason": {"why": "check"}, "response": None}])


# -- kind ---------------------------------------------------------------------------------------------------------


async def test_kind_defaults_to_tool_call_in_a_tool_and_in_before_tool_call():
    @tool(context=True)
    def ask(tool_context: ToolContext) -> str:
        """Ask."""
        tool_context.interrupt("in-tool", response_type=int)  # bound to a tool: tool_call despite response_type
        return "done"

    def hook(event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] == "plain":
            event.interrupt("in-hook")

    model = ScriptedModel(
        [
            {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "t1", "name": "ask", "input": {}}},
                    {"toolUse": {"toolUseId": "t2", "name": "plain", "input": {"x": 1}}},
                ],
            },
            text("ok"),
        ]
    )
    agent = Agent(model=model, tools=[ask, plain], hooks=[hook])
    paused = await agent.invoke_async("go")
    kinds = {i.name: (i.kind, i.tool_use_id) for i in paused.interrupts}
    assert kinds == {"in-tool": ("tool_call", "t1"), "in-hook": ("tool_call", "t2")}


@pytest.mark.parametrize(
    ("options", "kind"),
    [({}, "confirmation"), ({"response_type": int}, "input_required"), ({"kind": "myapp:x"}, "myapp:x")],
)
async def test_kind_outside_a_tool_call(options: dict[str, Any], kind: str):
    agent = Agent(model=ScriptedModel([text("ok")]), hooks=[model_hook(**options)])
    paused = await agent.invoke_async("go")
    [interrupt] = paused.interrupts
    assert interrupt.kind == kind
    assert interrupt.tool_use_id is None
    # A plain interrupt keeps Strands' four keys in to_dict(); one with details lists its kind.
    assert interrupt.to_dict().get("kind") == (kind if options else None)
    assert "tool_use_id" not in interrupt.to_dict()


async def test_kind_in_before_tools_event_is_not_tool_bound():
    def hook(event: BeforeToolsEvent) -> None:
        event.interrupt("batch")

    agent = Agent(model=ScriptedModel([tool_call("plain", x=1), text("ok")]), tools=[plain], hooks=[hook])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    assert (interrupt.kind, interrupt.tool_use_id) == ("confirmation", None)


@pytest.mark.parametrize("kind", ["tool_call", "input_required", "confirmation", "myapp:x", "acme:db:change"])
async def test_valid_kinds_are_accepted(kind: str):
    agent = Agent(model=ScriptedModel([text("ok")]), hooks=[model_hook(kind=kind)])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    assert interrupt.kind == kind


@pytest.mark.parametrize("kind", ["bogus", "core:x", ":x", "myapp:", ""])
async def test_invalid_kinds_are_a_value_error(kind: str):
    agent = Agent(model=ScriptedModel([text("ok")]), hooks=[model_hook(kind=kind)])
    with pytest.raises(ValueError, match="kind="):
        await agent.invoke_async("go")
    assert not agent._interrupt_state.activated


async def test_invalid_kind_in_a_tool_becomes_an_error_result():
    @tool(context=True)
    def ask(tool_context: ToolContext) -> str:
        """Ask."""
        tool_context.interrupt("q", kind="bogus")
        return "never"

    model = ScriptedModel([tool_call("ask", tool_use_id="t1"), text("ok")])
    agent = Agent(model=model, tools=[ask])
    result = await agent.invoke_async("go")
    assert result.stop_reason == "end_turn"
    tool_result = agent.messages[2]["content"][0]["toolResult"]
    assert tool_result["status"] == "error"
    assert "kind='bogus'" in tool_result["content"][0]["text"]


# -- response_type ------------------------------------------------------------------------------------------------


async def test_pydantic_response_type_publishes_its_schema_and_returns_a_validated_instance():
    hook = model_hook(response_type=Approval)
    model = ScriptedModel([text("ok")])
    agent = Agent(model=model, hooks=[hook])
    paused = await agent.invoke_async("go")
    [interrupt] = paused.interrupts
    assert interrupt.response_schema == Approval.model_json_schema()
    assert interrupt.kind == "input_required"

    done = await agent.invoke_async([interrupt.resume({"approved": True, "note": "fine"})])
    assert done.stop_reason == "end_turn"
    [value] = hook.seen
    assert isinstance(value, Approval)
    assert value == Approval(approved=True, note="fine")
    assert model.calls == 1


async def test_pydantic_response_type_in_a_tool_returns_an_instance_to_the_tool():
    received: list[Any] = []

    @tool(context=True)
    def transfer(tool_context: ToolContext, amount: int) -> str:
        """Transfer money."""
        approval = tool_context.interrupt("confirm", reason={"amount": amount}, response_type=Approval)
        received.append(approval)
        return "sent" if approval.approved else "refused"

    agent = Agent(model=ScriptedModel([tool_call("transfer", amount=5), text("ok")]), tools=[transfer])
    paused = await agent.invoke_async("go")
    await agent.invoke_async([answer(paused.interrupts[0], {"approved": False})])  # a plain Strands block
    assert received == [Approval(approved=False)]
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "refused"}]


@pytest.mark.parametrize(
    ("response_type", "schema", "good", "expected"),
    [
        (int, {"type": "integer"}, 5, 5),
        (list[str], {"type": "array", "items": {"type": "string"}}, ["a", "b"], ["a", "b"]),
    ],
)
async def test_plain_response_types(response_type: Any, schema: dict[str, Any], good: Any, expected: Any):
    hook = model_hook(response_type=response_type)
    agent = Agent(model=ScriptedModel([text("ok")]), hooks=[hook])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    assert interrupt.response_schema == schema
    with pytest.raises(InvalidPayloadError):
        await agent.invoke_async([interrupt.resume({"not": "valid"})])
    assert agent._interrupt_state.activated
    done = await agent.invoke_async([interrupt.resume(good)])
    assert done.stop_reason == "end_turn"
    assert hook.seen == [expected]


async def test_expires_in_as_a_timedelta_sets_expires_at():
    agent = Agent(model=ScriptedModel([text("ok")]), hooks=[model_hook(expires_in=timedelta(hours=1))])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    expires = datetime.fromisoformat(interrupt.expires_at)
    assert timedelta(minutes=59) < expires - datetime.now(UTC) <= timedelta(hours=1)
    assert expires.tzinfo is not None
    assert not interrupt.expired


async def test_optional_fields_are_absent_from_to_dict_when_not_set():
    agent = Agent(model=ScriptedModel([text("ok")]), hooks=[model_hook(message="Proceed?")])
    [interrupt] = (await agent.invoke_async("go")).interrupts
    data = interrupt.to_dict()
    assert data["message"] == "Proceed?"
    for key in ("response_schema", "expires_at", "tool_use_id", "metadata"):
        assert key not in data
        assert getattr(interrupt, key) is None


async def test_agent_result_round_trip_keeps_the_new_fields():
    from strandslike import AgentResult

    hook = model_hook(message="Proceed?", response_type=Approval, expires_in=60, metadata={"m": 1})
    paused = await Agent(model=ScriptedModel([text("ok")]), hooks=[hook]).invoke_async("go")
    restored = AgentResult.from_dict(json.loads(json.dumps(paused.to_dict())))
    assert [i.to_dict() for i in restored.interrupts] == [i.to_dict() for i in paused.interrupts]
