import json
import shutil

import pytest
from cli_support import FIXTURE, run_cli, tree

from strandslike import Agent, tool
from strandslike.__main__ import main
from strandslike.agent.conversation_manager import SlidingWindowConversationManager
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import ScriptedModel, text
from strandslike.session import FileSessionManager
from strandslike.types.session import decode_bytes_values

AGENT_DIR = "session_support-42/agents/agent_assistant"
INTERRUPT_ID = "v1:before_tool_call:tooluse_delete:75a96266-45d2-581c-8a6f-043e472e1763"
PNG_PREFIX = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def source(tmp_path):
    """A copy of the committed strands-agents storage directory."""
    copy = tmp_path / "strands"
    shutil.copytree(FIXTURE, copy)
    return copy


def strands_messages(source):
    """The conversation a Strands agent restores from the fixture: numeric order, redactions applied."""
    files = sorted((source / AGENT_DIR / "messages").glob("message_*.json"), key=lambda p: int(p.stem.split("_")[1]))
    records = [decode_bytes_values(json.loads(path.read_text())) for path in files]
    return [record["redact_message"] or record["message"] for record in records]


def import_into(source, target, *extra):
    return main(["sessions", "import-strands", str(source), "--storage-dir", str(target), *extra])


class Tools:
    def __init__(self):
        self.calls = []

        @tool
        def inspect_files(paths: list[str]) -> dict[str, int]:
            """Report sizes.

            Args:
                paths: Files to inspect.
            """
            self.calls.append(("inspect_files", paths))
            return {path: 9 for path in paths}

        @tool
        def delete_files(paths: list[str]) -> bool:
            """Delete files.

            Args:
                paths: Files to delete.
            """
            self.calls.append(("delete_files", paths))
            return True

        self.tools = [inspect_files, delete_files]


def approve(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "delete_files":
        if event.interrupt("myapp-approval", reason={"paths": event.tool_use["input"]["paths"]}) != "y":
            event.cancel_tool = "denied"


def restored_agent(target, tools=None, **kwargs):
    return Agent(
        model=ScriptedModel([text("Deleted both files.")]),
        agent_id="assistant",
        tools=(tools or Tools()).tools,
        hooks=[approve],
        session_manager=FileSessionManager("support-42", storage_dir=target),
        **kwargs,
    )


def test_import_then_restore_messages_state_and_interrupt(source, tmp_path, capsys):
    target = tmp_path / "target"
    assert import_into(source, target) == 0
    out = capsys.readouterr().out
    assert "imported session support-42: agent assistant (12 messages, waiting on 1 interrupt: myapp-approval)" in out
    assert "imported session pipeline: multi-agent daily" in out
    assert sorted(path.name for path in target.iterdir()) == ["session_pipeline", "session_support-42"]

    agent = restored_agent(target)
    expected = strands_messages(source)
    assert agent.messages == expected
    assert agent.messages[0]["content"][1]["image"]["source"]["bytes"].startswith(PNG_PREFIX)  # bytes survived
    assert agent.messages[1]["content"] == [{"text": "[redacted]"}]
    assert agent.messages[10]["content"][0]["toolResult"]["toolUseId"] == "tooluse_inspect"  # numeric order
    assert agent.state.get() == {"user": {"name": "alice", "plan": "pro"}, "visits": 2}
    interrupts = agent._interrupt_state
    assert interrupts.activated
    assert [(i.id, i.name, i.reason) for i in interrupts.unanswered()] == [
        (INTERRUPT_ID, "myapp-approval", {"paths": ["a/b/c.txt", "d/e/f.txt"]})
    ]
    assert [r["toolUseId"] for r in interrupts.pending_tool_execution.completed_tool_results] == ["tooluse_recheck"]
    agent.session_manager.close()


def test_imported_interrupted_agent_resumes(source, tmp_path):
    target = tmp_path / "target"
    assert import_into(source, target) == 0
    tools = Tools()
    agent = restored_agent(target, tools)
    result = agent([{"interruptResponse": {"interruptId": INTERRUPT_ID, "response": "y"}}])
    agent.session_manager.close()
    assert result.stop_reason == "end_turn"
    assert str(result) == "Deleted both files.\n"
    assert tools.calls == [("delete_files", ["a/b/c.txt", "d/e/f.txt"])]  # the completed inspect_files kept
    results = agent.messages[12]["content"]
    assert [block["toolResult"]["toolUseId"] for block in results] == ["tooluse_delete", "tooluse_recheck"]

    again = restored_agent(target)  # a later process sees the finished conversation
    assert again.messages == agent.messages
    assert not again._interrupt_state.activated
    assert again.state.get("myapp-approval") is None
    again.session_manager.close()


def test_imported_conversation_manager_state_restores(source, tmp_path):
    target = tmp_path / "target"
    assert import_into(source, target) == 0
    manager = SlidingWindowConversationManager(window_size=40)
    agent = restored_agent(target, conversation_manager=manager)
    assert manager.removed_message_count == 0
    assert len(agent.messages) == 12
    agent.session_manager.close()


def test_import_keeps_session_record_and_multi_agent_state(source, tmp_path, capsys):
    target = tmp_path / "target"
    assert import_into(source, target) == 0
    strands_session = json.loads((source / "session_support-42" / "session.json").read_text())
    manager = FileSessionManager("pipeline", storage_dir=target)
    imported = manager.read_session("support-42")
    assert imported.created_at == strands_session["created_at"]
    stored = json.loads((source / "session_pipeline/multi_agents/multi_agent_daily/multi_agent.json").read_text())
    assert manager.read_multi_agent("pipeline", "daily") == stored
    manager.close()
    assert main(["sessions", "list", "--storage-dir", str(target)]) == 0
    listed = capsys.readouterr().out
    assert "interrupted (1 open)" in listed
    assert "multi-agent daily" in listed


def test_import_leaves_the_source_alone(source, tmp_path):
    before = tree(source)
    assert import_into(source, tmp_path / "target") == 0
    assert tree(source) == before


def test_stray_message_file_is_skipped_with_a_warning(source, tmp_path, capsys):
    expected = strands_messages(source)
    stray = source / AGENT_DIR / "messages" / "message_abc.json"
    stray.write_text('{"message": {"role": "user", "content": []}, "message_id": 99}')
    target = tmp_path / "target"
    assert import_into(source, target) == 0
    captured = capsys.readouterr()
    assert f"warning: skipped {stray}: not a message_<number>.json file" in captured.err
    assert "(12 messages" in captured.out
    agent = restored_agent(target)
    assert agent.messages == expected
    agent.session_manager.close()


def test_refuses_to_overwrite_unless_asked(source, tmp_path, capsys):
    target = tmp_path / "target"
    assert import_into(source, target) == 0
    agent = restored_agent(target)
    agent([{"interruptResponse": {"interruptId": INTERRUPT_ID, "response": "y"}}])
    agent.session_manager.close()
    capsys.readouterr()
    before = tree(target)

    assert import_into(source, target) == 1
    err = capsys.readouterr().err
    assert "2 sessions already exist" in err
    assert "pipeline, support-42" in err
    assert "--overwrite" in err
    assert tree(target) == before

    assert import_into(source / "session_support-42", target, "--overwrite") == 0
    assert "replaced session support-42" in capsys.readouterr().out
    fresh = restored_agent(target)
    assert fresh._interrupt_state.activated  # back to the imported, interrupted state
    assert len(fresh.messages) == 12
    fresh.session_manager.close()
    assert not list(target.glob(".import-*"))


def test_overwrite_refuses_a_running_session(source, tmp_path, capsys):
    target = tmp_path / "target"
    assert import_into(source, target) == 0
    agent = restored_agent(target)
    agent.session_manager.begin_invocation(agent)
    try:
        assert import_into(source, target, "--overwrite") == 1
        assert "in use by a running agent" in capsys.readouterr().err
    finally:
        agent.session_manager.close()


def test_single_session_directory(source, tmp_path, capsys):
    target = tmp_path / "target"
    assert import_into(source / "session_support-42", target) == 0
    assert [path.name for path in target.iterdir()] == ["session_support-42"]
    assert "1 session imported" in capsys.readouterr().out


def test_source_without_sessions(tmp_path, capsys):
    assert import_into(tmp_path, tmp_path / "target") == 1
    assert "holds no strands-agents session" in capsys.readouterr().err


def test_corrupt_source_file_is_exit_2_and_writes_nothing(source, tmp_path, capsys):
    broken = source / AGENT_DIR / "messages" / "message_3.json"
    broken.write_text("{truncated")
    target = tmp_path / "target"
    assert import_into(source, target) == 2
    assert f"error: {broken}: is not valid JSON" in capsys.readouterr().err
    assert not target.exists() or not list(target.iterdir())


def test_import_in_a_child_process(source, tmp_path):
    target = tmp_path / "target"
    completed = run_cli("sessions", "import-strands", str(source), "--storage-dir", str(target))
    assert completed.returncode == 0, completed.stderr
    assert "2 sessions imported" in completed.stdout
    shown = run_cli("sessions", "interrupts", "--storage-dir", str(target), "support-42")
    assert INTERRUPT_ID in shown.stdout


def test_importing_a_strandslike_directory_is_refused(source, tmp_path, capsys):
    target = tmp_path / "target"
    assert import_into(source, target) == 0
    assert import_into(target, tmp_path / "again") == 2
    assert "belongs to a strandslike session, not a strands-agents one" in capsys.readouterr().err
