"""The examples of the AG-UI interrupt lifecycle, end to end over HTTP against uvicorn."""

from datetime import UTC, datetime

import pytest
from agui_support import (
    SENT,
    AguiThread,
    LiveServer,
    approval,
    cancelled,
    filing_request,
    resolved,
    scripted_factory,
)

from strandslike.models import text, tool_call, turn


@pytest.fixture(autouse=True)
def _clear_sent():
    SENT.clear()


async def test_minimal_tool_approval(tmp_path):
    script = [tool_call("send_email", tool_use_id="tc-001", to="a@b.com", subject="Hi"), text("The email is sent.")]
    with LiveServer(scripted_factory(script, hooks=[approval()]), tmp_path) as server:
        thread = AguiThread(server.url, "thread-1")
        paused = await thread.send("Email a@b.com to say hi")

        assert paused.types[:4] == ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
        [start] = paused.of("TOOL_CALL_START")
        assert (start["toolCallId"], start["toolCallName"]) == ("tc-001", "send_email")
        assert "".join(e["delta"] for e in paused.of("TOOL_CALL_ARGS")) == '{"to": "a@b.com", "subject": "Hi"}'
        [interrupt] = paused.interrupts
        assert interrupt["id"].endswith("@thread-1")
        assert interrupt["reason"] == "tool_call"
        assert interrupt["toolCallId"] == "tc-001"
        assert interrupt["message"] == "Send email to a@b.com with subject 'Hi'?"
        assert interrupt["responseSchema"]["properties"]["approved"]["type"] == "boolean"
        assert interrupt["responseSchema"]["required"] == ["approved"]
        assert interrupt["metadata"] == {"name": "approval", "reason": {"to": "a@b.com", "subject": "Hi"}}
        assert "expiresAt" not in interrupt
        assert SENT == []
        # The messages the client needs to resume are in the snapshot, before RUN_FINISHED.
        assistant = next(m for m in paused.messages if m["role"] == "assistant")
        assert assistant["toolCalls"][0]["id"] == "tc-001"
        assert start["parentMessageId"] == assistant["id"]

        done = await thread.resume(resolved(interrupt, {"approved": True}))

        assert "TOOL_CALL_START" not in done.types
        assert done.results() == {"tc-001": "Email sent to a@b.com."}
        assert done.outcome == {"type": "success"}
        assert SENT == [{"to": "a@b.com", "subject": "Hi", "body": ""}]
        [start_text] = done.of("TEXT_MESSAGE_START")
        assert "".join(e["delta"] for e in done.of("TEXT_MESSAGE_CONTENT")) == "The email is sent."
        roles = [(m["role"], m.get("toolCallId")) for m in done.messages]
        assert roles == [("user", None), ("assistant", None), ("tool", "tc-001"), ("assistant", None)]
        assert done.messages[-1] == {
            "id": start_text["messageId"],
            "role": "assistant",
            "content": "The email is sent.",
        }
        [result_event] = done.of("TOOL_CALL_RESULT")
        assert done.messages[2]["id"] == result_event["messageId"]


async def test_a_denial_is_expressed_in_the_payload(tmp_path):
    script = [tool_call("send_email", tool_use_id="tc-1", to="a@b.com", subject="Hi"), text("Not sent.")]
    with LiveServer(scripted_factory(script, hooks=[approval()]), tmp_path) as server:
        thread = AguiThread(server.url, "thread-deny")
        [interrupt] = (await thread.send("go")).interrupts

        done = await thread.resume(resolved(interrupt, {"approved": False}))

        assert done.outcome == {"type": "success"}
        assert SENT == []
        assert done.results() == {"tc-1": "The user declined to send this email."}
        assert next(m for m in done.messages if m["role"] == "tool")["error"] == "The user declined to send this email."


async def test_approve_with_edits_runs_the_tool_with_the_edited_args(tmp_path):
    script = [
        tool_call("send_email", tool_use_id="tc-42", to="a@b.com", subject="Hi", body="Hi"),
        text("Sent your revised email."),
    ]
    with LiveServer(scripted_factory(script, hooks=[approval(allow_edits=True)]), tmp_path) as server:
        thread = AguiThread(server.url, "thread-2")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts

        schema = interrupt["responseSchema"]
        assert schema["required"] == ["approved"]
        assert schema["properties"]["approved"] == {"type": "boolean"}
        edited = schema["properties"]["editedArgs"]
        assert edited["type"] == "object"
        assert set(edited["properties"]) == {"to", "subject", "body"}  # the tool's own arguments
        assert interrupt["toolCallId"] == "tc-42"

        edits = {"to": "a@b.com", "subject": "Hi", "body": "Hi (revised per my note)"}
        done = await thread.resume(resolved(interrupt, {"approved": True, "editedArgs": edits}))

        assert done.outcome == {"type": "success"}
        assert SENT == [edits]  # the tool really ran with the edited arguments
        assert "TOOL_CALL_START" not in done.types
        assert "Email sent to a@b.com." in done.results()["tc-42"]
        # The proposal stays in the history (the audit trail's first step); the result says what really ran.
        assistant = next(m for m in done.messages if m["role"] == "assistant")
        assert '"body": "Hi"' in assistant["toolCalls"][0]["function"]["arguments"]
        assert "Hi (revised per my note)" in done.results()["tc-42"]


async def test_three_parallel_interrupts_resolved_resolved_cancelled(tmp_path):
    script = [
        turn(
            tool_call("send_email", tool_use_id="tc-a", to="x@y.com", subject="A"),
            tool_call("send_email", tool_use_id="tc-b", to="y@z.com", subject="B"),
            tool_call("send_email", tool_use_id="tc-c", to="z@w.com", subject="C"),
        ),
        text("Sent two of three."),
    ]
    with LiveServer(scripted_factory(script, hooks=[approval()]), tmp_path) as server:
        thread = AguiThread(server.url, "thread-3")
        paused = await thread.send("Email all three")

        i1, i2, i3 = paused.interrupts
        assert [i["toolCallId"] for i in (i1, i2, i3)] == ["tc-a", "tc-b", "tc-c"]
        assert [i["message"] for i in (i1, i2, i3)] == [
            "Send email to x@y.com with subject 'A'?",
            "Send email to y@z.com with subject 'B'?",
            "Send email to z@w.com with subject 'C'?",
        ]
        assert len({i["id"] for i in (i1, i2, i3)}) == 3

        done = await thread.resume(resolved(i1, {"approved": True}), resolved(i2, {"approved": True}), cancelled(i3))

        assert done.outcome == {"type": "success"}
        # The two approved calls run concurrently, in either order; tc-c was not executed.
        assert sorted(email["to"] for email in SENT) == ["x@y.com", "y@z.com"]
        assert "TOOL_CALL_START" not in done.types
        results = done.results()
        assert results["tc-a"] == "Email sent to x@y.com."
        assert results["tc-b"] == "Email sent to y@z.com."
        assert "cancelled" in results["tc-c"]
        tools = [m for m in done.messages if m["role"] == "tool"]
        assert [m["toolCallId"] for m in tools] == ["tc-a", "tc-b", "tc-c"]
        assert "error" in tools[2]
        assert "error" not in tools[0]


async def test_non_tool_input_request_with_expiry_and_payload_validation(tmp_path):
    factory = scripted_factory([text("Filed.")], hooks=[filing_request(expires_in=3600)], tools=())
    with LiveServer(factory, tmp_path) as server:
        thread = AguiThread(server.url, "thread-4")
        paused = await thread.send("File my quarterly report")

        [interrupt] = paused.interrupts
        assert interrupt["reason"] == "input_required"
        assert "toolCallId" not in interrupt
        assert interrupt["message"] == "Please provide the quarterly filing details."
        schema = interrupt["responseSchema"]
        assert schema["required"] == ["quarter", "year", "revenue"]
        assert schema["properties"]["quarter"]["enum"] == ["Q1", "Q2", "Q3", "Q4"]
        assert schema["properties"]["year"]["minimum"] == 2000
        expires = datetime.fromisoformat(interrupt["expiresAt"])
        assert 3500 < (expires - datetime.now(UTC)).total_seconds() <= 3600

        bad = await thread.resume(resolved(interrupt, {"quarter": "Q5", "year": 2026, "revenue": 4200000}))
        error = bad.assert_error("INVALID_PAYLOAD")
        assert "quarter" in error["message"]
        bad = await thread.resume(resolved(interrupt, {"quarter": "Q1", "year": 1999, "revenue": 4200000}))
        bad.assert_error("INVALID_PAYLOAD")

        done = await thread.resume(resolved(interrupt, {"quarter": "Q1", "year": 2026, "revenue": 4200000}))

        assert done.outcome == {"type": "success"}
        assert done.state == {"filing": {"quarter": "Q1", "year": 2026, "revenue": 4200000.0}}
        assert done.messages[-1]["content"] == "Filed."
