import json
import shutil

import pytest
from cli_support import FIXTURE, LONG, PNG, build_chat, make_session, run_cli, tree

from strandslike.__main__ import main
from strandslike.session import FileSessionManager
from strandslike.types.session import decode_bytes_values


@pytest.fixture
def store(tmp_path):
    """A storage directory with an interrupted session ``work`` and a finished session ``chat``."""
    storage = tmp_path / "store"
    paused = make_session(storage, "work")
    assert paused.stop_reason == "interrupt"
    make_session(storage, "chat", factory=build_chat, prompt="hi")
    return storage


def interrupt_id(storage, session_id="work"):
    manager = FileSessionManager(session_id, storage_dir=storage)
    try:
        data = manager.read_agent(session_id, "default")._internal_state["interrupt_state"]
    finally:
        manager.close()
    return next(iter(data["interrupts"]))


def test_list_prints_one_line_per_session(store, capsys):
    before = tree(store)
    assert main(["sessions", "list", "--storage-dir", str(store)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["SESSION", "UPDATED", "STATUS", "AGENTS"]
    chat, work = lines[1:]
    assert chat.startswith("chat ")
    assert "idle" in chat
    assert "default: 2 messages" in chat
    assert work.startswith("work ")
    assert "interrupted (1 open)" in work
    assert "default: 4 messages, 1 open interrupt" in work
    assert tree(store) == before  # read-only: no lock, no file touched


def test_list_json(store, capsys):
    assert main(["sessions", "list", "--storage-dir", str(store), "--json"]) == 0
    sessions = {entry["session_id"]: entry for entry in json.loads(capsys.readouterr().out)}
    assert set(sessions) == {"chat", "work"}
    work = sessions["work"]
    assert work["interrupted"] is True
    assert work["agents"] == [
        {
            "agent_id": "default",
            "messages": 4,
            "interrupted": True,
            "open_interrupts": 1,
            "updated_at": work["agents"][0]["updated_at"],
        }
    ]
    assert work["updated_at"] >= work["created_at"]
    assert sessions["chat"]["agents"][0]["interrupted"] is False


def test_list_empty_and_missing_storage(tmp_path, capsys):
    assert main(["sessions", "list", "--storage-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == f"no sessions in {tmp_path}"
    missing = tmp_path / "nope"
    assert main(["sessions", "list", "--storage-dir", str(missing)]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert not missing.exists()


def test_list_reports_a_corrupt_session_and_lists_the_others(store, capsys):
    log = store / "session_chat" / "agents" / "agent_default" / "agent.jsonl"
    with log.open("ab") as handle:
        handle.write(b"{not json}\n")
    assert main(["sessions", "list", "--storage-dir", str(store)]) == 2
    captured = capsys.readouterr()
    assert str(log) in captured.err
    assert "work " in captured.out


def test_show_prints_messages(store, capsys):
    before = tree(store)
    assert main(["sessions", "show", "--storage-dir", str(store), "work"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "session work, agent default: 4 messages, waiting on 1 interrupt"
    assert lines[1] == 'state: {"owner": "alice"}'
    assert lines[2].startswith("   0 user       clean up very very")
    assert lines[2].endswith("…")
    assert len(lines[2]) == 160
    assert lines[3].strip() == f"[image png, {len(PNG)} bytes]"
    assert 'toolUse inspect_files {"paths": ["a.txt", "b.txt"]} (id t_inspect)' in out
    assert 'toolResult success (id t_inspect): {"a.txt": 1, "b.txt": 1}' in out
    audit_at = lines.index("interrupt audit:")
    assert lines[audit_at - 1] == '   3 assistant  toolUse delete_files {"paths": ["a.txt", "b.txt"]} (id t_delete)'
    assert "raised   approval" in lines[audit_at + 1]
    assert tree(store) == before


def test_show_full_does_not_truncate(store, capsys):
    assert main(["sessions", "show", "--storage-dir", str(store), "work", "--full"]) == 0
    assert LONG in capsys.readouterr().out


def test_show_json_prints_the_raw_messages(store, capsys):
    assert main(["sessions", "show", "--storage-dir", str(store), "work", "--json", "--agent-id", "default"]) == 0
    data = json.loads(capsys.readouterr().out)
    (agent,) = data["agents"]
    assert agent["agent_id"] == "default"
    assert agent["state"] == {"owner": "alice"}
    assert agent["interrupted"] is True
    messages = decode_bytes_values(agent["messages"])
    assert [message["role"] for message in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[0]["content"][1]["image"]["source"]["bytes"] == PNG
    assert messages[3]["content"][0]["toolUse"]["name"] == "delete_files"


def test_show_unknown_agent(store, capsys):
    assert main(["sessions", "show", "--storage-dir", str(store), "work", "--agent-id", "other"]) == 1
    assert "has no agent 'other' (agents: default)" in capsys.readouterr().err


def test_interrupts_lists_open_interrupts(store, capsys):
    before = tree(store)
    assert main(["sessions", "interrupts", "--storage-dir", str(store), "work"]) == 0
    out = capsys.readouterr().out
    assert "session work, agent default: 1 open interrupt" in out
    assert "  name:   approval" in out
    assert f"  id:     {interrupt_id(store)}" in out
    assert '  reason: {"paths": ["a.txt", "b.txt"]}' in out
    assert f"--storage-dir {store} work --response {interrupt_id(store)}=JSON" in out
    assert tree(store) == before


def test_interrupts_json(store, capsys):
    assert main(["sessions", "interrupts", "--storage-dir", str(store), "work", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == {
        "session_id": "work",
        "agents": [
            {
                "agent_id": "default",
                "interrupts": [
                    {"id": interrupt_id(store), "name": "approval", "reason": {"paths": ["a.txt", "b.txt"]}}
                ],
            }
        ],
    }


def test_interrupts_of_a_finished_session(store, capsys):
    assert main(["sessions", "interrupts", "--storage-dir", str(store), "chat"]) == 0
    assert capsys.readouterr().out.strip() == "session chat has no open interrupts"


@pytest.mark.parametrize("command", ["show", "interrupts"])
def test_unknown_session_is_exit_1_and_creates_nothing(store, capsys, command):
    before = tree(store)
    assert main(["sessions", command, "--storage-dir", str(store), "nope"]) == 1
    err = capsys.readouterr().err
    assert "no session 'nope'" in err
    assert "sessions there: chat, work" in err
    assert tree(store) == before


def test_invalid_session_id_is_a_usage_error(store, capsys):
    assert main(["sessions", "show", "--storage-dir", str(store), "../work"]) == 2
    assert "path separators" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["show", "interrupts"])
def test_corrupt_agent_log_names_the_file(store, capsys, command):
    log = store / "session_work" / "agents" / "agent_default" / "agent.jsonl"
    with log.open("ab") as handle:
        handle.write(b'{"k": "m"}\n')
    assert main(["sessions", command, "--storage-dir", str(store), "work"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {log}: line ")


def test_corrupt_session_record_names_the_file(store, capsys):
    record = store / "session_work" / "session.json"
    record.write_text("{oops")
    assert main(["sessions", "show", "--storage-dir", str(store), "work"]) == 2
    assert f"error: {record}: is not valid JSON" in capsys.readouterr().err


def test_strands_session_points_to_import(tmp_path, capsys):
    shutil.copytree(FIXTURE, tmp_path / "strands")
    assert main(["sessions", "show", "--storage-dir", str(tmp_path / "strands"), "support-42"]) == 2
    assert "sessions import-strands" in capsys.readouterr().err


def test_usage_errors(capsys):
    assert main([]) == 2
    assert main(["sessions"]) == 2
    assert main(["bogus"]) == 2
    capsys.readouterr()
    assert main(["--help"]) == 0
    assert "sessions" in capsys.readouterr().out


def test_sessions_commands_in_a_child_process(store):
    listed = run_cli("sessions", "list", "--storage-dir", str(store))
    assert listed.returncode == 0, listed.stderr
    assert "interrupted (1 open)" in listed.stdout
    shown = run_cli("sessions", "show", "--storage-dir", str(store), "work", "--json")
    assert shown.returncode == 0, shown.stderr
    assert len(json.loads(shown.stdout)["agents"][0]["messages"]) == 4
    interrupts = run_cli("sessions", "interrupts", "--storage-dir", str(store), "work")
    assert interrupts.returncode == 0, interrupts.stderr
    assert "name:   approval" in interrupts.stdout
