"""Issue 12, item 5: the exception types Strands users catch (ValueError for state and input, SessionException)."""

import os
from pathlib import Path
from typing import Any

import pytest

from strandslike import Agent
from strandslike.agent import AgentState
from strandslike.models import ScriptedModel, text
from strandslike.session import FileSessionManager, InMemorySessionRepository, RepositorySessionManager
from strandslike.types.content import Message
from strandslike.types.exceptions import SessionException
from strandslike.types.session import Session, SessionAgent, SessionMessage, SessionType


class _MultiAgent:
    def __init__(self, multi_agent_id: str, state: dict[str, Any]) -> None:
        self.id = multi_agent_id
        self.state = state

    def serialize_state(self) -> dict[str, Any]:
        return {"id": self.id, "state": self.state}


# -- AgentState and agent input: ValueError ------------------------------------------------------------------


@pytest.mark.parametrize("value", [object(), {1, 2}, b"bytes", {"nested": object()}])
def test_agent_state_refuses_non_json_values_with_value_error(value: Any) -> None:
    state = AgentState({"kept": 1})
    with pytest.raises(ValueError, match="JSON"):
        state.set("key", value)
    assert state.get() == {"kept": 1}
    with pytest.raises(ValueError, match="JSON"):
        AgentState({"key": value})


@pytest.mark.parametrize("key", [None, 42, ""])
def test_agent_state_refuses_bad_keys_with_value_error(key: Any) -> None:
    with pytest.raises(ValueError, match="Key"):
        AgentState().set(key, "value")


@pytest.mark.parametrize("state", [42, "text", ["a"], 0])
def test_agent_refuses_a_state_that_is_not_a_dict_with_value_error(state: Any) -> None:
    with pytest.raises(ValueError, match="state must be an AgentState object or a dict"):
        Agent(model=ScriptedModel([]), state=state)


def test_agent_state_values_from_a_dict_or_an_agent_state() -> None:
    assert Agent(model=ScriptedModel([]), state={"a": 1}).state.get("a") == 1
    shared = AgentState({"b": 2})
    assert Agent(model=ScriptedModel([]), state=shared).state is shared


@pytest.mark.parametrize("prompt", [42, {"text": "a dict"}, [1, 2], [{"role": "user", "content": []}, {"text": "x"}]])
async def test_invalid_agent_input_is_a_value_error(prompt: Any) -> None:
    model = ScriptedModel([text("never")])
    agent = Agent(model=model)
    with pytest.raises(ValueError, match="prompt"):
        await agent.invoke_async(prompt)
    assert agent.messages == []
    assert model.calls == 0


async def test_interrupt_responses_without_an_interrupt_are_a_value_error() -> None:
    agent = Agent(model=ScriptedModel([]))
    with pytest.raises(ValueError, match="not in interrupt state"):
        await agent.invoke_async([{"interruptResponse": {"interruptId": "x", "response": "y"}}])


# -- session managers: SessionException ----------------------------------------------------------------------


@pytest.fixture(params=["file", "memory"])
def repository(request: Any, tmp_path: Path) -> Any:
    if request.param == "file":
        return FileSessionManager(session_id="test", storage_dir=tmp_path)
    repo = InMemorySessionRepository()
    RepositorySessionManager("test", repo)
    return repo


def _session(repository: Any, session_id: str = "test-session") -> Session:
    session = Session(session_id=session_id, session_type=SessionType.AGENT)
    repository.create_session(session)
    return session


def test_creating_an_existing_session_raises(repository: Any) -> None:
    _session(repository)
    with pytest.raises(SessionException, match="already exists"):
        _session(repository)


def test_updating_a_missing_agent_raises(repository: Any) -> None:
    session = _session(repository)
    with pytest.raises(SessionException, match="Agent ghost in session test-session does not exist"):
        repository.update_agent(
            session.session_id, SessionAgent(agent_id="ghost", state={}, conversation_manager_state={})
        )


def test_updating_a_missing_message_raises(repository: Any) -> None:
    session = _session(repository)
    repository.create_agent(session.session_id, SessionAgent(agent_id="a", state={}, conversation_manager_state={}))
    message: Message = {"role": "user", "content": [{"text": "hi"}]}
    with pytest.raises(SessionException, match="Message 0 does not exist"):
        repository.update_message(session.session_id, "a", SessionMessage.from_message(message, 0))
    repository.create_message(session.session_id, "a", SessionMessage.from_message(message, 0))
    redacted = SessionMessage.from_message(message, 0)
    redacted.redact_message = {"role": "user", "content": [{"text": "[redacted]"}]}
    repository.update_message(session.session_id, "a", redacted)
    assert repository.read_message(session.session_id, "a", 0).to_message()["content"] == [{"text": "[redacted]"}]


def test_updating_missing_multi_agent_state_raises(repository: Any) -> None:
    session = _session(repository)
    with pytest.raises(SessionException, match="MultiAgent state graph in session test-session does not exist"):
        repository.update_multi_agent(session.session_id, _MultiAgent("graph", {"x": 1}))
    repository.create_multi_agent(session.session_id, _MultiAgent("graph", {"x": 1}))
    repository.update_multi_agent(session.session_id, _MultiAgent("graph", {"x": 2}))
    assert repository.read_multi_agent(session.session_id, "graph")["state"] == {"x": 2}


def test_a_storage_directory_that_cannot_be_created_raises_session_exception(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the storage directory should be")
    with pytest.raises(SessionException, match="cannot be written"):
        FileSessionManager(session_id="s", storage_dir=blocker / "sessions")


def test_a_session_that_cannot_be_written_raises_session_exception(tmp_path: Path) -> None:
    manager = FileSessionManager(session_id="s", storage_dir=tmp_path)
    (tmp_path / "session_blocked").write_text("a file where the session directory should be")
    with pytest.raises(SessionException, match="session_blocked"):
        manager.create_session(Session(session_id="blocked", session_type=SessionType.AGENT))
    (tmp_path / "session_other").mkdir()
    (tmp_path / "session_other" / "multi_agents").write_text("a file where a directory should be")
    with pytest.raises(SessionException, match="multi_agents"):
        manager.create_multi_agent("other", _MultiAgent("graph", {}))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes files whatever their mode")
def test_permission_denied_raises_session_exception(tmp_path: Path) -> None:
    storage = tmp_path / "storage"
    storage.mkdir()
    manager = FileSessionManager(session_id="s", storage_dir=storage)
    storage.chmod(0o500)
    try:
        with pytest.raises(SessionException, match="session_other"):
            manager.create_session(Session(session_id="other", session_type=SessionType.AGENT))
    finally:
        storage.chmod(0o700)


class _LateCreator(InMemorySessionRepository):
    """A repository on which another process creates the session between our read and our create."""

    def read_session(self, session_id: str, **kwargs: Any) -> Session | None:
        found = super().read_session(session_id, **kwargs)
        if found is None and not getattr(self, "raced", False):
            self.raced = True
            super().create_session(Session(session_id=session_id, session_type=SessionType.AGENT))
            return None
        return found


def test_a_new_session_survives_a_concurrent_creator() -> None:
    repo = _LateCreator()
    manager = RepositorySessionManager("shared", repo)
    assert manager.session.session_id == "shared"
    agent = Agent(model=ScriptedModel([text("hi")]), session_manager=manager)
    agent("hello")
    restored = Agent(model=ScriptedModel([]), session_manager=RepositorySessionManager("shared", repo))
    assert restored.messages == agent.messages
