"""A child forked while an agent holds its session lock does not keep the session locked after the agent is done."""

import os
from pathlib import Path

import pytest

from strandslike import Agent, tool
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.session import FileSessionManager

CHILDREN: list[tuple[int, int]] = []


@tool
def start_worker() -> str:
    """Fork a worker that never execs (as multiprocessing's fork start method does) and leave it running."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: it holds copies of every descriptor, the session's lock included
        os.close(write_end)
        os.read(read_end, 1)
        os._exit(0)
    os.close(read_end)
    CHILDREN.append((pid, write_end))
    return "started"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_worker_does_not_keep_the_session_locked(tmp_path: Path):
    manager = FileSessionManager("forks", storage_dir=tmp_path)
    agent = Agent(
        model=ScriptedModel([tool_call("start_worker"), text("started a worker")]),
        tools=[start_worker],
        session_manager=manager,
    )
    try:
        assert str(agent("start a worker")) == "started a worker\n"
        manager.close()
        # The worker still runs; the session must be usable by the next request all the same.
        again = FileSessionManager("forks", storage_dir=tmp_path)
        try:
            next_agent = Agent(model=ScriptedModel([text("still here")]), session_manager=again)
            assert str(next_agent("anything else?")) == "still here\n"
        finally:
            again.close()
    finally:
        for pid, write_end in CHILDREN:
            os.close(write_end)  # the worker reads end-of-file and exits
            os.waitpid(pid, 0)
        CHILDREN.clear()
