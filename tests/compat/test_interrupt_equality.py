"""Issue 12, item 1: interrupts built the Strands way compare equal to the ones the agent returns."""

from typing import Any

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import BeforeToolCallEvent
from strandslike.interrupt import Interrupt
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.session import FileSessionManager

NAME_UUID = "78714d6c-613c-5cf4-bf25-7037569941f9"  # uuid5(NAMESPACE_OID, "test_name"), pinned in Strands' tests


@tool
def weather(city: str) -> str:
    """Get the weather.

    Args:
        city: The city.
    """
    return f"sunny in {city}"


@tool(context=True)
def ask(tool_context: ToolContext, question: str) -> str:
    """Ask the user.

    Args:
        question: The question.
    """
    return str(tool_context.interrupt("test_name", reason=question))


def hook(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "weather":
        event.interrupt("test_name", reason="test reason")


async def test_hook_interrupt_equals_a_strands_built_interrupt() -> None:
    model = ScriptedModel([tool_call("weather", city="Paris", tool_use_id="t1"), text("done")])
    agent = Agent(model=model, tools=[weather], hooks=[hook])
    result = await agent.invoke_async("go")

    expected = Interrupt(id=f"v1:before_tool_call:t1:{NAME_UUID}", name="test_name", reason="test reason")
    assert result.interrupts == [expected]
    assert result.interrupts[0] == expected
    # The agent's copy carries strandslike's details, which take no part in equality ...
    assert result.interrupts[0].kind == "tool_call"
    assert result.interrupts[0].tool_use_id == "t1"
    # ... and a plain interrupt still serializes to Strands' four keys.
    assert (
        result.interrupts[0].to_dict()
        == expected.to_dict()
        == {
            "id": f"v1:before_tool_call:t1:{NAME_UUID}",
            "name": "test_name",
            "reason": "test reason",
            "response": None,
        }
    )
    assert repr(expected) == (
        f"Interrupt(id='v1:before_tool_call:t1:{NAME_UUID}', name='test_name', reason='test reason', response=None)"
    )


async def test_tool_interrupt_equals_a_strands_built_interrupt() -> None:
    model = ScriptedModel([tool_call("ask", question="why?", tool_use_id="t2"), text("done")])
    agent = Agent(model=model, tools=[ask])
    result = await agent.invoke_async("go")
    assert result.interrupts == [Interrupt(id=f"v1:tool_call:t2:{NAME_UUID}", name="test_name", reason="why?")]


def test_equality_is_on_strands_fields_only() -> None:
    plain = Interrupt("i", "n", {"a": 1})
    assert plain == Interrupt("i", "n", {"a": 1}, message="m", kind="confirmation", tool_use_id="t", metadata={})
    assert plain != Interrupt("i", "n", {"a": 2})
    assert plain != Interrupt("other", "n", {"a": 1})
    assert Interrupt("i", "n", response="y") != plain
    rich = Interrupt("i", "n", message="Approve?", kind="confirmation", rich=True)
    assert rich.to_dict() == {
        "id": "i",
        "name": "n",
        "reason": None,
        "response": None,
        "message": "Approve?",
        "kind": "confirmation",
    }
    assert "message='Approve?'" in repr(rich)


def test_interrupt_state_round_trip_keeps_the_details(tmp_path: Any) -> None:
    # Persisted interrupt state goes through state_dict(), not to_dict(): nothing of strandslike's is lost.
    original = Interrupt("i", "n", "r", message="m", kind="input_required", tool_use_id="t", rich=True)
    original.fingerprint, original.allow_edits = "fp", True
    restored = Interrupt.from_state_dict(original.state_dict())
    assert restored == original
    assert (restored.message, restored.kind, restored.tool_use_id, restored.fingerprint, restored.allow_edits) == (
        "m",
        "input_required",
        "t",
        "fp",
        True,
    )


async def test_restored_interrupts_still_equal_strands_built_ones(tmp_path: Any) -> None:
    def build(turns: list[Any]) -> Agent:
        session = FileSessionManager("s1", storage_dir=tmp_path)
        return Agent(model=ScriptedModel(turns), tools=[weather], hooks=[hook], session_manager=session)

    paused = await build([tool_call("weather", city="Paris", tool_use_id="t1"), text("done")]).invoke_async("go")
    again = build([text("done")])
    stored = again._interrupt_state.unanswered()
    assert stored == list(paused.interrupts)
    assert stored == [Interrupt(f"v1:before_tool_call:t1:{NAME_UUID}", "test_name", "test reason")]
