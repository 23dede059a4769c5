"""Orchestrators on a FileSessionManager: a brand-new orchestrator, here or in another process, resumes a run."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import answers
from log_lines import body_of
from multiagent_workers import DENIED, KINDS, SESSION_ID, build, describe, tool_runs

import strandslike
from strandslike import Agent
from strandslike.interrupt import InterruptAlreadyAnsweredError, UnknownInterruptError
from strandslike.models import ScriptedModel, text
from strandslike.multiagent import GraphBuilder, Status, Swarm
from strandslike.session import FileSessionManager
from strandslike.types.exceptions import SessionConflictError

WORKER = Path(__file__).resolve().parent / "multiagent_workers.py"
TASK = "Inspect and clean up my resources"
CLEANED = {"role": "assistant", "content": [{"text": "Cleaned up 3 resources."}]}


def pause(kind: str, storage_dir: Path) -> tuple[Any, dict[str, ScriptedModel]]:
    orchestrator, models = build(kind, storage_dir, "pause")
    result = orchestrator(TASK)
    assert result.status == Status.INTERRUPTED
    assert len(result.interrupts) == 1
    return result, models


def expected_calls(kind: str, phase: str) -> dict[str, int]:
    if phase == "pause":
        return {"inspector": 2 if kind.startswith("swarm") else 1, "cleanup": 1 if kind.endswith("tool") else 0}
    return {"inspector": 0, "cleanup": 1}


@pytest.mark.parametrize("kind", KINDS)
async def test_a_fresh_orchestrator_resumes_an_interrupted_run_from_the_session(kind: str, tmp_path: Path) -> None:
    paused, models = pause(kind, tmp_path)
    [interrupt] = paused.interrupts
    assert interrupt.name == "myapp-approval"
    assert {name: model.calls for name, model in models.items()} == expected_calls(kind, "pause")
    assert tool_runs(tmp_path) == []

    fresh, fresh_models = build(kind, tmp_path, "resume")
    assert [i.id for i in fresh.pending_interrupts] == [interrupt.id]  # type: ignore[attr-defined]

    result = await fresh.invoke_async(answers([interrupt], "y"))

    summary = describe(result, fresh_models)
    assert result.status == Status.COMPLETED, summary
    assert summary["message"] == CLEANED
    assert summary["model_calls"] == expected_calls(kind, "resume")
    assert summary["node_status"] == {"inspector": "completed", "cleanup": "completed"}
    if kind.endswith("tool"):
        assert [(run["resource"], run["approval"]) for run in tool_runs(tmp_path)] == [("db", "y")]
    if kind.startswith("swarm"):
        assert summary["node_history"] == ["inspector", "cleanup"]
    else:
        assert summary["execution_order"] == ["inspector", "cleanup"]

    # A third orchestrator sees a finished run: nothing to answer; the same resume again is a replay that runs
    # nothing, and a changed answer is refused.
    third, third_models = build(kind, tmp_path, "resume")
    assert third.pending_interrupts == []  # type: ignore[attr-defined]
    replay = await third.invoke_async(answers([interrupt], "y"))
    assert (replay.replayed, replay.status) == (True, Status.COMPLETED)
    assert describe(replay, third_models)["message"] == CLEANED
    with pytest.raises(InterruptAlreadyAnsweredError):
        await third.invoke_async(answers([interrupt], "n"))
    assert sum(model.calls for model in third_models.values()) == 0
    if kind.endswith("tool"):
        assert len(tool_runs(tmp_path)) == 1


@pytest.mark.parametrize("kind", ["graph-hook", "swarm-hook"])
async def test_a_fresh_orchestrator_applies_a_denial_from_the_session(kind: str, tmp_path: Path) -> None:
    paused, _ = pause(kind, tmp_path)
    fresh, fresh_models = build(kind, tmp_path, "resume")

    result = await fresh.invoke_async(answers(paused.interrupts, "n"))

    assert result.status == Status.FAILED
    assert result.results["cleanup"].status == Status.FAILED
    assert str(result.results["cleanup"].result) == DENIED
    assert result.results["inspector"].status == Status.COMPLETED
    assert fresh_models["cleanup"].calls == 0


@pytest.mark.parametrize("kind", ["graph-tool", "swarm-hook"])
async def test_a_bad_resume_of_a_restored_run_leaves_it_resumable(kind: str, tmp_path: Path) -> None:
    paused, _ = pause(kind, tmp_path)
    fresh, fresh_models = build(kind, tmp_path, "resume")
    with pytest.raises(UnknownInterruptError):
        await fresh.invoke_async([{"interruptResponse": {"interruptId": "nope", "response": "y"}}])

    # Even a third object, built after the failed resume, still finds the run interrupted.
    third, third_models = build(kind, tmp_path, "resume")
    result = await third.invoke_async(answers(paused.interrupts, "y"))
    assert result.status == Status.COMPLETED
    assert fresh_models["cleanup"].calls == 0
    assert third_models["cleanup"].calls == 1


async def test_the_orchestrator_state_is_a_checksummed_log_in_the_session(tmp_path: Path) -> None:
    paused, _ = pause("graph-tool", tmp_path)
    path = tmp_path / f"session_{SESSION_ID}" / "multi_agents" / "multi_agent_pipeline" / "multi_agent.jsonl"
    records = [body_of(line) for line in path.read_text().splitlines()]
    assert records[0]["k"] == "h"
    assert records[0]["format"] == "strandslike-multi-agent-log/2"
    # Orchestrator states, and the node agent's tool attempt: its intent (with the state just before it, as a delta),
    # then its outcome (the tool asked for approval), both with the node path and the key scoped to session, graph
    # and node.
    assert [record["k"] for record in records[1:]] == ["ms", "ms", "md", "ti", "to", "ms"]
    intent, outcome = records[4], records[5]
    assert (intent["p"], intent["u"], intent["n"]) == ("cleanup", "t1", "cleanup_resources")
    assert (outcome["p"], outcome["u"], outcome["o"]) == ("cleanup", "t1", "interrupted")
    saved = records[-1]["s"]
    assert saved["status"] == "interrupted"
    assert saved["node_results"]["cleanup"]["status"] == "interrupted"
    assert saved["node_results"]["inspector"]["status"] == "completed"
    # The node agent's own conversation travels with the orchestrator: prompt and the pending tool use.
    assert [m["role"] for m in saved["nodes"]["cleanup"]["messages"]] == ["user", "assistant"]
    assert paused.interrupts[0].id in json.dumps(saved)


# -- another process ------------------------------------------------------------------------------------------------


def run_worker(*argv: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(Path(strandslike.__file__).resolve().parents[1])}
    completed = subprocess.run(
        [sys.executable, str(WORKER), *argv], capture_output=True, text=True, timeout=60, check=False, env=env
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.strip().splitlines()
    assert len(lines) == 1, completed.stdout
    result: dict[str, Any] = json.loads(lines[0])
    return result


@pytest.mark.parametrize("kind", KINDS)
def test_a_child_process_resumes_a_run_interrupted_in_this_process(kind: str, tmp_path: Path) -> None:
    paused, _ = pause(kind, tmp_path)
    [interrupt] = paused.interrupts

    resumed = run_worker("resume", kind, str(tmp_path), interrupt.id, "y")

    assert resumed["restored_interrupts"] == [interrupt.id]
    assert resumed["status"] == "completed", resumed
    assert resumed["message"] == CLEANED
    assert resumed["model_calls"] == expected_calls(kind, "resume")
    if kind.endswith("tool"):
        [run] = tool_runs(tmp_path)
        assert (run["resource"], run["approval"]) == ("db", "y")
        assert run["pid"] != os.getpid()


@pytest.mark.parametrize("kind", ["graph-tool", "swarm-hook"])
async def test_this_process_resumes_a_run_interrupted_in_a_child_process(kind: str, tmp_path: Path) -> None:
    paused = run_worker("pause", kind, str(tmp_path))
    assert paused["status"] == "interrupted"
    [interrupt] = paused["interrupts"]

    fresh, models = build(kind, tmp_path, "resume")
    result = await fresh.invoke_async([{"interruptResponse": {"interruptId": interrupt["id"], "response": "y"}}])

    assert result.status == Status.COMPLETED
    assert describe(result, models)["message"] == CLEANED
    assert models["cleanup"].calls == 1


# -- node agents and the orchestrator's session ---------------------------------------------------------------------


def agent_with_session(tmp_path: Path, name: str) -> Agent:
    return Agent(
        name=name,
        agent_id=name,
        model=ScriptedModel([text("x")]),
        callback_handler=None,
        session_manager=FileSessionManager("agent-own", storage_dir=tmp_path / "agents"),
    )


def test_a_graph_node_with_its_own_session_manager_is_refused(tmp_path: Path) -> None:
    builder = GraphBuilder()
    builder.add_node(agent_with_session(tmp_path, "own"), "own")
    builder.set_session_manager(FileSessionManager("graph", storage_dir=tmp_path))
    with pytest.raises(ValueError, match="Node 'own' has its own session manager") as error:
        builder.build()
    assert "Remove the node's session_manager" in str(error.value)


def test_a_swarm_member_with_its_own_session_manager_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="Node 'own' has its own session manager"):
        Swarm([agent_with_session(tmp_path, "own")], session_manager=FileSessionManager("swarm", storage_dir=tmp_path))


async def test_node_agents_with_their_own_sessions_are_fine_without_an_orchestrator_session(tmp_path: Path) -> None:
    builder = GraphBuilder()
    builder.add_node(agent_with_session(tmp_path, "own"), "own")
    result = await builder.build().invoke_async("go")
    assert result.status == Status.COMPLETED


@pytest.mark.parametrize("kind", ["graph-hook", "swarm-tool"])
async def test_an_orchestrator_is_claimed_for_its_invocation(tmp_path: Path, kind: str) -> None:
    paused, _ = build(kind, tmp_path, "pause")
    interrupted = await paused.invoke_async("clean up")
    assert interrupted.interrupts
    paused.session_manager.close()
    first, _ = build(kind, tmp_path, "resume")
    second, second_models = build(kind, tmp_path, "resume")  # restored from the same state
    answer = [{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in interrupted.interrupts]

    first.session_manager.begin_multi_agent_invocation(first)  # a server holding the claim for its request
    with pytest.raises(SessionConflictError, match="another process is running"):
        await second.invoke_async(answer)
    assert (await first.invoke_async(answer)).status.value == "completed"
    first.session_manager.end_multi_agent_invocation(first)
    with pytest.raises(SessionConflictError):  # stale now: the state it restored has changed
        await second.invoke_async(answer)
    assert sum(model.calls for model in second_models.values()) == 0
    assert len(tool_runs(tmp_path)) <= 1
