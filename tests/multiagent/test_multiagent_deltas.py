"""A node tool's state record is a delta (``md``): restores equal today's whole states, its size stays flat.

The state written with a node tool's intent carries only the messages each node agent appended since the state
before it. These tests check that a log of deltas restores exactly the state a whole state (``ms``) written at the
same moment would (over random sequences of turns, trims, redactions and in-place edits), that a node cut short by
a crash after a delta is restored with its last turn, that a delta that does not fit its base is a damaged log, and
that the bytes written per node tool call do not grow with the conversation.
"""

import copy
import json
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from orchestration_world import Died, World, tool_results

from strandslike import Agent
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.multiagent import Graph, GraphBuilder, Status
from strandslike.session import InMemorySessionRepository, LogRef, RepositorySessionManager
from strandslike.session._multi_agent_log import replay_orchestrator
from strandslike.session._records import multi_agent_record
from strandslike.session.session_repository import StoredLog
from strandslike.types.exceptions import SessionCorruptError

SESSION = "deltas"
GRAPH = "flow"


def build(repository: InMemorySessionRepository) -> tuple[Graph, dict[str, Agent]]:
    """A graph of two agents and a nested graph holding a third (whose id needs escaping in a node path)."""
    agents = {name: Agent(name=name, model=ScriptedModel([]), callback_handler=None) for name in ("x", "y", "i/n")}
    inner = GraphBuilder()
    inner.add_node(agents["i/n"], "i/n")
    inner.set_graph_id("inner")
    outer = GraphBuilder()
    outer.add_node(agents["x"], "x")
    outer.add_node(agents["y"], "y")
    outer.add_node(inner.build(), "team")
    outer.set_graph_id(GRAPH)
    outer.set_session_manager(RepositorySessionManager(SESSION, repository))
    return outer.build(), agents


def stored_state(graph: Graph) -> Any:
    """The state a whole-state record written now holds (bytes encoded, as a store reads it back)."""
    return multi_agent_record(graph.serialize_state(), GRAPH)[0]["s"]


def records(repository: InMemorySessionRepository) -> list[dict[str, Any]]:
    stored = repository.read_log(LogRef(SESSION, "multi_agent", GRAPH))
    assert stored is not None
    return copy.deepcopy(list(stored.records))


def replayed_state(repository: InMemorySessionRepository) -> Any:
    return replay_orchestrator(StoredLog(records(repository), "v"), GRAPH).state


def tool_use(tool_use_id: str) -> dict[str, Any]:
    return {"toolUseId": tool_use_id, "name": "pay", "input": {"amount": 1}}


PATHS = {"x": "x", "y": "y", "i/n": "team/i%2Fn"}
OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(
            ["turn", "turn", "turn", "answer", "trim", "redact", "edit", "bytes", "state", "sync", "copy", "two"]
        ),
        st.sampled_from(sorted(PATHS)),
        st.integers(min_value=0, max_value=5),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPERATIONS)
def test_a_log_of_deltas_restores_what_whole_states_would(operations: list[tuple[str, str, int]]) -> None:
    repository = InMemorySessionRepository()
    graph, agents = build(repository)
    manager = graph.session_manager
    assert manager is not None
    manager.begin_multi_agent_invocation(graph)
    calls = 0

    async def start(name: str, *tool_use_ids: str) -> None:
        async with anyio.create_task_group() as group:
            for tool_use_id in tool_use_ids:
                group.start_soon(agents[name].tool_journal.start, tool_use(tool_use_id))

    def conversations() -> dict[str, Any]:
        return {name: copy.deepcopy(agent.messages) for name, agent in agents.items()}

    def intent(name: str, *tool_use_ids: str) -> None:
        # A delta exactly when every conversation is the one last written plus new messages, else a whole state.
        grown = all(agents[n].messages[: len(before)] == before for n, before in written.items())
        grown = grown and all(len(agents[n].messages) >= len(before) for n, before in written.items())
        anyio.run(start, name, *tool_use_ids)
        kinds = [record["k"] for record in records(repository) if record["k"] in ("ms", "md")]
        assert kinds[-1] == ("md" if grown else "ms")
        written.update(conversations())

    written = conversations()  # as the new log's first state holds them

    for operation, name, number in operations:
        messages = agents[name].messages
        wrote = True
        if operation in ("turn", "two"):  # the model asks for tools, whose intents go on record (with the state)
            ids = [f"{name}-{calls}-{n}" for n in range(2 if operation == "two" else 1)]
            calls += 1
            messages.append({"role": "user", "content": [{"text": f"go {calls}"}]})
            messages.append({"role": "assistant", "content": [{"toolUse": tool_use(i)} for i in ids]})
            intent(name, *ids)
        elif operation == "answer":  # a tool result, written with the next state
            messages.append({"role": "user", "content": [{"toolResult": {"toolUseId": "r", "content": []}}]})
            wrote = False
        elif operation == "trim":  # a conversation manager drops the oldest messages, in place
            del messages[: number + 1]
            wrote = False
        elif operation == "redact" and messages:  # the latest message replaced
            messages[-1] = {"role": messages[-1]["role"], "content": [{"text": "[redacted]"}]}
            wrote = False
        elif operation == "edit" and messages:  # an older message changed in place (a tool result truncated)
            messages[number % len(messages)]["content"].append({"text": "truncated"})
            wrote = False
        elif operation == "bytes":
            messages.append(
                {"role": "assistant", "content": [{"image": {"format": "png", "source": {"bytes": b"\0"}}}]}
            )
            wrote = False
        elif operation == "state":
            agents[name].state.set("n", number)
            wrote = False
        elif operation == "sync":  # a node ended: the whole state
            manager.sync_multi_agent(graph)
            written = conversations()
        elif operation == "copy":  # the same conversation in a new list
            agents[name].messages = copy.deepcopy(messages)
            wrote = False
        else:
            wrote = False
        if wrote:
            assert replayed_state(repository) == stored_state(graph)
    intent("x", "last")
    expected = stored_state(graph)
    assert replayed_state(repository) == expected
    manager.end_multi_agent_invocation(graph)

    fresh, fresh_agents = build(repository)  # a fresh process
    assert stored_state(fresh) == expected
    for name in PATHS:
        ids = {attempt.tool_use_id for attempt in fresh_agents[name].tool_journal.unfinished()}
        assert "last" in ids if name == "x" else "last" not in ids


def test_a_pure_extension_is_written_as_a_delta_and_a_trim_as_a_whole_state() -> None:
    repository = InMemorySessionRepository()
    graph, agents = build(repository)
    manager = graph.session_manager
    assert manager is not None
    x = agents["x"]
    x.messages += [{"role": "user", "content": [{"text": "a"}]}, {"role": "assistant", "content": [{"text": "b"}]}]
    anyio.run(x.tool_journal.start, tool_use("t1"))
    x.messages.append({"role": "user", "content": [{"text": "c"}]})
    anyio.run(x.tool_journal.start, tool_use("t2"))
    del x.messages[0]  # trimmed
    anyio.run(x.tool_journal.start, tool_use("t3"))
    x.messages[0]["content"][0]["text"] = "B"  # changed in place, the length as written
    anyio.run(x.tool_journal.start, tool_use("t4"))
    states = [record for record in records(repository) if record["k"] in ("ms", "md")]
    assert [record["k"] for record in states] == ["ms", "md", "md", "ms", "ms"]  # the first: a new session
    delta = states[2]
    assert delta["n"]["x"]["b"] == 2
    assert delta["n"]["x"]["m"] == [{"role": "user", "content": [{"text": "c"}]}]
    assert delta["n"]["y"] == {"b": 0, "h": None, "m": []}
    assert "messages" not in delta["s"]["nodes"]["x"]
    assert replayed_state(repository) == stored_state(graph)


def test_the_bytes_written_per_node_tool_call_stay_flat_as_the_conversation_grows() -> None:
    repository = InMemorySessionRepository()
    graph, agents = build(repository)
    x = agents["x"]
    sizes = []
    for n in range(200):
        x.messages.append({"role": "user", "content": [{"toolResult": {"toolUseId": f"t{n}", "content": []}}]})
        x.messages.append(
            {"role": "assistant", "content": [{"text": "thinking " * 20}, {"toolUse": tool_use(f"t{n}")}]}
        )
        before = len(records(repository))
        anyio.run(x.tool_journal.start, tool_use(f"t{n}"))
        written = records(repository)[before:]
        assert [record["k"] for record in written] == ["md", "ti"]
        sizes.append(sum(len(json.dumps(record)) for record in written))
    assert max(sizes) <= sizes[0] + 64  # the 200th call writes what the 1st did (a few digits longer)
    assert replayed_state(repository) == stored_state(graph)


@pytest.fixture(params=["memory", "file"])
def world(request: pytest.FixtureRequest, tmp_path: Any) -> World:
    return World(request.param, tmp_path)


def test_a_node_cut_short_after_a_delta_is_restored_with_its_last_turn(world: World) -> None:
    turns = [tool_call("pay", tool_use_id=f"p{n}", amount=n) for n in range(5)] + [text("paid")]
    world.die_in.add("p3")
    with pytest.raises(Died):
        world.graph({"payer": list(turns)}, node_hooks=[])("pay five")
    kinds = [record["k"] for record in world.records(GRAPH)]
    assert kinds[-2:] == ["md", "ti"]  # p3's intent, with its node's last turn as a delta

    fresh = world.graph({"payer": list(turns[4:])}, node_hooks=[])  # a fresh process
    payer = fresh.nodes["payer"].executor
    assert payer.messages[-1]["content"][0]["toolUse"]["toolUseId"] == "p3"
    assert [attempt.tool_use_id for attempt in payer.tool_journal.unfinished()] == ["p3"]
    result = fresh("pay five")
    assert result.status == Status.COMPLETED
    assert [run["id"] for run in world.runs] == ["p0", "p1", "p2", "p3", "p4"]  # p3 never ran twice
    assert "unknown" in tool_results(payer)[3]["content"][0]["text"]


def _log_with_a_delta() -> list[dict[str, Any]]:
    repository = InMemorySessionRepository()
    graph, agents = build(repository)
    agents["x"].messages.append({"role": "user", "content": [{"text": "a"}]})
    anyio.run(agents["x"].tool_journal.start, tool_use("t1"))
    assert graph.session_manager is not None
    graph.session_manager.sync_multi_agent(graph)
    agents["x"].messages.append({"role": "assistant", "content": [{"text": "b"}]})
    anyio.run(agents["x"].tool_journal.start, tool_use("t2"))
    log = records(repository)
    assert [record["k"] for record in log] == ["h", "ms", "md", "ti", "ms", "md", "ti"]
    return log


def _damaged(change: Any) -> list[dict[str, Any]]:
    log = _log_with_a_delta()
    change(log)
    return log


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda log: log[5]["n"]["x"].update(b=0, h=None), "had 1 messages"),
        (lambda log: log[5]["n"]["x"].update(b=5), "had 1 messages"),
        (lambda log: log[5]["n"]["x"].update(h="0" * 32), "is not the one this delta was written after"),
        (lambda log: log[4]["s"]["nodes"]["x"]["messages"][0]["content"].append({"text": "z"}), "is not the one"),
        (lambda log: log[5]["n"].pop("y"), "leaves the conversation of node 'y' out"),
        (lambda log: log[5]["n"].update({"nope": {"b": 0, "h": None, "m": []}}), "no agent conversation"),
        (lambda log: log[5]["n"]["x"].update(m=[{"role": "robot", "content": []}]), "role"),
        (lambda log: log[5]["n"]["x"].update(m="b"), "list of messages"),
        (lambda log: log[5]["s"]["nodes"]["x"].update(messages=[]), "not an agent without its conversation"),
        (lambda log: log[5].pop("n"), "KeyError"),
        (lambda log: log.__delitem__(slice(1, 5)), "no whole state"),
    ],
)
def test_a_delta_that_does_not_fit_its_base_is_a_damaged_log(change: Any, says: str) -> None:
    log = _damaged(change)
    number = [n for n, record in enumerate(log, start=1) if record["k"] == "md"][-1]
    with pytest.raises(SessionCorruptError, match=f"line {number} is not a valid record.*{says}"):
        replay_orchestrator(StoredLog(log, "v", location="log", unit="line"), GRAPH)


def test_a_log_of_format_1_with_whole_states_only_still_restores() -> None:
    log = _log_with_a_delta()
    old = [{**log[0], "format": "strandslike-multi-agent-log/1"}, log[1], log[3], log[4]]
    replayed = replay_orchestrator(StoredLog(old, "v"), GRAPH)
    assert replayed.state == log[4]["s"]
    assert [attempt.tool_use_id for attempt in replayed.attempts["x"]] == ["t1"]
