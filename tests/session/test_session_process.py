"""Resuming a paused agent in another Python process, in both directions."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import answer
from session_workers import SESSION_ID, build_agent, child_argv, pause_turns, resume_turns, tool_runs

from strandslike.models import text, tool_call
from strandslike.types.exceptions import SessionConflictError

PATHS = ["a/b/c.txt", "d/e/f.txt"]


def run_child(command: str, **arguments: Any) -> dict[str, Any]:
    completed = subprocess.run(
        child_argv(command, **arguments), capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.strip().splitlines()
    assert len(lines) == 1, completed.stdout
    result: dict[str, Any] = json.loads(lines[0])
    return result


def test_a_fresh_agent_in_this_process_resumes_an_agent_paused_in_another(tmp_path: Path) -> None:
    log = tmp_path / "tools.log"
    paused = run_child("pause", storage_dir=str(tmp_path), log=str(log), paths=PATHS)
    assert paused["stop_reason"] == "interrupt"
    [interrupt] = paused["interrupts"]
    assert interrupt["name"] == f"{SESSION_ID}-approval"
    assert interrupt["reason"] == {"paths": PATHS}
    assert tool_runs(log) == []

    agent, model = build_agent(tmp_path, resume_turns(), log)
    assert agent._interrupt_state.activated
    assert [i.id for i in agent._interrupt_state.unanswered()] == [interrupt["id"]]
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]

    result = agent([{"interruptResponse": {"interruptId": interrupt["id"], "response": "t"}}])
    assert result.stop_reason == "end_turn"
    assert model.calls == 1
    assert tool_runs(log) == [{"tool": "delete_files", "input": PATHS, "pid": os.getpid()}]
    assert agent.state.get(f"{SESSION_ID}-approval") == "t"

    # A third request, in yet another process state: trust is remembered, no interrupt.
    agent, _ = build_agent(
        tmp_path, [tool_call("delete_files", tool_use_id="delete_2", paths=["x"]), text("Deleted x.")], log
    )
    assert agent("And x").stop_reason == "end_turn"
    assert [run["input"] for run in tool_runs(log)] == [PATHS, ["x"]]


def test_a_child_process_resumes_an_agent_paused_in_this_process(tmp_path: Path) -> None:
    log = tmp_path / "tools.log"
    agent, _ = build_agent(tmp_path, pause_turns(PATHS), log)
    paused = agent("Clean up")
    assert paused.stop_reason == "interrupt"
    [interrupt] = paused.interrupts
    history = list(agent.messages)

    resumed = run_child("resume", storage_dir=str(tmp_path), log=str(log), interrupt_id=interrupt.id, response="y")
    assert resumed["restored_interrupts"] == [interrupt.id]
    assert resumed["stop_reason"] == "end_turn"
    assert resumed["message"] == {"role": "assistant", "content": [{"text": "Deleted."}]}
    assert resumed["state"] == {f"{SESSION_ID}-approval": "y", "tools_run": 1}
    assert resumed["model_calls"] == 1
    [run] = tool_runs(log)
    assert run["input"] == PATHS
    assert run["pid"] != os.getpid()

    restored, _ = build_agent(tmp_path, [], log)
    assert restored.messages[:2] == history
    assert [m["role"] for m in restored.messages] == ["user", "assistant", "user", "assistant"]
    assert restored.messages[-1] == resumed["message"]
    assert not restored._interrupt_state.activated
    assert restored.state.get() == resumed["state"]


def test_the_stale_agent_of_the_first_process_cannot_resume_after_another_process_did(tmp_path: Path) -> None:
    log = tmp_path / "tools.log"
    agent, _ = build_agent(tmp_path, [*pause_turns(PATHS), text("never")], log)
    [interrupt] = agent("Clean up").interrupts
    size = (tmp_path / f"session_{SESSION_ID}" / "agents" / "agent_default" / "agent.jsonl").stat().st_size

    run_child("resume", storage_dir=str(tmp_path), log=str(log), interrupt_id=interrupt.id, response="y")
    assert len(tool_runs(log)) == 1
    grown = (tmp_path / f"session_{SESSION_ID}" / "agents" / "agent_default" / "agent.jsonl").stat().st_size
    assert grown > size

    with pytest.raises(SessionConflictError):
        agent([answer(interrupt, "y")])
    assert len(tool_runs(log)) == 1  # the stale copy ran nothing
    assert (tmp_path / f"session_{SESSION_ID}" / "agents" / "agent_default" / "agent.jsonl").stat().st_size == grown
