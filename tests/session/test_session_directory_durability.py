"""A new session's directories survive a machine crash: each directory created is fsynced through its parent.

POSIX makes a new directory entry durable only when its parent directory is fsynced; the log file's own
``fdatasync`` says nothing about the ``session_<id>/agents/agent_<id>`` directories above it. The file store syncs
the parent of every directory it creates when it runs with ``fsync=True`` (the default), and none with
``fsync=False``. ``os.fsync`` is wrapped to record which paths were synced (the standard library, not our code).
"""

import os
from pathlib import Path

import pytest

from strandslike import Agent
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.session import FileSessionManager
from strandslike.tools import tool


@tool
def act(x: int) -> int:
    """Act.

    Args:
        x: A number.
    """
    return x


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    paths: list[Path] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        paths.append(Path(os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    return paths


def paused_agent(storage: Path, *, fsync: bool) -> Agent:
    agent = Agent(
        model=ScriptedModel([tool_call("act", x=1), text("done")], mode="conversation"),
        tools=[act],
        session_manager=FileSessionManager("s1", storage_dir=storage, fsync=fsync),
        callback_handler=None,
    )
    agent.hooks.add_callback(BeforeToolCallEvent, lambda event: event.interrupt("approve", reason="ok?"))
    return agent


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name the synced descriptors")
def test_every_directory_a_new_session_creates_is_synced_through_its_parent(tmp_path: Path, synced: list[Path]) -> None:
    storage = tmp_path / "store"
    storage.mkdir()
    result = paused_agent(storage, fsync=True)("go")
    assert result.stop_reason == "interrupt"

    session_dir = storage / "session_s1"
    for created in (session_dir, session_dir / "agents", session_dir / "agents" / "agent_default"):
        assert created.is_dir()
        assert created.parent.resolve() in synced, f"{created.name} was created but {created.parent} never synced"


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name the synced descriptors")
def test_without_fsync_no_directory_is_synced(tmp_path: Path, synced: list[Path]) -> None:
    storage = tmp_path / "store"
    storage.mkdir()
    assert paused_agent(storage, fsync=False)("go").stop_reason == "interrupt"
    assert synced == []
