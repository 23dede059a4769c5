"""Planted files: FIFOs, symlinks and hard links inside the storage directory are refused, never waited on or followed.

Every check runs with a short timeout: a FIFO opened the ordinary way blocks forever, which is the bug.
"""

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from strandslike import Agent
from strandslike.models import ScriptedModel, text
from strandslike.multiagent import GraphBuilder
from strandslike.session import FileSessionManager
from strandslike.types.exceptions import SessionCorruptError, SessionException

SESSION = "s1"
pytestmark = pytest.mark.timeout(20)


def session_dir(storage: Path) -> Path:
    return storage / f"session_{SESSION}"


def agent_dir(storage: Path) -> Path:
    return session_dir(storage) / "agents" / "agent_default"


def build(storage: Path, turns: list[Any] | None = None) -> Agent:
    return Agent(
        model=ScriptedModel(turns or [text("ok")]), session_manager=FileSessionManager(SESSION, storage_dir=storage)
    )


def written(storage: Path) -> None:
    agent = build(storage)
    agent("hello")
    agent.session_manager.close()


def graph(storage: Path) -> Any:
    builder = GraphBuilder()
    builder.add_node(Agent(model=ScriptedModel([text("done")]), name="only"), "only")
    builder.set_entry_point("only")
    builder.set_session_manager(FileSessionManager(SESSION, storage_dir=storage))
    builder.set_graph_id("pipeline")
    return builder.build()


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every entry under ``root`` with its content (files) or link target (symlinks)."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            found[str(path)] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[str(path)] = path.read_bytes()
        else:
            found[str(path)] = "dir"
    return found


# -- FIFOs and other non-regular files ----------------------------------------------------------------------------

FIFO_PLACES: dict[str, Callable[[Path], Path]] = {
    "agent log": lambda storage: agent_dir(storage) / "agent.jsonl",
    "session record": lambda storage: session_dir(storage) / "session.json",
    "lock": lambda storage: agent_dir(storage) / "lock",
}


@pytest.mark.parametrize("place", sorted(FIFO_PLACES))
def test_a_fifo_in_place_of_a_session_file_is_refused_at_once(tmp_path: Path, place: str) -> None:
    written(tmp_path)
    path = FIFO_PLACES[place](tmp_path)
    path.unlink()
    os.mkfifo(path, 0o600)
    with pytest.raises(SessionCorruptError) as caught:
        build(tmp_path)("hello again")  # construction restores; the invocation claims (the lock)
    assert caught.value.path == str(path)
    assert "is not a regular file" in str(caught.value)


def test_a_fifo_in_place_of_an_orchestrator_log_is_refused_at_once(tmp_path: Path) -> None:
    graph(tmp_path)("run")
    path = session_dir(tmp_path) / "multi_agents" / "multi_agent_pipeline" / "multi_agent.jsonl"
    path.unlink()
    os.mkfifo(path, 0o600)
    with pytest.raises(SessionCorruptError, match="is not a regular file"):
        graph(tmp_path)


def test_a_fifo_in_place_of_an_earlier_versions_orchestrator_file_is_refused_at_once(tmp_path: Path) -> None:
    FileSessionManager(SESSION, storage_dir=tmp_path).close()
    (session_dir(tmp_path) / "multi_agents").mkdir(mode=0o700)
    os.mkfifo(session_dir(tmp_path) / "multi_agents" / "multi_agent_pipeline.json", 0o600)
    with pytest.raises(SessionCorruptError, match="is not a regular file"):
        graph(tmp_path)


# -- symlinks -----------------------------------------------------------------------------------------------------

LINK_PLACES: dict[str, Callable[[Path], Path]] = {
    "session directory": session_dir,
    "agents directory": lambda storage: session_dir(storage) / "agents",
    "agent directory": agent_dir,
}


@pytest.mark.parametrize("place", sorted(LINK_PLACES))
def test_a_symlinked_directory_inside_the_storage_dir_is_never_followed(tmp_path: Path, place: str) -> None:
    storage, outside = tmp_path / "storage", tmp_path / "outside"
    written(storage)
    path = LINK_PLACES[place](storage)
    shutil.move(path, outside)  # a real, valid copy of the session data, now outside the storage dir
    path.symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    with pytest.raises(SessionCorruptError) as caught:
        build(storage)("write through the link, please")
    assert caught.value.path == str(path)
    assert "symbolic link" in str(caught.value)
    assert snapshot(outside) == before  # nothing read through it was written back, nothing new created


def test_a_symlinked_orchestrator_directory_is_never_followed(tmp_path: Path) -> None:
    storage, outside = tmp_path / "storage", tmp_path / "outside"
    graph(storage)("run")
    path = session_dir(storage) / "multi_agents"
    shutil.move(path, outside)
    path.symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    with pytest.raises(SessionCorruptError, match="symbolic link"):
        graph(storage)("run again")
    assert snapshot(outside) == before


def test_a_new_agent_is_not_created_through_a_symlinked_agents_directory(tmp_path: Path) -> None:
    storage, outside = tmp_path / "storage", tmp_path / "outside"
    FileSessionManager(SESSION, storage_dir=storage).close()
    outside.mkdir()
    (session_dir(storage) / "agents").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SessionCorruptError, match="symbolic link"):
        build(storage)
    assert list(outside.iterdir()) == []


def test_the_storage_directory_itself_may_be_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    link = tmp_path / "link"
    real.mkdir()
    link.symlink_to(real, target_is_directory=True)
    written(link)
    assert build(link, [text("again")])("hi").stop_reason == "end_turn"
    assert (real / f"session_{SESSION}" / "agents" / "agent_default" / "agent.jsonl").is_file()


def test_deleting_a_symlinked_session_refuses_and_keeps_the_target(tmp_path: Path) -> None:
    storage, outside = tmp_path / "storage", tmp_path / "outside"
    written(storage)
    shutil.move(session_dir(storage), outside)
    session_dir(storage).symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    manager = FileSessionManager("other", storage_dir=storage)
    with pytest.raises(SessionException, match="not a directory"):
        manager.delete_session(SESSION)
    assert snapshot(outside) == before


def test_listing_a_session_with_a_symlinked_agent_directory_names_it(tmp_path: Path) -> None:
    storage, outside = tmp_path / "storage", tmp_path / "outside"
    written(storage)
    shutil.move(agent_dir(storage), outside)
    agent_dir(storage).symlink_to(outside, target_is_directory=True)
    with pytest.raises(SessionCorruptError) as caught:
        FileSessionManager(SESSION, storage_dir=storage).list_logs(SESSION)
    assert caught.value.path == str(agent_dir(storage))


# -- hard links ---------------------------------------------------------------------------------------------------


def test_a_log_hard_linked_to_a_file_elsewhere_is_never_written(tmp_path: Path) -> None:
    storage, outside = tmp_path / "storage", tmp_path / "precious.jsonl"
    written(storage)
    log = agent_dir(storage) / "agent.jsonl"
    outside.write_bytes(log.read_bytes())
    log.unlink()
    os.link(outside, log)
    before = outside.read_bytes()
    agent = build(storage)  # reading is harmless
    with pytest.raises(SessionCorruptError, match="hard links"):
        agent("append to it")
    assert outside.read_bytes() == before
