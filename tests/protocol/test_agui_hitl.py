"""`HumanInTheLoop` over the AG-UI server: its interrupts render approve / deny / trust / edit, and resume."""

import pytest
from agui_support import SENT, AguiThread, LiveServer, resolved, scripted_factory

from strandslike.models import text, tool_call
from strandslike.vended_interventions.hitl import HumanInTheLoop


@pytest.fixture(autouse=True)
def _clear_sent():
    SENT.clear()


def hitl_factory(script):
    return scripted_factory(script, interventions=[HumanInTheLoop(enable_trust=True)])


async def test_a_hitl_interrupt_describes_the_call_and_a_trust_answer_is_remembered_by_the_thread(tmp_path):
    script = [
        tool_call("send_email", tool_use_id="tc-1", to="a@b.com", subject="One"),
        text("Sent one."),
        tool_call("send_email", tool_use_id="tc-2", to="c@d.com", subject="Two"),
        text("Sent two."),
    ]
    with LiveServer(hitl_factory(script), tmp_path) as server:
        thread = AguiThread(server.url, "hitl-1")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts

        assert interrupt["reason"] == "tool_call"
        assert interrupt["toolCallId"] == "tc-1"
        assert interrupt["message"].startswith('Approve "send_email"?')
        assert interrupt["metadata"]["name"] == "strands:human-in-the-loop"
        assert interrupt["metadata"]["options"] == ["approve", "deny", "trust", "edit"]
        schema = interrupt["responseSchema"]
        answer = schema["anyOf"][2]
        assert answer["properties"]["decision"]["enum"] == ["approve", "deny", "trust"]
        assert set(answer["properties"]["editedArgs"]["properties"]) == {"to", "subject", "body"}

        done = await thread.resume(resolved(interrupt, {"decision": "trust", "by": "ui-user"}))
        assert done.outcome == {"type": "success"}
        assert "Email sent to a@b.com." in done.results()["tc-1"]
        assert done.state["hitl:trusted_tools"] == ["send_email"]

        # A later request builds the agent afresh from the thread's session: the trust is remembered.
        second = await thread.send("Now email c@d.com")
        assert second.outcome == {"type": "success"}
        assert [email["to"] for email in SENT] == ["a@b.com", "c@d.com"]


async def test_approve_with_edits_restarts_the_call_with_the_edited_arguments(tmp_path):
    script = [tool_call("send_email", tool_use_id="tc-9", to="a@b.com", subject="Hi", body="Hi"), text("Sent.")]
    with LiveServer(hitl_factory(script), tmp_path) as server:
        thread = AguiThread(server.url, "hitl-2")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts
        edits = {"to": "a@b.com", "subject": "Hi", "body": "Hi, revised"}
        done = await thread.resume(resolved(interrupt, {"approved": True, "editedArgs": edits, "by": "editor"}))
        assert done.outcome == {"type": "success"}
        assert SENT == [edits]


async def test_a_denial_and_a_malformed_answer(tmp_path):
    script = [tool_call("send_email", tool_use_id="tc-5", to="a@b.com", subject="Hi"), text("Not sent.")]
    with LiveServer(hitl_factory(script), tmp_path) as server:
        thread = AguiThread(server.url, "hitl-3")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts

        refused = await thread.resume(resolved(interrupt, {"decision": "maybe"}))
        refused.assert_error("INVALID_PAYLOAD")

        done = await thread.resume(resolved(interrupt, {"approved": False, "reason": "not now"}))
        assert done.outcome == {"type": "success"}
        assert SENT == []
        assert done.results()["tc-5"].startswith("CONFIRMATION_FAILED")
