"""A restore reads one snapshot: a resume completed by another writer between the reads of a restore is a conflict.

Restoring reads the agent record (state, interrupt state) and then its messages. When another process completed
the resume in between, the second read used to come from the newer log and remember the newer version, so the
agent built from the old interrupted record passed the conflict check and applied its answer a second time. The
two AG-UI servers test (``tests/protocol/test_agui_two_servers.py``) met it in about 1 race in 100.
"""

from pathlib import Path

import pytest
from session_workers import SESSION_ID, build_agent, pause_turns, resume_turns, tool_runs

from strandslike import Agent
from strandslike.models import ScriptedModel, text
from strandslike.session import FileSessionManager
from strandslike.types.exceptions import SessionConflictError


def test_a_resume_completed_between_the_reads_of_a_restore_is_a_conflict(tmp_path: Path) -> None:
    log = tmp_path / "tools.log"
    paused, _ = build_agent(tmp_path, pause_turns(["a.txt"]), log)
    interrupt_id = paused("Clean up").interrupts[0].id
    paused.session_manager.close()

    slow_reader = FileSessionManager(SESSION_ID, storage_dir=tmp_path)
    stale_record = slow_reader.read_agent(SESSION_ID, "default")  # the first read of a restore...
    assert stale_record is not None

    winner, _ = build_agent(tmp_path, resume_turns(), log)  # ...another process completes the resume...
    assert winner([{"interruptResponse": {"interruptId": interrupt_id, "response": "y"}}]).stop_reason == "end_turn"
    assert len(tool_runs(log)) == 1
    finished = list(winner.messages)

    # ...and the restore's second read still comes from the snapshot of the first.
    assert [m.to_message() for m in slow_reader.list_messages(SESSION_ID, "default")] == paused.messages
    loser = Agent(model=ScriptedModel([text("Again.")]), session_manager=slow_reader, callback_handler=None)
    assert loser._interrupt_state.activated
    with pytest.raises(SessionConflictError):
        loser([{"interruptResponse": {"interruptId": interrupt_id, "response": "n"}}])
    assert len(tool_runs(log)) == 1

    fresh, _ = build_agent(tmp_path, [text("Nothing left.")], log)
    assert fresh.messages == finished
    assert not fresh._interrupt_state.activated
