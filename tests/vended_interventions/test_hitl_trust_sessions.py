"""Trust that is scoped, remembered by the session across fresh processes, listable and revocable (API and CLI)."""

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hitl_workers import SESSION_ID, build, child_argv, runs

from strandslike import Agent
from strandslike.cli import main as cli
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.session import FileSessionManager
from strandslike.types.exceptions import SessionConflictError
from strandslike.vended_interventions.hitl import HumanInTheLoop, TrustGrant


def child(command: str, tmp_path: Path, **arguments: Any) -> dict[str, Any]:
    completed = subprocess.run(
        child_argv(command, storage=str(tmp_path), log=str(tmp_path / "runs.log"), **arguments),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def run_cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = cli(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_scoped_trust_survives_fresh_processes_and_revocation_ends_it(tmp_path, capsys):
    log = tmp_path / "runs.log"
    first = child("ask", tmp_path, paths=["/tmp/a"], id="t1")
    assert first["stop_reason"] == "interrupt"
    (interrupt,) = first["interrupts"]
    assert interrupt["metadata"]["options"] == ["approve", "deny", "trust", "edit"]
    assert interrupt["response_schema"]["title"] == "Approval"

    trust_tmp = {"decision": "trust", "by": "alice", "trustArgs": {"paths": {"glob": "/tmp/*"}}}
    second = child("answer", tmp_path, answer=trust_tmp)
    assert second["stop_reason"] == "end_turn"
    assert [(g["tool"], g["args"], g["granted_by"]) for g in second["trust"]] == [
        ("delete_files", {"paths": {"glob": "/tmp/*"}}, "alice")
    ]

    # A new process remembers the trust: /tmp files run without asking, others still ask.
    assert child("ask", tmp_path, paths=["/tmp/b", "/tmp/c"], id="t2")["stop_reason"] == "end_turn"
    outside = child("ask", tmp_path, paths=["/home/d"], id="t3")
    assert outside["stop_reason"] == "interrupt"
    assert child("answer", tmp_path, answer="n")["stop_reason"] == "end_turn"
    # A deny rule beats trust.
    assert child("ask", tmp_path, paths=["/etc/passwd"], id="t4")["stop_reason"] == "end_turn"
    assert runs(log) == [["/tmp/a"], ["/tmp/b", "/tmp/c"]]

    code, listed, _ = run_cli(capsys, "sessions", "trust", "list", "--storage-dir", str(tmp_path), SESSION_ID)
    assert code == 0
    assert f"session {SESSION_ID}, agent default: 1 trust grant" in listed
    assert "delete_files where paths glob '/tmp/*'" in listed
    assert "by alice" in listed

    code, revoked, _ = run_cli(
        capsys, "sessions", "trust", "revoke", "--storage-dir", str(tmp_path), SESSION_ID, "delete_files", "--by", "ops"
    )
    assert (code, revoked.strip()) == (0, "revoked trust in delete_files for agent default (1 grant)")

    again = child("ask", tmp_path, paths=["/tmp/e"], id="t5")
    assert again["stop_reason"] == "interrupt"
    assert again["trust"] == []
    assert runs(log) == [["/tmp/a"], ["/tmp/b", "/tmp/c"]]

    # Every decision is in the audit trail, kept with the session.
    agent = build(str(tmp_path), [])
    decisions = [
        (entry["decision"], entry["decided_by"], entry["input"]["paths"])
        for entry in agent.interrupt_audit
        if entry["event"] == "decision"
    ]
    assert decisions == [
        ("approved", "alice", ["/tmp/a"]),
        ("trusted", "trust:delete_files", ["/tmp/b", "/tmp/c"]),
        ("denied", "human", ["/home/d"]),
        ("denied", "rule:system files", ["/etc/passwd"]),
    ]
    (revocation,) = [entry for entry in agent.interrupt_audit if entry["event"] == "trust_revoked"]
    assert (revocation["tool"], revocation["revoked"], revocation["by"]) == ("delete_files", 1, "ops")
    agent.session_manager.close()

    code, audit, _ = run_cli(capsys, "sessions", "audit", "--storage-dir", str(tmp_path), SESSION_ID, "--full")
    assert code == 0
    decision_lines = [line for line in audit.splitlines() if " decision " in line]
    assert len(decision_lines) == 4
    assert '"decided_by": "rule:system files"' in decision_lines[-1]
    assert "(None)" not in audit  # decisions by a rule or trust concern no interrupt


def test_grant_list_and_revoke_persist_at_once_with_a_session(tmp_path):
    manager = FileSessionManager("api", storage_dir=tmp_path)
    agent = Agent(interventions=[HumanInTheLoop(enable_trust=True)], session_manager=manager)
    grant = HumanInTheLoop.grant_trust(agent, "send_email", {"to": "*@example.com"}, by="bob")
    assert grant == TrustGrant("send_email", {"to": {"glob": "*@example.com"}}, grant.granted_at, "bob")
    HumanInTheLoop.grant_trust(agent, "read_file")
    manager.close()

    fresh_manager = FileSessionManager("api", storage_dir=tmp_path)
    fresh = Agent(session_manager=fresh_manager)
    assert [(g.tool, g.args) for g in HumanInTheLoop.list_trust(fresh)] == [
        ("send_email", {"to": {"glob": "*@example.com"}}),
        ("read_file", None),
    ]
    assert fresh.state.get("hitl:trusted_tools") == ["read_file"]  # Strands' key, for tool-wide trust
    assert [r.tool for r in HumanInTheLoop.revoke_trust(fresh, "send_email", by="ops")] == ["send_email"]
    assert HumanInTheLoop.revoke_trust(fresh, "send_email") == []
    fresh_manager.close()

    last = Agent(session_manager=FileSessionManager("api", storage_dir=tmp_path))
    assert [g.tool for g in HumanInTheLoop.list_trust(last)] == ["read_file"]
    events = [(e["event"], e.get("tool")) for e in last.interrupt_audit]
    assert events == [("trust_granted", "send_email"), ("trust_granted", "read_file"), ("trust_revoked", "send_email")]
    last.session_manager.close()


def test_a_grant_that_cannot_be_persisted_changes_nothing(tmp_path):
    manager = FileSessionManager("conflict", storage_dir=tmp_path)
    stale = Agent(session_manager=manager)
    other = FileSessionManager("conflict", storage_dir=tmp_path)
    winner = Agent(session_manager=other)
    HumanInTheLoop.grant_trust(winner, "a")  # changes the session behind the stale agent's back

    with pytest.raises(SessionConflictError):
        HumanInTheLoop.grant_trust(stale, "b")
    assert HumanInTheLoop.list_trust(stale) == []
    assert stale.interrupt_audit == []
    manager.close()
    other.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"tool": ""}, "non-empty string"),
        ({"tool": "t", "args": {"n": {"maximum": 3}}}, "unknown condition 'maximum'"),
        ({"tool": "t", "args": ["n"]}, "args must be a mapping"),
    ],
)
def test_malformed_grants_are_refused_and_change_nothing(args, message):
    agent = Agent()
    with pytest.raises(ValueError, match=message):
        HumanInTheLoop.grant_trust(agent, **args)
    assert agent.state.get() == {}


def test_scoped_trust_from_an_answer_is_validated_by_the_response_schema():
    from strandslike.interrupt import InvalidPayloadError

    agent = Agent(
        model=ScriptedModel([tool_call("x", a=1), text("done")]),
        interventions=[HumanInTheLoop(enable_trust=True)],
    )
    paused = agent("go")
    with pytest.raises(InvalidPayloadError):
        agent([paused.interrupts[0].resume({"decision": "trust", "trustArgs": {"a": {"maximum": 2}}})])
    assert agent.pending_interrupts == paused.interrupts  # nothing applied: still resumable


def test_the_cli_refuses_what_it_cannot_do(tmp_path, capsys):
    agent = Agent(session_manager=FileSessionManager("s", storage_dir=tmp_path))
    HumanInTheLoop.grant_trust(agent, "read_file")
    agent.session_manager.close()

    code, _, err = run_cli(capsys, "sessions", "trust", "revoke", "--storage-dir", str(tmp_path), "s", "delete_files")
    assert code == 1
    assert "no agent of session 's' trusts 'delete_files' (trusted tools: read_file)" in err
    code, _, err = run_cli(capsys, "sessions", "trust", "list", "--storage-dir", str(tmp_path), "missing")
    assert code == 1
    assert "no session 'missing'" in err
    code, _, err = run_cli(capsys, "sessions", "trust", "list", "--storage-dir", str(tmp_path), "s", "--agent-id", "x")
    assert code == 1
    assert "has no agent or node 'x'" in err
    code, out, _ = run_cli(capsys, "sessions", "trust", "list", "--storage-dir", str(tmp_path), "s", "--json")
    assert code == 0
    (entry,) = json.loads(out)["agents"]
    assert (entry["agent_id"], [g["tool"] for g in entry["trust"]]) == ("default", ["read_file"])


def test_revoking_while_the_agent_runs_in_another_process_writes_nothing(tmp_path, capsys):
    manager = FileSessionManager("busy", storage_dir=tmp_path)
    agent = Agent(session_manager=manager)
    HumanInTheLoop.grant_trust(agent, "read_file")
    manager.begin_invocation(agent)  # holds the agent's lock, as a running invocation does
    try:
        code, _, err = run_cli(
            capsys, "sessions", "trust", "revoke", "--storage-dir", str(tmp_path), "busy", "read_file"
        )
    finally:
        manager.end_invocation(agent)
    assert code == 1
    assert "another process is running this agent" in err
    fresh = Agent(session_manager=FileSessionManager("busy", storage_dir=tmp_path))
    assert [g.tool for g in HumanInTheLoop.list_trust(fresh)] == ["read_file"]
    fresh.session_manager.close()
    manager.close()


def test_a_stale_agent_cannot_overwrite_a_revocation(tmp_path, capsys):
    manager = FileSessionManager("stale", storage_dir=tmp_path)
    agent = Agent(model=ScriptedModel([text("hi")]), session_manager=manager)
    HumanInTheLoop.grant_trust(agent, "read_file")
    code, _, _ = run_cli(capsys, "sessions", "trust", "revoke", "--storage-dir", str(tmp_path), "stale", "read_file")
    assert code == 0
    with pytest.raises(SessionConflictError):
        agent("hello")  # its in-memory state still trusts read_file: it must reload instead of writing it back
    manager.close()
