"""Graph and Swarm refuse every malformed resume with the same typed errors as an agent (issue 9, item 4), change
nothing (the orchestration, its node agents, its session file), and then resume with a correct answer."""

import json
import os
from pathlib import Path
from typing import Any

import pytest
from helpers import answers
from hostile import malformed_resumes, nested, raised
from multiagent_workers import KINDS, build, tool_runs
from test_multiagent_resume_errors import BUILDERS

from strandslike.interrupt import NotInterruptedError
from strandslike.multiagent import MultiAgentBase, Status
from strandslike.multiagent._orchestrator import snapshot_executor
from strandslike.types.exceptions import StrandslikeError


def state_of(orchestrator: Any) -> str:
    return json.dumps(
        [orchestrator._interrupt_state.to_dict()]
        + [snapshot_executor(orchestrator._executor(node_id)) for node_id in orchestrator._node_ids()],
        sort_keys=True,
        default=str,
    )


def on_disk(storage: Path) -> dict[str, bytes]:
    return {
        str(Path(root, name)): Path(root, name).read_bytes() for root, _, names in os.walk(storage) for name in names
    }


def check_refusal(error: BaseException, code: str, label: str) -> None:
    assert isinstance(error, StrandslikeError), f"{label}: untyped {type(error).__name__}: {error!s:.200}"
    assert error.code == code, f"{label}: {type(error).__name__} ({error.code}): {error!s:.300}"
    assert len(str(error)) < 3000, label


@pytest.mark.parametrize("kind", sorted(BUILDERS))
async def test_every_malformed_resume_is_refused_by_an_orchestration(kind: str) -> None:
    orchestrator, models = BUILDERS[kind]()
    paused = await orchestrator.invoke_async("go")
    assert paused.status == Status.INTERRUPTED
    before, calls = state_of(orchestrator), [model.calls for model in models]
    for label, prompt, code in malformed_resumes(paused.interrupts[0].id):
        check_refusal(await raised(orchestrator.invoke_async(prompt)), code, label)
        assert state_of(orchestrator) == before, label
        assert [model.calls for model in models] == calls, label
    done = await orchestrator.invoke_async(answers(paused.interrupts, "y"))
    assert done.status == Status.COMPLETED


@pytest.mark.parametrize("kind", KINDS)
async def test_a_refused_resume_leaves_the_orchestration_session_as_it_was(kind: str, tmp_path: Path) -> None:
    orchestrator, _ = build(kind, tmp_path, "pause")
    paused = orchestrator("Inspect and clean up my resources")
    [interrupt] = paused.interrupts
    fresh, _ = build(kind, tmp_path, "resume")
    disk, before = on_disk(tmp_path), state_of(fresh)
    for label, prompt, code in malformed_resumes(interrupt.id):
        if label == "other-session":
            continue  # an orchestration's interrupts carry the node agents' (absent) session ids
        check_refusal(await raised(fresh.invoke_async(prompt)), code, label)
        assert on_disk(tmp_path) == disk, label
        assert state_of(fresh) == before, label
    assert tool_runs(tmp_path) == []
    # Another fresh orchestrator (the next request of a server) resumes from the untouched session.
    again, _ = build(kind, tmp_path, "resume")
    done = await again.invoke_async(answers([interrupt], "y"))
    assert done.status == Status.COMPLETED
    if kind.endswith("tool"):
        assert [run["approval"] for run in tool_runs(tmp_path)] == ["y"]


MALFORMED_FOR_IDLE = [
    [{"interruptResponse": "y"}],
    [{"interruptResponse": {"response": 1}}],
    [{"interruptResponse": {"interruptId": ["x"], "response": 1}}],
    [{"interruptResponse": {"interruptId": "x", "response": 1}}, {"text": "and a task"}],
    [{"interruptResponse": {"interruptId": "x", "response": nested(5000)}}],
]


@pytest.mark.parametrize("kind", sorted(BUILDERS))
@pytest.mark.parametrize("prompt", MALFORMED_FOR_IDLE, ids=[f"case{i}" for i in range(len(MALFORMED_FOR_IDLE))])
async def test_resume_blocks_for_an_orchestration_that_is_not_interrupted(kind: str, prompt: Any) -> None:
    orchestrator, models = BUILDERS[kind]()
    with pytest.raises(NotInterruptedError) as caught:
        await orchestrator.invoke_async(prompt)
    check_refusal(caught.value, "NOT_INTERRUPTED", kind)
    assert [model.calls for model in models] == [0] * len(models)


def test_orchestrator_ids_cannot_escape_or_hide() -> None:
    for bad in ("a/b", "é" * 65, "a\u202eb", ""):
        with pytest.raises(ValueError, match="_id="):
            build_swarm(bad)


def build_swarm(swarm_id: str) -> MultiAgentBase:
    from strandslike import Agent
    from strandslike.models import ScriptedModel, text
    from strandslike.multiagent import Swarm

    return Swarm([Agent(name="worker", model=ScriptedModel([text("ok")]))], id=swarm_id)
