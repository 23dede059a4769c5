"""A restore racing another process's completed resume must never run the approved tool again (issue 9, item 1).

Process A restores an interrupted session and is stopped right after its first read of the agent's storage (or
right after the whole restore); meanwhile this process resumes the same interrupt to completion (the approved
tool runs); then A resumes too. Earlier versions read the agent record and the messages in two reads: A built
its agent from the old, interrupted snapshot, remembered the version of the *new* log, passed the conflict
check and ran the tool a second time. A must get `SessionConflictError` and change nothing.
"""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from session_workers import (
    build_agent,
    child_argv,
    pause_turns,
    read_line,
    resume_turns,
    tool_runs,
)

from strandslike.models import text

PATHS = ["old/a.txt", "old/b.txt"]


def interrupted(storage: Path, log: Path) -> str:
    agent, _ = build_agent(storage, pause_turns(PATHS), log)
    result = agent("Clean up")
    assert result.stop_reason == "interrupt"
    agent.session_manager.close()
    return result.interrupts[0].id


def race(storage: Path, pause: str) -> dict[str, Any]:
    log = storage / "tools.log"
    interrupt_id = interrupted(storage, log)
    read_end, write_end = os.pipe()
    argv = child_argv(
        "slow_restore",
        storage_dir=str(storage),
        log=str(log),
        interrupt_id=interrupt_id,
        barrier_fd=read_end,
        pause=pause,
    )
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(read_end,), bufsize=0
    ) as child:
        assert child.stdout is not None
        assert child.stderr is not None
        try:
            os.close(read_end)
            line = read_line(child.stdout, timeout=30)
            assert line == "READ", line + child.stderr.read().decode()

            # While A is stopped, this process completes the resume: the approved tool runs once.
            winner, _ = build_agent(storage, resume_turns(), log)
            answer = [{"interruptResponse": {"interruptId": interrupt_id, "response": "y"}}]
            assert winner(answer).stop_reason == "end_turn"
            winner.session_manager.close()
            assert [run["tool"] for run in tool_runs(log)] == ["delete_files"]

            os.close(write_end)  # let A go on
            write_end = -1
            out, err = child.communicate(timeout=30)
            assert child.returncode == 0, err.decode()
        finally:
            if write_end >= 0:
                os.close(write_end)
            if child.poll() is None:
                child.kill()
                child.wait()
    outcome: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    outcome["runs"] = tool_runs(log)
    outcome["interrupt_id"] = interrupt_id
    return outcome


@pytest.mark.parametrize("pause", ["mid-restore", "after-restore"])
def test_a_restore_racing_a_completed_resume_gets_a_conflict_and_never_runs_the_tool_again(
    tmp_path: Path, pause: str
) -> None:
    outcome = race(tmp_path, pause)
    assert outcome["restored_interrupts"] == [outcome["interrupt_id"]]  # A did restore the interrupted state
    assert outcome["outcome"] == "conflict", outcome
    assert "Nothing was written and no tool ran" in outcome["error"]
    assert [run["tool"] for run in outcome["runs"]] == ["delete_files"]  # exactly once, by the winner

    fresh, model = build_agent(tmp_path, [text("Anything else?")], tmp_path / "tools.log")
    assert not fresh._interrupt_state.activated
    assert [m["role"] for m in fresh.messages] == ["user", "assistant", "user", "assistant"]
    assert fresh.messages[-1] == {"role": "assistant", "content": [{"text": "Deleted."}]}
    assert fresh.state.get("tools_run") == 1
    assert fresh("Thanks").stop_reason == "end_turn"
    assert model.calls == 1
