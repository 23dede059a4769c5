"""The AG-UI application: capabilities, input handling, streaming, snapshots, and failures answered as RUN_ERROR."""

import os
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import httpx
import pytest
from ag_ui.core import AgentCapabilities
from agui_support import SENT, AguiThread, LiveServer, approval, post, resolved, scripted_factory, send_email

from strandslike import Agent, tool
from strandslike._demo import session_agent
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.multiagent import GraphBuilder
from strandslike.session import FileSessionManager

REPO = Path(__file__).parent.parent.parent


@pytest.fixture(autouse=True)
def _clear_sent():
    SENT.clear()


def recording_factory(script, built: list[Agent], **kwargs):
    """A scripted factory that keeps every agent it builds, to look at what its model received."""
    inner = scripted_factory(script, **kwargs)

    def build(session_manager):
        agent = inner(session_manager)
        built.append(agent)
        return agent

    return build


# -- capabilities -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/capabilities", "/agent/capabilities"])
async def test_capabilities_declare_interrupts_and_approve_with_edits(tmp_path, path):
    with LiveServer(session_agent, tmp_path) as server:
        async with httpx.AsyncClient() as client:
            response = await client.get(server.url + path)
    assert response.status_code == 200
    data = response.json()
    capabilities = AgentCapabilities.model_validate(data)
    assert not capabilities.model_extra
    assert capabilities.human_in_the_loop is not None
    assert capabilities.human_in_the_loop.interrupts is True
    assert capabilities.human_in_the_loop.approve_with_edits is True
    assert data["humanInTheLoop"]["interrupts"] is True
    assert data["humanInTheLoop"]["approveWithEdits"] is True
    assert data["state"] == {"snapshots": True, "persistentState": True}
    assert data["transport"] == {"streaming": True}


async def test_post_agent_runs_like_post_root(tmp_path):
    with LiveServer(scripted_factory([text("Hello!")]), tmp_path) as server:
        body = {"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "user", "content": "hi"}]}
        run = await post(server.url, body, path="/agent")
    assert run.outcome == {"type": "success"}
    assert run.messages[-1]["content"] == "Hello!"


# -- input --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{not json",
        b"[]",
        b'{"runId": "r", "messages": []}',
        b'{"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "wizard", "content": "x"}]}',
    ],
)
async def test_a_body_that_is_not_a_run_agent_input_is_a_lone_run_error(tmp_path, body):
    with LiveServer(scripted_factory([text("never")]), tmp_path) as server:
        run = await post(server.url, body)
    assert run.types == ["RUN_ERROR"]
    run.assert_error("INVALID_INPUT")


@pytest.mark.parametrize("thread_id", ["../escape", "a/b", "", " padded ", "x" * 200])
async def test_a_thread_id_that_cannot_name_a_session_is_refused(tmp_path, thread_id):
    with LiveServer(scripted_factory([text("never")]), tmp_path) as server:
        run = await post(server.url, {"threadId": thread_id, "runId": "r", "messages": []})
    assert run.types == ["RUN_STARTED", "RUN_ERROR"]
    run.assert_error("INVALID_THREAD_ID")
    assert sorted(path.name for path in tmp_path.iterdir()) == []  # no session was created


async def test_only_the_last_new_user_message_is_the_prompt(tmp_path):
    built: list[Agent] = []
    with LiveServer(recording_factory([text("First."), text("Second.")], built), tmp_path) as server:
        thread = AguiThread(server.url, "thread-prompt")
        await thread.send("one")
        # The client still holds a message of its own from before, and sends two new ones.
        thread.messages.insert(0, {"id": "client-old", "role": "user", "content": "stale copy"})
        thread.messages.append({"id": "client-new-1", "role": "user", "content": "draft"})
        done = await thread.send("two")

    assert done.outcome == {"type": "success"}
    conversation = built[-1].messages
    assert [m["content"][0]["text"] for m in conversation if m["role"] == "user"] == ["one", "two"]
    assert [(m["role"], m["content"]) for m in done.messages] == [
        ("user", "one"),
        ("assistant", "First."),
        ("user", "two"),
        ("assistant", "Second."),
    ]
    # A user message keeps the client's id; the agent's messages are named by their place in the conversation.
    assert [m["id"] for m in done.messages] == ["client-thread-prompt-0", "msg-1", "client-thread-prompt-4", "msg-3"]


async def test_text_parts_are_joined_and_other_parts_are_refused(tmp_path):
    built: list[Agent] = []
    with LiveServer(recording_factory([text("ok")], built), tmp_path) as server:
        parts = [{"type": "text", "text": "hello"}, {"type": "text", "text": "world"}]
        done = await post(
            server.url, {"threadId": "t1", "runId": "r", "messages": [{"id": "u", "role": "user", "content": parts}]}
        )
        image = {"type": "image", "source": {"type": "url", "value": "https://example.com/a.png"}}
        refused = await post(
            server.url, {"threadId": "t2", "runId": "r", "messages": [{"id": "u", "role": "user", "content": [image]}]}
        )
    assert done.outcome == {"type": "success"}
    assert built[0].messages[0]["content"] == [{"text": "hello\nworld"}]
    refused.assert_error("INVALID_INPUT")


async def test_a_run_with_nothing_new_reports_the_thread_without_running(tmp_path):
    built: list[Agent] = []
    with LiveServer(recording_factory([text("Hi there.")], built), tmp_path) as server:
        thread = AguiThread(server.url, "thread-load")
        first = await thread.send("hi")
        again = await thread.run()
        fresh = await AguiThread(server.url, "thread-load").run()  # a client loading the thread's history

    assert again.types == ["RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert again.outcome == {"type": "success"}
    assert again.messages == first.messages == fresh.messages
    assert all(agent.model.calls == 0 for agent in built[1:])  # type: ignore[union-attr]


async def test_the_input_state_is_ignored_the_session_state_is_authoritative(tmp_path):
    # HumanInTheLoop trusts what agent.state says it trusts; a client must not be able to grant that trust itself.
    claimed = {"hitl:trusted_tools": ["delete_files"], "hitl:trust": [{"tool": "delete_files", "args": None}]}
    with LiveServer(session_agent, tmp_path) as server:
        thread = AguiThread(server.url, "thread-state")
        paused = await thread.send("clean up", state=claimed)
        assert paused.state == {}
        [interrupt] = paused.interrupts
        assert interrupt["metadata"]["name"] == "strands:human-in-the-loop"
        assert interrupt["metadata"]["tool"] == "delete_files"
        done = await thread.resume(resolved(interrupt, "y"), state=claimed)
    assert done.outcome == {"type": "success"}
    assert done.state == {}  # approved once: nothing is trusted


async def test_trust_granted_on_a_thread_is_kept_by_the_thread_and_a_client_cannot_revoke_it(tmp_path):
    with LiveServer(session_agent, tmp_path) as server:
        thread = AguiThread(server.url, "thread-trust")
        paused = await thread.send("clean up")
        [interrupt] = paused.interrupts
        assert "trust" in interrupt["metadata"]["options"]
        trusted = await thread.resume(resolved(interrupt, {"decision": "trust", "by": "alice"}))
        assert trusted.outcome == {"type": "success"}
        assert trusted.state["hitl:trusted_tools"] == ["delete_files"]
        [grant] = trusted.state["hitl:trust"]
        assert (grant["tool"], grant["args"], grant["granted_by"]) == ("delete_files", None, "alice")

        # The next request on the thread builds a new agent from the session: it asks nothing, whatever the
        # client says the state is.
        again = await thread.send("clean up again", state={})
    assert again.outcome == {"type": "success"}  # not "interrupt": nobody was asked
    assert sorted(again.results()) == ["tooluse_3", "tooluse_4"]
    assert again.results()["tooluse_4"] == "true"  # delete_files ran
    assert again.state["hitl:trusted_tools"] == ["delete_files"]
    manager = FileSessionManager("thread-trust", storage_dir=tmp_path)
    audit = session_agent(manager).interrupt_audit
    manager.close()
    decided = [
        (entry["tool_use_id"], entry["decision"], entry["decided_by"])
        for entry in audit
        if entry["event"] == "decision"
    ]
    assert decided == [
        ("tooluse_1", "allowed", "allowed_tools"),
        ("tooluse_2", "approved", "alice"),
        ("tooluse_3", "allowed", "allowed_tools"),
        ("tooluse_4", "trusted", "trust:delete_files"),
    ]


# -- streaming ----------------------------------------------------------------------------------------------------


async def test_text_and_tool_arguments_stream_in_deltas_that_add_up_to_the_snapshot(tmp_path):
    script = [
        turn(text("Let me"), text("send it."), tool_call("send_email", tool_use_id="tc-1", to="a@b.com", subject="Hi")),
        text("All done, the email went out."),
    ]

    def factory(session_manager):
        agent = Agent(model=ScriptedModel(script, chunk_size=4), tools=[send_email], session_manager=session_manager)
        return agent

    with LiveServer(factory, tmp_path) as server:
        run = await AguiThread(server.url, "thread-stream").send("go")

    assert run.outcome == {"type": "success"}
    by_message: dict[str, str] = {}
    for event in run.of("TEXT_MESSAGE_CONTENT"):
        by_message[event["messageId"]] = by_message.get(event["messageId"], "") + event["delta"]
    assert len(run.of("TEXT_MESSAGE_CONTENT")) > 4
    snapshot = {m["id"]: m for m in run.messages}
    assert by_message == {mid: snapshot[mid]["content"] for mid in by_message}
    assert list(by_message.values()) == ["Let me\nsend it.", "All done, the email went out."]
    args = "".join(e["delta"] for e in run.of("TOOL_CALL_ARGS"))
    assert len(run.of("TOOL_CALL_ARGS")) > 1
    [start] = run.of("TOOL_CALL_START")
    assert args == snapshot[start["parentMessageId"]]["toolCalls"][0]["function"]["arguments"]
    # The tool call belongs to the message that streamed the text before it.
    assert start["parentMessageId"] == next(iter(by_message))
    assert run.results() == {"tc-1": "Email sent to a@b.com."}
    tool_message = next(m for m in run.messages if m["role"] == "tool")
    assert tool_message["id"] == run.of("TOOL_CALL_RESULT")[0]["messageId"]


# -- failures -----------------------------------------------------------------------------------------------------


async def test_a_concurrent_run_of_the_same_thread_is_refused(tmp_path):
    entered, release = threading.Event(), threading.Event()

    @tool
    def slow() -> str:
        """Take a while."""
        entered.set()
        release.wait(10)
        return "finished"

    factory = scripted_factory([tool_call("slow", tool_use_id="tc-s"), text("Done.")], tools=[slow])
    with LiveServer(factory, tmp_path) as server:
        first = AguiThread(server.url, "thread-busy")
        results = {}

        async def run_first() -> None:
            results["first"] = await first.send("go")

        async with anyio.create_task_group() as group:
            group.start_soon(run_first)
            await anyio.to_thread.run_sync(entered.wait, 10)
            second = await AguiThread(server.url, "thread-busy").send("me too")
            release.set()

    second.assert_error("SESSION_CONFLICT")
    assert results["first"].outcome == {"type": "success"}
    assert results["first"].results() == {"tc-s": "finished"}


async def test_another_process_running_the_thread_is_a_session_conflict(tmp_path):
    # Two servers on one storage directory: the session's file lock refuses the second one.
    entered, release = threading.Event(), threading.Event()

    @tool
    def slow() -> str:
        """Take a while."""
        entered.set()
        release.wait(10)
        return "finished"

    factory = scripted_factory([tool_call("slow", tool_use_id="tc-s"), text("Done.")], tools=[slow])
    with LiveServer(factory, tmp_path) as one, LiveServer(factory, tmp_path) as two:
        results = {}

        async def run_first() -> None:
            results["first"] = await AguiThread(one.url, "thread-shared").send("go")

        async with anyio.create_task_group() as group:
            group.start_soon(run_first)
            await anyio.to_thread.run_sync(entered.wait, 10)
            second = await AguiThread(two.url, "thread-shared").send("me too")
            release.set()

        second.assert_error("SESSION_CONFLICT")
        assert results["first"].outcome == {"type": "success"}
        after = await AguiThread(two.url, "thread-shared").run()
        assert after.messages[-1]["content"] == "Done."


def failing_factory(session_manager):
    raise RuntimeError("no agent today")


def not_an_agent_factory(session_manager):
    return "an agent"


def detached_factory(session_manager):
    return Agent(model=ScriptedModel([text("hi")]))


@pytest.mark.parametrize("factory", [failing_factory, not_an_agent_factory, detached_factory])
async def test_a_factory_that_fails_or_builds_no_persisted_agent_is_refused(tmp_path, factory):
    with LiveServer(factory, tmp_path) as server:
        run = await AguiThread(server.url, "thread-factory").send("hi")
    run.assert_error("AGENT_FACTORY_ERROR")


async def test_an_agent_failure_is_a_run_error_and_the_thread_goes_on(tmp_path):
    builds: list[int] = []

    def factory(session_manager):
        builds.append(1)
        turns = [RuntimeError("model down")] if len(builds) == 1 else [text("Back up.")]
        return Agent(model=ScriptedModel(turns), session_manager=session_manager)

    with LiveServer(factory, tmp_path) as server:
        thread = AguiThread(server.url, "thread-fail")
        failed = await thread.send("hi")
        error = failed.assert_error("AGENT_ERROR")
        assert "model down" in error["message"]
        retried = await thread.send("hi again")
    assert retried.outcome == {"type": "success"}


async def test_a_failed_orchestration_is_a_run_error(tmp_path):
    def factory(session_manager):
        builder = GraphBuilder()
        builder.add_node(Agent(name="broken", model=ScriptedModel([RuntimeError("boom")])), "broken")
        builder.set_session_manager(session_manager)
        return builder.build()

    with LiveServer(factory, tmp_path) as server:
        run = await AguiThread(server.url, "thread-graph-fail").send("go")
    error = run.assert_error("RUN_FAILED")
    assert "broken" in error["message"]
    assert "MESSAGES_SNAPSHOT" in run.types


async def test_an_interrupted_thread_survives_a_server_restart(tmp_path):
    script = [tool_call("send_email", tool_use_id="tc-1", to="a@b.com", subject="Hi"), text("Done.")]
    factory = scripted_factory(script, hooks=[approval()])
    with LiveServer(factory, tmp_path) as server:
        thread = AguiThread(server.url, "thread-restart")
        [interrupt] = (await thread.send("go")).interrupts
    with LiveServer(factory, tmp_path) as restarted:
        thread.url = restarted.url
        done = await thread.resume(resolved(interrupt, {"approved": True}))
    assert done.outcome == {"type": "success"}
    assert len(SENT) == 1


def test_a_missing_extra_names_the_install_command():
    code = "import sys; sys.modules['ag_ui'] = None; import strandslike.protocol.agui"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert result.returncode != 0
    assert "ImportError" in result.stderr
    assert "pip install 'strandslike[agui]'" in result.stderr
