"""Intent before effect inside Graph and Swarm nodes: node agents' tool bodies are journaled in the orchestrator's log.

A crash inside an approved node tool, then the retried resume in a fresh orchestrator: the tool never runs again
(the node's model is told its outcome is unknown, the orchestration's audit trail says so with the node), unless
the tool is idempotent or the node agent's policy says to run it again. See `orchestration_world` for how a
crash is simulated in-process.
"""

import threading
from collections.abc import Sequence
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from helpers import answer, answers
from orchestration_world import SESSION, Died, World, expected_key, tool_results

from strandslike import Agent, ToolContext, tool
from strandslike.interrupt import InterruptAlreadyAnsweredError
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.multiagent import GraphBuilder, Status, Swarm
from strandslike.session import InMemorySessionRepository, LogRef, RepositorySessionManager
from strandslike.session._multi_agent_log import replay_multi_agent
from strandslike.session.session_repository import LogClaim, StoredLog
from strandslike.tools.executors import SequentialToolExecutor
from strandslike.types.exceptions import SessionConflictError, SessionException


@pytest.fixture(params=["memory", "file"])
def world(request: pytest.FixtureRequest, tmp_path: Any) -> World:
    return World(request.param, tmp_path)


PAY = tool_call("pay", tool_use_id="pay_1", amount=5)
HANDOFF = tool_call("handoff_to_agent", tool_use_id="h1", agent_name="payer", message="pay the invoice")


def build(world: World, kind: str, phase: str, **kwargs: Any) -> Any:
    """The orchestrator of a scenario: ``research`` finds an invoice, ``payer`` pays it after an approval."""
    if phase == "pause":
        research = [HANDOFF, text("handed over")] if kind == "swarm" else [text("invoice #7: 5 EUR")]
        turns = {"research": research, "payer": [PAY]}
    else:
        turns = {"research": [], "payer": [text(kwargs.pop("final", "Paid."))]}
    if kind == "swarm":
        return world.swarm(turns, **kwargs)
    return world.graph(turns, edges=[("research", "payer")], **kwargs)


def paused(world: World, kind: str, **kwargs: Any) -> Any:
    orchestrator = build(world, kind, "pause", **kwargs)
    result = orchestrator("pay the invoice")
    assert result.status == Status.INTERRUPTED
    orchestrator.session_manager.close()
    [interrupt] = result.interrupts
    assert interrupt.metadata["node_id"] == "payer"
    return interrupt


def crashed_resume(world: World, kind: str, interrupt: Any, **kwargs: Any) -> None:
    world.die_in.add("pay_1")
    orchestrator = build(world, kind, "resume", **kwargs)
    with pytest.raises(Died):
        orchestrator([answer(interrupt, "y")])
    orchestrator.session_manager.close()


def owner(kind: str) -> str:
    return "team" if kind == "swarm" else "flow"


# -- the intent record --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["graph", "swarm"])
def test_a_node_tool_starts_only_once_its_intent_is_in_the_orchestrators_log(world: World, kind: str) -> None:
    seen: list[Any] = []

    @tool(context=True)
    def pay(amount: int, tool_context: ToolContext) -> str:
        """Pay.

        Args:
            amount: How much.
        """
        # Read the session as another process would, from inside the body.
        records = world.records(owner(kind))
        seen.append([(r["k"], r["p"], r["u"], r.get("key")) for r in records if r.get("p") == "payer"])
        seen.append(tool_context.idempotency_key)
        return "paid"

    payer = Agent(name="payer", model=ScriptedModel([PAY, text("Paid.")]), tools=[pay], callback_handler=None)
    research = Agent(name="research", model=ScriptedModel([HANDOFF, text("ok")]), callback_handler=None)
    if kind == "swarm":
        orchestrator: Any = Swarm([research, payer], session_manager=world.manager(), id="team")
    else:
        builder = GraphBuilder()
        builder.add_node(payer, "payer")
        builder.set_graph_id("flow")
        builder.set_session_manager(world.manager())
        orchestrator = builder.build()
    assert orchestrator("pay").status == Status.COMPLETED

    key = expected_key(f"{SESSION}/{owner(kind)}/payer", "pay_1")
    assert seen == [[("ti", "payer", "pay_1", key)], key]
    if world.kind == "memory":
        intents = [(kinds, durable) for kinds, durable in world.repository.appends if "ti" in kinds]
        # The state as it stands (a delta of the last whole state), then the intent: one durable write (a swarm's
        # handoff tool is journaled too).
        assert intents[-1] == (["md", "ti"], True) if kind == "graph" else (["to", "md", "ti"], True)
    records = world.records(owner(kind))
    [outcome] = [r for r in records if r["k"] == "to" and r["p"] == "payer"]
    assert (outcome["p"], outcome["u"], outcome["o"], outcome["r"]["content"]) == (
        "payer",
        "pay_1",
        "done",
        [{"text": "paid"}],
    )


def test_the_tools_a_node_starts_together_share_one_durable_write() -> None:
    world = World("memory", None)  # type: ignore[arg-type]
    started = 0
    all_started = anyio.Event()

    @tool
    async def fetch(n: int) -> int:
        """Fetch.

        Args:
            n: Which.
        """
        nonlocal started
        started += 1
        if started == 3:
            all_started.set()
        with anyio.fail_after(5):
            await all_started.wait()  # the three bodies overlap: they really ran concurrently
        return n

    calls = [tool_call("fetch", tool_use_id=f"f{n}", n=n) for n in range(3)]
    agent = Agent(name="fetcher", model=ScriptedModel([turn(*calls), text("Fetched.")]), tools=[fetch])
    builder = GraphBuilder()
    builder.add_node(agent, "fetcher")
    builder.set_session_manager(world.manager())
    assert builder.build()("fetch three").status == Status.COMPLETED
    intents = [(kinds, durable) for kinds, durable in world.repository.appends if "ti" in kinds]
    assert intents == [(["md", "ti", "ti", "ti"], True)]
    assert sum(kinds.count("to") for kinds, _ in world.repository.appends) == 3


def test_a_sequential_batch_writes_each_intent_before_its_own_body() -> None:
    world = World("memory", None)  # type: ignore[arg-type]
    order: list[str] = []

    @tool
    def step(n: int) -> int:
        """Step.

        Args:
            n: Which.
        """
        order.append(f"body {n}: {sum(kinds.count('ti') for kinds, _ in world.repository.appends)} intents written")
        return n

    agent = Agent(
        name="stepper",
        model=ScriptedModel([turn(tool_call("step", n=1), tool_call("step", n=2)), text("Done.")]),
        tools=[step],
        tool_executor=SequentialToolExecutor(),
    )
    builder = GraphBuilder()
    builder.add_node(agent, "stepper")
    builder.set_session_manager(world.manager())
    builder.build()("two steps")
    assert order == ["body 1: 1 intents written", "body 2: 2 intents written"]


class SlowDiskRepository(InMemorySessionRepository):
    """The in-memory store, whose first durable append of an intent takes until the test releases it (a slow disk)."""

    def __init__(self) -> None:
        super().__init__()
        self.writing = threading.Event()
        self.release = threading.Event()

    def append_log(self, claim: LogClaim, records: Sequence[dict[str, Any]], *, durable: bool, **kwargs: Any) -> None:
        if durable and not self.writing.is_set() and any(record["k"] == "ti" for record in records):
            self.writing.set()
            assert self.release.wait(30), "the test never released the write"
        super().append_log(claim, records, durable=durable, **kwargs)


def tool_use(tool_use_id: str) -> dict[str, Any]:
    return {"toolUseId": tool_use_id, "name": "pay", "input": {"amount": 1}}


async def test_an_intent_carries_its_nodes_last_turn_though_another_nodes_state_waits_to_be_written() -> None:
    # Two nodes of one batch run tools. While a write holds the log (the first intent of z, on a slow disk), z
    # starts another tool: its state (x without its last turn) waits in the buffer. Then x's model asks for a tool:
    # x's intent must come with x's turn, or a crash in x's tool would restore x without the call and ask again.
    repository = SlowDiskRepository()
    x = Agent(name="x", model=ScriptedModel([]), callback_handler=None)
    z = Agent(name="z", model=ScriptedModel([]), callback_handler=None)
    builder = GraphBuilder()
    builder.add_node(x, "x")
    builder.add_node(z, "z")
    builder.set_graph_id("flow")
    builder.set_session_manager(RepositorySessionManager(SESSION, repository))
    graph = builder.build()
    manager = graph.session_manager
    manager.begin_multi_agent_invocation(graph)
    z.messages += [
        {"role": "user", "content": [{"text": "pay two"}]},
        {"role": "assistant", "content": [{"toolUse": tool_use("z_1")}, {"toolUse": tool_use("z_2")}]},
    ]
    async with anyio.create_task_group() as group:
        group.start_soon(z.tool_journal.start, tool_use("z_1"))
        await anyio.to_thread.run_sync(repository.writing.wait)  # z_1's intent is being written, slowly
        group.start_soon(z.tool_journal.start, tool_use("z_2"))
        await anyio.lowlevel.checkpoint()  # z_2's state and intent are buffered behind that write
        x.messages += [
            {"role": "user", "content": [{"text": "pay one"}]},
            {"role": "assistant", "content": [{"toolUse": tool_use("x_1")}]},
        ]
        group.start_soon(x.tool_journal.start, tool_use("x_1"))
        await anyio.lowlevel.checkpoint()  # x_1's intent is buffered
        repository.release.set()
    manager.end_multi_agent_invocation(graph)

    records = repository.read_log(LogRef(SESSION, "multi_agent", "flow")).records
    intents = [i for i, record in enumerate(records) if record["k"] == "ti"]
    assert [records[i]["u"] for i in intents] == ["z_1", "z_2", "x_1"]
    state = replay_multi_agent(StoredLog(records[: intents[-1]], "v"), "flow")  # the state written before x_1's intent
    assert state is not None
    assert state["nodes"]["x"]["messages"][-1]["content"][0]["toolUse"]["toolUseId"] == "x_1"

    restored = GraphBuilder()
    fresh_x = Agent(name="x", model=ScriptedModel([]), callback_handler=None)
    restored.add_node(fresh_x, "x")
    restored.add_node(Agent(name="z", model=ScriptedModel([]), callback_handler=None), "z")
    restored.set_graph_id("flow")
    restored.set_session_manager(RepositorySessionManager(SESSION, repository))
    restored.build()
    assert fresh_x.messages[-1]["content"][0]["toolUse"]["toolUseId"] == "x_1"  # a restore finds the call
    assert [attempt.tool_use_id for attempt in fresh_x.tool_journal.unfinished()] == ["x_1"]


def test_idempotency_keys_are_scoped_to_session_orchestrator_and_node_path(tmp_path: Any) -> None:
    keys: dict[str, str] = {}

    def recorder(node: str) -> Any:
        @tool(context=True, name="note")
        def note(tool_context: ToolContext) -> str:
            """Note."""
            keys[node] = tool_context.idempotency_key
            return "noted"

        return note

    def run(session_id: str, repository: InMemorySessionRepository, graph_id: str = "flow") -> dict[str, str]:
        keys.clear()
        inner_agent = Agent(
            name="x", model=ScriptedModel([tool_call("note", tool_use_id="n1"), text("ok")]), tools=[recorder("c/d")]
        )
        inner = GraphBuilder()
        inner.add_node(inner_agent, "d")
        inner.set_graph_id("inner")
        builder = GraphBuilder()
        for node in ("a", "b/x"):
            agent = Agent(
                name=node,
                model=ScriptedModel([tool_call("note", tool_use_id="n1"), text("ok")]),
                tools=[recorder(node)],
            )
            builder.add_node(agent, node)
        builder.add_node(inner.build(), "c")
        builder.set_graph_id(graph_id)
        builder.set_session_manager(RepositorySessionManager(session_id, repository))
        graph = builder.build()
        assert graph.tool_journals().keys() == {"a", "b%2Fx", "c/d"}
        graph("go")
        return dict(keys)

    repository = InMemorySessionRepository()
    first = run("s1", repository)
    assert first == {
        "a": expected_key("s1/flow/a", "n1"),
        "b/x": expected_key("s1/flow/b%2Fx", "n1"),
        "c/d": expected_key("s1/flow/c/d", "n1"),
    }
    assert len(set(first.values())) == 3  # one tool-use id, three nodes: three keys
    assert run("s1", InMemorySessionRepository()) == first  # stable: another process, the same keys
    assert set(run("s2", repository).values()).isdisjoint(first.values())
    assert set(run("s1", InMemorySessionRepository(), "other").values()).isdisjoint(first.values())


def test_without_a_session_node_keys_are_still_distinct_per_node() -> None:
    keys: list[str] = []

    @tool(context=True)
    def note(tool_context: ToolContext) -> str:
        """Note."""
        keys.append(tool_context.idempotency_key)
        return "noted"

    builder = GraphBuilder()
    for node in ("a", "b"):
        builder.add_node(
            Agent(model=ScriptedModel([tool_call("note", tool_use_id="n1"), text("ok")]), tools=[note]), node
        )
    builder.build()("go")
    assert sorted(keys) == sorted([expected_key("default_graph/a", "n1"), expected_key("default_graph/b", "n1")])


# -- a crash inside an approved node tool -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["graph", "swarm"])
def test_a_crash_in_an_approved_node_tool_is_reported_as_unknown_and_never_run_again(world: World, kind: str) -> None:
    approval = paused(world, kind)
    crashed_resume(world, kind, approval)
    assert [run["id"] for run in world.runs] == ["pay_1"]
    key = world.runs[0]["key"]
    assert key == expected_key(f"{SESSION}/{owner(kind)}/payer", "pay_1")

    retry = build(world, kind, "resume", final="I could not confirm the payment.")
    assert retry._interrupt_state.activated  # the answer is on record, the run did not finish
    assert retry.pending_interrupts == []
    result = retry([answer(approval, "y")])  # the client retries the same request

    assert result.status == Status.COMPLETED
    assert [run["id"] for run in world.runs] == ["pay_1"]  # never run again
    payer = retry.nodes["payer"].executor
    [unknown] = [r for r in tool_results(payer) if r["toolUseId"] == "pay_1"]
    assert unknown["status"] == "error"
    assert "outcome of this call of tool 'pay' is unknown" in unknown["content"][0]["text"]
    assert key in unknown["content"][0]["text"]
    request = world.models["payer"].requests[-1].messages
    assert request[-1]["content"][0]["toolResult"] == unknown  # the node's model got the unknown outcome
    entry = next(e for e in retry.interrupt_audit if e["event"] == "tool_outcome_unknown")
    assert (entry["node_id"], entry["node_path"], entry["tool"], entry["tool_use_id"], entry["idempotency_key"]) == (
        "payer",
        "payer",
        "pay",
        "pay_1",
        key,
    )
    assert entry["interrupt_id"] == approval.id  # against the approval that let it run
    events = [(e["event"], e.get("node_id")) for e in retry.interrupt_audit if e["interrupt_id"] == approval.id]
    assert events == [
        ("raised", "payer"),
        ("answered", "payer"),
        ("tool_outcome_unknown", "payer"),
        ("outcome", "payer"),
    ]
    retry.session_manager.close()

    # A later process finds a finished run; the same request once more is a replay that runs nothing.
    later = build(world, kind, "resume")
    replay = later([answer(approval, "y")])
    assert (replay.replayed, replay.status) == (True, Status.COMPLETED)
    assert len(world.runs) == 1
    assert later.interrupt_audit == retry.interrupt_audit


@pytest.mark.parametrize("kind", ["graph", "swarm"])
def test_a_changed_answer_after_the_crash_is_refused_and_changes_nothing(world: World, kind: str) -> None:
    approval = paused(world, kind)
    crashed_resume(world, kind, approval)

    retry = build(world, kind, "resume")
    with pytest.raises(InterruptAlreadyAnsweredError):
        retry([answer(approval, "n")])  # "y" was applied and the tool may have run: "n" cannot undo that
    assert world.models["payer"].calls == 0
    assert [run["id"] for run in world.runs] == ["pay_1"]
    assert retry([answer(approval, "y")]).status == Status.COMPLETED
    assert [run["id"] for run in world.runs] == ["pay_1"]


@pytest.mark.parametrize("kind", ["graph", "swarm"])
@pytest.mark.parametrize("how", ["idempotent-tool", "rerun-policy"])
def test_an_idempotent_node_tool_or_a_rerun_policy_runs_it_again_with_the_same_key(
    world: World, kind: str, how: str
) -> None:
    options: dict[str, Any] = {"unfinished_tool_policy": "rerun"} if how == "rerun-policy" else {}
    call = tool_call("lookup", tool_use_id="pay_1", key="k") if how == "idempotent-tool" else PAY
    research = [HANDOFF, text("handed over")] if kind == "swarm" else [text("found")]
    pause = {"research": research, "payer": [call]}
    edges = [("research", "payer")]
    first = world.swarm(pause, **options) if kind == "swarm" else world.graph(pause, edges=edges, **options)
    [approval] = first("go").interrupts
    first.session_manager.close()
    crashed_resume(world, kind, approval, **options)

    retry = build(world, kind, "resume", **options)
    assert retry([answer(approval, "y")]).status == Status.COMPLETED
    assert [(run["id"], run["key"]) for run in world.runs] == [("pay_1", world.runs[0]["key"])] * 2
    assert tool_results(retry.nodes["payer"].executor)[-1]["status"] == "success"
    [rerun] = [e for e in retry.interrupt_audit if e["event"] == "tool_rerun"]
    assert (rerun["node_id"], rerun["tool_use_id"], rerun["interrupt_id"]) == ("payer", "pay_1", approval.id)


def test_a_result_recorded_before_the_crash_is_used_and_the_tool_not_run_again(world: World) -> None:
    # Two tools one after the other; the second one's intent writes how the first ended; the process dies in the
    # second: the first's recorded result is used, the second's outcome is unknown.
    calls = turn(tool_call("pay", tool_use_id="pay_0", amount=1), tool_call("pay", tool_use_id="pay_1", amount=2))
    world.die_in.add("pay_1")
    graph = world.graph({"payer": [calls]}, node_hooks=[])
    graph.nodes["payer"].executor.tool_executor = SequentialToolExecutor()
    with pytest.raises(Died):
        graph("pay twice")
    graph.session_manager.close()

    retry = world.graph({"payer": [text("One paid, one unknown.")]}, node_hooks=[])
    assert retry("pay twice").status == Status.COMPLETED
    assert [run["id"] for run in world.runs] == ["pay_0", "pay_1"]
    payer = retry.nodes["payer"].executor
    by_id = {r["toolUseId"]: r for r in tool_results(payer)}
    assert by_id["pay_0"] == {"toolUseId": "pay_0", "status": "success", "content": [{"text": "pay done"}]}
    assert "unknown" in by_id["pay_1"]["content"][0]["text"]
    events = {e["tool_use_id"]: e["event"] for e in retry.interrupt_audit if "tool_use_id" in e}
    assert events == {"pay_0": "tool_result_recovered", "pay_1": "tool_outcome_unknown"}


def test_a_nested_orchestrators_node_is_journaled_with_its_path(world: World) -> None:
    def nested(turns: list[Any]) -> Any:
        inner = GraphBuilder()
        inner.add_node(world.agent("payer", turns), "payer")
        inner.set_graph_id("billing")
        outer = GraphBuilder()
        outer.add_node(world.agent("research", [text("found")] if turns == [PAY] else []), "research")
        outer.add_node(inner.build(), "billing")
        outer.add_edge("research", "billing")
        outer.set_graph_id("flow")
        outer.set_session_manager(world.manager())
        return outer.build()

    first = nested([PAY])
    [approval] = first("pay").interrupts
    first.session_manager.close()
    world.die_in.add("pay_1")
    crashing = nested([])
    with pytest.raises(Died):
        crashing([answer(approval, "y")])
    crashing.session_manager.close()
    [intent] = [r for r in world.records("flow") if r["k"] == "ti"][-1:]
    assert (intent["p"], intent["u"]) == ("billing/payer", "pay_1")
    assert intent["key"] == expected_key(f"{SESSION}/flow/billing/payer", "pay_1")

    retry = nested([text("Unknown.")])
    assert retry([answer(approval, "y")]).status == Status.COMPLETED
    assert [run["id"] for run in world.runs] == ["pay_1"]
    [entry] = [e for e in retry.interrupt_audit if e["event"] == "tool_outcome_unknown"]
    assert (entry["node_id"], entry["node_path"], entry["interrupt_id"]) == ("billing", "billing/payer", approval.id)


# -- which attempts a restored node agent gets --------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["graph", "swarm"])
def test_a_reused_tool_use_id_is_a_new_call_not_the_finished_one(world: World, kind: str) -> None:
    approval = paused(world, kind)
    done = build(world, kind, "resume")
    assert done([answer(approval, "y")]).status == Status.COMPLETED
    done.session_manager.close()
    assert [run["id"] for run in world.runs] == ["pay_1"]

    # A second task: the model calls pay with the same tool-use id (a scripted model can); it asks again.
    again = build(world, kind, "pause", preserve_node_history=True) if kind == "swarm" else build(world, kind, "pause")
    second = again("pay the next invoice")
    assert second.status == Status.INTERRUPTED
    again.session_manager.close()
    fresh = build(world, kind, "resume")
    assert fresh(answers(second.interrupts, "y")).status == Status.COMPLETED
    assert [run["id"] for run in world.runs] == ["pay_1", "pay_1"]  # ran: the old attempt is not this call's


@pytest.mark.parametrize("idempotent", [False, True])
def test_a_node_crash_in_a_run_without_interrupts_is_settled_when_the_task_is_retried(
    world: World, idempotent: bool
) -> None:
    world.die_in.add("pay_1")
    call = tool_call("lookup", tool_use_id="pay_1", key="k") if idempotent else PAY
    first = world.graph({"payer": [call]}, node_hooks=[])
    with pytest.raises(Died):
        first("pay")
    first.session_manager.close()

    retry = world.graph({"payer": [text("Settled.")]}, node_hooks=[])
    result = retry("pay")  # the same task again: a fresh run, in which the cut-short node goes on with its batch
    assert result.status == Status.COMPLETED
    payer = retry.nodes["payer"].executor
    [settled] = tool_results(payer)
    [entry] = [e for e in retry.interrupt_audit if e["event"].startswith("tool_")]
    assert (entry["node_id"], entry["interrupt_id"], entry["tool_use_id"]) == ("payer", None, "pay_1")
    if idempotent:
        assert [run["id"] for run in world.runs] == ["pay_1", "pay_1"]  # run again, with the same key
        assert settled["status"] == "success"
        assert entry["event"] == "tool_rerun"
    else:
        assert [run["id"] for run in world.runs] == ["pay_1"]
        assert "unknown" in settled["content"][0]["text"]
        assert entry["event"] == "tool_outcome_unknown"


def test_a_swarm_node_cut_short_by_a_crash_is_continued_not_reset(world: World) -> None:
    world.die_in.add("pay_1")
    first = world.swarm({"payer": [PAY]}, node_hooks=[])
    with pytest.raises(Died):
        first("pay")
    first.session_manager.close()

    # Without preserve_node_history a swarm starts every node execution from the agent as built; this one was cut
    # short by the crash, so it is continued: it goes on with its batch, as agent(None) does, so its model learns
    # that the outcome of the call is unknown (pay is not idempotent: it is not run again).
    retry = world.swarm({"payer": [text("It may have been paid.")]}, node_hooks=[])
    assert retry("pay").status == Status.COMPLETED
    assert [run["id"] for run in world.runs] == ["pay_1"]
    payer = retry.nodes["payer"].executor
    assert payer.messages[1]["content"][0]["toolUse"]["toolUseId"] == "pay_1"  # the cut-short call is still there
    assert "unknown" in tool_results(payer)[0]["content"][0]["text"]
    assert [(e["event"], e["node_id"]) for e in retry.interrupt_audit] == [("tool_outcome_unknown", "payer")]
    assert [m["role"] for m in payer.messages] == ["user", "assistant", "user", "assistant"]  # no second prompt

    # The next task starts the node from the agent as built again.
    again = world.swarm({"payer": [text("Nothing to pay.")]}, node_hooks=[])
    assert again("anything else?").status == Status.COMPLETED
    assert [m["role"] for m in again.nodes["payer"].executor.messages] == ["user", "assistant"]


# -- the claim covers node records --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["graph", "swarm"])
def test_a_node_tool_does_not_start_without_the_orchestrators_claim(world: World, kind: str) -> None:
    approval = paused(world, kind)
    holder = build(world, kind, "resume")
    second = build(world, kind, "resume")
    holder.session_manager.begin_multi_agent_invocation(holder)  # another request holds the orchestration
    try:
        with pytest.raises(SessionConflictError):
            second([answer(approval, "y")])
    finally:
        holder.session_manager.end_multi_agent_invocation(holder)
    assert world.runs == []
    # The approval came before the body: the tool never started, so no intent of it was ever written.
    assert [r for r in world.records(owner(kind)) if r["k"] == "ti" and r["p"] == "payer"] == []
    assert world.models["payer"].calls == 0


def test_a_lost_claim_stops_the_orchestration_before_the_node_tool_runs() -> None:
    world = World("memory", None)  # type: ignore[arg-type]
    approval = paused(world, "graph")
    resuming = build(world, "graph", "resume")
    # Another process resumes the same orchestration first (it restored the same version, and won the claim).
    other = build(world, "graph", "resume", final="Paid by the other process.")
    assert other([answer(approval, "y")]).status == Status.COMPLETED
    assert [run["id"] for run in world.runs] == ["pay_1"]
    with pytest.raises(SessionException):
        resuming([answer(approval, "y")])
    assert [run["id"] for run in world.runs] == ["pay_1"]


def test_records_of_an_orchestrator_log_are_checked(world: World) -> None:
    from strandslike.session._multi_agent_log import replay_orchestrator
    from strandslike.session.session_repository import StoredLog
    from strandslike.types.exceptions import SessionCorruptError

    head = {"k": "h", "format": "strandslike-multi-agent-log/1", "session_id": SESSION, "multi_agent_id": "flow"}
    intent = {"k": "ti", "p": "payer", "u": "pay_1", "n": "pay", "key": "k", "t": "now"}
    for bad in (
        {**intent, "p": None},
        {**intent, "p": ""},
        {**intent, "p": "a//b"},
        {"k": "to", "p": "other", "u": "pay_1", "o": "done", "r": {"content": []}},
        {"k": "to", "p": "payer", "u": "pay_1", "o": "maybe"},
        {"k": "ms", "s": []},
        {"k": "zz"},
    ):
        with pytest.raises(SessionCorruptError, match="line 3"):
            replay_orchestrator(StoredLog([head, intent, bad], "v", location="log", unit="line"), "flow")
    replayed = replay_orchestrator(StoredLog([head, intent], "v", location="log", unit="line"), "flow")
    assert [(a.tool_use_id, a.outcome) for a in replayed.attempts["payer"]] == [("pay_1", "started")]
    assert replayed.state is None
    assert LogRef(SESSION, "multi_agent", "flow").kind == "multi_agent"
