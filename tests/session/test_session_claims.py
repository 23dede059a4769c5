"""How the session manager claims: nested invocations, short claims, failed writes, and stores that cannot claim."""

import warnings
from pathlib import Path
from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.session import (
    FileSessionManager,
    InMemorySessionRepository,
    LogRef,
    RepositorySessionManager,
    SessionRepository,
)
from strandslike.types.exceptions import SessionConflictError, StrandslikeError, UnclaimedSessionWarning
from strandslike.types.session import Session, SessionAgent, SessionMessage

SESSION = "s1"
REF = LogRef(SESSION, "agent", "default")


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return f"value of {key}"


def approve(event: BeforeToolCallEvent) -> None:
    if event.interrupt("approval") != "y":
        event.cancel_tool = "denied"


def agent_on(storage: Path, turns: list[Any] | None = None, **kwargs: Any) -> Agent:
    return Agent(
        model=ScriptedModel(turns or []),
        tools=[lookup],
        session_manager=FileSessionManager(SESSION, storage_dir=storage),
        **kwargs,
    )


# -- nested claims (a server holding the claim around the agent's own invocation) ----------------------------------


def test_an_outer_claim_holds_until_the_outermost_end_while_records_are_written_at_each_end(tmp_path: Path) -> None:
    agent = agent_on(tmp_path, [tool_call("lookup", tool_use_id="l1", key="k")], hooks=[approve])
    manager = agent.session_manager
    manager.begin_invocation(agent)  # what the AG-UI server does around a request
    result = agent("look k up")
    assert result.stop_reason == "interrupt"

    # The invocation ended: its records (and the interrupt) are on disk, but the claim is still held.
    reader = FileSessionManager(SESSION, storage_dir=tmp_path)
    stored = reader.load_agent(SESSION, "default")
    assert stored is not None
    assert stored.agent is not None
    assert stored.agent._internal_state["interrupt_state"]["activated"] is True
    contender = agent_on(tmp_path, [text("never")], hooks=[approve])
    with pytest.raises(SessionConflictError, match="another process is running this agent"):
        contender([{"interruptResponse": {"interruptId": result.interrupts[0].id, "response": "y"}}])

    manager.end_invocation(agent)
    manager.end_invocation(agent)  # one end too many is harmless
    resumed = agent_on(tmp_path, [text("found")], hooks=[approve])
    answer = [{"interruptResponse": {"interruptId": result.interrupts[0].id, "response": "y"}}]
    assert resumed(answer).stop_reason == "end_turn"


def test_a_direct_write_outside_an_invocation_takes_a_short_claim(tmp_path: Path) -> None:
    holder = agent_on(tmp_path, [text("one")])
    other = agent_on(tmp_path)
    holder.session_manager.begin_invocation(holder)
    other.state.set("note", "from outside")
    with pytest.raises(SessionConflictError):
        other.session_manager.sync_agent(other)
    holder.session_manager.end_invocation(holder)


# -- a failed write -------------------------------------------------------------------------------------------------


def test_a_lost_claim_stops_the_tool_and_every_later_write_of_that_agent(tmp_path: Path) -> None:
    ran: list[str] = []
    lock = tmp_path / f"session_{SESSION}" / "agents" / "agent_default" / "lock"

    @tool
    def pay(amount: int) -> str:
        """Pay.

        Args:
            amount: How much.
        """
        ran.append("pay")
        return "paid"

    def steal_the_claim(event: BeforeToolCallEvent) -> None:
        lock.unlink()  # someone removed the lock file: another process may claim the log now

    agent = Agent(
        model=ScriptedModel([tool_call("pay", tool_use_id="p1", amount=1), text("paid")]),
        tools=[pay],
        hooks=[steal_the_claim],
        session_manager=FileSessionManager(SESSION, storage_dir=tmp_path),
    )
    with pytest.raises(SessionConflictError, match="claim was lost"):
        agent("pay 1")
    assert ran == []  # the intent could not be recorded, so the body never started
    with pytest.raises(SessionConflictError, match=r"an earlier write of this agent was refused \(the claim was lost"):
        agent("again")
    fresh = agent_on(tmp_path, [text("fine")])
    assert fresh.tool_journal.unfinished() == []
    assert fresh("hello").stop_reason == "end_turn"


# -- stores that cannot claim ---------------------------------------------------------------------------------------


class StrandsStyleRepository(SessionRepository):
    """A custom repository written against Strands' API only (layer 1), as users port them."""

    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}
        self.agents: dict[tuple[str, str], SessionAgent] = {}
        self.messages: dict[tuple[str, str], list[SessionMessage]] = {}

    def create_session(self, session: Session, **kwargs: Any) -> Session:
        self.sessions[session.session_id] = session
        return session

    def read_session(self, session_id: str, **kwargs: Any) -> Session | None:
        return self.sessions.get(session_id)

    def create_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        self.agents[(session_id, session_agent.agent_id)] = SessionAgent.from_dict(session_agent.to_dict())

    def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> SessionAgent | None:
        found = self.agents.get((session_id, agent_id))
        return None if found is None else SessionAgent.from_dict(found.to_dict())

    def update_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        self.create_agent(session_id, session_agent)

    def create_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        self.messages.setdefault((session_id, agent_id), []).append(SessionMessage.from_dict(session_message.to_dict()))

    def read_message(self, session_id: str, agent_id: str, message_id: int, **kwargs: Any) -> SessionMessage | None:
        return next((m for m in self.messages.get((session_id, agent_id), []) if m.message_id == message_id), None)

    def update_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        stored = self.messages[(session_id, agent_id)]
        stored[[m.message_id for m in stored].index(session_message.message_id)] = session_message

    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> list[SessionMessage]:
        stored = self.messages.get((session_id, agent_id), [])
        return stored[offset : None if limit is None else offset + limit]


def test_a_repository_without_claims_warns_at_construction_and_still_persists() -> None:
    repository = StrandsStyleRepository()
    with pytest.warns(UnclaimedSessionWarning) as caught:
        manager = RepositorySessionManager(SESSION, repository)
    [warning] = caught
    assert warning.filename == __file__  # it points at the line that built the manager
    message = str(warning.message)
    assert "StrandsStyleRepository does not implement the durable log contract" in message
    assert "two processes can resume it at the same time and both run an approved tool" in message
    assert "FileSessionManager" in message
    assert isinstance(warning.message, StrandslikeError)
    assert isinstance(warning.message, UserWarning)

    agent = Agent(model=ScriptedModel([text("hi")]), session_manager=manager)
    agent("hello")
    with pytest.warns(UnclaimedSessionWarning):
        again = Agent(model=ScriptedModel([]), session_manager=RepositorySessionManager(SESSION, repository))
    assert again.messages == agent.messages
    assert again.tool_journal.scope == f"{SESSION}/default"


def test_stores_that_claim_do_not_warn(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RepositorySessionManager(SESSION, InMemorySessionRepository())
        FileSessionManager(SESSION, storage_dir=tmp_path)


def test_a_stale_orchestrator_cannot_overwrite_a_newer_state(tmp_path: Path) -> None:
    from strandslike.multiagent import GraphBuilder

    def graph(answer: str) -> Any:
        builder = GraphBuilder()
        builder.add_node(Agent(model=ScriptedModel([text(answer)]), name="only"), "only")
        builder.set_entry_point("only")
        builder.set_session_manager(FileSessionManager(SESSION, storage_dir=tmp_path))
        builder.set_graph_id("pipeline")
        return builder.build()

    graph("first")("run")
    stale, current = graph("stale"), graph("current")  # both restored from the same state
    assert current("run again").status.value == "completed"
    saved = FileSessionManager(SESSION, storage_dir=tmp_path).read_multi_agent(SESSION, "pipeline")
    with pytest.raises(SessionConflictError):
        stale("run from the stale copy")
    assert FileSessionManager(SESSION, storage_dir=tmp_path).read_multi_agent(SESSION, "pipeline") == saved
