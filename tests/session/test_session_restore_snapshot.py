"""A restore reads one snapshot: a resume completed by another writer after that read is a conflict.

Restoring used to read the agent record (state, interrupt state) and then its messages. When another process
completed the resume in between, the second read came from the newer log and remembered the newer version, so the
agent built from the old interrupted record passed the conflict check and applied its answer a second time. The
two AG-UI servers test (``tests/protocol/test_agui_two_servers.py``) met it in about 1 race in 100. A restore now
reads the agent's log once (``read_log``) and remembers the version of exactly that read; the two-process version
of this check is ``test_session_restore_race.py``.
"""

from pathlib import Path
from typing import Any

import pytest
from session_workers import SESSION_ID, build_agent, pause_turns, resume_turns, tool_runs

from strandslike import Agent
from strandslike.models import ScriptedModel, text
from strandslike.session import FileSessionManager
from strandslike.types.exceptions import SessionConflictError


class CountingReads(FileSessionManager):
    """A file session that counts the reads a restore makes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.reads: list[str] = []
        super().__init__(*args, **kwargs)

    def read_log(self, *args: Any, **kwargs: Any) -> Any:
        self.reads.append("read_log")
        return super().read_log(*args, **kwargs)

    def read_agent(self, *args: Any, **kwargs: Any) -> Any:
        self.reads.append("read_agent")
        return super().read_agent(*args, **kwargs)

    def list_messages(self, *args: Any, **kwargs: Any) -> Any:
        self.reads.append("list_messages")
        return super().list_messages(*args, **kwargs)


def test_a_resume_completed_after_the_read_of_a_restore_is_a_conflict(tmp_path: Path) -> None:
    log = tmp_path / "tools.log"
    paused, _ = build_agent(tmp_path, pause_turns(["a.txt"]), log)
    interrupt_id = paused("Clean up").interrupts[0].id
    paused.session_manager.close()

    slow_reader = CountingReads(SESSION_ID, storage_dir=tmp_path)
    loser = Agent(model=ScriptedModel([text("Again.")]), session_manager=slow_reader, callback_handler=None)
    assert slow_reader.reads == ["read_log"]  # the whole restore is one read
    assert loser._interrupt_state.activated
    assert loser.messages == paused.messages

    winner, _ = build_agent(tmp_path, resume_turns(), log)  # another process completes the resume
    assert winner([{"interruptResponse": {"interruptId": interrupt_id, "response": "y"}}]).stop_reason == "end_turn"
    assert len(tool_runs(log)) == 1
    finished = list(winner.messages)

    with pytest.raises(SessionConflictError):
        loser([{"interruptResponse": {"interruptId": interrupt_id, "response": "n"}}])
    assert len(tool_runs(log)) == 1

    fresh, _ = build_agent(tmp_path, [text("Nothing left.")], log)
    assert fresh.messages == finished
    assert not fresh._interrupt_state.activated
