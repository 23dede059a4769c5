"""A resume repeated after it was applied: a replayed result once the run finished, the run finished otherwise.

- Once the orchestration completed, the same resume again (a duplicate delivery, a client's retry) returns the
  result as it stands without running anything (`MultiAgentResult.replayed`), in this process or a fresh one; a
  changed answer is refused (`InterruptAlreadyAnsweredError`).
- When the process died after the answers were applied and before the run finished, the same resume again
  finishes the run from where it stopped: nodes that finished are not run again, a node hook approved is not
  asked again, a node tool cut short is reported as unknown (see `test_multiagent_intents.py`).
"""

from typing import Any

import pytest
from helpers import answer, answers
from multiagent_workers import KINDS, build, describe, tool_runs
from orchestration_world import Died, World, tool_results

from strandslike.hooks import (
    AfterMultiAgentInvocationEvent,
    BeforeNodeCallEvent,
    HookProvider,
    HookRegistry,
)
from strandslike.interrupt import InterruptAlreadyAnsweredError, NotInterruptedError, UnknownInterruptError
from strandslike.models import text, tool_call
from strandslike.multiagent import Status, Swarm
from strandslike.session import FileSessionManager, LogRef

TASK = "Inspect and clean up my resources"


@pytest.fixture(params=["memory", "file"])
def world(request: pytest.FixtureRequest, tmp_path: Any) -> World:
    return World(request.param, tmp_path)


# -- replays of a completed orchestration -------------------------------------------------------------------------


def log_version(tmp_path: Any, owner: str) -> str | None:
    stored = FileSessionManager("multi", storage_dir=tmp_path).read_log(LogRef("multi", "multi_agent", owner))
    return None if stored is None else stored.version


@pytest.mark.parametrize("kind", KINDS)
async def test_a_completed_orchestration_replays_a_repeated_resume_in_a_fresh_process(kind: str, tmp_path: Any) -> None:
    first, _ = build(kind, tmp_path, "pause")
    paused = await first.invoke_async(TASK)
    first.session_manager.close()
    second, second_models = build(kind, tmp_path, "resume")
    done = await second.invoke_async(answers(paused.interrupts, "y"))
    assert done.status == Status.COMPLETED
    second.session_manager.close()
    owner = "team" if kind.startswith("swarm") else "pipeline"
    version = log_version(tmp_path, owner)

    fresh, models = build(kind, tmp_path, "resume")
    replay = await fresh.invoke_async(answers(paused.interrupts, "y"))

    assert replay.replayed
    assert not done.replayed
    assert describe(replay, models) == {**describe(done, second_models), "model_calls": {"inspector": 0, "cleanup": 0}}
    assert replay.to_dict()["replayed"] is True
    assert sum(model.calls for model in models.values()) == 0
    assert len(tool_runs(tmp_path)) == (1 if kind.endswith("tool") else 0)
    assert log_version(tmp_path, owner) == version  # nothing written, nothing claimed
    with pytest.raises(InterruptAlreadyAnsweredError):
        await fresh.invoke_async(answers(paused.interrupts, "n"))
    unknown = {"interruptResponse": {"interruptId": "v1:node:never", "response": "y"}}
    with pytest.raises(UnknownInterruptError):
        await fresh.invoke_async([*answers(paused.interrupts, "y"), unknown])
    with pytest.raises(NotInterruptedError):
        await fresh.invoke_async([unknown])
    assert log_version(tmp_path, owner) == version


async def test_a_replay_streams_only_its_result(tmp_path: Any) -> None:
    first, _ = build("graph-tool", tmp_path, "pause")
    paused = await first.invoke_async(TASK)
    await first.invoke_async(answers(paused.interrupts, "y"))
    events = [event async for event in first.stream_async(answers(paused.interrupts, "y"))]
    assert [event["type"] for event in events] == ["multiagent_result"]
    assert events[0]["result"].replayed


async def test_a_hook_answered_inside_a_cycle_is_still_recognised_once_the_run_is_over(world: World) -> None:
    class AskEveryVisit(HookProvider):
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(BeforeNodeCallEvent, self.ask)

        def ask(self, event: BeforeNodeCallEvent) -> None:
            if event.node_id == "payer" and event.interrupt("go-ahead") != "y":
                event.cancel_node = "stopped"

    turns = {"payer": [text("paid once")]}
    graph = world.graph(turns, node_hooks=[], set_hook_providers=[AskEveryVisit()])
    paused = graph("pay")
    [ask] = paused.interrupts
    done = graph([answer(ask, "y")])
    assert done.status == Status.COMPLETED
    assert graph.pending_interrupts == []

    fresh = world.graph({"payer": []}, node_hooks=[], set_hook_providers=[AskEveryVisit()])
    assert fresh([answer(ask, "y")]).replayed
    with pytest.raises(InterruptAlreadyAnsweredError):
        fresh([answer(ask, "n")])


# -- a crash after the answers were applied: the same resume finishes the run --------------------------------------


class DieAtEnd(HookProvider):
    """Kills the "process" as the invocation ends, before the session manager writes the end of the run."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.armed = True

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(AfterMultiAgentInvocationEvent, self.die)

    def die(self, event: AfterMultiAgentInvocationEvent) -> None:
        if self.armed:
            self.world.dead = True
            raise Died


def two_payers(world: World, phase: str, **kwargs: Any) -> Any:
    """Two nodes of one batch, each paying after an approval."""
    if phase == "pause" and not kwargs.get("set_hook_providers"):
        turns = {name: [tool_call("pay", tool_use_id=f"pay_{name}", amount=1)] for name in ("a", "b")}
    elif phase == "pause":  # the nodes' hooks ask first: the nodes do not run yet
        turns = {name: [] for name in ("a", "b")}
    elif phase == "resume-with-tools":
        turns = {name: [tool_call("pay", tool_use_id=f"pay_{name}", amount=1), text(f"{name} paid")] for name in "ab"}
    else:
        turns = {name: [text(f"{name} finished")] for name in ("a", "b")}
    return world.graph(turns, **kwargs)


def a_completed(record: dict[str, Any]) -> bool:
    """Whether ``record`` is a state of the graph in which node ``a`` completed."""
    return record["k"] == "ms" and record["s"]["node_results"].get("a", {}).get("status") == "completed"


def test_a_graph_node_that_finished_before_the_crash_is_not_run_again(world: World) -> None:
    paused = two_payers(world, "pause")("pay both")
    assert len(paused.interrupts) == 2
    world.die_in.add("pay_b")
    world.gates["pay_b"] = a_completed  # b's body dies only once a's completion is on record
    crashing = two_payers(world, "resume")
    with pytest.raises(Died):
        crashing(answers(paused.interrupts, "y"))
    crashing.session_manager.close()
    assert sorted(run["id"] for run in world.runs) == ["pay_a", "pay_b"]

    retry = two_payers(world, "resume")
    assert retry._interrupt_state.activated
    result = retry(answers(paused.interrupts, "y"))
    assert result.status == Status.COMPLETED
    assert world.models["a"].calls == 0  # a finished before the crash: not run again
    assert sorted(run["id"] for run in world.runs) == ["pay_a", "pay_b"]  # each tool ran once
    assert "unknown" in tool_results(retry.nodes["b"].executor)[0]["content"][0]["text"]
    assert {node: r.status for node, r in result.results.items()} == {"a": Status.COMPLETED, "b": Status.COMPLETED}
    assert str(result.results["a"].result).strip() == "a finished"


def test_a_graph_whose_process_died_at_its_very_end_finishes_without_running_anything(world: World) -> None:
    paused = two_payers(world, "pause")("pay both")
    dying = DieAtEnd(world)
    crashing = two_payers(world, "resume", set_hook_providers=[dying])
    with pytest.raises(Died):
        crashing(answers(paused.interrupts, "y"))
    crashing.session_manager.close()
    assert sorted(run["id"] for run in world.runs) == ["pay_a", "pay_b"]

    retry = two_payers(world, "resume")
    assert retry._interrupt_state.activated  # the end of the run was never written
    result = retry(answers(paused.interrupts, "y"))
    assert result.status == Status.COMPLETED
    assert not result.replayed  # the run ended now
    assert sum(model.calls for model in world.models.values()) == 0
    assert sorted(run["id"] for run in world.runs) == ["pay_a", "pay_b"]
    assert {node: r.status for node, r in result.results.items()} == {"a": Status.COMPLETED, "b": Status.COMPLETED}
    retry.session_manager.close()
    assert two_payers(world, "resume")(answers(paused.interrupts, "y")).replayed


def swarm_relay(world: World, phase: str, **kwargs: Any) -> Any:
    """``payer`` pays after an approval, then hands over to ``notifier``, which sends a notice (also approved)."""
    handoff = tool_call("handoff_to_agent", tool_use_id="h2", agent_name="notifier", message="tell them")
    if phase == "pause":
        turns = {"payer": [tool_call("pay", tool_use_id="pay_1", amount=5)], "notifier": []}
    else:
        turns = {
            "payer": [handoff, text("handed over")],
            "notifier": [tool_call("lookup", tool_use_id="note_1", key="notice"), text("noticed")],
        }
    return world.swarm(turns, **kwargs)


def test_a_swarm_node_that_handed_over_before_the_crash_is_not_run_again(world: World) -> None:
    paused = swarm_relay(world, "pause")("pay and notify")
    [approval] = paused.interrupts
    crashing = swarm_relay(world, "resume")
    world.die_in.add("note_1")
    second = crashing([answer(approval, "y")])  # the notifier asks for its own approval
    assert second.status == Status.INTERRUPTED
    [notice] = second.interrupts
    crashing.session_manager.close()
    dying = swarm_relay(world, "resume")
    with pytest.raises(Died):
        dying([answer(notice, "y")])
    dying.session_manager.close()

    retry = world.swarm({"payer": [], "notifier": [text("noticed")]})
    result = retry([answer(notice, "y")])
    assert result.status == Status.COMPLETED
    assert world.models["payer"].calls == 0  # the payer finished before: not run again
    assert [run["id"] for run in world.runs] == ["pay_1", "note_1", "note_1"]  # lookup is idempotent: run again
    assert [node.node_id for node in result.node_history] == ["payer", "notifier"]


def test_a_swarm_node_that_handed_over_in_the_crashed_resume_is_not_run_again(world: World) -> None:
    def relay(payer: list[Any], notifier: list[Any]) -> Any:
        agents = [world.agent("payer", payer), world.agent("notifier", notifier, hooks=[])]  # no approval to notify
        return Swarm(agents, session_manager=world.manager(), id="team")

    [approval] = relay([tool_call("pay", tool_use_id="pay_1", amount=5)], [])("pay and notify").interrupts
    handoff = tool_call("handoff_to_agent", tool_use_id="h2", agent_name="notifier", message="tell them")
    world.die_in.add("note_1")
    crashing = relay([handoff, text("handed over")], [tool_call("pay", tool_use_id="note_1", amount=0)])
    with pytest.raises(Died):
        crashing([answer(approval, "y")])  # the payer pays and hands over; the notifier's tool dies
    crashing.session_manager.close()

    retry = relay([], [text("The notice may have been sent.")])
    assert retry.state.current_node.node_id == "notifier"
    result = retry([answer(approval, "y")])
    assert result.status == Status.COMPLETED
    assert [run["id"] for run in world.runs] == ["pay_1", "note_1"]  # neither ran twice
    assert world.models["payer"].calls == 0
    assert [node.node_id for node in result.node_history] == ["payer", "notifier"]
    notifier = retry.nodes["notifier"].executor
    assert "unknown" in tool_results(notifier)[0]["content"][0]["text"]


def test_a_swarm_whose_process_died_at_its_very_end_finishes_without_running_anything(world: World) -> None:
    paused = swarm_relay(world, "pause")("pay and notify")
    [approval] = paused.interrupts
    world.models.clear()
    turns = {"payer": [text("paid")], "notifier": []}
    dying = world.swarm(turns, hooks=[DieAtEnd(world)])
    with pytest.raises(Died):
        dying([answer(approval, "y")])
    dying.session_manager.close()

    retry = world.swarm({"payer": [], "notifier": []})
    result = retry([answer(approval, "y")])
    assert (result.status, result.replayed) == (Status.COMPLETED, False)
    assert [run["id"] for run in world.runs] == ["pay_1"]
    assert [node.node_id for node in result.node_history] == ["payer"]
    retry.session_manager.close()
    assert world.swarm({"payer": [], "notifier": []})([answer(approval, "y")]).replayed


@pytest.mark.parametrize("kind", ["graph", "swarm"])
def test_a_node_hook_approved_before_the_crash_is_not_asked_again(world: World, kind: str) -> None:
    class ApproveNode(HookProvider):
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(BeforeNodeCallEvent, self.ask)

        def ask(self, event: BeforeNodeCallEvent) -> None:
            if event.interrupt("run-node", reason=event.node_id) != "y":
                event.cancel_node = "refused"

    def orchestrator(turns: list[Any]) -> Any:
        if kind == "swarm":
            return world.swarm({"payer": turns}, node_hooks=[], hooks=[ApproveNode()])
        return world.graph({"payer": turns}, node_hooks=[], set_hook_providers=[ApproveNode()])

    [ask] = orchestrator([])("pay").interrupts
    world.die_in.add("pay_1")
    crashing = orchestrator([tool_call("pay", tool_use_id="pay_1", amount=5)])
    with pytest.raises(Died):
        crashing([answer(ask, "y")])
    crashing.session_manager.close()

    retry = orchestrator([text("It may have been paid.")])
    result = retry([answer(ask, "y")])
    assert result.status == Status.COMPLETED  # the hook passed with the answer on record: not asked again
    assert [run["id"] for run in world.runs] == ["pay_1"]
    assert "unknown" in tool_results(retry.nodes["payer"].executor)[0]["content"][0]["text"]
    with pytest.raises(InterruptAlreadyAnsweredError):
        orchestrator([])([answer(ask, "n")])


def test_a_node_hook_answer_spent_before_the_crash_is_a_replay_in_the_retried_resume(world: World) -> None:
    class ApproveEach(HookProvider):
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(BeforeNodeCallEvent, self.ask)

        def ask(self, event: BeforeNodeCallEvent) -> None:
            if event.interrupt("run-node", reason=event.node_id) != "y":
                event.cancel_node = "refused"

    def graph(phase: str) -> Any:
        return two_payers(world, phase, node_hooks=[], set_hook_providers=[ApproveEach()])

    paused = graph("pause")("pay both")
    assert sorted(i.reason for i in paused.interrupts) == ["a", "b"]
    world.die_in.add("pay_b")
    world.gates["pay_b"] = a_completed  # a ran (its hook's answer spent) before b died
    crashing = graph("resume-with-tools")
    with pytest.raises(Died):
        crashing(answers(paused.interrupts, "y"))
    crashing.session_manager.close()

    retry = graph("resume")
    with pytest.raises(InterruptAlreadyAnsweredError):
        retry([answer(paused.interrupts[0], "n"), answer(paused.interrupts[1], "n")])
    result = retry(answers(paused.interrupts, "y"))
    assert result.status == Status.COMPLETED
    assert world.models["a"].calls == 0
    assert sorted(run["id"] for run in world.runs) == ["pay_a", "pay_b"]
