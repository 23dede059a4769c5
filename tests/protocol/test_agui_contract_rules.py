"""Each contract rule of the AG-UI interrupt lifecycle, broken over raw HTTP: the server answers RUN_ERROR with the
rule's code, nothing runs and nothing is lost, and a correct resume afterwards still succeeds."""

import anyio
import pytest
from agui_support import SENT, AguiThread, LiveServer, approval, cancelled, filing_request, resolved, scripted_factory

from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import text, tool_call, turn

APPROVE = {"approved": True}
ONE_EMAIL = [tool_call("send_email", tool_use_id="tc-1", to="a@b.com", subject="Hi"), text("Done.")]
THREE_EMAILS = [
    turn(
        tool_call("send_email", tool_use_id="tc-a", to="x@y.com", subject="A"),
        tool_call("send_email", tool_use_id="tc-b", to="y@z.com", subject="B"),
        tool_call("send_email", tool_use_id="tc-c", to="z@w.com", subject="C"),
    ),
    text("Done."),
]


@pytest.fixture(autouse=True)
def _clear_sent():
    SENT.clear()


@pytest.fixture
def server(tmp_path):
    with LiveServer(scripted_factory(ONE_EMAIL, hooks=[approval()]), tmp_path) as live:
        yield live


async def paused_thread(server: LiveServer, thread_id: str) -> tuple[AguiThread, dict]:
    thread = AguiThread(server.url, thread_id)
    [interrupt] = (await thread.send("Email a@b.com")).interrupts
    return thread, interrupt


async def assert_resumes(thread: AguiThread, interrupt: dict) -> None:
    """Nothing was lost: the same interrupt still answers, and the tool runs once."""
    done = await thread.resume(resolved(interrupt, APPROVE))
    assert done.outcome == {"type": "success"}
    assert done.results() == {"tc-1": "Email sent to a@b.com."}
    assert SENT == [{"to": "a@b.com", "subject": "Hi", "body": ""}]


# -- rule 1: same thread ------------------------------------------------------------------------------------------


async def test_rule_1_a_resume_on_another_thread_is_refused(server):
    first, first_interrupt = await paused_thread(server, "thread-a")
    second, second_interrupt = await paused_thread(server, "thread-b")
    # Both threads ran the same script: the same tool call raised the same interrupt in each. The AG-UI ids
    # still differ, so an answer meant for one thread cannot answer the other.
    assert first_interrupt["id"] != second_interrupt["id"]
    assert first_interrupt["id"].removesuffix("@thread-a") == second_interrupt["id"].removesuffix("@thread-b")

    refused = await second.resume(resolved(first_interrupt, APPROVE))

    error = refused.assert_error("SESSION_MISMATCH")
    assert "thread-a" in error["message"]
    assert SENT == []
    await assert_resumes(second, second_interrupt)
    SENT.clear()
    await assert_resumes(first, first_interrupt)


# -- rule 2: resume linkage ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("bogus", ["int-abc123", "v1:before_tool_call:tc-9:nope@thread-link"])
async def test_rule_2_an_unknown_interrupt_id_is_refused(server, bogus):
    thread, interrupt = await paused_thread(server, "thread-link")

    refused = await thread.resume({"interruptId": bogus, "status": "resolved", "payload": APPROVE})

    error = refused.assert_error("UNKNOWN_INTERRUPT_ID")
    assert bogus in error["message"]
    await assert_resumes(thread, interrupt)


async def test_rule_2_an_unknown_id_next_to_the_right_one_is_refused_as_a_whole(server):
    thread, interrupt = await paused_thread(server, "thread-link-2")

    refused = await thread.resume(
        resolved(interrupt, APPROVE), {"interruptId": "int-x", "status": "resolved", "payload": APPROVE}
    )

    refused.assert_error("UNKNOWN_INTERRUPT_ID")
    assert SENT == []
    await assert_resumes(thread, interrupt)


# -- rule 3: cover all open interrupts ------------------------------------------------------------------------------


async def test_rule_3_a_partial_resume_is_refused(tmp_path):
    with LiveServer(scripted_factory(THREE_EMAILS, hooks=[approval()]), tmp_path) as server:
        thread = AguiThread(server.url, "thread-partial")
        i1, i2, i3 = (await thread.send("Email all three")).interrupts

        refused = await thread.resume(resolved(i1, APPROVE), resolved(i2, APPROVE))

        error = refused.assert_error("PARTIAL_RESUME")
        assert i3["id"] in error["message"]
        assert SENT == []  # nothing ran, not even the answered calls
        done = await thread.resume(resolved(i1, APPROVE), resolved(i2, APPROVE), cancelled(i3))
        assert done.outcome == {"type": "success"}
        # The approved calls ran concurrently: which finished first is not part of the contract.
        assert sorted(email["to"] for email in SENT) == ["x@y.com", "y@z.com"]


# -- rule 4: pending interrupts block new input ---------------------------------------------------------------------


async def test_rule_4_a_new_message_without_resume_is_refused(server):
    thread, interrupt = await paused_thread(server, "thread-pending")

    refused = await thread.send("Actually, do something else")

    error = refused.assert_error("PENDING_INTERRUPTS")
    assert interrupt["id"] in error["message"]
    thread.messages.pop()  # the client drops the refused message
    await assert_resumes(thread, interrupt)


async def test_rule_4_a_run_without_resume_or_input_reports_the_same_interrupts(server):
    # No new input is not input that rule 4 refuses: it is a client loading the thread (see test_agui_reconnect).
    thread, interrupt = await paused_thread(server, "thread-pending-2")

    assert (await thread.run()).interrupts == [interrupt]
    assert (await thread.run(resume=[])).interrupts == [interrupt]

    await assert_resumes(thread, interrupt)


# -- rule 5: idempotency --------------------------------------------------------------------------------------------


async def test_rule_5_replaying_the_same_resume_runs_nothing_twice(server):
    thread, interrupt = await paused_thread(server, "thread-replay")
    await assert_resumes(thread, interrupt)

    replay = await thread.resume(resolved(interrupt, APPROVE))

    assert replay.outcome == {"type": "success"}
    assert replay.types == ["RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert len(SENT) == 1
    assert replay.messages == thread.messages


async def test_rule_5_a_replay_with_another_answer_is_refused(server):
    thread, interrupt = await paused_thread(server, "thread-replay-2")
    await assert_resumes(thread, interrupt)

    changed = await thread.resume(resolved(interrupt, {"approved": False}))

    changed.assert_error("ALREADY_ANSWERED")
    assert len(SENT) == 1


async def test_rule_5_a_replay_after_the_thread_paused_again_reports_the_open_interrupts(tmp_path):
    script = [
        tool_call("send_email", tool_use_id="tc-1", to="a@b.com", subject="One"),
        tool_call("send_email", tool_use_id="tc-2", to="a@b.com", subject="Two"),
        text("Done."),
    ]
    with LiveServer(scripted_factory(script, hooks=[approval()]), tmp_path) as server:
        thread = AguiThread(server.url, "thread-replay-3")
        [first] = (await thread.send("Send two emails")).interrupts
        [second] = (await thread.resume(resolved(first, APPROVE))).interrupts

        replay = await thread.resume(resolved(first, APPROVE))

        assert replay.interrupts == [second]  # the thread as it is: waiting on the second approval
        assert [email["subject"] for email in SENT] == ["One"]
        done = await thread.resume(resolved(second, APPROVE))
        assert done.outcome == {"type": "success"}
        assert [email["subject"] for email in SENT] == ["One", "Two"]


async def test_rule_5_a_resume_that_failed_half_way_can_be_sent_again(tmp_path):
    armed: list[Exception] = []

    def flaky(event: BeforeToolCallEvent) -> None:
        if armed:
            raise armed.pop()

    with LiveServer(scripted_factory(ONE_EMAIL, hooks=[approval(), flaky]), tmp_path) as server:
        thread = AguiThread(server.url, "thread-half-way")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts
        armed.append(RuntimeError("hook crashed"))

        failed = await thread.resume(resolved(interrupt, APPROVE))

        assert "hook crashed" in failed.assert_error("AGENT_ERROR")["message"]
        assert SENT == []
        # The answer was applied before the failure: the thread still waits, for the same resume.
        pending = await thread.send("something else")
        assert "send the same resume again" in pending.assert_error("PENDING_INTERRUPTS")["message"]
        thread.messages.pop()
        [reported] = (await thread.run()).interrupts
        assert reported["metadata"]["answered"] == {"status": "resolved", "payload": APPROVE}
        await assert_resumes(thread, interrupt)


# -- rule 6: payload validation -------------------------------------------------------------------------------------


@pytest.mark.parametrize("payload", [{"approved": "yes"}, {}, "y", None, [True]])
async def test_rule_6_a_payload_failing_the_response_schema_is_refused(server, payload):
    thread, interrupt = await paused_thread(server, "thread-payload")

    refused = await thread.resume(resolved(interrupt, payload))

    error = refused.assert_error("INVALID_PAYLOAD")
    assert interrupt["id"] in error["message"]
    await assert_resumes(thread, interrupt)


# -- rule 7: expiry -------------------------------------------------------------------------------------------------


async def test_rule_7_an_expired_interrupt_refuses_answers_but_can_be_cancelled(tmp_path):
    factory = scripted_factory([text("Filed.")], hooks=[filing_request(expires_in=0.2)], tools=())
    with LiveServer(factory, tmp_path) as server:
        thread = AguiThread(server.url, "thread-expiry")
        [interrupt] = (await thread.send("File my report")).interrupts
        await anyio.sleep(0.3)

        refused = await thread.resume(resolved(interrupt, {"quarter": "Q1", "year": 2026, "revenue": 1.0}))

        error = refused.assert_error("INTERRUPT_EXPIRED")
        assert interrupt["expiresAt"] in error["message"]
        done = await thread.resume(cancelled(interrupt))
        assert done.outcome == {"type": "success"}
        assert "cancelled" in done.messages[-1]["content"]
        assert done.state == {}


async def test_rule_7_an_expired_tool_approval_is_refused(tmp_path):
    factory = scripted_factory(ONE_EMAIL, hooks=[approval(allow_edits=True, expires_in=0.2)])
    with LiveServer(factory, tmp_path) as server:
        thread = AguiThread(server.url, "thread-expiry-2")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts
        await anyio.sleep(0.3)

        edits = {"to": "c@d.com", "subject": "Hi"}
        refused = await thread.resume(resolved(interrupt, {"approved": True, "editedArgs": edits}))

        refused.assert_error("INTERRUPT_EXPIRED")
        # Expiry is checked first: even a payload the schema refuses gets the expiry error.
        (await thread.resume(resolved(interrupt, {"approved": "yes"}))).assert_error("INTERRUPT_EXPIRED")
        done = await thread.resume(cancelled(interrupt))
        assert done.outcome == {"type": "success"}
        assert SENT == []


# -- rule 8: graceful handling of missing or invalid payloads -------------------------------------------------------


async def test_rule_8_resolved_without_a_payload_is_refused(server):
    thread, interrupt = await paused_thread(server, "thread-graceful")

    refused = await thread.resume({"interruptId": interrupt["id"], "status": "resolved"})

    error = refused.assert_error("INVALID_PAYLOAD")
    assert "payload" in error["message"]
    await assert_resumes(thread, interrupt)


@pytest.mark.parametrize(
    "entry",
    [
        {"status": "resolved", "payload": True},  # no interruptId
        {"interruptId": "x", "status": "approved", "payload": True},  # not a status
        {"interruptId": 42, "status": "resolved", "payload": True},
    ],
)
async def test_rule_8_a_malformed_resume_entry_is_refused(server, entry):
    thread, interrupt = await paused_thread(server, "thread-malformed")

    (await thread.resume(entry)).assert_error("INVALID_INPUT")

    await assert_resumes(thread, interrupt)


async def test_rule_8_edited_args_that_are_not_an_object_are_refused(tmp_path):
    with LiveServer(scripted_factory(ONE_EMAIL, hooks=[approval(allow_edits=True)]), tmp_path) as server:
        thread = AguiThread(server.url, "thread-edits")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts

        (await thread.resume(resolved(interrupt, {"approved": True, "editedArgs": "to c@d.com"}))).assert_error(
            "INVALID_PAYLOAD"
        )
        (await thread.resume(resolved(interrupt, {"approved": True, "editedArgs": {"to": 5}}))).assert_error(
            "INVALID_PAYLOAD"
        )
        assert SENT == []
        done = await thread.resume(resolved(interrupt, APPROVE))
        assert done.outcome == {"type": "success"}
        assert SENT == [{"to": "a@b.com", "subject": "Hi", "body": ""}]


async def test_edits_on_an_interrupt_that_does_not_allow_them_are_refused(server):
    thread, interrupt = await paused_thread(server, "thread-no-edits")

    refused = await thread.resume(resolved(interrupt, {"approved": True, "editedArgs": {"to": "c@d.com"}}))

    refused.assert_error("EDITS_NOT_ALLOWED")
    await assert_resumes(thread, interrupt)


async def test_edited_args_failing_the_tools_schema_are_refused(tmp_path):
    with LiveServer(scripted_factory(ONE_EMAIL, hooks=[approval(allow_edits=True)]), tmp_path) as server:
        thread = AguiThread(server.url, "thread-bad-edits")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts

        # The schema the server publishes for editedArgs is the tool's: a missing required argument fails it.
        refused = await thread.resume(resolved(interrupt, {"approved": True, "editedArgs": {"subject": "x"}}))

        refused.assert_error("INVALID_PAYLOAD")
        assert SENT == []


async def test_a_duplicate_answer_is_refused(server):
    thread, interrupt = await paused_thread(server, "thread-duplicate")

    refused = await thread.resume(resolved(interrupt, APPROVE), resolved(interrupt, {"approved": False}))

    refused.assert_error("DUPLICATE_RESPONSE")
    await assert_resumes(thread, interrupt)


async def test_a_resume_on_a_thread_that_is_not_interrupted_is_refused(server):
    thread = AguiThread(server.url, "thread-idle")

    refused = await thread.resume({"interruptId": "v1:x@thread-idle", "status": "resolved", "payload": APPROVE})

    refused.assert_error("NOT_INTERRUPTED")
    assert SENT == []
