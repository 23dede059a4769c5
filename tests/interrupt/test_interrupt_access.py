"""The public seams onto interrupt state: `find_interrupt` and `record_audit`, and `agent.pending_interrupts`."""

from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.hooks import BeforeToolCallEvent
from strandslike.interrupt import find_interrupt, record_audit
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.types.exceptions import NotJSONSerializableError

SEEN: list[Any] = []


@tool
def act(x: int) -> str:
    """Act.

    Args:
        x: A number.
    """
    return "done"


def watcher(event: BeforeToolCallEvent) -> None:
    SEEN.append(find_interrupt(event, "ask"))
    answer = event.interrupt("ask", reason="?", allow_edits=True)
    SEEN.append((answer, find_interrupt(event, "ask").action))  # type: ignore[union-attr]


def test_find_interrupt_sees_its_own_interrupt_and_how_it_was_answered():
    SEEN.clear()
    agent = Agent(model=ScriptedModel([tool_call("act", x=1), text("ok")]), tools=[act], hooks=[watcher])
    paused = agent("go")
    assert SEEN == [None]  # nothing raised yet at the first call
    assert agent.pending_interrupts == paused.interrupts
    agent([paused.interrupts[0].restart(input={"x": 2}, metadata="edited")])
    raised, (answer, action) = SEEN[1], SEEN[2]
    assert raised is not None
    assert raised.id == paused.interrupts[0].id
    # A restart without a response: interrupt() returns None (never the metadata, which is the restart's context).
    assert (answer, action) == (None, "restart")
    assert raised.restart_metadata == "edited"
    assert agent.pending_interrupts == []


def test_find_interrupt_refuses_what_cannot_interrupt():
    with pytest.raises(TypeError, match="interruptible hook event or a ToolContext"):
        find_interrupt(object(), "x")


def test_record_audit_appends_a_snapshot_that_later_changes_do_not_touch():
    agent = Agent()
    details = {"input": {"paths": ["a"]}, "by": "me"}
    record_audit(agent, "decision", name="reviewer", **details)
    details["input"]["paths"].append("b")
    (entry,) = agent.interrupt_audit
    assert entry["event"] == "decision"
    assert entry["name"] == "reviewer"
    assert entry["interrupt_id"] is None
    assert entry["input"] == {"paths": ["a"]}
    assert isinstance(entry["time"], float)


@pytest.mark.parametrize("value", ["héllo", 10**20, 1.5, None, [1, {"k": "v"}], {"nested": {"é": 1}}, (1, 2)])
def test_record_audit_keeps_every_json_value(value):
    agent = Agent()
    record_audit(agent, "note", name="n", value=value)
    stored = agent.interrupt_audit[0]["value"]
    assert stored == (list(value) if isinstance(value, tuple) else value)


def test_record_audit_refuses_bad_input_and_records_nothing():
    agent = Agent()
    with pytest.raises(NotJSONSerializableError):
        record_audit(agent, "decision", name="n", value=object())
    with pytest.raises(ValueError, match="event=''"):
        record_audit(agent, "", name="n")
    with pytest.raises(ValueError, match="name=None"):
        record_audit(agent, "e", name=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="takes an Agent"):
        record_audit(object(), "e", name="n")
    assert agent.interrupt_audit == []
