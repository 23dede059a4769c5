"""A client that lost the stream (a dropped connection, a reloaded page) gets the thread's pending interrupts back in
full: a run with no new message and no resume finishes with the same ``interrupt`` outcome, nothing runs."""

import threading

import anyio
import httpx
import pytest
from agui_support import (
    SENT,
    AguiThread,
    LiveServer,
    approval,
    filing_request,
    resolved,
    scripted_factory,
    send_email,
)

from strandslike import Agent
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.multiagent import GraphBuilder

APPROVE = {"approved": True}
ONE_EMAIL = [tool_call("send_email", tool_use_id="tc-1", to="a@b.com", subject="Hi"), text("Done.")]


@pytest.fixture(autouse=True)
def _clear_sent():
    SENT.clear()


def assert_reported_without_running(run, interrupts):
    assert run.types == ["RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert run.interrupts == interrupts
    assert SENT == []


async def test_a_reloaded_client_gets_the_pending_interrupts_in_full(tmp_path):
    factory = scripted_factory(ONE_EMAIL, hooks=[approval(allow_edits=True, expires_in=3600)])
    with LiveServer(factory, tmp_path) as server:
        first = await AguiThread(server.url, "thread-reload").send("Email a@b.com")
        [interrupt] = first.interrupts
        # Every field a UI needs to show the approval again.
        assert interrupt["reason"] == "tool_call"
        assert interrupt["toolCallId"] == "tc-1"
        assert interrupt["message"] == "Send email to a@b.com with subject 'Hi'?"
        assert interrupt["responseSchema"]["required"] == ["approved"]
        assert interrupt["expiresAt"]
        assert interrupt["metadata"]["name"] == "approval"

        reloaded = AguiThread(server.url, "thread-reload")  # a new page: no messages, no pending interrupts
        report = await reloaded.run()

        assert_reported_without_running(report, first.interrupts)
        assert report.messages == first.messages
        done = await reloaded.resume(resolved(interrupt, APPROVE))
    assert done.outcome == {"type": "success"}
    assert done.results() == {"tc-1": "Email sent to a@b.com."}
    assert len(SENT) == 1


@pytest.mark.parametrize(
    "extra",
    [{}, {"resume": []}, {"state": {"anything": 1}}],
    ids=["no-resume", "empty-resume", "client-state"],
)
async def test_a_client_resending_its_own_history_gets_the_same_report(tmp_path, extra):
    with LiveServer(scripted_factory(ONE_EMAIL, hooks=[approval()]), tmp_path) as server:
        thread = AguiThread(server.url, "thread-history")
        first = await thread.send("Email a@b.com")
        again = await thread.run(**extra)  # the client keeps its messages, all known to the session
        twice = await thread.run(**extra)
    assert_reported_without_running(again, first.interrupts)
    assert twice.events[1:-1] == again.events[1:-1]
    assert twice.outcome == again.outcome


async def test_new_input_on_a_waiting_thread_is_refused_and_says_how_to_get_the_interrupts(tmp_path):
    with LiveServer(scripted_factory(ONE_EMAIL, hooks=[approval()]), tmp_path) as server:
        thread = AguiThread(server.url, "thread-new-input")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts
        refused = await thread.send("Do something else")
        error = refused.assert_error("PENDING_INTERRUPTS")
        thread.messages.pop()
        report = await thread.run()
    assert interrupt["id"] in error["message"]
    assert "no new message" in error["message"]
    assert report.interrupts == [interrupt]


async def test_a_dropped_stream_loses_nothing_and_a_reload_gets_the_interrupts(tmp_path):
    """The connection drops mid-run: the run goes on, is persisted, and the reloaded client can answer it."""
    release = threading.Event()
    gated: list[bool] = []

    async def gate(event: BeforeToolCallEvent) -> None:
        if not gated:  # hold the first run inside the tool batch until the client is gone
            gated.append(True)
            await anyio.to_thread.run_sync(release.wait, 30)

    factory = scripted_factory(ONE_EMAIL, hooks=[gate, approval(allow_edits=True, expires_in=3600)])
    with LiveServer(factory, tmp_path) as server:
        body = {"threadId": "thread-drop", "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "go"}]}
        async with httpx.AsyncClient(timeout=30) as client:
            headers = {"accept": "text/event-stream", "content-type": "application/json"}
            async with client.stream("POST", server.url + "/", json=body, headers=headers) as response:
                seen = ""
                async for chunk in response.aiter_text():
                    seen += chunk
                    if "TOOL_CALL_END" in seen:
                        break  # the tool call was proposed; the client goes away before the outcome
        assert "RUN_FINISHED" not in seen
        release.set()
        await anyio.to_thread.run_sync(server.wait_done, 1)

        reloaded = AguiThread(server.url, "thread-drop")
        report = await reloaded.run()
        [interrupt] = report.interrupts
        assert interrupt["toolCallId"] == "tc-1"
        assert interrupt["responseSchema"]["properties"]["editedArgs"]["properties"]["to"] == {
            "description": "The recipient.",
            "type": "string",
        }
        assert interrupt["expiresAt"]
        assert SENT == []
        done = await reloaded.resume(
            resolved(interrupt, {"approved": True, "editedArgs": {"to": "c@d.com", "subject": "Hi"}})
        )
    assert done.outcome == {"type": "success"}
    assert SENT == [{"to": "c@d.com", "subject": "Hi", "body": ""}]


async def test_parallel_interrupts_come_back_in_the_order_they_were_raised(tmp_path):
    script = [
        turn(
            tool_call("send_email", tool_use_id="tc-a", to="x@y.com", subject="A"),
            tool_call("send_email", tool_use_id="tc-b", to="y@z.com", subject="B"),
        ),
        text("Done."),
    ]
    with LiveServer(scripted_factory(script, hooks=[approval()]), tmp_path) as server:
        first = await AguiThread(server.url, "thread-parallel").send("two emails")
        report = await AguiThread(server.url, "thread-parallel").run()
    assert [i["toolCallId"] for i in report.interrupts] == ["tc-a", "tc-b"]
    assert report.interrupts == first.interrupts


async def test_a_non_tool_interrupt_comes_back_with_its_schema(tmp_path):
    factory = scripted_factory([text("Filed.")], hooks=[filing_request(expires_in=3600)])
    with LiveServer(factory, tmp_path) as server:
        [first] = (await AguiThread(server.url, "thread-filing").send("file it")).interrupts
        [again] = (await AguiThread(server.url, "thread-filing").run()).interrupts
    assert again == first
    assert again["reason"] == "input_required"
    assert again["responseSchema"]["required"] == ["quarter", "year", "revenue"]
    assert "toolCallId" not in again


async def test_an_orchestration_waiting_in_a_node_comes_back_with_the_node(tmp_path):
    def factory(session_manager):
        writer = Agent(name="writer", model=ScriptedModel(ONE_EMAIL), tools=[send_email], hooks=[approval()])
        builder = GraphBuilder()
        builder.add_node(writer, "writer")
        builder.set_session_manager(session_manager)
        return builder.build()

    with LiveServer(factory, tmp_path) as server:
        [first] = (await AguiThread(server.url, "thread-graph").send("email")).interrupts
        report = await AguiThread(server.url, "thread-graph").run()
    [again] = report.interrupts
    assert again == first
    assert again["metadata"]["nodeId"] == "writer"
    assert again["toolCallId"] == "tc-1"
    assert SENT == []


async def test_a_run_stopped_after_the_answers_were_applied_reports_them_with_the_answers(tmp_path):
    armed: list[Exception] = []

    def flaky(event: BeforeToolCallEvent) -> None:
        if armed:
            raise armed.pop()

    with LiveServer(scripted_factory(ONE_EMAIL, hooks=[approval(), flaky]), tmp_path) as server:
        thread = AguiThread(server.url, "thread-stopped")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts
        armed.append(RuntimeError("hook crashed"))
        (await thread.resume(resolved(interrupt, APPROVE))).assert_error("AGENT_ERROR")

        report = await AguiThread(server.url, "thread-stopped").run()
        [reported] = report.interrupts
        assert reported["metadata"]["answered"] == {"status": "resolved", "payload": APPROVE}
        assert {**reported, "metadata": interrupt["metadata"]} == interrupt
        entry = {"interruptId": reported["id"], **reported["metadata"]["answered"]}
        done = await thread.resume(entry)
    assert done.outcome == {"type": "success"}
    assert len(SENT) == 1
